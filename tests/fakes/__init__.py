"""Fake MCP servers for everyone's tests (see fake_server.py for its CLI and modes).

    from tests.fakes import fake_server_config
    config = fake_server_config("slow", "--mode", "delay", "--delay", "0.5", timeout=2.0)
    pool = SourcePool([config])          # a real subprocess, spawned on first use

In-process (no subprocess), through the pool's in-memory seam::

    from tributary.engine.sources.memory import memory_connector
    from tests.fakes import fake_server_object
    pool = SourcePool([ServerConfig(name="a", command="unused")],
                      connector=memory_connector(lambda cfg: fake_server_object(cfg.name)))

Stdout faults (garbage, invalid JSON-RPC, non-UTF-8) only exist over stdio.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

FAKE_SERVER = Path(__file__).resolve().parent / "fake_server.py"


def fake_server_config(name: str, *args: str, timeout: float = 3.0, **fields: Any) -> Any:
    """A stdio ``ServerConfig`` that runs fake_server.py with ``args``."""
    from tributary.engine.config.schema import ServerConfig

    return ServerConfig(name=name, command=sys.executable,
                        args=[str(FAKE_SERVER), "--name", name, *args], timeout=timeout, **fields)


def fake_server_object(name: str, *args: str) -> Any:
    """The same server as an in-process ``MCPServer`` (for ``memory_connector``)."""
    from tests.fakes.fake_server import Wire, build_server, parse_args

    return build_server(parse_args(["--name", name, *args]), Wire())


def fake_config_file(home: Path, extra: str = "") -> Path:
    """``home/config.yaml`` with one fake stdio server, ``alpha`` (four hits), and
    ``extra`` YAML after it: what the command-line and ``serve`` tests start from."""
    import json

    home.mkdir(parents=True, exist_ok=True)
    args = json.dumps([str(FAKE_SERVER), "--name", "alpha", "--hits", "4"])
    path = home / "config.yaml"
    path.write_text(f"servers:\n  alpha:\n    command: {json.dumps(sys.executable)}\n"
                    f"    args: {args}\n{extra}", encoding="utf-8")
    return path

