"""packaging/install.sh, run on a fake unpacked bundle in a temporary HOME: the bundle
copied under ~/.local/lib, the command linked from ~/.local/bin, the desktop entry's
Exec lines at the installed executable, the icon; again from a newer bundle; and
--uninstall. build.sh puts the script, entry and icon into the bundle it tars."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGING = ROOT / "packaging"

pytestmark = pytest.mark.skipif(shutil.which("sh") is None, reason="needs a POSIX shell")


def fake_bundle(folder: Path, version: str) -> Path:
    """What build.sh leaves in dist/tributary/, with a script for the executable."""
    bundle = folder / "tributary"
    (bundle / "_internal").mkdir(parents=True)
    (bundle / "_internal" / "base_library.zip").write_bytes(b"fake")
    exe = bundle / "tributary"
    exe.write_text(f'#!/bin/sh\necho "tributary {version}; pipeline: fake"\n', encoding="utf-8")
    exe.chmod(0o755)
    shutil.copy(PACKAGING / "install.sh", bundle / "install.sh")
    (bundle / "install.sh").chmod(0o755)
    shutil.copy(PACKAGING / "tributary.desktop", bundle / "tributary.desktop")
    shutil.copy(ROOT / "resources" / "icons" / "tributary.svg", bundle / "tributary.svg")
    return bundle


def install(bundle: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    return subprocess.run(["sh", str(bundle / "install.sh"), *args], env=env, capture_output=True,
                          text=True, timeout=60, check=False)


def test_install_upgrade_and_uninstall(tmp_path: Path) -> None:
    home = tmp_path / "user home"  # a space: Exec must quote the path
    home.mkdir()
    result = install(fake_bundle(tmp_path / "v1", "1.0"), home)
    assert result.returncode == 0, result.stderr
    installed = home / ".local/lib/tributary/tributary"
    link = home / ".local/bin/tributary"
    assert link.is_symlink() and link.resolve() == installed.resolve()
    assert subprocess.run([str(link), "--version"], capture_output=True, text=True,
                          check=True).stdout.startswith("tributary 1.0")
    entry = (home / ".local/share/applications/tributary.desktop").read_text(encoding="utf-8")
    assert f'Exec="{installed}" gui' in entry.splitlines()
    assert f'Exec="{installed}" toggle' in entry.splitlines()
    assert "Icon=tributary" in entry.splitlines()
    assert (home / ".local/share/icons/hicolor/scalable/apps/tributary.svg").is_file()
    assert (home / ".local/lib/tributary/_internal/base_library.zip").is_file()

    again = install(fake_bundle(tmp_path / "v2", "2.0"), home)
    assert again.returncode == 0, again.stderr
    assert subprocess.run([str(link), "--version"], capture_output=True, text=True,
                          check=True).stdout.startswith("tributary 2.0")
    assert sorted(p.name for p in (home / ".local/lib").iterdir()) == ["tributary"]

    gone = install(home / ".local/lib/tributary", home, "--uninstall")
    assert gone.returncode == 0, gone.stderr
    assert not link.is_symlink() and not (home / ".local/lib/tributary").exists()
    assert not (home / ".local/share/applications/tributary.desktop").exists()


def test_a_path_the_desktop_entry_cannot_hold_is_refused_first(tmp_path: Path) -> None:
    home = tmp_path / 'say "hi"'
    home.mkdir()
    result = install(fake_bundle(tmp_path / "v1", "1.0"), home)
    assert result.returncode == 1 and "choose another PREFIX" in result.stderr
    assert not (home / ".local").exists()


def test_build_ships_the_installer_and_smoke_runs_it() -> None:
    build = (PACKAGING / "build.sh").read_text(encoding="utf-8")
    shipped = build.index('install -m 755 packaging/install.sh "$DIST/tributary/install.sh"')
    assert 'packaging/tributary.desktop "$DIST/tributary/tributary.desktop"' in build
    assert 'resources/icons/tributary.svg "$DIST/tributary/tributary.svg"' in build
    assert shipped < build.index('tar -C "$DIST"')  # in the bundle before it is tarred
    smoke = (PACKAGING / "smoke.sh").read_text(encoding="utf-8")
    assert '"$BUNDLE/install.sh"' in smoke and '.local/bin/tributary" --version' in smoke
