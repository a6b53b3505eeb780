"""The routing tab: ordered rules (drag to reorder), live pattern checks, a rule tester."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QEvent, QModelIndex, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QScrollArea,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from tributary.app import theme
from tributary.app.combo_box import ComboBox
from tributary.app.config_editor import backend
from tributary.app.config_editor.fields import CheckList, error_label, set_invalid, with_error
from tributary.app.config_editor.servers import cannot_search, trouble
from tributary.app.layouts import scrolled_down
from tributary.app.search.source_strip import setup_needed
from tributary.app.spin_box import SpinBox
from tributary.engine.api import EngineLike
from tributary.engine.config.schema import Config, RoutingRule
from tributary.engine.model import FUSION_STRATEGIES, RouteDecision

STRATEGIES = ["", *FUSION_STRATEGIES]


def server_names(config: Config) -> list[str]:
    """Configured servers, then the built-in ones a rule may name before they exist."""
    names = list(config.servers)
    return names + sorted(n for n in backend.BUILTIN_SERVER_NAMES if n not in names)


def pattern_error(pattern: str) -> str | None:
    """The engine's verdict on a routing pattern (compiles with RE2, the linear-time engine)."""
    if not pattern:
        return "A rule needs a pattern."
    return backend.check_pattern(pattern)


def _fallback_note(decision: RouteDecision) -> str:
    """Why the fallback servers were asked, when they were: a rule that matched but
    names only servers that cannot be asked falls back too."""
    if not decision.fallback:
        return ""
    if decision.matched_rules:
        return "   (fallback: the matching rule's servers cannot be asked)"
    return "   (fallback: no rule matched)"


