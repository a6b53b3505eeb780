"""``tributary servers login|logout NAME``, run as a user runs it, against the OAuth
fake on loopback; the test is the browser (it follows the printed sign-in address)."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import httpx2
import pytest

from tests.cli.test_cli import ROOT
from tests.fakes.oauth_server import serve_oauth_server
from tributary.engine.config import keystore
from tributary.engine.config.schema import ServerConfig
from tributary.engine.sources.oauth import signed_in

pytestmark = [pytest.mark.asyncio, pytest.mark.integration]


async def tributary(*args: str) -> asyncio.subprocess.Process:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tributary", *args, env=env, cwd=ROOT,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)


async def test_login_and_logout(tmp_path: Path) -> None:
    async with serve_oauth_server() as (url, auth):
        config = tmp_path / "config.yaml"
        config.write_text(f"servers:\n  notes:\n    url: {url}\n", encoding="utf-8")
        proc = await tributary("--config", str(config), "servers", "login", "notes", "--no-browser")
        assert proc.stdout is not None
        address = ""
        while not address.startswith("http"):
            line = await asyncio.wait_for(proc.stdout.readline(), 60)
            assert line, "login ended without printing the sign-in address"
            address = line.decode().strip()
        async with httpx2.AsyncClient(follow_redirects=True, timeout=30) as http:
            page = await http.get(address)
        assert page.status_code == 200 and "Signed in" in page.text
        out, err = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 0, err.decode()
        assert "signed in to notes" in out.decode()
        # No OS keyring in the tests: the output says the file, and what protects it.
        assert f"kept in the file {keystore.fallback_path()}" in out.decode()
        assert "(0600) but not encrypted" in out.decode()
        assert auth.counts["code"] == 1
        server = ServerConfig(name="notes", transport="http", url=url)
        assert signed_in(server)

        proc = await tributary("--config", str(config), "servers", "logout", "notes")
        out, _ = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 0 and "signed out of notes" in out.decode()
        assert not signed_in(server)


async def test_login_refuses_a_stdio_server(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("servers:\n  local:\n    command: srv\n", encoding="utf-8")
    proc = await tributary("--config", str(config), "servers", "login", "local")
    _, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 1 and "only http and sse servers sign in" in err.decode()
