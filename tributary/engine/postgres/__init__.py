"""The shared index backend: PostgreSQL + pgvector, one database for a whole team.

Many repositories live in one database, each a row of ``repositories``: their code
chunks (full-text ``tsvector`` + ``vector`` embeddings), files, symbols and task
history. One indexer (a CI job, one machine) writes; every desktop's files and tasks
servers read. Selected by ``index: {backend: postgres, dsn: ...}`` in the config
(``tributary.engine.index.backend``). Needs the ``postgres`` extra (psycopg, pgvector).
"""
