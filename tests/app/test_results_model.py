"""The two-level results model: structure (qtmodeltester), rows, children, roles, and
live updates applied in place (rows keep their identity, order and groups stay right)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from PySide6.QtCore import (
    QEvent,
    QModelIndex,
    QPersistentModelIndex,
    QSize,
    Qt,
    qInstallMessageHandler,
)
from PySide6.QtGui import QFontMetrics, QGuiApplication, QHelpEvent, QIcon
from PySide6.QtTest import QAbstractItemModelTester
from PySide6.QtWidgets import QApplication, QTreeView

from tests.app.fakes import build_response
from tributary.app.search.badges import PAD_X, badge_font, fitting_badges
from tributary.app.search.results_model import (
    HIT_ROLE,
    LOCATION,
    MEMBER_ROLE,
    RANK,
    SCORE,
    SOURCES,
    SOURCES_ROLE,
    TITLE,
    ResultsModel,
    RowToolTips,
)
from tributary.engine.model import (
    DedupGroup,
    DedupReason,
    GroupMember,
    Hit,
    SearchRequest,
    SearchResponse,
    SourceReport,
    SourceStatus,
    make_hit_id,
)
from tributary.engine.pipeline.dedup import fold_label


def _response(sources: list[str]) -> Any:
    reports = [SourceReport(name=s, status=SourceStatus.OK, hits=3) for s in sources]
    return build_response(SearchRequest(query="fixture scope"), sources, reports)


def test_model_passes_qt_model_tester(qtmodeltester: Any) -> None:
    model = ResultsModel()
    model.set_response(_response(["files", "tasks", "git"]))
    qtmodeltester.check(model, force_py=True)
    model.set_response(None)
    qtmodeltester.check(model, force_py=True)


def test_kept_hit_has_its_group_members_as_children() -> None:
    model = ResultsModel()
    response = _response(["files", "tasks", "git"])
    model.set_response(response)
    assert model.rowCount() == len(response.hits)
    group = response.groups[0]
    top = model.row_of(group.kept.id)
    assert top.isValid()
    assert model.rowCount(top) == len(group.members) == 2
    child = model.index(0, SCORE, top)
    assert model.parent(child) == top.siblingAtColumn(0)
    member = child.siblingAtColumn(0).data(MEMBER_ROLE)  # the row's roles are on its first cell
    assert child.siblingAtColumn(0).data(HIT_ROLE) is member.hit is model.hit_at(child)
    assert child.data(Qt.ItemDataRole.DisplayRole) == fold_label(member)  # why, in words
    assert top.data(SOURCES_ROLE) == ["files", "tasks", "git"]
    # A hit without duplicates has no children; children have none either.
    lonely = next(h for h in response.hits if h.id != group.kept.id)
    assert model.rowCount(model.row_of(lonely.id)) == 0
    assert model.rowCount(child) == 0


def test_titles_are_flattened_to_one_safe_line() -> None:
    model = ResultsModel()
    response = _response(["files"])
    response.hits[0].title = "evil\x1b[31m title\nwith\tcontrol\x00 chars"
    model.set_response(response)
    shown = model.index(0, 1).data(Qt.ItemDataRole.DisplayRole)
    assert shown == "evil title with control chars"
    assert model.index(0, 0, QModelIndex()).data(HIT_ROLE) is response.hits[0]


def test_a_window_titled_by_its_path_shows_its_first_line_of_code() -> None:
    model = ResultsModel()
    response = _response(["files"])
    hit = response.hits[0]
    hit.title, hit.path, hit.content = "lib/view.js", "lib/view.js", "/*!\n * express\n */\n\nvar path = require('path');"
    model.set_response(response)
    assert model.index(0, TITLE).data() == "var path = require('path');"
    assert model.index(0, LOCATION).data().startswith("lib/view.js")


def test_with_the_location_hidden_a_nameless_hit_leads_with_its_file_name() -> None:
    model = ResultsModel()
    response = _response(["files"])
    window, named = response.hits[0], response.hits[1]
    window.title, window.path = "src/de/enum_untagged.rs", "src/de/enum_untagged.rs"
    window.content = "//! Deserialization for untagged enums:\nuse crate::de;"
    model.set_response(response)
    assert model.index(0, TITLE).data() == "Deserialization for untagged enums:"
    model.set_names_files(True)  # a narrow window: no location column
    assert model.index(0, TITLE).data() == "enum_untagged.rs · Deserialization for untagged enums:"
    assert model.index(1, TITLE).data() == named.headline  # a named hit says what it is
    model.set_names_files(False)
    assert model.index(0, TITLE).data() == "Deserialization for untagged enums:"


# -- live updates in place ------------------------------------------------------------


def _hit(name: str, source: str = "files", score: float = 0.5) -> Hit:
    return Hit(id=make_hit_id(source, "search", name), source=source, tool="search", title=f"{name} title",
               content=f"{name} content", path=f"src/{name}.py", start_line=1, end_line=5, score=score)


def _fused(query: str, ranked: list[Hit], groups: dict[str, list[Hit]] | None = None) -> SearchResponse:
    """A response showing ``ranked`` in order; ``groups`` maps a kept hit's id to its members."""
    by_id = {h.id: h for h in ranked}
    return SearchResponse(
        request=SearchRequest(query=query), hits=list(ranked),
        groups=[DedupGroup(kept=by_id[kept], members=[GroupMember(m, DedupReason.FUZZY, 0.9) for m in members])
                for kept, members in (groups or {}).items()])


