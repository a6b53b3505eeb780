"""Tributary's own MCP servers, added to the config for the repositories it has indexed.

The built-in ``files`` and ``tasks`` servers are real MCP servers run as
subprocesses exactly like third-party ones: one for code, one for the task history
that touched it. They are not written into the user's config file: they are derived from
what is indexed, so a new index shows up without editing anything. A server of the
same name in the user's config wins (it may tune timeout or weight, or disable it).
"""

from __future__ import annotations

import os
from collections.abc import Collection
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from tributary.engine.config.schema import Config, IndexConfig, ServerConfig
from tributary.engine.index.backend import DSN_VARIABLE
from tributary.engine.paths import indexes_dir
from tributary.engine.runtime.spawn import frozen, module_command

if TYPE_CHECKING:
    from tributary.engine.model import SearchRequest

# Built-ins embed the query with a local model: allow more than the 3 s default.
BUILTIN_TIMEOUT_S = 10.0
# Servers get only an allowlisted environment (tributary.engine.sources.env); these choose which
# model the built-ins load, so they must see the same ones as this process.
MODEL_VARIABLES = (
    "TRIBUTARY_MODEL_CACHE", "TRIBUTARY_ONNX_MODEL", "TRIBUTARY_EMBED_BACKEND",
    "TRIBUTARY_EMBED_PRECISION", "TRIBUTARY_EMBED_THREADS", "TRIBUTARY_EMBED_SEQ",
)

BUILTINS: dict[str, tuple[str, str, str, str]] = {
    # name: (module, index file glob, query tool, description)
    "files": ("tributary.engine.servers.files", "*.files.sqlite", "search_code",
              "Code of the indexed repositories"),
    # files_for_task, not search_tasks: its hits name files, so they agree (and fuse)
    # with the code hits; each carries the past tasks that point at the file.
    "tasks": ("tributary.engine.servers.tasks", "*.tasks.sqlite", "files_for_task",
              "Task and commit history of the indexed repositories"),
}


def project_root() -> Path:
    """The folder holding the ``tributary`` package, so ``python -m tributary...`` resolves."""
    return Path(__file__).resolve().parents[3]


def builtin_server(name: str, index_dir: Path | None = None, index: IndexConfig | None = None) -> ServerConfig:
    """The built-in server ``name`` over the index folder, or over the shared PostgreSQL
    index when ``index`` names one (its DSN, ``${VAR}``s and all, goes in the server's
    environment and is expanded when the server starts, never onto its command line)."""
    module, _glob, tool, description = BUILTINS[name]
    folder = index_dir or indexes_dir()
    shared = index is not None and index.backend == "postgres"
    options = (
        ("--postgres", "--vector-index", index.vector_index) if index is not None and shared
        else ("--index-dir", str(folder))
    )
    command, *args = module_command(module, *options)
    # PYTHONPATH lets ``python -m`` find this engine; a frozen bundle carries its own.
    path = {} if frozen() else {"PYTHONPATH": str(project_root())}
    env = {**path, **_model_environment()}
    if index is not None and shared:
        env[DSN_VARIABLE] = index.dsn
    return ServerConfig(
        name=name,
        transport="stdio",
        command=command,
        args=args,
        env=env,
        timeout=BUILTIN_TIMEOUT_S,
        tool=tool,
        builtin=name,
        description=description,
    )


def _model_environment() -> dict[str, str]:
    return {name: value for name in MODEL_VARIABLES if (value := os.environ.get(name))}


def available_builtins(index_dir: Path | None = None, index: IndexConfig | None = None) -> list[str]:
    """The built-ins that have at least one index to serve (with a shared PostgreSQL
    index: both, always; what it holds is the servers' to find out)."""
    if index is not None and index.backend == "postgres":
        return list(BUILTINS)
    folder = index_dir or indexes_dir()
    if not folder.is_dir():
        return []
    return [name for name, (_m, glob, _t, _d) in BUILTINS.items() if any(folder.glob(glob))]


def with_builtin_servers(config: Config, index_dir: Path | None = None) -> Config:
    """``config`` plus a server for each built-in that has something to serve. A tuning
    of a built-in with nothing to serve (every repository removed) is left out: it has
    no command to run."""
    available = available_builtins(index_dir, config.index)
    servers = {name: server for name, server in config.servers.items()
               if name in available or not server.tunes_builtin}
    for name in available:
        default = builtin_server(name, index_dir, config.index)
        user = servers.get(name)
        if user is None:
            servers[name] = default
        elif user.builtin == name and user.tunes_builtin:
            # The user tuned a built-in (weight, timeout, enabled) without a command.
            servers[name] = replace(default, timeout=user.timeout, weight=user.weight,
                                    enabled=user.enabled, health=user.health)
    return replace(config, servers=servers)


def scope_to_repository(request: SearchRequest, root: Path, servers: Collection[str]) -> None:
    """``request`` asks the repository at ``root`` (absolute) only, by the built-in
    servers among ``servers`` unless it names its sources itself."""
    if str(root) not in request.filters.repos:
        request.filters.repos.append(str(root))
    if request.sources is None:
        request.sources = [name for name in BUILTINS if name in servers]
