"""A one-shot search starts an engine in the background; the next ones attach to it."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from tests.fakes import fake_config_file as _config
from tributary.engine import attach, background
from tributary.engine.config.schema import Config, ServerConfig
from tributary.engine.model import SearchRequest, SearchResponse

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not attach.supported(), reason="no Unix sockets")
WAIT_S = 120  # a bound on waiting for a process under load, not a speed requirement


@pytest.fixture
def home(attach_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("TRIBUTARY_BACKGROUND_MINUTES")  # on, as for a user
    return attach_home




def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "tributary", *args], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=WAIT_S)


def _gone(pid: int) -> bool:
    """True once ``pid`` has exited (waited for, within ``WAIT_S``)."""
    try:
        process = psutil.Process(pid)
        process.wait(timeout=WAIT_S)
    except psutil.NoSuchProcess:
        return True
    except psutil.TimeoutExpired:
        process.kill()
        return False
    return True


def _pid_in(text: str, marker: str) -> int:
    start = text.index(marker) + len(marker)
    digits = text[start:]
    return int(digits[: len(digits) - len(digits.lstrip("0123456789"))])


def test_the_first_search_starts_an_engine_the_next_ones_attach_and_stop_stops_it(home: Path) -> None:
    config = _config(home)
    first = _cli("--config", str(config), "search", "retry logic", "--json")
    assert first.returncode == 0, first.stderr
    pid = _pid_in(first.stderr, "started an engine in the background (pid ")
    try:
        assert f"answered by the running engine (pid {pid})" in first.stderr
        assert [h["path"] for h in json.loads(first.stdout)["hits"]][:1] == ["src/alpha/mod_1.py"]
        log = background.log_path()
        assert log.stat().st_mode & 0o777 == 0o600

        second = _cli("--config", str(config), "context", "retry logic")
        assert second.returncode == 0, second.stderr
        assert f"answered by the running engine (pid {pid})" in second.stderr
        assert "started an engine" not in second.stderr
        assert "src/alpha/mod_1.py" in second.stdout

        status = _cli("--config", str(config), "engine", "status")
        assert f"the background engine answers: pid {pid}" in status.stdout

        stopped = _cli("--config", str(config), "engine", "stop")
        assert stopped.returncode == 0, stopped.stderr
        assert f"stopped the background engine (pid {pid})" in stopped.stdout
        assert _gone(pid)
        assert not attach.socket_path().exists()
        assert "asked to stop" in log.read_text(encoding="utf-8")
        assert "no engine runs" in _cli("--config", str(config), "engine", "status").stdout
    finally:
        if psutil.pid_exists(pid):
            psutil.Process(pid).kill()


def test_searches_that_find_no_engine_at_once_start_one_between_them(home: Path) -> None:
    config = _config(home)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    searches = [subprocess.Popen([sys.executable, "-m", "tributary", "--config", str(config), "search",
                                  f"retry logic {n}", "--json"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
                for n in range(3)]
    errors = [search.communicate(timeout=WAIT_S)[1] for search in searches]
    assert [search.returncode for search in searches] == [0, 0, 0], errors
    started = [e for e in errors if "started an engine in the background" in e]
    assert len(started) == 1, errors
    pid = _pid_in(started[0], "started an engine in the background (pid ")
    try:
        assert all(f"answered by the running engine (pid {pid})" in e for e in errors), errors
    finally:
        assert _cli("--config", str(config), "engine", "stop").returncode == 0
        assert _gone(pid)
    assert [p for p in psutil.process_iter(["cmdline"])
            if "engine" in (p.info["cmdline"] or []) and str(config) in (p.info["cmdline"] or [])] == []


def test_an_unused_engine_stops_by_itself(home: Path) -> None:
    config = _config(home)
    started = _cli("--config", str(config), "engine", "start", "--minutes", "0.01")
    assert started.returncode == 0, started.stderr
    pid = _pid_in(started.stdout, "started the background engine: pid ")
    assert _gone(pid)
    assert "unused, stopping" in background.log_path().read_text(encoding="utf-8")
    assert not attach.socket_path().exists()


def test_turned_off_in_the_config_a_search_runs_its_own_engine(home: Path) -> None:
    config = _config(home, "cli:\n  background_minutes: 0\n")
    found = _cli("--config", str(config), "search", "retry logic", "--json")
    assert found.returncode == 0, found.stderr
    assert "background" not in found.stderr and "running engine" not in found.stderr
    assert json.loads(found.stdout)["hits"]
    assert "no engine runs" in _cli("--config", str(config), "engine", "status").stdout
    refused = _cli("--config", str(config), "engine", "start")
    assert refused.returncode == 1 and "background_minutes is 0" in refused.stderr


def test_minutes_come_from_the_environment_before_the_config(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(background.ENV_MINUTES, "2.5")
    assert background.minutes_from(10) == 2.5
    monkeypatch.setenv(background.ENV_MINUTES, "soon")
    assert background.minutes_from(10) == 10
    monkeypatch.delenv(background.ENV_MINUTES)
    assert background.minutes_from(0) == 0


class _Engine:
    def __init__(self) -> None:
        self.config = Config(servers={"alpha": ServerConfig(name="alpha", command="x")})
        self.effective_config = self.config

    async def search(self, request: SearchRequest) -> SearchResponse:
        return SearchResponse(request=request)

    async def apply_config(self, config: Config) -> None:
        self.config = self.effective_config = config

    async def adopt_new_indexes(self) -> None:
        return None


@pytest.mark.asyncio
async def test_the_app_or_serve_takes_the_socket_from_a_background_engine(home: Path) -> None:
    stops: list[str] = []
    background_server = attach.AttachServer(_Engine(), None, kind="background", on_stop=lambda: stops.append("stop"))
    assert await background_server.start()

    async def close_when_asked() -> None:  # what the background engine's loop does
        while not stops:
            await asyncio.sleep(0.01)
        await background_server.close()

    closing = asyncio.ensure_future(close_when_asked())
    serve = attach.AttachServer(_Engine(), None, kind="serve")
    try:
        assert await serve.start()
        await closing
        assert stops == ["stop"]
        running = await attach.running()
        assert running is not None and running["kind"] == "serve"
        # The app and serve stop with what runs them: a client cannot stop them.
        stopped, said = await attach.request_stop()
        assert not stopped and "stops with the serve" in said
        # And a background engine never takes the socket from them.
        late = attach.AttachServer(_Engine(), None, kind="background", on_stop=lambda: None)
        assert not await late.start()
    finally:
        await serve.close()
        await background_server.close()


@pytest.mark.asyncio
async def test_a_background_engine_running_older_code_is_stopped_not_asked(
    home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    stops: list[str] = []
    engine = _Engine()
    old = attach.AttachServer(engine, None, kind="background", on_stop=lambda: stops.append("stop"))
    assert await old.start()

    async def close_when_asked() -> None:
        while not stops:
            await asyncio.sleep(0.01)
        await old.close()

    closing = asyncio.ensure_future(close_when_asked())
    try:
        assert await attach.ask(SearchRequest(query="same code"), None) is not None
        monkeypatch.setattr(attach, "code_stamp", lambda: "updated")
        assert await attach.ask(SearchRequest(query="new code"), None) is None
        await closing
        assert stops == ["stop"] and not attach.socket_path().exists()
        assert "from before an update" in capsys.readouterr().err
    finally:
        await old.close()
