"""Loading the YAML config into the typed schema, with every problem located.

The YAML is *composed* (not just loaded) so each value keeps its node and therefore its
line: the conversion walks the node tree against the dataclasses of
:mod:`tributary.engine.config.schema`, driven by their type hints, so a field the schema gains is
read, typed and checked here without changes. Structural problems (unknown keys with a
did-you-mean, wrong types, missing keys, duplicate keys) are collected during the walk;
semantic ones (ranges, cross-references, patterns) come from
:func:`tributary.engine.config.validate.validate`; both are raised together as one ``ConfigError``.

Hostile input: anything the YAML parser or constructor throws becomes a
``ConfigError``; aliases are followed with cycle detection, a depth limit and a node
budget, so neither ``&a [*a]`` nor a "billion laughs" document can hang or exhaust memory.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import math
import os
import re
import time
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from tributary.engine import paths
from tributary.engine.config.defaults import default_config_text
from tributary.engine.config.errors import ConfigError, ConfigIssue, did_you_mean
from tributary.engine.config.schema import Config, RoutingRule, ServerConfig
from tributary.engine.config.secrets import is_secret_name
from tributary.engine.config.validate import BUILTIN_SERVER_NAMES, merge_issues, validate

MAX_CONFIG_BYTES = 4 * 1024 * 1024
_MAX_DEPTH = 64
_MAX_NODES = 50_000  # values incl. alias expansions; real configs use a few thousand

# keys people write from habit, mapped to where the setting lives here
_HINTS: dict[str, str] = {
    "type": "transport",
    "mcpServers": "servers",
    "mcp_servers": "servers",
    "rules": "routing.rules",
    "serverRules": "routing.rules",
    "server_rules": "routing.rules",
    "disabled": "enabled: false",
    "serverUrl": "url",
    "timeout_ms": "timeout (seconds)",
    "top_n": "top_k",
    "limit": "top_k",
    "k": "rrf_k",
}

# libyaml's composer when available (much faster); both build the same node tree
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_PLAIN_TAGS = frozenset({"tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"})
# What a setting's name looks like. An unknown key of another shape (a line of some
# other file the config path points at) is reported by its line alone.
_KEY_SHAPE = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}")
_PATH_SHAPE = re.compile(r"[\w .\-\[\]/@+]{0,300}")
_INVALID: Any = object()  # a value that could not be converted (an issue was recorded)


def _mark_line(node: Node) -> int:
    return int(node.start_mark.line) + 1


class _Reader:
    """Walks a composed YAML node tree into schema dataclasses, collecting issues."""

    def __init__(self, loader: Any, source: str) -> None:
        self.loader = loader
        self.source = source
        self.issues: list[ConfigIssue] = []
        self.lines: dict[str, int] = {}
        self.nodes = 0
        self.active: set[int] = set()  # node ids on the current path (alias cycles)

    def issue(self, path: str, line: int | None, message: str) -> None:
        # A key path built from keys of no setting's shape is another file's text: the
        # line alone says where.
        shown = path if _PATH_SHAPE.fullmatch(path) else ""
        self.issues.append(ConfigIssue(self.source, shown, line, message))

    # --- guards -------------------------------------------------------------------------
    def _enter(self, node: Node, path: str, depth: int) -> bool:
        self.nodes += 1
        if self.nodes > _MAX_NODES:
            if self.nodes == _MAX_NODES + 1:
                self.issue(path, _mark_line(node), "the document is too large (too many values or aliases)")
            return False
        if depth > _MAX_DEPTH:
            self.issue(path, _mark_line(node), f"nested more than {_MAX_DEPTH} levels deep")
            return False
        if id(node) in self.active:
            self.issue(path, _mark_line(node), "an alias refers to itself (recursive structure)")
            return False
        if not isinstance(node, ScalarNode) and node.tag not in _PLAIN_TAGS:
            self.issue(path, _mark_line(node), f"unsupported YAML tag {node.tag!r}")
            return False
        return True

    # --- scalars and keys ---------------------------------------------------------------
    def scalar(self, node: ScalarNode, path: str) -> Any:
        try:
            return self.loader.construct_object(node, deep=True)
        except (yaml.YAMLError, ValueError, OverflowError, TypeError) as exc:
            self.issue(path, _mark_line(node), f"cannot read this value: {_short(exc)}")
            return _INVALID

    def mapping_items(self, node: MappingNode, path: str) -> list[tuple[str, Node, int]]:
        """(key, value node, line) for each entry; merge keys applied; bad keys reported."""
        try:
            self.loader.flatten_mapping(node)
        except yaml.YAMLError as exc:
            self.issue(path, _mark_line(node), f"cannot merge: {_short(exc)}")
            return []
        items: list[tuple[str, Node, int]] = []
        seen: dict[str, int] = {}
        for key_node, value_node in node.value:
            line = _mark_line(key_node)
            key = self._key(key_node, path)
            if key is None:
                continue
            child = _join(path, key)
            if key in seen:
                self.issue(child, line, f"duplicate key (also on line {seen[key]}); only one may be given")
                continue
            seen[key] = line
            items.append((key, value_node, line))
        return items

    def _key(self, node: Node, path: str) -> str | None:
        if not isinstance(node, ScalarNode):
            self.issue(path, _mark_line(node), "a key must be a plain string, not a list or mapping")
            return None
        value = self.scalar(node, path)
        if isinstance(value, str):
            return value
        if isinstance(value, int | float) and not isinstance(value, bool):
            return str(node.value)
        if isinstance(value, bool):
            self.issue(
                _join(path, str(node.value)),
                _mark_line(node),
                f"the key {node.value!r} reads as a boolean in YAML; quote it",
            )
            return None
        if value is not _INVALID:
            self.issue(path, _mark_line(node), f"the key {node.value!r} must be a string")
        return None

    # --- typed conversion ---------------------------------------------------------------
    def convert(self, node: Node, hint: Any, path: str, depth: int) -> Any:
        return self.guarded(node, path, depth, lambda: self._convert(node, hint, path, depth))

    def guarded(self, node: Node, path: str, depth: int, build: Callable[[], Any]) -> Any:
        """Run ``build`` for ``node`` unless that would loop, nest or grow without bound."""
        if not self._enter(node, path, depth):
            return _INVALID
        self.active.add(id(node))
        try:
            return build()
        finally:
            self.active.discard(id(node))

    def _convert(self, node: Node, hint: Any, path: str, depth: int) -> Any:
        origin = typing.get_origin(hint)
        args = typing.get_args(hint)
        if hint is Any:
            return self._plain(node, path, depth)
        if dataclasses.is_dataclass(hint) and isinstance(hint, type):
            if _is_null(node) and not _required(hint):
                return hint()  # an empty section: all defaults
            return self.dataclass(node, hint, path, depth)
        if origin in (types.UnionType, typing.Union):
            options = [a for a in args if a is not type(None)]
            if _is_null(node) and len(options) < len(args):
                return None
            # the same node, so no new guard: convert() already entered it
            return self._convert(node, options[0], path, depth) if len(options) == 1 else _INVALID
        if origin is Literal:
            value = self._scalar_of(node, path, "one of " + _choices(args))
            if value is _INVALID:
                return _INVALID
            if value not in args:
                self.issue(path, _mark_line(node), f"must be one of {_choices(args)}, not {_show(value, path)}{did_you_mean(str(value), map(str, args))}")
                return _INVALID
            return value
        if origin is list:
            return self.sequence(node, args[0], path, depth)
        if origin is dict:
            return self.mapping(node, args[1], path, depth)
        if hint in (str, int, float, bool):
            return self.simple(node, hint, path)
        self.issue(path, _mark_line(node), f"unsupported setting type {hint!r}")
        return _INVALID

    def _scalar_of(self, node: Node, path: str, wanted: str) -> Any:
        if not isinstance(node, ScalarNode):
            self.issue(path, _mark_line(node), f"must be {wanted}, not a {_kind(node)}")
            return _INVALID
        return self.scalar(node, path)

    def simple(self, node: Node, hint: type, path: str) -> Any:
        names = {str: "a string", int: "an integer", float: "a number", bool: "true or false"}
        value = self._scalar_of(node, path, names[hint])
        if value is _INVALID:
            return _INVALID
        line = _mark_line(node)
        if hint is bool:
            if isinstance(value, bool):
                return value
        elif hint is str:
            if isinstance(value, str):
                return value
            if isinstance(value, int | float) and not isinstance(value, bool):
                return str(node.value)  # "8080", "1.10": the text as written
            if isinstance(value, bool):
                self.issue(path, line, f"must be a string; write \"{node.value}\" in quotes")
                return _INVALID
        elif hint is int:
            if isinstance(value, int) and not isinstance(value, bool):
                return value
        elif isinstance(value, int | float) and not isinstance(value, bool):
            if math.isfinite(value):
                return float(value)
            self.issue(path, line, f"must be a finite number, not {node.value}")
            return _INVALID
        self.issue(path, line, f"must be {names[hint]}, not {_show(value, path)}")
        return _INVALID

    def sequence(self, node: Node, item_hint: Any, path: str, depth: int) -> Any:
        if _is_null(node):
            return []
        if not isinstance(node, SequenceNode):
            self.issue(path, _mark_line(node), f"must be a list, not {_describe(node, path)}")
            return _INVALID
        out: list[Any] = []
        for index, item in enumerate(node.value):
            child = f"{path}[{index}]"
            self.lines.setdefault(child, _mark_line(item))
            if item_hint is RoutingRule and isinstance(item, MappingNode):
                build = functools.partial(self.dataclass, item, RoutingRule, child, depth + 1, index=index)
                value = self.guarded(item, child, depth + 1, build)
            else:
                value = self.convert(item, item_hint, child, depth + 1)
            if value is not _INVALID:
                out.append(value)
        return out

    def mapping(self, node: Node, value_hint: Any, path: str, depth: int) -> Any:
        if _is_null(node):
            return {}
        if not isinstance(node, MappingNode):
            self.issue(path, _mark_line(node), f"must be a mapping (key: value), not {_describe(node, path)}")
            return _INVALID
        out: dict[str, Any] = {}
        for key, value_node, line in self.mapping_items(node, path):
            child = _join(path, key)
            self.lines.setdefault(child, line)
            if value_hint is ServerConfig:
                value = self.server(value_node, key, child, depth + 1)
            else:
                value = self.convert(value_node, value_hint, child, depth + 1)
            if value is not _INVALID:
                out[key] = value
        return out

    def server(self, node: Node, name: str, path: str, depth: int) -> Any:
        if _is_null(node):
            return ServerConfig(name=name)
        return self.guarded(
            node, path, depth, lambda: self.dataclass(node, ServerConfig, path, depth, name=name)
        )

    def dataclass(
        self,
        node: Node,
        cls: type,
        path: str,
        depth: int,
        *,
        name: str | None = None,
        index: int | None = None,
    ) -> Any:
        if not isinstance(node, MappingNode):
            self.issue(path, _mark_line(node), f"must be a mapping (key: value), not {_describe(node, path)}")
            return _INVALID
        hints, fields = _schema_of(cls)
        given: dict[str, Any] = {}
        for key, value_node, line in self.mapping_items(node, path):
            child = _join(path, key)
            self.lines.setdefault(child, line)
            if key not in fields:
                if not _KEY_SHAPE.fullmatch(key):  # another file's text: never echoed
                    self.issue(path, line, "an unknown key (not shown: it is no setting's name)")
                    continue
                hint = _HINTS.get(key)
                suggestion = f" (did you mean '{hint}'?)" if hint else did_you_mean(key, fields)
                self.issue(child, line, f"unknown key '{key}'{suggestion}")
                continue
            value = self.convert(value_node, hints[key], child, depth + 1)
            if value is not _INVALID:
                given[key] = value
        if name is not None:  # a server's name is its key in `servers`
            if "name" in given and given["name"] != name:
                self.issue(_join(path, "name"), self.lines.get(_join(path, "name")), f"must match the server's key '{name}' (or be left out)")
            given["name"] = name
        if cls is RoutingRule and "name" not in given and index is not None:
            given["name"] = f"rule-{index + 1}"
        _POST.get(cls, _noop)(given, node)
        for field_name in _required(cls):
            if field_name not in given:
                if not any(i.key_path == _join(path, field_name) for i in self.issues):
                    self.issue(_join(path, field_name), _mark_line(node), f"missing required key '{field_name}'")
                given[field_name] = _zero(hints[field_name])
        return cls(**given)

    def plain(self, node: Node, path: str, depth: int) -> Any:
        """Any JSON-like value (for tool ``arguments``)."""
        return self.guarded(node, path, depth, lambda: self._plain(node, path, depth))

    def _plain(self, node: Node, path: str, depth: int) -> Any:
        if isinstance(node, ScalarNode):
            return self._plain_scalar(node, path)
        if isinstance(node, SequenceNode):
            items = [self.plain(item, f"{path}[{i}]", depth + 1) for i, item in enumerate(node.value)]
            return _INVALID if any(v is _INVALID for v in items) else items
        if isinstance(node, MappingNode):
            out: dict[str, Any] = {}
            for key, value_node, _line in self.mapping_items(node, path):
                out[key] = self.plain(value_node, _join(path, key), depth + 1)
            return _INVALID if any(v is _INVALID for v in out.values()) else out
        return _INVALID

    def _plain_scalar(self, node: ScalarNode, path: str) -> Any:
        value = self.scalar(node, path)
        if isinstance(value, float) and not math.isfinite(value):
            self.issue(path, _mark_line(node), "must be a finite number")
            return _INVALID
        if value is _INVALID or value is None or isinstance(value, str | int | float | bool):
            return value
        kind = type(value).__name__
        self.issue(path, _mark_line(node), f"must be a string, number, boolean or null, not {kind}")
        return _INVALID


@functools.cache
def _schema_of(cls: type) -> tuple[dict[str, Any], dict[str, dataclasses.Field[Any]]]:
    """Type hints and fields of a schema class (resolving hints is costly: done once)."""
    fields = {f.name: f for f in dataclasses.fields(cls) if f.name != "path" or cls is not Config}
    return typing.get_type_hints(cls), fields


@functools.cache
def _required(cls: type) -> tuple[str, ...]:
    """Fields of a schema class that have no default."""
    return tuple(
        f.name
        for f in _schema_of(cls)[1].values()
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    )


def _infer_transport(given: dict[str, Any], node: Node) -> None:
    """``url:`` without ``command:`` means a remote server (as in mcpServers JSON): the
    legacy HTTP+SSE transport when the URL's path ends in ``/sse`` (as import decides),
    else streamable HTTP."""
    url = given.get("url")
    if "transport" not in given and url and not given.get("command"):
        sse = isinstance(url, str) and url.split("?", 1)[0].split("#", 1)[0].rstrip("/").endswith("/sse")
        given["transport"] = "sse" if sse else "http"


def _noop(given: dict[str, Any], node: Node) -> None:
    return None


_POST: dict[type, Callable[[dict[str, Any], Node], None]] = {ServerConfig: _infer_transport}


def _zero(hint: Any) -> Any:
    origin = typing.get_origin(hint)
    if origin is list:
        return []
    if origin is dict:
        return {}
    if hint is str:
        return ""
    if hint in (int, float):
        return hint()
    return None


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _is_null(node: Node) -> bool:
    return isinstance(node, ScalarNode) and node.tag == "tag:yaml.org,2002:null"


def _kind(node: Node) -> str:
    if isinstance(node, MappingNode):
        return "mapping"
    if isinstance(node, SequenceNode):
        return "list"
    return "value"


def _may_be_secret(path: str) -> bool:
    """Values under env/headers or secret-looking keys are never echoed in messages."""
    return ".env" in path or ".headers" in path or is_secret_name(path.rsplit(".", 1)[-1])


def _describe(node: Node, path: str) -> str:
    if isinstance(node, ScalarNode):
        text = str(node.value)
        if not text:
            return "an empty value"
        return "a single value" if _may_be_secret(path) else f"the value {text[:40]!r}"
    return f"a {_kind(node)}"


def _show(value: Any, path: str) -> str:
    if isinstance(value, str):
        return "a string" if _may_be_secret(path) else repr(value[:60])
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return str(value)
    return f"a {type(value).__name__}"


def _choices(args: tuple[Any, ...]) -> str:
    return ", ".join(repr(a) for a in args)


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:200]


def _syntax_issue(exc: BaseException, source: str) -> ConfigIssue:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    line = int(mark.line) + 1 if mark is not None else None
    problem = getattr(exc, "problem", None)
    context = getattr(exc, "context", None)
    text = " ".join(p for p in (context, problem) if p) or _short(exc)
    return ConfigIssue(source, "", line, f"not valid YAML: {text}")


def parse_config(
    text: str,
    *,
    source: str,
    extra_server_names: frozenset[str] = BUILTIN_SERVER_NAMES,
) -> Config:
    """Parse and validate YAML text; ``source`` names it in messages (a path or ``<gui>``).

    Raises :class:`ConfigError` listing every problem. Empty text is the empty config
    (every setting at its default). ``extra_server_names`` may be named by routing rules
    without being configured (the engine's built-in servers).
    """
    config, issues, lines = _parse(text, source)
    semantic = validate(config, lines=lines, file=source, extra_server_names=extra_server_names)
    issues = merge_issues(issues, semantic)
    if issues:
        raise ConfigError(issues)
    return config


def _parse(text: str, source: str) -> tuple[Config, list[ConfigIssue], dict[str, int]]:
    """The config as far as it could be read, the structural issues, and key lines."""
    if len(text) > MAX_CONFIG_BYTES:
        message = f"the file is too large (over {MAX_CONFIG_BYTES} bytes)"
        return Config(), [ConfigIssue(source, "", None, message)], {}
    try:
        loader = _LOADER(text)
    except yaml.YAMLError as exc:  # the reader rejects control characters up front
        return Config(), [_syntax_issue(exc, source)], {}
    try:
        try:
            node = loader.get_single_node()
        except yaml.YAMLError as exc:
            return Config(), [_syntax_issue(exc, source)], {}
        except (RecursionError, ValueError, TypeError) as exc:
            return Config(), [ConfigIssue(source, "", None, f"not valid YAML: {_short(exc)}")], {}
        if node is None or _is_null(node):
            return Config(), [], {}
        reader = _Reader(loader, source)
        if not isinstance(node, MappingNode):
            # Not a config at all (another file?): its text is not repeated.
            shown = "a single value" if isinstance(node, ScalarNode) else f"a {_kind(node)}"
            message = f"the top level must be a mapping of settings, not {shown}"
            reader.issue("", _mark_line(node), message)
            return Config(), reader.issues, {}
        try:
            config = reader.dataclass(node, Config, "", 0)
        except RecursionError:
            return Config(), [ConfigIssue(source, "", None, "nested too deeply")], {}
        if not isinstance(config, Config):
            return Config(), reader.issues, reader.lines
        return config, reader.issues, reader.lines
    finally:
        loader.dispose()


def load_config(
    path: Path | None = None,
    *,
    extra_server_names: frozenset[str] = BUILTIN_SERVER_NAMES,
) -> Config:
    """Load the config in effect: ``path``, else ``$TRIBUTARY_CONFIG``, else the platform
    config dir. A missing file yields the default config (with ``path`` set, so a later
    save goes there). Raises :class:`ConfigError` if the file is unreadable or invalid."""
    target = path if path is not None else paths.default_config_path()
    source = str(target)
    try:
        raw = target.read_bytes()
    except FileNotFoundError:
        config = parse_config(default_config_text(), source="<default config>", extra_server_names=extra_server_names)
        config.path = target
        return config
    except OSError as exc:
        raise ConfigError([ConfigIssue(source, "", None, f"cannot read the file: {exc.strerror or exc}")]) from exc
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError([ConfigIssue(source, "", None, f"not UTF-8 text (byte {exc.start})")]) from exc
    config = parse_config(text, source=source, extra_server_names=extra_server_names)
    config.path = target
    return config


SETTLE_S = 2.0  # how recent a change must be, and how long to wait for the rest of it
SETTLE_POLL_S = 0.05


def settle_window() -> float:
    """Seconds :func:`load_config_settled` waits (``TRIBUTARY_CONFIG_SETTLE_S``; 0: never)."""
    try:
        value = float(os.environ.get("TRIBUTARY_CONFIG_SETTLE_S", SETTLE_S))
    except ValueError:
        return SETTLE_S
    return value if math.isfinite(value) and value >= 0 else SETTLE_S


async def load_config_settled(
    path: Path | None = None,
    *,
    window_s: float | None = None,
    on_wait: Callable[[], None] | None = None,
) -> Config:
    """:func:`load_config`, patient with a file being written: when it is invalid but
    changed in the last ``window_s`` seconds (an editor saving in two steps, a copy still
    under way), its size and mtime are polled and it is read again on each change, for up
    to ``window_s``, returning as soon as it is valid. An older invalid file, or one that
    stays invalid, raises the same :class:`ConfigError` as at once. ``on_wait`` is called
    once when the wait begins (the CLI says why it pauses)."""
    window = settle_window() if window_s is None else window_s
    target = path if path is not None else paths.default_config_path()
    try:
        return load_config(target)
    except ConfigError as exc:
        error = exc
        seen = config_signature(target)
        if window <= 0 or seen is None or time.time() - seen[0] / 1e9 > window:
            raise
    if on_wait is not None:
        on_wait()
    end = time.monotonic() + window
    while time.monotonic() < end:
        await asyncio.sleep(SETTLE_POLL_S)
        now = config_signature(target)
        if now is None or now == seen:  # unchanged, or gone for a moment (a rename)
            continue
        seen = now
        try:
            return load_config(target)
        except ConfigError as exc:
            error = exc
    raise error


def config_signature(path: Path) -> tuple[int, int] | None:
    """The file's (mtime in ns, size), None when it cannot be read: what says a config
    file changed (the settle wait here, the app's wait for a mended file)."""
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size
