"""Masking secrets for display and logs.

Three kinds of value are secret: those whose key looks secret (``GITHUB_TOKEN``,
``Authorization``, ``--api-key``), those that came from a ``${VAR}`` reference, and
literals shaped like a token whatever their key (``ghp_…``, ``sk-…``, a JWT, a long
generated key: :func:`looks_like_token`); URLs lose their password and secret query
parameters wherever they appear, arguments included.
:func:`mask_secrets` returns a copy of a server safe to show: a value that came from a
reference is shown *as the reference* (``${GITHUB_TOKEN}`` tells the user what is used
and reveals nothing); any other secret becomes ``****``. Every printout of a server
goes through it (:func:`server_summary` is the one-line form).
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

from tributary.engine.config.expand import has_reference, references, server_strings
from tributary.engine.config.schema import ServerConfig

MASK = "****"
_MIN_SECRET_CHARS = 4  # shorter values would mask ordinary text everywhere

_SECRET_NAME = re.compile(
    r"token|secret|passw(?:or)?d|passwd|pwd|api[-_]?key|access[-_]?key|private[-_]?key"
    r"|auth|credential|cookie|session|signature|(?:^|[-_])key$|^key$|bearer",
    re.IGNORECASE,
)
_AUTH_SCHEME = re.compile(r"^\s*(?:bearer|basic|token|apikey)\s+", re.IGNORECASE)
# Well-known token formats (GitHub, GitLab, OpenAI/Anthropic-style, Stripe, Slack, AWS,
# Google, npm, Hugging Face, JWTs); then generated keys: 32+ hex digits, or 32+ key
# characters mixing upper case, lower case and scattered digits (not a CamelCase name with
# a version number). A commit id is hidden too: harmless.
_TOKEN_SHAPE = re.compile(
    r"(?:gh[pousr]_|github_pat_|glpat-|sk-|sk_(?:live|test)_|rk_(?:live|test)_|xox[abposr]-|"
    r"AKIA|ASIA|AIza|npm_|hf_|eyJ)[A-Za-z0-9_\-.=]{12,}"
)
_LONG_HEX = re.compile(r"[0-9a-fA-F]{32,}")
_LONG_KEY = re.compile(r"[A-Za-z0-9_\-+/=]{32,}")
_DIGIT_RUN = re.compile(r"[0-9]+")


def is_secret_name(name: str) -> bool:
    """Whether a key (env var, header, flag, query parameter) looks like it holds a secret."""
    return bool(_SECRET_NAME.search(name.lstrip("-")))


def looks_like_token(value: str) -> bool:
    """Whether a literal value is shaped like a credential, whatever key it is under."""
    text = _AUTH_SCHEME.sub("", value).strip()
    if _TOKEN_SHAPE.fullmatch(text) or _LONG_HEX.fullmatch(text):
        return True
    return (bool(_LONG_KEY.fullmatch(text)) and "/" not in text.strip("=")[:-1]
            and len(_DIGIT_RUN.findall(text)) >= 3 and any(c.islower() for c in text)
            and any(c.isupper() for c in text))


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
    if value and (is_secret_name(key) or looks_like_token(value)):
        return MASK
    return mask_url(value) if "://" in value else value


def _mask_arg(arg: str) -> str:
    if arg.startswith("-") and "=" in arg:
        flag, value = arg.split("=", 1)
        return f"{flag}={MASK}" if value and (is_secret_name(flag) or looks_like_token(value)) else (
            f"{flag}={_mask_arg(value)}")
    if looks_like_token(arg):
        return MASK
    return mask_url(arg) if "://" in arg else arg


def _mask_args(args: list[str], original: list[str] | None) -> list[str]:
    out: list[str] = []
    secret_next = False
    for i, arg in enumerate(args):
        orig = original[i] if original is not None and i < len(original) else None
        if orig is not None and has_reference(orig):
            out.append(orig)
        elif secret_next:
            out.append(MASK)
        else:
            out.append(_mask_arg(arg))
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
        query = urlencode([(k, MASK if is_secret_name(k) or looks_like_token(v) else v) for k, v in pairs],
                          safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _mask_mapping(values: Mapping[str, str], original: Mapping[str, str] | None) -> dict[str, str]:
    return {
        key: mask_value(key, value, original.get(key) if original is not None else None)
        for key, value in values.items()
    }


def _mask_arguments(arguments: Mapping[str, Any]) -> dict[str, Any]:
    return {k: (mask_value(k, v) if isinstance(v, str) else v) for k, v in arguments.items()}


def mask_secrets(server: ServerConfig, original: ServerConfig | None = None) -> ServerConfig:
    """A copy of ``server`` that is safe to display or log.

    Pass ``original`` (the unexpanded server) when ``server`` came from
    :func:`tributary.engine.config.expand.expand_server`, so expanded values show as their
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


