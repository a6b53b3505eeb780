"""A task that quotes a line of the project's code: the file holding it leads, and the
function holding it comes first in its file."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import IndexTarget
from tests.index.index_helpers import indexed_files
from tributary.engine.index.search import SearchHit, _quoted_file, hybrid_search
from tributary.engine.localsearch.longquery import read_task

# The issue's words are the report's (headline, location, report); the line it quotes,
# and the fix, are the path helper's.
REPORT = '''
class TestReport:
    """A test's report: its headline, its location and its outcome."""

    def headline(self):
        """The report's headline: the test's location as the report shows it."""
        location = self.location_of_the_report()
        return location.headline_of_the_report()

    def location_of_the_report(self):
        """Where the report's test is: its location, for the report's headline."""
        return self.report_location

    def longrepr_headline(self):
        """The headline of the report's long representation."""
        return "headline " + self.headline()
'''
PATHS = '''
def headline_location(item):
    """The location of an item for the headline of its report: the report's headline
    location, as the headline of the test report shows it."""
    return item.location


def module_path_of(item):
    """The dotted path of an item's module."""
    parts = [node.name for node in item.chain()]
    s = ".".join(parts)
    return s.replace(".[", "[")


def node_name_of(item):
    """The name of an item's node."""
    return item.name.split("/")[-1]
'''
# Modules that replace text too: the quoted line's words are common here.
FILLERS = {f"report/text{n}.py": f'''
def clean{n}(text):
    """Text {n} cleaned for display."""
    return text.replace("{n}", "").replace(".", "")
''' for n in range(8)}
ISSUE = """'.[' replaced with '[' in the headline of the test report

The headline of the test report shows the wrong location: `test_boo[..[]` is shown as
`test_boo[.[]` in the report's headline, and the report's location is wrong with it.
The headline comes from the report's location, which the report reads for its headline.

```python
import pytest

@pytest.mark.parametrize("a", ["..["])
def test_boo(a):
    assert 0
```

This line of code `return s.replace(".[", "[")` causes the problem in the headline
of the report. We should return the path as it is, so the headline of the report and
its location are right.
"""


def test_the_file_holding_a_quoted_line_leads_with_its_function(tmp_path: Path, at: IndexTarget) -> None:
    store = indexed_files(tmp_path, **at.kw, files={"report/reports.py": REPORT, "report/paths.py": PATHS, **FILLERS})
    try:
        hits = hybrid_search(store, ISSUE, None, repo="repo", top_k=10)
        assert (hits[0].path, hits[0].symbol, hits[0].led_by) == ("report/paths.py", "module_path_of", "quote")
        assert not any(hit.led_by for hit in hits[1:])
        assert "report/reports.py" in {hit.path for hit in hits[1:]}
    finally:
        store.close()


def test_only_the_projects_own_lines_are_quoted() -> None:
    """Inline code and fenced blocks without a traceback; not the reporter's session,
    imports, tests or assertions, and not a line too short to be anyone's in particular."""
    task = read_task(ISSUE)
    assert task.quoted == ('return s.replace(".[", "[")',)
    traced = ISSUE + ('\n```\nTraceback (most recent call last):\n  File "x.py", line 3, in f\n'
                      '    value = compute_the_value(a, b)\nValueError: bad\n```\n')
    assert read_task(traced).quoted == task.quoted  # a traceback's lines are its frames'
    spaced = ISSUE.replace('`return s.replace(".[", "[")`', '\n```\n    return   s.replace(".[", "[")\n```\n')
    assert read_task(spaced).quoted == task.quoted  # whitespace runs read as one space
    unclosed = ISSUE.replace('`return s.replace(".[", "[")`', '\n```\nreturn s.replace(".[", "[")\n')
    assert read_task(unclosed).quoted == ()  # a block left open: its prose is not code
    data = ISSUE.replace('`return s.replace(".[", "[")`', "\n```\nvalues = [" + "1.0, " * 60 + "]\n```\n")
    assert read_task(data).quoted == ()  # longer than a line of code: data
    session = ISSUE.replace('`return s.replace(".[", "[")`', '`>>> s.replace(".[", "[")` and `x = f(y)`')
    assert read_task(session).quoted == ()


def _hit(path: str, score: float) -> SearchHit:
    return SearchHit(path, "r", 1, 2, None, "function", "python", score, "x")


def test_a_quoted_file_leads_only_from_near_the_top() -> None:
    hits = [_hit("a.py", 0.9), _hit("b.py", 0.8), _hit("c.py", 0.7), _hit("d.py", 0.6)]
    assert _quoted_file(hits, {7: "c.py"}) == "c.py"
    assert _quoted_file(hits, {7: "d.py"}) is None  # the fourth file
    assert _quoted_file(hits, {7: "a.py", 8: "c.py"}) is None  # the first file holds one already
    assert _quoted_file(hits, {}) is None
