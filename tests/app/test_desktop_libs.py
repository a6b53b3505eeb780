"""Before Qt starts: no display, an X display nobody answers at, or missing X client
libraries is a clear message."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tributary.app.desktop_libs import (
    XCB_LIBRARIES,
    can_connect,
    display_problem,
    missing_libraries,
    uses_xcb,
)

ROOT = Path(__file__).resolve().parents[2]


def present(soname: str) -> bool:
    return True


def answers(display: str) -> bool:
    return True


def lacking(*sonames: str):  # type: ignore[no-untyped-def]
    return lambda soname: soname not in sonames


def test_no_display_at_all_is_named() -> None:
    problem = display_problem({}, system="linux", loader=present)
    assert problem is not None and "no display" in problem and "DISPLAY" in problem
    assert "tributary search" in problem  # what to do instead


def test_missing_x_libraries_are_named_with_their_packages() -> None:
    problem = display_problem(
        {"DISPLAY": ":0"}, system="linux", loader=lacking("libxcb-icccm.so.4", "libxcb-keysyms.so.1"),
        connector=answers)
    assert problem is not None
    assert "libxcb-icccm.so.4, libxcb-keysyms.so.1" in problem
    assert problem.endswith("sudo apt-get install libxcb-icccm4 libxcb-keysyms1")


@pytest.mark.parametrize(
    ("env", "system"),
    [
        ({"DISPLAY": ":0"}, "linux"),  # everything there
        ({"QT_QPA_PLATFORM": "offscreen"}, "linux"),  # the tests' own platform
        ({"WAYLAND_DISPLAY": "wayland-0", "DISPLAY": ":0"}, "linux"),  # Qt picks Wayland
        ({}, "darwin"),  # Qt brings its own platform elsewhere
        ({}, "win32"),
    ],
)
def test_nothing_in_the_way(env: dict[str, str], system: str) -> None:
    loader = present if env.get("DISPLAY") == ":0" and "WAYLAND_DISPLAY" not in env else lacking(*XCB_LIBRARIES)
    assert display_problem(env, system=system, loader=loader, connector=answers) is None


def test_asking_for_xcb_without_a_display() -> None:
    assert uses_xcb({"QT_QPA_PLATFORM": "xcb"})
    assert not uses_xcb({"QT_QPA_PLATFORM": "wayland", "DISPLAY": ":0"})
    problem = display_problem({"QT_QPA_PLATFORM": "xcb"}, system="linux", loader=present)
    assert problem is not None and "no display" in problem


def test_an_x_display_nobody_answers_at() -> None:
    problem = display_problem({"DISPLAY": "localhost:10.0"}, system="linux", loader=present,
                              connector=lambda display: False)
    assert problem is not None and "cannot connect to the X display 'localhost:10.0'" in problem


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="libxcb is Linux's")
def test_connecting_to_a_display_that_is_not_there_fails_cleanly() -> None:
    assert can_connect(":987") is False  # no X server on display 987: an error, no crash


def test_missing_libraries_asks_the_loader_for_each() -> None:
    assert missing_libraries(lacking("libxcb-cursor.so.0")) == ["libxcb-cursor.so.0"]
    assert missing_libraries(present) == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the check is for Linux")
def test_gui_without_a_display_exits_with_the_message_not_an_abort(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env["TRIBUTARY_HOME"] = str(tmp_path)  # no running instance of this home to hand over to
    result = subprocess.run(
        [sys.executable, "-m", "tributary", "gui"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, result.stderr
    assert "tributary gui: no display" in result.stderr


def test_each_library_has_its_own_package() -> None:
    # packages_of lists one package per missing library: no package may repeat.
    assert len(set(XCB_LIBRARIES.values())) == len(XCB_LIBRARIES)
