"""Keeps a source server's whole process tree reapable, even if Tributary is killed (Linux).

Tributary runs this file (standard library only, ``python -I -S reaper.py GRACE_S
PARENT_PID COMMAND ARGS...``) in its own session in place of the server; it starts the
server as its child with the same stdin, stdout and stderr, then only watches:

* ``PR_SET_PDEATHSIG``: when Tributary dies — even by ``SIGKILL`` — the kernel sends
  this process ``SIGTERM``. (The server itself gets ``SIGKILL`` if this process dies.)
* ``PR_SET_CHILD_SUBREAPER``: a descendant whose parent exits is re-parented here, not to
  PID 1, so a grandchild that left the process group with ``setsid()`` is still found
  by walking ``/proc`` down from this process.
* On ``SIGTERM``/``SIGINT``/``SIGHUP``: ``SIGTERM`` and ``SIGCONT`` to every descendant,
  up to ``GRACE_S`` for them to exit, then ``SIGKILL`` to whatever is left; then exit.
* When the server exits: ``SIGKILL`` to every descendant left; exit with its status.

Nothing here writes to stdout (the MCP wire); failures to start go to stderr.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import signal
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
EXIT_NOT_STARTED = 127
_POLL_S = 0.02
_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


class _Stop(Exception):
    """A shutdown signal arrived."""


def _prctl(option: int, value: int) -> bool:
    libc = ctypes.CDLL(None, use_errno=True)
    return int(libc.prctl(option, value, 0, 0, 0)) == 0


def _ppid_and_state(pid: str) -> tuple[int, str] | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            data = stat.read()
    except OSError:
        return None
    fields = data[data.rfind(b")") + 2:].split()  # the command name may hold spaces
    return int(fields[1]), fields[0].decode()


def descendants(root: int) -> list[int]:
    """Live (non-zombie) processes below ``root``, found through ``/proc``."""
    children: dict[int, list[int]] = {}
    states: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (info := _ppid_and_state(entry)) is not None:
            children.setdefault(info[0], []).append(int(entry))
            states[int(entry)] = info[1]
    found: list[int] = []
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return [pid for pid in found if states.get(pid) != "Z"]


def _signal_all(pids: list[int], sig: int) -> None:
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, sig)


def _reap() -> list[tuple[int, int]]:
    """Collect every exited child (the server and adopted orphans) without blocking."""
    done: list[tuple[int, int]] = []
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return done
        if pid == 0:
            return done
        done.append((pid, status))


def kill_tree(me: int) -> None:
    """SIGKILL every descendant until none is left (orphans land here and are reaped)."""
    for _ in range(500):
        left = descendants(me)
        _reap()
        if not left:
            return
        _signal_all(left, signal.SIGKILL)
        time.sleep(_POLL_S)


def terminate_tree(me: int, grace_s: float) -> None:
    """SIGTERM (and SIGCONT) every descendant, wait up to ``grace_s``, then kill the rest."""
    left = descendants(me)
    _signal_all(left, signal.SIGTERM)
    _signal_all(left, signal.SIGCONT)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        _reap()
        if not descendants(me):
            break
        time.sleep(_POLL_S)
    kill_tree(me)


def _start(argv: list[str]) -> int:
    pid = os.fork()
    if pid == 0:  # the server
        try:
            for sig in _SIGNALS:
                signal.signal(sig, signal.SIG_DFL)
            _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
            os.execvp(argv[0], argv)
        except OSError as exc:
            os.write(2, f"cannot start {argv[0]}: {exc.strerror}\n".encode())
        os._exit(EXIT_NOT_STARTED)
    return pid


def _exit_code(status: int) -> int:
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1


def _on_signal(_signum: int, _frame: object) -> None:
    for sig in _SIGNALS:  # one shutdown: later signals must not interrupt it
        signal.signal(sig, signal.SIG_IGN)
    raise _Stop


def main(argv: list[str]) -> int:
    grace_s, parent, command = float(argv[0]), int(argv[1]), argv[2:]
    me = os.getpid()
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    for sig in _SIGNALS:
        signal.signal(sig, _on_signal)
    try:
        _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:  # Tributary died before the line above took effect
            return 1
        server = _start(command)
        for fd in (0, 1):  # the server has the wire; this process never touches it
            null = os.open(os.devnull, os.O_RDWR)
            os.dup2(null, fd)
            os.close(null)
        while True:
            try:
                pid, status = os.waitpid(-1, 0)
            except ChildProcessError:
                return 1
            except OSError as exc:  # pragma: no cover - EINTR is retried by Python
                if exc.errno != errno.EINTR:
                    raise
                continue
            if pid == server:
                kill_tree(me)
                return _exit_code(status)
    except _Stop:
        terminate_tree(me, grace_s)
        return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
