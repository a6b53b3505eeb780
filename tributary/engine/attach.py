"""The running engine's local socket: the command line asks a warm engine.

When the desktop app or ``tributary serve`` runs, its engine listens on a Unix socket
named for the user and the Tributary home; ``tributary search``/``context`` send their
request there and get the answer from servers that are already started, instead of
starting (and stopping) every server for one question.

Only the same user may ask: the socket sits in a directory only that user can enter
(0700, checked on every use) and is itself 0600; on Linux the server also checks the
peer's uid (``SO_PEERCRED``) and refuses anyone else. An engine opened with another
config file than the client's refuses the request, and the client then runs its own.
The client also sends a hash of the config file's bytes: a file saved since the engine
last applied it (``tributary servers set`` a moment ago, before the file watcher's
quiet period ends) is applied first, so the answer never comes from the old settings.

Protocol: one JSON line each way. Request ``{"version": 1, "op": "search", "config":
PATH, "config_digest": SHA256, "request": SearchRequest}``; answer ``{"ok": true, "engine": {"pid": N},
"response": SearchResponse, "notes": [TEXT]}`` or ``{"ok": false, "error": TEXT}``. A search
with ``"repo": {"path": ABSOLUTE, "history": BOOL}`` (``--repo``; version 2) is scoped to
that repository, which the engine first brings up to date as the command line would
(changed files, new commits; the notes say what it did), so the client loads no index
code; one not indexed yet is answered ``{"ok": false, "unindexed": true}``, and the
client indexes it itself, with its progress bar. ``op: "ping"``
answers ``{"ok": true, "engine": ...}``; ``engine`` holds its ``pid`` and ``kind`` (``app``,
``serve`` or ``background``). ``op: "stop"`` stops a background engine
(:mod:`tributary.engine.background`); the app and ``serve`` refuse it, since they stop
with what runs them. Platforms without Unix sockets never attach.

The client never waits unbounded on an engine it cannot see: it pings first (a stopped
or wedged engine does not answer within ``PING_TIMEOUT_S``), bounds the wait for the
answer by ``ANSWER_TIMEOUT_S``, and removes a socket nobody listens on any more (a
refused connection: the engine was killed). Each time it says so on stderr and the
caller runs the search itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import hashlib
import json
import logging
import os
import socket
import stat
import struct
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from tributary.engine import paths
from tributary.engine.config.digest import file_digest
from tributary.engine.errors import TributaryError
from tributary.engine.model import EngineKind

if TYPE_CHECKING:
    from tributary.engine.config.schema import Config
    from tributary.engine.model import SearchRequest, SearchResponse

log = logging.getLogger(__name__)

PROTOCOL_VERSION = 1
REPO_VERSION = 2  # a search with ``repo``: an engine from before it refuses, and the client does the work
ANSWERED_VERSIONS = (PROTOCOL_VERSION, REPO_VERSION)
MAX_LINE = 16 * 1024 * 1024  # a response with its assembled context fits easily
CONNECT_TIMEOUT_S = 0.5
PING_TIMEOUT_S = 2.0  # a live engine answers a ping at once, even when busy
# The wait for an answer: past a server's default start-up timeout plus a query's.
ANSWER_TIMEOUT_S = 60.0
TAKE_OVER_S = 10.0  # how long a background engine asked to stop is waited for to let go


class AttachError(TributaryError):
    """The attach socket cannot be used safely (a directory others can enter, …)."""


class _Refused(Exception):
    """Nobody listens on the socket: the engine that made it is gone."""


class _Silent(Exception):
    """The engine took the connection but did not answer in time."""


def code_stamp() -> str:
    """What tells this installation's code from another's, cheaply: the number of
    Tributary's own modules and the newest one's modification time (a frozen bundle's:
    its executable's). A background engine left running across an upgrade, or an edit
    of a development tree, is then stopped instead of answering with the old code."""
    if getattr(sys, "frozen", False):
        info = os.stat(sys.executable)
        return f"{info.st_size}:{info.st_mtime_ns}"
    newest, count = _newest(Path(__file__).resolve().parents[1])
    return f"{count}:{newest}"


def _newest(folder: Path) -> tuple[int, int]:
    newest = count = 0
    with contextlib.suppress(OSError), os.scandir(folder) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if entry.name != "__pycache__":
                    inner, more = _newest(Path(entry.path))
                    newest, count = max(newest, inner), count + more
            elif entry.name.endswith((".py", ".so", ".pyd")):
                with contextlib.suppress(OSError):
                    newest = max(newest, entry.stat().st_mtime_ns)
                    count += 1
    return newest, count


def supported() -> bool:
    return hasattr(socket, "AF_UNIX") and hasattr(os, "getuid")


_MAX_SOCKET_PATH = 100  # sun_path holds 104 (macOS) or 108 (Linux) bytes


def _runtime_dir() -> Path:
    """A directory only this user can enter: ``$TRIBUTARY_HOME/run`` when that is set,
    else ``$XDG_RUNTIME_DIR/tributary`` or ``<tmp>/tributary-<uid>``; created 0700, refused when someone else owns it or may
    enter it (another user could otherwise plant a socket there)."""
    base = os.environ.get("XDG_RUNTIME_DIR")
    directory = Path(base) / "tributary" if base else Path(tempfile.gettempdir()) / f"tributary-{os.getuid()}"
    home = paths.home_override()
    # Under TRIBUTARY_HOME (``<home>/run``) unless that makes too long a socket path.
    if home is not None and len(str(home / "run" / "engine-0123456789ab.sock")) <= _MAX_SOCKET_PATH:
        home.mkdir(parents=True, exist_ok=True)
        directory = home / "run"
    with contextlib.suppress(FileExistsError):
        directory.mkdir(mode=0o700, parents=False)
    info = os.lstat(directory)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise AttachError(
            f"{directory}: not a private directory of this user (owner {info.st_uid}, "
            f"mode {stat.filemode(info.st_mode)}); not attaching to a running engine"
        )
    return directory


def socket_path() -> Path:
    """Per user and per Tributary home, like the app's single-instance socket."""
    scope = f"{getpass.getuser()}:{paths.config_dir()}"
    return _runtime_dir() / f"engine-{hashlib.sha1(scope.encode()).hexdigest()[:12]}.sock"


def _config_key(config_file: Path | None) -> str:
    return str((config_file or paths.default_config_path()).expanduser().resolve())


def _peer_uid(sock: socket.socket | None) -> int | None:
    """The connecting process's uid (Linux ``SO_PEERCRED``); None where unknown."""
    option = getattr(socket, "SO_PEERCRED", None)
    if sock is None or option is None:
        return None
    creds = sock.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("iII"))
    _pid, uid, _gid = struct.unpack("iII", creds)
    return int(uid)