def _shown(model: ResultsModel, parent: QModelIndex | None = None) -> list[str]:
    """The hit ids of the rows under ``parent``, in view order."""
    parent = parent or QModelIndex()
    return [model.hit_at(model.index(row, 0, parent)).id for row in range(model.rowCount(parent))]  # type: ignore[union-attr]


def _assert_matches(model: ResultsModel, response: SearchResponse) -> None:
    """Rows, ranks and each group's children are exactly the response's, in its order."""
    assert _shown(model) == [h.id for h in response.hits]
    for row, hit in enumerate(response.hits):
        top = model.index(row, RANK)
        assert top.data() == str(row + 1)
        assert model.index(row, SCORE).data() == f"{hit.score:.4f}"
        group = response.group_of(hit.id)
        assert _shown(model, top) == [m.hit.id for m in group.members] if group else model.rowCount(top) == 0


class _Signals:
    """Counts the structural and data signals a model emits."""

    def __init__(self, model: ResultsModel) -> None:
        self.seen: list[str] = []
        for name in ("rowsInserted", "rowsRemoved", "rowsMoved", "layoutChanged", "modelReset", "dataChanged"):
            getattr(model, name).connect(lambda *_, n=name: self.seen.append(n))


def test_streamed_updates_change_rows_in_place_and_pass_the_model_tester(qtmodeltester: Any) -> None:
    # The fake engine's fusion as sources answer one by one (new hits rank in between,
    # the group grows), then another query, then nothing.
    model = ResultsModel()
    qtmodeltester.check(model, force_py=True)  # keeps checking on every signal from here
    signals = _Signals(model)
    request = SearchRequest(query="fixture scope")
    reports = [SourceReport(name=s, status=SourceStatus.OK, hits=3) for s in ("files", "tasks", "git")]
    for answered in (["files"], ["files", "tasks"], ["files", "tasks", "git"]):
        response = build_response(request, answered, reports)
        model.set_response(response)
        _assert_matches(model, response)
    other = build_response(SearchRequest(query="another question"), ["git"], reports)
    model.set_response(other)
    _assert_matches(model, other)
    model.set_response(None)
    assert model.rowCount() == 0
    assert "modelReset" not in signals.seen


def test_the_qt_model_tester_follows_reorders_and_kept_hit_changes(qtmodeltester: Any) -> None:
    model = ResultsModel()
    qtmodeltester.check(model)  # Qt's own QAbstractItemModelTester; its findings fail the test
    a, b, c, d = (_hit(n) for n in "abcd")
    model.set_response(_fused("q", [a, b, c], {a.id: [d]}))
    model.set_response(_fused("q", [c, d, b], {d.id: [a]}))
    model.set_response(_fused("q", [b, c, d, a]))
    _assert_matches(model, _fused("q", [b, c, d, a]))


def test_a_row_keeps_its_identity_when_hits_rank_above_it() -> None:
    model = ResultsModel()
    a, b, c = _hit("a", score=0.9), _hit("b", score=0.5), _hit("c", score=0.7)
    model.set_response(_fused("q", [a, b]))
    row_b = QPersistentModelIndex(model.index(1, 0))
    item_b = model.itemFromIndex(model.index(1, 0))
    signals = _Signals(model)
    b.score = 0.8
    model.set_response(_fused("q", [a, b, c]))  # b's score changed, c is new below it
    model.set_response(_fused("q", [c, a, b]))  # c overtakes both
    assert row_b.isValid() and row_b.row() == 2 and model.hit_at(row_b) is b
    assert model.itemFromIndex(model.index(2, 0)) is item_b  # the same item, moved
    assert model.index(row_b.row(), SCORE).data() == "0.8000"
    assert signals.seen.count("rowsInserted") == 1 and "rowsRemoved" not in signals.seen
    assert "layoutChanged" in signals.seen  # the reorder, as one layout change


