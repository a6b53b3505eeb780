"""Hot reload: the engine watches its config file; valid changes are applied (added
servers start, removed ones stop, changed ones restart, unchanged ones keep their
process and session); invalid ones are reported with where the error is and change
nothing. Twenty reloads leave no process behind."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import psutil
import pytest

from tests.fakes import FAKE_SERVER
from tributary.engine.config.schema import Config
from tributary.engine.config.watch import ReloadReport
from tributary.engine.engine import Engine
from tributary.engine.sources import ServerStatus

pytestmark = [pytest.mark.asyncio, pytest.mark.integration]


def server(name: str, *args: str) -> str:
    quoted = ", ".join(json.dumps(a) for a in [str(FAKE_SERVER), "--name", name, *args])
    return f"  {name}:\n    command: {json.dumps(sys.executable)}\n    args: [{quoted}]\n    timeout: 10\n"


def write(path: Path, text: str) -> None:
    """As an editor saves: a new file put in place of the old one."""
    temp = path.with_name(path.name + ".tmp-save")
    temp.write_text(text, encoding="utf-8")
    os.replace(temp, path)


def children(*, recursive: bool = True) -> set[int]:
    """Live processes under this one; ``recursive=False``: one per running source (its
    reaper on Linux, which holds the server's tree, or the server itself)."""
    alive = set()
    for proc in psutil.Process().children(recursive=recursive):
        try:
            if proc.status() != psutil.STATUS_ZOMBIE:
                alive.add(proc.pid)
        except psutil.Error:
            pass
    return alive


async def until(condition, timeout: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not condition():
        assert loop.time() < end, "condition not met in time"
        await asyncio.sleep(0.05)


def ready(engine: Engine, *names: str) -> bool:
    states = {s.name: s for s in engine.server_states()}
    return all(n in states and states[n].status is ServerStatus.READY for n in names)


async def test_twenty_reloads_leak_nothing_and_keep_unchanged_servers(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    write(path, "servers:\n" + server("stable") + server("changing", "--hits", "1"))
    reports: list[ReloadReport] = []
    # Processes the session had already (a test database server, say) are not ours.
    before_direct, before_all = children(recursive=False), children()
    engine = await Engine.open(path, persistent=False)
    try:
        await asyncio.wait_for(engine.watch_config(reports.append).wait(), 30)
        await until(lambda: ready(engine, "stable", "changing"))
        stable_pid = engine.pool.state("stable").pid
        baseline = children() - before_all
        assert len(children(recursive=False) - before_direct) == 2

        for i in range(1, 21):
            extra = server("added", "--hits", "2") if i % 2 else ""
            write(path, "servers:\n" + server("stable") + server("changing", "--hits", str(i)) + extra)
            await until(lambda n=i: len(reports) >= n)
            assert reports[-1].ok, reports[-1].message
            names = ["stable", "changing"] + (["added"] if i % 2 else [])
            await until(lambda names=names: ready(engine, *names))
            assert engine.pool.config("changing").args[-1] == str(i)
            assert ("added" in engine.pool.names()) == bool(i % 2)

        state = engine.pool.state("stable")
        assert state.pid == stable_pid and state.restarts == 0  # never restarted
        await until(lambda: len(children() - before_all) == len(baseline), timeout=30)
        after = children(recursive=False) - before_direct
        assert stable_pid in after and len(after) == 2
        outcome = await engine.pool.call("changing", "q", top_k=50)
        assert len(outcome.hits) == 20

        # An invalid edit: reported with file, line and key; the running config stays.
        write(path, "servers:\n" + server("stable") + "  changing:\n    timeout: -1\n")
        await until(lambda: len(reports) == 21)
        report = reports[-1]
        assert not report.ok
        assert f"{path}:" in report.message and "servers.changing" in report.message
        assert "running config stays" in report.message
        assert engine.pool.config("changing").args[-1] == "20"
        assert engine.pool.state("stable").pid == stable_pid
    finally:
        await engine.aclose()
    await until(lambda: not (children() - before_all), timeout=30)


async def test_a_file_being_written_is_read_once_it_settles(tmp_path: Path) -> None:
    from tributary.engine.config import watch

    path = tmp_path / "config.yaml"
    path.write_text("servers:\n", encoding="utf-8")  # half written: a valid config with no servers

    async def finish() -> None:
        await asyncio.sleep(watch.SETTLE_S / 2)
        path.write_text("servers:\n" + server("stable"), encoding="utf-8")

    writer = asyncio.create_task(finish())
    digest = await watch._settled_digest(path)
    await writer
    assert digest == watch.file_digest(path)  # the whole file, not the half read first


async def _watching(path: Path, applied: list[Config], reports: list[ReloadReport]) -> tuple[asyncio.Task[None], asyncio.Event]:
    from tributary.engine.config.watch import watch_config

    async def apply(config: Config) -> None:
        applied.append(config)

    stop, ready = asyncio.Event(), asyncio.Event()
    task = asyncio.create_task(watch_config(path, apply, reports.append, stop=stop, ready=ready))
    await asyncio.wait_for(ready.wait(), 30)
    return task, stop


async def test_a_file_written_in_place_with_a_pause_is_applied_whole(tmp_path: Path) -> None:
    from tributary.engine.config import watch

    path = tmp_path / "config.yaml"
    write(path, "servers:\n" + server("a") + server("b"))
    applied: list[Config] = []
    reports: list[ReloadReport] = []
    task, stop = await _watching(path, applied, reports)
    try:
        whole = "servers:\n" + server("a") + server("b") + server("c")
        cut = whole.index("  b:")  # the first part alone is a valid config: server a only
        with path.open("w", encoding="utf-8") as handle:
            handle.write(whole[:cut])
            handle.flush()
            # The writer pauses long enough for two reads SETTLE_S apart to agree.
            await asyncio.sleep(max(0.5, watch.SETTLE_S * 3))
            handle.write(whole[cut:])
        await until(lambda: len(reports) >= 1)
        assert reports[0].ok, reports[0].message
        assert [sorted(c.servers) for c in applied] == [["a", "b", "c"]]  # never the half
    finally:
        stop.set()
        await asyncio.wait_for(task, 10)


async def test_a_config_pointed_at_another_file_is_refused_without_echoing_it(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    write(path, "servers:\n" + server("a"))
    secret = tmp_path / "shadow"
    secret.write_text("root:$6$pepper$c2VjcmV0aGFzaA:19000:0:99999:7:::\n"
                      "daemon:*:19000:0:99999:7:::\n" * 40, encoding="utf-8")
    applied: list[Config] = []
    reports: list[ReloadReport] = []
    task, stop = await _watching(path, applied, reports)
    try:
        temp = tmp_path / "link"
        temp.symlink_to(secret)
        os.replace(temp, path)  # config.yaml is now a symlink to the secret file
        await until(lambda: len(reports) >= 1)
        report = reports[0]
        assert not report.ok and applied == []
        assert f"{path}:1:" in report.message and "unknown key" in report.message
        for needle in ("root:", "pepper", "c2VjcmV0aGFzaA", "daemon", "19000"):
            assert needle not in report.message
        assert report.message.count("\n") <= 12  # a few lines, not one per line of the file
    finally:
        stop.set()
        await asyncio.wait_for(task, 10)


@pytest.mark.asyncio
async def test_a_built_in_servers_tuning_is_not_counted_as_a_server(tmp_path: Path) -> None:
    from tributary.engine.config.watch import reload_once

    path = tmp_path / "config.yaml"
    path.write_text("servers:\n  git:\n    command: uvx\n  tasks:\n    builtin: tasks\n    weight: 0.5\n",
                    encoding="utf-8")
    applied: list[Config] = []

    async def apply(config: Config) -> None:
        applied.append(config)

    report = await reload_once(path, apply)
    assert report is not None and report.ok and report.message.endswith("reloaded: 1 server")
    assert applied[0].servers["tasks"].weight == 0.5
    path.write_text("servers:\n  git:\n    command: uvx\n  rg:\n    command: npx\n    enabled: false\n",
                    encoding="utf-8")
    report = await reload_once(path, apply)  # one just turned off is not counted as on
    assert report is not None and report.ok and report.message.endswith("reloaded: 1 server on, 1 off")


@pytest.mark.asyncio
async def test_a_reload_counts_the_built_in_servers_as_the_list_shows_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a repository indexed the server list shows files and tasks too; "1 server
    on, 1 off" under a list of four, three on, read as a miscount."""
    from tributary.engine.config.watch import reload_once
    from tributary.engine.repos import builtins

    monkeypatch.setattr(builtins, "available_builtins", lambda *_: ("files", "tasks"))
    path = tmp_path / "config.yaml"
    path.write_text("servers:\n  rg:\n    command: npx\n  dc:\n    command: npx\n    enabled: false\n",
                    encoding="utf-8")
    from tributary.engine.engine import Engine

    async with Engine(Config()) as engine:  # not warmed up: nothing is started
        report = await reload_once(path, engine.apply_config, in_effect=lambda: engine.effective_config)
    assert report is not None and report.ok and report.message.endswith("reloaded: 3 servers on, 1 off")
