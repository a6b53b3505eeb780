"""The local search core shared by code indexes (``tributary.engine.index``) and task histories
(``tributary.engine.tasks``): one SQLite file per repository with FTS5 and sqlite-vec.

``db`` opens those files (WAL, migrations, transactions) and reads and writes their
``meta`` table; ``fts`` turns a query into FTS5 terms; ``fusion`` is reciprocal rank
fusion; ``embedder`` is the protocol every embedding model meets. Nothing here knows
about chunks or tasks, so both sides build on it without importing each other.
"""
