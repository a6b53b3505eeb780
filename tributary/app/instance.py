"""Single instance over a local socket: ``tributary gui`` / ``tributary toggle`` reach the app.

The client half (``send_command``) needs only QtCore/QtNetwork, no engine and no
QApplication, so the CLI can call it cheaply. Wayland forbids global hotkeys; binding
``tributary toggle`` to a desktop shortcut gives the same effect.
"""

from __future__ import annotations

import getpass
import hashlib
import logging

from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

from tributary.engine import paths

log = logging.getLogger(__name__)

COMMANDS = ("show", "toggle", "quick", "quit")
TIMEOUT_MS = 1000


def server_name() -> str:
    """Per user and per Tributary home, so test runs and portable installs don't collide."""
    scope = f"{getpass.getuser()}:{paths.config_dir()}"
    return "tributary-" + hashlib.sha1(scope.encode()).hexdigest()[:12]


def send_command(command: str, *, name: str | None = None, timeout_ms: int = TIMEOUT_MS) -> bool:
    """Ask a running instance to ``show``/``toggle``/``quick``/``quit``. False: none runs."""
    if command not in COMMANDS:
        raise ValueError(f"unknown command {command!r}; expected one of {', '.join(COMMANDS)}")
    socket = QLocalSocket()
    socket.connectToServer(name or server_name())
    if not socket.waitForConnected(timeout_ms):
        return False
    socket.write((command + "\n").encode())
    socket.waitForBytesWritten(timeout_ms)
    answered = socket.waitForReadyRead(timeout_ms) and bytes(socket.readAll().data()).startswith(b"ok")
    socket.disconnectFromServer()
    return answered


class InstanceServer(QObject):
    """Listens for commands from later invocations; emits ``command`` for each."""

    command = Signal(str)

    def __init__(self, name: str | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = name or server_name()
        self._server = QLocalServer(self)
        self._server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self._server.newConnection.connect(self._accept)

    def listen(self) -> bool:
        """Start listening. A stale socket from a crashed instance is removed first
        (the caller has already found that nobody answers on it)."""
        if self._server.listen(self.name):
            return True
        QLocalServer.removeServer(self.name)
        ok = self._server.listen(self.name)
        if not ok:
            log.warning("single-instance socket unavailable: %s", self._server.errorString())
        return ok

    def close(self) -> None:
        self._server.close()

    def _accept(self) -> None:
        while (socket := self._server.nextPendingConnection()) is not None:
            socket.readyRead.connect(lambda s=socket: self._read(s))
            socket.disconnected.connect(socket.deleteLater)

    def _read(self, socket: QLocalSocket) -> None:
        while socket.canReadLine():
            command = bytes(socket.readLine().data()).decode(errors="replace").strip()
            if command in COMMANDS:
                socket.write(b"ok\n")
                socket.flush()
                self.command.emit(command)
            else:
                socket.write(b"error unknown command\n")
