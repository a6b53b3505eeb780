"""Filter controls: which sources, languages and paths a search keeps.

The controls and the query syntax are one thing: a control's change rewrites the
filter words of the query (``source:files lang:go path:src/ -path:tests/``), and
typing those words sets the controls. So a filter lives with its query — in the
history, in a pasted query, and for the CLI and the MCP face, which read the same
syntax (``tributary.engine.query.syntax``).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QMenu, QToolButton, QWidget

from tributary.engine.model import SearchFilters

SourceNames = Callable[[], list[str]]


class FiltersBar(QWidget):
    """Sources (a checkable menu), languages and path globs (``-`` excludes)."""

    changed = Signal(object)  # SearchFilters, after the user changed a control

    def __init__(self, sources: SourceNames, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._sources = sources
        self._filters = SearchFilters()
        self.source_button = QToolButton()
        self.source_button.setObjectName("Action")
        self.source_button.setText("All sources")
        self.source_button.setToolTip("Ask only the sources ticked here (query syntax: source:NAME, -source:NAME)")
        self.source_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.source_menu = QMenu(self)
        self.source_menu.aboutToShow.connect(self._fill_sources)
        self.source_button.setMenu(self.source_menu)
        self.languages = QLineEdit()
        self.languages.setPlaceholderText("any language")
        self.languages.setToolTip("Keep only results in these languages, e.g. “go python” or “-markdown” "
                                  "(query syntax: lang:go -lang:markdown)")
        self.languages.setClearButtonEnabled(True)
        self.paths = QLineEdit()
        self.paths.setPlaceholderText("any path — e.g. src/ -tests/ *.py")
        self.paths.setToolTip("Keep only results under these paths or matching these globs; a leading - "
                              "excludes (query syntax: path:src/ -path:tests/)")
        self.paths.setClearButtonEnabled(True)
        self.languages.textEdited.connect(lambda _: self._edited())
        self.paths.textEdited.connect(lambda _: self._edited())
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        for caption, widget, stretch in (("Sources", self.source_button, 0), ("Language", self.languages, 1),
                                         ("Paths", self.paths, 2)):
            label = QLabel(caption)
            label.setObjectName("Muted")
            label.setBuddy(widget)
            layout.addWidget(label)
            layout.addWidget(widget, stretch)
        self.languages.setMinimumWidth(70)
        self.paths.setMinimumWidth(100)

    def filters(self) -> SearchFilters:
        return self._filters

    def show_filters(self, filters: SearchFilters) -> None:
        """Show ``filters`` (read from the query) without emitting ``changed``."""
        self._filters = filters
        languages = [*filters.languages, *(f"-{v}" for v in filters.exclude_languages)]
        paths = [*filters.paths, *(f"-{v}" for v in filters.exclude_paths)]
        if _words(self.languages.text()) != languages:
            self.languages.setText(" ".join(languages))
        if _words(self.paths.text()) != paths:
            self.paths.setText(" ".join(paths))
        self._label_sources()

    def _label_sources(self) -> None:
        chosen, excluded = self._filters.sources, self._filters.exclude_sources
        if chosen:
            text = ", ".join(chosen) if len(chosen) <= 2 else f"{len(chosen)} sources"
        elif excluded:
            text = "All but " + (", ".join(excluded) if len(excluded) <= 2 else f"{len(excluded)}")
        else:
            text = "All sources"
        self.source_button.setText(text)

    def _fill_sources(self) -> None:
        self.source_menu.clear()
        names = list(dict.fromkeys([*self._sources(), *self._filters.sources]))
        every = self.source_menu.addAction("All sources (as routing decides)")
        every.triggered.connect(lambda: self._set_sources([], []))
        self.source_menu.addSeparator()
        if not names:
            none = self.source_menu.addAction("No source configured yet")
            none.setEnabled(False)
        for name in names:
            action = self.source_menu.addAction(name)
            action.setCheckable(True)
            action.setChecked(name in self._filters.sources)
            action.toggled.connect(lambda on, n=name: self._toggle_source(n, on))

    def _toggle_source(self, name: str, on: bool) -> None:
        chosen = [s for s in self._filters.sources if s != name] + ([name] if on else [])
        self._set_sources(chosen, [s for s in self._filters.exclude_sources if s != name])

    def _set_sources(self, chosen: list[str], excluded: list[str]) -> None:
        self._filters = SearchFilters(chosen, excluded, list(self._filters.languages),
                                      list(self._filters.exclude_languages), list(self._filters.paths),
                                      list(self._filters.exclude_paths))
        self._label_sources()
        self.changed.emit(self._filters)

    def _edited(self) -> None:
        languages, paths = _words(self.languages.text()), _words(self.paths.text())
        self._filters = SearchFilters(
            list(self._filters.sources), list(self._filters.exclude_sources),
            [v for v in languages if not v.startswith("-")], [v[1:] for v in languages if v.startswith("-") and v[1:]],
            [v for v in paths if not v.startswith("-")], [v[1:] for v in paths if v.startswith("-") and v[1:]])
        self.changed.emit(self._filters)


def _words(text: str) -> list[str]:
    return [w for w in text.replace(",", " ").split() if w]
