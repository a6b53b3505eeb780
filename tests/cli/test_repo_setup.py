"""``--repo`` indexes on first use, and imports history only when the tasks source is asked."""

from __future__ import annotations

import argparse
import shlex
import subprocess
from pathlib import Path

import pytest

from tributary.engine.cli.common import wants_history
from tributary.engine.cli.repo_setup import ensure_repo_indexed
from tributary.engine.tasks.api import tasks_db_path


@pytest.mark.parametrize(
    ("sources", "wanted"),
    [(None, True), ("files,tasks", True), ("tasks", True), ("files", False), ("files, memory", False)],
)
def test_history_is_wanted_only_with_the_tasks_source(sources: str | None, wanted: bool) -> None:
    assert wants_history(argparse.Namespace(sources=sources)) is wanted


def _one_commit(repo: Path) -> Path:
    """A git work tree at ``repo`` with one file in one commit."""
    repo.mkdir()
    (repo / "app.py").write_text("def main():\n    return 1\n", encoding="utf-8")
    for args in (["init", "-q"], ["add", "."],
                 ["-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "Add the app"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)
    return repo


def test_files_only_indexes_code_and_imports_no_history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRIBUTARY_HOME", str(tmp_path / "home"))
    repo = _one_commit(tmp_path / "repo")
    later: list[Path] = []
    assert ensure_repo_indexed(repo, history=False, embed_later=later.append) == 0
    assert not tasks_db_path(repo).exists()
    assert ensure_repo_indexed(repo, embed_later=later.append) == 0
    assert tasks_db_path(repo).exists()


def test_first_answer_waits_only_for_the_keyword_tier(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--repo`` chunks the repository and hands the vectors to a later pass: the model
    is never loaded, and `index embed` then fills every vector in."""
    import tributary.engine.index.embed as embed
    from tests.index.index_helpers import HashingEmbedder
    from tributary.engine.cli.main import main
    from tributary.engine.index.manager import repository_readiness

    monkeypatch.setenv("TRIBUTARY_HOME", str(tmp_path / "home"))
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "app.py").write_text("def main():\n    return 1\n\n\ndef helper():\n    return 2\n")

    def no_model() -> None:
        raise AssertionError("the first answer waited for the model")

    monkeypatch.setattr(embed, "load_code_embedder", no_model)
    monkeypatch.setattr("tributary.engine.index.manager.load_code_embedder", no_model)
    later: list[Path] = []
    assert ensure_repo_indexed(repo, history=False, embed_later=later.append) == 0
    assert later == [repo.resolve()]
    embedded, total = repository_readiness(repo)
    assert embedded == 0 < total
    monkeypatch.setattr("tributary.engine.index.manager.load_code_embedder", HashingEmbedder)
    assert main(["index", "embed", "--quiet", str(repo)]) == 0
    assert repository_readiness(repo) == (total, total)
    later.clear()
    assert ensure_repo_indexed(repo, history=False, embed_later=later.append) == 0
    assert later == []  # nothing waits: no background pass


def test_the_history_is_searchable_at_once_and_embedded_later(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A first ``--repo`` imports the commits' words only (a large history's vectors took
    minutes); the background `index embed` gives every past task its vector."""
    import tributary.engine.index.embed as embed
    from tests.index.index_helpers import HashingEmbedder
    from tributary.engine.cli.main import main
    from tributary.engine.tasks.store import TaskStore

    monkeypatch.setenv("TRIBUTARY_HOME", str(tmp_path / "home"))
    repo = tmp_path / "repo"
    repo.mkdir()
    for n in range(3):
        (repo / f"mod_{n}.py").write_text(f"def f{n}():\n    return {n}\n", encoding="utf-8")
    subprocess.run(["git", "-C", str(repo), "init", "-q"], check=True, capture_output=True)
    for args in (["add", "."], ["-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "Add the modules"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)

    def no_model() -> None:
        raise AssertionError("the first answer waited for the model")

    monkeypatch.setattr(embed, "load_default_embedder", no_model)
    monkeypatch.setattr("tributary.engine.index.manager.load_code_embedder", no_model)
    later: list[Path] = []
    assert ensure_repo_indexed(repo, embed_later=later.append) == 0
    assert later == [repo.resolve()]
    with TaskStore(tasks_db_path(repo), readonly=True) as store:
        assert store.stats().tasks == 1 and store.vector_counts() == (0, 1)
        assert store.bm25("modules", 5)  # its words are searchable already
    later.clear()  # the background pass was stopped: the next --repo starts another
    assert ensure_repo_indexed(repo, embed_later=later.append) == 0
    assert later == [repo.resolve()]
    monkeypatch.setattr(embed, "load_default_embedder", HashingEmbedder)
    monkeypatch.setattr("tributary.engine.index.manager.load_code_embedder", HashingEmbedder)
    assert main(["index", "embed", "--quiet", str(repo)]) == 0
    with TaskStore(tasks_db_path(repo), readonly=True) as store:
        assert store.vector_counts() == (1, 1)
    later.clear()
    assert ensure_repo_indexed(repo, embed_later=later.append) == 0
    assert later == []  # nothing waits


@pytest.mark.parametrize("command", ["search", "context"])
def test_search_and_context_ask_one_repository_by_the_builtin_servers(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tributary.engine.cli.main import build_parser
    from tributary.engine.cli.repo_setup import prepare_repo, scope_to_repo
    from tributary.engine.config.schema import Config
    from tributary.engine.model import SearchRequest

    monkeypatch.setenv("TRIBUTARY_HOME", str(tmp_path / "home"))
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "invoice.py").write_text("def total(lines):\n    return sum(lines)\n", encoding="utf-8")
    args = build_parser(f"tributary.engine.cli.{command}_cmd").parse_args([command, "--repo", str(repo), "q"])
    later: list[Path] = []
    assert prepare_repo(args, embed_later=later.append) == 0  # indexed on first use
    assert later == [repo.resolve()]
    request = SearchRequest("why does the invoice total skip tax")
    scope_to_repo(request, args.repo, Config())
    assert request.filters.repos == [str(repo.resolve())] and request.sources == ["files"]  # no history: no git
    named = SearchRequest("q", sources=["files"])  # --sources files: kept
    scope_to_repo(named, args.repo, Config())
    assert named.sources == ["files"]


def _holding(lock: Path) -> subprocess.Popen[str]:
    """Another process holding ``lock`` (as a running embedding pass does), once it says so."""
    import sys

    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, filelock; lock = filelock.FileLock(sys.argv[1]); lock.acquire();"
         " print('held', flush=True); sys.stdin.read()", str(lock)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    return holder


@pytest.mark.parametrize("held", ["code", "history"])
def test_no_second_embedding_pass_starts_beside_a_running_one(
    held: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every ``--repo`` search that found vectors missing started one more background
    pass: three searches during a large repository's first minutes left three processes
    embedding the same commits on two cores. While a pass holds the code's or the
    history's lock, none is started, and a history pass started anyway does nothing."""
    import tributary.engine.index.embed as embed
    from tributary.engine.cli.main import main
    from tributary.engine.index.manager import index_path_for
    from tributary.engine.localsearch.embed_lock import embed_lock_path
    from tributary.engine.tasks.api import embed_history

    monkeypatch.setenv("TRIBUTARY_HOME", str(tmp_path / "home"))
    repo = _one_commit(tmp_path / "repo")
    later: list[Path] = []
    assert ensure_repo_indexed(repo, embed_later=later.append) == 0
    assert later == [repo.resolve()]
    lock = (embed_lock_path(index_path_for(repo)) if held == "code"
            else embed_lock_path(tasks_db_path(repo)))  # fmt: skip
    holder = _holding(lock)
    try:
        later.clear()
        assert ensure_repo_indexed(repo, embed_later=later.append) == 0
        assert later == []  # the running pass takes what waits
        capsys.readouterr()
        assert main(["index", "status", str(repo)]) == 0
        assert "; embedding now)" in capsys.readouterr().out
        if held == "history":
            def no_model() -> None:
                raise AssertionError("a second pass loaded the model")

            monkeypatch.setattr(embed, "load_default_embedder", no_model)
            assert embed_history(repo) == 0
    finally:
        holder.communicate("")
    capsys.readouterr()
    assert main(["index", "status", str(repo)]) == 0  # stopped, it says what finishes the work
    finishes = f"; no pass runs: `tributary index embed {shlex.quote(str(repo.resolve()))}` finishes it)"
    chunks, history = (line for line in capsys.readouterr().out.splitlines() if line.startswith(("  chunks:", "  history:")))
    assert finishes in chunks and f"(0 embedded: meaning-based matches of it 0 % ready{finishes}" in history
    later.clear()
    assert ensure_repo_indexed(repo, embed_later=later.append) == 0
    assert later == [repo.resolve()]  # that pass ended with vectors still missing: another one


def test_the_repositorys_own_patterns_apply(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A repository whose config entry leaves files out: ``--repo`` indexed them anyway
    when it brought the index up to date."""
    from tributary.engine.index.manager import open_index_store

    home = tmp_path / "home"
    monkeypatch.setenv("TRIBUTARY_HOME", str(home))
    repo = _one_commit(tmp_path / "repo")
    (repo / "generated.py").write_text("def generated_table():\n    return []\n", encoding="utf-8")
    home.mkdir()
    config = home / "config.yaml"
    config.write_text(f"repos:\n  - path: {repo}\n    exclude: [generated.py]\n", encoding="utf-8")
    assert ensure_repo_indexed(repo, config, history=False, embed_later=lambda _root: None) == 0
    store = open_index_store(repo)
    try:
        assert store.chunk_ids_matching("app.py") and not store.chunk_ids_matching("generated.py")
    finally:
        store.close()
