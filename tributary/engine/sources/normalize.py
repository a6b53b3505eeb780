"""Normalisation: turn any MCP ``CallToolResult`` into a list of :class:`~tributary.engine.model.Hit`.

One pure function, :func:`normalize_result`, with no I/O. It understands:

* ``structured_content``: a list of items, a dict holding a list under a
  well-known key (``results``, ``items``, ``hits``, ``matches``, ``data``,
  ``result`` …), or a single object / scalar;
* text blocks that carry a JSON array/object, grep-style ``path:line:text`` output
  (one hit per file, :mod:`tributary.engine.sources.grep_output`), or plain text (one hit per
  block, split only at explicit separator lines such as ``---``);
* a "no matches"-style answer, in text or as the one structured item, is no hit;
* ``resource_link`` blocks and embedded resources (text resources become hits;
  binary blobs are noted, never decoded as text);
* block annotations: ``priority`` → ``Hit.priority``, ``lastModified`` →
  ``Hit.timestamp``.

Item dicts are mapped field by field (title/name, content/text/snippet/body/code,
path/file/…, start_line/line/end_line, uri/url, score/similarity/relevance,
timestamp/date/last_modified/updated_at, rank: a stated 1-based rank instead of the
item's position); what is left goes to ``Hit.metadata``.
An answer object's ``warnings`` (a list of strings) and ``degraded`` flag say what
the server could not do this time (the built-in files server answering on keywords
while its model loads): they come back as :attr:`Normalized.warnings` and
:attr:`Normalized.degraded`, so the engine can say so and not cache such an answer.
Output is capped (:class:`NormalizeLimits`, default 2 MB of text and 1,000 hits)
with a note. An item whose text is not valid UTF-8 is dropped with a note (the
answer's other items stand). An ``isError`` result, malformed data or an answer
whose every item is bad raises :class:`NormalizeError` — the caller turns it into
that source's error; nothing here is allowed to crash a search.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from mcp import types

from tributary.engine.errors import TributaryError
from tributary.engine.model import Hit, ScoreParts, make_hit_id
from tributary.engine.sources.file_list import listed_files, listed_paths
from tributary.engine.sources.grep_output import by_file, grep_files
from tributary.engine.sources.hit_split import MAX_HIT_CHARS, MAX_PARTS, says_nothing, split_text

__all__ = ["NormalizeError", "NormalizeLimits", "Normalized", "normalize_result"]

LIST_KEYS = ("results", "items", "hits", "matches", "data", "documents", "chunks",
             "entities", "nodes", "files", "records", "result")
_LIST_KEY_SET = frozenset(LIST_KEYS)
MAX_WARNINGS = 10  # a server's warnings kept per answer
MAX_WARNING_CHARS = 300
TITLE_KEYS = ("title", "name", "symbol", "heading", "label")
CONTENT_KEYS = ("content", "text", "snippet", "body", "code", "chunk", "document",
                "summary", "description", "observations", "message")
PATH_KEYS = ("path", "file", "file_path", "filepath", "filename", "relative_path")
START_KEYS = ("start_line", "line", "line_start", "lineno", "start")
END_KEYS = ("end_line", "line_end", "end")
URI_KEYS = ("uri", "url", "link", "href")
SCORE_KEYS = ("score", "similarity", "relevance", "_score")
RANK_KEYS = ("rank",)  # a server that states each item's rank (items of several kinds)
TIME_KEYS = ("timestamp", "date", "last_modified", "lastModified", "updated_at",
             "updatedAt", "modified", "created_at")

# key → (category, priority): lower priority wins when an item has several.
_CATEGORY: dict[str, tuple[str, int]] = {
    key: (category, rank)
    for category, keys in (
        ("title", TITLE_KEYS), ("content", CONTENT_KEYS), ("path", PATH_KEYS),
        ("start", START_KEYS), ("end", END_KEYS), ("uri", URI_KEYS), ("score", SCORE_KEYS),
        ("time", TIME_KEYS), ("rank", RANK_KEYS),
    )
    for rank, key in enumerate(keys)
}

# A separator line on its own: ---, ***, ===, or longer runs of them.
_SEPARATOR = re.compile(r"\n[ \t]*(?:-{3,}|\*{3,}|={3,})[ \t]*\n")


class NormalizeError(TributaryError):
    """The result cannot be turned into hits; becomes the source's error text."""


