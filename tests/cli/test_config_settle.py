"""``tributary search``/``context`` wait for a config file that is being written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.cli.test_cli import fake
from tributary.engine.config.errors import ConfigError
from tributary.engine.config.load import load_config_settled

ROOT = Path(__file__).resolve().parents[2]
WAITING = "waiting for it to be written completely"


def _start(config: Path, home: Path, command: str, settle_s: str) -> subprocess.Popen[str]:
    env = {**os.environ, "TRIBUTARY_HOME": str(home), "PYTHONPATH": str(ROOT),
           "TRIBUTARY_CONFIG_SETTLE_S": settle_s}
    return subprocess.Popen(
        [sys.executable, "-m", "tributary", "--config", str(config), command,
         *(["--json"] if command == "search" else []), "--no-attach", "retry logic"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)


def _watch_stderr(proc: subprocess.Popen[str], lines: list[str], event: threading.Event) -> threading.Thread:
    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            if WAITING in line:
                event.set()
        event.set()  # the process ended: the test need not wait on

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


@pytest.mark.integration
@pytest.mark.parametrize("command", ["search", "context"])
def test_a_half_written_config_is_waited_for(tmp_path: Path, command: str) -> None:
    home = tmp_path / "home"
    home.mkdir()
    full = "servers:\n" + fake("alpha", "--hits", "3")
    config = home / "config.yaml"
    config.write_text(full[: full.index("args:") + 10], encoding="utf-8")  # cut mid-list
    # A long window: the test completes the file once the CLI says it waits, however
    # slowly the machine starts the process, not within any deadline of its own.
    lines: list[str] = []
    waiting = threading.Event()
    with _start(config, home, command, settle_s="300") as proc:
        reader = _watch_stderr(proc, lines, waiting)
        try:
            assert waiting.wait(300) and any(WAITING in line for line in lines), "".join(lines)
            partial = config.with_suffix(".part")
            partial.write_text(full, encoding="utf-8")
            os.replace(partial, config)  # the editor's second step
            assert proc.stdout is not None
            out = proc.stdout.read()
            assert proc.wait(300) == 0, "".join(lines)
        finally:
            if proc.poll() is None:
                proc.kill()
            reader.join(30)
    if command == "search":
        assert [s["name"] for s in json.loads(out)["sources"]] == ["alpha"]
    else:
        assert "src/alpha/mod_1.py" in out


@pytest.mark.integration
def test_an_old_invalid_config_is_reported_at_once(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    config = home / "config.yaml"
    config.write_text("servers:\n  alpha:\n    command: [\n", encoding="utf-8")
    an_hour_ago = time.time() - 3600
    os.utime(config, (an_hour_ago, an_hour_ago))
    with _start(config, home, "search", settle_s="2") as proc:
        _, err = proc.communicate(timeout=300)
    assert proc.returncode == 2
    assert WAITING not in err and "config.yaml" in err


@pytest.mark.asyncio
async def test_a_fresh_config_that_stays_invalid_is_still_an_error(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("servers:\n  alpha:\n    command: [\n", encoding="utf-8")
    waited: list[bool] = []
    with pytest.raises(ConfigError):
        await load_config_settled(config, window_s=0.3, on_wait=lambda: waited.append(True))
    assert waited == [True]
    with pytest.raises(ConfigError):  # no window: at once, as before
        await load_config_settled(config, window_s=0, on_wait=lambda: waited.append(True))
    assert waited == [True]