def test_an_update_that_changes_nothing_visible_emits_nothing() -> None:
    model = ResultsModel()
    a, b, c = _hit("a"), _hit("b"), _hit("c")
    model.set_response(_fused("q", [a, b], {a.id: [c]}))
    signals = _Signals(model)
    # A new response and new group objects, the same hits shown the same way.
    model.set_response(_fused("q", [a, b], {a.id: [c]}))
    assert signals.seen == []
    b.score = 0.25  # one cell changes: one cell is updated
    model.set_response(_fused("q", [a, b], {a.id: [c]}))
    assert signals.seen == ["dataChanged"]


def test_rows_that_leave_are_removed_and_children_follow_their_group() -> None:
    model = ResultsModel()
    a, b, c, d, e = (_hit(n) for n in "abcde")
    model.set_response(_fused("q", [a, b, c], {a.id: [d]}))
    first = QPersistentModelIndex(model.index(0, 0))
    child_d = QPersistentModelIndex(model.index(0, 0, model.index(0, 0)))
    model.set_response(_fused("q", [a, c], {a.id: [e, d]}))  # b left; e joined a's group first
    _assert_matches(model, _fused("q", [a, c], {a.id: [e, d]}))
    assert first.isValid() and first.row() == 0
    assert child_d.isValid() and child_d.row() == 1 and model.hit_at(child_d) is d
    model.set_response(_fused("q", [a, c]))  # the group dissolved
    assert model.rowCount(model.index(0, 0)) == 0 and not child_d.isValid()


def test_children_follow_their_new_order_when_the_rows_keep_theirs() -> None:
    model = ResultsModel()
    a, b, c, d = (_hit(n) for n in "abcd")
    model.set_response(_fused("q", [a, b], {a.id: [c, d]}))
    child_c = QPersistentModelIndex(model.index(0, 0, model.index(0, 0)))
    model.set_response(_fused("q", [a, b], {a.id: [d, c]}))
    _assert_matches(model, _fused("q", [a, b], {a.id: [d, c]}))
    assert child_c.row() == 1 and model.hit_at(child_c) is c


def test_the_row_stays_when_another_copy_becomes_the_kept_hit() -> None:
    # A later source's copy ranks higher and becomes the kept hit of the same group:
    # the row stands for the same item, so it stays (with its expansion and selection).
    model = ResultsModel()
    ours, theirs, other = _hit("x", "files"), _hit("x", "git"), _hit("y")
    model.set_response(_fused("q", [ours, other]))
    row = QPersistentModelIndex(model.index(0, 0))
    model.set_response(_fused("q", [theirs, other], {theirs.id: [ours]}))
    assert row.isValid() and row.row() == 0 and model.hit_at(row) is theirs
    assert _shown(model, model.index(0, 0)) == [ours.id]
    assert model.index(0, 0).data(SOURCES_ROLE) == ["git", "files"]


def test_a_view_keeps_selection_and_expanded_rows_across_a_reorder(qtbot: Any) -> None:
    model = ResultsModel()
    view = QTreeView()
    qtbot.addWidget(view)
    view.setModel(model)
    a, b, c, d = (_hit(n) for n in "abcd")
    model.set_response(_fused("q", [a, b, c], {b.id: [d]}))
    view.expand(model.index(1, 0))
    view.setCurrentIndex(model.index(2, TITLE))
    model.set_response(_fused("q", [c, b, a], {b.id: [d]}))
    assert model.hit_at(view.currentIndex()) is c and view.currentIndex().row() == 0
    assert view.isExpanded(model.index(1, 0)) and model.hit_at(model.index(1, 0)) is b
    assert not view.isExpanded(model.index(2, 0))


def test_source_badges_are_drawn_to_the_column_width() -> None:
    model = ResultsModel()
    kept = _hit("k", "files")
    members = [_hit("k", s) for s in ("tasks", "git", "notes", "issues")]
    model.set_response(_fused("q", [kept], {kept.id: members}))
    cell = model.index(0, SOURCES)
    wide = _badges_size(cell)
    assert cell.data(Qt.ItemDataRole.AccessibleTextRole) == "files, tasks, git, notes, issues"
    model.set_badge_layout(QGuiApplication.font(), 80)  # room for fewer whole badges
    assert _badges_size(cell).width() <= 80 < wide.width()
    # A selected row shows the badges as they are (a style would tint a generated look).
    icon = cell.data(Qt.ItemDataRole.DecorationRole)
    normal = icon.pixmap(_badges_size(cell), QIcon.Mode.Normal).toImage()
    assert icon.pixmap(_badges_size(cell), QIcon.Mode.Selected).toImage() == normal