def server_summary(server: ServerConfig, original: ServerConfig | None = None) -> str:
    """How ``server`` is started or reached, on one line, with its secrets masked."""
    shown = mask_secrets(server, original)
    if shown.transport != "stdio":
        return shown.url or ""
    return " ".join([shown.command or "", *shown.args]).strip()


_PLAIN_VARS = re.compile(
    r"^(?:HOME|USER|USERNAME|LOGNAME|PATH|PWD|SHELL|LANG|LC_\w+|TERM|TMPDIR|TMP|TEMP"
    r"|XDG_\w+|APPDATA|LOCALAPPDATA|USERPROFILE|PYTHONPATH|NODE_PATH)$"
)


def _url_secrets(url: str) -> set[str]:
    try:
        parts = urlsplit(url)
        found = {parts.password} if parts.password else set()
        pairs = parse_qsl(parts.query, keep_blank_values=True)
    except ValueError:
        return set()
    return found | {v for k, v in pairs if v and (is_secret_name(k) or looks_like_token(v))}


def _hidden(value: str, shown: str) -> set[str]:
    """The literal secrets in ``value`` that masking turned it into ``shown`` to hide."""
    if value == shown or has_reference(value):
        return set()
    if shown == MASK:
        return {value, _AUTH_SCHEME.sub("", value).strip()}
    if "://" in value and "=" not in value.split("://", 1)[0]:
        return _url_secrets(value)
    if "=" in value:
        return _hidden(value.split("=", 1)[1], shown.split("=", 1)[1] if "=" in shown else MASK)
    return set()


def _literal_secrets(server: ServerConfig) -> set[str]:
    """Every literal value :func:`mask_secrets` hides (flag values, tokens, URL passwords)."""
    masked = mask_secrets(server)
    found: set[str] = set()
    for value, shown in zip(server.args, masked.args, strict=True):
        found |= _hidden(value, shown)
    for mapping, shown_mapping in ((server.env, masked.env), (server.headers, masked.headers)):
        for key, value in mapping.items():
            found |= _hidden(value, shown_mapping[key])
    if server.url is not None and masked.url is not None:
        found |= _hidden(server.url, masked.url)
    return found


def secret_values(
    server: ServerConfig, environ: Mapping[str, str] | None = None,
    keyring_values: Mapping[str, str] | None = None,
) -> set[str]:
    """Values that must never appear in logs, history or screenshots once ``server``
    (unexpanded) is expanded from ``environ`` (default ``os.environ``) and
    ``keyring_values``: each referenced variable's value (except plain ones such as
    ``${HOME}``), every keyring secret, and every literal that :func:`mask_secrets`
    hides (values under secret-looking keys or flags, token-shaped values, passwords
    and secret parameters in URLs)."""
    env = os.environ if environ is None else environ
    secrets: set[str] = set()
    for key, value in server_strings(server):
        leaf = key.rsplit(".", 1)[-1]
        for ref in references(value):
            if ref.keyring:
                secrets.add((keyring_values or {}).get(ref.name, ""))
                continue
            if _PLAIN_VARS.match(ref.name) and not is_secret_name(ref.name):
                continue
            current = env.get(ref.name)
            secrets.add(current if current else (ref.default or ""))
        if is_secret_name(leaf) and not has_reference(value):
            secrets.add(value)
            secrets.add(_AUTH_SCHEME.sub("", value).strip())
    secrets |= _literal_secrets(server)
    return {s for s in secrets if len(s) >= _MIN_SECRET_CHARS}


def scrub(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every occurrence of each secret replaced by ``****``."""
    for secret in sorted(set(secrets), key=len, reverse=True):
        if len(secret) >= _MIN_SECRET_CHARS:
            text = text.replace(secret, MASK)
    return text
