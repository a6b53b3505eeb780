"""The two-level results model: fused hits, each with the members of its dedup group.

Top-level rows are the ranked hits of a ``SearchResponse``; a hit that absorbed
duplicates has them as children, each showing its own source, the reason it was
folded (hash, fuzzy, semantic, overlap) and the similarity. A hit the user rated
(useful / not useful) carries a thumb in its title cell across live updates.

Live updates change the rows in place rather than resetting the model: a fused hit
keeps its row from one update to the next (its identity is the kept hit's id or, when
a later source's copy becomes the kept one, any id of its dedup group); rows that
left are removed, new ones inserted where they rank, only the cells and roles that
changed are set (so an update that changes nothing visible repaints nothing), and a
changed order is applied by one sort on a rank role, which keeps the view's
selection and expanded rows. Children are kept the same way, by their own hit id.

The cells are ``QStandardItem``\\s holding every role the view paints, so painting
the tree never calls into Python: a Python ``data()`` runs once per cell and role on
every repaint, and each call may wait for the GIL while the engine thread fuses
(bench/gui_latency.py). Setting a role is a call into Qt too, so a row's own roles
(hit, member, sources, rating) are on its first cell only, and tooltips are built on
hover (``ResultsModel.tooltip`` through ``RowToolTips``) instead of for every row of
every update.

Hit text is untrusted: every cell and tooltip goes through ``tributary.app.safe_text``.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from PySide6.QtCore import QEvent, QModelIndex, QObject, QPersistentModelIndex, QSize, Qt
from PySide6.QtGui import (
    QFont,
    QFontMetrics,
    QGuiApplication,
    QHelpEvent,
    QPixmap,
    QStandardItem,
    QStandardItemModel,
)
from PySide6.QtWidgets import QAbstractItemView, QToolTip

from tributary.app import safe_text, theme
from tributary.app.search.badges import badges_icon, badges_pixmap
from tributary.engine.api import commit_line, fold_label
from tributary.engine.model import GroupMember, Hit, SearchResponse, is_task, repository_of

Index = QModelIndex | QPersistentModelIndex

# A row's own roles, on its first cell (column RANK):
HIT_ROLE = Qt.ItemDataRole.UserRole + 1  # the Hit of the row (kept hit or member)
MEMBER_ROLE = Qt.ItemDataRole.UserRole + 2  # the GroupMember of a child row, else None
SOURCES_ROLE = Qt.ItemDataRole.UserRole + 3  # list of source names that agree on the row
RATING_ROLE = Qt.ItemDataRole.UserRole + 4  # True / False once the user rated the row, else None
ORDER_ROLE = Qt.ItemDataRole.UserRole + 5  # the row's position among its siblings (the sort key)

COLUMNS = ("#", "Result", "Location", "Sources", "Score")
RANK, TITLE, LOCATION, SOURCES, SCORE = range(len(COLUMNS))
BADGE_WIDTH = 150  # the Sources column's width until the view says otherwise
BADGE_PADDING = 8  # the cell's horizontal padding around its badges (app.qss and the style's margin)
ROW_PADDING = 10  # a row is a line of text and this much
THUMB_SIZE = 16
BADGE_CACHE_LIMIT = 512  # distinct source lists whose badge cells are kept

_DISPLAY = int(Qt.ItemDataRole.DisplayRole)
_DECORATION = int(Qt.ItemDataRole.DecorationRole)
_ACCESSIBLE = int(Qt.ItemDataRole.AccessibleTextRole)
_SIZE_HINT = int(Qt.ItemDataRole.SizeHintRole)
_HIT, _MEMBER, _SOURCES, _RATING, _ORDER = (int(r) for r in (HIT_ROLE, MEMBER_ROLE, SOURCES_ROLE, RATING_ROLE,
                                                            ORDER_ROLE))
# Objects compared by identity: a new Hit with equal fields still carries new score parts.
_IDENTITY_ROLES = frozenset((_HIT, _MEMBER, _DECORATION, _SIZE_HINT))
_ROW_FLAGS = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
_RIGHT_ALIGNED = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)

Cells = list[dict[int, Any]]  # per column: role -> value (None: the role is unset)


@dataclass(slots=True, eq=False)
class _Row:
    """One row and what it shows: a fused hit (``member`` None) or a folded member."""

    hit: Hit
    member: GroupMember | None
    sources: list[str]
    position: int
    items: list[QStandardItem] = field(default_factory=list)
    cells: Cells = field(default_factory=list)
    children: list[_Row] = field(default_factory=list)
    shown: tuple[object, ...] = ()  # what the cells were built from (see _content)

    @property
    def ids(self) -> Iterable[str]:
        """Every hit id the row stands for: its own and its folded members'."""
        yield self.hit.id
        for child in self.children:
            yield child.hit.id


