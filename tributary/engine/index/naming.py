"""A repository's name as people know it: ``owner/name`` from its git remote.

Indexes named after their folder alone were ambiguous: every repository indexed by its
``src`` or ``lib`` folder showed as ``src``. The remote's ``owner/name`` (with the
folder's path inside the repository when a subfolder is indexed) says which one it is;
without a remote, the folder's path relative to the home folder does.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Sequence
from pathlib import Path

# What a ``repos`` value may be: an index name or a folder, each part of it no longer
# than a file name may be (longer cannot name anything, and the OS refuses it).
MAX_SCOPE_VALUES = 64
MAX_SCOPE_CHARS = 1024
MAX_NAME_BYTES = 255

_REMOTE = re.compile(r"(?:[:/])(?P<owner>[^/:]+)/(?P<name>[^/]+?)(?:\.git)?/?$")


def remote_slug(url: str) -> str | None:
    """``owner/name`` of a remote URL (https, ssh or scp-like), or None."""
    match = _REMOTE.search(url.strip())
    return f"{match['owner']}/{match['name']}" if match else None


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else None


def readable_name(root: Path, home: Path | None = None) -> str:
    """The name to show for the repository folder ``root`` (absolute)."""
    top = _git(root, "rev-parse", "--show-toplevel")
    url = _git(root, "remote", "get-url", "origin") if top else None
    slug = remote_slug(url) if url else None
    if slug and top:
        inside = root.resolve().relative_to(Path(top).resolve())
        return slug if inside == Path() else f"{slug}/{inside.as_posix()}"
    base = (home or Path.home()).resolve()
    try:
        relative = root.resolve().relative_to(base)
    except ValueError:
        return root.resolve().as_posix()
    return root.name if relative == Path() else relative.as_posix()


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