class BadText(NormalizeError):
    """One item's text is not valid Unicode: that item is dropped, not the answer."""


@dataclass(frozen=True, slots=True)
class NormalizeLimits:
    max_chars: int = 2_000_000  # total text kept across all hits
    max_hits: int = 1_000
    max_parse_chars: int = 2_000_000  # never JSON-parsed above; lines read to this


@dataclass(slots=True)
class Normalized:
    hits: list[Hit] = field(default_factory=list)
    note: str | None = None
    warnings: list[str] = field(default_factory=list)  # the server's own, as it gave them
    degraded: bool = False  # the server said this answer is weaker than it normally gives


@dataclass(slots=True)
class _Item:
    """One raw item before it becomes a Hit."""

    value: Any
    annotations: types.Annotations | None = None
    uri: str | None = None
    title: str | None = None
    mime_type: str | None = None


def normalize_result(
    result: types.CallToolResult,
    *,
    source: str,
    tool: str,
    limits: NormalizeLimits | None = None,
) -> Normalized:
    """Map ``result`` onto hits (ranked 1.. in answer order) plus an optional note.

    Raises :class:`NormalizeError` for ``isError`` results, malformed data and
    non-UTF-8 text.
    """
    limits = limits or NormalizeLimits()
    if result.is_error:
        raise NormalizeError(f"tool reported an error: {_error_text(result)}")
    notes: list[str] = []
    try:
        items = list(_collect_items(result, limits, notes))
        hits, capped = _build_hits(items, source, tool, limits)
    except NormalizeError:
        raise
    except Exception as exc:  # any surprise in a server's data is that source's error
        raise NormalizeError(f"malformed result: {type(exc).__name__}: {exc}") from exc
    if capped:
        notes.append(capped)
    warnings, degraded = _answer_flags(result, limits)
    return Normalized(hits=hits, note="; ".join(notes) or None, warnings=warnings, degraded=degraded)


def _answer_flags(result: types.CallToolResult, limits: NormalizeLimits) -> tuple[list[str], bool]:
    """The answer object's ``warnings`` and ``degraded`` flag (from its structured
    content, or a lone JSON text block); bad or missing ones are ignored."""
    data: Any = result.structured_content
    if data is None and len(result.content) == 1 and isinstance(result.content[0], types.TextContent):
        text = result.content[0].text.strip()
        if (text.startswith("{") and len(text) <= limits.max_parse_chars
                and ('"warnings"' in text or '"degraded"' in text)):
            try:
                data = json.loads(text)
            except ValueError:
                data = None
    if not isinstance(data, dict):
        return [], False
    raw = data.get("warnings")
    warnings = [w.strip()[:MAX_WARNING_CHARS].encode("utf-8", "replace").decode("utf-8")
                for w in (raw if isinstance(raw, list) else []) if isinstance(w, str) and w.strip()]
    return warnings[:MAX_WARNINGS], data.get("degraded") is True


def _error_text(result: types.CallToolResult) -> str:
    texts = [b.text for b in result.content if isinstance(b, types.TextContent)]
    text = " ".join(t.strip() for t in texts if t.strip()) or "no message"
    # The reason is kept whatever its bytes: lone surrogates become "?".
    return text[:500].encode("utf-8", "replace").decode("utf-8")