class Searcher(Protocol):
    """What the socket needs of an engine (``tributary.engine.engine.Engine``)."""

    @property
    def config(self) -> Config: ...

    @property
    def effective_config(self) -> Config: ...

    async def search(self, request: SearchRequest) -> SearchResponse: ...

    async def apply_config(self, config: Config) -> None: ...

    async def adopt_new_indexes(self) -> None: ...

    async def repository_changed(self, path: str | Path) -> int: ...

    def repository_refreshed(self, root: Path) -> None: ...


@dataclass(slots=True)
class Attached:
    """A response from a running engine, which process gave it, and what it did first
    (bringing a ``--repo`` repository up to date) for the command line to print."""

    response: SearchResponse
    pid: int
    notes: list[str]


@dataclass(frozen=True, slots=True)
class RepoScope:
    """A ``--repo`` search: the repository (absolute path) the engine brings up to date
    and asks only, and whether its history is asked too."""

    path: Path
    history: bool = True


class AttachServer:
    """Answers the command line's requests with ``engine`` (started by :meth:`Engine.listen`)."""

    def __init__(
        self, engine: Searcher, config_file: Path | None, path: Path | None = None, *,
        kind: EngineKind = EngineKind.SERVE, on_stop: Callable[[], None] | None = None,
        embed_later: Callable[[Path], None] | None = None,
    ) -> None:
        self.engine = engine
        self.kind = kind
        self._on_stop = on_stop  # only a background engine may be stopped by a client
        self._embed_later = embed_later  # what embeds a --repo's waiting chunks (default: a background pass)
        self._last_request = time.monotonic()
        self._code = code_stamp()
        self.config_key = _config_key(config_file)
        self.path = path
        self._server: asyncio.AbstractServer | None = None
        # The config file's bytes as last applied (or found wanting) here: a client that
        # read other bytes saved a change the file watcher has not applied yet.
        self._applied = file_digest(Path(self.config_key))
        self._catching_up = asyncio.Lock()
        self._refreshing: dict[Path, asyncio.Lock] = {}  # one update of a repository at a time

    def idle_s(self) -> float:
        """Seconds since the last search asked here (or since listening began)."""
        return time.monotonic() - self._last_request

    async def start(self) -> bool:
        """Listen; False when the platform cannot, or another engine already answers."""
        if not supported():
            return False
        try:
            self.path = self.path or socket_path()
        except (AttachError, OSError) as exc:
            log.warning("%s", exc)
            return False
        if self.path.exists():
            there = await _engine_at(self.path, CONNECT_TIMEOUT_S)
            if there is not None and self.kind != EngineKind.BACKGROUND and there.get("kind") == EngineKind.BACKGROUND:
                await stop_background(self.path)  # the app or serve, whose servers are warm anyway
                there = await _engine_at(self.path, CONNECT_TIMEOUT_S) if self.path.exists() else None
                if there is None:
                    log.info("a background engine stopped: this %s answers the command line now", self.kind)
            if there is not None:
                log.info("another engine already answers on %s", self.path)
                return False
            self.path.unlink(missing_ok=True)  # left by an engine that died
        old = os.umask(0o177)  # the socket file is created 0600
        try:
            self._server = await asyncio.start_unix_server(self._serve, path=str(self.path), limit=MAX_LINE)
        finally:
            os.umask(old)
        os.chmod(self.path, 0o600)
        return True

    async def close(self) -> None:
        if self._server is None:
            return
        self._server.close()
        with contextlib.suppress(Exception):
            await self._server.wait_closed()
        self._server = None
        if self.path is not None:
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            uid = _peer_uid(writer.get_extra_info("socket"))
            if uid is not None and uid != os.getuid():
                log.warning("refused an attach request from uid %d", uid)
                await _send(writer, {"ok": False, "error": "not the same user"})
                return
            line = await reader.readline()
            if line:
                await _send(writer, await self._answer(line))
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _answer(self, line: bytes) -> dict[str, Any]:
        from tributary.engine.cache.codec import from_jsonable, to_jsonable
        from tributary.engine.model import SearchRequest

        engine_info = {"pid": os.getpid(), "kind": self.kind, "idle_s": round(self.idle_s()), "code": self._code}
        try:
            message = json.loads(line)
        except ValueError:
            return {"ok": False, "error": "not a JSON line"}
        if not isinstance(message, dict) or message.get("version") not in ANSWERED_VERSIONS:
            return {"ok": False, "error": f"expected protocol version {PROTOCOL_VERSION} or {REPO_VERSION}"}
        op = message.get("op")
        if op == "ping":
            return {"ok": True, "engine": engine_info}
        if op == "stop":
            if self._on_stop is None:
                return {"ok": False, "engine": engine_info,
                        "error": f"this engine stops with the {self.kind} that runs it"}
            self._on_stop()
            return {"ok": True, "engine": engine_info}
        if op != "search":
            return {"ok": False, "error": f"unknown op {op!r}"}
        self._last_request = time.monotonic()
        if message.get("config") != self.config_key:
            return {"ok": False, "error": f"this engine runs with config {self.config_key}"}
        wanted = message.get("config_digest")
        if isinstance(wanted, str) and wanted != self._applied:
            await self._catch_up(wanted)
        try:
            request = from_jsonable(SearchRequest, message.get("request"))
            if message.get("top_k_from_config") is True:
                request.top_k = self.engine.config.fusion.top_k
            notes: list[str] = []
            if "repo" in message:
                refreshed = await self._refresh(_repo_scope(message["repo"]), request)
                if refreshed is None:
                    return {"ok": False, "unindexed": True, "error": "that repository is not indexed yet"}
                notes = refreshed
            unknown = self._unknown(request)
            if unknown:  # a repository indexed since: its built-in server joins now
                await self.engine.adopt_new_indexes()
                unknown = self._unknown(request)
            if unknown:  # e.g. a repository indexed after this engine started
                return {"ok": False, "error": f"this engine has no source {', '.join(unknown)}"}
            response = await self.engine.search(request)
        except Exception as exc:  # the client falls back to its own engine
            log.warning("attach request failed: %s", exc)
            return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        return {"ok": True, "engine": engine_info, "response": to_jsonable(response), "notes": notes}

    async def _refresh(self, scope: RepoScope, request: SearchRequest) -> list[str] | None:
        """Bring the ``--repo`` repository up to date as the command line would (changed
        files re-read, new commits imported, a background pass started for what waits
        for vectors), drop the answers that drew on what changed, and scope ``request``
        to it: the lines the command line prints; None when it is not indexed yet."""
        from tributary.engine.index.backend import backend_for
        from tributary.engine.repos.builtins import scope_to_repository
        from tributary.engine.repos.manage import (
            embed_in_background,
            refresh_repository,
            repo_entry,
            repository_indexed,
        )

        backend = backend_for(self.engine.config.index, Path(self.config_key))
        async with self._refreshing.setdefault(scope.path, asyncio.Lock()):
            if not await asyncio.to_thread(repository_indexed, scope.path, backend=backend):
                return None
            refresh = await asyncio.to_thread(
                refresh_repository, scope.path, history=scope.history, backend=backend,
                config=repo_entry(self.engine.config.repos, scope.path),
                embed_later=self._embed_later or embed_in_background,
            )  # fmt: skip
        self.engine.repository_refreshed(scope.path)
        if refresh.changed:
            await self.engine.repository_changed(scope.path)
        await self.engine.adopt_new_indexes()
        scope_to_repository(request, scope.path, self.engine.effective_config.servers)
        return [f"indexing {scope.path.name}: {refresh.code_summary()}", *refresh.notes()]

    def _unknown(self, request: SearchRequest) -> list[str]:
        servers = self.engine.effective_config.servers
        return [name for name in request.sources or () if name not in servers]

    async def _catch_up(self, wanted: str) -> None:
        """Apply the config file as the client read it, before answering: ``tributary
        servers set`` and then a search must not get the settings of before, which the
        file watcher applies only once the file has been quiet a while. A file that does
        not validate keeps the running config (the watcher reports it)."""
        from tributary.engine.config.watch import reload_once

        async with self._catching_up:
            if wanted == self._applied:
                return
            outcome = await reload_once(Path(self.config_key), self.engine.apply_config, expect=wanted,
                                        in_effect=lambda: self.engine.effective_config)
            if outcome is None:
                return  # changed again while read: the next request or the watcher applies it
            self._applied = wanted
            log.info("%s", outcome.message)


