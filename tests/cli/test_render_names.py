"""File names from a repository reach the terminal escaped: a right-to-left override or
another invisible character cannot disguise what the table shows."""

from __future__ import annotations

import pytest

from tributary.engine.cli.render import response_text
from tributary.engine.model import Hit, RouteDecision, SearchRequest, SearchResponse


@pytest.mark.parametrize("char", ["\u202e", "\u2066", "\u200f", "\u061c", "\u200b", "\x9b", "\x1b"])
def test_bidi_and_control_characters_in_a_file_name_are_escaped(char: str) -> None:
    hit = Hit(id="1", source="files", tool="search_code", title=f"invoice{char}gnp.py",
              content="def total(): ...", path=f"src/invoice{char}gnp.py", score=1.0)
    text = response_text(SearchResponse(request=SearchRequest("invoice"), hits=[hit]), 120)
    assert char not in text
    assert f"invoice\\{'x' if ord(char) < 0x100 else 'u'}{ord(char):0{2 if ord(char) < 0x100 else 4}x}gnp.py" in text


def test_the_route_line_says_when_a_question_is_read_as_a_task() -> None:
    issue = ("Rational calc value error\n\n"
             "when calc `Rational('0.5', '100')`, the value is 1/100100 but `Rational(0.5, 100)` gives 1/200")
    routed = RouteDecision(query_class="howto")
    text = response_text(SearchResponse(request=SearchRequest(issue), route=routed), 120)
    assert "class: howto (read as a task);" in text
    short = response_text(SearchResponse(request=SearchRequest("rational value"), route=routed), 120)
    assert "class: howto;" in short


def test_a_hit_whose_title_is_its_path_is_summed_up_by_its_first_line() -> None:
    window = Hit(id="1", source="files", tool="search_code", title="lib/response.js",
                 content="/*!\n * express\n */\n\nvar contentDisposition = require('content-disposition');",
                 path="lib/response.js", start_line=1, end_line=40, score=1.0)
    named = Hit(id="2", source="files", tool="search_code", title="res.send",
                content="res.send = function send(body) {", path="lib/response.js", start_line=112,
                end_line=218, score=0.5)
    assert window.headline == "var contentDisposition = require('content-disposition');"
    assert named.headline == "res.send"
    text = response_text(SearchResponse(request=SearchRequest("send"), hits=[window, named]), 160)
    (row,) = [line for line in text.splitlines() if line.startswith("1 ")]
    assert row.count("lib/response.js") == 1 and "var contentDisposition" in row


def test_hits_from_several_repositories_say_whose_each_is() -> None:
    def hit(n: str, repo: str) -> Hit:
        return Hit(id=n, source="files", tool="search_code", title="Params", content="type Params []Param",
                   path="tree.go", start_line=22, end_line=25, score=1.0, confidence=0.9,
                   metadata={"repo": repo})

    both = [hit("1", "gin-gonic/gin"), hit("2", "/home/ana/src/a-very-long-folder-name/gin-fork")]
    text = response_text(SearchResponse(request=SearchRequest("params"), hits=both), 160)
    assert any(line.startswith("#") and "repository" in line for line in text.splitlines())
    assert "gin-gonic/gin" in text and "…ng-folder-name/gin-fork" in text
    alone = response_text(SearchResponse(request=SearchRequest("params"), hits=both[:1]), 160)
    assert "repository" not in alone and "gin-gonic/gin" not in alone


def test_a_past_task_shows_its_commit_where_a_location_goes_and_its_title_after() -> None:
    from tributary.engine.model import TASK_KIND

    task = Hit(id="t", source="tasks", tool="search_tasks", title="Support pipes in discriminated unions",
               content="Files touched (4): ...", score=1.0, confidence=0.9,
               metadata={"kind": TASK_KIND, "short_id": "f91a73ec23f9", "author": "Colin McDonnell"})
    text = response_text(SearchResponse(request=SearchRequest("who wrote pipes"), hits=[task]), 160)
    (row,) = [line for line in text.splitlines() if line.startswith("1 ")]
    assert "commit f91a73ec23f9 · Colin McDonnell" in row and "(commit)" not in row
    assert row.rstrip().endswith("Support pipes in discriminated unions")


def test_a_module_window_is_headed_by_its_documentation_or_its_first_statement() -> None:
    def headline(content: str, path: str) -> str:
        return Hit(id="w", source="files", tool="search_code", title=path, content=content, path=path).headline

    rust = "//! Deserialization for untagged enums:\n//!\n//! ```ignore\n\nuse crate::de::struct_;\n"
    assert headline(rust, "src/de/enum_untagged.rs") == "Deserialization for untagged enums:"
    python = '# Copyright 2020 the authors\n"""Read and write config files."""\nimport os\n'
    assert headline(python, "conf.py") == "Read and write config files."
    go = 'package middleware\n\nimport (\n\t"net/http"\n)\n\nvar DefaultLogger = New()\n'
    assert headline(go, "middleware/logger.go") == "var DefaultLogger = New()"
    assert headline('package middleware\n\nimport (\n\t"net/http"\n)\n', "m.go") == "package middleware"
    licensed = "// Copyright 2019 X. All rights reserved.\n\nuse std::fmt;\n\npub struct Error;\n"
    assert headline(licensed, "error.rs") == "pub struct Error;"
    assert headline("mod ignored_any;\nmod impls;\n\npub trait Error {}\n", "de/mod.rs") == "pub trait Error {}"
    example = "// This example serves a REST API.\n// It uses chi.\npackage main\n\nimport \"fmt\"\n"
    assert headline(example, "_examples/rest/main.go") == "This example serves a REST API."
    apart = "// Copyright 2020 X.\n\npackage main\n\nfunc main() {}\n"
    assert headline(apart, "main.go") == "func main() {}"
    # A window that begins inside an import's parenthesised names (httpx's transports).
    inside = "    ConnectTimeout,\n    errors.ProxyError,\n)\nfrom ._models import Request\n\nT = TypeVar('T')\n"
    assert headline(inside, "httpx/_transports/default.py") == "T = TypeVar('T')"
    # A window of a JavaScript test, begun inside a chained call: its test's title
    mocha = "      .expect(200, done);\n    })\n\n    it('should encode the url', function (done) {\n"
    assert headline(mocha, "test/res.redirect.js") == "it('should encode the url', function (done) {"
    assert headline("      .expect(200, done);\n  })\n\n  request(app)\n", "t.js") == "request(app)"
    assert headline("    end\n\n    it \"routes HEAD\" do\n", "spec/routing_spec.rb") == 'it "routes HEAD" do'


def test_a_file_past_tasks_changed_says_so_instead_of_a_task_subject() -> None:
    changed = Hit(id="f", source="tasks", tool="files_for_task", title="pattern_test.go", path="pattern_test.go",
                  content="feat(mux): support http.Request.Pattern (#986) (2025-08-26); fix: set it (#1097)",
                  metadata={"kind": "file", "tasks": ["d12cc49", "818fdcf"], "functions": ["TestPattern"]})
    assert changed.headline == "changed by 2 past tasks (TestPattern)"
    once = Hit(id="g", source="tasks", tool="files_for_task", title="mux.go", path="mux.go", content="x (#1)",
               metadata={"kind": "file", "tasks": ["d12cc49"]})
    assert once.headline == "changed by 1 past task"
