"""``${VAR}`` in a server's settings: expanded when it starts, masked in everything shown.

Regression: the connector passed the
references through unexpanded, so a server configured with
``env: {API_TOKEN: ${API_TOKEN}}`` received the literal text ``${API_TOKEN}``;
and a server echoing its token to stderr or in an error put it in the log.
"""

from __future__ import annotations

import psutil
import pytest

from tests.sources.helpers import eventually, stdio_config
from tributary.engine.model import SourceStatus
from tributary.engine.sources import Backoff, ServerStatus, SourcePool

pytestmark = [pytest.mark.asyncio, pytest.mark.integration]

TOKEN = "tok-9f8e7d6c5b4a"


async def test_references_are_expanded_for_the_process_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FAKE_IDENTITY_TOKEN", TOKEN)
    monkeypatch.setenv("FAKE_HITS", "2")
    config = stdio_config("s", "--hits", "${FAKE_HITS}",
                          env={"API_TOKEN": "${FAKE_IDENTITY_TOKEN}", "MODE": "plain ${NOPE:-x}"})
    pool = SourcePool([config])
    try:
        state = (await pool.warm_up(timeout=60))["s"]
        assert state.status is ServerStatus.READY, state.last_error
        assert state.pid is not None
        env = psutil.Process(state.pid).environ()
        assert env["API_TOKEN"] == TOKEN and env["MODE"] == "plain x"
        outcome = await pool.call("s", "q", top_k=10)
        assert len(outcome.hits) == 2  # "--hits ${FAKE_HITS}" reached the command line
        assert pool.config("s").env["API_TOKEN"] == "${FAKE_IDENTITY_TOKEN}"  # kept as written
    finally:
        await pool.aclose()


async def test_a_server_echoing_its_token_never_puts_it_in_logs_or_errors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FAKE_IDENTITY_TOKEN", TOKEN)
    # The fake prints its --name on stderr, in its tool errors and when it crashes.
    erring = stdio_config("erring", "--name", "${FAKE_IDENTITY_TOKEN}", "--mode", "error",
                          timeout=30.0)
    crashing = stdio_config("crashing", "--name", "${FAKE_IDENTITY_TOKEN}", "--mode", "crash-call",
                            "--stderr-lines", "2", timeout=30.0)
    pool = SourcePool([erring, crashing], backoff=Backoff(initial_s=5.0))
    try:
        err = await pool.call("erring", "q", top_k=3)
        crash = await pool.call("crashing", "q", top_k=3)
        assert err.status is SourceStatus.ERROR and crash.status is SourceStatus.ERROR
        assert "****: backend unavailable" in (err.error or "")
        assert "fake ****: stderr line 1 (mode error)" in pool.stderr_lines("erring")
        assert await eventually(lambda: pool.state("crashing").last_error is not None)
        shown = [err.error, crash.error, pool.state("crashing").last_error,
                 *pool.stderr_lines("erring"), *pool.stderr_lines("crashing")]
        assert all(TOKEN not in (text or "") for text in shown), shown
        assert any("crashing mid-call" in (text or "") for text in shown)
    finally:
        await pool.aclose()


async def test_an_unset_variable_fails_the_start_and_names_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("TRIBUTARY_UNSET_VAR", raising=False)
    config = stdio_config("u", env={"KEY": "${TRIBUTARY_UNSET_VAR}"}, timeout=2.0)
    pool = SourcePool([config], backoff=Backoff(initial_s=5.0))
    try:
        outcome = await pool.call("u", "q", top_k=3)
        assert outcome.status is not SourceStatus.OK
        state = pool.state("u")
        assert state.status is ServerStatus.BACKOFF and state.pid is None
        assert state.last_error and "TRIBUTARY_UNSET_VAR" in state.last_error
    finally:
        await pool.aclose()


async def test_keyring_references_reach_the_process_and_are_masked_in_its_log() -> None:
    from tributary.engine.config import keystore

    keystore.set_secret("fake_identity", TOKEN)
    # FAKE_MCP_NAME is the fake's --name: it prints it on stderr and in its tool errors.
    config = stdio_config("kr", "--mode", "error", env={"FAKE_MCP_NAME": "${keyring:fake_identity}"},
                          timeout=30.0)
    config.args = [config.args[0], *config.args[3:]]  # no --name: the environment names it
    pool = SourcePool([config])
    try:
        state = (await pool.warm_up(timeout=60))["kr"]
        assert state.status is ServerStatus.READY, state.last_error
        assert state.pid is not None
        assert psutil.Process(state.pid).environ()["FAKE_MCP_NAME"] == TOKEN
        outcome = await pool.call("kr", "q", top_k=3)
        assert TOKEN not in (outcome.error or "") and "****" in (outcome.error or "")
        assert not any(TOKEN in line for line in pool.stderr_lines("kr"))
        assert any("fake ****: stderr line 1" in line for line in pool.stderr_lines("kr"))
        assert pool.config("kr").env["FAKE_MCP_NAME"] == "${keyring:fake_identity}"
    finally:
        await pool.aclose()


async def test_a_missing_keyring_secret_fails_the_start_saying_how_to_set_it() -> None:
    config = stdio_config("nokey", env={"T": "${keyring:absent_one}"}, timeout=5.0)
    pool = SourcePool([config], backoff=Backoff(initial_s=5.0))
    try:
        outcome = await pool.call("nokey", "q", top_k=1)
        assert outcome.status is SourceStatus.ERROR
        assert "tributary secrets set absent_one" in (pool.state("nokey").last_error or "")
    finally:
        await pool.aclose()


async def test_a_server_echoing_its_keyring_secret_in_results_never_reaches_the_context() -> None:
    from tributary.engine.config import keystore

    keystore.set_secret("echoed", TOKEN)
    config = stdio_config("echo", env={"FAKE_MCP_CONTENT": "key is ${keyring:echoed}"}, timeout=30.0)
    pool = SourcePool([config])
    try:
        outcome = await pool.call("echo", "q", top_k=2)
        assert outcome.status is SourceStatus.OK, outcome.error
        assert outcome.hits and all(h.content == "key is ****" for h in outcome.hits)
    finally:
        await pool.aclose()