def _collect_items(
    result: types.CallToolResult, limits: NormalizeLimits, notes: list[str]
) -> Iterator[_Item]:
    structured = _structured_items(result.structured_content)
    # MCPServer repeats structured output as JSON text blocks: use one or the other.
    use_text = not structured
    nothing = _says_nothing(structured) if structured else None
    if nothing is None and use_text and len(result.content) == 1 \
            and isinstance(result.content[0], types.TextContent) \
            and says_nothing(result.content[0].text):
        nothing = result.content[0].text.strip()
    if nothing is not None:
        notes.append(f"no hits: the server said {nothing!r}")
        return
    bare = _bare_text(structured)
    if bare is not None:  # read as the text it is: grep output, a list of paths, prose
        yield from _text_items(types.TextContent(type="text", text=bare), limits, notes)
    else:
        yield from (_Item(v) for v in _line_matches(structured) or _path_strings(structured) or structured)
    skipped: dict[str, int] = {}
    for block in result.content:
        if isinstance(block, types.TextContent):
            if use_text:
                yield from _text_items(block, limits, notes)
        elif isinstance(block, types.ResourceLink):
            yield _Item(
                {"title": block.title or block.name, "content": block.description or "",
                 "uri": block.uri, "mime_type": block.mime_type, "size": block.size},
                annotations=block.annotations,
            )
        elif isinstance(block, types.EmbeddedResource):
            res = block.resource
            if isinstance(res, types.TextResourceContents):
                yield _Item(res.text, annotations=block.annotations, uri=res.uri,
                            title=_basename(res.uri), mime_type=res.mime_type)
            else:
                skipped["binary resource"] = skipped.get("binary resource", 0) + 1
        else:
            kind = getattr(block, "type", "unknown")
            skipped[f"{kind} block"] = skipped.get(f"{kind} block", 0) + 1
    if skipped:
        notes.append("skipped " + ", ".join(f"{n} {k}(s)" for k, n in skipped.items()))


def _structured_items(data: Any) -> list[Any]:
    if data is None:
        return []
    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        if _LIST_KEY_SET.isdisjoint(data):  # the common case, one item: skip the key scan
            return [data]
        for key in LIST_KEYS:
            value = data.get(key)
            if isinstance(value, list):
                return value
        if set(data) == {"result"}:  # MCPServer wraps non-object returns as {"result": x}
            return _structured_items(data["result"]) if data["result"] is not None else []
        return [data]
    return [data]


def _line_matches(items: list[Any]) -> list[dict[str, Any]] | None:
    """A grep tool's structured answer, one item per matched line (code-index-mcp's
    ``{"file", "line", "text"}``), as one item per file, as its text output is read;
    None unless every item is a path, a line number and one line of text."""
    if len(items) < 2:
        return None
    lines: list[tuple[str, int, str, bool]] = []
    for value in items:
        if not isinstance(value, dict):
            return None
        picked = _pick(value)
        path, number, text = picked.get("path"), picked.get("start"), picked.get("content")
        if (set(picked) - {"path", "start", "end", "content"} or not isinstance(path, str)
                or not isinstance(text, str) or "\n" in text.strip()
                or (number := _as_int(number)) is None
                or _as_int(picked.get("end", number)) != number):
            return None
        lines.append((path, number, text.rstrip("\r\n"), True))
    return by_file(lines)


def _path_strings(items: list[Any]) -> list[dict[str, Any]] | None:
    """A structured list of file paths (code-index-mcp's ``find_files`` answers
    ``{"result": ["tests/test_pager.py"]}``) as one item per file, as the same list in
    text is read; None unless every item is one path."""
    if not items or not all(isinstance(v, str) and "\n" not in v for v in items):
        return None
    return listed_paths(line for item in items for line in item.splitlines())


def _bare_text(items: list[Any]) -> str | None:
    """The text of a one-item structured answer that holds nothing else: server-filesystem
    puts its whole answer in ``{"content": "..."}``."""
    if len(items) != 1 or not isinstance(items[0], dict):
        return None
    value = items[0]
    picked = _pick(value)
    if set(picked) != {"content"} or set(value) - set(_CATEGORY):
        return None
    content = picked["content"]
    return content if isinstance(content, str) else None


def _says_nothing(items: list[Any]) -> str | None:
    """What a one-item answer says when it says there is nothing ("No matches found",
    "0 results", an empty list), else None. server-filesystem puts its "No matches
    found" in structured content as ``{"content": "No matches found"}``."""
    if len(items) != 1:
        return None
    value = items[0]
    if isinstance(value, dict):
        picked = _pick(value)
        if set(picked) - {"content"} or set(value) - set(_CATEGORY):
            return None  # a title, path, uri or other field: a real item
        value = picked.get("content")
    if isinstance(value, list) and not value:
        return "[]"
    if isinstance(value, str):
        stripped = value.strip()
        if stripped in ("", "[]", "{}") or says_nothing(stripped):
            return stripped
    return None


