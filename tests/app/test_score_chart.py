"""The score breakdown names each part in words and tells the sources' bars apart."""

from __future__ import annotations

from typing import Any

from tributary.app.search.score_chart import ScoreChart, part_colour, part_label
from tributary.engine.model import ScoreParts


def test_parts_are_named_in_words() -> None:
    assert part_label("rrf:files") == "files rank"
    assert part_label("weighted:docs") == "docs score"
    assert part_label("focus") == "file focus" and part_label("same_file") == "file repeat"
    assert part_label("something_new") == "something new"  # an unknown part, as written


def test_each_source_and_part_has_a_colour_of_its_own() -> None:
    assert part_colour("rrf:files") != part_colour("rrf:tasks")
    assert part_colour("focus") != part_colour("rrf:files")
    assert part_colour("hint") == part_colour("hints")


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
