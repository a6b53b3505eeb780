"""Repositories by name: the name an index shows (``readable_name``, from
``tributary.engine.repo_name``) and the ``repos`` scope a query may restrict itself to.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from tributary.engine.repo_name import readable_name, remote_slug

__all__ = ["in_scope", "readable_name", "remote_slug", "scope_problem", "values_problem"]

# What a ``repos`` value may be: an index name or a folder, each part of it no longer
# than a file name may be (longer cannot name anything, and the OS refuses it).
MAX_SCOPE_VALUES = 64
MAX_SCOPE_CHARS = 1024
MAX_NAME_BYTES = 255


def values_problem(values: Sequence[str], what: str) -> str | None:
    """Why a request's list of filter values cannot be taken, or None: too many, not
    text, too long, or holding a control character. Only where, never the value."""
    if len(values) > MAX_SCOPE_VALUES:
        return f"{what} has {len(values)} values, at most {MAX_SCOPE_VALUES}"
    for number, value in enumerate(values, 1):
        if not isinstance(value, str):
            return f"{what} value {number} is not a string"
        if len(value) > MAX_SCOPE_CHARS:
            return f"{what} value {number} is {len(value)} characters long, at most {MAX_SCOPE_CHARS}"
        if any(ord(c) < 32 or ord(c) == 127 for c in value):
            return f"{what} value {number} holds a control character"
    return None


def scope_problem(values: Sequence[str], what: str = "repos") -> str | None:
    """Why ``values`` (a ``repos`` or ``exclude_repos`` list from a request) cannot name
    repositories, or None when they can: ``values_problem``'s reasons, or a part longer
    than a file name. The value itself is not repeated, only where it is."""
    problem = values_problem(values, what)
    if problem is not None:
        return problem
    for number, value in enumerate(values, 1):
        longest = max(len(part.encode("utf-8", "surrogatepass")) for part in value.split("/"))
        if longest > MAX_NAME_BYTES:
            return (f"{what} value {number} has a part of {longest} bytes, which names no "
                    f"repository or folder (at most {MAX_NAME_BYTES})")
    return None


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
