"""OAuth 2.1 end to end: a real OAuth-protected MCP server on loopback (the SDK's auth
routes over an in-memory provider), the SDK's client auth with our keyring storage
(keyring's file backend in the test's home), and the browser step driven by the test
(it follows the authorization redirect to our loopback callback server)."""

from __future__ import annotations

import json
import time
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest

from tests.fakes.oauth_server import serve_oauth_server
from tributary.engine.config import keystore
from tributary.engine.config.schema import ServerConfig
from tributary.engine.model import SourceStatus
from tributary.engine.sources import SourcePool
from tributary.engine.sources.client import Backoff
from tributary.engine.sources.oauth import SignInError, needs_oauth, sign_in, sign_out, signed_in

pytestmark = [pytest.mark.asyncio, pytest.mark.integration]

QUICK = Backoff(initial_s=0.1, max_s=0.5)


class Browser:
    """The user's browser: follows the authorization URL and its redirect."""

    def __init__(self) -> None:
        self.opened: list[str] = []

    async def __call__(self, url: str) -> None:
        self.opened.append(url)
        async with httpx2.AsyncClient(follow_redirects=True, timeout=30) as http:
            response = await http.get(url)
        assert response.status_code == 200, response.text
        assert "Signed in" in response.text


def remote(url: str, transport: str = "http") -> ServerConfig:
    return ServerConfig(name="notes", transport=transport, url=url, timeout=10.0)  # type: ignore[arg-type]


async def call(pool: SourcePool) -> SourceStatus:
    outcome = await pool.call("notes", "roadmap", top_k=3)
    return outcome.status


def stored_record(server: ServerConfig) -> dict:
    raw = keystore.get_entry(f"oauth:{server.name}:{server.url}:tokens")
    assert raw
    return json.loads(raw)


async def test_sign_in_refresh_revoke_and_restart(caplog: pytest.LogCaptureFixture) -> None:
    async with serve_oauth_server() as (url, auth):
        server = remote(url)
        assert needs_oauth(server)
        browser = Browser()

        # Not signed in: the background connection asks for a sign-in, opens no browser.
        pool = SourcePool([server], backoff=QUICK)
        try:
            outcome = await pool.call("notes", "q", top_k=1)
            assert outcome.status is SourceStatus.ERROR
            assert "tributary servers login notes" in (pool.state("notes").last_error or "")
        finally:
            await pool.aclose()
        assert browser.opened == [] and auth.counts["authorize"] == 0

        # First sign-in: discovery, registration (reused from above), PKCE, the browser.
        await sign_in(server, browser)
        assert len(browser.opened) == 1
        opened = browser.opened[0]
        assert "code_challenge=" in opened and "code_challenge_method=S256" in opened
        assert auth.counts["register"] == 1 and auth.counts["code"] == 1
        assert signed_in(server)
        token = stored_record(server)["token"]["access_token"]
        assert keystore.names() == []  # OAuth entries are not user secrets

        pool = SourcePool([server], backoff=QUICK)
        try:
            assert await call(pool) is SourceStatus.OK
            echoed = await pool.call("notes", "whoami", top_k=1)
            assert echoed.hits and echoed.hits[0].content == "you are ****"  # token masked
            # The access token runs out (or the machine slept past it): refreshed on the 401.
            auth.expire_access_tokens()
            assert await call(pool) is SourceStatus.OK
            assert auth.counts["refresh"] == 1 and auth.counts["authorize"] == 1
        finally:
            await pool.aclose()
        assert stored_record(server)["token"]["access_token"] != token

        # A restart keeps the session; a token stored as expired is refreshed first.
        record = stored_record(server)
        record["expires_at"] = time.time() - 5
        keystore.set_entry(f"oauth:{server.name}:{server.url}:tokens", json.dumps(record))
        pool = SourcePool([server], backoff=QUICK)
        try:
            assert await call(pool) is SourceStatus.OK
            assert auth.counts["refresh"] == 2
            assert stored_record(server)["expires_at"] > time.time() + 3000
        finally:
            await pool.aclose()

        # The refresh token is revoked: the user is asked to sign in again, no browser.
        auth.revoke_everything()
        pool = SourcePool([server], backoff=QUICK)
        try:
            outcome = await pool.call("notes", "q", top_k=1)
            assert outcome.status is SourceStatus.ERROR
            error = pool.state("notes").last_error or ""
            assert "sign in again" in error and "tributary servers login notes" in error
        finally:
            await pool.aclose()
        assert auth.counts["refused_refresh"] == 1  # the dead grant is not offered again
        assert not signed_in(server)
        assert len(browser.opened) == 1 and auth.counts["authorize"] == 1

        # Signing in again works, and so does the next restart.
        await sign_in(server, browser)
        assert len(browser.opened) == 2 and auth.counts["register"] == 1  # registration kept
        pool = SourcePool([server], backoff=QUICK)
        try:
            assert await call(pool) is SourceStatus.OK
        finally:
            await pool.aclose()

        assert await sign_out(server) is True
        assert not signed_in(server)
        assert await sign_out(server) is False
    assert "OAuth flow error" not in caplog.text  # a needed sign-in is no crash


async def test_sse_server_signs_in_too() -> None:
    async with serve_oauth_server(transport="sse") as (url, auth):
        server = remote(url, "sse")
        await sign_in(server, Browser())
        pool = SourcePool([server], backoff=QUICK)
        try:
            assert await call(pool) is SourceStatus.OK
        finally:
            await pool.aclose()
        assert auth.counts["code"] == 1


async def test_a_refused_sign_in_says_so() -> None:
    async with serve_oauth_server() as (url, _auth):
        server = remote(url)

        async def closes_the_tab(authorize_url: str) -> None:
            callback = parse_qs(urlsplit(authorize_url).query)["redirect_uri"][0]
            async with httpx2.AsyncClient() as http:
                await http.get(f"{callback}?error=access_denied&error_description=user+said+no")

        with pytest.raises(SignInError, match="user said no"):
            await sign_in(server, closes_the_tab)
        assert not signed_in(server)


async def test_a_server_with_its_own_authorization_header_does_not_sign_in() -> None:
    server = ServerConfig(name="k", transport="http", url="https://x.example/mcp",
                          headers={"Authorization": "Bearer ${keyring:K}"})
    assert not needs_oauth(server)
    server.auth = "oauth"
    assert needs_oauth(server)


async def test_a_token_about_to_run_out_is_refreshed_before_it_does() -> None:
    async with serve_oauth_server() as (url, auth):
        server = remote(url)
        await sign_in(server, Browser())
        record = stored_record(server)
        record["expires_at"] = time.time() + 20  # still valid, but inside the margin
        keystore.set_entry(f"oauth:{server.name}:{server.url}:tokens", json.dumps(record))
        old = record["token"]["access_token"]
        pool = SourcePool([server], backoff=QUICK)
        try:
            assert await call(pool) is SourceStatus.OK
        finally:
            await pool.aclose()
        assert auth.counts["refresh"] == 1  # refreshed although the server still took the old one
        assert old in auth.access  # (it was never rejected)
        assert stored_record(server)["token"]["access_token"] != old
