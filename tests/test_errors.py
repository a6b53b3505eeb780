"""One root exception: every error Tributary raises on purpose is a TributaryError, and
the command line and the MCP face show its message instead of a traceback."""

from __future__ import annotations

import argparse

import pytest
from mcp.server.mcpserver.exceptions import ToolError

from tributary.engine.cache.base import CacheError
from tributary.engine.cache.codec import CodecError
from tributary.engine.cli import main as cli_main
from tributary.engine.config.errors import ConfigError, ConfigIssue
from tributary.engine.config.expand import ExpansionError
from tributary.engine.errors import TributaryError
from tributary.engine.eval.datasets import DatasetError
from tributary.engine.eval.gitbuild import GitBuildError
from tributary.engine.index.onnx_model import ModelUnavailableError, OnnxModelError
from tributary.engine.index.weights import ModelIntegrityError
from tributary.engine.servers.face import user_errors
from tributary.engine.sources.client import SourceUnavailable, StartTimeout
from tributary.engine.sources.normalize import NormalizeError
from tributary.engine.sources.remote import ConnectError
from tributary.engine.sources.tools import ToolSelectionError
from tributary.engine.tasks.sources import GitError

ERRORS = (
    CacheError, CodecError, ConfigError, ExpansionError, DatasetError, GitBuildError,
    OnnxModelError, ModelUnavailableError, ModelIntegrityError, NormalizeError,
    SourceUnavailable, StartTimeout, ConnectError, ToolSelectionError, GitError,
)


@pytest.mark.parametrize("kind", ERRORS, ids=lambda kind: kind.__name__)
def test_every_engine_error_has_the_one_root(kind: type[Exception]) -> None:
    assert issubclass(kind, TributaryError)


def _config_error() -> ConfigError:
    issue = ConfigIssue(file="config.yaml", key_path="servers.git", line=3, message="no command")
    return ConfigError([issue])


def test_the_cli_prints_the_message_and_exits_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def failing(_: argparse.Namespace) -> int:
        raise _config_error()

    parser = argparse.ArgumentParser()
    parser.add_argument("--version", action="store_true")
    parser.set_defaults(func=failing)
    monkeypatch.setattr(cli_main, "build_parser", lambda only=None: parser)
    assert cli_main.main([]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "config.yaml:3: servers.git: no command" in err
    assert "Traceback" not in err


def test_the_cli_lets_a_bug_raise(monkeypatch: pytest.MonkeyPatch) -> None:
    def buggy(_: argparse.Namespace) -> int:
        raise KeyError("bug")

    parser = argparse.ArgumentParser()
    parser.add_argument("--version", action="store_true")
    parser.set_defaults(func=buggy)
    monkeypatch.setattr(cli_main, "build_parser", lambda only=None: parser)
    with pytest.raises(KeyError):
        cli_main.main([])


def test_the_mcp_face_turns_a_tributary_error_into_a_tool_error() -> None:
    with pytest.raises(ToolError, match=r"servers\.git: no command"), user_errors():
        raise _config_error()
    with pytest.raises(KeyError), user_errors():
        raise KeyError("a bug stays a bug")


class _RefusingEngine:
    """Just enough of the engine for the MCP face: every search is refused."""

    reputation = None

    def supervise(self) -> None:
        pass

    def watch_config(self) -> None:
        pass

    async def search(self, request: object) -> object:
        raise _config_error()

    async def aclose(self) -> None:
        pass


@pytest.mark.asyncio
async def test_an_mcp_client_reads_the_refusal() -> None:
    from mcp import Client

    from tributary.engine.servers.face import build_server

    async def factory() -> _RefusingEngine:
        return _RefusingEngine()

    async with Client(build_server(factory)) as client:  # type: ignore[arg-type]
        result = await client.call_tool("search", {"query": "anything"})
    assert result.is_error
    text = " ".join(getattr(block, "text", "") for block in result.content)
    assert "config.yaml:3: servers.git: no command" in text
