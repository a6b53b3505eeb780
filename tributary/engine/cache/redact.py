"""Keeping secrets out of everything the cache and the query log store.

Config files hold ``${VAR}`` references; their values come from the environment when
a server starts (``tributary.engine.config.expand``). Keys and fingerprints are computed from
the *unexpanded* config, so a secret never feeds a hash. Which values count as
secret is ``tributary.engine.config.secrets``' rule, reused here. Stored values (responses, hits, queries, error texts)
could still carry an expanded secret — a server may echo its token in an error — so
:class:`Scrubber` replaces every known secret value with a mask before anything is
written.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import fields, is_dataclass
from typing import Any

from tributary.engine.config.schema import Config, ServerConfig
from tributary.engine.config.secrets import MASK
from tributary.engine.config.secrets import secret_values as server_secret_values

__all__ = ["MASK", "Scrubber", "likely_secret_values", "referenced_variables", "secret_values"]

# ${VAR} and ${VAR:-default}, the forms the config loader expands.
VAR_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-[^}]*)?\}")
# Shorter values would mask ordinary words and numbers all over the content.
MIN_SECRET_LENGTH = 4
# Environment variables whose names say they hold a credential.
SECRET_NAME = re.compile(
    r"TOKEN|SECRET|PASSW(OR)?D|PASSPHRASE|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIAL|AUTH",
    re.IGNORECASE,
)
# Credential-named variables can hold flags like "1" or "true"; only mask real values.
MIN_ENV_SECRET_LENGTH = 8


def referenced_variables(obj: Any) -> set[str]:
    """Names of every ``${VAR}`` referenced anywhere in ``obj`` (a config or part of one)."""
    names: set[str] = set()
    for text in _strings(obj):
        names.update(match.group(1) for match in VAR_REFERENCE.finditer(text))
    return names


def secret_values(config: Config, environ: Mapping[str, str] | None = None) -> frozenset[str]:
    """What must never be stored for ``config`` (unexpanded): each server's secrets as
    ``tributary.engine.config.secrets`` defines them (``${keyring:NAME}`` ones read from the
    keyring), and a password in the Redis URL."""
    env = os.environ if environ is None else environ
    values: set[str] = set()
    for server in config.servers.values():
        values |= server_secret_values(server, env, _keyring_values(server))
    for name in referenced_variables(config.cache.redis_url):
        values.add(env.get(name, ""))
    return frozenset(v for v in values if len(v) >= MIN_SECRET_LENGTH)


def _keyring_values(server: ServerConfig) -> dict[str, str]:
    """The keyring secrets ``server`` refers to; none when the keyring cannot be read
    (the server's start then fails and says why)."""
    from tributary.engine.config import keystore
    from tributary.engine.config.expand import keyring_names

    found: dict[str, str] = {}
    for name in keyring_names(server):
        try:
            value = keystore.get_secret(name)
        except keystore.KeystoreError:
            continue
        if value:
            found[name] = value
    return found


def likely_secret_values(environ: Mapping[str, str] | None = None) -> frozenset[str]:
    """Values of environment variables named like credentials (``*_TOKEN``, ``*API_KEY``…).

    A safety net for stores that are not handed the config: whatever a server could
    have been given through ``${GITHUB_TOKEN}`` is masked even so.
    """
    env = os.environ if environ is None else environ
    return frozenset(
        value
        for name, value in env.items()
        # Paths (SSH_AUTH_SOCK, XAUTHORITY) match the names but are not credentials.
        if SECRET_NAME.search(name)
        and len(value) >= MIN_ENV_SECRET_LENGTH
        and not value.startswith(("/", "~"))
    )


class Scrubber:
    """Replaces known secret values with :data:`MASK` in strings and JSON-like data."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        usable = {s for s in secrets if s and len(s) >= MIN_SECRET_LENGTH}
        # Longest first, so a secret that contains another is masked whole.
        ordered = sorted(usable, key=len, reverse=True)
        self._pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None

    def __bool__(self) -> bool:
        return self._pattern is not None

    def text(self, value: str) -> str:
        if self._pattern is None:
            return value
        return self._pattern.sub(MASK, value)

    def data(self, value: Any) -> Any:
        """A copy of JSON-like ``value`` with every string (keys too) scrubbed."""
        if self._pattern is None:
            return value
        return self._walk(value)

    def _walk(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(str(k)): self._walk(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self._walk(v) for v in value]
        return value


def _strings(obj: Any) -> Iterator[str]:
    """Every string inside a dataclass/dict/list tree (keys included)."""
    if isinstance(obj, str):
        yield obj
    elif is_dataclass(obj) and not isinstance(obj, type):
        for f in fields(obj):
            yield from _strings(getattr(obj, f.name))
    elif isinstance(obj, Mapping):
        for key, value in obj.items():
            yield from _strings(key)
            yield from _strings(value)
    elif isinstance(obj, list | tuple | set | frozenset):
        for item in obj:
            yield from _strings(item)
