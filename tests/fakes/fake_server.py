"""A real MCP server (SDK ``MCPServer`` over stdio) that misbehaves on request.

Run it as a subprocess; every option can also come from the environment as
``FAKE_MCP_<OPTION>`` (e.g. ``FAKE_MCP_MODE=hang``), command line winning::

    python tests/fakes/fake_server.py [--name NAME] [--mode MODE] [options]

Modes (``--mode``, default ``answer``):

  answer          answer each query with ``--hits`` hits (default 5)
  delay           like answer, after sleeping ``--delay`` seconds (``--delay`` also
                  works with every other mode)
  crash-start     write to stderr and exit(3) before serving
  crash-call      exit(4) inside the tool call, after ``--crash-after`` good calls (0)
  hang            never answer a call (asynchronously: ping and cancellation work)
  freeze          block the whole process inside a call (nothing answers, not even ping)
  garbage         print non-protocol lines to stdout at start and before every answer
  invalid-jsonrpc before answering, send JSON that is not JSON-RPC and a response
                  with the call's id but a malformed result (the call fails; the
                  session survives)
  huge            answer with one text block of ``--size-mb`` MB (default 50)
  non-utf8        answer with bytes that are not UTF-8 inside the result
  error           answer with ``isError: true``
  fail-then-ok    fail (tool raises → isError) the first ``--fail-times`` calls (3), then
                  answer; ``--state-file PATH`` keeps the count across restarts

Faults that change during a run (the soak, bench/_soak.py): ``--fault-file PATH``
names a JSON object ``{NAME: {"mode": MODE, "delay": S, "size_mb": MB,
"freeze_s": S, "content": TEXT}}`` that is read at start and at every call. The entry for this
server's ``--name`` overrides the options it names for that call; no file or
no entry means the command-line options. An entry whose mode is
``crash-start`` makes the server fail at start *and* exit inside the call (so a
running server goes down and then cannot come back until the entry changes).

Other options:

  --tool NAME          the tool's name (default ``search``; args ``query``, ``top_k``),
                       annotated ``readOnlyHint: true`` unless ``--unannotated``
  --unannotated        the search tool declares no annotations (read-only or not)
  --extra-tool JSON    one more tool taking ``query``: ``{"name": N, "description": D,
                       "readOnly": true|false}`` (repeatable); a call appends ``N QUERY`` to
                       ``--calls-file`` and answers one hit, so tests see it was called
  --calls-file PATH    where extra tools record their calls
  --plain              answer with ``--content`` as one plain text block (no JSON), as a
                       ripgrep-style server answers with its ``path:line:text`` lines
  --no-query           the tool takes a required ``timezone`` instead of a query and
                       answers a fixed time, like mcp-server-time's get_current_time
  --hits N             hits per answer (default 5, capped by top_k)
  --structured         also return ``structured_content`` ({"results": [...]}); the
                       default is one JSON text block per hit, like many servers
  --stderr-lines N     write N lines to stderr at start (default 1)
  --http PORT          serve streamable HTTP at http://127.0.0.1:PORT/mcp instead of
                       stdio (stdout faults do not apply there)
  --sse PORT           serve the legacy HTTP+SSE transport at http://127.0.0.1:PORT/sse
  --content TEXT       every hit's content, verbatim (default: a small function naming
                       the query); a fault-file entry may set it too
  --freeze-s S         how long ``freeze`` blocks the process (default 3600)
  --fault-file PATH    per-call faults from a JSON file (see above)
  --spawn-child        start a grandchild (``sleep``) that shares the process group,
                       to check that shutdown leaves no orphans
  --setsid-child       start a grandchild that leaves the process group (``setsid``)
  --stubborn           ignore SIGTERM, and keep running after stdin closes
  --hang-init          never answer ``initialize`` (nor anything else)
  --name NAME          server name, used in hit paths and titles (default ``fake``)
  --trace PATH         append a timeline line per request step to PATH (``NAME EVENT ID
                       NS``, NS from ``time.monotonic_ns``, comparable with the client's):
                       ``recv`` line read, ``start`` tool entered, ``slept`` delay over,
                       ``sent`` answer flushed to stdout (stdio only; used by
                       ``bench/fanout.py --timeline``)

Hits look like ``{"title": "NAME hit I", "content": "...QUERY...", "path":
"src/NAME/mod_I.py", "start_line": 10*I+1, "end_line": 10*I+9, "score": 1/I}``,
so tests can tell sources and queries apart. Nothing but the protocol (and the
faults asked for) is written to stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from io import TextIOWrapper
from pathlib import Path
from typing import Any

import anyio
from mcp import types
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.stdio import stdio_server

MODES = ("answer", "delay", "crash-start", "crash-call", "hang", "freeze", "garbage",
         "invalid-jsonrpc", "huge", "non-utf8", "error", "fail-then-ok")
NON_UTF8_MARK = "@@NON-UTF8@@"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    env = os.environ.get
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--name", default=env("FAKE_MCP_NAME", "fake"))
    p.add_argument("--mode", choices=MODES, default=env("FAKE_MCP_MODE", "answer"))
    p.add_argument("--tool", default=env("FAKE_MCP_TOOL", "search"))
    p.add_argument("--hits", type=int, default=int(env("FAKE_MCP_HITS", "5")))
    p.add_argument("--delay", type=float, default=float(env("FAKE_MCP_DELAY", "0")))
    p.add_argument("--structured", action="store_true",
                   default=env("FAKE_MCP_STRUCTURED", "") not in ("", "0"))
    p.add_argument("--crash-after", type=int, default=int(env("FAKE_MCP_CRASH_AFTER", "0")))
    p.add_argument("--fail-times", type=int, default=int(env("FAKE_MCP_FAIL_TIMES", "3")))
    p.add_argument("--state-file", default=env("FAKE_MCP_STATE_FILE"))
    p.add_argument("--size-mb", type=float, default=float(env("FAKE_MCP_SIZE_MB", "50")))
    p.add_argument("--stderr-lines", type=int, default=int(env("FAKE_MCP_STDERR_LINES", "1")))
    p.add_argument("--http", type=int, default=int(env("FAKE_MCP_HTTP", "0")), metavar="PORT",
                   help="serve streamable HTTP on 127.0.0.1:PORT/mcp instead of stdio")
    p.add_argument("--sse", type=int, default=0, metavar="PORT",
                   help="serve the legacy HTTP+SSE transport on 127.0.0.1:PORT/sse instead of stdio")
    p.add_argument("--content", default=env("FAKE_MCP_CONTENT"))
    p.add_argument("--freeze-s", type=float, default=float(env("FAKE_MCP_FREEZE_S", "3600")))
    p.add_argument("--fault-file", default=env("FAKE_MCP_FAULT_FILE"))
    p.add_argument("--trace", default=env("FAKE_MCP_TRACE"))
    p.add_argument("--spawn-child", action="store_true",
                   default=env("FAKE_MCP_SPAWN_CHILD", "") not in ("", "0"))
    p.add_argument("--setsid-child", action="store_true")
    p.add_argument("--stubborn", action="store_true")
    p.add_argument("--hang-init", action="store_true")
    p.add_argument("--unannotated", action="store_true")
    p.add_argument("--extra-tool", action="append", default=[], metavar="JSON")
    p.add_argument("--calls-file", default=env("FAKE_MCP_CALLS_FILE"))
    p.add_argument("--no-query", action="store_true")
    p.add_argument("--plain", action="store_true")
    p.add_argument("--start-delay", type=float, default=0.0,
                   help="seconds to sleep before serving: a slow start on a busy machine")
    return p.parse_args(argv)


_ID = re.compile(r'"id"\s*:\s*("?[^",}]*"?)')


class Trace:
    """The ``--trace`` timeline: one unbuffered ``NAME EVENT ID NS`` line per step."""

    def __init__(self, name: str, path: str | None) -> None:
        self._name = name
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644) if path else None

    def __bool__(self) -> bool:
        return self._fd is not None

    def mark(self, event: str, request_id: object) -> None:
        if self._fd is not None:  # one small O_APPEND write: lines of many servers don't tear
            os.write(self._fd, f"{self._name} {event} {request_id} {time.monotonic_ns()}\n".encode())

    def mark_line(self, event: str, line: str) -> None:
        if self._fd is not None and (match := _ID.search(line[:200])):
            self.mark(event, match.group(1).strip('"'))


class Wire:
    """The protocol's stdout, with a back door for injecting faults."""

    def __init__(self, trace: Trace | None = None) -> None:
        self._out = sys.stdout.buffer
        self._trace = trace if trace is not None else Trace("", None)
        self._pending: list[str] = []

    def raw(self, data: bytes) -> None:
        self._out.write(data)
        self._out.flush()

    async def write(self, text: str) -> None:
        data = text.encode("utf-8")
        if NON_UTF8_MARK.encode() in data:
            data = data.replace(NON_UTF8_MARK.encode(), b"\xff\xfe\xc3(")
        self._out.write(data)
        if self._trace:
            self._pending.append(text)

    async def flush(self) -> None:
        self._out.flush()
        if self._trace:
            for text in self._pending:
                self._trace.mark_line("sent", text)
            self._pending.clear()


