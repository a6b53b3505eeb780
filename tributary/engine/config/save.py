"""Saving a Config: validated first, written atomically, previous file kept as ``.bak``.

The sequence (each step durable before the next) guarantees that after a crash at any
point — kill -9 included — the config file is either the old one or the new one, whole:

1. validate; serialise; check the text parses back to the same Config (so nothing is
   ever written that would load differently, or not at all);
2. write the new text to a temporary file in the same directory, fsync it;
3. copy the current file to ``<name>.bak`` the same way (temp file, fsync, rename);
4. ``os.replace`` the temporary file over the config (atomic on POSIX and Windows),
   then fsync the directory so the rename itself survives a power cut.

``${VAR}`` references are saved as written; nothing is expanded. A new file gets mode
0600 (it may hold imported literal secrets); an existing file keeps its mode.

Writers take turns: every save holds an exclusive lock on ``<name>.lock`` beside the
file (``filelock``: ``fcntl``/``msvcrt``, released by the OS if the process dies), and
:func:`update_config` holds it from reading the file to writing it, so two processes
changing the config at once (two ``config import``, the app and the CLI) both keep
their changes instead of the later write silently dropping the earlier one.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import filelock

from tributary.engine import paths
from tributary.engine.config.dump import config_to_yaml
from tributary.engine.config.errors import ConfigError, ConfigIssue
from tributary.engine.config.load import load_config, parse_config
from tributary.engine.config.schema import Config
from tributary.engine.config.validate import BUILTIN_SERVER_NAMES, validate

BACKUP_SUFFIX = ".bak"
LOCK_SUFFIX = ".lock"
LOCK_WAIT_S = 30.0  # a save takes milliseconds; longer means a stuck writer
_NEW_FILE_MODE = 0o600
_STALE_TEMP_S = 60.0  # older temp files are leftovers of a crashed save


def backup_path(path: Path) -> Path:
    return path.with_name(path.name + BACKUP_SUFFIX)


def _target(config: Config | None, path: Path | None) -> Path:
    if path is not None:
        return path
    if config is not None and config.path is not None:
        return config.path
    return paths.default_config_path()


@contextlib.contextmanager
def config_lock(path: Path) -> Iterator[None]:
    """Hold the exclusive lock of the config file at ``path`` (re-entrant in a thread).

    :class:`ConfigError` if another writer holds it for more than :data:`LOCK_WAIT_S`.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = filelock.FileLock(str(path.with_name(path.name + LOCK_SUFFIX)), timeout=LOCK_WAIT_S,
                             mode=_NEW_FILE_MODE, is_singleton=True)
    try:
        lock.acquire()
    except filelock.Timeout as exc:
        raise ConfigError([ConfigIssue(str(path), "", None, f"another program has been changing the "
                                       f"file for over {LOCK_WAIT_S:.0f} s (lock {exc.lock_file}); "
                                       "nothing was written")]) from exc
    paths.keep_private(Path(lock.lock_file))  # one made 0644 by an older version
    try:
        yield
    finally:
        lock.release()


def update_config(
    path: Path | None,
    change: Callable[[Config], Config],
    *,
    extra_server_names: frozenset[str] = BUILTIN_SERVER_NAMES,
) -> tuple[Config, Config]:
    """Read the config at ``path`` (else the default location), apply ``change`` and save
    the result, all under the file's lock: the change is made to what is on disk now,
    never to an older copy. Returns (before, after); raises :class:`ConfigError`."""
    target = _target(None, path)
    with config_lock(target):
        before = load_config(target, extra_server_names=extra_server_names)
        after = change(before)
        after.path = save_config(after, target, extra_server_names=extra_server_names)
    return before, after


def save_config(
    config: Config,
    path: Path | None = None,
    *,
    extra_server_names: frozenset[str] = BUILTIN_SERVER_NAMES,
) -> Path:
    """Validate ``config`` and write it to ``path`` (else ``config.path``, else the
    default location). Returns the path written. Raises :class:`ConfigError` — and
    writes nothing — if the config is invalid."""
    target = _target(config, path)
    source = str(target)
    issues = validate(config, file=source, extra_server_names=extra_server_names)
    if issues:
        raise ConfigError(issues)
    text = config_to_yaml(config)
    _check_round_trip(config, text, source, extra_server_names)
    with config_lock(target):
        write_atomic(target, text.encode("utf-8"), backup=True)
    return target


def _check_round_trip(config: Config, text: str, source: str, extra: frozenset[str]) -> None:
    try:
        again = parse_config(text, source=source, extra_server_names=extra)
    except ConfigError as exc:
        detail = "; ".join(issue.message for issue in exc.issues)
        raise ConfigError([ConfigIssue(source, "", None, f"internal error: the saved text would not load ({detail}); nothing was written")]) from exc
    again.path = config.path
    if again != config:
        raise ConfigError([ConfigIssue(source, "", None, "internal error: the saved text would load differently; nothing was written")])


def write_atomic(target: Path, data: bytes, *, backup: bool = True) -> None:
    """Replace ``target`` with ``data`` so a crash leaves the old or the new file."""
    target.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_temps(target)
    try:
        mode = stat.S_IMODE(target.stat().st_mode)
        exists = True
    except FileNotFoundError:
        mode, exists = _NEW_FILE_MODE, False
    temp = _write_temp(target, data, mode)
    try:
        if backup and exists:
            _backup(target, mode)
        _replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise
    _fsync_dir(target.parent)


def _write_temp(target: Path, data: bytes, mode: int) -> Path:
    fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    temp = Path(name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if hasattr(os, "fchmod"):
                os.fchmod(handle.fileno(), mode)
            os.fsync(handle.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise
    return temp


def _backup(target: Path, mode: int) -> None:
    try:
        previous = target.read_bytes()
    except FileNotFoundError:
        return
    temp = _write_temp(target, previous, mode)
    try:
        _replace(temp, backup_path(target))
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise


def _replace(source: Path, target: Path) -> None:
    # On Windows a reader holding the file open makes os.replace fail briefly.
    attempts = 5 if sys.platform == "win32" else 1
    for attempt in range(attempts):
        try:
            os.replace(source, target)
            return
        except PermissionError:
            if attempt == attempts - 1:
                raise
            time.sleep(0.05 * (attempt + 1))


def _fsync_dir(directory: Path) -> None:
    if sys.platform == "win32":
        return  # directories cannot be opened for fsync there; NTFS journals renames
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _remove_stale_temps(target: Path) -> None:  # (under the lock: no other save is mid-way)
    now = time.time()
    for leftover in target.parent.glob(f".{target.name}.*.tmp"):
        with contextlib.suppress(OSError):
            if now - leftover.stat().st_mtime > _STALE_TEMP_S:
                leftover.unlink()