@dataclass(slots=True)
class _Entry:
    """One fused hit of a response, as the model lays it out."""

    hit: Hit
    members: list[GroupMember]
    sources: list[str]


class RowToolTips(QObject):
    """Shows a results view's tooltips from ``ResultsModel.tooltip`` (install on the
    view's viewport)."""

    def __init__(self, view: QAbstractItemView) -> None:
        super().__init__(view)
        self._view = view

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() != QEvent.Type.ToolTip or not isinstance(event, QHelpEvent):
            return False
        index = self._view.indexAt(event.pos())
        model = self._view.model()
        text = model.tooltip(index) if isinstance(model, ResultsModel) else None
        if text:
            QToolTip.showText(event.globalPos(), text, self._view.viewport(), self._view.visualRect(index))
        else:
            QToolTip.hideText()
        return True


class ResultsModel(QStandardItemModel):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(0, len(COLUMNS), parent)
        self.setHorizontalHeaderLabels(list(COLUMNS))
        self.setSortRole(ORDER_ROLE)
        self.response: SearchResponse | None = None
        self._ratings: dict[str, bool] = {}  # hit id -> useful; kept across live updates
        self._rows: list[_Row] = []  # top-level rows in display order
        self._badge_font = QGuiApplication.font()
        self._badge_width = BADGE_WIDTH
        self._badge_layout: tuple[str, int] = (self._badge_font.key(), self._badge_width)
        self._badge_cells: dict[tuple[str, ...], dict[int, Any]] = {}  # for the current layout
        self._names_files = False  # the location column is hidden: a nameless hit says its file

    # -- loading ------------------------------------------------------------------------

    def asks_anew(self, response: SearchResponse) -> bool:
        """Whether ``response`` answers another question than the one shown (not a live
        update of it): ratings are forgotten, and the view folds its rows."""
        return self.response is not None and response.request.query != self.response.request.query

    def set_response(self, response: SearchResponse | None) -> None:
        """Show ``response`` (None clears), changing only the rows and cells that differ."""
        if response is None or self.asks_anew(response):
            self._ratings.clear()
        self.response = response
        entries = _entries(response) if response is not None else []
        matched = self._match(entries)
        kept = {id(row) for row in matched if row is not None}
        self._remove(self.invisibleRootItem(), [i for i, row in enumerate(self._rows) if id(row) not in kept])
        rows: list[_Row] = []
        previous = -1
        for position, (entry, row) in enumerate(zip(entries, matched, strict=True)):
            if row is None:
                row = self._new_row(entry, position)
                self.insertRow(previous + 1, row.items)
                previous += 1
            else:
                row.hit, row.sources = entry.hit, entry.sources
                self._move(row, position)
                self._refresh(row)
                self._update_children(row, entry.members)
                previous = row.items[RANK].row()
            rows.append(row)
        self._rows = rows
        if any(row.items[RANK].row() != position for position, row in enumerate(rows)):
            # The new order by the rank role, as one layout change (selection and
            # expanded rows follow their rows); children are sorted by theirs too.
            self.sort(RANK)

    def _match(self, entries: list[_Entry]) -> list[_Row | None]:
        """The existing row of each entry: the same kept hit, else a row that showed any
        hit of its group (the kept one changed as another source answered)."""
        by_kept = {row.hit.id: row for row in self._rows}
        taken: set[int] = set()
        matched: list[_Row | None] = []
        for entry in entries:
            row = by_kept.get(entry.hit.id)
            if row is not None and id(row) in taken:
                row = None
            matched.append(row)
            if row is not None:
                taken.add(id(row))
        if len(taken) == len(self._rows) or len(taken) == len(entries):
            return matched
        by_any = {hit_id: row for row in self._rows if id(row) not in taken for hit_id in row.ids}
        for i, entry in enumerate(entries):
            if matched[i] is not None:
                continue
            for hit_id in (entry.hit.id, *(m.hit.id for m in entry.members)):
                row = by_any.get(hit_id)
                if row is not None and id(row) not in taken:
                    matched[i] = row
                    taken.add(id(row))
                    break
        return matched

    def _new_row(self, entry: _Entry, position: int) -> _Row:
        row = _Row(entry.hit, None, entry.sources, position)
        row.shown = self._content(row)
        row.cells = self._top_cells(row)
        row.items = _items(row.cells)
        for i, member in enumerate(entry.members):
            child = self._new_child(member, i)
            row.children.append(child)
            row.items[RANK].appendRow(child.items)
        return row

    def _new_child(self, member: GroupMember, position: int) -> _Row:
        child = _Row(member.hit, member, [member.hit.source], position)
        child.shown = self._content(child)
        child.cells = self._member_cells(child)
        child.items = _items(child.cells)
        return child

    def _update_children(self, row: _Row, members: list[GroupMember]) -> None:
        parent = row.items[RANK]
        old: dict[str, list[_Row]] = {}
        for existing in row.children:
            old.setdefault(existing.hit.id, []).append(existing)
        # Each old row serves one member at most; the ones left over go first.
        matched = [rows.pop(0) if (rows := old.get(m.hit.id)) else None for m in members]
        reused = {id(c) for c in matched if c is not None}
        self._remove(parent, [i for i, c in enumerate(row.children) if id(c) not in reused])
        children: list[_Row] = []
        previous = -1
        for position, (member, child) in enumerate(zip(members, matched, strict=True)):
            if child is None:
                child = self._new_child(member, position)
                parent.insertRow(previous + 1, child.items)
                previous += 1
            else:
                child.hit, child.member, child.sources = member.hit, member, [member.hit.source]
                self._move(child, position)
                self._refresh(child)
                previous = child.items[RANK].row()
            children.append(child)
        row.children = children
        if any(child.items[RANK].row() != position for position, child in enumerate(children)):
            parent.sortChildren(RANK)

    def _remove(self, parent: QStandardItem, rows: list[int]) -> None:
        """Remove ``rows`` (ascending) of ``parent``, each contiguous run at once, bottom up."""
        runs: list[list[int]] = []
        for row in rows:
            if runs and runs[-1][0] + runs[-1][1] == row:
                runs[-1][1] += 1
            else:
                runs.append([row, 1])
        for start, count in reversed(runs):
            parent.removeRows(start, count)

    def _move(self, row: _Row, position: int) -> None:
        """Give ``row`` its new rank (the first cell only: the rest did not change)."""
        if position == row.position:
            return
        row.position = position
        cell = row.cells[RANK]
        changed: dict[int, object] = {_ORDER: position}
        if row.member is None:
            changed[_DISPLAY] = str(position + 1)
        cell.update(changed)
        self.setItemData(row.items[RANK].index(), changed)

    def _refresh(self, row: _Row, force: bool = False) -> None:
        """Set the roles of ``row`` that changed since it was last shown. Most rows of a
        live update show what they showed before: that is found without building cells."""
        content = self._content(row)
        if content == row.shown and not force:
            return
        row.shown = content
        cells = self._member_cells(row) if row.member is not None else self._top_cells(row)
        for item, old, new in zip(row.items, row.cells, cells, strict=True):
            changed = {role: value for role, value in new.items() if _differs(role, old.get(role), value)}
            if changed:
                self.setItemData(item.index(), changed)
        row.cells = cells

    def _content(self, row: _Row) -> tuple[object, ...]:
        """Everything the row's cells are built from except its rank; compared by value
        (the engine may hand over the same Hit object with a new score)."""
        hit = row.hit
        member = row.member
        return (hit, hit.title, hit.path, hit.uri, hit.start_line, hit.end_line, hit.source, hit.score,
                hit.confidence,
                tuple(row.sources), self._ratings.get(hit.id), self._badge_layout, self._names_files,
                None if member is None else (member.reason, member.similarity))

    # -- cells --------------------------------------------------------------------------

    # The row's own roles (hit, member, sources, rating, order) live on its first cell
    # only, and the alignment comes with the cell's prototype: every role set is a
    # call into Qt, and a new query brings dozens of new rows in one update.

    def _top_cells(self, row: _Row) -> Cells:
        hit, sources = row.hit, row.sources
        rating = self._ratings.get(hit.id)
        return [
            {_DISPLAY: str(row.position + 1), _ORDER: row.position, _HIT: hit, _SOURCES: sources,
             _RATING: rating},
            {_DISPLAY: self._name(hit), _DECORATION: _rating_icon(rating)},
            {_DISPLAY: _where(hit)},
            {**self._badge_cell(sources), _ACCESSIBLE: ", ".join(sources)},
            {_DISPLAY: f"{hit.score:.4f}"},
        ]

    def _member_cells(self, row: _Row) -> Cells:
        member = row.member
        assert member is not None
        hit = member.hit
        rating = self._ratings.get(hit.id)
        return [
            {_ORDER: row.position, _HIT: hit, _MEMBER: member, _SOURCES: row.sources,
             _RATING: rating},
            {_DISPLAY: self._name(hit), _DECORATION: _rating_icon(rating)},
            {_DISPLAY: _where(hit)},
            {**self._badge_cell(row.sources), _ACCESSIBLE: hit.source},
            {_DISPLAY: fold_label(member)},
        ]

    def _badge_cell(self, sources: list[str]) -> dict[int, Any]:
        """The badges as the cell's decoration, and a size hint as wide as they are and
        a line plus the badges' breathing room high (the rows' height: the style would
        add its item padding to the badges' height)."""
        key = tuple(sources)
        cell = self._badge_cells.get(key)
        if cell is None:
            if len(self._badge_cells) >= BADGE_CACHE_LIMIT:
                self._badge_cells.clear()
            pixmap = badges_pixmap(key, self._badge_font, self._badge_width)
            hint = QSize(round(pixmap.deviceIndependentSize().width()) + BADGE_PADDING,
                         QFontMetrics(self._badge_font).height() + ROW_PADDING)
            cell = self._badge_cells[key] = {_DECORATION: badges_icon(pixmap), _SIZE_HINT: hint}
        return cell

    def _name(self, hit: Hit) -> str:
        """The Result cell: what the hit is; with the location column hidden, a hit with
        no name of its own (a window of a module, a file) leads with its file's name, so
        three modules' windows do not read alike."""
        said = safe_text.one_line(hit.headline)
        if self._names_files and hit.path and not hit.has_own_name:
            return f"{safe_text.one_line(PurePosixPath(hit.path).name, 80)} · {said}"
        return said

    def set_names_files(self, on: bool) -> None:
        """Whether the Result cell names a nameless hit's file (the location column is hidden)."""
        if on == self._names_files:
            return
        self._names_files = on
        for row in self._all_rows():
            self._refresh(row)

    def set_badge_layout(self, font: QFont, width: int) -> None:
        """Draw the source badges in ``font`` to fit a column ``width`` pixels wide."""
        if font == self._badge_font and width == self._badge_width:
            return
        self._badge_font, self._badge_width = QFont(font), width
        self._badge_layout = (font.key(), width)
        self._badge_cells.clear()
        for row in self._all_rows():
            self._refresh(row)

    def _all_rows(self) -> Iterable[_Row]:
        for row in self._rows:
            yield row
            yield from row.children

    # -- queries and ratings ------------------------------------------------------------

    def hit_at(self, index: Index) -> Hit | None:
        """The hit of the row ``index`` is in (any column)."""
        value = self.index(index.row(), RANK, index.parent()).data(HIT_ROLE) if index.isValid() else None
        return value if isinstance(value, Hit) else None

    def set_rating(self, hit_id: str, useful: bool) -> None:
        """Mark the row(s) showing ``hit_id`` as rated."""
        self._ratings[hit_id] = useful
        for row in self._all_rows():
            if row.hit.id == hit_id:
                self._refresh(row)

    def rating(self, hit_id: str) -> bool | None:
        return self._ratings.get(hit_id)

    def tooltip(self, index: Index) -> str | None:
        """The tooltip of the row ``index`` is in, built when asked (the view shows it on
        hover, see ``RowToolTips``): building one for every row of every live update
        would cost more than the rest of the update."""
        row = self._row_at(index)
        if row is None:
            return None
        rating = self._ratings.get(row.hit.id)
        if row.member is not None:
            return _member_tooltip(row.member, rating)
        return _tooltip(row.hit, row.sources, rating)

    def _row_at(self, index: Index) -> _Row | None:
        if not index.isValid() or index.model() is not self:
            return None
        parent = index.parent()
        if not parent.isValid():
            return self._rows[index.row()] if index.row() < len(self._rows) else None
        children = self._rows[parent.row()].children if parent.row() < len(self._rows) else []
        return children[index.row()] if index.row() < len(children) else None

    def row_of(self, hit_id: str) -> QModelIndex:
        for row in self._rows:
            if row.hit.id == hit_id:
                return row.items[RANK].index()
        return QModelIndex()


