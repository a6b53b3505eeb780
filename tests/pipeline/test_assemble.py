"""Context assembly: well-formed, attributed, escaped, deterministic, exactly counted."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from tests.pipeline.helpers import FUNC_A, hit
from tributary.engine.model import ContextFormat
from tributary.engine.pipeline.assemble import assemble
from tributary.engine.pipeline.budget import plan_budget
from tributary.engine.pipeline.formats import fence_for
from tributary.engine.pipeline.tokens import count_tokens, fill_tokens

NASTY = 'x = "]]>" and y = "<tag attr=\'&amp;\'>"\nz = "\x01\x0b bell \x07"\n```python\nnested fence\n````\nend'


def _hits() -> list:  # type: ignore[type-arg]
    hits = [
        hit("files", 1, FUNC_A, path="src/conf.py", lines=(10, 18)),
        hit("web", 1, NASTY, uri="https://example.org/?a=1&b=<2>"),
        hit("tasks", 2, "Fix the parser crash when the file is empty (#42).", title='Issue "42" <bug>'),
    ]
    fill_tokens(hits)
    for i, h in enumerate(hits):
        h.score = 0.9 - i * 0.1
    return hits


def _context(fmt: ContextFormat, budget: int = 4000):  # type: ignore[no-untyped-def]
    plan = plan_budget(_hits(), budget=budget, fmt=fmt, query='parse "config" & <tags>')
    return assemble(plan, fmt, 'parse "config" & <tags>')


def test_xml_parses_and_round_trips_content() -> None:
    context = _context(ContextFormat.XML)
    root = ET.fromstring(context.text)
    assert root.tag == "context" and root.get("query") == 'parse "config" & <tags>'
    chunks = root.findall("chunk")
    assert [c.get("source") for c in chunks] == ["files", "web", "tasks"]
    assert chunks[0].get("path") == "src/conf.py" and chunks[0].get("lines") == "10-18"
    assert chunks[0].get("score") == "0.9000" and chunks[0].get("treatment") == "full"
    assert (chunks[0].text or "").strip("\n") == FUNC_A.strip("\n")
    web = (chunks[1].text or "").strip("\n")
    assert ']]>' in web and "<tag attr='&amp;'>" in web
    assert "\x01" not in web and "\ufffd" in web  # XML 1.0 cannot carry control characters
    assert chunks[1].get("uri") == "https://example.org/?a=1&b=<2>"


def test_a_pasted_issue_is_not_repeated_whole_in_the_xml_context() -> None:
    """The caller sent the issue; repeated whole in the wrapper, a long one took the
    budget and the context held no chunk at all."""
    issue = "Dynamically adding xfail marker no longer ignores failure\n\n" + "traceback line\n" * 2000
    plan = plan_budget(_hits(), budget=1000, fmt=ContextFormat.XML, query=issue)
    root = ET.fromstring(assemble(plan, ContextFormat.XML, issue).text)
    asked = root.get("query") or ""
    assert asked.startswith("Dynamically adding xfail marker no longer ignores failure traceback line")
    assert asked.endswith("…") and len(asked) <= 201
    assert len(root.findall("chunk")) == 3


def test_a_chunk_is_named_by_what_it_defines_where_its_location_does_not_say() -> None:
    """A method's chunk shows ``def get_help_extra(self, ctx)``: its head says whose. A
    function's own first line names it, so its head does not again."""
    from tributary.engine.pipeline.formats import enclosing, shown_name

    method = hit("files", 1, "    def get_help_extra(self, ctx):\n        return {}", path="src/core.py",
                 lines=(3383, 3384), title="Option.get_help_extra")
    by_path = hit("fs", 2, "x = 1", path="src/util.py")  # its title is its path
    part = hit("grep", 3, "y = 2", path="src/big.py", lines=(1, 2), title="src/big.py (part 2 of 3)")
    assert [shown_name(h) for h in (method, by_path, part)] == ["Option.get_help_extra", None, "(part 2 of 3)"]
    section = hit("files", 5, "## Defaults", path="docs/options.md", lines=(3, 9), title="Options > Defaults")
    split = hit("files", 6, "x", path="src/core.py", lines=(5, 9), title="Option.parse (part 1 of 2)")
    version = hit("web", 7, "notes", uri="https://example.org/notes", title="Release 8.1.7")
    assert [enclosing(h) for h in (method, by_path, part, section, split, version)] == [
        "in Option", None, "part 2 of 3", "in Options", "in Option, part 1 of 2", None]
    plain = hit("files", 4, "def parse(text):\n    return text", path="src/parse.py", lines=(1, 2), title="parse")
    hits = [method, by_path, plain]
    fill_tokens(hits)
    for fmt, head in ((ContextFormat.MARKDOWN, "### src/core.py:3383-3384 · in Option\n"),
                      (ContextFormat.PLAIN, "=== src/core.py:3383-3384 · in Option | files"),
                      (ContextFormat.XML, 'in="Option"')):
        text = assemble(plan_budget(hits, budget=4000, fmt=fmt, query="q"), fmt, "q").text
        assert head in text, fmt
        assert text.count(" · in ") + text.count(' in="') == 1  # the function's def line says all
    xml = assemble(plan_budget([split, part], budget=4000, fmt=ContextFormat.XML, query="q"), ContextFormat.XML, "q").text
    assert 'in="Option" part="1 of 2"' in xml and 'part="2 of 3"' in xml
    markdown = assemble(plan_budget([part], budget=4000, fmt=ContextFormat.MARKDOWN, query="q"), ContextFormat.MARKDOWN, "q").text
    assert "### src/big.py:1-2 · part 2 of 3\n" in markdown  # no class to be "in"


