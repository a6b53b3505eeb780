"""The search page's empty state: its buttons never cut their own labels, and a pasted
issue is quoted in one line."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QApplication, QBoxLayout

from tributary.app.search.empty_state import EmptyState


def test_the_buttons_stack_when_side_by_side_they_would_not_fit(qtbot: Any) -> None:
    empty = EmptyState()
    qtbot.addWidget(empty)
    empty.show()
    empty.show_first_run()
    shown = [b for b in (empty.add_button, empty.import_button, empty.server_button) if b.isVisible()]
    assert len(shown) == 2
    for width, direction in ((1000, QBoxLayout.Direction.LeftToRight), (330, QBoxLayout.Direction.TopToBottom)):
        empty.setFixedWidth(width)  # as a narrow results pane (a splitter) would
        QApplication.processEvents()
        assert empty._buttons.direction() == direction
        for button in shown:
            assert button.width() >= button.sizeHint().width(), f"{button.text()} cut at {width} px"


def test_a_pasted_issue_is_quoted_in_one_short_line(qtbot: Any) -> None:
    empty = EmptyState()
    qtbot.addWidget(empty)
    issue = "caplog fixture doesn't restore log level after test\n\n```python\ndef test_foo(caplog):\n" + "x" * 3000
    for show in (empty.show_asking, lambda q: empty.show_no_results(q, False)):
        show(issue)
        title = empty.title.text()
        assert "\n" not in title and len(title) < 120
        assert title.count("caplog fixture doesn't restore log level") == 1 and "…" in title


def test_no_results_says_which_routing_rule_chose_the_sources(qtbot: Any) -> None:
    """A rule that sent a question to one server, which found nothing, read as "nothing
    anywhere": the other sources were never asked."""
    empty = EmptyState()
    qtbot.addWidget(empty)
    empty.show_no_results("remember the note about release", False, ["notes"], ["memory"])
    body = empty.body.text()
    assert "routing rule “notes” sent this question to memory only" in body
    assert "Routing rules" in body
    empty.show_no_results("remember the note about release", False)
    assert "routing" not in empty.body.text()


def test_no_results_says_first_why_the_answer_is_empty(qtbot: Any) -> None:
    empty = EmptyState()
    qtbot.addWidget(empty)
    empty.show_no_results("etag", True, notes=["lang:ts left out all 153 hits the sources gave"])
    assert empty.body.text().startswith("lang:ts left out all 153 hits the sources gave.\n\nTry fewer")


def test_the_filter_syntax_is_an_example_never_the_question_s_filters(qtbot: Any) -> None:
    """Under "Asking for …", "Filters: lang:go" read as what the search was limited to."""
    empty = EmptyState()
    qtbot.addWidget(empty)
    empty.show_asking("how are fixture scopes checked")
    assert empty.keys.isHidden() or not empty.keys.text()
    empty.show_no_results("how are fixture scopes checked", False)
    assert "e.g. lang:go" in empty.keys.text()