def _text_items(
    block: types.TextContent, limits: NormalizeLimits, notes: list[str]
) -> Iterator[_Item]:
    text = block.text
    stripped = text.strip()
    if not stripped:
        return
    if stripped[0] in "[{" and len(stripped) <= limits.max_parse_chars:
        try:
            parsed = json.loads(stripped)
        except ValueError:
            parsed = None
        if isinstance(parsed, list | dict):
            for value in _structured_items(parsed):
                yield _Item(value, annotations=block.annotations)
            return
    head = _whole_lines(text, limits.max_parse_chars)
    files = (grep_files(head) if ":" in head else None) or listed_files(head)
    if files:
        if len(head) < len(text):
            notes.append(f"a {len(text):,}-character answer read to its first "
                         f"{len(head):,} characters")
        for value in files:
            yield _Item(value, annotations=block.annotations)
        return
    for part in _split_text(text):
        yield _Item(part, annotations=block.annotations)


def _whole_lines(text: str, limit: int) -> str:
    """``text``, or its whole lines within the first ``limit`` characters: a grep
    flood (a common name matched in every file) is read as the files it lists first,
    not cut into parts that all bear its first line's name."""
    if len(text) <= limit:
        return text
    return text[:limit].rpartition("\n")[0]


def _split_text(text: str) -> list[str]:
    parts = [p.strip("\n") for p in _SEPARATOR.split(text)]
    return [p for p in parts if p.strip()] or [text]


def _build_hits(
    items: list[_Item], source: str, tool: str, limits: NormalizeLimits
) -> tuple[list[Hit], str | None]:
    hits: list[Hit] = []
    seen: set[str] = set()
    budget = limits.max_chars
    truncated = 0
    bad: dict[str, int] = {}  # reason → items dropped for bad text
    split_notes: list[str] = []
    items = [i for i in items if i.value is not None and i.value != ""]
    for item in items:
        if len(hits) >= limits.max_hits:
            return hits, f"output capped at {limits.max_hits} hits ({len(items) - len(hits)} dropped)"
        if budget <= 0:
            return hits, (f"output capped at {limits.max_chars:,} characters "
                          f"({len(items) - len(hits)} items dropped)")
        try:
            whole = _to_hit(item, source, tool, rank=len(hits) + 1)
        except BadText as exc:
            bad[str(exc)] = bad.get(str(exc), 0) + 1
            continue
        for hit in _parts(whole, source, tool, len(hits) + 1, split_notes):
            if len(hits) >= limits.max_hits or budget <= 0:
                break
            budget, truncated = _take(hit, hits, seen, budget, truncated, source, tool)
    dropped = "; ".join(f"{n} hit{'s' * (n > 1)} dropped: {why}" for why, n in bad.items())
    dropped = "; ".join(filter(None, (dropped, *split_notes)))
    if bad and not hits:
        raise NormalizeError(f"{next(iter(bad))} (every hit)")
    if truncated:
        capped = f"output capped at {limits.max_chars:,} characters (content truncated)"
        return hits, "; ".join(filter(None, (dropped, capped)))
    return hits, dropped or None


def _take(
    hit: Hit, hits: list[Hit], seen: set[str], budget: int, truncated: int, source: str, tool: str
) -> tuple[int, int]:
    """Append ``hit`` within the character budget; the budget and truncation count left."""
    if len(hit.content) > budget:
        hit.content = hit.content[:budget]
        hit.metadata["truncated"] = True
        truncated += 1
    budget -= len(hit.content) + len(hit.title)
    if hit.id in seen:  # identical items in one answer still need distinct ids
        hit.id = make_hit_id(source, tool, hit.id, hit.source_rank)
    seen.add(hit.id)
    hits.append(hit)
    return budget, truncated


def _parts(hit: Hit, source: str, tool: str, rank: int, notes: list[str]) -> list[Hit]:
    """``hit``, or its parts when its content is huge (:mod:`tributary.engine.sources.hit_split`)."""
    if len(hit.content) <= MAX_HIT_CHARS:
        return [hit]
    parts, complete = split_text(hit.content, max_parts=MAX_PARTS)
    notes.append(f"a {len(hit.content):,}-character hit split into {len(parts)} parts"
                 if complete else
                 f"a {len(hit.content):,}-character hit cut to its first {len(parts)} parts")
    out = []
    for i, part in enumerate(parts):
        start = hit.start_line + part.first_line if hit.start_line is not None else None
        end = start + part.text.count("\n") if start is not None else None
        title = f"{hit.title} (part {i + 1} of {len(parts)}{'' if complete else '+'})"
        out.append(replace(
            hit, id=make_hit_id(source, tool, hit.path, start, end, hit.uri, title, part.text),
            title=title, content=part.text, start_line=start, end_line=end, source_rank=rank + i,
            metadata={**hit.metadata, "part": i + 1}, parts=ScoreParts(),
        ))
    return out


