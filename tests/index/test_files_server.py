"""The files MCP server end to end: a real subprocess, the real model, the mcp client."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.index.index_helpers import HashingEmbedder
from tributary.engine.index.embed import load_code_embedder
from tributary.engine.index.manager import index_repository

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.timeout(300)  # two cold torch imports (this process and the server) on 2 cores
@pytest.mark.asyncio
async def test_files_server_search_and_safe_reads(repo: Path, tmp_path: Path) -> None:
    index_dir = tmp_path / "indexes"
    # The real default model, in-process, so server and index agree on the model version.
    stats = index_repository(repo, embedder=load_code_embedder(), index_dir=index_dir)
    assert stats.chunks_total > 10
    outside = tmp_path / "outside.txt"
    outside.write_text("not yours\n")
    (repo / "escape.txt").symlink_to(outside)
    (repo / "linked").symlink_to(tmp_path, target_is_directory=True)

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "tributary.engine.servers.files", "--index-dir", str(index_dir),
              "--model-wait", "300"],  # about hybrid results: wait for the model
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=str(ROOT),
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert {"search_code", "search_functions", "search_classes", "get_file"} <= set(tools)
        assert tools["search_code"].output_schema is not None
        assert "hits" in tools["search_code"].output_schema["properties"]

        result = await session.call_tool(
            "search_code", {"query": "compute the invoice total including tax", "top_k": 5}
        )
        assert not result.is_error
        hits = result.structured_content["hits"]  # type: ignore[index]
        assert hits[0]["path"] == "src/billing/invoice.py"
        assert set(hits[0]) >= {"path", "repo", "start_line", "end_line", "symbol", "kind",
                                "language", "score", "content"}  # fmt: skip
        assert hits[0]["repo"].endswith("repo")  # outside the home folder: its whole path

        result = await session.call_tool(
            "search_functions", {"query": "download a web page", "top_k": 3}
        )
        first = result.structured_content["hits"][0]  # type: ignore[index]
        assert first["symbol"] == "fetch_url" and first["kind"] == "function"

        result = await session.call_tool("search_classes", {"query": "geometry point", "top_k": 3})
        kinds = {h["kind"] for h in result.structured_content["hits"]}  # type: ignore[index]
        assert kinds == {"class"}

        result = await session.call_tool(
            "search_code", {"query": "greeting", "language": "java", "kind": "method"}
        )
        hits = result.structured_content["hits"]  # type: ignore[index]
        assert hits and all(h["language"] == "java" and h["kind"] == "method" for h in hits)

        result = await session.call_tool(
            "get_file", {"path": "src/net/http_client.py", "start_line": 2, "end_line": 3}
        )
        content = result.structured_content  # type: ignore[assignment]
        assert content is not None and content["start_line"] == 2 and content["end_line"] == 3
        assert content["content"].splitlines()[0].lstrip().startswith('"""Download')

        absolute = str((repo / "web/app.js").resolve())
        result = await session.call_tool("get_file", {"path": absolute})
        assert not result.is_error and "renderCart" in result.structured_content["content"]  # type: ignore[index]

        for bad in ("../outside.txt", "src/../../outside.txt", str(outside), "escape.txt",
                    "linked/outside.txt", "/etc/passwd", "app.log", ".git/config"):  # fmt: skip
            result = await session.call_tool("get_file", {"path": bad})
            assert result.is_error, bad


def test_queries_answer_on_keywords_while_the_model_is_still_loading(
    repo: Path, index_dir: Path, embedder: HashingEmbedder
) -> None:
    """A cold server must not make the first query time out: BM25 answers meanwhile."""
    from tributary.engine.servers.files import FilesService

    index_repository(repo, embedder=embedder, index_dir=index_dir)
    service = FilesService(index_dir, model_wait_s=0.05)
    service.start_loading = lambda: None  # type: ignore[method-assign]  # the model never arrives
    result = service.search("parse invoice number", 5)
    assert result.hits and result.hits[0].path == "src/billing/invoice.py"
    assert any("still loading" in w for w in result.warnings)


def test_a_repository_renamed_by_another_processs_re_index_is_searched_by_its_new_name(
    repo: Path, index_dir: Path, embedder: HashingEmbedder
) -> None:
    """A remote added and the repository re-indexed elsewhere: the running server's
    ``repo:`` filter takes the name the Indexes page now shows, without a restart."""
    from tributary.engine.index.manager import index_path_for
    from tributary.engine.index.store import SqliteStore
    from tributary.engine.servers.files import FilesService

    index_repository(repo, embedder=embedder, index_dir=index_dir)
    path = index_path_for(repo, directory=index_dir)

    def rename(name: str) -> None:
        writer = SqliteStore(path)
        writer.set_meta("name", name)
        writer.close()
        later = os.stat(path).st_mtime_ns + 1_000_000_000
        os.utime(path, ns=(later, later))  # (a file system with a coarse clock)

    rename("old/name")
    service = FilesService(index_dir, model_wait_s=0.05)
    service.start_loading = lambda: None  # type: ignore[method-assign]
    assert service.search("parse invoice number", 5, repos=["old/name"]).hits
    rename("acme/billing")
    assert service.search("parse invoice number", 5, repos=["acme/billing"]).hits
    assert not service.search("parse invoice number", 5, repos=["old/name"]).hits


def test_a_question_about_one_repository_is_not_interleaved_with_anothers_guesses(
    repo: Path, index_dir: Path, embedder: HashingEmbedder, tmp_path: Path
) -> None:
    """Each index ranks its own chunks, so its first hit scores alike however well it
    matches: another repository's chunk holding one word of the question came between
    the answer's hits. Each index is now weighed by how much of the question its first
    hits hold; a question both answer keeps both."""
    from tributary.engine.servers.files import FilesService

    other = tmp_path / "other"
    (other / "pkg").mkdir(parents=True)
    (other / "pkg" / "mail.py").write_text(
        "def send_mail(to, body):\n    \"\"\"Send an email with the invoice attached.\"\"\"\n"
        "    return smtp(to, body)\n\n\ndef mail_queue():\n    \"\"\"The mail waiting to parse.\"\"\"\n"
        "    return []\n", encoding="utf-8")
    (other / "pkg" / "numbers.py").write_text(
        "def format_number(value):\n    \"\"\"Format a number for display.\"\"\"\n    return f'{value:,}'\n\n\n"
        "def round_number(value):\n    \"\"\"Round a number to two places.\"\"\"\n    return round(value, 2)\n",
        encoding="utf-8")
    index_repository(repo, embedder=embedder, index_dir=index_dir)
    index_repository(other, embedder=embedder, index_dir=index_dir)
    service = FilesService(index_dir, model_wait_s=0.05)
    service.start_loading = lambda: None  # type: ignore[method-assign]  # keyword search alone
    hits = service.search("parse invoice number", 10).hits
    paths = [hit.path for hit in hits]
    assert paths[:2] == ["src/billing/invoice.py"] * 2
    # Chunks holding one word of it ("number", "invoice", "parse") come after this
    # repository's first hits; they came third, level with its second hit, before.
    assert min(n for n, path in enumerate(paths) if path.startswith("pkg/")) >= 4, paths
    both = service.search("format number", 10).hits
    assert both[0].path == "pkg/numbers.py"
