"""Crash safety: kill -9 an indexing process, then check the index and resume."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from engine.index.db import connect
from engine.index.manager import index_path_for, index_repository
from tests.index.index_helpers import HashingEmbedder

ROOT = Path(__file__).resolve().parents[2]
FILES = 40
FUNCS = 12

CHILD = """
import sys
from pathlib import Path

import pytest
sys.path.insert(0, {root!r})
from engine.index.manager import index_repository
from tests.index.index_helpers import HashingEmbedder
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


def _files_done(index_path: Path) -> int:
    if not index_path.exists():
        return 0
    try:
        conn = connect(index_path, readonly=True)
        try:
            return int(conn.execute("SELECT COUNT(*) FROM files").fetchone()[0])
        finally:
            conn.close()
    except Exception:  # schema not created yet
        return 0


@pytest.mark.integration
def test_kill_9_mid_index_then_resume(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    _make_repo(repo)
    index_dir = tmp_path / "ix"
    index_path = index_path_for(repo, directory=index_dir)
    code = CHILD.format(root=str(ROOT), repo=str(repo), index_dir=str(index_dir))
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT)
    try:
        deadline = time.monotonic() + 90
        while _files_done(index_path) == 0:
            assert child.poll() is None, "indexing finished before it could be killed"
            assert time.monotonic() < deadline, "indexing never wrote a file"
            time.sleep(0.02)
        child.send_signal(signal.SIGKILL)
    finally:
        child.kill()
        child.wait()
    assert child.returncode == -signal.SIGKILL

    conn = connect(index_path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        files = conn.execute("SELECT COUNT(*) FROM files").fetchone()[0]
        assert 0 < files < FILES
        # Consistent: every file has exactly its chunks, each with a vector and FTS row.
        mismatched = conn.execute(
            "SELECT COUNT(*) FROM files f WHERE f.chunks != "
            "(SELECT COUNT(*) FROM chunks c WHERE c.file_id = f.id)"
        ).fetchone()[0]
        assert mismatched == 0
        chunks = conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        assert conn.execute("SELECT COUNT(*) FROM chunks_vec").fetchone()[0] == chunks
        assert conn.execute("SELECT COUNT(*) FROM chunks_fts").fetchone()[0] == chunks
        done_paths = {row[0] for row in conn.execute("SELECT path FROM files")}
    finally:
        conn.close()

    embedder = HashingEmbedder()
    stats = index_repository(repo, embedder=embedder, index_dir=index_dir)
    assert stats.files_indexed == FILES - len(done_paths)  # finished files are not redone
    assert stats.files_total == FILES
    assert not any(text.startswith(tuple(done_paths)) for text in embedder.texts)
    conn = connect(index_path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0] == FILES * FUNCS
    finally:
        conn.close()
