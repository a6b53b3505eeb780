"""A third-party source's absolute path inside an indexed repository is written as the
repository's relative path, so its hit folds with the built-in code search's."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes import fake_server_object
from tributary.engine import paths
from tributary.engine.config.schema import Config, ServerConfig
from tributary.engine.engine import Engine
from tributary.engine.index.store import SqliteStore
from tributary.engine.model import Hit, SearchRequest
from tributary.engine.sources.local_paths import localised
from tributary.engine.sources.memory import memory_connector


def _hit(path: str | None, title: str | None = None) -> Hit:
    return Hit(id=path or "x", source="rg", tool="search", title=title or path or "x", content="x", path=path)


def test_a_path_inside_a_repository_becomes_its_relative_path() -> None:
    roots = [("/src/app", "app"), ("/src/app/vendor/lib", "lib")]
    hits = [_hit("/src/app/pkg/mod.py"), _hit("/src/app/vendor/lib/core.py", "core"),
            _hit("/src/application/x.py"), _hit("/src/app/../etc/passwd"), _hit("pkg/mod.py"), _hit(None)]
    out = localised(hits, lambda: roots)
    assert [h.path for h in out] == ["pkg/mod.py", "core.py", "/src/application/x.py",
                                     "/src/app/../etc/passwd", "pkg/mod.py", None]
    assert out[0].title == "pkg/mod.py" and out[0].metadata == {"root": "/src/app", "repo": "app"}
    assert out[1].title == "core" and out[1].metadata["repo"] == "lib"  # the deepest folder
    assert out[2] is hits[2] and localised(hits, list) is hits

    def unread() -> list[tuple[str, str]]:
        raise AssertionError("the indexes were read for hits with no absolute path")

    relative = [_hit("pkg/mod.py"), _hit(None)]
    assert localised(relative, unread) is relative


def test_a_path_from_the_current_folder_loses_its_dot() -> None:
    """code-index-mcp answers ``./CHANGES.md``: as written it never met the code
    search's ``CHANGES.md``."""
    hits = [_hit("./CHANGES.md"), _hit("./src/a.py", "a"), _hit("./../x.py"), _hit("./")]
    out = localised(hits, list)
    assert [(h.path, h.title) for h in out] == [("CHANGES.md", "CHANGES.md"), ("src/a.py", "a"),
                                               ("./../x.py", "./../x.py"), ("./", "./")]


@pytest.mark.asyncio
async def test_a_grep_servers_absolute_path_folds_with_the_code_search(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    paths.indexes_dir().mkdir(parents=True, exist_ok=True)
    store = SqliteStore(paths.indexes_dir() / "proj-1.files.sqlite")
    store.set_meta("root", str(root))
    store.set_meta("name", "proj")
    store.close()
    answer = f"{root}/src/mod.py:3:def retry_invoice(invoice):\n{root}/src/mod.py:4:    return invoice\n"
    args = {"rg": ("--plain", "--content", answer), "files": ("--hits", "1", "--tool", "search_code")}
    connector = memory_connector(lambda cfg: fake_server_object(cfg.name, *args[cfg.name]))
    config = Config(servers={"rg": ServerConfig(name="rg", command="unused", timeout=2.0)})
    async with Engine(config, connector=connector) as engine:  # type: ignore[arg-type]
        response = await engine.search(SearchRequest("retry_invoice", top_k=5))
    found = [h for h in response.hits if h.source == "rg"]
    found += [m.hit for g in response.groups for m in g.members if m.hit.source == "rg"]
    assert [(h.path, h.title, h.metadata.get("repo")) for h in found] == [("src/mod.py", "src/mod.py", "proj")]
