"""Failed starts remembered across processes: a server whose start failed lately is
given only its query timeout to start by the next process, until it starts."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from tests.cli.test_cli import fake, tributary, write_config
from tributary.engine.config.schema import ServerConfig
from tributary.engine.sources.start_record import REMEMBERED_S, StartRecord


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def test_a_failed_start_is_remembered_for_a_while_and_forgotten_once_started(tmp_path: Path) -> None:
    clock = Clock()
    record = StartRecord(tmp_path / "starts.json", clock)
    server = ServerConfig(name="mute", command="mcp-mute", args=["--root", "/srv"], env={"TOKEN": "s3cret"})
    assert record.failed(server) is None
    record.note_failed(server, "HandshakeTimeout: no answer to initialize within 30s")
    failed = record.failed(server)
    assert failed is not None and "HandshakeTimeout" in failed.describe()
    assert stat.S_IMODE((tmp_path / "starts.json").stat().st_mode) == 0o600
    assert "s3cret" not in (tmp_path / "starts.json").read_text()  # a digest, never the values
    # Launched otherwise (another argument): a new server as far as the record knows.
    assert record.failed(ServerConfig(name="mute", command="mcp-mute", args=["--root", "/tmp"])) is None
    clock.now += REMEMBERED_S + 1
    assert record.failed(server) is None
    clock.now -= REMEMBERED_S
    record.note_started(server)
    assert record.failed(server) is None


def test_an_unreadable_record_is_no_record(tmp_path: Path) -> None:
    path = tmp_path / "starts.json"
    path.write_text("{not json", encoding="utf-8")
    record = StartRecord(path)
    server = ServerConfig(name="mute", command="mcp-mute")
    assert record.failed(server) is None
    record.note_failed(server, "it ended before it was ready")  # replaces the bad file
    assert record.failed(server) is not None
    assert len(json.loads(path.read_text(encoding="utf-8"))) == 1


@pytest.mark.integration
def test_the_next_one_shot_search_does_not_wait_again_for_a_start_that_failed(tmp_path: Path) -> None:
    """Each one-shot search waited the whole start-up timeout for a server that never
    starts (30 s by default). The first one still does; the next gives it its query
    timeout and says why."""
    home = tmp_path / "home"
    text = ("servers:\n" + fake("good", "--hits", "2")
            + fake("mute", "--hang-init") + "    timeout: 1\n    startup_timeout: 2\n")
    config = write_config(home, text)

    def mute_error() -> str:
        result = tributary("--config", str(config), "search", "--json", "--no-attach", "--no-cache", "retry",
                           home=home, timeout=60)
        data = json.loads(result.stdout)
        statuses = {s["name"]: s for s in data["sources"]}
        assert statuses["good"]["status"] == "ok", result.stderr
        assert statuses["mute"]["status"] == "timeout"
        return str(statuses["mute"]["error"])

    assert "not waited for longer" not in mute_error()
    assert "its start failed at" in mute_error()


@pytest.mark.integration
def test_a_server_tested_and_started_is_forgotten_by_the_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`servers test` starts the server afresh; when it starts, the next search waits
    for it as for any first start again."""
    from tributary.engine.config.load import load_config
    from tributary.engine.paths import starts_path

    home = tmp_path / "home"
    config = write_config(home, "servers:\n" + fake("good", "--hits", "2"))
    server = load_config(config).servers["good"]
    monkeypatch.setenv("TRIBUTARY_HOME", str(home))  # the home the command runs with
    record = StartRecord(starts_path())
    record.note_failed(server, "it ended before it was ready")
    assert record.failed(server) is not None
    result = tributary("--config", str(config), "servers", "test", "good", home=home, timeout=60)
    assert result.returncode == 0, result.stderr
    assert record.failed(server) is None
