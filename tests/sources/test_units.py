"""Pure pieces: tool selection, circuit breaker, environment allowlist, stderr ring."""

from __future__ import annotations

import time

import pytest
from mcp import types

from tributary.engine.config.schema import HealthConfig, ServerConfig
from tributary.engine.sources.env import child_environment
from tributary.engine.sources.health import BreakerState, CircuitBreaker, Silence
from tributary.engine.sources.stderr import StderrLog, open_stderr_pipe
from tributary.engine.sources.tools import ToolSelectionError, select_tool


def tool(name: str, props: dict[str, str], required: list[str]) -> types.Tool:
    """A tool its server declares read-only (the only kind auto-detection may choose)."""
    schema = {"type": "object", "properties": {k: {"type": v} for k, v in props.items()},
              "required": required}
    return types.Tool(name=name, input_schema=schema,
                      annotations=types.ToolAnnotations(read_only_hint=True))


CFG = ServerConfig(name="s", command="x")


def test_auto_detects_search_tool_and_top_k() -> None:
    tools = [
        tool("add", {"a": "integer"}, ["a"]),
        tool("find_symbol", {"name": "string"}, ["name"]),
        tool("search", {"query": "string", "limit": "integer", "lang": "string"}, ["query"]),
    ]
    sel = select_tool(CFG, tools)
    assert (sel.tool, sel.query_argument, sel.top_k_argument, sel.auto) == ("search", "query", "limit", True)
    assert sel.arguments("hi", 7) == {"query": "hi", "limit": 7}


def test_auto_detect_by_argument_name_and_camel_case_tool() -> None:
    sel = select_tool(CFG, [tool("getDocsLookup", {"q": "string", "lang": "string"}, [])])
    assert sel.tool == "getDocsLookup" and sel.query_argument == "q" and sel.top_k_argument is None


def test_no_fit_names_the_tools_seen() -> None:
    with pytest.raises(ToolSelectionError, match="add, read_file"):
        select_tool(CFG, [tool("add", {"a": "integer"}, ["a"]),
                          tool("read_file", {"path": "string"}, ["path"])])
    # A search tool with two required strings is no fit unless config fills one.
    two = [tool("search_files", {"path": "string", "pattern": "string"}, ["path", "pattern"])]
    with pytest.raises(ToolSelectionError):
        select_tool(CFG, two)
    filled = ServerConfig(name="s", command="x", arguments={"path": "/tmp"})
    sel = select_tool(filled, two)
    assert sel.arguments("*.py", 5) == {"path": "/tmp", "pattern": "*.py"}


def test_configured_tool_is_checked() -> None:
    tools = [tool("git_log", {"repo_path": "string", "max_count": "integer"}, ["repo_path"])]
    with pytest.raises(ToolSelectionError, match="git_status"):
        select_tool(ServerConfig(name="g", command="x", tool="git_status"), tools)
    # A lone required argument named as a path is asked for, not sent the question
    # (mcp-server-git answered "Repository path 'test' is outside the allowed repository").
    with pytest.raises(ToolSelectionError, match=r"requires \['repo_path'\]; give them under `arguments`"):
        select_tool(ServerConfig(name="g", command="x", tool="git_log"), tools)
    named = ServerConfig(name="g", command="x", tool="git_log", query_argument="repo_path")
    assert select_tool(named, tools).query_argument == "repo_path"  # unless the config says so
    # One named otherwise still takes it.
    lookup = [tool("lookup", {"name": "string"}, ["name"])]
    assert select_tool(ServerConfig(name="g", command="x", tool="lookup"), lookup).query_argument == "name"
    two = [tool("git_diff", {"repo_path": "string", "target": "string"}, ["repo_path", "target"])]
    with pytest.raises(ToolSelectionError, match="repo_path"):
        select_tool(ServerConfig(name="g", command="x", tool="git_diff"), two)
    cfg = ServerConfig(name="g", command="x", tool="git_log", top_k_argument="max_count",
                       arguments={"repo_path": "/r"})
    sel = select_tool(cfg, tools)
    assert sel.query_argument is None  # this tool takes no query
    assert sel.describe() == "git_log(no question: the same call for every search, ranked after the answers, max_count=top_k) [configured]"
    assert sel.arguments("ignored", 3) == {"repo_path": "/r", "max_count": 3}


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_breaker_opens_after_threshold_and_one_trial_decides() -> None:
    clock = FakeClock()
    breaker = CircuitBreaker(HealthConfig(failure_threshold=3, open_s=30), clock)
    for _ in range(2):
        assert breaker.allow()
        breaker.record_failure()
    assert breaker.state is BreakerState.CLOSED
    breaker.record_failure()
    assert breaker.state is BreakerState.OPEN and not breaker.allow()
    clock.now += 29.9
    assert not breaker.allow()
    clock.now += 0.2
    assert breaker.allow()              # the trial
    assert not breaker.allow()          # only one trial at a time
    breaker.record_failure()            # trial failed: open again, twice as long
    assert breaker.state is BreakerState.OPEN and breaker.retry_in() == pytest.approx(60)
    clock.now += 60
    assert breaker.allow()
    breaker.release_trial()             # abandoned trial: next call may try
    assert breaker.allow()
    breaker.record_success()
    assert breaker.state is BreakerState.CLOSED and breaker.snapshot().opened == 2


