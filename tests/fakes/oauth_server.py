"""A real OAuth-protected MCP server for tests, served on loopback in the test's loop.

The SDK's ``MCPServer`` with its own auth routes (metadata discovery, dynamic client
registration, authorize, token, revoke) over an in-memory authorization server
provider that approves every authorization at once (the "user" always agrees), and
lets the test expire access tokens or revoke every token. It counts what happened
(registrations, authorizations, code and refresh exchanges) so tests can tell a
refresh from a new sign-in.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import socket
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import uvicorn
from mcp import types
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    TokenError,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken


@dataclass
class InMemoryAuthServer:
    """An OAuthAuthorizationServerProvider that keeps everything in dicts."""

    access_lifetime_s: int = 3600
    clients: dict[str, OAuthClientInformationFull] = field(default_factory=dict)
    codes: dict[str, AuthorizationCode] = field(default_factory=dict)
    access: dict[str, AccessToken] = field(default_factory=dict)
    refresh: dict[str, RefreshToken] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=lambda: {
        "register": 0, "authorize": 0, "code": 0, "refresh": 0, "refused_refresh": 0})

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        self.counts["register"] += 1
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        self.counts["authorize"] += 1
        code = secrets.token_urlsafe(24)
        self.codes[code] = AuthorizationCode(
            code=code, scopes=params.scopes or [], expires_at=time.time() + 300,
            client_id=client.client_id, code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource)
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str,
    ) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        access, refresh = f"at-{secrets.token_urlsafe(16)}", f"rt-{secrets.token_urlsafe(16)}"
        self.access[access] = AccessToken(token=access, client_id=client_id, scopes=scopes,
                                          expires_at=int(time.time()) + self.access_lifetime_s,
                                          resource=resource)
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes,
                                             resource=resource)
        return OAuthToken(access_token=access, expires_in=self.access_lifetime_s,
                          refresh_token=refresh, scope=" ".join(scopes) or None)

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode,
    ) -> OAuthToken:
        self.codes.pop(authorization_code.code, None)
        self.counts["code"] += 1
        return self._issue(client.client_id, authorization_code.scopes, authorization_code.resource)

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str,
    ) -> RefreshToken | None:
        found = self.refresh.get(refresh_token)
        if found is None:
            self.counts["refused_refresh"] += 1
        return found

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str],
    ) -> OAuthToken:
        if self.refresh.pop(refresh_token.token, None) is None:
            raise TokenError(error="invalid_grant", error_description="refresh token revoked")
        self.counts["refresh"] += 1
        return self._issue(client.client_id, scopes or refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)

    # -- what the tests do to it

    def expire_access_tokens(self) -> None:
        """Every access token stops working (as after it ran out, or the machine slept)."""
        self.access.clear()

    def revoke_everything(self) -> None:
        """Every access and refresh token stops working (signed out at the server)."""
        self.access.clear()
        self.refresh.clear()


def build_server(base: str, provider: InMemoryAuthServer, path: str = "/mcp") -> MCPServer:
    server = MCPServer(
        "oauth-fake", auth_server_provider=provider,
        auth=AuthSettings(issuer_url=base, resource_server_url=f"{base}{path}",
                          validate_token_resource=True,
                          client_registration_options=ClientRegistrationOptions(enabled=True),
                          revocation_options=RevocationOptions(enabled=True)),
    )

    @server.tool(name="search", description="Search the protected notes.",
                 annotations=types.ToolAnnotations(read_only_hint=True))
    def search(query: str, top_k: int = 5) -> str:
        if query == "whoami":  # a careless server that echoes the caller's token
            from mcp.server.auth.middleware.auth_context import get_access_token

            token = get_access_token()
            return f"you are {token.token if token else '?'}"
        return f"protected answer to {query}"

    return server


@contextlib.asynccontextmanager
async def serve_oauth_server(
    provider: InMemoryAuthServer | None = None, *, transport: str = "streamable-http",
) -> AsyncIterator[tuple[str, InMemoryAuthServer]]:
    """Serve the protected server on a free loopback port: ``(url, provider)``; ``url``
    is its MCP endpoint (``/mcp``, or ``/sse`` with ``transport="sse"``)."""
    provider = provider or InMemoryAuthServer()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    mcp = build_server(base, provider, "/sse" if transport == "sse" else "/mcp")
    app = mcp.sse_app() if transport == "sse" else mcp.streamable_http_app()
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        while not server.started:
            assert not task.done(), "the OAuth fake server did not start"
            await asyncio.sleep(0.01)
        yield f"{base}/{'sse' if transport == 'sse' else 'mcp'}", provider
    finally:
        server.should_exit = True
        server.force_exit = True
        with contextlib.suppress(Exception):
            await asyncio.wait_for(task, 10)
        sock.close()
