"""How one chunk looks in each context format: its frame (head, tail) and escaped body.

Frames carry the attribution (source, location, score, treatment) and no position
number; a past task (``model.is_task``) is framed as a commit, its message as prose, so a chunk's cost does not depend on where the budget puts it. Bodies are
escaped so any content stays data: XML bodies sit in CDATA (``]]>`` split across two
sections; characters XML 1.0 forbids replaced by U+FFFD), Markdown bodies sit in a fence
longer than any backtick run inside them.
"""

from __future__ import annotations

import re

from tributary.engine.model import ContextFormat, Hit, is_task, repository_of

from .text import language_of

_XML_INVALID = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_BACKTICKS = re.compile(r"`{3,}")
_MD_LANG = {"python": "python", "javascript": "javascript", "typescript": "typescript", "go": "go",
            "rust": "rust", "java": "java", "shell": "bash", "yaml": "yaml", "json": "json",
            "toml": "toml", "markdown": "markdown", "c": "c", "cpp": "cpp", "ruby": "ruby"}


def _xml_text(text: str) -> str:
    return _XML_INVALID.sub("\ufffd", text)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def fence_for(content: str) -> str:
    """A backtick fence longer than the longest run of backticks in ``content``."""
    if "```" not in content:  # nearly always: skip the regex scan
        return "```"
    longest = max((len(m.group(0)) for m in _BACKTICKS.finditer(content)), default=0)
    return "`" * max(3, longest + 1)


def body(content: str, fmt: ContextFormat) -> str:
    """``content`` made safe for ``fmt``."""
    if fmt is ContextFormat.XML:
        return _xml_text(content).replace("]]>", "]]]]><![CDATA[>")
    return content


def frame_pieces(
    hit: Hit, fmt: ContextFormat, treatment: str, content: str, named: bool = False
) -> tuple[str, str, str, str]:
    """The lines around a chunk's body: its head in three pieces — up to the score, the
    score, the rest — and its tail. ``named``: the head says which indexed repository
    the chunk comes from (the context holds several's).

    The score is the only part of a head that changes from query to query, and the
    tokenizer splits at the whitespace or punctuation on either side of it, so a head
    costs the sum of its pieces' counts, and the pieces around the score are counted
    once for all the queries that return the chunk (``tributary.engine.pipeline.budget``).
    """
    score = f"{hit.score:.4f}"
    if is_task(hit):
        return _commit_pieces(hit, fmt, treatment, score)
    location = _one_line(hit.location)
    repo = repository_of(hit) if named else None
    if fmt is ContextFormat.XML:
        attrs = {"treatment": treatment}
        scope, part = scope_and_part(hit)
        if scope is not None:
            attrs["in"] = scope
        if part is not None:
            attrs["part"] = part.removeprefix("part ")
        if repo is not None:
            attrs["repo"] = repo
        if hit.path:
            attrs["path"] = hit.path
        if hit.start_line is not None:
            attrs["lines"] = f"{hit.start_line}-{hit.end_line if hit.end_line is not None else hit.start_line}"
        if hit.uri:
            attrs["uri"] = hit.uri
        before = f"<chunk source={_attr(hit.source)} location={_attr(location)} score=\""
        after = "\" " + " ".join(f"{k}={_attr(v)}" for k, v in attrs.items()) + "><![CDATA["
        return before, score, after, "]]></chunk>"
    note = "" if treatment == "full" else f", {treatment}"
    where = "" if repo is None else f"in {_one_line(repo)}"
    said = enclosing(hit)
    named_at = location if said is None else f"{location} · {said}"
    if fmt is ContextFormat.MARKDOWN:
        fence = fence_for(content)
        language = _fence_language(hit)
        source = f"{_one_line(hit.source)} · {where}" if where else _one_line(hit.source)
        return f"### {named_at}\n_{source} · score ", score, f"{note}_\n{fence}{language}", fence
    source = f"{_one_line(hit.source)} | {where}" if where else _one_line(hit.source)
    return f"=== {named_at} | {source} | score ", score, f"{note} ===", "=== end ==="


NAME_CHARS = 120  # a longer title is a sentence, not a name
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")  # Class.method, module.function
_PART = re.compile(r" ?\((part \d+ of \d+\+?)\)$")


def shown_name(hit: Hit) -> str | None:
    """What a chunk of code defines (``Option.get_help_extra``, a document's section),
    when its title says more than its location: a method's chunk shows ``def
    get_help_extra(self, ctx)`` without its class. None for a title that is the path."""
    title = _one_line(hit.title or "")
    if hit.path and title.startswith(hit.path):  # a path with more: "a.py (part 2 of 3)"
        title = title[len(hit.path):].strip()
    if not title or len(title) > NAME_CHARS or title in hit.location:
        return None
    return title


