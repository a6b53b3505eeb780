"""A stdio transport for the SDK's ``ClientSession`` that survives hostile servers.

It yields the same ``(read_stream, write_stream)`` pair of SDK ``SessionMessage``
objects as ``mcp.client.stdio.stdio_client`` — messages are parsed and
serialised with the SDK's own ``jsonrpc_message_adapter`` — and differs where
an aggregator talking to many untrusted servers needs it:

* **Bounded lines.** Stdout is read as bytes with linear buffering. A line
  longer than ``max_line_bytes`` (default 16 MB) is discarded as it streams in;
  if its JSON-RPC id is visible in the first bytes, the waiting request fails
  at once with a clear error instead of timing out. (The SDK's reader joins
  strings per chunk — quadratic on a 50 MB line — and stalls every other
  source's event loop while it does.)
* **Off-loop parsing.** Lines over 256 KB are parsed in a worker thread.
* **Writes from the sending task.** The write stream puts each message into
  the pipe inside ``send`` instead of handing it to a writer task: a request
  reaches the server before any other ready task runs (in a fan-out, before
  the next request is prepared), and each message costs one task hop less.
* **Lenient decoding.** Invalid UTF-8 becomes U+FFFD and normalisation turns
  that into the source's error; a strict decoder would kill the session.
* **Known pid, whole-group kill.** The child runs in its own session (process
  group; Job Object on Windows). Shutdown closes stdin, waits, SIGTERMs then
  SIGKILLs the group, and always SIGKILLs what is left of the group, so
  children of a crashed server (``npx`` → ``node``) never outlive it.
* **A reaper on Linux.** The command runs under :mod:`tributary.engine.sources.reaper`, which
  gets a signal when Tributary dies (even by SIGKILL) and adopts orphans, so a
  grandchild that called ``setsid()`` is stopped with the rest of the tree.
  ``StdioStreams.kill`` skips the stdin step for a server that stopped
  answering, and wakes a stopped (``SIGSTOP``) one so it can act on the SIGTERM.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self, TextIO

import anyio
import anyio.abc
import anyio.to_thread
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import types
from mcp.shared.message import SessionMessage

from tributary.engine.runtime.spawn import frozen, module_command
from tributary.engine.sources.stderr import StderrLog

DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024
THREAD_PARSE_BYTES = 256 * 1024
STDIN_CLOSE_GRACE_S = 2.0  # the MCP spec's shutdown: close stdin, wait, then signal
TERM_GRACE_S = 2.0
# The reaper terminates the tree within TERM_GRACE_S of a SIGTERM; only then does the
# group get SIGKILL, which would kill the reaper before it stopped escaped grandchildren.
REAPER_MARGIN_S = 1.5
_REAPER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reaper.py")
REAPER_MODULE = "tributary.engine.sources.reaper"
_POLL_S = 0.01
EXIT_POLL_S = 0.05
_ID_IN_HEAD = re.compile(rb'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.){0,200}")')
RESPONSE_TOO_LARGE = -32099  # implementation-defined server-error range of JSON-RPC


class StdinWriter:
    """The session's write stream: serialises a message and writes it to the pipe.

    Concurrent senders are safe — each message is one ``write`` to the
    transport, and the event loop runs one task at a time. When the pipe
    breaks (the server stopped reading), the read side ends too, so the
    session sees the connection close, and the send raises
    ``BrokenResourceError`` as the SDK expects of a torn-down transport.
    """

    def __init__(
        self, stdin: anyio.abc.ByteSendStream, reads: MemoryObjectSendStream[SessionMessage | Exception]
    ) -> None:
        self._stdin = stdin
        self._reads = reads
        self._closed = False

    async def send(self, message: SessionMessage, /) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
        try:
            await self._stdin.send((data + "\n").encode("utf-8"))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError) as exc:
            self._closed = True
            self._reads.close()
            raise anyio.BrokenResourceError from exc

    def close(self) -> None:
        self._closed = True

    async def aclose(self) -> None:
        self.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        self.close()
        return None


@dataclass(slots=True)
class StdioStreams:
    read: MemoryObjectReceiveStream[SessionMessage | Exception]
    write: StdinWriter
    pid: int
    # Terminate the process group now, kill it after TERM_GRACE_S; the exit is then
    # noticed (and the process reaped) as for a crash.
    kill: Callable[[], Awaitable[None]]


@asynccontextmanager
async def open_stdio(
    command: str,
    args: list[str],
    *,
    env: dict[str, str],
    cwd: str | None,
    stderr: TextIO,
    log: StderrLog,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
) -> AsyncIterator[StdioStreams]:
    """Spawn ``command`` and speak MCP over its stdin/stdout until the context exits."""
    process = await _spawn(command, args, env, cwd, stderr)
    stderr.close()  # the child holds its own copy; the pipe reader sees EOF when it exits
    read_send, read_recv = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    assert process.stdin is not None
    write_send = StdinWriter(process.stdin, read_send)
    exit_seen = anyio.Event()
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_read_stdout, process, read_send, log, max_line_bytes)
            tg.start_soon(_watch_exit, process, read_send, log, exit_seen)
            try:
                yield StdioStreams(read_recv, write_send, process.pid,
                                   lambda: _terminate(process, log))
            finally:
                with anyio.CancelScope(shield=True):
                    write_send.close()
                    await _stop(process)
                if not exit_seen.is_set() and process.returncode is not None:
                    # Stdout ended (and the session with it) before the watcher's poll.
                    log.event(f"process exited with code {process.returncode}")
                tg.cancel_scope.cancel()
    finally:
        read_recv.close()
        write_send.close()
        _kill_group(process.pid)
        # Reap and release the pipes; bounded, as an escaped grandchild may hold them open.
        with anyio.move_on_after(1.0, shield=True), contextlib.suppress(Exception):
            await process.aclose()


async def _spawn(
    command: str, args: list[str], env: dict[str, str], cwd: str | None, stderr: TextIO
) -> Any:
    if sys.platform == "win32":  # pragma: no cover - Job Object keeps the tree together
        from mcp.os.win32.utilities import create_windows_process

        return await create_windows_process(command, args, env, stderr, cwd)
    argv = [command, *args]
    if uses_reaper():
        # A desktop bundle has no Python to run the file with: its executable runs it.
        reaper = module_command(REAPER_MODULE) if frozen() else [sys.executable, "-I", "-S", _REAPER]
        argv = [*reaper, str(TERM_GRACE_S), str(os.getpid()), _resolve(command, env, cwd), *args]
    return await anyio.open_process(
        argv, env=env, cwd=cwd, stderr=stderr, start_new_session=True
    )


def uses_reaper() -> bool:
    """Whether servers run under :mod:`tributary.engine.sources.reaper` (Linux: it needs ``prctl``)."""
    return sys.platform.startswith("linux")


def _resolve(command: str, env: dict[str, str], cwd: str | None) -> str:
    """``command`` as the reaper will exec it; a missing one fails here, as a spawn would."""
    if cwd is not None and not os.path.isdir(cwd):  # named as the missing one, as a spawn would
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), cwd)
    if os.sep in command:
        path = command if cwd is None else os.path.join(cwd, command)
        if os.access(path, os.X_OK) and not os.path.isdir(path):
            return command
    elif found := shutil.which(command, path=env.get("PATH", os.defpath)):
        return found
    raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), command)


async def _read_stdout(
    process: anyio.abc.Process,
    out: MemoryObjectSendStream[SessionMessage | Exception],
    log: StderrLog,
    max_line_bytes: int,
) -> None:
    assert process.stdout is not None
    buffer = bytearray()
    dropping = 0  # bytes of an oversized line discarded so far
    async with out:
        try:
            async for chunk in process.stdout:
                pos, size = 0, len(chunk)
                while pos < size:
                    newline = chunk.find(b"\n", pos)
                    end = size if newline < 0 else newline
                    piece, pos = chunk[pos:end], end + 1
                    if dropping:
                        dropping += len(piece)
                        if newline >= 0:
                            log.event(f"discarded a {dropping / 2**20:.1f} MiB line from stdout")
                            dropping = 0
                        continue
                    buffer += piece
                    if len(buffer) > max_line_bytes:
                        await _oversized(bytes(buffer[:512]), out, log, max_line_bytes)
                        dropping = len(buffer) if newline < 0 else 0
                        buffer.clear()
                        continue
                    if newline >= 0:
                        line = bytes(buffer)
                        buffer.clear()
                        if line.strip():
                            await out.send(await _parse(line))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
            pass
        except OSError as exc:  # the pipe broke under us: the session sees the stream end
            log.event(f"stdout read failed: {exc}")


async def _oversized(
    head: bytes, out: MemoryObjectSendStream[SessionMessage | Exception], log: StderrLog,
    limit: int,
) -> None:
    message = f"response larger than {limit / 2**20:g} MiB, discarded"
    log.event(message)
    match = _ID_IN_HEAD.search(head)
    if match is None:
        return  # nothing to answer; the request times out
    raw = match.group(1).decode("utf-8", "replace")
    request_id: str | int = int(raw) if raw.lstrip("-").isdigit() else raw[1:-1]
    error = types.JSONRPCError(
        jsonrpc="2.0", id=request_id,
        error=types.ErrorData(code=RESPONSE_TOO_LARGE, message=message),
    )
    await out.send(SessionMessage(error))


async def _parse(line: bytes) -> SessionMessage | Exception:
    if len(line) > THREAD_PARSE_BYTES:
        return await anyio.to_thread.run_sync(_parse_now, line)
    return _parse_now(line)


def _parse_now(line: bytes) -> SessionMessage | Exception:
    text = line.decode("utf-8", errors="replace")
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(text, by_name=False))
    except ValueError as exc:
        return exc


async def _watch_exit(
    process: Any, reads: MemoryObjectSendStream[SessionMessage | Exception], log: StderrLog,
    seen: anyio.Event,
) -> None:
    """Notice the server's exit even while a grandchild keeps its stdout open."""
    while process.returncode is None:
        await anyio.sleep(EXIT_POLL_S)
    seen.set()
    log.event(f"process exited with code {process.returncode}")
    _kill_group(process.pid)  # orphans of a crashed server go with it
    await anyio.sleep(EXIT_POLL_S)  # let the reader deliver what the server wrote last
    reads.close()


