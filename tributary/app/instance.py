"""Single instance over a local socket: ``tributary gui`` / ``tributary toggle`` reach the app.

The client half (``send_command``) needs only QtCore/QtNetwork, no engine and no
QApplication, so the CLI can call it cheaply. Wayland forbids global hotkeys; binding
``tributary toggle`` to a desktop shortcut gives the same effect.
"""

from __future__ import annotations

import getpass
import hashlib
import logging
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

from tributary.engine import api

log = logging.getLogger(__name__)

COMMANDS = ("show", "toggle", "quick", "quit")
TIMEOUT_MS = 1000


def server_name() -> str:
    """Per user and per Tributary home, so test runs and portable installs don't collide."""
    scope = f"{getpass.getuser()}:{api.config_dir()}"
    return "tributary-" + hashlib.sha1(scope.encode()).hexdigest()[:12]


class NotAnswering(RuntimeError):
    """An instance listens on the socket but did not acknowledge the command: starting
    a second app would take the socket from it, so the caller reports this instead."""


def send_command(command: str, *, name: str | None = None, timeout_ms: int | None = None) -> bool:
    """Ask a running instance to ``show``/``toggle``/``quick``/``quit``. False: none
    runs; ``NotAnswering`` when one is reached but does not say ``ok``."""
    if command not in COMMANDS:
        raise ValueError(f"unknown command {command!r}; expected one of {', '.join(COMMANDS)}")
    timeout = TIMEOUT_MS if timeout_ms is None else timeout_ms
    socket = QLocalSocket()
    socket.connectToServer(name or server_name())
    if not socket.waitForConnected(timeout):
        return False
    socket.write((command + "\n").encode())
    socket.waitForBytesWritten(timeout)
    reply = b""
    while not reply.endswith(b"\n") and socket.waitForReadyRead(timeout):
        reply += bytes(socket.readAll().data())
    socket.disconnectFromServer()
    if not reply.startswith(b"ok"):
        detail = reply.decode(errors="replace").strip() or "no answer"
        raise NotAnswering(f"the running Tributary did not accept {command!r}: {detail}")
    return True


class _Listener(QLocalServer):
    """A local server that makes each connection's socket itself.

    ``nextPendingConnection`` hands back a socket Qt made, and its Python wrapper is
    found by address: a wrapper kept for an object Qt has since deleted (memory now
    reused by the socket) would come back instead, of the wrong type. A socket made
    here from Python always gets a wrapper of its own."""

    def __init__(self, accept: Callable[[QLocalSocket], None], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._accept = accept

    def incomingConnection(self, socketDescriptor: int) -> None:
        socket = QLocalSocket(self)
        if socket.setSocketDescriptor(socketDescriptor):
            self._accept(socket)
        else:
            socket.deleteLater()


class InstanceServer(QObject):
    """Listens for commands from later invocations; emits ``command`` for each."""

    command = Signal(str)

    def __init__(self, name: str | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = name or server_name()
        self._server = _Listener(self._accept, self)
        self._server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self._connections: set[QLocalSocket] = set()  # open ones, referenced until closed

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
        for socket in list(self._connections):
            self._drop(socket)

    @property
    def connections(self) -> int:
        """How many connections are open (each is dropped when its client leaves)."""
        return len(self._connections)

    def _accept(self, socket: QLocalSocket) -> None:
        self._connections.add(socket)
        socket.readyRead.connect(lambda: self._read(socket))
        socket.disconnected.connect(lambda: self._drop(socket))
        if socket.bytesAvailable():
            self._read(socket)

    def _drop(self, socket: QLocalSocket) -> None:
        """Forget a connection: its signals disconnected, the socket deleted later."""
        if socket not in self._connections:
            return
        self._connections.discard(socket)
        socket.readyRead.disconnect()
        socket.disconnected.disconnect()
        socket.abort()
        socket.deleteLater()

    def _read(self, socket: QLocalSocket) -> None:
        while socket.canReadLine():
            command = bytes(socket.readLine().data()).decode(errors="replace").strip()
            if command in COMMANDS:
                socket.write(b"ok\n")
                socket.flush()
                self.command.emit(command)
            else:
                socket.write(b"error unknown command\n")
