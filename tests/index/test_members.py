"""A looked-up class is answered with its members' signatures, not its first line alone."""

from __future__ import annotations

from pathlib import Path

from tests.index.index_helpers import HashingEmbedder
from tributary.engine.index.manager import index_path_for, index_repository
from tributary.engine.index.search import hybrid_search
from tributary.engine.index.store import SqliteStore

ROUTING = '''\
class Route:
    def matches(self, scope):
        return scope["path"] == self.path


class APIRoute(Route):
    def __init__(self, path, endpoint, *, status_code=200):
        self.path = path
        self.endpoint = endpoint
{long_body}
    def get_route_handler(self):
        return self.endpoint

    class Config:
        def frozen(self):
            return True


def route_for(path):
    return APIRoute(path, None)
'''

WIDGETS = """\
export class Panel {
  render(props) {
    return props.children;
  }

  close() {
    this.open = false;
  }
}
"""


def _store(tmp_path: Path) -> SqliteStore:
    repo = tmp_path / "app"
    repo.mkdir()
    long_body = "\n".join(f"        self.setting_{n} = {n}" for n in range(240))  # split into parts
    (repo / "routing.py").write_text(ROUTING.format(long_body=long_body), encoding="utf-8")
    (repo / "widgets.ts").write_text(WIDGETS, encoding="utf-8")
    index_repository(repo, embedder=HashingEmbedder(), index_dir=tmp_path / "idx")
    return SqliteStore(index_path_for(repo, directory=tmp_path / "idx"), readonly=True)


def test_a_looked_up_class_lists_its_members_with_where_they_are(tmp_path: Path) -> None:
    store = _store(tmp_path)
    try:
        hit = hybrid_search(store, "APIRoute", None, repo="app", top_k=5)[0]
    finally:
        store.close()
    assert (hit.symbol, hit.start_line, hit.end_line) == ("APIRoute", 6, 6)  # its own lines
    lines = hit.content.splitlines()
    assert lines[0] == "class APIRoute(Route):"
    assert lines[1].startswith("    def __init__(self, path, endpoint, *, status_code=200) …  # lines 7-")
    assert sum("__init__" in line for line in lines) == 1  # a long method's parts listed once
    assert any(line.startswith("    def get_route_handler(self) …  # lines ") for line in lines)
    assert any("class Config" in line for line in lines)
    assert not any("frozen" in line for line in lines)  # a nested class's own members are its own
    assert not any("matches" in line or "route_for" in line for line in lines)


def test_members_are_commented_in_the_class_language(tmp_path: Path) -> None:
    store = _store(tmp_path)
    try:
        hit = hybrid_search(store, "Panel", None, repo="app", top_k=5)[0]
        prose = hybrid_search(store, "how does a panel render its children", None, repo="app", top_k=5)
    finally:
        store.close()
    assert hit.symbol == "Panel"
    assert any(line.strip().startswith("render(props) …  // lines 2-4") for line in hit.content.splitlines())
    assert all("…  //" not in h.content for h in prose)  # a question, not a lookup: chunks as they are


def test_a_cut_signature_does_not_leave_a_string_open() -> None:
    from tributary.engine.index.members import _closed

    cut = 'def __init__( self, *, prefix: Annotated[str, Doc("An optional prefix.")] = "", tags: Doc( """ A list of tags'
    assert _closed(cut, "python") == 'def __init__( self, *, prefix: Annotated[str, Doc("An optional prefix.")] = "", tags: Doc('
    assert _closed('def f(self, sep: str = "', "python") == "def f(self, sep: str ="
    assert _closed("fn get<'a>(&'a self) -> &'a str", "rust") == "fn get<'a>(&'a self) -> &'a str"


def test_a_class_in_a_folder_named_like_a_glob_lists_its_members(tmp_path: Path) -> None:
    """``pages/[slug]/`` is a literal folder (Next.js, SvelteKit routes), not a pattern."""
    repo = tmp_path / "site"
    (repo / "pages" / "[slug]").mkdir(parents=True)
    (repo / "pages" / "[slug]" / "views.py").write_text(
        "class PageView:\n    def get(self, slug):\n        return slug\n", encoding="utf-8"
    )
    index_repository(repo, embedder=HashingEmbedder(), index_dir=tmp_path / "idx")
    store = SqliteStore(index_path_for(repo, directory=tmp_path / "idx"), readonly=True)
    try:
        hit = hybrid_search(store, "PageView", None, repo="site", top_k=5)[0]
    finally:
        store.close()
    assert hit.content.splitlines() == ["class PageView:", "    def get(self, slug) …  # lines 2-3"]