def make_hits(name: str, query: str, count: int, content: str | None = None) -> list[dict[str, Any]]:
    return [
        {
            "title": f"{name} hit {i}",
            "content": content if content is not None
            else f"def handler_{i}():\n    # {name} answers {query!r} (#{i})\n    return {i}\n",
            "path": f"src/{name}/mod_{i}.py",
            "start_line": 10 * i + 1,
            "end_line": 10 * i + 9,
            "score": round(1.0 / i, 4),
        }
        for i in range(1, count + 1)
    ]


def scripted(opts: argparse.Namespace) -> argparse.Namespace:
    """The options for this call: ``opts`` with this server's ``--fault-file`` entry applied."""
    if not opts.fault_file:
        return opts
    try:
        entry = json.loads(Path(opts.fault_file).read_text()).get(opts.name) or {}
    except (OSError, ValueError):  # no file yet: behave as configured
        return opts
    return argparse.Namespace(**{**vars(opts), **{k.replace("-", "_"): v for k, v in entry.items()}})


class PipeLines:
    """stdin's lines, read on the event loop.

    The SDK's default reads each line in a worker thread; that hop costs about
    half a millisecond of CPU per request, which the fan-out benchmark would
    otherwise count as Tributary's overhead ten times over.
    """

    def __init__(self, trace: Trace) -> None:
        self._trace = trace

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=2**27)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
        while line := await reader.readline():
            text = line.decode("utf-8", "replace")
            self._trace.mark_line("recv", text)
            yield text


