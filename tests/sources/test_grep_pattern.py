"""A question sent to a grep tool as a regular expression of its names
(``query_mode: pattern``), and the mode chosen by itself for a tool that takes one."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from mcp import types

from tests.sources.test_third_party import NODE_MODULES
from tributary.engine.config.schema import ServerConfig
from tributary.engine.sources import SourcePool
from tributary.engine.sources.grep_pattern import PATTERN_WORDS, grep_pattern
from tributary.engine.sources.tools import ToolSelectionError, select_tool

ISSUE = '''Option with multiple=True shows the wrong default in --help

With `show_default=True` the help page prints the tuple's repr.

```python
@click.option("--name", multiple=True, default=("a", "b"), show_default=True)
def cli(name):
    click.echo(name)
```

```
Traceback (most recent call last):
  File "/venv/lib/python3.11/site-packages/click/core.py", line 1014, in get_help_record
    default_string = ", ".join(str(d) for d in default_value)
TypeError: 'PosixPath' object is not iterable
```
'''


def test_an_issue_becomes_its_code_names_as_alternatives() -> None:
    pattern = grep_pattern(ISSUE)
    names = pattern.split("|")
    assert names[0] == "get_help_record"  # a traceback's function, most used
    assert {"show_default", "default_string", "default_value", "PosixPath"} <= set(names)
    assert "cli" not in names and "echo" not in names  # plain words match everywhere
    assert len(names) <= PATTERN_WORDS
    assert re.fullmatch(r"\w+(\|\w+)*", pattern)  # the same in every regex dialect
    re.compile(pattern)


def test_a_phrase_becomes_its_words_and_an_identifier_is_preferred() -> None:
    assert grep_pattern("how are default values shown in help") == "default|values|shown|help"
    assert grep_pattern("where is show_default handled for options") == "show_default"
    assert grep_pattern("why does foo() fail?") == "foo|fail"


def test_a_query_written_as_an_expression_goes_as_it_is() -> None:
    for written in (r"def \w+_help", "^class .*Error", "error:.*", "get|set"):
        assert grep_pattern(written) == written
    # An invalid expression, or one of several lines, is read as words.
    assert grep_pattern("retry(( \\d") == "retry"
    # Nothing but stopwords or punctuation: sent escaped, never a regex error.
    assert grep_pattern("((((") == r"\(\(\(\("
    assert grep_pattern("the of and") == "the of and"


def test_a_sentence_that_mentions_an_escape_is_a_question() -> None:
    # ``\\r`` is regex syntax and the line compiles, but grep would look for the sentence.
    assert grep_pattern(r"capfd.readouterr() converts \r to \n since pytest 6") == (
        "capfd|readouterr|converts|since|pytest")
    assert grep_pattern(r"raise \w+Error\(") == r"raise \w+Error\("


def _grep_tool(pattern_description: str, tool_description: str = "") -> types.Tool:
    return types.Tool(name="search", description=tool_description, inputSchema={
        "type": "object", "required": ["pattern", "path"],
        "properties": {"pattern": {"type": "string", "description": pattern_description},
                       "path": {"type": "string"}}})


def test_a_tool_taking_a_regex_gets_the_pattern_unless_a_mode_is_set() -> None:
    config = ServerConfig(name="rg", tool="search", arguments={"path": "/repo"})
    grep = select_tool(config, [_grep_tool("The search pattern (regex by default)")])
    assert grep.query_mode == "pattern"
    assert grep.arguments(ISSUE, 5)["pattern"].startswith("get_help_record|")
    assert grep.describe() == "search(pattern as a regex of its names) [configured]"
    described = select_tool(config, [_grep_tool("text", "Search with a regular expression")])
    assert described.query_mode == "pattern"
    glob = select_tool(config, [_grep_tool("a glob, not a regex")])
    assert glob.query_mode == "full"
    plain = select_tool(config, [_grep_tool("what to look for")])
    assert plain.query_mode == "full" and plain.arguments(ISSUE, 5)["pattern"] == ISSUE
    chosen = ServerConfig(name="rg", tool="search", arguments={"path": "/repo"}, query_mode="keywords")
    assert select_tool(chosen, [_grep_tool("regex")]).query_mode == "keywords"


CODE_INDEX = types.Tool(  # code-index-mcp's search_code_advanced (PyPI), its schema as given
    name="search_code_advanced",
    description="Search for code pattern with pagination. Auto-selects best search tool "
                "(ugrep/ripgrep/ag/grep).\nSupports glob file_pattern (e.g., \"*.py\"), explicit "
                "regex mode, and fuzzy matching (ugrep only).\nRegex matching requires passing "
                "regex=True and may require an external search tool.",
    inputSchema={"type": "object", "required": ["pattern"], "properties": {
        "pattern": {"type": "string"}, "case_sensitive": {"default": True, "type": "boolean"},
        "file_pattern": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
        "regex": {"anyOf": [{"type": "boolean"}, {"type": "null"}], "default": None},
        "max_results": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": 10}}})


def test_a_grep_tool_with_switches_is_asked_for_a_regex_in_any_case() -> None:
    """code-index-mcp reads ``pattern`` literally unless ``regex`` is true, and in its
    case unless told otherwise: ``echo|pager`` found nothing. Its description's glob is
    another argument's (``file_pattern``), so the query still goes as a regex; its limit
    counts lines, so a search asks for lines enough for the files it wants."""
    selection = select_tool(ServerConfig(name="ci", tool="search_code_advanced"), [CODE_INDEX])
    assert selection.query_mode == "pattern"
    assert selection.arguments("echo via pager", 5) == {
        "regex": True, "case_sensitive": False, "pattern": "echo|pager", "max_results": 50}
    assert selection.describe() == ("search_code_advanced(pattern as a regex of its names, "
                                    "max_results=top_k, regex=true, case_sensitive=false) [configured]")
    fixed = ServerConfig(name="ci", tool="search_code_advanced", arguments={"case_sensitive": True})
    assert select_tool(fixed, [CODE_INDEX]).arguments("echo", 5)["case_sensitive"] is True
    plain = ServerConfig(name="ci", tool="search_code_advanced", query_mode="keywords")
    assert select_tool(plain, [CODE_INDEX]).arguments("echo via pager", 5) == {
        "pattern": "echo pager", "max_results": 5}
    # A tool whose own query is the glob keeps the question as configured.
    files = _grep_tool("what to look for", "Find files by glob pattern or regex")
    assert select_tool(ServerConfig(name="fs", tool="search", arguments={"path": "/"}), [files]).query_mode == "full"


def test_a_hostile_tool_list_is_read_in_linear_time() -> None:
    """Many arguments and a long description that speaks of a glob: read once, not once
    per argument (twenty thousand times a megabyte here)."""
    props: dict[str, object] = {"pattern": {"type": "string"}}
    props.update({f"option_{n}": {"type": "boolean"} for n in range(20_000)})
    hostile = types.Tool(name="search", description="glob " + "regex words " * 90_000,
                         inputSchema={"type": "object", "properties": props, "required": ["pattern"]})
    assert select_tool(ServerConfig(name="h", tool="search"), [hostile]).query_mode == "full"


def test_a_named_tool_lacking_a_fixed_argument_asks_for_that_one_only() -> None:
    """mcp-ripgrep's search(pattern, path) named with no ``path``: the message asks for
    ``path``, not for ``pattern`` too, which is where the question goes."""
    with pytest.raises(ToolSelectionError) as raised:
        select_tool(ServerConfig(name="rg", tool="search"), [_grep_tool("The search pattern")])
    assert str(raised.value) == ("tool 'search' requires ['path'] besides its query ('pattern'); "
                                 "give them under `arguments`")


RIPGREP = NODE_MODULES / "mcp-ripgrep" / "dist" / "index.js"


@pytest.mark.asyncio
@pytest.mark.integration
async def test_mcp_ripgrep_answers_an_issue_with_the_lines_naming_its_code(tmp_path: Path) -> None:
    """mcp-ripgrep (npm): the whole issue as its pattern was "regex parse error"."""
    if not RIPGREP.exists() or shutil.which("node") is None or shutil.which("rg") is None:
        pytest.skip("mcp-ripgrep or rg not installed: scripts/test.sh installs both")
    (tmp_path / "core.py").write_text(
        "class Option:\n    def get_help_record(self, ctx):\n        return self.show_default\n",
        encoding="utf-8")
    (tmp_path / "other.py").write_text("def unrelated():\n    return 1\n", encoding="utf-8")
    config = ServerConfig(name="rg", command="node", args=[str(RIPGREP)], timeout=10.0,
                          tool="search", arguments={"path": str(tmp_path)})
    pool = SourcePool([config])
    try:
        await pool.warm_up(timeout=60)
        outcome = await pool.call("rg", ISSUE, top_k=5)
    finally:
        await pool.aclose()
    assert outcome.error is None, outcome.error
    assert [(Path(h.path or "").name, h.start_line, h.end_line) for h in outcome.hits] == [("core.py", 2, 3)]
