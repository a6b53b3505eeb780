"""Which tool answers a query, and how the query and top_k map onto its arguments.

Explicit configuration wins (``ServerConfig.tool``, ``query_argument``,
``top_k_argument``, fixed ``arguments``). Otherwise a tool is auto-detected: its
name looks like search/query/find/lookup/retrieve, and it takes the query as
its one required string argument or as a string argument named like a query.
``top_k`` goes to an integer argument named top_k/limit/max_results/k/n when
there is one. When nothing fits, :class:`ToolSelectionError` names the tools seen.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from mcp import types

from engine.config.schema import ServerConfig
from engine.errors import TributaryError

SEARCH_WORDS = ("search", "query", "find", "lookup", "retrieve", "grep", "ask")
QUERY_NAMES = ("query", "q", "text", "search", "pattern", "question", "search_query",
               "searchQuery", "keywords", "term", "prompt")
TOP_K_NAMES = ("top_k", "topK", "limit", "max_results", "maxResults", "k", "n",
               "num_results", "count", "size")


class ToolSelectionError(TributaryError):
    """No tool fits, or the configured one is missing or unusable."""


@dataclass(frozen=True, slots=True)
class ToolSelection:
    tool: str
    query_argument: str | None
    top_k_argument: str | None = None
    fixed: dict[str, Any] = field(default_factory=dict)
    auto: bool = False

    def arguments(self, query: str, top_k: int) -> dict[str, Any]:
        args = dict(self.fixed)
        if self.query_argument:
            args[self.query_argument] = query
        if self.top_k_argument:
            args[self.top_k_argument] = top_k
        return args

    def describe(self) -> str:
        how = "auto-detected" if self.auto else "configured"
        parts = [f"{self.tool}({self.query_argument or '—'}"]
        if self.top_k_argument:
            parts.append(f", {self.top_k_argument}=top_k")
        return "".join(parts) + f") [{how}]"


def select_tool(config: ServerConfig, tools: Sequence[types.Tool]) -> ToolSelection:
    """The tool and argument mapping for ``config`` among the server's ``tools``."""
    by_name = {t.name: t for t in tools}
    if config.tool:
        tool = by_name.get(config.tool)
        if tool is None:
            raise ToolSelectionError(
                f"configured tool {config.tool!r} not offered; tools seen: {_names(tools)}"
            )
        return _configured(config, tool)
    candidates = [t for t in tools if _looks_like_search(t.name)]
    ranked = sorted(
        (c for c in candidates if _query_argument(c, config) is not None),
        key=lambda t: (_name_rank(t.name), len(_required(t))),
    )
    if not ranked:
        raise ToolSelectionError(
            "no search-like tool with a string query argument; tools seen: "
            f"{_names(tools)} — set `tool` (and `query_argument`) for this server"
        )
    tool = ranked[0]
    return ToolSelection(
        tool=tool.name,
        query_argument=_query_argument(tool, config),
        top_k_argument=config.top_k_argument or _top_k_argument(tool),
        fixed=dict(config.arguments),
        auto=True,
    )


def _configured(config: ServerConfig, tool: types.Tool) -> ToolSelection:
    props = _properties(tool)
    query_arg = config.query_argument
    if query_arg is None:
        query_arg = _query_argument(tool, config)  # may stay None: the tool takes no query
    elif props and query_arg not in props:
        raise ToolSelectionError(
            f"tool {tool.name!r} has no argument {query_arg!r}; it takes {sorted(props)}"
        )
    top_k_arg = config.top_k_argument
    if top_k_arg is None:
        top_k_arg = _top_k_argument(tool)
    missing = [r for r in _required(tool)
               if r not in config.arguments and r not in (query_arg, top_k_arg)]
    if missing:
        raise ToolSelectionError(
            f"tool {tool.name!r} requires {missing}; give them under `arguments`"
        )
    return ToolSelection(tool.name, query_arg, top_k_arg, dict(config.arguments))


def _looks_like_search(name: str) -> bool:
    words = re.split(r"[^a-z]+", re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower())
    return any(w.startswith(s) for w in words for s in SEARCH_WORDS)


def _name_rank(name: str) -> int:
    lowered = name.lower()
    if lowered == "search":
        return 0
    if lowered.startswith("search"):
        return 1
    return 2


def _properties(tool: types.Tool) -> dict[str, Any]:
    props = tool.input_schema.get("properties")
    return props if isinstance(props, dict) else {}


def _required(tool: types.Tool) -> list[str]:
    required = tool.input_schema.get("required")
    return [r for r in required if isinstance(r, str)] if isinstance(required, list) else []


def _is_type(schema: Any, wanted: str) -> bool:
    if not isinstance(schema, dict):
        return False
    kind = schema.get("type")
    if kind == wanted or (isinstance(kind, list) and wanted in kind):
        return True
    options = schema.get("anyOf") or schema.get("oneOf") or []
    return any(_is_type(o, wanted) for o in options if isinstance(o, dict))


def _query_argument(tool: types.Tool, config: ServerConfig) -> str | None:
    props = _properties(tool)
    strings = [n for n, s in props.items() if _is_type(s, "string")]
    required = [r for r in _required(tool) if r not in config.arguments]
    required_strings = [r for r in required if r in strings]
    # Any other required argument must be fixed by config, or the call cannot be made.
    if len(required_strings) == 1 and len(required) == 1:
        return required_strings[0]
    for name in QUERY_NAMES:
        if name in strings and all(r == name for r in required):
            return name
    return None


def _top_k_argument(tool: types.Tool) -> str | None:
    props = _properties(tool)
    for name in TOP_K_NAMES:
        if name in props and (_is_type(props[name], "integer") or _is_type(props[name], "number")):
            return name
    return None


def _names(tools: Sequence[types.Tool]) -> str:
    return ", ".join(sorted(t.name for t in tools)) or "(none)"
