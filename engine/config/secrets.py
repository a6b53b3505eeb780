"""Masking secrets for display and logs.

Two kinds of value are secret: those whose key looks secret (``GITHUB_TOKEN``,
``Authorization``, ``--api-key``) and those that came from a ``${VAR}`` reference.
:func:`mask_secrets` returns a copy of a server safe to show: a value that came from a
reference is shown *as the reference* (``${GITHUB_TOKEN}`` tells the user what is used
and reveals nothing); any other value under a secret-looking key becomes ``****``.
:func:`secret_values` and :func:`scrub` catch what escapes structure, e.g. a server's
stderr echoing its token.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from engine.config.expand import has_reference, references, server_strings
from engine.config.schema import ServerConfig

MASK = "****"
_MIN_SECRET_CHARS = 4  # shorter values would mask ordinary text everywhere

_SECRET_NAME = re.compile(
    r"token|secret|passw(?:or)?d|passwd|pwd|api[-_]?key|access[-_]?key|private[-_]?key"
    r"|auth|credential|cookie|session|signature|(?:^|[-_])key$|^key$|bearer",
    re.IGNORECASE,
)
_AUTH_SCHEME = re.compile(r"^\s*(?:bearer|basic|token|apikey)\s+", re.IGNORECASE)


def is_secret_name(name: str) -> bool:
    """Whether a key (env var, header, flag, query parameter) looks like it holds a secret."""
    return bool(_SECRET_NAME.search(name.lstrip("-")))


def _only_references(value: str) -> bool:
    """True if nothing but references (and an auth scheme word) is literal in ``value``."""
    rest = value
    for ref in reversed(references(value)):
        rest = rest[: ref.start] + rest[ref.end :]
    return not _AUTH_SCHEME.sub("", rest).strip()


def mask_value(key: str, value: str, original: str | None = None) -> str:
    """What to show for ``value`` stored under ``key``; ``original`` is its unexpanded
    form when ``value`` is the result of expansion."""
    if original is not None and has_reference(original):
        return original if _only_references(original) or not is_secret_name(key) else MASK
    if has_reference(value) and (_only_references(value) or not is_secret_name(key)):
        return value
    return MASK if is_secret_name(key) and value else value


def _mask_args(args: list[str], original: list[str] | None) -> list[str]:
    out: list[str] = []
    secret_next = False
    for i, arg in enumerate(args):
        orig = original[i] if original is not None and i < len(original) else None
        if orig is not None and has_reference(orig):
            out.append(orig)
        elif secret_next:
            out.append(MASK)
        elif arg.startswith("-") and "=" in arg and is_secret_name(arg.split("=", 1)[0]):
            out.append(arg.split("=", 1)[0] + "=" + MASK)
        else:
            out.append(arg)
        secret_next = arg.startswith("-") and "=" not in arg and is_secret_name(arg)
    return out


def mask_url(url: str, original: str | None = None) -> str:
    """A URL without its password or secret-looking query parameters."""
    if original is not None and has_reference(original):
        return original
    try:
        parts = urlsplit(url)
    except ValueError:
        return MASK
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        user = userinfo.split(":", 1)[0]
        netloc = f"{user}:{MASK}@{host}" if ":" in userinfo else f"{MASK}@{host}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, MASK if is_secret_name(k) else v) for k, v in pairs], safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _mask_mapping(values: Mapping[str, str], original: Mapping[str, str] | None) -> dict[str, str]:
    return {
        key: mask_value(key, value, original.get(key) if original is not None else None)
        for key, value in values.items()
    }


def _mask_arguments(arguments: Mapping[str, Any]) -> dict[str, Any]:
    return {k: (MASK if is_secret_name(k) and isinstance(v, str) and v else v) for k, v in arguments.items()}


def mask_secrets(server: ServerConfig, original: ServerConfig | None = None) -> ServerConfig:
    """A copy of ``server`` that is safe to display or log.

    Pass ``original`` (the unexpanded server) when ``server`` came from
    :func:`engine.config.expand.expand_server`, so expanded values show as their
    references.
    """
    return replace(
        server,
        args=_mask_args(server.args, original.args if original is not None else None),
        env=_mask_mapping(server.env, original.env if original is not None else None),
        url=mask_url(server.url, original.url if original is not None else None)
        if server.url is not None
        else None,
        headers=_mask_mapping(server.headers, original.headers if original is not None else None),
        arguments=_mask_arguments(server.arguments),
        health=replace(server.health),
    )


_PLAIN_VARS = re.compile(
    r"^(?:HOME|USER|USERNAME|LOGNAME|PATH|PWD|SHELL|LANG|LC_\w+|TERM|TMPDIR|TMP|TEMP"
    r"|XDG_\w+|APPDATA|LOCALAPPDATA|USERPROFILE|PYTHONPATH|NODE_PATH)$"
)


def secret_values(server: ServerConfig, environ: Mapping[str, str] | None = None) -> set[str]:
    """Values that must never appear in logs, history or screenshots once ``server``
    (unexpanded) is expanded from ``environ`` (default ``os.environ``): each referenced
    variable's value (except plain ones such as ``${HOME}``), and literal values under
    secret-looking keys."""
    env = os.environ if environ is None else environ
    secrets: set[str] = set()
    for key, value in server_strings(server):
        leaf = key.rsplit(".", 1)[-1]
        for ref in references(value):
            if _PLAIN_VARS.match(ref.name) and not is_secret_name(ref.name):
                continue
            current = env.get(ref.name)
            secrets.add(current if current else (ref.default or ""))
        if is_secret_name(leaf) and not has_reference(value):
            secrets.add(value)
            secrets.add(_AUTH_SCHEME.sub("", value).strip())
    return {s for s in secrets if len(s) >= _MIN_SECRET_CHARS}


def scrub(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every occurrence of each secret replaced by ``****``."""
    for secret in sorted(set(secrets), key=len, reverse=True):
        if len(secret) >= _MIN_SECRET_CHARS:
            text = text.replace(secret, MASK)
    return text
