"""Recognising a server definition that would start Tributary itself.

A client config that lists ``tributary serve``, imported into Tributary, would make
Tributary one of its own sources: each copy starts another, without end. Such a
definition is recognised by its command (``tributary``, ``python -m tributary``, a
launcher such as ``uvx tributary serve``), by path (this very installation's
executable) and, for anything these miss (a wrapper script), by the
:data:`PARENT_VARIABLE` every server process Tributary starts gets: ``tributary
serve`` refuses to run under it.

Tributary's own built-in servers (``python -m tributary.engine.servers.files``, or the
bundle's ``tributary _run MODULE``) are not Tributary itself and pass.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path

from tributary.engine.config.schema import ServerConfig

PARENT_VARIABLE = "TRIBUTARY_PARENT"
ITSELF = "this is Tributary itself"
_NAMES = frozenset({"tributary", "tributary-gui"})
_MODULES = frozenset({"tributary", "tributary.__main__", "tributary.engine.cli",
                      "tributary.engine.cli.main"})
_RUN = "_run"  # the bundle's way to run a built-in module (tributary.engine.runtime.spawn)
# Commands that run another command named in their arguments (or their -c script).
_LAUNCHERS = frozenset({"uv", "uvx", "pipx", "poetry", "pdm", "hatch", "rye", "pixi", "conda",
                        "mamba", "env", "nohup", "exec", "sh", "bash", "zsh", "dash", "fish",
                        "cmd", "powershell", "pwsh"})


def _base(word: str) -> str:
    name = word.replace("\\", "/").rsplit("/", 1)[-1].lower()
    return name.removesuffix(".exe")


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _own_executables() -> list[str]:
    """This installation's ``tributary`` entry points (and the bundle's executable)."""
    found = [sys.executable] if getattr(sys, "frozen", False) else []
    scripts = Path(sys.executable).parent
    for name in _NAMES:
        for candidate in (scripts / name, scripts / f"{name}.exe"):
            if candidate.is_file():
                found.append(str(candidate))
        if (on_path := shutil.which(name)) is not None:
            found.append(on_path)
    return found


def _words(server: ServerConfig) -> list[str]:
    """The command and its arguments; a shell's ``-c`` script split into words too."""
    words = [server.command or "", *server.args]
    out: list[str] = []
    for word in words:
        try:
            out.extend(shlex.split(word) if " " in word else [word])
        except ValueError:
            out.append(word)
    return out


def self_reference(server: ServerConfig) -> str | None:
    """Why ``server`` would start Tributary itself, or None when it would not."""
    if server.transport != "stdio" or not server.command:
        return None
    if PARENT_VARIABLE in server.env:
        return f"{ITSELF}: its environment sets {PARENT_VARIABLE}"
    words = _words(server)
    launched = _base(words[0]) in _LAUNCHERS
    for i, word in enumerate(words):
        base = _base(word)
        if base in _NAMES and (i == 0 or launched) and words[i + 1 : i + 2] != [_RUN]:
            return f"{ITSELF}: it runs {base}"  # (``_run MODULE``: a bundle's built-in server)
        if word == "-m" and i + 1 < len(words) and words[i + 1] in _MODULES:
            return f"{ITSELF}: it runs python -m {words[i + 1]}"
        if word.startswith("-m") and word[2:] in _MODULES:
            return f"{ITSELF}: it runs python -m {word[2:]}"
    command = server.command
    if os.sep in command or "/" in command:
        target = command
    else:
        target = shutil.which(command, path=server.env.get("PATH")) or ""
    if words[1:2] == [_RUN]:
        return None
    if target and any(_same_file(target, own) for own in _own_executables()):
        return f"{ITSELF}: {command} is this Tributary's own executable"
    return None


def parent_marker() -> dict[str, str]:
    """The variable every server process Tributary starts gets (see the module docstring)."""
    return {PARENT_VARIABLE: str(os.getpid())}


def nested_refusal(environ: dict[str, str] | None = None) -> str | None:
    """The message ``tributary serve`` exits with when Tributary started it as a source."""
    env = os.environ if environ is None else environ
    parent = env.get(PARENT_VARIABLE)
    if not parent:
        return None
    return (f"{ITSELF}: started by Tributary (pid {parent}) as one of its own sources; "
            f"refusing to serve. Remove this server from that Tributary's config.")
