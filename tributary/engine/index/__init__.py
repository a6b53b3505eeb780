"""Local repository indexes: discovery, chunking, embeddings and hybrid storage.

One SQLite file per indexed repository (sqlite-vec for vectors, FTS5 for BM25),
kept up to date incrementally by content hash; or, for a team, one shared
PostgreSQL + pgvector database (``tributary.engine.index.backend``, ``tributary.engine.postgres``).
``tributary.engine.index.manager`` is the entry point for the CLI and the GUI; the files MCP
server reads the same indexes.
"""
