"""A repository's name as people know it: ``owner/name`` from its git remote.

Indexes named after their folder alone were ambiguous: every repository indexed by its
``src`` or ``lib`` folder showed as ``src``. The remote's ``owner/name`` (with the
folder's path inside the repository when a subfolder is indexed) says which one it is;
without a remote, the folder's path relative to the home folder does. Both backends name
a repository so (``tributary.engine.index.naming``, ``tributary.engine.postgres``).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

_REMOTE = re.compile(r"(?:[:/])(?P<owner>[^/:]+)/(?P<name>[^/]+?)(?:\.git)?/?$")


_LOCAL = re.compile(r"^(?:/|~|\.{1,2}[/\\]|file:|[A-Za-z]:[/\\])")  # a path on this machine, not a host's


def remote_slug(url: str) -> str | None:
    """``owner/name`` of a remote URL (https, ssh or scp-like), or None; None for a
    remote that is a folder on this machine (a clone of a local clone), whose last two
    folders (``src/project``, ``mirrors/repo``) name no owner."""
    if _LOCAL.match(url.strip()):
        return None
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
