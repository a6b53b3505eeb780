"""Streamable HTTP sources: the fake server served over HTTP on loopback."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from engine.config.schema import ServerConfig
from engine.model import SourceStatus
from engine.sources import ServerStatus, SourcePool
from tests.sources.helpers import FAKE

pytestmark = [pytest.mark.asyncio, pytest.mark.integration]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def http_server() -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(FAKE), "--name", "web", "--http", str(port), "--delay", "0"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(600):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
                break
            except OSError:
                if proc.poll() is not None:
                    pytest.fail("the HTTP fake server exited")
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


async def test_http_source_answers_and_survives_timeouts(http_server: str) -> None:
    config = ServerConfig(name="web", transport="http", url=http_server, timeout=5.0,
                          headers={"X-Test": "1"})
    pool = SourcePool([config])
    try:
        outcome = await pool.call("web", "over http", top_k=2)
        assert outcome.status is SourceStatus.OK, outcome.error
        assert [h.title for h in outcome.hits] == ["web hit 1", "web hit 2"]
        assert "over http" in outcome.hits[0].content
        assert pool.state("web").status is ServerStatus.READY
        assert pool.state("web").pid is None  # not ours to manage
        assert await pool.ping("web") is True
        outcomes = await asyncio.gather(*(pool.call("web", f"q{i}", top_k=1) for i in range(5)))
        assert all(o.status is SourceStatus.OK for o in outcomes)
    finally:
        await pool.aclose()


async def test_unreachable_http_source_is_an_error_with_backoff() -> None:
    config = ServerConfig(name="gone", transport="http", url=f"http://127.0.0.1:{free_port()}/mcp",
                          timeout=3.0)
    pool = SourcePool([config])
    try:
        outcome = await pool.call("gone", "q", top_k=2)
        assert outcome.status in (SourceStatus.ERROR, SourceStatus.TIMEOUT)
        state = pool.state("gone")
        assert state.last_error and state.restarts >= 1
    finally:
        await pool.aclose()
