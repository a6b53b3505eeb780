"""Can this session show a window? Checked before Qt starts, so a missing piece is a
clear message rather than Qt's abort.

On Linux, Qt finding no display, an X display it cannot connect to, or its X11 (xcb)
platform plugin missing one of the system libraries it loads, ends the process with
``SIGABRT`` and a core dump, after a message that names one library (``xcb-cursor0``)
whatever is really missing. The PyPI wheel of PySide6 bundles Qt but not these X client
libraries, and a fresh Debian or Ubuntu install (a server, a container, WSL) often lacks
a few: seen here, a new machine had every one but ``libxcb-icccm4`` and
``libxcb-keysyms1``.

``python -m tributary.app.desktop_libs`` prints the Debian packages still missing, one per line
(``scripts/setup.sh`` installs them where it can), and exits 1 if any are.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable, Mapping

# What Qt 6's xcb plugin and its libQt6XcbQpa load (ldd of both, plus xcb-cursor, which
# Qt opens at run time), and the Debian/Ubuntu package of each.
XCB_LIBRARIES: dict[str, str] = {
    "libxcb.so.1": "libxcb1",
    "libX11.so.6": "libx11-6",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-render.so.0": "libxcb-render0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-sync.so.1": "libxcb-sync1",
    "libxcb-util.so.1": "libxcb-util1",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxkbcommon.so.0": "libxkbcommon0",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libEGL.so.1": "libegl1",
    "libGL.so.1": "libgl1",
    "libfontconfig.so.1": "libfontconfig1",
    "libdbus-1.so.3": "libdbus-1-3",
}


def loads(soname: str) -> bool:
    """Whether the dynamic linker finds and loads ``soname``."""
    try:
        ctypes.CDLL(soname)
    except OSError:
        return False
    return True


def missing_libraries(loader: Callable[[str], bool] = loads) -> list[str]:
    """The libraries of ``XCB_LIBRARIES`` this machine lacks."""
    return [soname for soname in XCB_LIBRARIES if not loader(soname)]


def packages_of(sonames: list[str]) -> list[str]:
    """The Debian packages that hold these libraries (one library each)."""
    return [XCB_LIBRARIES[soname] for soname in sonames]


def can_connect(display: str) -> bool:
    """Whether an X server answers at ``display`` (libxcb's own connect, as Qt's is)."""
    try:
        xcb = ctypes.CDLL("libxcb.so.1")
    except OSError:
        return True  # no libxcb: the library check names it
    xcb.xcb_connect.restype = ctypes.c_void_p
    xcb.xcb_connect.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
    xcb.xcb_connection_has_error.argtypes = [ctypes.c_void_p]
    xcb.xcb_disconnect.argtypes = [ctypes.c_void_p]
    connection = xcb.xcb_connect(display.encode(), None)  # never NULL: an error connection
    try:
        return int(xcb.xcb_connection_has_error(connection)) == 0
    finally:
        xcb.xcb_disconnect(connection)


def uses_xcb(env: Mapping[str, str]) -> bool:
    """Whether Qt will pick its X11 plugin: asked for, or an X display and no Wayland one."""
    platform = env.get("QT_QPA_PLATFORM", "").split(":")[0].split(";")[0].strip()
    if platform:
        return platform == "xcb"
    return bool(env.get("DISPLAY")) and not env.get("WAYLAND_DISPLAY")


def display_problem(
    env: Mapping[str, str],
    *,
    system: str = sys.platform,
    loader: Callable[[str], bool] = loads,
    connector: Callable[[str], bool] = can_connect,
) -> str | None:
    """Why the desktop app cannot open a window here, or None if nothing is known to
    stop it. Only Linux is checked: elsewhere Qt brings what it needs."""
    if not system.startswith("linux"):
        return None
    if not uses_xcb(env) and (env.get("QT_QPA_PLATFORM") or env.get("WAYLAND_DISPLAY")):
        return None  # offscreen, Wayland, …: Qt reports its own trouble there
    if not env.get("DISPLAY"):
        return (
            "no display to open a window on (neither DISPLAY nor WAYLAND_DISPLAY is set). "
            "Run `tributary gui` inside a desktop session, or use the command line here: "
            "`tributary search`, `tributary context`, `tributary serve`."
        )
    missing = missing_libraries(loader)
    if not missing:
        if connector(env["DISPLAY"]):
            return None
        return (
            f"cannot connect to the X display {env['DISPLAY']!r} (DISPLAY): no X server answers there, "
            "as in an ssh session without X forwarding. Use the command line here, or `ssh -X`."
        )
    packages = " ".join(packages_of(missing))
    return (
        f"Qt's X11 platform plugin needs system libraries this machine lacks: {', '.join(missing)}. "
        f"On Debian or Ubuntu: sudo apt-get install {packages}"
    )


def main() -> int:
    missing = missing_libraries()
    for package in packages_of(missing):
        print(package)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
