"""Repositories by name: the name an index shows (``readable_name``, from
``tributary.engine.repo_name``) and whether a repository is in the ``repos`` scope a
query restricts itself to (the scope's values are checked with the query, in
``tributary.engine.query.check``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from tributary.engine.repo_name import readable_name, remote_slug

__all__ = ["in_scope", "readable_name", "remote_slug"]


def in_scope(name: str, root: Path, chosen: Sequence[str], excluded: Sequence[str] = ()) -> bool:
    """Whether the repository ``name`` at ``root`` is among ``chosen`` (all when empty)
    and not among ``excluded``; each value is an index name (``owner/name``, or its last
    part) or a folder (the repository's, or one holding it)."""
    def named(value: str) -> bool:
        text = value.strip().rstrip("/")
        if not text:
            return False
        if text.casefold() == name.casefold() or name.casefold().endswith("/" + text.casefold()):
            return True
        try:
            folder = Path(text).expanduser()
            if folder.is_absolute() or text.startswith((".", "~")) or folder.exists():
                return root.resolve().is_relative_to(folder.resolve())
        except (OSError, ValueError, RuntimeError):  # too long, a NUL byte, no such user
            return False
        return False

    return (not chosen or any(named(v) for v in chosen)) and not any(named(v) for v in excluded)
