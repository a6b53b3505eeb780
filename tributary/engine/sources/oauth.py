"""OAuth 2.1 for remote servers, with the ``mcp`` SDK's own client auth.

The SDK's :class:`~mcp.client.auth.OAuthClientProvider` does discovery (protected
resource and authorization server metadata), dynamic client registration, PKCE, the
code exchange and refreshing. This module gives it what is ours:

* :class:`KeyringTokenStorage` — the SDK's ``TokenStorage`` on the OS keyring
  (:mod:`tributary.engine.config.keystore`): the tokens with the wall-clock time they expire,
  and the client registration, under entries keyed by the server's name *and* URL
  (tokens are never sent to a URL they were not issued for);
* :class:`TributaryOAuth` — the provider, which (1) restores the expiry of stored
  tokens so a restarted app refreshes instead of failing, (2) treats a token as
  expired ``REFRESH_MARGIN`` early so it is refreshed *before* it runs out, and
  because expiry is wall-clock time, refreshed after the machine slept, (3) answers a
  401 by refreshing first when it holds a refresh token, and (4) never opens a
  browser unasked: a background connection that needs the user raises
  :class:`SignInRequired` ("run ``tributary servers login NAME``");
* :func:`sign_in` / :func:`sign_out` — the interactive login: a loopback HTTP
  callback server (uvicorn + Starlette, both the SDK's own dependencies) on
  ``127.0.0.1``, the browser opened at the authorization URL, the code returned
  to the SDK, and the session kept in the keyring.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
import time
import webbrowser
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx2
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)
from pydantic import AnyUrl, ValidationError

from tributary.engine.config import keystore
from tributary.engine.config.schema import ServerConfig
from tributary.engine.errors import TributaryError

CLIENT_NAME = "Tributary"
CALLBACK_PATH = "/callback"
REFRESH_MARGIN_S = 60.0  # refresh this long before the token runs out (at most 10 % of its life)
SIGN_IN_TIMEOUT_S = 300.0


class SignInRequired(TributaryError):
    """The server needs the user to sign in (no session, or its refresh was refused)."""


class _QuietSignIn(logging.Filter):
    """The SDK logs every failed flow with a traceback; a needed sign-in is no crash,
    and the server's error already says what to do."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not isinstance(error, SignInRequired)


logging.getLogger("mcp.client.auth.oauth2").addFilter(_QuietSignIn())


class SignInError(TributaryError):
    """Signing in did not complete; the message says what happened."""


def needs_oauth(server: ServerConfig) -> bool:
    """Whether connections to ``server`` carry the OAuth provider: ``auth: oauth``, or
    ``auth: auto`` (the default) for a remote server with no Authorization header of its own."""
    if server.transport == "stdio" or server.auth == "none":
        return False
    if server.auth == "oauth":
        return True
    return not any(key.lower() == "authorization" for key in server.headers)


# ----------------------------------------------------------------------- storage


def _entry(server: ServerConfig, what: str) -> str:
    return f"oauth:{server.name}:{server.url}:{what}"


class KeyringTokenStorage(TokenStorage):
    """Tokens and the client registration of one server, in the keyring (read and
    written in a worker thread: a keyring may wait on the desktop to unlock it)."""

    def __init__(self, server: ServerConfig,
                 on_tokens: Callable[[list[str]], None] | None = None) -> None:
        self.server = server
        self.expires_at: float | None = None  # wall clock, from the stored tokens
        self._on_tokens = on_tokens  # told every token read or stored, to mask it

    def _seen(self, tokens: OAuthToken) -> None:
        if self._on_tokens is not None:
            self._on_tokens([t for t in (tokens.access_token, tokens.refresh_token) if t])

    async def get_tokens(self) -> OAuthToken | None:
        raw = await anyio.to_thread.run_sync(keystore.get_entry, _entry(self.server, "tokens"))
        if not raw:
            return None
        try:
            record = json.loads(raw)
            token = OAuthToken.model_validate(record["token"])
        except (ValueError, KeyError, TypeError, ValidationError):
            return None
        expires_at = record.get("expires_at")
        self.expires_at = float(expires_at) if isinstance(expires_at, int | float) else None
        self._seen(token)
        return token

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self._seen(tokens)
        self.expires_at = time.time() + tokens.expires_in if tokens.expires_in is not None else None
        record = {"token": tokens.model_dump(mode="json"), "expires_at": self.expires_at}
        await anyio.to_thread.run_sync(keystore.set_entry, _entry(self.server, "tokens"), json.dumps(record))

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        raw = await anyio.to_thread.run_sync(keystore.get_entry, _entry(self.server, "client"))
        if not raw:
            return None
        try:
            return OAuthClientInformationFull.model_validate_json(raw)
        except ValidationError:
            return None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        await anyio.to_thread.run_sync(
            keystore.set_entry, _entry(self.server, "client"), client_info.model_dump_json())

    async def forget_tokens(self) -> None:
        await anyio.to_thread.run_sync(keystore.delete_entry, _entry(self.server, "tokens"))
        self.expires_at = None

    async def forget_client(self) -> None:
        await anyio.to_thread.run_sync(keystore.delete_entry, _entry(self.server, "client"))