def test_a_server_that_stays_broken_is_tried_less_and_less_often() -> None:
    """Each failed trial doubles the open period, up to 16 times ``open_s``; a success
    starts again from ``open_s``."""
    clock = FakeClock()
    breaker = CircuitBreaker(HealthConfig(failure_threshold=1, open_s=30), clock)
    breaker.record_failure()
    periods = []
    for _ in range(7):
        periods.append(round(breaker.retry_in()))
        clock.now += breaker.retry_in()
        assert breaker.allow()
        breaker.record_failure()
    assert periods == [30, 60, 120, 240, 480, 480, 480]
    clock.now += breaker.retry_in()
    assert breaker.allow()
    breaker.record_success()
    breaker.record_failure()
    assert breaker.retry_in() == pytest.approx(30)


def test_an_answered_ping_clears_failed_pings_but_not_failed_calls() -> None:
    """A server whose tool hangs still answers pings: with searches further apart than
    the health check, the pings between them must not keep its breaker from opening."""
    breaker = CircuitBreaker(HealthConfig(failure_threshold=3), FakeClock())
    for _ in range(3):
        breaker.record_failure()  # the search timed out
        breaker.record_alive()  # the health check in between was answered
    assert breaker.state is BreakerState.OPEN
    breaker.record_alive()
    assert breaker.state is BreakerState.OPEN  # only a call closes it
    flaky = CircuitBreaker(HealthConfig(failure_threshold=3), FakeClock())
    for _ in range(3):
        flaky.record_failure(call=False)  # a missed ping
        flaky.record_alive()  # then the server answered again
    assert flaky.state is BreakerState.CLOSED


def test_success_resets_the_failure_run() -> None:
    breaker = CircuitBreaker(HealthConfig(failure_threshold=2), FakeClock())
    breaker.record_failure()
    breaker.record_success()
    breaker.record_failure()
    assert breaker.state is BreakerState.CLOSED


def test_child_environment_is_allowlist_plus_configured() -> None:
    parent = {"PATH": "/bin", "HOME": "/h", "AWS_SECRET_ACCESS_KEY": "x", "LANG": "C.UTF-8",
              "BASH_FUNC_x%%": "() { :; }", "TERM": "() { evil; }"}
    env = child_environment({"API_TOKEN": "t", "PATH": "/custom"}, parent)
    assert env == {"PATH": "/custom", "HOME": "/h", "LANG": "C.UTF-8", "API_TOKEN": "t"}


def test_proxy_and_certificate_variables_reach_servers() -> None:
    network = {"HTTPS_PROXY": "http://proxy:3128", "no_proxy": "localhost", "http_proxy": "http://p:1",
               "SSL_CERT_FILE": "/etc/ca.pem", "SSL_CERT_DIR": "/etc/certs",
               "REQUESTS_CA_BUNDLE": "/etc/ca.pem", "NODE_EXTRA_CA_CERTS": "/etc/extra.pem",
               "NO_PROXY": "127.0.0.1", "HTTP_PROXY": "http://proxy:3128", "https_proxy": "x"}
    env = child_environment({}, {**network, "GITHUB_TOKEN": "secret"})
    assert env == network


def test_stderr_ring_keeps_the_last_lines() -> None:
    log = StderrLog(max_lines=3)
    pipe = open_stderr_pipe(log)
    for i in range(10):
        pipe.write(f"line {i}\n")
    pipe.write("no newline at end")
    pipe.close()
    # Until the reader has reached the end of the pipe (the unfinished last line comes
    # then); no deadline: on a loaded machine the reader's thread may run late.
    while "no newline at end" not in log.lines():
        time.sleep(0.01)
    assert log.lines() == ["line 8", "line 9", "no newline at end"]
    log.append("y" * 10_000)
    assert len(log.lines()[-1]) < 2_100 and log.lines()[-1].endswith("chars cut]")
    log.event("restarted")
    assert log.last_output() is not None and log.last_output().startswith("yyy")  # type: ignore[union-attr]


def test_silence_counts_misses_until_the_server_is_heard() -> None:
    clock = FakeClock()
    silence = Silence(clock)
    clock.now += 4
    assert [silence.missed(), silence.missed()] == [1, 2] and silence.seconds() == 4
    silence.heard()
    assert silence.unanswered == 0 and silence.seconds() == 0
    assert silence.missed() == 1