def commit_line(hit: Hit) -> str:
    """``commit <short hash> · <date> · <author>`` of a task hit (what it has of them)."""
    meta = hit.metadata
    ident = str(meta.get("short_id") or meta.get("id") or "")
    parts = [f"commit {ident}" if ident else "task"]
    if hit.timestamp is not None:
        parts.append(hit.timestamp.date().isoformat())
    if author := meta.get("author"):
        parts.append(str(author))
    return _one_line(" · ".join(parts))


def _commit_pieces(hit: Hit, fmt: ContextFormat, treatment: str, score: str) -> tuple[str, str, str, str]:
    """A commit reads as a commit: its subject, hash and date, then the message as prose
    (no code fence: a message is not a file's code)."""
    subject = _one_line(hit.title)
    note = "" if treatment == "full" else f", {treatment}"
    if fmt is ContextFormat.XML:
        meta = hit.metadata
        attrs = {"id": str(meta.get("id") or ""), "treatment": treatment}
        if hit.timestamp is not None:
            attrs["date"] = hit.timestamp.date().isoformat()
        if author := meta.get("author"):
            attrs["author"] = str(author)
        before = f"<commit source={_attr(hit.source)} subject={_attr(subject)} score=\""
        after = "\" " + " ".join(f"{k}={_attr(v)}" for k, v in attrs.items()) + "><![CDATA["
        return before, score, after, "]]></commit>"
    if fmt is ContextFormat.MARKDOWN:
        return f"### {subject}\n_{commit_line(hit)} · {_one_line(hit.source)} · score ", score, f"{note}_", ""
    return f"=== {commit_line(hit)} | {_one_line(hit.source)} | score ", score, f"{note} ===", "=== end ==="


def _fence_language(hit: Hit) -> str:
    """The Markdown fence's language: the file's when the chunk quotes the file; none for
    text *about* a file (``dedup.is_file_reference``), such as the commit titles a task
    history returns for ``dedup.py``, which are not Python."""
    from .dedup import is_file_reference  # not at import: dedup loads numpy

    if is_file_reference(hit):
        return ""
    return _MD_LANG.get(language_of(hit.path) or "", "")


def _attr(value: str) -> str:
    """``value`` as a quoted XML attribute. (``xml.sax.saxutils`` is imported here, not
    at the top: it pulls in ``urllib.request``, which the CLI's other paths never need.)"""
    from xml.sax.saxutils import quoteattr

    return quoteattr(_xml_text(value))


# The question as the XML context's attribute keeps this many characters: a pasted issue
# whole would spend the budget on repeating what the caller sent.
QUERY_ATTRIBUTE_CHARS = 200


def wrapper(fmt: ContextFormat, query: str) -> tuple[str, str]:
    """Text before the first and after the last chunk."""
    if fmt is ContextFormat.XML:
        return f"<context query={_attr(query_attribute(query))}>", "</context>"
    return "", ""


def query_attribute(query: str) -> str:
    """``query`` on one line, cut after ``QUERY_ATTRIBUTE_CHARS`` characters at a word
    (``…`` marks the cut): enough to say which question the context answers."""
    line = _one_line(query)
    if len(line) <= QUERY_ATTRIBUTE_CHARS:
        return line
    cut = line[:QUERY_ATTRIBUTE_CHARS]
    space = cut.rfind(" ")
    return (cut[:space] if space > QUERY_ATTRIBUTE_CHARS // 2 else cut) + "…"


def render(head: str, text: str, tail: str) -> str:
    """One chunk: parts joined by newlines, so token counts add up exactly."""
    return "\n".join(part for part in (head, text, tail) if part)


def enclosing(hit: Hit) -> str | None:
    """Where a chunk's code lives that its own lines do not say, as its head reads it:
    ``in Option`` for ``Option.get_help_extra`` (whose chunk shows ``def
    get_help_extra(self, ctx)``), ``in Options`` for a section under that heading, and
    which part of a long function it is (``in Option, part 1 of 2``; ``part 2 of 3``).
    None for a top-level function or class: its first line says all."""
    scope, part = scope_and_part(hit)
    said = [piece for piece in (f"in {scope}" if scope else None, part) if piece]
    return ", ".join(said) or None


def scope_and_part(hit: Hit) -> tuple[str | None, str | None]:
    """The class or headings a chunk lies in (``Option``, ``Options``), and which part
    of a long definition it is (``part 1 of 2``), where its title says so."""
    name = shown_name(hit)
    if name is None:
        return None, None
    part = _PART.search(name)
    if part is not None:
        name = name[: part.start()]
    scope = (name.rsplit(" > ", 1)[0] if " > " in name
             else name.rsplit(".", 1)[0] if _DOTTED.fullmatch(name) else None)
    return scope or None, part.group(1) if part else None