def signed_in(server: ServerConfig) -> bool:
    """Whether a session (tokens) for ``server`` is stored (blocking: keyring read)."""
    return bool(keystore.get_entry(_entry(server, "tokens")))


# ---------------------------------------------------------------------- provider


def _margin(lifetime_s: float) -> float:
    return min(REFRESH_MARGIN_S, max(0.0, lifetime_s) * 0.1)


class TributaryOAuth(OAuthClientProvider):
    """The SDK's provider with restored expiry, early refresh, refresh-on-401 and no
    unasked browser (see the module docstring)."""

    def __init__(
        self, server: ServerConfig, url: str, storage: KeyringTokenStorage, redirect_uri: str, *,
        redirect_handler: Callable[[str], Awaitable[None]] | None = None,
        callback_handler: Callable[[], Awaitable[AuthorizationCodeResult]] | None = None,
    ) -> None:
        metadata = OAuthClientMetadata(
            client_name=CLIENT_NAME, redirect_uris=[AnyUrl(redirect_uri)],
            grant_types=["authorization_code", "refresh_token"], response_types=["code"],
            token_endpoint_auth_method="none",
        )
        super().__init__(url, metadata, storage,
                         redirect_handler=redirect_handler, callback_handler=callback_handler)
        self.server = server
        self.storage = storage
        self.interactive = redirect_handler is not None
        self._refreshing = False

    def _early(self) -> None:
        """Move the expiry ``REFRESH_MARGIN`` earlier, so the SDK refreshes in time."""
        tokens = self.context.current_tokens
        if self.context.token_expiry_time is not None and tokens is not None and tokens.expires_in:
            self.context.token_expiry_time -= _margin(float(tokens.expires_in))

    async def _initialize(self) -> None:
        await super()._initialize()
        expires_at, tokens = self.storage.expires_at, self.context.current_tokens
        if expires_at is not None and tokens is not None:
            self.context.token_expiry_time = expires_at - _margin(float(tokens.expires_in or 0))

    async def _perform_authorization(self) -> httpx2.Request:
        # A 401 with a token in hand: try the refresh token before asking the user.
        if self.context.can_refresh_token() and not self.interactive:
            self._refreshing = True
            return await self._refresh_token()
        if not self.interactive:
            raise SignInRequired(
                f"{self.server.name} needs you to sign in: run `tributary servers login "
                f"{self.server.name}` or use Sign in in the editor")
        return await super()._perform_authorization()

    async def _handle_token_response(self, response: httpx2.Response) -> None:
        if self._refreshing:
            self._refreshing = False
            if not await self._handle_refresh_response(response):
                raise SignInRequired(
                    f"{self.server.name}: the session has ended (the refresh was refused); "
                    f"sign in again with `tributary servers login {self.server.name}`")
            return
        await super()._handle_token_response(response)
        self._early()

    async def _handle_refresh_response(self, response: httpx2.Response) -> bool:
        refreshed = await super()._handle_refresh_response(response)
        if refreshed:
            self._early()
        elif response.status_code in (400, 401):
            # The grant is gone (revoked, expired): forget it, so later retries ask for a
            # sign-in at once instead of offering the server the dead token again.
            await self.storage.forget_tokens()
        return refreshed


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _redirect_uri(port: int) -> str:
    return f"http://127.0.0.1:{port}{CALLBACK_PATH}"


def _registered_port(client: OAuthClientInformationFull | None) -> int | None:
    for uri in (client.redirect_uris or []) if client is not None else []:
        parts = urlsplit(str(uri))
        if parts.hostname == "127.0.0.1" and parts.port and parts.path == CALLBACK_PATH:
            return parts.port
    return None


async def background_auth(
    server: ServerConfig, url: str, on_tokens: Callable[[list[str]], None] | None = None,
) -> TributaryOAuth:
    """The provider a supervised connection to ``server`` (at ``url``, expanded) uses:
    the stored session only, never a browser; ``on_tokens`` hears each token, to mask it."""
    storage = KeyringTokenStorage(server, on_tokens)
    port = _registered_port(await storage.get_client_info()) or _free_port()
    return TributaryOAuth(server, url, storage, _redirect_uri(port))