async def _stop(process: Any) -> None:
    """Close stdin, wait; then terminate the group; then kill it."""
    with contextlib.suppress(Exception):
        await process.stdin.aclose()
    if await _exited(process, STDIN_CLOSE_GRACE_S):
        return
    await _terminate(process)


async def _terminate(process: Any, log: StderrLog | None = None) -> None:
    """SIGTERM the group (SIGCONT too, so a stopped server can act on it); SIGKILL after a grace."""
    if process.returncode is not None:
        return
    if sys.platform == "win32":  # pragma: no cover
        from mcp.os.win32.utilities import terminate_windows_process_tree

        await terminate_windows_process_tree(process)
        return
    if log is not None:
        log.event(f"terminating process group {process.pid}")
    for sig in (signal.SIGTERM, signal.SIGCONT):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, sig)
    grace = TERM_GRACE_S + (REAPER_MARGIN_S if uses_reaper() else 0.0)
    if not await _exited(process, grace):
        if log is not None:
            log.event(f"still running after {grace:g}s: killing process group {process.pid}")
        _kill_group(process.pid)
        await _exited(process, TERM_GRACE_S)
    if log is not None:
        log.event(f"process {process.pid} ended (code {process.returncode})"
                  if process.returncode is not None else f"process {process.pid} did not end")


async def _exited(process: Any, timeout: float) -> bool:
    # Poll returncode: process.wait() also waits for pipe EOF, which a surviving
    # grandchild holding the pipe would delay forever.
    with anyio.move_on_after(timeout):
        while process.returncode is None:
            await anyio.sleep(_POLL_S)
        return True
    return False


def _kill_group(pid: int) -> None:
    if sys.platform == "win32":  # pragma: no cover - the Job Object is closed with the process
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
