"""Hostile-input checks for bench/reliability.py: routing patterns that make a
backtracking engine run for seconds to minutes, and an HTTP bind outside the MCP SDK's
protected names probed with a foreign Host and Origin. Each check prints what it saw;
``problems`` lists what did not hold."""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from tributary.engine.config.patterns import check_pattern
from tributary.engine.config.schema import Config, RoutingConfig, RoutingRule, ServerConfig
from tributary.engine.routing import route

ROOT = Path(__file__).resolve().parent.parent

# (pattern, a query that would make Python's re backtrack on it)
BACKTRACKING = [
    ("(a|aa)+$", "a" * 37 + "!"),
    ("a?" * 26 + "a" * 26, "a" * 26),
    ("(?:a?){10}(?:a?){10}(?:a?){10}a{30}", "a" * 30),
    ("(?:a{1,10}){1,10}(?:a{1,10}){1,10}b", "a" * 38),
    ("(a+)+$", "a" * 37 + "!"),
    ("(.*)*x", "y" * 38),
]
UNSUPPORTED = [r"(a+)\1+b", "(?<=a)b", "(?=a)b"]
LONG_QUERY_CHARS = 100_000


@dataclass
class HostileReport:
    lines: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def check_patterns(report: HostileReport) -> None:
    servers = {"docs": ServerConfig(name="docs", command="unused")}
    worst = 0.0
    for pattern, query in BACKTRACKING:
        problem = check_pattern(pattern)
        if problem is not None:
            report.problems.append(f"pattern {pattern!r} refused: {problem}")
            continue
        config = Config(servers=servers, routing=RoutingConfig(
            rules=[RoutingRule(name="hostile", pattern=pattern, servers=["docs"])]))
        for text in (query, query[0] * LONG_QUERY_CHARS + "!"):
            started = time.perf_counter()
            route(config, text)
            elapsed = time.perf_counter() - started
            worst = max(worst, elapsed)
        report.lines.append(f"  routing {pattern[:40]!r}: {len(query)}-char query and "
                            f"{LONG_QUERY_CHARS + 1:,}-char query routed")
    report.lines.append(f"  slowest routing of a hostile pattern: {worst * 1000:.2f} ms")
    for pattern in UNSUPPORTED:
        problem = check_pattern(pattern)
        if problem is None:
            report.problems.append(f"pattern {pattern!r} accepted; RE2 cannot run it")
        else:
            report.lines.append(f"  refused {pattern!r}: {problem[:70]}…")


def _free_port(host: str) -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _status(host: str, port: int, headers: dict[str, str]) -> int:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}).encode()
    connection = http.client.HTTPConnection(host, port, timeout=30)
    try:
        connection.putrequest("POST", "/mcp", skip_host=True)
        for name, value in {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                            "Content-Length": str(len(body)), **headers}.items():
            connection.putheader(name, value)
        connection.endheaders(body)
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def check_bind(report: HostileReport, host: str = "127.0.0.2") -> None:
    token = "bench-token"
    with tempfile.TemporaryDirectory(prefix="tributary-bind-") as home:
        env = {**os.environ, "TRIBUTARY_HOME": home, "PYTHONPATH": str(ROOT)}
        env.pop("TRIBUTARY_TOKEN", None)
        config = Path(home) / "config.yaml"
        config.write_text("servers: {}\n", encoding="utf-8")
        base = [sys.executable, "-m", "tributary", "--config", str(config), "serve", "--http"]
        refused = subprocess.run([*base, str(_free_port(host)), "--host", host], env=env, cwd=ROOT,
                                 capture_output=True, text=True, timeout=120)
        if refused.returncode == 0:
            report.problems.append(f"serve --host {host} started without a token")
        else:
            report.lines.append(f"  serve --host {host} without a token: refused")
        port = _free_port(host)
        process = subprocess.Popen([*base, str(port), "--host", host, "--token", token], env=env, cwd=ROOT,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                try:
                    socket.create_connection((host, port), timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.1)
            own, auth = f"{host}:{port}", {"Authorization": f"Bearer {token}"}
            probes = [
                ("no token", {"Host": own}, 401),
                ("Host: evil.example", {"Host": "evil.example", **auth}, 421),
                ("Origin: http://evil.example", {"Host": own, "Origin": "http://evil.example", **auth}, 403),
                ("own Host, token", {"Host": own, **auth}, 200),
            ]
            for label, headers, wanted in probes:
                got = _status(host, port, headers)
                report.lines.append(f"  {host} {label}: HTTP {got}")
                if got != wanted:
                    report.problems.append(f"{host} {label}: HTTP {got}, expected {wanted}")
        finally:
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def run_hostile() -> HostileReport:
    report = HostileReport()
    report.lines.append("hostile routing patterns (RE2):")
    check_patterns(report)
    report.lines.append("HTTP bind outside the SDK's protected names:")
    check_bind(report)
    return report
