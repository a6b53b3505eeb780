"""Setting one member in a JSONC file's text keeps the rest of the text as it was."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tributary.engine.config.jsonc_edit import JsoncEditError, set_member, strip_jsonc

ENTRY = {"command": "tributary", "args": ["serve"]}


def _data(text: str) -> Any:
    return json.loads(strip_jsonc(text))


ZED = """// Zed settings
{
  "ui_font_size": 16, // larger
  "theme": {
    "dark": "One Dark",
  },
}
"""


def test_a_section_is_added_after_the_last_member_and_the_comments_stay() -> None:
    edited = set_member(ZED, "context_servers", "tributary", ENTRY)
    assert edited.startswith('// Zed settings\n{\n  "ui_font_size": 16, // larger\n  "theme": {\n')
    assert '  },\n  "context_servers": {\n    "tributary": {\n      "command": "tributary",' in edited
    assert _data(edited) == {**_data(ZED), "context_servers": {"tributary": ENTRY}}


@pytest.mark.parametrize("text", [
    '{"servers": {"a": {"command": "x"}}}',
    '{\n\t"servers": {\n\t\t"a": {"command": "x"} // mine\n\t}\n}\n',
    '{\n  "servers": {\n    "a": {"command": "x"},\n  },\n  "other": "a // not a comment {",\n}',
    '{\n  "servers": {}\n}',
    '{\n  "servers": { /* none yet */ }\n}',
])
def test_a_member_is_added_to_an_existing_section(text: str) -> None:
    edited = set_member(text, "servers", "tributary", ENTRY)
    before = _data(text)
    assert _data(edited) == {**before, "servers": {**before["servers"], "tributary": ENTRY}}
    for kept in ("// mine", "/* none yet */", '"a // not a comment {"'):
        assert (kept in text) == (kept in edited)


def test_the_files_own_indentation_is_used() -> None:
    edited = set_member('{\n\t"servers": {\n\t\t"a": 1\n\t}\n}\n', "servers", "t", {"k": 1})
    assert '\n\t\t"t": {\n\t\t\t"k": 1\n\t\t}\n\t}\n}' in edited


def test_a_members_value_is_replaced_in_place() -> None:
    text = '{\n  // servers\n  "servers": {\n    "tributary": {"command": "old"}, // keep\n    "b": 2\n  }\n}\n'
    edited = set_member(text, "servers", "tributary", ENTRY)
    assert "// servers" in edited and "// keep" in edited and '"b": 2' in edited
    assert _data(edited)["servers"] == {"tributary": ENTRY, "b": 2}


def test_an_empty_file_becomes_the_section_alone() -> None:
    assert json.loads(set_member("  \n", "servers", "t", ENTRY)) == {"servers": {"t": ENTRY}}


@pytest.mark.parametrize("text", ["[1, 2]", '{"servers": [1]}', '{"servers": {', '{"a" 1}'])
def test_what_cannot_hold_the_member_is_refused(text: str) -> None:
    with pytest.raises(JsoncEditError):
        set_member(text, "servers", "t", ENTRY)
