"""Which tool answers a query, and how the query and top_k map onto its arguments.

Explicit configuration wins (``ServerConfig.tool``, ``query_argument``,
``top_k_argument``, fixed ``arguments``). Otherwise a tool is auto-detected: its
name looks like search/query/find/lookup/retrieve, and it takes the query as
its one required string argument or as a string argument named like a query.
``top_k`` goes to an integer argument named top_k/limit/max_results/k/n when
there is one. When nothing fits, :class:`ToolSelectionError` names the tools seen.

Every search is sent to the chosen tool with arbitrary text, so auto-detection only
ever picks a tool the server itself declares safe: one annotated ``readOnlyHint: true``.
A tool without that mark is called only when the config names it (``tool:``); when no
search-like tool is marked read-only, nothing is chosen and the source says so ("no
read-only search tool; set `tool:` to choose one"). The name and description are an
extra veto on top (:func:`unsafe_reason`): even a tool marked read-only is passed over
when marked destructive, named with a write verb in any inflection (``deletes``,
``wiped``, ``erasing``), described as doing so, or described as running a query
language (SQL, ``select`` …), whatever the case. Among the tools left the choice is by
rule — the name (``search`` first), fewer required arguments, then the name itself —
never by the server's list order.

Fixed ``arguments`` win over the automatic top_k, which is kept within the schema's
minimum/maximum. ``query_mode: keywords`` asks a substring search once for each of the
query's most telling words (:func:`substring_words`), ``glob`` sends a file-name pattern
made of its words (for a tool that matches names against a glob), ``pattern`` a regular
expression for any of its names (for a grep tool; chosen by itself for a tool whose
query argument says it is a regular expression, unless another mode is set). A server
none of whose tools takes a query-like argument is not asked (:data:`TAKES_NO_QUERY`);
a search tool that needs required arguments Tributary cannot fill is named in the error
with the config that would use it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mcp import types

from tributary.engine.config.schema import ServerConfig
from tributary.engine.config.toolnames import (
    looks_like_search,
    tool_words,
    write_verb_in,
)
from tributary.engine.errors import TributaryError
from tributary.engine.localsearch.fts import fts_terms
from tributary.engine.sources.grep_pattern import grep_pattern

# A query tool whose description says it takes a query language would get the user's words
# as code (mcp-server-sqlite's read_query: "Execute a SELECT query on the SQLite database").
_RUNS_CODE = re.compile(r"\b(?:select|sql|cypher|sparql|graphql|shell command)\b", re.IGNORECASE)
NO_READ_ONLY = "no read-only search tool; set `tool:` to choose one"
TAKES_NO_QUERY = "its tool takes no query"
GLOB_WORDS = 8  # content words of a question in a `glob` query_mode pattern
_NAME_TOKEN = re.compile(r"[\w.-]{1,200}")
_WORD = re.compile(r"\w+")
# Words in an argument's name or description that say it carries the question.
_QUERY_WORDS = re.compile(r"\b(?:query|queries|search\w*|text|pattern|keywords?|question|terms?"
                          r"|prompt|phrase)\b", re.IGNORECASE)
QUERY_NAMES = ("query", "q", "text", "search", "pattern", "question", "search_query",
               "searchQuery", "keywords", "term", "prompt")
TOP_K_NAMES = ("top_k", "topK", "limit", "max_results", "maxResults", "k", "n",
               "num_results", "count", "size")
# A grep tool's limit counts matched lines (code-index-mcp's ``max_results``) or lines
# per file (mcp-ripgrep's ``maxResults``, ripgrep's ``-m``); its answer is read as one
# hit per file, so it is asked for this many lines per file wanted: a few lines' cap
# gave the files its walk met first, one of which held most of them.
PATTERN_LINES_PER_FILE = 10
# A grep tool's own switches that a `pattern` query needs: its words as alternatives of a
# regular expression (code-index-mcp reads ``pattern`` literally unless ``regex`` is
# true), matched in any case (the question's ``pager`` for the code's ``Pager``).
PATTERN_SWITCHES = {
    "regex": True, "use_regex": True, "useRegex": True, "is_regex": True, "isRegex": True,
    "regexp": True, "case_sensitive": False, "caseSensitive": False, "ignore_case": True,
    "ignoreCase": True, "case_insensitive": True, "caseInsensitive": True,
}


class ToolSelectionError(TributaryError):
    """No tool fits, or the configured one is missing or unusable."""


@dataclass(frozen=True, slots=True)
class ToolSelection:
    tool: str
    query_argument: str | None
    top_k_argument: str | None = None
    fixed: dict[str, Any] = field(default_factory=dict)
    auto: bool = False
    accepts: frozenset[str] = frozenset()  # the tool's argument names
    top_k_range: tuple[int | None, int | None] = (None, None)  # the schema's minimum, maximum
    query_mode: str = "full"  # "keywords": each of its words in turn; "glob": a name pattern; "pattern": a regex
    switches: dict[str, bool] = field(default_factory=dict)  # set for the query mode

    def arguments(
        self, query: str, top_k: int, scope: Mapping[str, Any] | None = None, text: str | None = None
    ) -> dict[str, Any]:
        """The call's arguments; ``scope`` items (``repos``) only where the tool takes them;
        ``text`` is what the query argument gets (default: :meth:`query_text`).

        A fixed ``arguments`` value from the config wins over the automatic top_k, and
        top_k is kept within the schema's minimum and maximum.
        """
        args = {**self.switches, **self.fixed}
        for key, value in (scope or {}).items():
            if key in self.accepts:
                args[key] = value
        if self.query_argument:
            args[self.query_argument] = self.query_text(query) if text is None else text
        if self.top_k_argument and self.top_k_argument not in self.fixed:
            low, high = self.top_k_range  # "Too big: expected number to be <=10" otherwise
            if self.query_mode == "pattern":  # a grep tool counts lines, not files
                top_k *= PATTERN_LINES_PER_FILE
            count = top_k if high is None else min(top_k, high)
            args[self.top_k_argument] = count if low is None else max(count, low)
        return args

    def query_texts(self, query: str) -> list[str]:
        """What each call of one search sends as the query: one call, except that a
        substring search (``keywords``) is asked once for each of its telling words."""
        if self.query_mode == "keywords" and self.query_argument:
            return substring_words(query) or [query]
        return [self.query_text(query)]

    def query_text(self, query: str) -> str:
        """``query`` as this tool gets it: whole, (``keywords``) its content words, or
        (``glob``) a pattern for file names holding any of them: ``**/*{routing,rules}*``.

        For ``keywords``, the content words joined (what the status line shows); a search
        asks each of :func:`substring_words` in turn. A query of stopwords only goes whole.
        """
        if self.query_mode == "glob":  # a file-name search (server-filesystem's search_files)
            return _name_glob(query)
        if self.query_mode == "pattern":  # a grep tool (mcp-ripgrep's search)
            return grep_pattern(query)
        if self.query_mode != "keywords":
            return query
        return " ".join(fts_terms(query, numbers=True)) or query

    def describe(self) -> str:
        how = "auto-detected" if self.auto else "configured"
        modes = {"keywords": ", word by word", "glob": " as a glob", "pattern": " as a regex of its names"}
        mode = modes.get(self.query_mode, "") if self.query_argument else ""
        # A tool that takes no question answers every search alike: say so, not "git_log()".
        parts = [f"{self.tool}({self.query_argument or 'no question: the same call for every search, ranked after the answers'}{mode}"]
        if self.top_k_argument:
            parts.append(f", {self.top_k_argument}=top_k")
        parts += [f", {name}={str(value).lower()}" for name, value in self.switches.items()
                  if name not in self.fixed]
        return "".join(parts) + f") [{how}]"


KEYWORD_CALLS = 3  # a substring search is asked once for each of at most this many words


def substring_words(query: str) -> list[str]:
    """The words a substring search is asked for, one call each: the question's content
    words, longest first (the first said first among equals), none inside one already
    taken (what holds ``sendfile`` holds ``send``), at most ``KEYWORD_CALLS``.

    A tool that matches its query as one substring (server-memory's ``search_nodes``)
    finds nothing for "who owns the billing service", nor for "owns billing service"
    unless some text holds those words in that order; "billing" and "service" each find
    what holds them, and the answers are then ranked by the words they hold."""
    picked: list[str] = []
    for word in sorted(dict.fromkeys(fts_terms(query, numbers=True)), key=len, reverse=True):
        if not any(word in taken for taken in picked):
            picked.append(word)
        if len(picked) == KEYWORD_CALLS:
            break
    return picked


def _name_glob(query: str) -> str:
    """A pattern for file names holding any of the question's content words, a name
    written with its dot (``routing.py``) kept whole: ``**/*{routing.py,rules}*``."""
    picked: list[str] = []
    for token in _NAME_TOKEN.findall(query.lower()):
        token = token.strip(".-")
        if token and token not in picked and fts_terms(token, numbers=True):
            picked.append(token)
        if len(picked) == GLOB_WORDS:
            break
    if not picked:
        return query
    return f"**/*{picked[0]}*" if len(picked) == 1 else "**/*{" + ",".join(picked) + "}*"


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
    candidates = [t for t in tools if looks_like_search(t.name) and _query_argument(t, config) is not None]
    if not candidates:
        needs = _unfilled_needs(config, tools)
        if needs:
            raise ToolSelectionError(needs)
        if not any(_query_like(t, config) for t in tools):
            # mcp-server-time: asked with every search, it would answer the time to each.
            raise ToolSelectionError(
                f"{TAKES_NO_QUERY}, so it is not asked for searches (tools seen: {_names(tools)});"
                " set `tool:` to ask it anyway")
        raise ToolSelectionError(
            "no search-like tool with a string query argument; tools seen: "
            f"{_names(tools)} — set `tool` (and `query_argument`) for this server"
        )
    passed: dict[str, str] = {}
    safe = []
    for t in candidates:
        reason = "not marked readOnlyHint" if not _marked_read_only(t) else unsafe_reason(t)
        if reason is None:
            safe.append(t)
        else:
            passed[t.name] = reason
    if not safe:
        listed = "; ".join(f"{name}: {reason}" for name, reason in sorted(passed.items()))
        raise ToolSelectionError(f"{NO_READ_ONLY} (passed over: {listed})")
    tool = min(safe, key=lambda t: (_name_rank(t.name), len(_required(t)), t.name))
    top_k_arg = config.top_k_argument or _top_k_argument(tool)
    query_arg = _query_argument(tool, config)
    mode = _query_mode(config, tool, query_arg)
    return ToolSelection(
        tool=tool.name,
        query_argument=query_arg,
        top_k_argument=top_k_arg,
        fixed=dict(config.arguments),
        auto=True,
        accepts=frozenset(_properties(tool)),
        top_k_range=_range(tool, top_k_arg),
        query_mode=mode,
        switches=_switches(tool, mode),
    )


def _unfilled_needs(config: ServerConfig, tools: Sequence[types.Tool]) -> str | None:
    """For a search-like tool that cannot be auto-chosen only because it needs required
    arguments Tributary cannot fill (server-filesystem's ``search_files`` needs ``path``),
    a message naming them and the config that would use it; None if there is none. A
    tool not marked read-only is named too (it is called only when the config names
    it), after any that is."""
    options = []
    for t in tools:
        if not looks_like_search(t.name) or unsafe_reason(t):
            continue
        query = _named_query(t)
        missing = [r for r in _required(t) if r not in config.arguments and r != query]
        if query is not None and missing:
            options.append((not _marked_read_only(t), _name_rank(t.name), len(missing), t.name, missing))
    if not options:
        return None
    unmarked, _, _, name, missing = min(options)
    names = ", ".join(f"`{m}`" for m in missing)
    fixed = ", ".join(f"{m}: …" for m in missing)
    advice = f"{name} needs {names} (required); set `arguments: {{{fixed}}}` and `tool: {name}`"
    if unmarked:  # mcp-ripgrep's search(pattern, path): read-only, but not marked so
        advice += " (it is not marked read-only, so it is called only when named)"
    if _matches_globs(next(t for t in tools if t.name == name)):
        advice += ", and `query_mode: glob`: it matches names against a glob pattern, not a question"
    return advice


def _named_query(tool: types.Tool, fixed: Mapping[str, Any] | None = None) -> str | None:
    """The string argument named as a question (``QUERY_NAMES`` order), not one of
    ``fixed``; None when the tool has none."""
    props = _properties(tool)
    return next((n for n in QUERY_NAMES if n in props and n not in (fixed or {})
                 and _is_type(props[n], "string")), None)  # fmt: skip


def _matches_globs(tool: types.Tool) -> bool:
    """Whether a tool says it takes a glob pattern (server-filesystem's ``search_files``),
    which a question sent as it is never matches."""
    return _takes_a_glob(tool, _named_query(tool))


def _takes_a_glob(tool: types.Tool, query_arg: str | None) -> bool:
    """Whether the glob a tool's description speaks of is its query's: not when the
    description names another of its arguments (code-index-mcp: "Supports glob
    file_pattern"; mcp-server-tree-sitter's ``find_text``: "file_pattern: Optional glob
    pattern")."""
    described = tool.description or ""
    if "glob" not in described.lower():
        return False
    words = set(_WORD.findall(described))  # one pass, whatever the number of arguments
    return not any(name in words for name in _properties(tool) if name != query_arg and len(name) > 3)


def _configured(config: ServerConfig, tool: types.Tool) -> ToolSelection:
    writes = writes_reason(tool)
    if writes is not None:  # mcp-server-sqlite's write_query: a search "drop table notes"
        raise ToolSelectionError(
            f"tool {tool.name!r} is never asked for searches: it is {writes}, which may change "
            "something, and every search would send it its text; name a tool that only reads")
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
    # The argument the question would go to once the others are fixed (mcp-ripgrep's
    # search(pattern, path) reads as one until `path` is given), so it is not asked for.
    query_like = query_arg or _named_query(tool, fixed=config.arguments)
    missing = [r for r in _required(tool)
               if r not in config.arguments and r not in (query_like, top_k_arg)]
    if missing:
        besides = f" besides its query ({query_like!r})" if query_like else ""
        raise ToolSelectionError(
            f"tool {tool.name!r} requires {missing}{besides}; give them under `arguments`"
        )
    mode = _query_mode(config, tool, query_arg)
    return ToolSelection(tool.name, query_arg, top_k_arg, dict(config.arguments),
                         accepts=frozenset(props), top_k_range=_range(tool, top_k_arg),
                         query_mode=mode, switches=_switches(tool, mode))


def _switches(tool: types.Tool, mode: str) -> dict[str, bool]:
    """The tool's boolean arguments that ``mode`` needs set (``PATTERN_SWITCHES``); a
    value the config fixes wins over these."""
    if mode != "pattern":
        return {}
    props = _properties(tool)
    return {name: value for name, value in PATTERN_SWITCHES.items()
            if name in props and _is_type(props[name], "boolean")}


_REGEX_WORDS = re.compile(r"\bregex(?:p|es)?\b|\bregular expressions?\b", re.IGNORECASE)


def _query_mode(config: ServerConfig, tool: types.Tool, query_arg: str | None) -> str:
    """The configured mode, except that the default (``full``) becomes ``pattern`` for a
    query argument that is a regular expression (named ``regex``, or so described by
    it or by the tool, and not said to be a glob): a question sent whole to grep finds
    nothing, and an issue with code in it is not a valid expression."""
    if config.query_mode != "full" or query_arg is None:
        return config.query_mode
    props = _properties(tool)
    schema = props.get(query_arg)
    described = str(schema.get("description", "")) if isinstance(schema, dict) else ""
    said = f"{described} {tool.description or ''}"
    if "glob" in described.lower() or _takes_a_glob(tool, query_arg):
        return config.query_mode
    if query_arg.lower() in ("regex", "regexp") or _REGEX_WORDS.search(said):
        return "pattern"
    return config.query_mode


def _marked_read_only(tool: types.Tool) -> bool:
    return tool.annotations is not None and tool.annotations.read_only_hint is True


def writes_reason(tool: types.Tool) -> str | None:
    """Why ``tool`` says it changes something (marked destructive or not read-only, a
    write verb in its name or first in its description), or None: such a tool is never
    sent a search, even when the config names it (mcp-server-git's ``git_commit`` and
    ``git_checkout``, marked not read-only, would commit or switch branches)."""
    found = _says_it_writes(tool)
    if found is None:
        return None
    how, word = found
    return {"marked": f"marked {word}", "named": f"named with the verb {word!r}",
            "described": f"described by the verb {word!r}"}[how]


def _says_it_writes(tool: types.Tool) -> tuple[str, str] | None:
    """``("marked", mark)``, ``("named", verb)`` or ``("described", verb)``: how ``tool``
    says it changes something; None when it does not."""
    if tool.annotations is not None and tool.annotations.destructive_hint is True:
        return "marked", "destructive"
    if tool.annotations is not None and tool.annotations.read_only_hint is False:
        return "marked", "not read-only"
    verb = write_verb_in(tool_words(tool.name))
    if verb:
        return "named", verb
    verb = write_verb_in(tool_words(_described(tool))[:1])
    return ("described", verb) if verb else None


def _described(tool: types.Tool) -> str:
    """The tool's description and its arguments' descriptions, as one text."""
    return " ".join([tool.description or "", *(str(s.get("description", "")) for s in
                                               _properties(tool).values() if isinstance(s, dict))])


def unsafe_reason(tool: types.Tool) -> str | None:
    """Why ``tool`` must not be auto-chosen even if marked read-only, or None.

    A veto on top of the server's annotations: marked destructive, a write verb in its
    name (word stems, any case), a description that starts with one, or a description
    saying it runs a query language or code.
    """
    found = _says_it_writes(tool)
    if found is not None:
        how, word = found
        return {"marked": f"marked {word}", "named": f"named with the write verb {word!r}",
                "described": f"its description starts with the write verb {word!r}"}[how]
    runs = _RUNS_CODE.search(_described(tool))
    if runs:
        return f"its description says it takes a query language ({runs.group(0)!r})"
    return None


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
    # A string limited to a few values (``enum``, ``const``) cannot take a question:
    # server-everything's ``messageType`` of "error", "success" or "debug".
    strings = [n for n, s in props.items() if _is_type(s, "string") and not _chosen_from(s)]
    required = [r for r in _required(tool) if r not in config.arguments]
    required_strings = [r for r in required if r in strings]
    # Any other required argument must be fixed by config, or the call cannot be made.
    if len(required_strings) == 1 and len(required) == 1 and _takes_words(required[0]):
        return required_strings[0]
    for name in QUERY_NAMES:
        if name in strings and all(r == name for r in required):
            return name
    return None


# The last word of an argument's name that says it takes a place or a key, not words:
# mcp-server-git's ``git_log(repo_path)`` sent a question as a repository path fails.
_NOT_WORDS = frozenset([
    "path", "paths", "file", "filename", "filepath", "dir", "directory", "folder", "root", "cwd",
    "url", "uri", "href", "host", "id", "ids", "uuid", "timezone", "tz", "date", "time",
    "timestamp", "branch", "revision", "rev", "ref", "sha", "commit", "repo", "repository",
])


def _chosen_from(schema: Any) -> bool:
    return isinstance(schema, dict) and ("enum" in schema or "const" in schema)


def _takes_words(name: str) -> bool:
    """Whether a lone required string argument may take the question: not when its name
    ends in a word for a place or a key (``repo_path``, ``url``, ``issue_id``,
    ``timezone``); ``query_argument`` in the config still sends it there."""
    words = tool_words(name)
    return not words or words[-1] not in _NOT_WORDS


def _top_k_argument(tool: types.Tool) -> str | None:
    props = _properties(tool)
    for name in TOP_K_NAMES:
        if name in props and (_is_type(props[name], "integer") or _is_type(props[name], "number")):
            return name
    return None


def _query_like(tool: types.Tool, config: ServerConfig) -> bool:
    """Whether ``tool`` has a string argument, not fixed by config, that reads as the
    question (its name or description says query, search, text …)."""
    for name, schema in _properties(tool).items():
        if name in config.arguments or not _is_type(schema, "string"):
            continue
        described = str(schema.get("description", "")) if isinstance(schema, dict) else ""
        if name in QUERY_NAMES or _QUERY_WORDS.search(" ".join(tool_words(name))) \
                or _QUERY_WORDS.search(described):
            return True
    return False


def _range(tool: types.Tool, argument: str | None) -> tuple[int | None, int | None]:
    """The integer range the schema allows ``argument`` (minimum/maximum, exclusive too)."""
    schema = _properties(tool).get(argument) if argument else None
    if not isinstance(schema, dict):
        return None, None

    def bound(key: str, exclusive: str, step: int) -> int | None:
        value = schema.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return math.ceil(value) if step > 0 else math.floor(value)
        value = schema.get(exclusive)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return math.floor(value) + 1 if step > 0 else math.ceil(value) - 1
        return None

    return bound("minimum", "exclusiveMinimum", 1), bound("maximum", "exclusiveMaximum", -1)


def _names(tools: Sequence[types.Tool]) -> str:
    return ", ".join(sorted(t.name for t in tools)) or "(none)"
