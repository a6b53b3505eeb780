"""``serve --http`` protections follow what the socket is reachable from: only the SDK's
protected names skip the token, and every bind refuses foreign Host/Origin headers."""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.face.test_face import ROOT, _config
from tributary.engine.servers.face import PROTECTED_HOSTS, bind_policy, serve_http

TOKEN = "s3cret-token"
INITIALIZE = json.dumps({
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "probe", "version": "1"}},
}).encode()


@pytest.mark.parametrize("host", PROTECTED_HOSTS)
def test_protected_names_need_no_token_but_check_host(host: str) -> None:
    policy = bind_policy(host)
    assert not policy.needs_token
    assert policy.security.enable_dns_rebinding_protection
    assert "evil.example:*" not in policy.security.allowed_hosts
    assert "localhost:*" in policy.security.allowed_hosts


@pytest.mark.parametrize("host", ["127.0.0.2", "127.1.2.3", "0.0.0.0", "::", "192.168.1.5", "::ffff:127.0.0.1",
                                  "my-box.lan"])
def test_every_other_bind_needs_a_token_and_an_allow_list(host: str) -> None:
    policy = bind_policy(host, ["proxy.example"])
    assert policy.needs_token and policy.security.enable_dns_rebinding_protection
    hosts = policy.security.allowed_hosts
    assert "proxy.example:*" in hosts and "http://proxy.example:*" in policy.security.allowed_origins
    assert not any(h.startswith("evil.example") for h in hosts)
    if host not in ("0.0.0.0", "::"):
        assert (f"[{host}]:*" if ":" in host else f"{host}:*") in hosts


def test_wildcard_bind_allows_this_machines_addresses() -> None:
    hosts = bind_policy("0.0.0.0").security.allowed_hosts
    assert "127.0.0.1:*" in hosts and f"{socket.gethostname()}:*" in hosts


@pytest.mark.asyncio
async def test_serving_127_0_0_2_without_a_token_is_refused() -> None:
    with pytest.raises(ValueError, match="token"):
        await serve_http(None, host="127.0.0.2", port=1, token=None)


def test_cli_refuses_127_0_0_2_without_a_token(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "TRIBUTARY_TOKEN"}
    done = subprocess.run(
        [sys.executable, "-m", "tributary", "--config", str(_config(tmp_path / "home")), "serve", "--http",
         str(_free_port("127.0.0.2")), "--host", "127.0.0.2"],
        env={**env, "TRIBUTARY_HOME": str(tmp_path / "home"), "PYTHONPATH": str(ROOT)}, cwd=ROOT,
        capture_output=True, text=True, timeout=60,
    )
    assert done.returncode != 0 and "token" in done.stderr


def _free_port(host: str) -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def server_on_127_0_0_2(tmp_path: Path) -> Iterator[int]:
    home = tmp_path / "home"
    port = _free_port("127.0.0.2")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tributary", "--config", str(_config(home)), "serve", "--http", str(port),
         "--host", "127.0.0.2", "--token", TOKEN],
        env={**os.environ, "TRIBUTARY_HOME": str(home), "PYTHONPATH": str(ROOT)}, cwd=ROOT,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # wait for the port to open (imports take a few seconds)
            try:
                socket.create_connection(("127.0.0.2", port), timeout=1).close()
                break
            except OSError:
                assert proc.poll() is None, "serve exited"
                time.sleep(0.1)
        yield port
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _post(port: int, headers: dict[str, str]) -> int:
    connection = http.client.HTTPConnection("127.0.0.2", port, timeout=30)
    try:
        base = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        connection.putrequest("POST", "/mcp", skip_host=True)
        for name, value in {**base, **headers}.items():
            connection.putheader(name, value)
        connection.putheader("Content-Length", str(len(INITIALIZE)))
        connection.endheaders(INITIALIZE)
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def test_127_0_0_2_refuses_rebinding_hosts_and_origins(server_on_127_0_0_2: int) -> None:
    port = server_on_127_0_0_2
    own = f"127.0.0.2:{port}"
    auth = {"Authorization": f"Bearer {TOKEN}"}
    assert _post(port, {"Host": own}) == 401  # no token
    assert _post(port, {"Host": "evil.example", **auth}) == 421
    assert _post(port, {"Host": f"evil.example:{port}", **auth}) == 421
    assert _post(port, {"Host": own, "Origin": "http://evil.example", **auth}) == 403
    assert _post(port, {"Host": own, "Origin": f"http://{own}", **auth}) == 200
    assert _post(port, {"Host": own, **auth}) == 200