def _entries(response: SearchResponse) -> list[_Entry]:
    groups = {g.kept.id: g for g in response.groups}
    entries = []
    for hit in response.hits:
        group = groups.get(hit.id)
        entries.append(_Entry(hit, list(group.members) if group else [], group.sources if group else [hit.source]))
    return entries


def _items(cells: Cells) -> list[QStandardItem]:
    """The cells as items made from Python, not cloned: Qt deletes removed rows, and
    only an item Python made tells its wrapper so. A clone's wrapper would outlive it
    and be handed back for whatever object Qt puts at the same address next."""
    items = []
    for column, cell in enumerate(cells):
        item = QStandardItem()
        item.setFlags(_ROW_FLAGS)
        if column in (RANK, SCORE):
            item.setData(_RIGHT_ALIGNED, Qt.ItemDataRole.TextAlignmentRole)
        if column == SOURCES:
            item.setText("")  # the badges (the decoration) say it
        for role, value in cell.items():
            if value is not None:
                item.setData(value, role)
        items.append(item)
    return items


def _differs(role: int, old: Any, new: Any) -> bool:
    if role in _IDENTITY_ROLES:
        return old is not new
    return bool(old != new)


def _where(hit: Hit) -> str:
    """``path:lines`` or the uri; a commit's hash, date and author; nothing when the hit
    names none of them (not the title again)."""
    if is_task(hit):
        return safe_text.one_line(commit_line(hit))
    return safe_text.one_line(hit.location) if hit.path or hit.uri else ""


