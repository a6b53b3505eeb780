"""Fixtures for the cache tests: a fake clock, a real redis-server, a backend factory.

The Redis backend is tested against a real ``redis-server`` started here on loopback
(a free port, no persistence) for the whole session and stopped at the end. When the
binary is missing those tests are skipped with the command that installs it.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

from tests.cache.cache_helpers import CacheFactory, FakeClock
from tributary.engine.cache.base import Cache
from tributary.engine.cache.memory import MemoryCache
from tributary.engine.cache.redact import Scrubber
from tributary.engine.cache.sqlite import SqliteCache

BACKENDS = ["memory", "sqlite", "redis"]
INSTALL_HINT = "apt-get install -y redis-server"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str | None]:
    """The URL of a redis-server running for the session, or None when not installed.

    Session-scoped and requested statically, so it starts before the suite's per-test
    leak check takes its snapshot of child processes.
    """
    binary = shutil.which("redis-server")
    if binary is None:
        yield None
        return
    import redis

    port = _free_port()
    workdir = tmp_path_factory.mktemp("redis")
    proc = subprocess.Popen(
        [
            binary,
            "--bind",
            "127.0.0.1",
            "--port",
            str(port),
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(workdir),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    client = redis.Redis(host="127.0.0.1", port=port, socket_connect_timeout=0.2)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                if client.ping():
                    break
            except redis.exceptions.ConnectionError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"redis-server did not start on port {port}") from None
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        client.close()
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


@pytest.fixture
def redis_url(redis_server: str | None) -> str:
    if redis_server is None:
        pytest.skip(f"redis-server is not installed (install it: {INSTALL_HINT})")
    return redis_server


@pytest_asyncio.fixture
async def make(
    backend: str, tmp_path: Path, redis_server: str | None
) -> AsyncIterator[CacheFactory]:
    """Build caches of the parametrised backend; all closed after the test.

    Caches built by one test share storage (one SQLite file, one Redis namespace), as
    two processes or two machines would.
    """
    made: list[Cache] = []
    namespace = f"test:{uuid.uuid4().hex[:8]}:"
    if backend == "redis" and redis_server is None:
        pytest.skip(f"redis-server is not installed (install it: {INSTALL_HINT})")
    url = redis_server or ""

    def factory(
        *,
        ttl_s: float = 300.0,
        max_entries: int = 100,
        clock: Callable[[], float] | None = None,
        secrets: tuple[str, ...] = (),
    ) -> Cache:
        scrubber = Scrubber(secrets)
        cache: Cache
        if backend == "memory":
            cache = MemoryCache(
                max_entries=max_entries, ttl_s=ttl_s, clock=clock, scrubber=scrubber
            )
        elif backend == "sqlite":
            cache = SqliteCache(
                tmp_path / "cache.sqlite",
                max_entries=max_entries,
                ttl_s=ttl_s,
                clock=clock,
                scrubber=scrubber,
            )
        else:
            from tributary.engine.cache.redis_backend import RedisCache

            cache = RedisCache(
                url, namespace=namespace, ttl_s=ttl_s, clock=clock, scrubber=scrubber
            )
        made.append(cache)
        return cache

    yield factory
    for cache in made:
        await cache.close()
