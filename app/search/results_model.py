"""The two-level results model: fused hits, each with the members of its dedup group.

Top-level rows are the ranked hits of a ``SearchResponse``; a hit that absorbed
duplicates has them as children, each showing its own source, the reason it was
folded (hash, fuzzy, semantic, overlap) and the similarity. A hit the user rated
(useful / not useful) carries a thumb in its title cell across live updates.

Hit text is untrusted: every cell and tooltip goes through ``app.safe_text``.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex, Qt

from app import safe_text, theme
from engine.model import GroupMember, Hit, SearchResponse

Index = QModelIndex | QPersistentModelIndex

HIT_ROLE = Qt.ItemDataRole.UserRole + 1  # the Hit of the row (kept hit or member)
MEMBER_ROLE = Qt.ItemDataRole.UserRole + 2  # the GroupMember of a child row, else None
SOURCES_ROLE = Qt.ItemDataRole.UserRole + 3  # list of source names that agree on the row
RATING_ROLE = Qt.ItemDataRole.UserRole + 4  # True / False once the user rated the row, else None

COLUMNS = ("#", "Result", "Location", "Sources", "Score")
RANK, TITLE, LOCATION, SOURCES, SCORE = range(len(COLUMNS))

_ROOT = QModelIndex()  # the invalid index, as a default argument
_DISPLAY = int(Qt.ItemDataRole.DisplayRole)
_SERVED_ROLES = frozenset(int(r) for r in (
    Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.DecorationRole, Qt.ItemDataRole.ToolTipRole,
    Qt.ItemDataRole.TextAlignmentRole, HIT_ROLE, MEMBER_ROLE, SOURCES_ROLE, RATING_ROLE,
))
_NO_FLAGS = Qt.ItemFlag.NoItemFlags
_ROW_FLAGS = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
_RIGHT_ALIGNED = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)

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
        self._ratings: dict[str, bool] = {}  # hit id -> useful; kept across live updates

    # -- loading ------------------------------------------------------------------------

    def set_response(self, response: SearchResponse | None) -> None:
        """Show ``response`` (None clears). Views restore selection by hit id."""
        self.beginResetModel()
        if response is None or (self.response is not None and response.request.query != self.response.request.query):
            self._ratings.clear()
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
                (str(row + 1), safe_text.one_line(hit.title), _where(hit), ", ".join(sources),
                 f"{hit.score:.4f}"))
            self._member_display.append([
                ("", safe_text.one_line(m.hit.title), _where(m.hit), m.hit.source,
                 f"{m.reason.value} {m.similarity:.2f}")
                for m in members
            ])
        self.endResetModel()

    def hit_at(self, index: Index) -> Hit | None:
        value = self.data(index, HIT_ROLE)
        return value if isinstance(value, Hit) else None

    def set_rating(self, hit_id: str, useful: bool) -> None:
        """Mark the row(s) showing ``hit_id`` as rated."""
        self._ratings[hit_id] = useful
        for index in self._indexes_of(hit_id):
            self.dataChanged.emit(index.siblingAtColumn(TITLE), index.siblingAtColumn(TITLE),
                                  [Qt.ItemDataRole.DecorationRole, RATING_ROLE, Qt.ItemDataRole.ToolTipRole])

    def rating(self, hit_id: str) -> bool | None:
        return self._ratings.get(hit_id)

    def _indexes_of(self, hit_id: str) -> list[QModelIndex]:
        found = []
        for row, hit in enumerate(self._hits):
            parent = self.index(row, 0)
            if hit.id == hit_id:
                found.append(parent)
            found += [self.index(i, 0, parent) for i, m in enumerate(self._members[row]) if m.hit.id == hit_id]
        return found

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
            return _NO_FLAGS
        return _ROW_FLAGS

    # -- data ---------------------------------------------------------------------------

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        # A repaint asks every visible cell for a dozen roles (font, colours, check
        # state, ...) from the GUI thread; answering the unserved ones first, without
        # touching the index, keeps a repaint of the tree cheap.
        if role not in _SERVED_ROLES or not index.isValid():
            return None
        if index.internalId() == _TOP:
            if role == _DISPLAY:
                return self._display[index.row()][index.column()]
            return self._top_data(index.row(), index.column(), role)
        parent_row = index.internalId() - 1
        if role == _DISPLAY:
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
        if role == RATING_ROLE:
            return self._ratings.get(hit.id)
        if role == Qt.ItemDataRole.DecorationRole and column == TITLE:
            return _rating_icon(self._ratings.get(hit.id))
        if role == Qt.ItemDataRole.ToolTipRole:
            return _tooltip(hit, self._sources[row], self._ratings.get(hit.id))
        if role == Qt.ItemDataRole.TextAlignmentRole and column in (RANK, SCORE):
            return _RIGHT_ALIGNED
        return None

    def _member_data(self, member: GroupMember, column: int, role: int) -> Any:
        hit = member.hit
        if role == HIT_ROLE:
            return hit
        if role == MEMBER_ROLE:
            return member
        if role == SOURCES_ROLE:
            return [hit.source]
        if role == RATING_ROLE:
            return self._ratings.get(hit.id)
        if role == Qt.ItemDataRole.DecorationRole and column == TITLE:
            return _rating_icon(self._ratings.get(hit.id))
        if role == Qt.ItemDataRole.ToolTipRole:
            return safe_text.tooltip(
                f"Folded into the result above: {member.reason.value} duplicate, "
                f"similarity {member.similarity:.2f}\n{hit.source} · {safe_text.one_line(hit.location, 300)}"
                + _rated_note(self._ratings.get(hit.id))
            )
        if role == Qt.ItemDataRole.TextAlignmentRole and column in (RANK, SCORE):
            return _RIGHT_ALIGNED
        return None


def _where(hit: Hit) -> str:
    """``path:lines`` or the uri; nothing when the hit names neither (not the title again)."""
    return safe_text.one_line(hit.location) if hit.path or hit.uri else ""


def _rating_icon(useful: bool | None) -> Any:
    if useful is None:
        return None
    return theme.icon("thumb-up", theme.colours()["ok"]) if useful else theme.icon(
        "thumb-down", theme.colours()["danger"])


def _rated_note(useful: bool | None) -> str:
    if useful is None:
        return ""
    return "\nYou marked this useful" if useful else "\nYou marked this not useful"


def _tooltip(hit: Hit, sources: list[str], useful: bool | None) -> str:
    lines = [safe_text.one_line(hit.title, 200), safe_text.one_line(hit.location, 300), f"score {hit.score:.4f}"]
    if len(sources) > 1:
        lines.append("agreed by " + ", ".join(sources))
    return safe_text.tooltip("\n".join(lines) + _rated_note(useful))
