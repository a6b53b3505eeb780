"""The two-level results model: structure (qtmodeltester), rows, children, roles."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, Qt

from app.search.results_model import (
    HIT_ROLE,
    MEMBER_ROLE,
    SCORE,
    SOURCES,
    SOURCES_ROLE,
    ResultsModel,
)
from engine.model import SearchRequest, SourceReport, SourceStatus
from tests.app.fakes import build_response


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
    member = child.data(MEMBER_ROLE)
    assert child.data(HIT_ROLE) is member.hit
    assert child.data(Qt.ItemDataRole.DisplayRole) == f"{member.reason.value} {member.similarity:.2f}"
    assert top.siblingAtColumn(SOURCES).data(SOURCES_ROLE) == ["files", "tasks", "git"]
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
