"""Tributary's built-in MCP servers, run as subprocesses like any third-party server.

``python -m tributary.engine.servers.files`` serves code search over local repository indexes;
``python -m tributary.engine.servers.tasks`` serves task-history search (see ``tributary.engine.tasks``).
"""

from __future__ import annotations

from collections.abc import Sequence

from mcp import types
from mcp.shared.exceptions import MCPError

from tributary.engine.query.check import scope_problem


def check_scope(repos: Sequence[str] | None, exclude_repos: Sequence[str] | None) -> None:
    """Refuse ``repos``/``exclude_repos`` values that can name no repository with an
    invalid-params error: the caller's mistake, answered as such, so a client does not
    count it against the server (its circuit breaker stays closed)."""
    for what, values in (("repos", repos), ("exclude_repos", exclude_repos)):
        problem = scope_problem(list(values or ()), what)
        if problem is not None:
            raise MCPError(code=types.INVALID_PARAMS, message=f"invalid arguments: {problem}")
