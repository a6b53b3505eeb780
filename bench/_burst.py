"""A burst of concurrent MCP sessions against ``tributary serve --http`` (real
subprocesses: the server and its fake stdio sources); what bench/reliability.py
prints about admission control.

Each session connects, initialises and calls ``search`` once, all at the same
moment. Every call must end in one of: an answer with hits, or a "busy" error;
anything else (another error, or no answer within ``--burst-timeout``) is lost.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

ROOT = Path(__file__).resolve().parent.parent
FAKE = ROOT / "tests" / "fakes" / "fake_server.py"
# What counts as an answer: hits; a response whose sources all failed (it says so); busy.
ANSWERS = ("answered", "no hits", "busy")


@dataclass
class BurstReport:
    sessions: int
    outcomes: Counter[str] = field(default_factory=Counter)
    answered_s: list[float] = field(default_factory=list)
    busy_s: list[float] = field(default_factory=list)
    examples: dict[str, str] = field(default_factory=dict)

    @property
    def lost(self) -> int:
        return sum(n for kind, n in self.outcomes.items() if kind not in ANSWERS)

    def summary(self) -> list[str]:
        def pct(values: list[float], q: float) -> str:
            if not values:
                return "-"
            ordered = sorted(values)
            return f"{ordered[min(len(ordered) - 1, int(q * len(ordered)))]:.2f}s"

        lines = [f"burst: {self.sessions} concurrent HTTP sessions, one search each",
                 f"  answered with hits {self.outcomes['answered']}, answered without hits "
                 f"(sources failed) {self.outcomes['no hits']}, busy {self.outcomes['busy']}, "
                 f"lost {self.lost}"]
        lines.append(f"  answered latency p50 {pct(self.answered_s, 0.5)}, "
                     f"p95 {pct(self.answered_s, 0.95)}, max {pct(self.answered_s, 1.0)}")
        lines.append(f"  busy answered in p50 {pct(self.busy_s, 0.5)}, max {pct(self.busy_s, 1.0)}")
        for kind, text in self.examples.items():
            lines.append(f"  {kind} ({self.outcomes[kind]}), e.g.: {text[:200]}")
        return lines


def _config(home: Path, sources: int, delay_s: float, timeout_s: float) -> Path:
    lines = ["servers:"]
    for i in range(sources):
        args = json.dumps([str(FAKE), "--name", f"s{i}", "--mode", "delay", "--delay", str(delay_s)])
        lines += [f"  s{i}:", f"    command: {json.dumps(sys.executable)}", f"    args: {args}",
                  f"    timeout: {timeout_s}"]
    home.mkdir(parents=True, exist_ok=True)
    path = home / "config.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _wait_port(port: int, limit_s: float = 120.0) -> None:
    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        try:
            _reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.close()
            return
        except OSError:
            await asyncio.sleep(0.1)
    raise RuntimeError(f"serve --http did not open port {port}")


async def _one(url: str, i: int, start: asyncio.Event, timeout_s: float,
               report: BurstReport) -> None:
    await start.wait()
    began = time.monotonic()
    kind, text = "answered", ""
    try:
        async with asyncio.timeout(timeout_s):
            async with (streamable_http_client(url) as (read, write),
                        ClientSession(read, write) as session):
                await session.initialize()
                result = await session.call_tool("search", {"query": f"retry logic {i}",
                                                            "top_k": 5})
        text = " ".join(getattr(b, "text", "") for b in result.content)
        data = result.structured_content or {}
        if result.is_error:
            kind = "busy" if "busy" in text else "error"
        elif not data.get("hits"):
            kind, text = "no hits", json.dumps(data.get("sources"))[:300]
    except TimeoutError:
        kind, text = "no answer", f"nothing within {timeout_s:g}s"
    except Exception as exc:  # the bench reports it; it must not stop the others
        kind, text = "raised", f"{type(exc).__name__}: {exc}"
    elapsed = time.monotonic() - began
    report.outcomes[kind] += 1
    if kind == "answered":
        report.answered_s.append(elapsed)
    elif kind == "busy":
        report.busy_s.append(elapsed)
    else:
        report.examples.setdefault(kind, text)


async def run_burst(sessions: int, *, home: Path, sources: int = 3, delay_s: float = 0.2,
                    source_timeout_s: float = 5.0, timeout_s: float = 60.0) -> BurstReport:
    config = _config(home, sources, delay_s, source_timeout_s)
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "tributary", "--config", str(config), "serve", "--http", str(port)],
        env={**os.environ, "TRIBUTARY_HOME": str(home), "PYTHONPATH": str(ROOT)}, cwd=ROOT,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    report = BurstReport(sessions)
    try:
        await _wait_port(port)
        url = f"http://127.0.0.1:{port}/mcp"
        warm = BurstReport(1)  # sources started, caches of the process warm
        await _one(url, -1, _set(asyncio.Event()), timeout_s, warm)
        start = asyncio.Event()
        tasks = [asyncio.create_task(_one(url, i, start, timeout_s, report))
                 for i in range(sessions)]
        start.set()
        await asyncio.gather(*tasks)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return report


def _set(event: asyncio.Event) -> asyncio.Event:
    event.set()
    return event