# --------------------------------------------------------------------- sign in


@dataclass(slots=True)
class _Callback:
    """The loopback redirect target: one authorization response, then done."""

    result: asyncio.Future[AuthorizationCodeResult]

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        from starlette.requests import Request
        from starlette.responses import HTMLResponse, PlainTextResponse

        if scope["type"] != "http":
            return
        request = Request(scope, receive)
        if request.url.path != CALLBACK_PATH:
            await PlainTextResponse("not found", status_code=404)(scope, receive, send)
            return
        params = request.query_params
        if self.result.done():
            message, status = "This sign-in has already completed.", 400
        elif params.get("error"):
            description = params.get("error_description") or params["error"]
            self.result.set_exception(SignInError(f"the server refused the sign-in: {description}"))
            message, status = f"Sign-in failed: {description}", 400
        elif not params.get("code"):
            message, status = "No authorization code in the redirect.", 400
        else:
            self.result.set_result(AuthorizationCodeResult(
                code=params["code"], state=params.get("state"), iss=params.get("iss")))
            message, status = "Signed in to Tributary. You can close this tab.", 200
        page = f"<!doctype html><title>Tributary</title><p>{message}</p>"
        await HTMLResponse(page, status_code=status)(scope, receive, send)


@contextlib.asynccontextmanager
async def _callback_server(port: int) -> AsyncIterator[_Callback]:
    """A loopback HTTP server on ``127.0.0.1:port`` for the authorization redirect."""
    import uvicorn

    callback = _Callback(asyncio.get_running_loop().create_future())
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError:
        sock.close()
        raise
    config = uvicorn.Config(callback, log_level="warning", access_log=False, lifespan="off")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]), name="tributary-oauth-callback")
    try:
        while not server.started and not task.done():
            await asyncio.sleep(0.01)
        if task.done():
            task.result()
        yield callback
    finally:
        server.should_exit = True
        with contextlib.suppress(Exception):
            await asyncio.wait_for(task, 10)
        sock.close()


def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


async def sign_in(
    server: ServerConfig,
    open_browser: Callable[[str], Awaitable[None]] | None = None,
    *,
    timeout_s: float = SIGN_IN_TIMEOUT_S,
) -> None:
    """Sign in to ``server`` (its ``url`` expanded) in the browser; the session is kept in
    the keyring. ``open_browser`` receives the authorization URL (default: the system
    browser). Raises :class:`SignInError` when it does not complete."""
    from mcp import ClientSession

    from tributary.engine.sources.remote import ConnectError, expand_for_connection, remote_streams

    if server.transport == "stdio" or not server.url:
        raise SignInError(f"{server.name} is not a remote server: only http and sse servers sign in")
    try:
        expanded = await expand_for_connection(server)
    except ConnectError as exc:
        raise SignInError(f"{server.name}: {exc}") from None
    storage = KeyringTokenStorage(server)
    client = await storage.get_client_info()
    port = _registered_port(client)
    if port is None or not _bindable(port):
        if client is not None:
            await storage.forget_client()  # registered for a port we cannot listen on now
        port = _free_port()
    await storage.forget_tokens()  # a fresh session, whatever was stored
    opener = open_browser or _system_browser
    async with _callback_server(port) as callback:
        async def wait_for_code() -> AuthorizationCodeResult:
            return await asyncio.wait_for(asyncio.shield(callback.result), timeout_s)

        auth = TributaryOAuth(server, expanded.url or "", storage, _redirect_uri(port),
                              redirect_handler=opener, callback_handler=wait_for_code)
        try:
            async with remote_streams(expanded, auth) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
        except TimeoutError:
            raise SignInError(f"{server.name}: no answer from the browser within {timeout_s:g}s") from None
        except SignInError:
            raise
        except Exception as exc:
            raise SignInError(f"{server.name}: sign-in failed: {_leaf(exc)}") from None
        finally:
            if not callback.result.done():
                callback.result.cancel()
    if not await anyio.to_thread.run_sync(signed_in, server):
        raise SignInError(f"{server.name}: the server did not ask for a sign-in (it needs none)")


async def sign_out(server: ServerConfig) -> bool:
    """Forget ``server``'s session and client registration; False if there was none."""
    storage = KeyringTokenStorage(server)
    had = await anyio.to_thread.run_sync(signed_in, server)
    await storage.forget_tokens()
    await storage.forget_client()
    return had


async def _system_browser(url: str) -> None:
    opened = await anyio.to_thread.run_sync(webbrowser.open, url)
    if not opened:
        raise SignInError(f"no browser could be opened; visit this address to sign in: {url}")


def _leaf(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
