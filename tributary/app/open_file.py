"""Open a hit's file in the user's editor at its line, or reveal it in the file manager.

A built-in server's hit names its file relative to the indexed repository (``path``
plus ``metadata["repo"]``, the index's name); the repository's folder comes from the
index itself, so the path handed on is always absolute, wherever the app started.

The editor command is, in order: the one set in the app's settings, then
``$TRIBUTARY_EDITOR``, ``$VISUAL``, ``$EDITOR``; none set, the desktop opens the file
with its default application. A command may hold ``{path}`` and ``{line}``; without
them the common editors' own syntax is used (``code -g file:line``, JetBrains
``--line N file``, vim/emacs/nano ``+line file``). Terminal editors run in a terminal.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
from pathlib import Path
from urllib.parse import unquote, urlparse

from PySide6.QtCore import QProcess, QUrl
from PySide6.QtGui import QDesktopServices

from tributary.engine import api
from tributary.engine.model import Hit, repository_of

EDITOR_ENVS = ("TRIBUTARY_EDITOR", "VISUAL", "EDITOR")
SETTINGS_FILE = "desktop.json"
_COLON_LINE = {"code", "code-insiders", "codium", "vscodium", "cursor", "windsurf", "subl", "sublime_text",
               "zed", "hx", "helix", "micro"}
_DASH_LINE = {"idea", "idea.sh", "pycharm", "pycharm.sh", "charm", "webstorm", "goland", "clion", "phpstorm",
              "rubymine", "rider", "studio", "rustrover", "fleet", "kate"}
_PLUS_LINE = {"vi", "vim", "nvim", "gvim", "emacs", "emacsclient", "nano", "kak", "gedit", "mousepad", "xed",
              "pluma", "joe", "ne", "mg"}
_TERMINAL = {"vi", "vim", "nvim", "nano", "kak", "hx", "helix", "micro", "joe", "ne", "mg"}
_GOTO = {"code", "code-insiders", "codium", "vscodium", "cursor", "windsurf"}  # take -g file:line

_roots_cache: tuple[float, dict[str, Path]] | None = None


# -- where the file is -------------------------------------------------------------------

def index_roots() -> dict[str, Path]:
    """Each index's name → its repository folder (re-read when the indexes change)."""
    global _roots_cache
    folder = api.indexes_dir()
    try:
        stamp = folder.stat().st_mtime
    except OSError:
        return {}
    if _roots_cache is not None and _roots_cache[0] == stamp:
        return _roots_cache[1]
    from tributary.engine.api import list_indexes

    roots = {info.name: info.root for info in list_indexes(folder)}
    _roots_cache = (stamp, roots)
    return roots


def local_file(hit: Hit) -> Path | None:
    """The hit's file on this machine as an absolute path, if it names one we can find."""
    if hit.uri and hit.uri.startswith("file://") and not hit.path:
        return Path(unquote(urlparse(hit.uri).path))
    if not hit.path:
        return None
    path = Path(hit.path).expanduser()
    if path.is_absolute():
        return path
    root = hit.metadata.get("root")
    if isinstance(root, str) and root:
        return Path(root) / path
    roots = index_roots()
    repo = repository_of(hit)
    if repo is not None and repo in roots:
        return roots[repo] / path
    # A path without its repository: the index whose folder holds that file.
    for candidate in roots.values():
        if (candidate / path).is_file():
            return candidate / path
    return None


# -- which editor ------------------------------------------------------------------------

def settings_path() -> Path:
    return api.config_dir() / SETTINGS_FILE


def load_settings() -> dict[str, str]:
    try:
        data = json.loads(settings_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def save_editor_command(command: str) -> None:
    settings = load_settings()
    settings["editor"] = command.strip()
    api.write_private_text(settings_path(), json.dumps(settings, indent=2))


def editor_setting(environ: dict[str, str] | None = None) -> str | None:
    """The editor command in force: the app's setting, else the environment's."""
    configured = load_settings().get("editor", "").strip()
    if configured:
        return configured
    env = os.environ if environ is None else environ
    return next((env[name] for name in EDITOR_ENVS if env.get(name, "").strip()), None)


def editor_argv(command: str, path: Path, line: int | None, *, terminal: str | None = None) -> list[str]:
    """The argv that opens ``path`` at ``line`` with ``command``."""
    words = shlex.split(command)
    if not words:
        raise ValueError("the editor command is empty")
    at = line or 1
    if any("{path}" in w or "{line}" in w for w in words):
        return [w.replace("{path}", str(path)).replace("{line}", str(at)) for w in words]
    name = Path(words[0]).name.lower().removesuffix(".exe")
    if name in _GOTO:
        argv = [*words, "-g", f"{path}:{at}"]
    elif name in _COLON_LINE:
        argv = [*words, f"{path}:{at}"]
    elif name in _DASH_LINE:
        argv = [*words, "--line", str(at), str(path)]
    elif name in _PLUS_LINE:
        argv = [*words, f"+{at}", str(path)]
    else:
        argv = [*words, str(path)]
    if name in _TERMINAL or (name == "emacs" and "-nw" in words):
        runner = terminal if terminal is not None else _terminal()
        if runner:
            argv = [runner, "-e", *argv]
    return argv


def _terminal() -> str | None:
    chosen = os.environ.get("TERMINAL")
    for name in (chosen, "x-terminal-emulator", "gnome-terminal", "konsole", "xfce4-terminal", "xterm"):
        if name and shutil.which(name):
            return name
    return None


# -- doing it ----------------------------------------------------------------------------

def open_in_editor(path: Path, line: int | None) -> str | None:
    """Open ``path`` at ``line``; None when started, else why not (for the status bar)."""
    if not path.exists():
        return f"{path} does not exist on this machine"
    command = editor_setting()
    if command:
        try:
            argv = editor_argv(command, path, line)
        except ValueError as exc:
            return f"editor command “{command}”: {exc}"
        if shutil.which(argv[0]) is None and not Path(argv[0]).is_file():
            return f"editor not found: {argv[0]} (set another in Sources & routing → Desktop)"
        started, _pid = QProcess.startDetached(argv[0], argv[1:])
        return None if started else f"could not start {argv[0]}"
    if QDesktopServices.openUrl(QUrl.fromLocalFile(str(path))):
        return None
    return "no application opens this file: set an editor in Sources & routing → Desktop"


def reveal(path: Path) -> str | None:
    """Show the file's folder in the file manager; None when done, else why not."""
    folder = path if path.is_dir() else path.parent
    if not folder.exists():
        return f"{folder} does not exist on this machine"
    if QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder))):
        return None
    return f"no file manager opened {folder}"
