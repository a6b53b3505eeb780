"""The configuration editor: edits a draft copy, validates as you go, saves atomically.

The draft is a deep copy of the running config. Every edit lands in the draft at
once (an invalid value is kept as typed, with its error inline), so nothing the
user typed is ever lost; Save is refused while the engine's validation reports an
error, and the engine's atomic writer does the writing. After a save the engine
applies the new config.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QCompleter,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from tributary.app import theme
from tributary.app.background import describe_error, run_async
from tributary.app.config_editor import backend
from tributary.app.config_editor.desktop import DesktopPage
from tributary.app.config_editor.ranking import RankingPage
from tributary.app.config_editor.rules import RulesPage
from tributary.app.config_editor.servers import ServersPage
from tributary.engine import api
from tributary.engine.api import EngineLike
from tributary.engine.config.schema import Config

VALIDATE_DELAY_MS = 150


class ConfigEditor(QWidget):
    message = Signal(str)
    saved = Signal(object)  # the Config written

    def __init__(self, engine: Callable[[], EngineLike | None], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._engine = engine
        self.draft: Config | None = None
        self.dirty = False
        self.issues: list[backend.Issue] = []
        title = QLabel("Sources & routing")
        title.setObjectName("SectionTitle")
        self.path_label = QLabel()
        self.path_label.setObjectName("Hint")
        self.path_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.servers = ServersPage(engine)
        self.rules = RulesPage(engine)
        self.ranking = RankingPage()
        self.tabs = QTabWidget()
        self.tabs.addTab(self.servers, theme.icon("servers"), "Servers")
        # Scrolled, so a short screen scrolls the form instead of growing the window.
        self.tabs.addTab(_scrolled(self.rules), theme.icon("routing"), "Routing rules")
        ranking_area = _scrolled(self.ranking)
        self._ranking_width = _WidthWatcher(ranking_area.viewport(), self.ranking.fit_width)
        self.tabs.addTab(ranking_area, theme.icon("settings"), "Ranking && budget")
        self.desktop = DesktopPage()
        self.desktop.message.connect(self.message.emit)
        self.tabs.addTab(self.desktop, theme.icon("open"), "Desktop")
        # What happened to the file on disk (a hand edit that is not valid, or one made
        # under unsaved edits): stays shown, whole, until the file or a save settles it.
        self.banner = QLabel()
        self.banner.setObjectName("Banner")
        self.banner.setWordWrap(True)
        self.banner.setTextFormat(Qt.TextFormat.PlainText)
        self.banner.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.banner.hide()
        self.file_problem: str | None = None  # the file on disk is not what runs: why
        self.saved_note = ""  # what the last save did besides writing (secrets moved)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.revert_button = QPushButton("Revert")
        self.revert_button.clicked.connect(self.revert)
        self.save_button = QPushButton(theme.icon("save", "#ffffff"), "Save")
        self.save_button.setObjectName("Primary")
        self.save_button.clicked.connect(self.save)
        footer = QHBoxLayout()
        footer.addWidget(self.status, 1)
        footer.addWidget(self.revert_button)
        footer.addWidget(self.save_button)
        head = QHBoxLayout()
        head.addWidget(title)
        head.addStretch()
        head.addWidget(self.path_label)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 14, 16, 10)
        layout.addLayout(head)
        layout.addWidget(self.banner)
        layout.addWidget(self.tabs, 1)
        layout.addLayout(footer)
        self._validate_timer = QTimer(self, singleShot=True, interval=VALIDATE_DELAY_MS)
        self._validate_timer.timeout.connect(self.validate)
        for page in (self.servers, self.rules, self.ranking):
            page.changed.connect(self._changed)
        self.servers.message.connect(self.message.emit)
        self.servers.changed.connect(self._refresh_rule_servers)
        self._original: Config | None = None
        self.disk_changed = False  # the file changed on disk under unsaved edits
        self._overwrite_armed = False  # ... and Save was pressed once since
        save_keys = QShortcut(QKeySequence.StandardKey.Save, self, self._save_keys)
        save_keys.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.save_button.setToolTip("Save (Ctrl+S)")
        self._render_status()
        self.setEnabled(False)

    def show_tab(self, page: QWidget) -> None:
        """Show the tab holding ``page`` (some tabs wrap theirs in a scroll area)."""
        for index in range(self.tabs.count()):
            tab = self.tabs.widget(index)
            if tab is not None and (tab is page or tab.isAncestorOf(page)):
                self.tabs.setCurrentIndex(index)
                return

    def load(self, config: Config) -> None:
        """Start editing a copy of ``config`` (the running one)."""
        self._original = config
        self.draft = copy.deepcopy(config)
        self.dirty = False
        self.saved_note = ""
        # A file on disk that did not load is still a change the user made there.
        self.disk_changed = self.file_problem is not None
        self._overwrite_armed = False
        self.issues = []
        self.path_label.setText(str(self.config_path()))
        self.servers.load(self.draft)
        self.rules.load(self.draft)
        self.ranking.load(self.draft)
        self.setEnabled(True)
        self._render_status()

    def config_path(self) -> Path:
        if self.draft is not None and self.draft.path is not None:
            return self.draft.path
        return api.default_config_path()

    def revert(self) -> None:
        if self._original is not None:
            self.load(self._original)
            self.message.emit("Reverted to the saved configuration")

    def changed_on_disk(self, config: Config) -> None:
        """The config file changed under unsaved edits (``config``, now running): keep
        the edits and say so. Revert loads the file's version; Save asks once more
        before it overwrites that."""
        self._original = config
        self.disk_changed = True
        self._overwrite_armed = False
        self._render_status()

    def set_file_problem(self, problem: str | None) -> None:
        """The config file on disk could not be used (``problem`` says why, every issue
        of it), or None once it could. The running config stays the last valid one; the
        banner shows the problem whole, and Save asks before it replaces that file."""
        self.file_problem = problem
        if problem is not None:
            self.disk_changed = True
            self._overwrite_armed = False
        self._render_status()

    def _changed(self) -> None:
        self.saved_note = ""
        self.dirty = True
        self._render_status()
        self._validate_timer.start()

    def _refresh_rule_servers(self) -> None:
        if self.draft is not None:
            self.rules.refresh_servers()

    def validate(self) -> list[backend.Issue]:
        """Run the engine's validation on the draft; show the result."""
        if self.draft is None:
            return []
        try:
            self.issues = backend.validate(self.draft)
        except Exception as exc:  # a validator crash must not lose the draft
            self.issues = [backend.Issue("", f"validation failed: {describe_error(exc)}")]
        self._render_status()
        return self.issues

    def errors(self) -> list[backend.Issue]:
        issues = [i for i in self.issues if i.severity == "error"]
        reported = {i.key.split(".")[0] for i in issues}
        field = []
        # A field the form itself rejects (it did not reach the draft) — unless the
        # engine's validation already names that section.
        if self.servers.has_field_errors() and "servers" not in reported:
            field.append(backend.Issue("servers", "a server field is invalid (see the red field)"))
        if self.rules.has_field_errors() and "routing" not in reported:
            field.append(backend.Issue("routing", "a routing pattern is invalid (see the red field)"))
        return field + issues

    def _render_banner(self) -> None:
        lines = []
        if self.file_problem is not None:
            lines.append(self.file_problem.strip())
            if self._original is None:  # the engine never started: there is no version here
                lines.append("Fix the file and save it there: Tributary starts as soon as it can "
                             "read it.")
            else:
                lines.append("Fix the file and save it there, or Save here to replace it with this "
                             "editor's version.")
        elif self.disk_changed and self.dirty:
            lines.append("The file changed on disk since you began editing. Revert loads the "
                         "file's version; Save replaces it with yours.")
        if self._overwrite_armed:
            lines.append("Press Save again to overwrite the file on disk.")
        self.banner.setText("\n".join(lines))
        self.banner.setVisible(bool(lines))

    def _render_status(self) -> None:
        self._render_banner()
        errors = self.errors()
        if errors:
            shown = "; ".join(f"{i.key}: {i.message}" if i.key else i.message for i in errors[:3])
            more = f" (+{len(errors) - 3} more)" if len(errors) > 3 else ""
            self.status.setObjectName("Error")
            self.status.setText(f"Can't save yet — {shown}{more}")
        elif self._overwrite_armed:
            self.status.setObjectName("Error")
            self.status.setText("Press Save again to overwrite the changes made to the file on disk")
        elif self.dirty and self.file_problem is not None:
            self.status.setObjectName("Error")
            self.status.setText("The file on disk is not valid (see above): Save asks before replacing it")
        elif self.dirty and self.disk_changed:
            self.status.setObjectName("Error")
            self.status.setText("The file changed on disk since you began editing: Revert loads it, "
                                "Save overwrites it")
        elif self.dirty:
            self.status.setObjectName("Muted")
            self.status.setText("Unsaved changes")
        elif self.file_problem is not None:
            self.status.setObjectName("Error")
            self.status.setText("The file on disk is not in effect (see above)" if self._original is not None
                                else "The engine is waiting for a config file it can read (see above)")
        else:
            self.status.setObjectName("Muted")
            self.status.setText(self.saved_note or (
                "Saved" if self._original is not None else "Waiting for the engine…"))
        self.status.style().polish(self.status)
        self.save_button.setEnabled(self.dirty and not errors)
        self.revert_button.setEnabled(self.dirty)

    def _save_keys(self) -> None:
        """Ctrl+S: save what the Save button would; say why when there is nothing to.
        Edits made since the last check are checked first: Ctrl+S typed right after the
        field that blocked the save was mended must not answer with that old error."""
        if self._validate_timer.isActive():
            self._validate_timer.stop()
            self.validate()
        for completer in self.findChildren(QCompleter):  # the typing is over: its offers too
            if (offers := completer.popup()) is not None:
                offers.hide()
        if self.save_button.isEnabled():
            self.save()
        else:
            self.message.emit(self.status.text() or "Nothing to save")

    def save(self) -> None:
        """Validate, write atomically (engine's writer), then apply to the engine."""
        if self.draft is None:
            return
        self.validate()
        if self.errors():
            return
        if self.disk_changed and not self._overwrite_armed:
            self._overwrite_armed = True
            self._render_status()
            self.message.emit(self.status.text())
            return
        snapshot = copy.deepcopy(self.draft)
        engine = self._engine()
        if engine is not None:
            # Repositories are the Indexes page's to change (Watch saves at once): keep
            # the engine's, never this draft's older copy of them.
            snapshot.repos = copy.deepcopy(engine.config.repos)
        path = self.config_path()
        run_async(self._save(snapshot, path, self._original), label="Saving configuration",
                  on_success=lambda saved: self._saved(snapshot, saved), on_error=self._save_failed)

    async def _save(self, config: Config, path: Path, before: Config | None) -> backend.StoredSecrets:
        """Secrets typed as plain values since ``before`` go to the keyring first (the
        file keeps references to them), then the file is written and the engine applies it."""
        stored = await backend.store_literal_secrets(config, before)
        stored.config.path = backend.save_config(stored.config, path)
        engine = self._engine()
        if engine is not None:
            try:
                await engine.apply_config(copy.deepcopy(stored.config))
            except Exception as exc:
                raise AppliedLater(describe_error(exc), config, stored) from exc
        return stored

    def _saved(self, typed: Config, stored: backend.StoredSecrets) -> None:
        config = stored.config
        self._original = config
        if self.draft is not None:
            self.draft.path = config.path
            self._adopt_references(typed, stored)
        self.dirty = False
        self.disk_changed = self._overwrite_armed = False
        self.file_problem = None  # replaced by a valid file
        if stored.places:
            names = ", ".join(name for _, name in stored.places)
            self.saved_note = (f"Saved. {api.counted(len(stored.places), 'secret')} ({names}) went to "
                               f"{stored.where}; the file keeps ${{keyring:…}} references")
        self._render_status()
        if stored.places:
            self.message.emit(self.saved_note)
        else:
            self.message.emit(f"Configuration saved to {config.path}")
        self.saved.emit(config)

    def _adopt_references(self, typed: Config, stored: backend.StoredSecrets) -> None:
        """Show the keyring references in place of the secrets they replaced (a value
        edited again while saving stays as now typed)."""
        assert self.draft is not None
        changed = set()
        for place, _ in stored.places:
            _, name, kind, key = place.split(".", 3)
            draft, before, after = (self.draft.servers.get(name), typed.servers.get(name),
                                    stored.config.servers.get(name))
            if draft is None or before is None or after is None:
                continue
            values = draft.env if kind == "env" else draft.headers
            was = (before.env if kind == "env" else before.headers).get(key)
            if values.get(key) == was:
                values[key] = (after.env if kind == "env" else after.headers)[key]
                changed.add(name)
        for name in changed:
            self.servers.show_secrets_of(name)

    def _save_failed(self, error: BaseException) -> None:
        if isinstance(error, AppliedLater):
            # Written, but the running engine could not adopt it: it will on restart.
            self._saved(error.typed, error.stored)
            self.message.emit(f"Saved; the engine will use it after a restart ({error})")
            return
        # Nothing was written: keep every edit, say why.
        self.issues = [backend.Issue("", f"not saved: {backend.describe(error)}")]
        self._render_status()


def _scrolled(page: QWidget) -> QScrollArea:
    area = QScrollArea()
    area.setWidget(page)
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    return area


class _WidthWatcher(QObject):
    """Tells ``follow`` the width of a scroll area's viewport whenever it changes (the
    page inside never gets narrower than its minimum, so it cannot see that itself)."""

    def __init__(self, viewport: QWidget, follow: Callable[[int], None]) -> None:
        super().__init__(viewport)
        self._follow = follow
        viewport.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize and isinstance(watched, QWidget):
            self._follow(watched.width())
        return False


class AppliedLater(Exception):
    """The file was saved but the running engine refused to apply it."""

    def __init__(self, reason: str, typed: Config, stored: backend.StoredSecrets) -> None:
        super().__init__(reason)
        self.typed = typed
        self.stored = stored
