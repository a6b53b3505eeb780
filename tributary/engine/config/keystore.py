"""Secrets in the OS keyring: what ``${keyring:NAME}`` references read.

Values live under the service ``tributary`` of the OS keyring (macOS Keychain,
Windows Credential Manager, the Secret Service or KWallet on Linux) through the
``keyring`` package. Keyrings cannot list their entries, so the *names* (never the
values) are kept in one more entry, ``__names__``; OAuth tokens use entries of
their own (``oauth:SERVER:...``) and are not listed as user secrets. Values longer than
1000 characters are kept in parts (Windows' Credential Manager holds 1280 per entry).

Where no keyring service runs (a headless Linux with no Secret Service), the
fallback is keyrings.alt's file backend at ``<data dir>/secrets.cfg``, created
readable by the owner only (0600) but *not encrypted*; :func:`backend_notice`
says so and names the file. ``TRIBUTARY_KEYRING=file`` chooses that file even
where an OS keyring exists (tests, portable installs); ``PYTHON_KEYRING_BACKEND``
(keyring's own setting) is honoured as given.

Every change is made under one file lock (``<data dir>/secrets.lock``, taken by threads
and processes alike), so concurrent sign-ins never lose each other's tokens; the
fallback file is rewritten whole into a temporary file and renamed over the old one,
so a reader never sees half a file. A fallback file that cannot be parsed is reported
as :class:`KeystoreError` naming it and is never overwritten, so nothing else in it is
lost.
"""

from __future__ import annotations

import configparser
import contextlib
import io
import json
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

import filelock
import keyring
import keyring.errors
from keyring.backend import KeyringBackend
from keyrings.alt.file import PlaintextKeyring

from tributary.engine import paths
from tributary.engine.errors import TributaryError

SERVICE = "tributary"
NAMES_ENTRY = "__names__"
FALLBACK_FILE = "secrets.cfg"
LOCK_FILE = "secrets.lock"
LOCK_WAIT_S = 30.0
NAME_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,127}$")
_RESERVED_PREFIXES = ("oauth:", "__")
CHUNK_CHARS = 1000
# The head of a value stored in parts: "tributary-parts:N:" + the first part. A value that
# itself starts so is always stored in parts, so it can never be mistaken for a head.
_PARTS = "tributary-parts:"


class KeystoreError(TributaryError):
    """The keyring could not be read or written; the message says which and why."""


def fallback_path() -> Path:
    return paths.data_dir() / FALLBACK_FILE


def _is_os_keyring(backend: KeyringBackend) -> bool:
    module = type(backend).__module__
    if module.startswith("keyrings.alt") or module in ("keyring.backends.fail", "keyring.backends.null"):
        return False
    try:
        return float(backend.priority) >= 1
    except Exception:  # a backend whose priority check itself fails is not usable
        return False


class _DamagedFile(keyring.errors.KeyringError):
    """The fallback file is not a keyring file any more."""


