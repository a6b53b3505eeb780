"""A search limited to some repositories asks only their indexes."""

from __future__ import annotations

from pathlib import Path

from mcp import types

from tests.conftest import IndexTarget
from tests.index.index_helpers import HashingEmbedder, make_repo
from tests.tasks.task_helpers import FIXTURE_TASKS, write_jsonl
from tributary.engine.config.schema import ServerConfig
from tributary.engine.index.manager import index_repository
from tributary.engine.index.naming import in_scope
from tributary.engine.model import SearchFilters, SearchRequest
from tributary.engine.query.filters import scope_arguments
from tributary.engine.query.syntax import parse_query
from tributary.engine.servers.files import FilesService
from tributary.engine.servers.tasks import TaskBackend
from tributary.engine.sources.tools import ToolSelection, select_tool
from tributary.engine.tasks.api import import_tasks_jsonl, tasks_db_path


def _repo(root: Path, body: str) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "src" / "response.js").write_text(body, encoding="utf-8")
    return root


def test_files_service_searches_only_the_chosen_repositories(tmp_path: Path, at: IndexTarget) -> None:
    embedder = HashingEmbedder()
    express = _repo(tmp_path / "express" / "lib", "function sendResponse(res) {\n  return res.send('ok')\n}\n")
    koa = _repo(tmp_path / "koa", "function respond(ctx) {\n  ctx.body = 'response ok'\n}\n")
    for repo in (express, koa):
        index_repository(repo, embedder=embedder, **at.kw)
    service = FilesService(at.kw.get("index_dir"), embedder=embedder, backend=at.kw.get("backend"))
    try:
        _search_scoped(service, express)
    finally:
        service.close()


def _search_scoped(service: FilesService, express: Path) -> None:
    every = {hit.repo for hit in service.search("response", 10).hits}
    assert len(every) == 2
    only = service.search("response", 10, repos=[str(express)])
    assert only.hits and {hit.path for hit in only.hits} == {"src/response.js"}
    assert all(hit.repo.endswith("express/lib") for hit in only.hits)
    assert {h.repo for h in service.search("response", 10, exclude_repos=[str(express)]).hits} == every - {
        only.hits[0].repo}
    nothing = service.search("response", 10, repos=["no/such-repo"])
    assert nothing.hits == [] and "no indexed repository matches" in nothing.warnings[0]


def test_tasks_server_searches_only_the_chosen_repositories(tmp_path: Path, at: IndexTarget) -> None:
    roots = [make_repo(tmp_path / name) for name in ("alpha", "beta")]
    for root in roots:
        index_repository(root, embedder=HashingEmbedder(), **at.kw)  # (names the history)
        import_tasks_jsonl(root, write_jsonl(tmp_path / f"{root.name}.jsonl", FIXTURE_TASKS),
                           embed=False, **at.tasks_kw)
    files = [] if at.postgres else [tasks_db_path(root, at.tasks_kw["indexes_dir"]) for root in roots]
    backend = TaskBackend(files, embed=False, backend=at.kw.get("backend"))
    backend.start()
    try:
        every = {label for label, _ in backend.search_tasks("login session", 10)}
        assert len(every) == 2
        only = {label for label, _ in backend.search_tasks("login session", 10, repos=[str(roots[0])])}
        assert len(only) == 1
        rest = backend.search_tasks("login session", 10, exclude_repos=[str(roots[0])])
        assert {label for label, _ in rest} == every - only
        _files, tasks_of_beta = backend.files_and_tasks("login session", 5, 5, repos=["beta"])  # its name
        assert {label for label, _ in tasks_of_beta} == every - only
    finally:
        backend.close()


def test_scope_by_name_or_folder(tmp_path: Path) -> None:
    root = tmp_path / "src" / "express"
    root.mkdir(parents=True)
    assert in_scope("expressjs/express", root, ["expressjs/express"])
    assert in_scope("expressjs/express", root, ["express"])  # the name's last part
    assert in_scope("expressjs/express", root, [str(tmp_path / "src")])  # a folder holding it
    assert not in_scope("expressjs/express", root, ["koa"])
    assert not in_scope("expressjs/express", root, [], excluded=["express"])
    assert in_scope("expressjs/express", root, [])


def test_repo_filter_in_the_query_goes_only_to_tools_that_take_it() -> None:
    parsed = parse_query("response helpers repo:expressjs/express")
    assert parsed.text == "response helpers" and parsed.filters.repos == ["expressjs/express"]
    scope = scope_arguments(parsed.filters)
    assert scope == {"repos": ["expressjs/express"]}
    schema = {"type": "object", "properties": {"query": {"type": "string"}, "repos": {"type": "array"}}}
    scoped = select_tool(ServerConfig(name="files", command="x"),
                         [types.Tool(name="search_code", input_schema=schema,
                                     annotations=types.ToolAnnotations(read_only_hint=True))])
    assert scoped.arguments("q", 5, scope)["repos"] == ["expressjs/express"]
    other = ToolSelection("search", "query")
    assert "repos" not in other.arguments("q", 5, scope)
    assert SearchRequest("q", filters=SearchFilters(repos=["a"])).filters.is_empty() is False
