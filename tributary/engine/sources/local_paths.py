"""A third-party source's absolute path inside an indexed repository, written as that
repository's own relative path.

mcp-ripgrep or server-filesystem answer ``/home/ann/src/click/src/click/core.py`` where
the built-in code search answers ``src/click/core.py``: deduplication matches paths as
written, so the same lines from both stayed two results, and the list showed a long
absolute path where every other result shows the repository's. A hit whose path lies
inside an indexed repository's folder gets the relative path, with the repository's
name and folder in its metadata (as the built-in sources' hits have them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import PurePosixPath

from tributary.engine.model import Hit

Root = tuple[str, str]  # (the repository's folder, absolute and without a trailing "/"; its name)


def localised(hits: list[Hit], roots: Callable[[], Sequence[Root]]) -> list[Hit]:
    """``hits`` with each absolute path inside one of ``roots`` made relative to it (the
    deepest root holding it, for a repository inside another); the others as they were.
    ``roots`` is asked only when a hit has an absolute path: it reads the indexes. A
    path written from the current folder (``./src/core.py``, code-index-mcp's) loses
    its ``./`` whatever the roots."""
    if any(hit.path and hit.path.startswith("./") for hit in hits):
        hits = [_plain(hit) if hit.path and hit.path.startswith("./") else hit for hit in hits]
    if not any(_absolute(hit.path) for hit in hits) or not (found := roots()):
        return hits
    deepest = sorted(found, key=lambda root: -len(root[0]))
    return [_relative(hit, deepest) if _absolute(hit.path) else hit for hit in hits]


def _absolute(path: str | None) -> bool:
    return path is not None and path.startswith("/")


def _plain(hit: Hit) -> Hit:
    assert hit.path is not None
    path = str(PurePosixPath(hit.path))
    if path == "." or ".." in PurePosixPath(path).parts:
        return hit
    return replace(hit, path=path, title=path if hit.title == hit.path else hit.title)


def _relative(hit: Hit, roots: Sequence[Root]) -> Hit:
    assert hit.path is not None
    path = str(PurePosixPath(hit.path))  # "//a/./b" and a trailing "/" written plainly
    if ".." in PurePosixPath(path).parts:
        return hit  # not a plain path under a folder: left as the source wrote it
    for folder, name in roots:
        if path.startswith(folder + "/"):
            relative = path[len(folder) + 1 :]
            title = relative if hit.title == hit.path else hit.title
            metadata = {**hit.metadata}
            metadata.setdefault("root", folder)
            metadata.setdefault("repo", name)
            return replace(hit, path=relative, title=title, metadata=metadata)
    return hit