def build_server(opts: argparse.Namespace, wire: Wire, trace: Trace | None = None) -> MCPServer:
    server = MCPServer(f"fake-{opts.name}")
    trace = trace if trace is not None else Trace(opts.name, None)
    calls = {"n": 0}
    state_file = Path(opts.state_file) if opts.state_file else None

    def failures_so_far() -> int:
        if state_file is None:
            return calls["n"] - 1
        done = int(state_file.read_text()) if state_file.exists() else 0
        state_file.write_text(str(done + 1))
        return done

    async def search(query: str, ctx: Context, top_k: int = 5) -> types.CallToolResult:
        calls["n"] += 1
        trace.mark("start", ctx.request_id)
        call = scripted(opts)
        if call.delay:
            await anyio.sleep(call.delay)
        trace.mark("slept", ctx.request_id)
        mode = call.mode
        if mode == "crash-start":  # only a fault file asks this of a running server
            print(f"fake {opts.name}: crashing mid-call", file=sys.stderr, flush=True)
            os._exit(4)
        if mode == "crash-call" and calls["n"] > opts.crash_after:
            print(f"fake {opts.name}: crashing mid-call", file=sys.stderr, flush=True)
            os._exit(4)
        if mode == "hang":
            await anyio.sleep_forever()
        if mode == "freeze":
            time.sleep(call.freeze_s)
        if mode == "garbage":
            wire.raw(b"this is not json\n{\"half\": \n")
        if mode == "invalid-jsonrpc":
            wire.raw(b'{"hello": "not json-rpc"}\n')
            bad = {"jsonrpc": "2.0", "id": ctx.request_id, "result": {"content": "not-a-list"}}
            wire.raw((json.dumps(bad) + "\n").encode())
            await anyio.sleep(0.05)
        if mode == "error":
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=f"{opts.name}: backend unavailable")],
                is_error=True,
            )
        if mode == "fail-then-ok" and failures_so_far() < opts.fail_times:
            raise RuntimeError(f"{opts.name}: transient failure #{calls['n']}")
        if mode == "huge":
            block = "x" * 1023 + "\n"
            text = block * int(call.size_mb * 1024)
            return types.CallToolResult(content=[types.TextContent(type="text", text=text)])
        if opts.plain:
            return types.CallToolResult(content=[types.TextContent(type="text", text=call.content or "")])
        hits = make_hits(opts.name, query, min(opts.hits, max(0, top_k)), call.content)
        if mode == "non-utf8":
            hits[0]["content"] = f"broken {NON_UTF8_MARK} bytes"
        content = [types.TextContent(type="text", text=json.dumps(h)) for h in hits]
        structured = {"results": hits} if opts.structured else None
        return types.CallToolResult(content=content, structured_content=structured)

    def current_time(timezone: str) -> str:
        return json.dumps({"timezone": timezone, "datetime": "2026-01-01T12:00:00+00:00"})

    read_only = None if opts.unannotated else types.ToolAnnotations(read_only_hint=True)
    if opts.no_query:
        server.tool(name=opts.tool, description="Get the current time in a timezone.",
                    annotations=read_only)(current_time)
    else:
        server.tool(name=opts.tool, description="Search the fake corpus.", annotations=read_only)(search)
    for spec in opts.extra_tool:
        add_extra_tool(server, json.loads(spec), opts)
    return server


