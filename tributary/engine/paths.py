"""Where Tributary keeps its files: the config file, indexes, cache and insights.

``TRIBUTARY_CONFIG`` overrides the config file; ``TRIBUTARY_HOME`` puts everything
(config and data) under one folder, which tests and portable installs use.

The data (query log, cache, indexes) is the user's alone, whatever the umask: its
folders are made 0700 and its files 0600 (:func:`private_file`), and the first time a
process opens a file under the data folder, modes a looser umask left there are
repaired.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import stat
import tempfile
import threading
from pathlib import Path

import platformdirs

APP_NAME = "tributary"
PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600
# Files SQLite keeps beside a database; it gives them the database file's mode.
SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")


def home_override() -> Path | None:
    value = os.environ.get("TRIBUTARY_HOME")
    return Path(value).expanduser() if value else None


def config_dir() -> Path:
    home = home_override()
    return home if home else Path(platformdirs.user_config_dir(APP_NAME))


def data_dir() -> Path:
    home = home_override()
    return home / "data" if home else Path(platformdirs.user_data_dir(APP_NAME))


def default_config_path() -> Path:
    """The config file in effect: ``$TRIBUTARY_CONFIG``, else ``<config dir>/config.yaml``."""
    explicit = os.environ.get("TRIBUTARY_CONFIG")
    return Path(explicit).expanduser() if explicit else config_dir() / "config.yaml"


def indexes_dir() -> Path:
    return data_dir() / "indexes"


def cache_path() -> Path:
    return data_dir() / "cache.sqlite"


def starts_path() -> Path:
    """Third-party servers whose start failed lately (``sources.start_record``)."""
    return data_dir() / "starts.json"


def insights_path() -> Path:
    """The query log and source reputations. Its first name, ``history.sqlite``, said
    the same as the task history; a file of that name is moved here once."""
    path = data_dir() / "insights.sqlite"
    moved_once(data_dir() / "history.sqlite", path, sidecars=SQLITE_SIDE_FILES)
    return path


def moved_once(old: Path, new: Path, *, sidecars: tuple[str, ...] = ()) -> None:
    """A file renamed between versions: move ``old`` with its ``sidecars`` (SQLite's
    ``-wal``…) to ``new`` unless ``new`` exists; all or none of them move."""
    if new.exists() or not old.exists():
        return
    pairs = [(old.with_name(old.name + s), new.with_name(new.name + s)) for s in sidecars]
    done: list[tuple[Path, Path]] = []
    try:
        for source, target in [*pairs, (old, new)]:  # the database last: never without its log
            if source.exists():
                os.replace(source, target)
                done.append((source, target))
    except OSError as exc:
        for source, target in reversed(done):
            with contextlib.suppress(OSError):
                os.replace(target, source)
        logging.getLogger(__name__).warning("could not rename %s to %s: %s", old, new, exc)


def repo_id(repo_path: Path | str) -> str:
    """A stable, readable file-name stem for a repository: ``<folder>-<hash of path>``.

    Both of a repository's indexes (code, and task history) are named by it.
    """
    resolved = Path(repo_path).expanduser().resolve()
    digest = hashlib.sha1(str(resolved).encode("utf-8", "surrogatepass")).hexdigest()[:12]
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", resolved.name) or "repo"
    return f"{stem}-{digest}"


_repaired: set[Path] = set()
_repair_lock = threading.Lock()


def _chmod_own(path: Path, mode: int) -> None:
    """Set ``path``'s mode when it is ours and not a symlink (another user's file, or
    a link's target, is left alone)."""
    try:
        info = path.lstat()
    except OSError:
        return
    if stat.S_ISLNK(info.st_mode) or (hasattr(os, "getuid") and info.st_uid != os.getuid()):
        return
    if stat.S_IMODE(info.st_mode) != mode:
        with contextlib.suppress(OSError):
            path.chmod(mode)


def keep_private(path: Path) -> None:
    """Make ``path`` (an existing file of ours) 0600: one an older version or another
    program created readable by others keeps no wider mode once Tributary uses it."""
    _chmod_own(path, PRIVATE_FILE_MODE)


def private_dir(path: Path) -> Path:
    """``path`` as an existing folder readable by its owner alone (created 0700, or
    made so when it is ours)."""
    path.mkdir(mode=PRIVATE_DIR_MODE, parents=True, exist_ok=True)
    _chmod_own(path, PRIVATE_DIR_MODE)
    return path


def repair_private_tree(root: Path) -> None:
    """Make every folder under ``root`` (``root`` too) 0700 and every file 0600:
    the modes a permissive umask left on an existing data folder."""
    if not root.is_dir():
        return
    _chmod_own(root, PRIVATE_DIR_MODE)
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        for name in dirnames:
            _chmod_own(here / name, PRIVATE_DIR_MODE)
        for name in filenames:
            _chmod_own(here / name, PRIVATE_FILE_MODE)


def write_private_text(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` (UTF-8) whole, readable by its owner alone whatever
    the umask: written and synced to a temporary file beside it (``mkstemp`` makes it
    0600), then renamed over it, so a reader never sees half of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def private_file(path: Path) -> None:
    """Prepare ``path`` (a database about to be opened) to be the owner's alone: its
    folder private, the file created 0600 if missing, and it and SQLite's side files
    made 0600. Under the data folder, every folder from it down is made 0700, and the
    whole data folder is repaired once per process."""
    folder = path.parent
    data = data_dir()
    try:
        inside = folder.resolve().is_relative_to(data.resolve())
    except OSError:
        inside = False
    if inside:
        with _repair_lock:
            if data not in _repaired:
                private_dir(data)
                repair_private_tree(data)
                _repaired.add(data)
        private_dir(folder)
        here = folder.resolve()
        top = data.resolve()
        while here != top and here.is_relative_to(top):
            _chmod_own(here, PRIVATE_DIR_MODE)
            here = here.parent
    elif not folder.exists():
        private_dir(folder)
    # Created only when missing: closing a descriptor of a database this process has
    # open drops every POSIX lock SQLite holds on it, so another process closing its
    # last connection would take the WAL away from under the open one.
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), PRIVATE_FILE_MODE)
    except FileExistsError:
        pass
    else:
        os.close(fd)
    for name in ("", *SQLITE_SIDE_FILES):
        _chmod_own(path.with_name(path.name + name), PRIVATE_FILE_MODE)