def test_a_source_name_wider_than_the_column_gets_an_elided_badge() -> None:
    model = ResultsModel()
    hit = _hit("k", "slack-archive-search")
    model.set_response(_fused("q", [hit], {}))
    font = QGuiApplication.font()
    model.set_badge_layout(font, 90)
    metrics = QFontMetrics(badge_font(font))
    assert metrics.horizontalAdvance("slack-archive-search") + 2 * PAD_X > 90  # no whole badge fits
    ((label, width),) = fitting_badges(("slack-archive-search",), metrics, 90)
    assert label.startswith("slack") and label.endswith("…") and width <= 90
    # Drawn, not an empty cell: a badge about as wide as the column.
    assert 60 <= _badges_size(model.index(0, SOURCES)).width() <= 90
    assert "from slack-archive-search" in model.tooltip(model.index(0, SOURCES))
    # Too narrow for even "…": no badge rather than a cut one.
    assert fitting_badges(("slack-archive-search",), metrics, 10) == []


def _badges_size(cell: QModelIndex) -> QSize:
    icon = cell.data(Qt.ItemDataRole.DecorationRole)
    assert isinstance(icon, QIcon) and not icon.isNull()
    return icon.availableSizes()[0]


def test_tooltips_are_built_on_hover(qtbot: Any) -> None:
    model = ResultsModel()
    view = QTreeView()
    qtbot.addWidget(view)
    view.setModel(model)
    view.viewport().installEventFilter(RowToolTips(view))
    view.resize(700, 300)
    view.show()
    a, b = _hit("a", score=0.75), _hit("a", "git")
    model.set_response(_fused("q", [a], {a.id: [b]}))
    assert "score 0.7500" in model.tooltip(model.index(0, LOCATION))
    assert "agreed by files, git" in model.tooltip(model.index(0, LOCATION))
    assert "Folded into the result above: near-identical (90%)" in model.tooltip(model.index(0, 0, model.index(0, 0)))
    assert model.tooltip(QModelIndex()) is None
    where = view.visualRect(model.index(0, TITLE)).center()
    event = QHelpEvent(QEvent.Type.ToolTip, where, view.viewport().mapToGlobal(where))
    assert QApplication.sendEvent(view.viewport(), event)  # handled by the filter


_POOL = [_hit(name, source) for name in "abcdef" for source in ("files", "git")]


@st.composite
def _responses(draw: st.DrawFn) -> SearchResponse:
    """A fused response over a small pool: some hits ranked, some folded into them."""
    shown = draw(st.lists(st.sampled_from(_POOL), unique_by=lambda h: h.id, max_size=8))
    ranked, folded = shown[: max(1, len(shown) // 2)] if shown else [], shown[max(1, len(shown) // 2):]
    groups: dict[str, list[Hit]] = {}
    for member in folded:
        if ranked:
            groups.setdefault(draw(st.sampled_from(ranked)).id, []).append(member)
    return _fused(draw(st.sampled_from(["q", "other"])), ranked, groups)


@settings(max_examples=60, deadline=None)
@given(st.lists(_responses(), min_size=1, max_size=6))
def test_any_sequence_of_updates_shows_exactly_the_last_response(sequence: list[SearchResponse]) -> None:
    # Qt's own model tester watches every signal of every update; its findings are warnings.
    seen: list[str] = []
    previous = qInstallMessageHandler(lambda kind, context, message: seen.append(message))
    try:
        model = ResultsModel()
        tester = QAbstractItemModelTester(model, QAbstractItemModelTester.FailureReportingMode.Warning)
        for response in sequence:
            model.set_response(response)
            _assert_matches(model, response)
        del tester
    finally:
        qInstallMessageHandler(previous)
    assert not seen


def test_sources_past_the_columns_width_are_counted() -> None:
    """Three sources agreeing on a hit showed as one badge, the other two left out
    without a sign, as if one source had found it."""
    metrics = QFontMetrics(badge_font(QGuiApplication.font()))
    sources = ("files", "ripgrep", "tasks")
    every = fitting_badges(sources, metrics, 1000)
    assert [label for label, _ in every] == ["files", "ripgrep", "tasks"]
    first_two = sum(w for _, w in every[:2]) + 40
    labels = [label for label, _ in fitting_badges(sources, metrics, first_two)]
    assert labels[0] == "files" and labels[-1] == f"+{len(sources) - len(labels) + 1}"
    narrow = every[0][1] + metrics.horizontalAdvance("+2") + 2 * PAD_X + 20
    assert [label for label, _ in fitting_badges(sources, metrics, narrow)] == ["files", "+2"]
    alone = every[0][1] + 8  # no room for a count beside the first: the name alone
    assert [label for label, _ in fitting_badges(sources, metrics, alone)] == ["files"]
