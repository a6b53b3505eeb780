"""The command line asks a running engine (``tributary serve``) over the local socket."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.fakes import fake_config_file as _config
from tributary.engine import attach
from tributary.engine.config.schema import Config, ServerConfig
from tributary.engine.model import SearchRequest, SearchResponse

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not attach.supported(), reason="no Unix sockets")


@pytest.fixture
def home(attach_home: Path) -> Path:
    return attach_home


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "tributary", *args], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=120)


def test_search_and_context_attach_to_a_running_serve(home: Path) -> None:
    config = _config(home)
    serve = subprocess.Popen(
        [sys.executable, "-m", "tributary", "--config", str(config), "serve"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT,
    )  # fmt: skip
    try:
        path = attach.socket_path()
        deadline = time.monotonic() + 60
        while not path.exists():
            assert serve.poll() is None, "serve exited"
            assert time.monotonic() < deadline, "serve never listened"
            time.sleep(0.05)
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700

        found = _cli("--config", str(config), "search", "retry logic", "--json")
        assert found.returncode == 0, found.stderr
        assert f"answered by the running engine (pid {serve.pid})" in found.stderr
        data = json.loads(found.stdout)
        assert [h["path"] for h in data["hits"]][:2] == ["src/alpha/mod_1.py", "src/alpha/mod_2.py"]

        context = _cli("--config", str(config), "context", "retry logic", "--max-tokens", "1400", "--reserved-tokens", "200")
        assert context.returncode == 0, context.stderr
        assert f"pid {serve.pid}" in context.stderr
        assert "src/alpha/mod_1.py" in context.stdout

        alone = _cli("--config", str(config), "search", "retry logic", "--json", "--no-attach")
        assert alone.returncode == 0, alone.stderr
        assert "running engine" not in alone.stderr
        assert json.loads(alone.stdout)["hits"]

        other = home / "other.yaml"
        other.write_text(config.read_text(encoding="utf-8"), encoding="utf-8")
        elsewhere = _cli("--config", str(other), "search", "retry logic", "--json")
        assert elsewhere.returncode == 0, elsewhere.stderr
        assert "running engine" not in elsewhere.stderr  # another config: its own engine
    finally:
        assert serve.stdin is not None
        serve.stdin.close()
        try:
            serve.wait(timeout=30)
        except subprocess.TimeoutExpired:
            serve.kill()
            serve.wait()
        assert serve.stdout is not None
        serve.stdout.close()
    assert not attach.socket_path().exists()  # removed on shutdown


class _Engine:
    def __init__(self) -> None:
        self.asked: list[str] = []
        self.config = Config(servers={"alpha": ServerConfig(name="alpha", command="x")})
        self.config.fusion.top_k = 7
        self.effective_config = self.config

        self.applied: list[Config] = []

    async def search(self, request: SearchRequest) -> SearchResponse:
        self.asked.append(request.query)
        return SearchResponse(request=request)

    async def adopt_new_indexes(self) -> None:
        self.asked.append("(indexes adopted)")

    async def apply_config(self, config: Config) -> None:
        self.applied.append(config)
        self.asked.append("(config applied)")
        self.config = self.effective_config = config


async def _listening(home: Path) -> tuple[Path, _Engine, attach.AttachServer]:
    """A config, a fake engine and its socket, listening."""
    config = _config(home)
    engine = _Engine()
    server = attach.AttachServer(engine, config)
    assert await server.start()
    return config, engine, server


@pytest.mark.asyncio
async def test_only_the_same_config_is_answered_and_one_engine_listens(home: Path) -> None:
    config, engine, server = await _listening(home)
    second = attach.AttachServer(_Engine(), config)
    try:
        assert not await second.start()  # the first still answers: not stolen
        answer = await attach.ask(SearchRequest(query="where"), config)
        assert answer is not None and answer.pid == os.getpid()
        assert answer.response.request.query == "where"
        assert await attach.ask(SearchRequest(query="other"), home / "other.yaml") is None
        # a source this engine does not have even after looking for new indexes: declined
        assert await attach.ask(SearchRequest(query="files", sources=["files"]), config) is None
        assert await attach.ask(SearchRequest(query="alpha", sources=["alpha"]), config) is not None
        assert engine.asked == ["where", "(indexes adopted)", "alpha"]
        # A caller that has not read the config takes the running engine's top_k.
        mine = await attach.ask(SearchRequest(query="k", top_k=12), config)
        theirs = await attach.ask(SearchRequest(query="k", top_k=12), config, top_k_from_config=True)
        assert mine is not None and mine.response.request.top_k == 12
        assert theirs is not None and theirs.response.request.top_k == 7
    finally:
        await server.close()
    assert await attach.ask(SearchRequest(query="gone"), config) is None


@pytest.mark.asyncio
async def test_a_config_saved_just_before_a_search_is_applied_before_it_is_answered(home: Path) -> None:
    config, engine, server = await _listening(home)
    try:
        assert await attach.ask(SearchRequest(query="before"), config) is not None
        assert engine.applied == []  # the file as the engine has it: nothing to apply
        config.write_text(config.read_text(encoding="utf-8") + "    timeout: 9\n", encoding="utf-8")
        assert await attach.ask(SearchRequest(query="after"), config) is not None
        assert [c.servers["alpha"].timeout for c in engine.applied] == [9]
        assert engine.asked == ["before", "(config applied)", "after"]
        assert await attach.ask(SearchRequest(query="again"), config) is not None
        assert len(engine.applied) == 1  # applied once
        # A file that does not validate: the running config answers; the watcher reports it.
        config.write_text("servers: [not, a, mapping]\n", encoding="utf-8")
        assert await attach.ask(SearchRequest(query="broken"), config) is not None
        assert len(engine.applied) == 1 and engine.asked[-1] == "broken"
    finally:
        await server.close()


@pytest.mark.asyncio
async def test_a_stale_socket_is_replaced(home: Path) -> None:
    import socket

    path = attach.socket_path()
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(str(path))
    stale.close()  # the file stays; nobody listens
    server = attach.AttachServer(_Engine(), None)
    try:
        assert await server.start()
        assert await attach.ask(SearchRequest(query="q"), None) is not None
    finally:
        await server.close()


def test_a_directory_others_can_enter_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runtime = tmp_path / "run"
    (runtime / "tributary").mkdir(parents=True)
    os.chmod(runtime / "tributary", 0o755)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.delenv("TRIBUTARY_HOME")
    with pytest.raises(attach.AttachError, match="not a private directory"):
        attach.socket_path()
    assert asyncio.run(attach.ask(SearchRequest(query="q"), None)) is None


@pytest.mark.skipif(not hasattr(__import__("socket"), "SO_PEERCRED"), reason="Linux peer credentials")
def test_peer_credentials_name_the_caller() -> None:
    import socket

    left, right = socket.socketpair(socket.AF_UNIX)
    try:
        assert attach._peer_uid(left) == os.getuid()
    finally:
        left.close()
        right.close()


@pytest.mark.asyncio
async def test_another_user_is_refused(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    engine = _Engine()
    server = attach.AttachServer(engine, None)
    assert await server.start()
    monkeypatch.setattr(attach, "_peer_uid", lambda _sock: os.getuid() + 1)
    try:
        assert await attach.ask(SearchRequest(query="mine?"), None) is None
        assert engine.asked == []
    finally:
        await server.close()


def test_the_socket_lives_under_tributary_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "h"
    monkeypatch.setenv("TRIBUTARY_HOME", str(home))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "xdg"))
    path = attach.socket_path()
    assert path.parent == home / "run"
    assert os.stat(path.parent).st_mode & 0o777 == 0o700
    deep = tmp_path / ("d" * 120)  # too long for a socket path: the runtime dir instead
    monkeypatch.setenv("TRIBUTARY_HOME", str(deep))
    (tmp_path / "xdg").mkdir()
    assert attach.socket_path().parent == tmp_path / "xdg" / "tributary"