def add_extra_tool(server: MCPServer, spec: dict[str, Any], opts: argparse.Namespace) -> None:
    """A tool that records each call (``--extra-tool``): dangerous-looking tools are
    offered next to the search tool, and the test checks none of them is ever called."""
    name = str(spec["name"])
    # "readOnly": true or false is sent as the mark; left out, the tool says nothing.
    notes = types.ToolAnnotations(read_only_hint=bool(spec["readOnly"])) if "readOnly" in spec else None

    def run(query: str) -> str:
        if opts.calls_file:
            with open(opts.calls_file, "a", encoding="utf-8") as calls:
                calls.write(f"{name} {query}\n")
        return json.dumps({"title": f"{name} ran", "content": query, "path": f"{name}.txt"})

    server.tool(name=name, description=spec.get("description") or f"{name} by query.",
                annotations=notes)(run)


async def serve(opts: argparse.Namespace) -> None:
    trace = Trace(opts.name, opts.trace)
    wire = Wire(trace)
    server = build_server(opts, wire, trace)
    stdin = PipeLines(trace) if sys.platform != "win32" else anyio.wrap_file(
        TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace"))
    async with stdio_server(stdin=stdin, stdout=wire) as (read, write):  # type: ignore[arg-type]
        low = server._lowlevel_server
        await low.run(read, write, low.create_initialization_options())


def main(argv: list[str] | None = None) -> None:
    opts = parse_args(argv)
    for i in range(opts.stderr_lines):
        print(f"fake {opts.name}: stderr line {i + 1} (mode {opts.mode})", file=sys.stderr)
    sys.stderr.flush()
    if opts.spawn_child:
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    if opts.setsid_child:
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                         start_new_session=True, stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if opts.stubborn:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if opts.hang_init:
        time.sleep(3600)
    if opts.start_delay:
        time.sleep(opts.start_delay)
    if scripted(opts).mode == "crash-start":
        print(f"fake {opts.name}: fatal: cannot start", file=sys.stderr, flush=True)
        sys.exit(3)
    if opts.mode == "garbage":
        sys.stdout.buffer.write(b"Welcome to fake server! (a banner on stdout)\n")
        sys.stdout.buffer.flush()
    if opts.http:
        build_server(opts, Wire()).run("streamable-http", host="127.0.0.1", port=opts.http)
        return
    if opts.sse:
        build_server(opts, Wire()).run("sse", host="127.0.0.1", port=opts.sse)
        return
    asyncio.run(serve(opts))
    if opts.stubborn:  # stdin closed: a well-behaved server would exit now
        time.sleep(600)


if __name__ == "__main__":
    main()
