"""The local search core shared by code indexes (``tributary.engine.index``) and task histories
(``tributary.engine.tasks``): one SQLite file per repository with FTS5 and sqlite-vec.

``collection`` is what each of them is: a keyword index, the vectors of one model, that
model's record and the vectors in memory, searched by words and by meaning (``knn`` is
its int8 first pass on large matrices). ``db`` opens those files (WAL, migrations,
transactions) and reads and writes their ``meta`` table; ``vectors`` keeps the
embedding model's record, the sqlite-vec table made for it and the in-memory matrix
searches multiply (reloaded after any write); ``fts`` turns a query into FTS5 terms;
``fusion`` is reciprocal rank fusion; ``embedder`` is the protocol every embedding
model meets and its record (``ModelInfo``); ``packaged`` finds the default model's files. Nothing here knows about chunks or tasks, so both sides build
on it without importing each other.
"""