def _rating_icon(useful: bool | None) -> QPixmap | None:
    return None if useful is None else _thumb(useful)


@functools.cache
def _thumb(useful: bool) -> QPixmap:
    """The rating thumb, as a pixmap: shown at its own size whatever the view's icon
    size (which the badges set)."""
    icon = theme.icon("thumb-up", theme.colours()["ok"]) if useful else theme.icon(
        "thumb-down", theme.colours()["danger"])
    return icon.pixmap(QSize(THUMB_SIZE, THUMB_SIZE))


def _rated_note(useful: bool | None) -> str:
    if useful is None:
        return ""
    return "\nYou marked this useful" if useful else "\nYou marked this not useful"


def _tooltip(hit: Hit, sources: list[str], useful: bool | None) -> str:
    where = _where(hit) or safe_text.one_line(hit.location, 300)
    if (repo := repository_of(hit)) is not None:
        where = f"{where} in {safe_text.one_line(repo, 120)}"
    lines = [safe_text.one_line(hit.headline, 200), where, f"score {hit.score:.4f} · confidence {hit.confidence:.2f}"]
    if len(sources) > 1:
        lines.append("agreed by " + ", ".join(sources))
    elif sources:  # the Sources column may show it elided
        lines.append("from " + sources[0])
    return safe_text.tooltip("\n".join(lines) + _rated_note(useful))


def _member_tooltip(member: GroupMember, useful: bool | None) -> str:
    hit = member.hit
    return safe_text.tooltip(
        f"Folded into the result above: {fold_label(member)}\n"
        f"{hit.source} · {safe_text.one_line(hit.location, 300)}"
        + _rated_note(useful)
    )
