"""The score breakdown names each part in words and tells the sources' bars apart."""

from __future__ import annotations

from typing import Any

import pytest

from tributary.app import theme
from tributary.app.search.score_chart import ScoreChart, part_colour, part_label
from tributary.engine.model import ScoreParts


def test_parts_are_named_in_words() -> None:
    assert part_label("rrf:files") == "files rank"
    assert part_label("weighted:docs") == "docs score"
    assert part_label("focus") == "file focus" and part_label("same_file") == "file repeat"
    assert part_label("role") == "file's role"
    assert part_label("something_new") == "something new"  # an unknown part, as written


def test_each_source_and_part_has_a_colour_of_its_own() -> None:
    assert part_colour("rrf:files") != part_colour("rrf:tasks")
    assert part_colour("focus") != part_colour("rrf:files")
    assert part_colour("hint") == part_colour("hints")


def test_a_source_has_one_colour_everywhere_and_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """The chart's bar for a source's rank has the source's badge colour, and the
    configured sources have distinct colours, in the config's order, whatever their
    names (two names that hashed alike used to share one)."""
    monkeypatch.setattr(theme, "_source_colours", {})
    names = ["files", "tasks", "github", "slack", "docs-search", "fetch", "brave", "arxiv", "jira", "wiki"]
    theme.set_source_order(names)
    assert len({theme.source_colour_hex(n) for n in names}) == len(names)
    assert part_colour("rrf:slack") == theme.source_colour_hex("slack") == theme.source_colour("slack").name()
    assert theme.source_colour_hex("files") == theme.BUILTIN_SOURCE_COLOURS["files"]
    assert theme.source_colour_hex("unlisted") == theme.source_colour_hex("unlisted")  # stable once given
    theme.set_source_order(["slack", "github"])  # the config changed: its order decides
    assert theme.source_colour_hex("slack") == theme.SOURCE_COLOURS[0]


def test_the_tooltip_gives_words_and_names(qtbot: Any) -> None:
    chart = ScoreChart()
    qtbot.addWidget(chart)
    parts = ScoreParts()
    parts.add("rrf:files", 0.09)
    parts.add("focus", 0.01)
    parts.add("same_file", -0.02)
    chart.set_parts(parts)
    chart.resize(360, chart.height())
    chart.grab()  # paints every row
    tip = chart.toolTip()
    assert "files rank (rrf:files): +0.0900" in tip and "file repeat (same_file): -0.0200" in tip
    parts.add("votes", 2.0)
    chart.set_parts(parts)
    assert "\nvotes: +2.0000" in chart.toolTip()  # a name that is already words, once
