"""Crash safety: kill -9 an indexing process, then check the index and resume."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.index.index_helpers import HashingEmbedder
from tributary.engine.index.manager import index_path_for, index_repository
from tributary.engine.localsearch.db import connect

ROOT = Path(__file__).resolve().parents[2]
FILES = 40
FUNCS = 12

CHILD = """
import sys
from pathlib import Path

import pytest
sys.path.insert(0, {root!r})
import tributary.engine.index.indexer as indexer
from tributary.engine.index.manager import index_repository
from tests.index.index_helpers import HashingEmbedder
indexer.BATCH_CHUNKS = 40  # many batches, so the kill lands between two of them
index_repository(Path({repo!r}), embedder=HashingEmbedder(delay_s=0.004), index_dir=Path({index_dir!r}))
"""


def _make_repo(root: Path) -> None:
    for n in range(FILES):
        body = "\n\n".join(
            f"def handler_{n}_{i}(value):\n    '''Handle case {i} of module {n}.'''\n    return value + {i}\n"
            for i in range(FUNCS)
        )
        path = root / "pkg" / f"module_{n:02d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)


def _vectors_done(index_path: Path) -> int:
    if not index_path.exists():
        return 0
    try:
        conn = connect(index_path, readonly=True)
        try:
            return int(conn.execute("SELECT COUNT(*) FROM chunks_vec").fetchone()[0])
        finally:
            conn.close()
    except Exception:  # schema or vector table not created yet
        return 0


@pytest.mark.integration
def test_kill_9_mid_index_then_resume(tmp_path: Path) -> None:
    """Killed while embedding (the keyword tier is written by then): the index is
    consistent, every chunk is either embedded or queued, and the next run embeds only
    what waits, re-chunking nothing."""
    repo = tmp_path / "repo"
    _make_repo(repo)
    index_dir = tmp_path / "ix"
    index_path = index_path_for(repo, directory=index_dir)
    code = CHILD.format(root=str(ROOT), repo=str(repo), index_dir=str(index_dir))
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT)
    try:
        deadline = time.monotonic() + 90
        while _vectors_done(index_path) == 0:
            assert child.poll() is None, "indexing finished before it could be killed"
            assert time.monotonic() < deadline, "indexing never wrote a vector"
            time.sleep(0.02)
        child.send_signal(signal.SIGKILL)
    finally:
        child.kill()
        child.wait()
    assert child.returncode == -signal.SIGKILL

    conn = connect(index_path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("SELECT COUNT(*) FROM files").fetchone()[0] == FILES
        mismatched = conn.execute(
            "SELECT COUNT(*) FROM files f WHERE f.chunks != "
            "(SELECT COUNT(*) FROM chunks c WHERE c.file_id = f.id)"
        ).fetchone()[0]
        assert mismatched == 0
        chunks = conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        assert chunks == FILES * FUNCS
        assert conn.execute("SELECT COUNT(*) FROM chunks_fts").fetchone()[0] == chunks
        vectors = conn.execute("SELECT COUNT(*) FROM chunks_vec").fetchone()[0]
        assert 0 < vectors < chunks
        assert conn.execute("SELECT COUNT(*) FROM chunks WHERE embedded = 1").fetchone()[0] == vectors
        unqueued = conn.execute(
            "SELECT COUNT(*) FROM chunks c WHERE c.embedded = 0 AND NOT EXISTS "
            "(SELECT 1 FROM pending_embeds p WHERE p.embed_hash = c.embed_hash)"
        ).fetchone()[0]
        assert unqueued == 0
    finally:
        conn.close()

    embedder = HashingEmbedder()
    stats = index_repository(repo, embedder=embedder, index_dir=index_dir)
    assert stats.files_indexed == 0  # chunked files are not redone
    assert stats.files_total == FILES
    assert len(embedder.texts) == chunks - vectors  # only what waited
    conn = connect(index_path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("SELECT COUNT(*) FROM chunks_vec").fetchone()[0] == FILES * FUNCS
        assert conn.execute("SELECT COUNT(*) FROM pending_embeds").fetchone()[0] == 0
    finally:
        conn.close()
