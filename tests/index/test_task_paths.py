"""The files an issue names: the paths it writes, its tracebacks' innermost frame first."""

from __future__ import annotations

from pathlib import Path

from tributary.engine.index.search import _named_files
from tributary.engine.index.store import SearchFilter
from tributary.engine.localsearch.longquery import read_task


def test_a_path_outside_the_checkout_names_a_file_only_by_more_than_its_name(tmp_path: Path) -> None:
    """``/venv/…/site-packages/pkg/runner.py`` is ``pkg/runner.py`` here; the reporter's
    own ``/home/me/project/logging.py`` is not the repository's ``pkg/logging.py``, while
    a bare ``helpers.py`` written in the prose may still be this repository's."""
    from tests.index.index_helpers import HashingEmbedder
    from tributary.engine.index.manager import index_path_for, index_repository
    from tributary.engine.index.store import SqliteStore

    repo = tmp_path / "pkg"
    (repo / "pkg").mkdir(parents=True)
    for name in ("runner", "logging", "helpers", "config"):
        (repo / "pkg" / f"{name}.py").write_text(f"def {name}_main(argv):\n    return len(argv)\n",
                                                  encoding="utf-8")
    issue = ("Running with a plugin crashes\n\nMy plugin's logging set-up makes the run fail:\n\n```\n"
             "/home/me/project/logging.py:12: in setup\n    configure()\n"
             "/venv/lib/python3.9/site-packages/pkg/runner.py:40: in runner_main\n    return len(argv)\n"
             "E   TypeError: object of type 'NoneType' has no len()\n```\n\n"
             "The arguments come from helpers.py, I think. " * 3)
    index_repository(repo, embedder=HashingEmbedder(), index_dir=tmp_path / "idx")
    store = SqliteStore(index_path_for(repo, directory=tmp_path / "idx"), readonly=True)
    try:
        named = _named_files(store, read_task(issue), SearchFilter())
        paths = [{chunk.path for chunk in store.chunks_by_id(sorted(ids)).values()} for ids in named]
        assert paths == [{"pkg/runner.py"}, {"pkg/helpers.py"}]  # the innermost frame first
    finally:
        store.close()
