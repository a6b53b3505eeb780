"""The shared index's schema, as numbered migrations (``tributary.engine.postgres.db.migrate``).

Every row belongs to a repository (``repositories``; deleting one cascades to all of
its rows). ``chunks.terms`` is the weighted ``tsvector`` of a chunk (A: path and symbol
words, D: body and split identifiers) in the ``tributary_code`` text-search
configuration: PostgreSQL's ``simple`` parser with an English Snowball stemmer and no
stopwords, like FTS5's ``porter unicode61``; the text is split into identifier parts
before it gets there (``tributary.engine.postgres.text``). ``embedding`` has no fixed dimension:
each repository gets its own partial vector index, cast to its model's dimension.
``chunk_postings`` holds each chunk's lexemes with their BM25 weight, best first per
lexeme in its index: what a keyword search reads; ``task_postings`` the same for the
task history.
"""

from __future__ import annotations

MIGRATIONS: tuple[str, ...] = (
    """
    CREATE EXTENSION IF NOT EXISTS vector;
    CREATE TEXT SEARCH DICTIONARY tributary_stem (TEMPLATE = snowball, Language = english);
    CREATE TEXT SEARCH CONFIGURATION tributary_code (COPY = simple);
    ALTER TEXT SEARCH CONFIGURATION tributary_code
        ALTER MAPPING FOR asciiword, asciihword, hword_asciipart, word, hword, hword_part
        WITH tributary_stem;
    CREATE TABLE repositories (
        id BIGSERIAL PRIMARY KEY,
        root TEXT NOT NULL UNIQUE,
        name TEXT NOT NULL,
        version BIGINT NOT NULL DEFAULT 0,
        created_at TIMESTAMPTZ NOT NULL DEFAULT now()
    );
    CREATE TABLE repo_meta (
        repo BIGINT NOT NULL REFERENCES repositories(id) ON DELETE CASCADE,
        scope TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (repo, scope, key)
    );
    CREATE TABLE files (
        id BIGSERIAL PRIMARY KEY,
        repo BIGINT NOT NULL REFERENCES repositories(id) ON DELETE CASCADE,
        path TEXT NOT NULL,
        hash TEXT NOT NULL,
        size BIGINT NOT NULL,
        mtime_ns BIGINT NOT NULL,
        language TEXT NOT NULL,
        chunks INTEGER NOT NULL DEFAULT 0,
        indexed_at DOUBLE PRECISION NOT NULL,
        UNIQUE (repo, path)
    );
    CREATE TABLE chunks (
        id BIGSERIAL PRIMARY KEY,
        repo BIGINT NOT NULL REFERENCES repositories(id) ON DELETE CASCADE,
        file_id BIGINT NOT NULL REFERENCES files(id) ON DELETE CASCADE,
        language TEXT NOT NULL,
        kind TEXT NOT NULL,
        symbol TEXT,
        symbol_key TEXT,
        signature TEXT,
        docstring TEXT,
        start_line INTEGER NOT NULL,
        end_line INTEGER NOT NULL,
        content TEXT NOT NULL,
        embed_hash TEXT NOT NULL,
        terms TSVECTOR NOT NULL,
        embedding VECTOR
    );
    CREATE INDEX chunks_file ON chunks(file_id);
    CREATE INDEX chunks_repo_embed_hash ON chunks(repo, embed_hash);
    CREATE INDEX chunks_repo_symbol ON chunks(repo, symbol_key);
    CREATE INDEX chunks_terms ON chunks USING gin(terms);
    CREATE TABLE tasks (
        id BIGSERIAL PRIMARY KEY,
        repo BIGINT NOT NULL REFERENCES repositories(id) ON DELETE CASCADE,
        task_id TEXT NOT NULL,
        ts BIGINT NOT NULL,
        date TEXT NOT NULL,
        title TEXT NOT NULL,
        body TEXT NOT NULL,
        source TEXT NOT NULL,
        hash TEXT NOT NULL,
        terms TSVECTOR NOT NULL,
        embedding VECTOR,
        UNIQUE (repo, task_id)
    );
    CREATE INDEX tasks_repo_ts ON tasks(repo, ts);
    CREATE INDEX tasks_terms ON tasks USING gin(terms);
    CREATE TABLE task_files (
        task BIGINT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
        path TEXT NOT NULL,
        PRIMARY KEY (task, path)
    );
    CREATE INDEX task_files_path ON task_files(path);
    CREATE TABLE renames (
        repo BIGINT NOT NULL REFERENCES repositories(id) ON DELETE CASCADE,
        old_path TEXT NOT NULL,
        new_path TEXT NOT NULL,
        ts BIGINT NOT NULL,
        PRIMARY KEY (repo, old_path, new_path, ts)
    );
    CREATE TABLE snapshot_files (
        repo BIGINT NOT NULL REFERENCES repositories(id) ON DELETE CASCADE,
        path TEXT NOT NULL,
        PRIMARY KEY (repo, path)
    );
    """,
    """
    ALTER TABLE tasks ADD COLUMN author TEXT NOT NULL DEFAULT '';
    """,
    # Two tiers: a chunk is keyword-searchable as soon as written; its vector (NULL until
    # then) follows. ``pending_embeds`` holds the texts the model still has to read.
    """
    CREATE TABLE pending_embeds (
        repo BIGINT NOT NULL REFERENCES repositories(id) ON DELETE CASCADE,
        embed_hash TEXT NOT NULL,
        embed_text TEXT NOT NULL,
        PRIMARY KEY (repo, embed_hash)
    );
    CREATE INDEX chunks_unembedded ON chunks(repo, embed_hash) WHERE embedding IS NULL;
    """,
    # One model record for both stores: a task history's ``embedder`` (``name|version|dim``)
    # becomes the ``model_name``, ``model_dim`` and ``model_version`` the code index keeps.
    r"""
    INSERT INTO repo_meta(repo, scope, key, value)
    SELECT m.repo, m.scope, k.key, k.value FROM repo_meta m, LATERAL (VALUES
        ('model_name', split_part(m.value, '|', 1)),
        ('model_dim', substring(m.value from '\|([0-9]+)$')),
        ('model_version', substring(m.value from '^[^|]*\|(.*)\|[0-9]+$'))) AS k(key, value)
    WHERE m.scope = 'tasks' AND m.key = 'embedder' AND m.value ~ '^[^|]*\|.*\|[0-9]+$'
    ON CONFLICT (repo, scope, key) DO NOTHING;
    DELETE FROM repo_meta WHERE scope = 'tasks' AND key = 'embedder';
    """,
    # How many chunks hold each lexeme, per repository, refreshed after an indexing pass:
    # a keyword search matches on the query's rarer words and ranks by all of them.
    """
    CREATE TABLE term_stats (
        repo BIGINT NOT NULL REFERENCES repositories(id) ON DELETE CASCADE,
        lexeme TEXT NOT NULL,
        chunks INTEGER NOT NULL,
        PRIMARY KEY (repo, lexeme)
    );
    """,
    # BM25 from an impact-ordered postings table: each (chunk, lexeme) pair with the
    # lexeme's BM25 term weight in the chunk (idf apart), so that a search reads each
    # word's best chunks from an index instead of ranking every row that holds it. The
    # weight counts a path or symbol word 4 times a body word, as FTS5's column weights
    # do, with k1 1.2 and b 0.75 over a fixed average length (chunks are cut to a bounded
    # size, so a weight is final when written).
    """
    CREATE FUNCTION tributary_impacts(terms tsvector) RETURNS TABLE (lexeme text, impact real)
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        WITH words AS (
            SELECT x.lexeme, array_length(x.positions, 1) AS n,
                   (SELECT SUM(CASE w WHEN 'A' THEN 4 ELSE 1 END) FROM unnest(x.weights) w) AS f
            FROM unnest(terms) x
        ), size AS (SELECT SUM(n) AS dl FROM words)
        SELECT words.lexeme, (words.f * 2.2 / (words.f + 1.2 * (0.25 + 0.75 * size.dl / 75.0)))::real
        FROM words, size
    $$;
    CREATE TABLE chunk_postings (
        chunk BIGINT NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
        repo BIGINT NOT NULL,
        lexeme TEXT NOT NULL,
        impact REAL NOT NULL
    );
    INSERT INTO chunk_postings(chunk, repo, lexeme, impact)
    SELECT c.id, c.repo, i.lexeme, i.impact FROM chunks c, tributary_impacts(c.terms) i;
    CREATE INDEX chunk_postings_best ON chunk_postings(repo, lexeme, impact DESC, chunk);
    CREATE INDEX chunk_postings_chunk ON chunk_postings(chunk);
    """,
    # A search completes its best chunks' scores with the words they were not found by:
    # the postings of a chunk and a word, read from the index alone.
    """
    DROP INDEX chunk_postings_chunk;
    CREATE INDEX chunk_postings_chunk ON chunk_postings(chunk, lexeme) INCLUDE (impact);
    """,
    # The task history's BM25 from postings too, weighted as the SQLite history's columns
    # (title 2, body 1, changed paths' words 0.5) over the history's own average length,
    # which the writer keeps current (a task's length varies more than a chunk's).
    """
    CREATE FUNCTION tributary_task_impacts(terms tsvector, average real)
    RETURNS TABLE (lexeme text, impact real)
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        WITH words AS (
            SELECT x.lexeme, array_length(x.positions, 1) AS n,
                   (SELECT SUM(CASE w WHEN 'A' THEN 2 WHEN 'C' THEN 0.5 ELSE 1 END)
                    FROM unnest(x.weights) w) AS f
            FROM unnest(terms) x
        ), size AS (SELECT SUM(n) AS dl FROM words)
        SELECT words.lexeme,
               (words.f * 2.2 / (words.f + 1.2 * (0.25 + 0.75 * size.dl / GREATEST(average, 1))))::real
        FROM words, size
    $$;
    CREATE FUNCTION tributary_length(terms tsvector) RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT COALESCE(SUM(array_length(x.positions, 1)), 0)::integer FROM unnest(terms) x
    $$;
    CREATE TABLE task_postings (
        task BIGINT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
        repo BIGINT NOT NULL,
        lexeme TEXT NOT NULL,
        impact REAL NOT NULL
    );
    WITH lengths AS (
        SELECT repo, AVG(tributary_length(terms))::real AS average FROM tasks GROUP BY repo
    ), meta AS (
        INSERT INTO repo_meta(repo, scope, key, value)
        SELECT repo, 'tasks', 'postings_length', average::text FROM lengths
    )
    INSERT INTO task_postings(task, repo, lexeme, impact)
    SELECT t.id, t.repo, i.lexeme, i.impact
    FROM tasks t JOIN lengths l ON l.repo = t.repo, tributary_task_impacts(t.terms, l.average) i;
    CREATE INDEX task_postings_best ON task_postings(repo, lexeme, impact DESC, task);
    CREATE INDEX task_postings_task ON task_postings(task, lexeme) INCLUDE (impact);
    DROP INDEX tasks_terms;
    """,
    """
    CREATE TABLE task_functions (
        task BIGINT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
        path TEXT NOT NULL,
        name TEXT NOT NULL,
        line TEXT NOT NULL,
        PRIMARY KEY (task, path, name)
    );
    """,
    # The pending texts in an order: code before tests, translations and vendored copies.
    """
    ALTER TABLE pending_embeds ADD COLUMN embed_order INTEGER NOT NULL DEFAULT 0;
    CREATE INDEX pending_embeds_order ON pending_embeds(repo, embed_order, embed_hash);
    """,
)