class RulesPage(QWidget):
    changed = Signal()

    def __init__(
        self, engine: Callable[[], EngineLike | None] | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self._engine = engine or (lambda: None)
        self.config: Config | None = None
        self.current: RoutingRule | None = None
        self._loading = False

        self.mode = ComboBox()
        self.mode.addItem("First matching rule", "first")
        self.mode.addItem("All matching rules", "all")
        self.mode.currentIndexChanged.connect(self._mode_changed)
        self.fallback = QLineEdit()
        self.fallback.setPlaceholderText("every enabled server")
        self.fallback.textEdited.connect(self._fallback_changed)

        self.list = QListWidget()
        self.list.setDragDropMode(QAbstractItemView.DragDropMode.InternalMove)
        self.list.setDefaultDropAction(Qt.DropAction.MoveAction)
        self.list.model().rowsMoved.connect(self._reordered)
        self.list.currentRowChanged.connect(self._select)
        self.list.itemChanged.connect(self._enabled_toggled)
        self.list.installEventFilter(self)  # Alt+Up / Alt+Down reorder, as a drag does
        add = QPushButton(theme.icon("add"), "Add rule")
        add.clicked.connect(self.add_rule)
        self.remove_button = QPushButton(theme.icon("remove"), "Remove")
        self.remove_button.clicked.connect(self.remove_rule)
        self.hint = hint = QLabel("Drag or Alt+↑/↓ to reorder: rules are tried top to bottom.")
        hint.setObjectName("Hint")
        hint.setWordWrap(True)  # on one line it held the list as wide as itself
        self.empty = QLabel(
            "No routing rules: every question asks the fallback servers, or every enabled "
            "server when none are named.\n\nAdd a rule to send the questions that match its "
            "pattern (code names, \"error\", a project's name) to the servers you choose.")
        self.empty.setObjectName("Hint")
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.empty.setContentsMargins(8, 8, 8, 8)
        self.rules_stack = QStackedWidget()
        self.rules_stack.addWidget(self.list)
        self.empty_area = scrolled_down(self.empty)  # the rules' place is short at large scales
        self.rules_stack.addWidget(self.empty_area)

        self.name = QLineEdit()
        self.pattern = QLineEdit()
        self.pattern.setPlaceholderText(r"case-insensitive regex, e.g. \b(def|class)\b")
        self.pattern_error = error_label()
        self.servers = CheckList()
        self.priority = SpinBox()
        self.priority.setRange(-100, 100)
        self.strategy = ComboBox()
        for s in STRATEGIES:
            self.strategy.addItem(s or "(default)", s or None)
        self.query_class = QLineEdit()
        self.query_class.setPlaceholderText("any class")

        form = QFormLayout()
        form.addRow("Name", self.name)
        form.addRow("Pattern", with_error(self.pattern, self.pattern_error))
        form.addRow("Ask", self.servers)
        form.addRow("Priority", self.priority)
        form.addRow("Strategy", self.strategy)
        form.addRow("Query class", self.query_class)
        self.form_widget = QWidget()
        outer = QVBoxLayout(self.form_widget)
        outer.addLayout(form)
        outer.addStretch()

        self.sample = QLineEdit()
        self.sample.setPlaceholderText("Try a query: which rules match, which servers are asked?")
        self.verdict = QLabel()
        self.verdict.setWordWrap(True)
        self.verdict.setTextFormat(Qt.TextFormat.PlainText)
        self._test_timer = QTimer(self, singleShot=True, interval=120)
        self._test_timer.timeout.connect(self.run_test)
        self._typed = False  # the next test follows the person typing a query: show its answer
        self.sample.textEdited.connect(self._sample_edited)

        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.rules_stack, 1)
        left_layout.addWidget(hint)
        row = QHBoxLayout()
        row.addWidget(add)
        row.addWidget(self.remove_button)
        left_layout.addLayout(row)
        splitter = QSplitter()
        # The rule's form scrolls on its own: at its full height it pushed the page's
        # *Add rule* button and the tester below a short screen's fold.
        form_area = scrolled_down(self.form_widget)
        splitter.addWidget(left)
        splitter.addWidget(form_area)
        splitter.setStretchFactor(1, 1)  # a wider window widens the form, not the list
        splitter.setSizes([260, 560])

        top = QFormLayout()
        top.addRow("Routing mode", self.mode)
        top.addRow("Fallback servers", self.fallback)
        tester_title = QLabel("Rule tester")
        tester_title.setObjectName("SectionTitle")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addLayout(top)
        layout.addWidget(splitter, 1)
        layout.addWidget(tester_title)
        layout.addWidget(self.sample)
        layout.addWidget(self.verdict)

        self.name.textEdited.connect(self._edited)
        self.pattern.textEdited.connect(self._edited)
        self.servers.changed.connect(self._edited)
        self.priority.valueChanged.connect(self._edited)
        self.strategy.currentIndexChanged.connect(self._edited)
        self.query_class.textEdited.connect(self._edited)

    def load(self, config: Config) -> None:
        self.config = config
        self._loading = True
        self.mode.setCurrentIndex(self.mode.findData(config.routing.mode))
        self.fallback.setText(", ".join(config.routing.fallback or []))
        self._loading = False
        self._fill_list()
        self.list.setCurrentRow(0 if config.routing.rules else -1)
        if not config.routing.rules:
            self._select(-1)
        self.run_test()

    def _fill_list(self) -> None:
        assert self.config is not None
        self._loading = True
        self.list.clear()
        for rule in self.config.routing.rules:
            item = QListWidgetItem(self._label(rule))
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable | Qt.ItemFlag.ItemIsDragEnabled)
            item.setCheckState(Qt.CheckState.Checked if rule.enabled else Qt.CheckState.Unchecked)
            item.setData(Qt.ItemDataRole.UserRole, id(rule))
            self.list.addItem(item)
        self._loading = False
        has_rules = bool(self.config.routing.rules)
        self.rules_stack.setCurrentWidget(self.list if has_rules else self.empty_area)
        self.hint.setVisible(has_rules)

    @staticmethod
    def _label(rule: RoutingRule) -> str:
        return f"{rule.name}   /{rule.pattern}/ → {', '.join(rule.servers) or 'nobody'}"

    def _select(self, row: int) -> None:
        if self._loading or self.config is None:
            return
        rules = self.config.routing.rules
        self.current = rules[row] if 0 <= row < len(rules) else None
        self.form_widget.setEnabled(self.current is not None)
        self.remove_button.setEnabled(self.current is not None)
        rule = self.current or RoutingRule(name="", pattern="", servers=[])
        self._loading = True
        self.name.setText(rule.name)
        self.pattern.setText(rule.pattern)
        self.servers.set_items(*self._ask_list(rule))
        self.priority.setValue(rule.priority)
        self.strategy.setCurrentIndex(max(0, self.strategy.findData(rule.strategy)))
        self.query_class.setText(rule.query_class or "")
        self._loading = False
        self._check_pattern()

    def _check_pattern(self) -> str | None:
        error = pattern_error(self.pattern.text()) if self.current is not None else None
        set_invalid(self.pattern, error, self.pattern_error)
        return error

    def _edited(self, *_: Any) -> None:
        if self._loading or self.current is None:
            return
        rule = self.current
        rule.name = self.name.text()
        # An invalid pattern is kept as typed (never lost); validation blocks the save.
        rule.pattern = self.pattern.text()
        self._check_pattern()
        rule.servers = self.servers.checked()
        rule.priority = self.priority.value()
        rule.strategy = self.strategy.currentData()
        rule.query_class = self.query_class.text().strip() or None
        item = self.list.currentItem()
        if item is not None:
            self._loading = True
            item.setText(self._label(rule))
            self._loading = False
        self.changed.emit()
        self._test_timer.start()

    def has_field_errors(self) -> bool:
        if self.config is None:
            return False
        return any(pattern_error(r.pattern) for r in self.config.routing.rules)

    def _enabled_toggled(self, item: QListWidgetItem) -> None:
        if self._loading or self.config is None:
            return
        row = self.list.row(item)
        self.config.routing.rules[row].enabled = item.checkState() == Qt.CheckState.Checked
        self.changed.emit()
        self._test_timer.start()

    def _reordered(self, _parent: QModelIndex, start: int, end: int, _dest: QModelIndex, row: int) -> None:
        """Apply the list's new order (after a drag) to the rules."""
        if self.config is None:
            return
        by_id = {id(r): r for r in self.config.routing.rules}
        order = [self.list.item(i).data(Qt.ItemDataRole.UserRole) for i in range(self.list.count())]
        self.config.routing.rules = [by_id[i] for i in order if i in by_id]
        self.changed.emit()
        self._test_timer.start()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.list and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            steps = {Qt.Key.Key_Up: -1, Qt.Key.Key_Down: 1}
            if event.modifiers() == Qt.KeyboardModifier.AltModifier and event.key() in steps:
                self._move_current(steps[Qt.Key(event.key())])
                return True
        return super().eventFilter(watched, event)

    def _move_current(self, step: int) -> None:
        row = self.list.currentRow()
        if row >= 0 and 0 <= row + step < self.list.count():
            self.move_rule(row, row + step)

    def move_rule(self, row: int, to: int) -> None:
        """Move the rule at ``row`` to position ``to``, as dragging it there does."""
        if self.config is None:
            return
        rules = self.config.routing.rules
        rules.insert(to, rules.pop(row))
        self._fill_list()
        self.list.setCurrentRow(to)
        self.changed.emit()
        self._test_timer.start()

    def add_rule(self) -> None:
        if self.config is None:
            return
        rule = RoutingRule(name=f"rule-{len(self.config.routing.rules) + 1}", pattern="", servers=[])
        self.config.routing.rules.append(rule)
        self._fill_list()
        self.list.setCurrentRow(len(self.config.routing.rules) - 1)
        self.pattern.setFocus()
        self.changed.emit()

    def remove_rule(self) -> None:
        if self.config is None or self.current is None:
            return
        self.config.routing.rules.remove(self.current)
        self._fill_list()
        self.list.setCurrentRow(min(self.list.count() - 1, 0))
        if not self.config.routing.rules:
            self._select(-1)
        self.changed.emit()

    def _mode_changed(self) -> None:
        if self._loading or self.config is None:
            return
        self.config.routing.mode = self.mode.currentData()
        self.changed.emit()
        self._test_timer.start()

    def _fallback_changed(self, text: str) -> None:
        if self._loading or self.config is None:
            return
        names = [n.strip() for n in text.split(",") if n.strip()]
        self.config.routing.fallback = names or None
        self.changed.emit()
        self._test_timer.start()

    def _sample_edited(self, _text: str) -> None:
        self._typed = True
        self._test_timer.start()

    def run_test(self) -> None:
        """Show which rules match the sample query and which servers would be asked."""
        typed, self._typed = self._typed, False
        query = self.sample.text()
        if self.config is None or not query.strip():
            self.verdict.setText("")
            return
        if self.has_field_errors():
            self.verdict.setText("Fix the invalid pattern first.")
            return
        try:
            explanation = backend.explain_routing(self.config, query)
        except Exception as exc:
            self.verdict.setText(f"Could not evaluate the rules: {exc}")
            return
        decision = explanation.decision
        lines = []
        for trace in explanation.rules:
            mark = "✔" if trace.used else "✓" if trace.status == "matched" else "·"
            detail = f" “{trace.matched_text}”" if trace.matched_text else ""
            why = f" — {trace.error}" if trace.error else ""
            unused = " (not used: an earlier rule won)" if trace.status == "matched" and not trace.used else ""
            lines.append(f"{mark} {trace.name}: {trace.status}{detail}{why}{unused}")
        lines.append("")
        lines.append("Asked: " + (", ".join(decision.servers) or "nobody") + _fallback_note(decision))
        if silent := self._silent(decision.servers):
            lines.append("Will not answer: " + "; ".join(f"{k} ({v})" for k, v in silent.items()))
        if decision.skipped:
            lines.append("Skipped: " + "; ".join(f"{k} ({v})" for k, v in decision.skipped.items()))
        lines.append(f"Query class: {explanation.query_class}")
        if decision.strategy:
            lines.append(f"Strategy: {decision.strategy}")
        if decision.weights:
            lines.append("Weights: " + ", ".join(f"{k} {v:g}" for k, v in decision.weights.items()))
        self.verdict.setText("\n".join(lines))
        if typed:  # once the new lines are laid out
            QTimer.singleShot(0, self._show_verdict)

    def refresh_servers(self) -> None:
        """The Ask list again, after the servers were edited (added, renamed, turned off)."""
        if self.current is not None:
            self.servers.set_items(*self._ask_list(self.current))

    def _ask_list(self, rule: RoutingRule) -> tuple[list[str], list[str], dict[str, str]]:
        """The servers a rule may ask, those it asks, and a note beside each that will not
        answer: one turned off is never asked, whatever a rule says."""
        if self.config is None:
            return [], rule.servers, {}
        names = server_names(self.config)
        off = {name: "off" for name, server in self.config.servers.items() if not server.enabled}
        return names, rule.servers, {**self._silent(names), **off}

    def _silent(self, asked: Sequence[str]) -> dict[str, str]:
        """The asked servers that cannot answer a search as the engine runs them now (no
        tool a search may call, no command, failing to start), with why: a rule that
        routes to them alone finds nothing, and the tester said they were asked."""
        engine = self._engine()
        try:
            states = {s.name: s for s in engine.server_states()} if engine is not None else {}
        except Exception:  # the engine may be closing: say nothing rather than guess
            return {}
        silent: dict[str, str] = {}
        for name in asked:
            state = states.get(name)
            if state is None:
                continue
            if cannot_search(state):
                silent[name] = setup_needed(state.tool_error or "") or "no search tool"
            elif (words := trouble(state)) is not None:
                silent[name] = words
        return silent

    def _show_verdict(self) -> None:
        """Scroll the page to the tester's answer: on a short screen it falls below the
        fold, and a person typing a query saw nothing happen."""
        area = self.parentWidget()
        while area is not None and not isinstance(area, QScrollArea):
            area = area.parentWidget()
        if area is not None:
            QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)  # its new height
            area.ensureWidgetVisible(self.verdict, 0, 0)