def test_markdown_fence_names_the_language_only_of_quoted_code() -> None:
    history = hit("tasks", 1, "Fix the parser crash when the file is empty (#42); cache the result", path="src/conf.py")
    snippet = hit("serena", 1, FUNC_A, path="src/conf.py")  # code without its line range
    quoted = hit("files", 1, FUNC_A, path="src/conf.py", lines=(10, 18))
    hits = [history, snippet, quoted]
    fill_tokens(hits)
    for i, h in enumerate(hits):
        h.score = 0.9 - i * 0.1
    text = assemble(plan_budget(hits, budget=4000, fmt=ContextFormat.MARKDOWN, query="q"),
                    ContextFormat.MARKDOWN, "q").text
    assert "_tasks · score 0.9000_\n```\nFix the parser" in text  # commit titles are not Python
    assert "_serena · score 0.8000_\n```python\n" in text
    assert "_files · score 0.7000_\n```python\n" in text


def test_a_context_of_several_repositories_says_whose_each_chunk_is() -> None:
    """With two repositories indexed, ``pyproject.toml`` or ``tests/test_basic.py`` alone
    does not say which: each head names the repository, in every format; a context of
    one repository's chunks stays as it was."""
    ours = hit("files", 1, FUNC_A, path="src/conf.py", lines=(10, 18), metadata={"repo": "pallets/click"})
    theirs = hit("files", 2, FUNC_A.replace("config", "settings"), path="src/conf.py", lines=(3, 11),
                 metadata={"repo": "pytest-dev/pytest"})
    fill_tokens([ours, theirs])
    ours.score, theirs.score = 0.9, 0.8
    markdown = assemble(plan_budget([ours, theirs], budget=4000, fmt=ContextFormat.MARKDOWN, query="q"),
                        ContextFormat.MARKDOWN, "q").text
    assert "_files · in pallets/click · score 0.9000_" in markdown
    assert "_files · in pytest-dev/pytest · score 0.8000_" in markdown
    plain = assemble(plan_budget([ours, theirs], budget=4000, fmt=ContextFormat.PLAIN, query="q"),
                     ContextFormat.PLAIN, "q").text
    assert "=== src/conf.py:10-18 | files | in pallets/click | score 0.9000 ===" in plain
    xml = assemble(plan_budget([ours, theirs], budget=4000, fmt=ContextFormat.XML, query="q"),
                   ContextFormat.XML, "q").text
    assert {c.get("repo") for c in ET.fromstring(xml)} == {"pallets/click", "pytest-dev/pytest"}
    alone = assemble(plan_budget([ours], budget=4000, fmt=ContextFormat.MARKDOWN, query="q"),
                     ContextFormat.MARKDOWN, "q").text
    assert "_files · score 0.9000_" in alone and "pallets/click" not in alone


def test_markdown_fence_is_longer_than_any_backtick_run() -> None:
    context = _context(ContextFormat.MARKDOWN)
    assert fence_for(NASTY) == "`````"
    assert "\n`````\n" in context.text or context.text.endswith("`````")
    assert "### src/conf.py:10-18\n_files · score 0.9000_\n```python\n" in context.text
    # every opened fence is closed by a fence of the same length
    fences = re.findall(r"^(`{3,})(\w*)$", context.text, flags=re.M)
    opened = [f for f, lang in fences]
    assert len(opened) % 2 == 0


def test_plain_format_attributes_each_chunk() -> None:
    context = _context(ContextFormat.PLAIN)
    assert context.text.startswith("=== src/conf.py:10-18 | files | score 0.9000 ===\n")
    assert context.text.count("=== end ===") == 3


@pytest.mark.parametrize("fmt", list(ContextFormat))
def test_deterministic_and_exactly_counted(fmt: ContextFormat) -> None:
    first, second = _context(fmt), _context(fmt)
    assert first.text.encode() == second.text.encode()
    assert first.token_count == count_tokens(first.text)
    assert [c.hit_id for c in first.chunks] == [c.hit_id for c in second.chunks]
    assert first.chunks[0].location == "src/conf.py:10-18" and first.chunks[0].source == "files"


@pytest.mark.parametrize("fmt", list(ContextFormat))
@pytest.mark.parametrize("budget", [0, 20, 90, 200])
def test_token_count_within_budget(fmt: ContextFormat, budget: int) -> None:
    context = _context(fmt, budget)
    assert context.token_count <= budget
    assert count_tokens(context.text) == context.token_count
    assert context.utilisation <= 1.0
    if fmt is ContextFormat.XML and context.text:
        ET.fromstring(context.text)