def _to_hit(item: _Item, source: str, tool: str, rank: int) -> Hit:
    value = item.value
    fields: dict[str, Any] = value if isinstance(value, dict) else {"content": value}
    picked = _pick(fields)
    title = _as_text(picked.get("title")) or item.title
    content = _content(picked["content"]) if "content" in picked else _dump(fields)
    path = _as_text(picked.get("path"))
    uri = _as_text(picked.get("uri")) or item.uri
    start = _as_int(picked.get("start"))
    end = _as_int(picked.get("end"))
    score = _as_float(picked.get("score"))
    stamp = parse_timestamp(picked["time"]) if "time" in picked else None
    stated = _as_int(picked.get("rank"))
    if stated is not None and stated > 0:
        rank = stated
    priority: float | None = None
    if item.annotations is not None:
        priority = item.annotations.priority
        if stamp is None and item.annotations.last_modified:
            stamp = parse_timestamp(item.annotations.last_modified)
    metadata = {k: v for k, v in fields.items() if k not in _CATEGORY and v is not None}
    if item.mime_type:
        metadata.setdefault("mime_type", item.mime_type)
    if not title:
        title = _default_title(path, uri, content)
    for text in (title, content, path, uri):
        if text:
            _check_text(text)
    if end is not None and start is not None and end < start:
        end = start
    return Hit(
        id=make_hit_id(source, tool, path, start, end, uri, title, content),
        source=source, tool=tool, title=title, content=content, path=path,
        start_line=start, end_line=end, uri=uri, timestamp=stamp, source_score=score,
        source_rank=rank, priority=priority, metadata=metadata,
    )


def _pick(fields: dict[str, Any]) -> dict[str, Any]:
    """Per category, the value of the highest-priority key present (one pass over the item)."""
    best: dict[str, tuple[int, Any]] = {}
    for key, value in fields.items():
        hit = _CATEGORY.get(key)
        if hit is None or value is None:
            continue
        category, rank = hit
        if value == "" and category != "content":
            continue
        current = best.get(category)
        if current is None or rank < current[0]:
            best[category] = (rank, value)
    return {category: value for category, (_, value) in best.items()}


def _content(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "\n".join(value)
    return _dump(value)


def _dump(value: Any) -> str:
    # No content-like field: keep the whole item as compact JSON so nothing is lost.
    return json.dumps(value, ensure_ascii=False, default=str)


def _default_title(path: str | None, uri: str | None, content: str) -> str:
    if path:
        return path
    if uri:
        return _basename(uri) or uri
    first = next((line.strip() for line in content.splitlines() if line.strip()), "")
    return first[:120]


def _basename(uri: str) -> str:
    return uri.rstrip("/").rsplit("/", 1)[-1]


def _as_text(value: Any) -> str | None:
    if value is None or isinstance(value, dict | list):
        return None
    return str(value)


def _as_int(value: Any) -> int | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _as_float(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if number == number else None  # drop NaN


def parse_timestamp(value: Any) -> datetime | None:
    """ISO 8601 text or epoch seconds/milliseconds → an aware datetime (UTC if naive)."""
    try:
        if isinstance(value, bool):
            return None
        if isinstance(value, int | float):
            seconds = value / 1000 if value > 1e11 else value
            return datetime.fromtimestamp(seconds, UTC)
        if isinstance(value, str):
            stamp = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
            return stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)
    except (ValueError, OverflowError, OSError):
        return None
    return None


def _check_text(text: str) -> None:
    if text.isascii():
        return
    # A decoder in "replace" mode leaves U+FFFD; JSON escapes can smuggle lone surrogates.
    if "\ufffd" in text:
        raise BadText("content is not valid UTF-8")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise BadText("content is not valid UTF-8 (lone surrogate)") from exc


UNASKED_NOTE = "called without the question: its items rank after the answers to it"


def rank_after_answers(hits: list[Hit], top_k: int) -> None:
    """Rank a call that was not sent the question (a named tool such as ``git_log``
    with fixed arguments) after the ``top_k`` places a source that was sent it may
    fill: its order is the same for every search and says nothing of this one, and
    fused by rank its first item came level with the best answer."""
    for hit in hits:
        hit.source_rank = top_k + (hit.source_rank or 1)


_ALTERNATIVES = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,99}(?:\|[A-Za-z_][A-Za-z0-9_]{0,99}){0,15}")


