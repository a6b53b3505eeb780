"""The two-level results model: fused hits, each with the members of its dedup group.

Top-level rows are the ranked hits of a ``SearchResponse``; a hit that absorbed
duplicates has them as children, each showing its own source, the reason it was
folded (hash, fuzzy, semantic, overlap) and the similarity.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex, Qt

from engine.model import GroupMember, Hit, SearchResponse

Index = QModelIndex | QPersistentModelIndex

HIT_ROLE = Qt.ItemDataRole.UserRole + 1  # the Hit of the row (kept hit or member)
MEMBER_ROLE = Qt.ItemDataRole.UserRole + 2  # the GroupMember of a child row, else None
SOURCES_ROLE = Qt.ItemDataRole.UserRole + 3  # list of source names that agree on the row

COLUMNS = ("#", "Result", "Location", "Sources", "Score")
RANK, TITLE, LOCATION, SOURCES, SCORE = range(len(COLUMNS))

_ROOT = QModelIndex()  # the invalid index, as a default argument

# internalId 0 marks a top-level row; a child stores its parent's row + 1.
_TOP = 0


class ResultsModel(QAbstractItemModel):
    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._hits: list[Hit] = []
        self._members: list[list[GroupMember]] = []
        self._sources: list[list[str]] = []
        self._display: list[tuple[str, ...]] = []  # computed once per response, not per paint
        self._member_display: list[list[tuple[str, ...]]] = []
        self.response: SearchResponse | None = None

    # -- loading ------------------------------------------------------------------------

    def set_response(self, response: SearchResponse | None) -> None:
        """Show ``response`` (None clears). Views restore selection by hit id."""
        self.beginResetModel()
        self.response = response
        self._hits = list(response.hits) if response else []
        self._members = []
        self._sources = []
        self._display = []
        self._member_display = []
        groups = {g.kept.id: g for g in response.groups} if response else {}
        for row, hit in enumerate(self._hits):
            group = groups.get(hit.id)
            members = list(group.members) if group else []
            sources = group.sources if group else [hit.source]
            self._members.append(members)
            self._sources.append(sources)
            self._display.append(
                (str(row + 1), _one_line(hit.title), _where(hit), ", ".join(sources), f"{hit.score:.4f}"))
            self._member_display.append([
                ("", _one_line(m.hit.title), _where(m.hit), m.hit.source,
                 f"{m.reason.value} {m.similarity:.2f}")
                for m in members
            ])
        self.endResetModel()

    def hit_at(self, index: Index) -> Hit | None:
        value = self.data(index, HIT_ROLE)
        return value if isinstance(value, Hit) else None

    def row_of(self, hit_id: str) -> QModelIndex:
        for row, hit in enumerate(self._hits):
            if hit.id == hit_id:
                return self.index(row, 0)
        return QModelIndex()

    # -- structure ----------------------------------------------------------------------

    def index(self, row: int, column: int, parent: Index = _ROOT) -> QModelIndex:
        if not self.hasIndex(row, column, parent):
            return QModelIndex()
        if not parent.isValid():
            return self.createIndex(row, column, _TOP)
        if parent.internalId() == _TOP:
            return self.createIndex(row, column, parent.row() + 1)
        return QModelIndex()

    def parent(self, index: Index = _ROOT) -> QModelIndex:  # type: ignore[override]
        if not index.isValid() or index.internalId() == _TOP:
            return QModelIndex()
        return self.createIndex(index.internalId() - 1, 0, _TOP)

    def rowCount(self, parent: Index = _ROOT) -> int:
        if not parent.isValid():
            return len(self._hits)
        if parent.internalId() == _TOP and parent.column() == 0:
            return len(self._members[parent.row()])
        return 0

    def columnCount(self, parent: Index = _ROOT) -> int:
        return len(COLUMNS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    # -- data ---------------------------------------------------------------------------

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        if index.internalId() == _TOP:
            return self._top_data(index.row(), index.column(), role)
        parent_row = index.internalId() - 1
        if role == Qt.ItemDataRole.DisplayRole:
            return self._member_display[parent_row][index.row()][index.column()]
        member = self._members[parent_row][index.row()]
        return self._member_data(member, index.column(), role)

    def _top_data(self, row: int, column: int, role: int) -> Any:
        hit = self._hits[row]
        if role == HIT_ROLE:
            return hit
        if role == SOURCES_ROLE:
            return self._sources[row]
        if role == MEMBER_ROLE:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display[row][column]
        if role == Qt.ItemDataRole.ToolTipRole:
            return _tooltip(hit, self._sources[row])
        if role == Qt.ItemDataRole.TextAlignmentRole and column in (RANK, SCORE):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def _member_data(self, member: GroupMember, column: int, role: int) -> Any:
        hit = member.hit
        if role == HIT_ROLE:
            return hit
        if role == MEMBER_ROLE:
            return member
        if role == SOURCES_ROLE:
            return [hit.source]
        if role == Qt.ItemDataRole.ToolTipRole:
            return (
                f"Folded into the result above: {member.reason.value} duplicate, "
                f"similarity {member.similarity:.2f}\n{hit.source} · {hit.location}"
            )
        if role == Qt.ItemDataRole.TextAlignmentRole and column in (RANK, SCORE):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


def _where(hit: Hit) -> str:
    """``path:lines`` or the uri; nothing when the hit names neither (not the title again)."""
    return _one_line(hit.location) if hit.path or hit.uri else ""


def _one_line(text: str, limit: int = 160) -> str:
    # Hit text is untrusted data: strip control characters and keep rows one line high.
    flat = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _tooltip(hit: Hit, sources: list[str]) -> str:
    lines = [_one_line(hit.title, 200), hit.location, f"score {hit.score:.4f}"]
    if len(sources) > 1:
        lines.append("agreed by " + ", ".join(sources))
    return "\n".join(lines)