def _repo_scope(value: object) -> RepoScope:
    """A request's ``repo``; ``ValueError`` unless it names a folder by its absolute path."""
    path = value.get("path") if isinstance(value, dict) else None
    if not isinstance(value, dict) or not isinstance(path, str) or not Path(path).is_absolute():
        raise ValueError("'repo' must be an object whose 'path' is an absolute path")
    if not Path(path).is_dir():
        raise ValueError(f"--repo {path}: not a folder")
    return RepoScope(Path(path), value.get("history") is not False)


async def _send(writer: asyncio.StreamWriter, message: dict[str, Any]) -> None:
    writer.write(json.dumps(message, ensure_ascii=False).encode() + b"\n")
    await writer.drain()


async def _exchange(path: Path, message: dict[str, Any], timeout: float | None) -> dict[str, Any] | None:
    """Send one line, read one; None when there is no socket, it is not ours, or the
    answer is not JSON. Raises :class:`_Refused` when nobody listens and
    :class:`_Silent` when no answer comes within ``timeout``."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISSOCK(info.st_mode) or info.st_uid != os.getuid():
        return None
    try:
        reader, writer = await asyncio.wait_for(
            asyncio.open_unix_connection(str(path), limit=MAX_LINE), CONNECT_TIMEOUT_S
        )
    except ConnectionRefusedError as exc:
        raise _Refused from exc
    except TimeoutError as exc:
        raise _Silent(CONNECT_TIMEOUT_S) from exc
    except OSError:
        return None
    try:
        await _send(writer, message)
        line = await asyncio.wait_for(reader.readline(), timeout)
    except TimeoutError as exc:
        raise _Silent(timeout) from exc
    except (OSError, asyncio.LimitOverrunError, ValueError):
        return None
    finally:
        writer.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(writer.wait_closed(), CONNECT_TIMEOUT_S)
    try:
        answer = json.loads(line) if line else None
    except ValueError:
        return None
    return answer if isinstance(answer, dict) else None


async def _engine_at(path: Path, timeout: float = PING_TIMEOUT_S) -> dict[str, Any] | None:
    """What the engine listening on ``path`` says of itself (``pid``, ``kind``, ``code``,
    ``idle_s``), or None when none answers a ping within ``timeout``."""
    try:
        answer = await _exchange(path, {"version": PROTOCOL_VERSION, "op": "ping"}, timeout)
    except (_Refused, _Silent):
        return None
    if not answer or not answer.get("ok"):
        return None
    engine = answer.get("engine")
    return engine if isinstance(engine, dict) else {}


async def running() -> dict[str, Any] | None:
    """What the engine answering for this home says of itself, or None when none answers."""
    if not supported():
        return None
    try:
        path = socket_path()
    except (AttachError, OSError):
        return None
    return await _engine_at(path)


async def request_stop(path: Path | None = None) -> tuple[bool, str]:
    """Ask the engine answering for this home (or on ``path``) to stop: (stopped, what it said)."""
    try:
        path = path or socket_path()
        answer = await _exchange(path, {"version": PROTOCOL_VERSION, "op": "stop"}, PING_TIMEOUT_S)
    except (AttachError, OSError) as exc:
        return False, str(exc)
    except (_Refused, _Silent):
        return False, "the engine did not answer"
    if answer is None:
        return False, "no engine runs"
    return bool(answer.get("ok")), str(answer.get("error") or "")


async def stop_background(path: Path | None = None) -> bool:
    """Ask the background engine on ``path`` (default: this home's socket) to stop, and
    wait until its socket is gone (at most ``TAKE_OVER_S``): whether it let go."""
    path = path or socket_path()
    stopped, _said = await request_stop(path)
    deadline = time.monotonic() + TAKE_OVER_S
    while stopped and path.exists() and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    return stopped and not path.exists()


async def _stale_background(path: Path, engine: object) -> bool:
    """True when ``engine`` is a background engine running other code than this
    command's (an upgrade or an edit since it started): it is stopped, and the caller
    starts a new one."""
    if not isinstance(engine, dict) or engine.get("kind") != EngineKind.BACKGROUND or engine.get("code") == code_stamp():
        return False
    await stop_background(path)
    print(f"tributary: note: stopped the background engine (pid {engine.get('pid')}): "
          "it ran Tributary's code from before an update", file=sys.stderr)
    return True


async def ask(
    request: SearchRequest, config_file: Path | None, *, timeout: float | None = None,
    top_k_from_config: bool = False, repo: RepoScope | None = None,
) -> Attached | None:
    """The running engine's answer to ``request``; None when none runs for this home and
    config (or it cannot answer): the caller then opens its own engine.
    ``top_k_from_config``: the running engine's configured ``top_k`` replaces the
    request's, so the caller need not read the config file itself. ``repo``: the engine
    brings that repository up to date and asks it only (None when it is not indexed)."""
    from tributary.engine.cache.codec import response_from_dict, to_jsonable

    if not supported():
        return None
    try:
        path = socket_path()
    except (AttachError, OSError) as exc:
        print(f"tributary: {exc}", file=sys.stderr)
        return None
    key = _config_key(config_file)
    message = {
        "version": PROTOCOL_VERSION, "op": "search", "config": key, "config_digest": file_digest(Path(key)),
        "request": to_jsonable(request), "top_k_from_config": top_k_from_config,
    }  # fmt: skip
    if repo is not None:
        message.update(version=REPO_VERSION, repo={"path": str(repo.path), "history": repo.history})
    try:
        alive = await _exchange(path, {"version": PROTOCOL_VERSION, "op": "ping"}, PING_TIMEOUT_S)
        if not alive or not alive.get("ok"):
            return None
        if await _stale_background(path, alive.get("engine")):
            return None
        answer = await _exchange(path, message, ANSWER_TIMEOUT_S if timeout is None else timeout)
    except _Refused:
        with contextlib.suppress(OSError):
            path.unlink()
        print("tributary: note: the engine that left its socket is gone (socket removed); "
              "searching without it", file=sys.stderr)
        return None
    except _Silent as exc:
        print(f"tributary: note: the running engine did not answer within {exc.args[0]:g} s "
              "(stopped or stuck?); searching without it", file=sys.stderr)
        return None
    if not answer or not answer.get("ok"):
        if answer:
            log.info("running engine declined: %s", answer.get("error"))
        return None
    engine = answer.get("engine") or {}
    notes = answer.get("notes")
    said = [str(note) for note in notes] if isinstance(notes, list) else []
    return Attached(response_from_dict(answer["response"]), int(engine.get("pid", 0)), said)
