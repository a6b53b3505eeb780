"""The single-instance socket keeps answering however the app's own objects come and
go, and a command the running app does not answer never starts a second app."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtNetwork import QLocalServer, QLocalSocket

from tributary.app import instance, main
from tributary.app.instance import InstanceServer, send_command
from tributary.app.search.results_model import ResultsModel


async def until(condition: Any, timeout: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
        await asyncio.sleep(0.005)


async def ask(name: str, command: str) -> bytes:
    """Send ``command`` without blocking the loop the server runs on; the reply."""
    socket = QLocalSocket()
    socket.connectToServer(name)
    await until(lambda: socket.state() == QLocalSocket.LocalSocketState.ConnectedState)
    socket.write((command + "\n").encode())
    reply = b""

    def answered() -> bool:
        nonlocal reply
        reply += bytes(socket.readAll().data())
        return reply.endswith(b"\n")

    await until(answered)
    socket.disconnectFromServer()
    return reply


@pytest.mark.asyncio
async def test_commands_are_answered_while_items_come_and_go(qtbot: object) -> None:
    """Qt deletes removed rows' items; sockets made afterwards may reuse their memory.
    Every command is still read from a socket, answered and emitted."""
    server = InstanceServer(name=f"tributary-test-churn-{id(qtbot)}")
    assert server.listen()
    received: list[str] = []
    server.command.connect(received.append)
    model = QStandardItemModel()
    prototype = QStandardItem()
    kept: list[QStandardItem] = []  # wrappers a careless caller holds on to
    try:
        for round_ in range(60):
            items = [prototype.clone() for _ in range(40)]
            for item in items:
                model.appendRow(item)
            client = QLocalSocket()
            client.connectToServer(server.name)
            model.removeRows(0, len(items))  # Qt frees them; the wrappers stay
            kept.extend(items)
            await until(lambda c=client: c.state() == QLocalSocket.LocalSocketState.ConnectedState)
            client.write(b"show\n")
            reply = b""

            def answered(c: QLocalSocket = client) -> bool:
                nonlocal reply
                reply += bytes(c.readAll().data())
                return reply.endswith(b"\n")

            await until(answered)
            assert reply == b"ok\n", f"round {round_}"
            client.disconnectFromServer()
        await until(lambda: server.connections == 0)
        assert received == ["show"] * 60
    finally:
        server.close()


@pytest.mark.asyncio
async def test_results_rows_removed_leave_no_live_wrappers(qtbot: object) -> None:
    """A removed result row's items are known to be gone from Python too."""
    import shiboken6

    from tests.app.fakes import build_response
    from tributary.engine.model import SearchRequest

    model = ResultsModel()
    model.set_response(build_response(SearchRequest(query="first question"), ["git", "docs"], []))
    items = [model.item(row, column) for row in range(model.rowCount()) for column in range(2)]
    model.set_response(build_response(SearchRequest(query="another question"), ["files"], []))
    assert items and not any(shiboken6.isValid(item) for item in items)


@pytest.mark.asyncio
async def test_connections_are_dropped_when_clients_leave_and_on_close(qtbot: object) -> None:
    server = InstanceServer(name=f"tributary-test-drop-{id(qtbot)}")
    assert server.listen()
    try:
        for command in ("show", "toggle", "bogus"):
            reply = await ask(server.name, command)
            assert reply.startswith(b"ok" if command != "bogus" else b"error")
        await until(lambda: server.connections == 0)
        waiting = QLocalSocket()
        waiting.connectToServer(server.name)
        await until(lambda: server.connections == 1)
    finally:
        server.close()
    assert server.connections == 0


def test_an_instance_that_does_not_answer_is_reported_not_replaced(
        qtbot: object, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The command reaches a socket nobody answers on: no second app is started."""
    silent = QLocalServer()  # listens, but this thread is blocked in the client: no answer
    name = f"tributary-test-silent-{id(qtbot)}"
    QLocalServer.removeServer(name)
    assert silent.listen(name)
    monkeypatch.setattr(instance, "server_name", lambda: name)
    monkeypatch.setattr(instance, "TIMEOUT_MS", 50)
    started: list[object] = []
    monkeypatch.setattr(main, "run", lambda **kwargs: started.append(kwargs) or 0)
    try:
        with pytest.raises(instance.NotAnswering):
            send_command("toggle", name=name)
        assert main.main(["--quick"]) == 1
    finally:
        silent.close()
    assert started == []
    assert "did not accept 'quick'" in capsys.readouterr().err
