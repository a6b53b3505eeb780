"""The Desktop tab: settings of this app rather than of the engine (the editor that
"Open in editor" starts). Saved at once to the app's own settings file, not the
engine's config, so Save/Revert of the draft never touch it."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFormLayout, QLabel, QLineEdit, QVBoxLayout, QWidget

from tributary.app import open_file


class DesktopPage(QWidget):
    message = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.editor = QLineEdit(open_file.load_settings().get("editor", ""))
        self.editor.setPlaceholderText(_fallback_text())
        self.editor.setToolTip("e.g. code · pycharm · nvim · emacs · subl · or a template: "
                               "myeditor --goto {path}:{line}")
        self.editor.editingFinished.connect(self.save)
        help_text = QLabel(
            "Used by Open in editor (Enter on a result). Known editors open at the result's line: "
            "code/cursor (-g file:line), JetBrains IDEs (--line N file), vim/nvim/emacs/nano (+N file, "
            "in a terminal), subl/zed (file:line). Any other command gets the file; {path} and {line} "
            "place them yourself. Empty: $VISUAL or $EDITOR, else the desktop's default application.")
        help_text.setObjectName("Hint")
        help_text.setWordWrap(True)
        help_text.setTextFormat(Qt.TextFormat.PlainText)
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow("Editor command", self.editor)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addLayout(form)
        layout.addWidget(help_text)
        layout.addStretch()

    def save(self) -> None:
        command = self.editor.text().strip()
        if command == open_file.load_settings().get("editor", ""):
            return
        try:
            open_file.save_editor_command(command)
        except OSError as exc:
            self.message.emit(f"Could not save the editor setting: {exc}")
            return
        self.message.emit(f"Results open with: {command}" if command else
                          "Results open with " + _fallback_text())


def _environ() -> dict[str, str]:
    import os

    return dict(os.environ)


def _fallback_text() -> str:
    env = _environ()
    for name in open_file.EDITOR_ENVS:
        if env.get(name, "").strip():
            return f"${name}: {env[name]}"
    return "the desktop's default application"
