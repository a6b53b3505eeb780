"""Each source's typical latency and restart history, where a user judges sources:
the search page's source chips and the config editor's servers list."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from tests.app.fakes import FakeEngine, server_state
from tributary.app.config_editor.editor import ConfigEditor
from tributary.app.config_editor.servers import LATENCY_ROLE, describe_state
from tributary.app.search.source_strip import SourceStrip, typical_latency
from tributary.engine.config.schema import Config, ServerConfig
from tributary.engine.model import SourceReport, SourceStatus
from tributary.engine.sources.health import BreakerSnapshot, BreakerState
from tributary.engine.sources.state import ServerState, ServerStatus

KILLED = "restarted: no answer for 9 s (3 requests in a row timed out)"


def state(name: str, latency_ms: float | None = None, **kw: Any) -> ServerState:
    return server_state(name, latency_ms=latency_ms, **kw)


def test_typical_latency_is_rough_on_purpose() -> None:
    assert typical_latency(None) is None
    assert typical_latency(0.3) == "~1 ms"
    assert typical_latency(84.6) == "~85 ms"
    assert typical_latency(123.0) == "~120 ms"
    assert typical_latency(2430.0) == "~2.4 s"


def test_chips_show_typical_latency_and_a_recent_restart(qtbot: Any) -> None:
    states = [state("files", 84.6),
              state("git", 2430.0, restarts=1, restarted_at=time.time() - 30,
                    restart_reason=KILLED, last_error=KILLED),
              state("docs")]
    strip = SourceStrip(states=lambda: states)
    qtbot.addWidget(strip)

    strip.set_reports([SourceReport(name=n) for n in ("files", "git", "docs", "new")], "asking…")
    chips = strip.chips
    # While waiting: how long this source usually takes.
    assert chips["files"].text() == "files … ~85 ms"
    assert chips["git"].text() == "git … ~2.4 s"
    assert chips["docs"].text() == "docs …" and chips["new"].text() == "new …"
    assert "typically answers in ~85 ms" in chips["files"].toolTip()

    strip.set_reports([
        SourceReport(name="files", status=SourceStatus.OK, hits=3, latency_ms=92.0),
        SourceReport(name="git", status=SourceStatus.TIMEOUT, latency_ms=3000.0),
        SourceReport(name="docs", status=SourceStatus.OK, hits=1, latency_ms=40.0),
    ], "done")
    assert chips["files"].text() == "files 3 hits · 92 ms"
    assert "latency 92 ms (typically ~85 ms)" in chips["files"].toolTip()
    assert chips["git"].text() == "git · timeout · 3000 ms · restarted"
    tip = chips["git"].toolTip()
    assert "restarted 1× · last at " in tip and "no answer for 9 s" in tip
    assert "typically ~2.4 s" in tip
    assert "restarted" not in chips["files"].toolTip()

    # A restart long ago stays in the tooltip, not on the chip.
    states[1] = replace(states[1], restarted_at=time.time() - 3600)
    strip.set_reports([SourceReport(name="git", status=SourceStatus.OK, hits=2, latency_ms=50.0)])
    assert chips["git"].text() == "git 2 hits · 50 ms"
    assert "restarted 1×" in chips["git"].toolTip()


def test_chips_survive_a_failing_state_source(qtbot: Any) -> None:
    def broken() -> list[ServerState]:
        raise RuntimeError("engine closing")

    strip = SourceStrip(states=broken)
    qtbot.addWidget(strip)
    strip.set_reports([SourceReport(name="a", status=SourceStatus.OK, hits=1, latency_ms=5.0)])
    assert strip.chips["a"].text() == "a 1 hit · 5 ms"


class StatefulEngine(FakeEngine):
    """The engine double, reporting real ``ServerState`` objects."""

    states: list[ServerState]

    def server_states(self) -> list[ServerState]:
        return list(self.states)


def test_servers_list_shows_latency_and_what_happened(qtbot: Any, tmp_path: Path) -> None:
    config = Config(path=tmp_path / "config.yaml")
    for name in ("files", "git", "unsaved"):
        config.servers[name] = ServerConfig(name=name, command="python", args=[f"{name}.py"])
    engine = StatefulEngine(config=config)
    engine.states = [
        state("files", 84.6),
        state("git", 310.0, restarts=2, restarted_at=time.time() - 5, restart_reason=KILLED,
              last_error=KILLED, status=ServerStatus.BACKOFF, pid=None, uptime_s=None,
              retry_in_s=0.5, breaker=BreakerSnapshot(BreakerState.OPEN, 3, 20.0, 1)),
    ]
    editor = ConfigEditor(lambda: engine)
    qtbot.addWidget(editor)
    editor.load(config)
    editor.resize(900, 600)
    editor.show()
    page = editor.servers
    items = {page.list.item(i).text(): page.list.item(i) for i in range(page.list.count())}
    assert items["files"].data(LATENCY_ROLE) == "~85 ms"
    assert items["git"].data(LATENCY_ROLE) == "~310 ms"
    assert items["unsaved"].data(LATENCY_ROLE) == ""
    assert "restarted 2×" in items["git"].toolTip() and "no answer for 9 s" in items["git"].toolTip()
    assert not editor.dirty  # showing state is not an edit
    page.list.viewport().grab()  # the delegate paints the note without complaint

    assert page.state_label.text() == "Status: running · pid 4242 · up 2 min · ~85 ms typical · asks search(query)"
    page.list.setCurrentItem(items["git"])
    text = page.state_label.text()
    assert text.startswith("Status: down, restarting in 0.5 s")
    assert "~310 ms typical" in text and "circuit open after 3 failures" in text
    assert "restarted 2× · last at" in text and "no answer for 9 s" in text
    page.list.setCurrentItem(items["unsaved"])
    assert "save to start it" in page.state_label.text()

    # The next refresh shows what changed; the config is not touched by it.
    engine.states[0] = replace(engine.states[0], latency_ms=1500.0)
    page.refresh_states()
    assert items["files"].data(LATENCY_ROLE) == "~1.5 s"
    assert items["files"].checkState() == Qt.CheckState.Checked
    assert config.servers["files"].enabled and not editor.dirty


def test_describe_state_of_a_server_that_is_down() -> None:
    down = state("x", status=ServerStatus.BACKOFF, pid=None, uptime_s=None, last_error="exit 3")
    assert describe_state(down) == "down, restarting · last error: exit 3"


def test_a_server_with_no_search_tool_is_marked_in_the_list(qtbot: Any, tmp_path: Path) -> None:
    """Green in the engine but of no use to a search: the list and the server's status
    say so in words, not only in a tooltip."""
    config = Config(path=tmp_path / "config.yaml")
    config.servers["time"] = ServerConfig(name="time", command="mcp-server-time")
    engine = StatefulEngine(config=config)
    why = ("no search-like tool with a string query argument; tools seen: get_current_time, "
           "convert_time — set `tool` (and `query_argument`) for this server")
    engine.states = [state("time", 12.0, tool=None, tool_error=why)]
    editor = ConfigEditor(lambda: engine)
    qtbot.addWidget(editor)
    editor.load(config)
    editor.show()
    page = editor.servers
    assert page.list.item(0).data(LATENCY_ROLE) == "no search tool"
    assert page.state_label.isVisible()
    assert "not asked in searches: no search-like tool" in page.state_label.text()


def test_a_server_that_needs_a_setting_says_which_kind_in_the_list(qtbot: Any, tmp_path: Path) -> None:
    """The list names what the search chips name: server-filesystem needs arguments,
    server-everything has no read-only search tool."""
    config = Config(path=tmp_path / "config.yaml")
    config.servers["filesystem"] = ServerConfig(name="filesystem", command="node")
    config.servers["everything"] = ServerConfig(name="everything", command="node")
    engine = StatefulEngine(config=config)
    engine.states = [
        state("filesystem", 12.0, tool=None,
              tool_error="search_files needs `path` (required); set `arguments: {path: …}` and "
                         "`tool: search_files`"),
        state("everything", 12.0, tool=None,
              tool_error="no read-only search tool; set `tool:` to choose one"),
    ]
    editor = ConfigEditor(lambda: engine)
    qtbot.addWidget(editor)
    editor.load(config)
    editor.show()
    labels = {editor.servers.list.item(n).text(): editor.servers.list.item(n).data(LATENCY_ROLE)
              for n in range(editor.servers.list.count())}
    assert labels == {"filesystem": "needs arguments", "everything": "no read-only tool"}


def test_describe_state_says_what_a_search_sends_a_running_server() -> None:
    # A grep tool left at `query_mode: full` is sent a regex of the question's names:
    # the status says what is asked of this one.
    grep = state("rg", 12.0, tool="search(pattern as a regex of its names, maxResults=top_k) [configured]")
    assert describe_state(grep).endswith(
        " · asks search(pattern as a regex of its names, maxResults=top_k) [configured]")
    assert "asks" not in describe_state(replace(grep, status=ServerStatus.IDLE))


def test_a_server_configured_twice_says_so_in_its_status(qtbot: Any, tmp_path: Path) -> None:
    """server-filesystem configured by npx and by its installed command, asked with the
    same tool, answered every search twice: the form says so under the status."""
    config = Config(path=tmp_path / "config.yaml")
    config.servers["fs"] = ServerConfig(name="fs", command="/usr/local/bin/mcp-server-filesystem",
                                        args=["/srv"], tool="search_files")
    config.servers["filesystem"] = ServerConfig(
        name="filesystem", command="npx", args=["-y", "@modelcontextprotocol/server-filesystem", "/srv"],
        tool="search_files")
    config.servers["other"] = ServerConfig(name="other", command="npx",
                                           args=["-y", "@modelcontextprotocol/server-filesystem", "/home"],
                                           tool="search_files")
    engine = StatefulEngine(config=config)
    engine.states = [state("fs", 80.0), state("filesystem", 90.0), state("other", 70.0)]
    editor = ConfigEditor(lambda: engine)
    qtbot.addWidget(editor)
    editor.load(config)
    editor.show()
    page = editor.servers
    items = {page.list.item(i).text(): page.list.item(i) for i in range(page.list.count())}
    page.list.setCurrentItem(items["filesystem"])
    assert "The same server as “fs”, asked with the same tool" in page.state_label.text()
    page.list.setCurrentItem(items["other"])
    assert "The same server" not in page.state_label.text()
    items["fs"].setCheckState(Qt.CheckState.Unchecked)  # one of them off: no longer twice
    page.list.setCurrentItem(items["filesystem"])
    assert "The same server" not in page.state_label.text()