class _SafeFileKeyring(PlaintextKeyring):  # type: ignore[misc]
    """keyrings.alt's file backend (same format), read strictly and written atomically:
    the new content goes to a 0600 temporary file beside it, renamed over the old one.
    Callers hold :func:`_lock` across each read-modify-write."""

    def _read(self) -> configparser.RawConfigParser:
        config = configparser.RawConfigParser()
        try:
            config.read(self.file_path, encoding="utf-8")
        except (configparser.Error, UnicodeDecodeError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise _DamagedFile(f"the secrets file {self.file_path} is damaged ({first}); it was "
                               "left as it is: fix or move it aside, then store the secrets "
                               "and sign-ins it held again") from None
        return config

    def get_password(self, service: str, username: str) -> str | None:
        self._read()  # a damaged file is an error, not an absent secret
        value: str | None = super().get_password(service, username)
        return value

    def _write_config_value(self, service: str, key: str, value: str) -> None:
        from keyrings.alt.escape import escape as escape_for_ini

        config = self._read()
        section, option = escape_for_ini(service), escape_for_ini(key)
        if not config.has_section(section):
            config.add_section(section)
        config.set(section, option, value)
        self._replace(config)

    def delete_password(self, service: str, username: str) -> None:
        from keyrings.alt.escape import escape as escape_for_ini

        config = self._read()
        try:
            removed = config.remove_option(escape_for_ini(service), escape_for_ini(username))
        except configparser.NoSectionError:
            removed = False
        if not removed:
            raise keyring.errors.PasswordDeleteError("Password not found")
        self._replace(config)

    def _replace(self, config: configparser.RawConfigParser) -> None:
        text = io.StringIO()
        config.write(text)
        paths.private_dir(Path(self.file_path).parent)
        paths.write_private_text(Path(self.file_path), text.getvalue())


@contextlib.contextmanager
def _lock() -> Iterator[None]:
    """The store's write lock, across threads and processes (re-entrant in a thread)."""
    path = paths.private_dir(paths.data_dir()) / LOCK_FILE  # the first file there may be this one
    lock = filelock.FileLock(str(path), timeout=LOCK_WAIT_S, mode=paths.PRIVATE_FILE_MODE, is_singleton=True)
    try:
        lock.acquire()
    except filelock.Timeout:
        raise KeystoreError(f"another program has been changing the secrets for over "
                            f"{LOCK_WAIT_S:.0f} s (lock {path}); nothing was written") from None
    paths.keep_private(path)  # one made 0644 by an older version, as the config's lock
    try:
        yield
    finally:
        lock.release()


def _file_backend() -> KeyringBackend:
    backend = _SafeFileKeyring()
    backend.file_path = str(fallback_path())  # instance-level override of the data root
    chosen: KeyringBackend = backend
    return chosen


def backend() -> KeyringBackend:
    """The keyring in use: the OS keyring, or the 0600 file fallback (see the module doc)."""
    if os.environ.get("TRIBUTARY_KEYRING", "").lower() == "file":
        return _file_backend()
    chosen = keyring.get_keyring()
    if os.environ.get("PYTHON_KEYRING_BACKEND") or _is_os_keyring(chosen):
        return chosen
    return _file_backend()


def backend_notice() -> str | None:
    """None when an OS keyring is in use; else what is used instead, and how to change it."""
    used = backend()
    if _is_os_keyring(used) or os.environ.get("PYTHON_KEYRING_BACKEND"):
        return None
    return (f"no OS keyring service is available, so secrets are kept in {fallback_path()} "
            "(readable only by you, but not encrypted); start a Secret Service such as "
            "gnome-keyring or KeePassXC to use the OS keyring instead")


def describe_backend() -> str:
    used = backend()
    if type(used).__module__.startswith("keyrings.alt"):
        return f"file {getattr(used, 'file_path', fallback_path())} (0600, not encrypted)"
    return f"{type(used).__module__}.{type(used).__name__}"


def storage_text() -> str:
    """Where secrets and sign-ins are kept and what protects them, for the user."""
    used = backend()
    if type(used).__module__.startswith("keyrings.alt") or isinstance(used, PlaintextKeyring):
        path = getattr(used, "file_path", fallback_path())
        return (f"in the file {path}, readable only by your user account (0600) but not "
                "encrypted: anyone who can read your files, or a backup of them, can use it")
    if _is_os_keyring(used):
        return (f"in the OS keyring ({type(used).__name__}), encrypted and unlocked by your "
                "login session")
    return f"in the keyring backend {describe_backend()} (chosen by PYTHON_KEYRING_BACKEND)"


def check_name(name: str) -> str:
    """``name`` if it can name a secret; else :class:`KeystoreError` saying why."""
    if not NAME_PATTERN.match(name):
        raise KeystoreError(f"secret name {name!r}: use letters, digits, '_', '.' or '-', "
                            "starting with a letter or '_' (at most 128 characters)")
    if name.startswith(_RESERVED_PREFIXES):
        raise KeystoreError(f"secret name {name!r}: names starting with 'oauth:' or '__' are reserved")
    return name


def _raw_get(entry: str) -> str | None:
    try:
        value: str | None = backend().get_password(SERVICE, entry)
    except keyring.errors.KeyringError as exc:
        raise KeystoreError(_reason("cannot read the keyring", exc)) from None
    return value


def _raw_set(entry: str, value: str) -> None:
    target = backend()
    try:
        target.set_password(SERVICE, entry, value)
    except keyring.errors.KeyringError as exc:
        raise KeystoreError(_reason("cannot write to the keyring", exc)) from None


def _raw_delete(entry: str) -> bool:
    try:
        backend().delete_password(SERVICE, entry)
    except keyring.errors.PasswordDeleteError:
        return False
    except keyring.errors.KeyringError as exc:
        raise KeystoreError(_reason("cannot write to the keyring", exc)) from None
    return True


def _reason(what: str, exc: Exception) -> str:
    if isinstance(exc, _DamagedFile):
        return str(exc)
    return f"{what} ({describe_backend()}): {exc}"


def _chunks(head: str | None) -> int:
    """How many parts a value stored in parts has (0: stored whole, or absent)."""
    if head is None or not head.startswith(_PARTS):
        return 0
    count = head[len(_PARTS):].split(":", 1)[0]
    return int(count) if count.isdigit() else 0


def _get(entry: str) -> str | None:
    with _lock():  # a value in parts is read whole, never half old and half new
        return _get_locked(entry)


def _get_locked(entry: str) -> str | None:
    head = _raw_get(entry)
    count = _chunks(head)
    if head is None or not count:
        return head
    parts = [head.split(":", 2)[2]]
    for i in range(1, count):
        part = _raw_get(f"{entry}#{i}")
        if part is None:
            return None  # torn write: as if absent
        parts.append(part)
    return "".join(parts)


def _set(entry: str, value: str) -> None:
    """Values longer than ``CHUNK_CHARS`` go in parts (Windows' Credential Manager holds
    at most 1280 characters per entry; OAuth tokens can be longer)."""
    with _lock():
        _set_locked(entry, value)


def _set_locked(entry: str, value: str) -> None:
    old = _chunks(_raw_get(entry))
    if len(value) <= CHUNK_CHARS and not value.startswith(_PARTS):
        _raw_set(entry, value)
        count = 1
    else:
        pieces = [value[i:i + CHUNK_CHARS] for i in range(0, len(value), CHUNK_CHARS)]
        for i, piece in enumerate(pieces[1:], 1):
            _raw_set(f"{entry}#{i}", piece)
        _raw_set(entry, f"{_PARTS}{len(pieces)}:{pieces[0]}")
        count = len(pieces)
    for i in range(count, old):
        _raw_delete(f"{entry}#{i}")


def _delete(entry: str) -> bool:
    with _lock():
        count = _chunks(_raw_get(entry))
        for i in range(1, count):
            _raw_delete(f"{entry}#{i}")
        return _raw_delete(entry)


def names() -> list[str]:
    """The names of the user's secrets (sorted; values are never listed)."""
    raw = _get(NAMES_ENTRY)
    if not raw:
        return []
    try:
        listed = json.loads(raw)
    except json.JSONDecodeError:
        return []
    return sorted({n for n in listed if isinstance(n, str)})


def _save_names(updated: Iterable[str]) -> None:
    _set(NAMES_ENTRY, json.dumps(sorted(set(updated))))


def get_secret(name: str) -> str | None:
    return _get(check_name(name))


def set_secret(name: str, value: str) -> None:
    if not value:
        raise KeystoreError(f"secret {name!r}: the value is empty")
    check_name(name)
    with _lock():
        _set(name, value)
        listed = names()
        if name not in listed:
            _save_names([*listed, name])


def delete_secret(name: str) -> bool:
    """Remove a secret; False if there was none by that name."""
    check_name(name)
    with _lock():
        removed = _delete(name)
        listed = names()
        if name in listed:
            _save_names(n for n in listed if n != name)
            removed = True
    return removed


def get_entry(entry: str) -> str | None:
    """A raw entry (OAuth tokens and client registrations use these)."""
    return _get(entry)


def set_entry(entry: str, value: str) -> None:
    _set(entry, value)


def delete_entry(entry: str) -> bool:
    return _delete(entry)
