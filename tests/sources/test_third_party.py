"""Real MCP servers that nobody here wrote, installed from package registries.

* ``mcp-server-git`` (PyPI, in the venv) over a temporary git repository;
* ``@modelcontextprotocol/server-memory`` and ``server-filesystem`` (npm). They
  are installed by CI with::

      npm install --prefix tests/node @modelcontextprotocol/server-filesystem @modelcontextprotocol/server-memory

  and these tests skip, saying so, when ``tests/node/node_modules`` is missing.

Their tools are not all "search" tools, so most configs name tool and arguments.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tributary.engine.config.schema import ServerConfig
from tributary.engine.model import SourceStatus
from tributary.engine.sources import ServerStatus, SourcePool
from tributary.engine.sources.fanout import gather_all

pytestmark = [pytest.mark.asyncio, pytest.mark.integration]

NODE_MODULES = Path(__file__).resolve().parent.parent / "node" / "node_modules"
NPM_SCOPE = NODE_MODULES / "@modelcontextprotocol"
GIT_SERVER = Path(sys.executable).with_name("mcp-server-git")
NPM_HINT = ("npm servers not installed: run `npm install --prefix tests/node "
            "@modelcontextprotocol/server-filesystem @modelcontextprotocol/server-memory`")


def npm_server(package: str) -> Path:
    entry = NPM_SCOPE / package / "dist" / "index.js"
    if not entry.exists() or shutil.which("node") is None:
        pytest.skip(NPM_HINT)
    return entry


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "repo"
    repo.mkdir()

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                       env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
                            "GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@x",
                            "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@x"})

    git("init", "-q")
    (repo / "retry.py").write_text("def retry():\n    pass\n")
    git("add", ".")
    git("commit", "-q", "-m", "Add retry helper")
    (repo / "retry.py").write_text("def retry(times=3):\n    pass\n")
    git("commit", "-q", "-am", "Make retry count configurable")
    return repo


def git_config(repo: Path) -> ServerConfig:
    if not GIT_SERVER.exists():
        pytest.skip("mcp-server-git is not installed in the venv")
    return ServerConfig(
        name="git", command=str(GIT_SERVER), args=["--repository", str(repo)], timeout=10.0,
        tool="git_log", top_k_argument="max_count", arguments={"repo_path": str(repo)},
    )


async def test_mcp_server_git_log(git_repo: Path) -> None:
    pool = SourcePool([git_config(git_repo)])
    try:
        report = await pool.probe("git", "anything")
        assert report.ok, report.error
        tools = {t["name"] for t in report.tools}
        assert {"git_log", "git_status", "git_diff"} <= tools
        assert report.selection and report.selection.startswith("git_log(")
        outcome = report.outcome
        assert outcome is not None and outcome.status is SourceStatus.OK
        text = "\n".join(h.content for h in outcome.hits)
        assert "Make retry count configurable" in text and "Add retry helper" in text
        assert pool.state("git").status is ServerStatus.READY and pool.state("git").pid
    finally:
        await pool.aclose()


@pytest.fixture
def memory_file(tmp_path: Path) -> Path:
    path = tmp_path / "memory.jsonl"
    entities = [
        {"type": "entity", "name": "RetryPolicy", "entityType": "class",
         "observations": ["Retries failed HTTP calls with exponential backoff"]},
        {"type": "entity", "name": "Tokenizer", "entityType": "module",
         "observations": ["Splits text into tokens"]},
    ]
    path.write_text("\n".join(json.dumps(e) for e in entities) + "\n")
    return path


async def test_npm_memory_and_filesystem_with_git_in_one_fan_out(
    tmp_path: Path, memory_file: Path, git_repo: Path
) -> None:
    memory_entry = npm_server("server-memory")
    fs_entry = npm_server("server-filesystem")
    docs = tmp_path / "docs"
    (docs / "guide").mkdir(parents=True)
    (docs / "guide" / "backoff.md").write_text("# Backoff\n")
    (docs / "notes.txt").write_text("notes\n")
    servers = [
        # Auto-detected: search_nodes(query).
        ServerConfig(name="memory", command="node", args=[str(memory_entry)],
                     env={"MEMORY_FILE_PATH": str(memory_file)}, timeout=10.0),
        ServerConfig(name="files", command="node", args=[str(fs_entry), str(docs)],
                     timeout=10.0, tool="search_files", query_argument="pattern",
                     arguments={"path": str(docs)}),
        git_config(git_repo),
    ]
    pool = SourcePool(servers)
    try:
        states = await pool.warm_up(timeout=60)
        assert all(s.status is ServerStatus.READY for s in states.values()), states
        assert states["memory"].tool and states["memory"].tool.startswith("search_nodes(query")
        results = {r.name: r for r in await gather_all(
            pool, ["memory", "files", "git"], "backoff", top_k=5)}
        memory = results["memory"]
        assert memory.ok, memory.report.error
        assert [h.title for h in memory.hits] == ["RetryPolicy"]
        assert "exponential backoff" in memory.hits[0].content
        files = results["files"]
        assert files.ok, files.report.error
        # search_files matches globs; "backoff" alone is no glob → ask again with one.
        glob = await pool.call("files", "**/*.md", top_k=5)
        assert glob.status is SourceStatus.OK, glob.error
        assert any("backoff.md" in h.content for h in glob.hits)
        assert results["git"].ok
    finally:
        await pool.aclose()


async def test_mcp_server_git_log_of_a_long_history_comes_back_in_parts(git_repo: Path) -> None:
    from tributary.engine.sources.hit_split import MAX_HIT_CHARS

    env = {"PATH": "/usr/bin:/bin", "HOME": str(git_repo.parent), "GIT_AUTHOR_NAME": "T",
           "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@x"}
    for i in range(120):
        message = f"Tune retry attempt {i}\n\n" + "Explain why the backoff changed. " * 6
        subprocess.run(["git", "-C", str(git_repo), "commit", "-q", "--allow-empty", "-m", message],
                       check=True, capture_output=True, env=env)
    pool = SourcePool([git_config(git_repo)])
    try:
        outcome = await pool.call("git", "retry", top_k=122, timeout=60)
    finally:
        await pool.aclose()
    assert outcome.status is SourceStatus.OK, outcome.error
    assert len(outcome.hits) >= 3 and outcome.detail and "split into" in outcome.detail
    assert all(len(h.content) <= MAX_HIT_CHARS for h in outcome.hits)
    assert all(h.content.startswith("Commit: ") for h in outcome.hits[1:])  # whole commits
    assert sum(h.content.count("Commit: ") for h in outcome.hits) == 122


def files_config(entry: Path, root: Path, **kw: object) -> ServerConfig:
    return ServerConfig(name="files", command="node", args=[str(entry), str(root)], timeout=10.0,
                        **kw)  # type: ignore[arg-type]


async def test_filesystem_no_matches_found_in_structured_content_is_no_hit(tmp_path: Path) -> None:
    """search_files answers ``structuredContent: {"content": "No matches found"}``."""
    entry = npm_server("server-filesystem")
    (tmp_path / "notes.txt").write_text("notes\n")
    pool = SourcePool([files_config(entry, tmp_path, tool="search_files", query_argument="pattern",
                                    arguments={"path": str(tmp_path)})])
    try:
        outcome = await pool.call("files", "**/*.nowhere", top_k=5, timeout=30)
    finally:
        await pool.aclose()
    assert outcome.status is SourceStatus.OK, outcome.error
    assert outcome.hits == []
    assert outcome.detail and "No matches found" in outcome.detail


async def _create_entities(entry: Path, memory: Path, entities: list[dict[str, object]]) -> None:
    """Fill a server-memory graph through its own ``create_entities`` tool (mcp SDK client)."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command="node", args=[str(entry)],
                                   env={"MEMORY_FILE_PATH": str(memory), "PATH": "/usr/bin:/bin"})
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        result = await session.call_tool("create_entities", {"entities": entities})
        assert not result.is_error, result.content


