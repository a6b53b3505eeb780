"""The watcher applies live changes; the ``tributary index`` CLI drives the manager."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from tests.index.index_helpers import HashingEmbedder
from tributary.engine.cli.main import main
from tributary.engine.index import manager
from tributary.engine.index.manager import index_path_for, list_indexes, watch_repository
from tributary.engine.index.progress import IndexStats
from tributary.engine.index.store import SqliteStore


def _wait(predicate, timeout: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_watcher_indexes_new_changed_and_deleted_files(
    repo: Path, index_dir: Path, embedder: HashingEmbedder
) -> None:
    updates: list[IndexStats] = []
    stop = threading.Event()
    thread = threading.Thread(
        target=watch_repository,
        args=(repo,),
        kwargs={"embedder": embedder, "index_dir": index_dir, "stop_event": stop,
                "on_update": updates.append, "debounce_ms": 50},
        daemon=True,
    )  # fmt: skip
    thread.start()
    try:
        _wait(lambda: len(updates) >= 1)  # the initial full pass
        (repo / "src/new_module.py").write_text("def brand_new_feature():\n    return 42\n")
        (repo / "cmd/server.go").unlink()
        (repo / "app2.log").write_text("ignored\n")

        def applied() -> bool:
            store = SqliteStore(index_path_for(repo, directory=index_dir), readonly=True)
            try:
                states = store.file_states()
            finally:
                store.close()
            return "src/new_module.py" in states and "cmd/server.go" not in states

        _wait(applied)
        store = SqliteStore(index_path_for(repo, directory=index_dir), readonly=True)
        try:
            assert "app2.log" not in store.file_states()
        finally:
            store.close()
    finally:
        stop.set()
        thread.join(timeout=30)
    assert not thread.is_alive()


def test_cli_add_list_status_update_remove(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TRIBUTARY_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(manager, "load_code_embedder", lambda: HashingEmbedder())
    assert main(["index", "add", str(repo)]) == 0
    err = capsys.readouterr().err
    assert "chunks" in err and "files" in err
    assert [i.root for i in list_indexes()] == [repo.resolve()]

    assert main(["index", "list"]) == 0
    out = capsys.readouterr().out
    assert "repo" in out and str(repo.resolve()) in out

    assert main(["index", "status", str(repo)]) == 0
    assert "chunks:" in capsys.readouterr().out

    (repo / "web/app.js").write_text("function renamed() {}\n")
    assert main(["index", "update"]) == 0
    assert "1 new or changed" in capsys.readouterr().err

    assert main(["index", "remove", str(repo)]) == 0
    assert list_indexes() == []
    assert main(["index", "remove", str(repo)]) == 1

    # The name `index list` shows works too, from any folder.
    assert main(["index", "add", str(repo)]) == 0
    name = list_indexes()[0].name
    assert main(["index", "remove", "no-such-name"]) == 1
    assert "not indexed" in capsys.readouterr().err
    assert main(["index", "remove", name]) == 0
    assert list_indexes() == []
    assert main(["index", "add", str(tmp_path / "missing")]) == 2