def rank_by_pattern_words(hits: list[Hit], pattern: str) -> None:
    """Rank a grep tool's hits by the words of ``pattern`` they hold, when it is the
    alternation of a question's names that Tributary sent (``fixtures|finalized|test``).

    Grep answers in the order it walks the files, which says nothing of the question:
    fused by that rank, the first files of ``bench/`` that happened to say "test" came
    among the best answers. Each word counts by how few of the hits hold it (a word in
    every file tells them apart least), a hit with more matched lines ahead on a tie,
    and the answer's order after that."""
    if len(hits) < 2 or _ALTERNATIVES.fullmatch(pattern) is None:
        return
    words = list(dict.fromkeys(word.lower() for word in pattern.split("|")))
    _rank_by_words(hits, words, [(hit.content or "").lower() for hit in hits])


def merged(answers: Sequence[Normalized]) -> Normalized:
    """The answers of one search's calls as one: their hits in order, an item more than
    one call found kept once (the first), every note and warning."""
    if len(answers) == 1:
        return answers[0]
    hits: list[Hit] = []
    seen: set[str] = set()
    for answer in answers:
        for hit in answer.hits:
            if hit.id not in seen:
                seen.add(hit.id)
                hits.append(hit)
    notes = list(dict.fromkeys(a.note for a in answers if a.note))
    warnings = list(dict.fromkeys(w for a in answers for w in a.warnings))
    return Normalized(hits, "; ".join(notes) or None, warnings, any(a.degraded for a in answers))


def rank_by_keywords(hits: list[Hit], words: Sequence[str]) -> None:
    """Rank a substring search's hits, gathered by asking it each of ``words``, by the
    words their title and text hold; words count as in ``rank_by_pattern_words``."""
    if len(hits) < 2 or len(words) < 2:
        return
    _rank_by_words(hits, list(dict.fromkeys(w.lower() for w in words)),
                   [f"{hit.title}\n{hit.content}".lower() for hit in hits])


_NAME_GLOB = re.compile(r"\*\*/\*(?:\{([^{}*]{1,2000})\}|([^{}*,/]{1,200}))\*")


def rank_by_glob_words(hits: list[Hit], glob: str) -> None:
    """Rank a file-name search's hits by the words of ``glob`` their file names hold,
    when it is the pattern Tributary sent (``**/*{echo,via,pager}*``): the server lists
    the files in the order it walks them, so ``test_echo.py`` came before
    ``test_echo_via_pager.py``. Words count as in ``rank_by_pattern_words``."""
    found = _NAME_GLOB.fullmatch(glob)
    if len(hits) < 2 or found is None:
        return
    words = list(dict.fromkeys((found.group(1) or found.group(2)).split(",")))
    names = [(hit.path or hit.content or "").replace("\\", "/").rsplit("/", 1)[-1].lower() for hit in hits]
    _rank_by_words(hits, words, names)


def _rank_by_words(hits: list[Hit], words: list[str], texts: list[str]) -> None:
    held = [frozenset(w for w in words if w in text) for text in texts]
    count = {w: sum(w in h for h in held) for w in words}
    weight = {w: math.log(1 + len(hits) / n) for w, n in count.items() if n}

    def strength(n: int) -> tuple[float, int, int]:
        matches = hits[n].metadata.get("matches")
        return sum(weight[w] for w in held[n]), matches if isinstance(matches, int) else 0, -n

    order = sorted(range(len(hits)), key=strength, reverse=True)
    ranked = [hits[n] for n in order]
    for rank, hit in enumerate(ranked, 1):
        hit.source_rank = rank
    hits[:] = ranked