async def test_server_memory_finds_a_question_by_its_keywords(tmp_path: Path) -> None:
    entry = npm_server("server-memory")
    memory = tmp_path / "memory.jsonl"
    await _create_entities(entry, memory, [
        {"name": "Ledger team", "entityType": "team",
         "observations": ["Ledger team owns billing service since 2024"]},
        {"name": "Tokenizer", "entityType": "module", "observations": ["Splits text into tokens"]},
        {"name": "Payroll", "entityType": "service", "observations": ["Pays salaries monthly"]},
    ])
    question = "who owns the billing service"

    def config(mode: str) -> ServerConfig:
        return ServerConfig(name=mode, command="node", args=[str(entry)], timeout=10.0,
                            env={"MEMORY_FILE_PATH": str(memory)}, query_mode=mode)  # type: ignore[arg-type]

    pool = SourcePool([config("full"), config("keywords")])
    try:
        whole = await pool.call("full", question, top_k=5, timeout=30)
        words = await pool.call("keywords", question, top_k=5, timeout=30)
        nothing = await pool.call("keywords", "who wrote the tokeniser", top_k=5, timeout=30)
        state = pool.state("keywords")
    finally:
        await pool.aclose()
    assert whole.status is SourceStatus.OK and whole.hits == []  # the substring search misses
    assert words.status is SourceStatus.OK, words.error
    assert [h.title for h in words.hits][:1] == ["Ledger team"]  # it holds every word
    assert "Tokenizer" not in {h.title for h in words.hits}
    assert nothing.status is SourceStatus.OK and nothing.hits == []
    assert state.tool and state.tool.startswith("search_nodes(query, word by word")
