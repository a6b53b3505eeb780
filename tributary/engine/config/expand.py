"""``${VAR}`` expansion in server settings, done when a server starts — never at load time.

Syntax (deliberately the shell's, minus its surprises):

- ``${NAME}`` — the environment variable NAME; an error if it is unset.
- ``${NAME:-default}`` — NAME, or ``default`` when NAME is unset or empty. The default
  is literal text: references inside it are not expanded (and validation says so).
- ``${keyring:NAME}`` — the secret NAME from the OS keyring
  (:mod:`tributary.engine.config.keystore`); in ``env`` and ``headers`` values (where it
  never shows in a process list), and in ``args`` and ``url`` for servers that only take
  a key there (an argument still shows in the process list, as the literal did; both are
  masked wherever Tributary shows them). An error if the keyring has no such secret.
- ``$${`` — a literal ``${``. A ``$`` not followed by ``{`` is always literal, so
  passwords such as ``pa$$word`` need no escaping.

Expanded fields: ``command``, ``args``, ``env`` values, ``cwd``, ``url`` and ``headers``
values. ``arguments`` (fixed tool arguments) are sent to the server as data and are not
expanded. Because the Config object keeps the references, secrets never reach the saved
file, logs or the UI; :mod:`tributary.engine.config.secrets` masks what is shown.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace

from tributary.engine.config.errors import ConfigError, ConfigIssue
from tributary.engine.config.schema import ServerConfig

# "$${" (escape) | "${keyring:NAME}" | "${NAME}" | "${NAME:-default}" | a malformed "${"
_TOKEN = re.compile(
    r"\$\$\{|\$\{(?:keyring:([A-Za-z_][A-Za-z0-9_.-]*)\}|([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\})?"
)
KEYRING_FIELDS = ("env.", "headers.", "args[", "url")  # where ${keyring:NAME} may appear


@dataclass(frozen=True, slots=True)
class Reference:
    name: str
    default: str | None
    start: int
    end: int
    keyring: bool = False  # ${keyring:NAME} rather than an environment variable


def references(value: str) -> list[Reference]:
    """The well-formed ``${...}`` references in ``value`` (escapes excluded)."""
    return [ref for ref in _scan(value) if isinstance(ref, Reference)]


def has_reference(value: str | None) -> bool:
    return bool(value) and bool(references(value or ""))


def reference_problems(value: str, key: str = "env.") -> list[str]:
    """Why the references in ``value`` (at ``key``, a server's key path suffix) cannot be
    expanded (empty when they can)."""
    problems: list[str] = []
    for item in _scan(value):
        if isinstance(item, Reference) and item.keyring and not key.startswith(KEYRING_FIELDS):
            problems.append(f"${{keyring:{item.name}}} may only be used in env, headers, args "
                            "and url (the command and cwd are shown as written)")
        elif isinstance(item, int):
            problems.append(
                f"malformed reference at position {item}: write ${{NAME}}, "
                "${NAME:-default} or ${keyring:NAME}, or $${ for a literal ${"
            )
        elif item.default is not None and "${" in item.default:
            problems.append(f"the default of ${{{item.name}}} contains '${{': nesting is not supported")
    return problems


def _scan(value: str) -> Iterator[Reference | int]:
    """References, and the positions of malformed ``${`` (as ints)."""
    for match in _TOKEN.finditer(value):
        text = match.group(0)
        if text == "$${":
            continue
        secret, name = match.group(1), match.group(2)
        if secret is not None:
            yield Reference(secret, None, match.start(), match.end(), keyring=True)
        elif name is None:
            yield match.start()
        else:
            yield Reference(name, match.group(3), match.start(), match.end())


def keyring_names(server: ServerConfig) -> set[str]:
    """The keyring secrets ``server`` refers to (read them before expanding)."""
    return {ref.name for _key, value in server_strings(server)
            for ref in references(value) if ref.keyring}


def expand_string(
    value: str, environ: Mapping[str, str], secrets: Mapping[str, str] | None = None,
) -> tuple[str, list[str]]:
    """``value`` with references replaced, and the names that were unset with no default
    (a keyring secret missing from ``secrets`` as ``keyring:NAME``)."""
    missing: list[str] = []

    def substitute(match: re.Match[str]) -> str:
        text = match.group(0)
        if text == "$${":
            return "${"
        secret = match.group(1)
        if secret is not None:
            found = (secrets or {}).get(secret)
            if found is None:
                missing.append(f"keyring:{secret}")
                return ""
            return found
        name, default = match.group(2), match.group(3)
        if name is None:  # malformed: validation reports it; keep the text as written
            return text
        current = environ.get(name)
        if default is not None:
            return current if current else default
        if current is None:
            missing.append(name)
            return ""
        return current

    return _TOKEN.sub(substitute, value), missing


class ExpansionError(ConfigError):
    """A server could not start: a referenced variable is unset and has no default."""


def expand_server(
    server: ServerConfig,
    environ: Mapping[str, str] | None = None,
    *,
    source: str = "<config>",
    secrets: Mapping[str, str] | None = None,
) -> ServerConfig:
    """A copy of ``server`` with every ``${VAR}`` expanded from ``environ`` (default
    ``os.environ``) and every ``${keyring:NAME}`` from ``secrets`` (read beforehand, see
    :func:`keyring_names`). Raises :class:`ExpansionError` naming each unset variable
    and the key that uses it; the original object is never modified."""
    env = os.environ if environ is None else environ
    issues: list[ConfigIssue] = []
    base = f"servers.{server.name}"

    def expand(key: str, value: str) -> str:
        result, missing = expand_string(value, env, secrets)
        for name in missing:
            if name.startswith("keyring:"):
                secret = name.removeprefix("keyring:")
                issues.append(ConfigIssue(
                    source, f"{base}.{key}", None,
                    f"${{{name}}} is not in the keyring (store it with "
                    f"`tributary secrets set {secret}`)"))
                continue
            issues.append(
                ConfigIssue(
                    source,
                    f"{base}.{key}",
                    None,
                    f"${{{name}}} is not set in the environment and has no default "
                    f"(set {name}, or write ${{{name}:-default}})",
                )
            )
        return result

    expanded = replace(
        server,
        command=expand("command", server.command) if server.command is not None else None,
        args=[expand(f"args[{i}]", arg) for i, arg in enumerate(server.args)],
        env={key: expand(f"env.{key}", value) for key, value in server.env.items()},
        cwd=expand("cwd", server.cwd) if server.cwd is not None else None,
        url=expand("url", server.url) if server.url is not None else None,
        headers={key: expand(f"headers.{key}", value) for key, value in server.headers.items()},
        # containers are copied so the expanded server shares nothing mutable
        arguments=dict(server.arguments),
        health=replace(server.health),
    )
    if issues:
        raise ExpansionError(issues)
    return expanded


def server_strings(server: ServerConfig) -> Iterator[tuple[str, str]]:
    """Every expandable (key path suffix, value) of a server, for validation."""
    if server.command is not None:
        yield "command", server.command
    for i, arg in enumerate(server.args):
        yield f"args[{i}]", arg
    for key, value in server.env.items():
        yield f"env.{key}", value
    if server.cwd is not None:
        yield "cwd", server.cwd
    if server.url is not None:
        yield "url", server.url
    for key, value in server.headers.items():
        yield f"headers.{key}", value