def test_breaker_lets_a_replaced_server_take_the_trial_at_once() -> None:
    clock = FakeClock()
    breaker = CircuitBreaker(HealthConfig(failure_threshold=1, open_s=30), clock)
    breaker.trial_now()  # closed: nothing to do
    assert breaker.state is BreakerState.CLOSED
    breaker.record_failure()
    assert not breaker.allow()
    breaker.trial_now()
    assert breaker.allow() and not breaker.allow()  # one trial, as after the open period
    breaker.record_success()
    assert breaker.state is BreakerState.CLOSED


def annotated(name: str, description: str = "", **hints: bool) -> types.Tool:
    return types.Tool(name=name, description=description,
                      input_schema={"type": "object", "properties": {"query": {"type": "string"}},
                                    "required": ["query"]},
                      annotations=types.ToolAnnotations(**hints) if hints else None)


@pytest.mark.parametrize("order", [0, 1])
def test_read_verbs_win_over_write_verbs_whatever_the_order(order: int) -> None:
    ro = {"read_only_hint": True}
    tools = [annotated("write_query", **ro), annotated("read_query", **ro)]
    assert select_tool(CFG, tools[::-1] if order else tools).tool == "read_query"
    many = [annotated("update_query", **ro), annotated("delete_query", **ro),
            annotated("create_query", **ro), annotated("get_query", **ro),
            annotated("insert_query", **ro)]
    assert select_tool(CFG, many[::-1] if order else many).tool == "get_query"


def test_only_tools_marked_read_only_are_chosen() -> None:
    with pytest.raises(ToolSelectionError, match=r"^no read-only search tool; set `tool:` to choose one"):
        select_tool(CFG, [annotated("search"), annotated("find_things")])
    chosen = select_tool(CFG, [annotated("search"), annotated("lookup", read_only_hint=True)])
    assert chosen.tool == "lookup"


def test_destructive_or_not_read_only_tools_are_never_chosen() -> None:
    destructive = annotated("delete_by_query", destructive_hint=True, read_only_hint=True)
    chosen = select_tool(CFG, [destructive, annotated("find_things", read_only_hint=True)])
    assert chosen.tool == "find_things"
    with pytest.raises(ToolSelectionError, match=r"delete_by_query: marked destructive"):
        select_tool(CFG, [destructive])
    with pytest.raises(ToolSelectionError, match="search: not marked readOnlyHint"):
        select_tool(CFG, [annotated("search", read_only_hint=False)])
    with pytest.raises(ToolSelectionError, match="search: marked destructive"):
        select_tool(CFG, [annotated("search", read_only_hint=True, destructive_hint=True)])


@pytest.mark.parametrize("name", ["deletes_by_query", "erase_by_query", "wipe_query",
                                  "overwrite_query", "DeletedQuery", "dropping_query",
                                  "erasing_search", "Wipes_Query", "start_search",
                                  "launchSearch"])
def test_write_verbs_veto_in_any_inflection_and_case(name: str) -> None:
    with pytest.raises(ToolSelectionError, match=rf"{name}: named with the write verb"):
        select_tool(CFG, [annotated(name, read_only_hint=True)])


@pytest.mark.parametrize("description", ["Execute a select query on the database",
                                         "Deletes every record matching the query",
                                         "Run a SQL statement"])
def test_descriptions_veto_in_any_case(description: str) -> None:
    with pytest.raises(ToolSelectionError, match="no read-only search tool"):
        select_tool(CFG, [annotated("query_data", description, read_only_hint=True)])


def test_read_only_tools_are_chosen_by_name_not_order() -> None:
    ro = {"read_only_hint": True}
    tools = [annotated("query_b", **ro), annotated("query_a", **ro)]
    assert select_tool(CFG, tools).tool == "query_a"
    assert select_tool(CFG, tools[::-1]).tool == "query_a"
    assert select_tool(CFG, [annotated("search_settings", **ro)]).tool == "search_settings"
    assert select_tool(CFG, [annotated("search_movies", **ro)]).tool == "search_movies"


def test_nothing_clearly_safe_asks_for_a_tool() -> None:
    with pytest.raises(ToolSelectionError, match="no read-only search tool") as caught:
        select_tool(CFG, [annotated("write_query", read_only_hint=True), annotated("run_query"),
                          annotated("read_query", "Execute a SELECT query on the SQLite database",
                                    read_only_hint=True)])
    message = str(caught.value)
    assert "write_query: named with the write verb 'write'" in message
    assert "run_query: not marked readOnlyHint" in message
    assert "read_query: its description" in message and "set `tool:`" in message
    # named in the config, a tool that says it writes is still never sent a search
    with pytest.raises(ToolSelectionError, match="'write_query' is never asked for searches"):
        select_tool(ServerConfig(name="s", command="x", tool="write_query"), [annotated("write_query")])
    # one not marked read-only that says nothing of writing is the config's to choose
    sel = select_tool(ServerConfig(name="s", command="x", tool="lookup_rows"), [annotated("lookup_rows")])
    assert sel.tool == "lookup_rows" and not sel.auto
