"""A source flooding stderr (a real subprocess): read paced, only the tail decoded."""

from __future__ import annotations

import subprocess
import sys
import time

from tributary.engine.sources import stderr as stderr_module
from tributary.engine.sources.stderr import StderrLog, open_stderr_pipe

FLOOD = ("import sys\nw = sys.stderr.buffer.write\nblock = b''.join(b'flood line %d\\n' % i "
         "for i in range(2000))\nwhile True:\n    w(block)\n")


def test_a_stderr_flood_is_read_paced_and_only_its_tail_decoded() -> None:
    log = StderrLog(max_lines=50)
    pipe = open_stderr_pipe(log)
    proc = subprocess.Popen([sys.executable, "-c", FLOOD], stderr=pipe)
    pipe.close()
    started = time.monotonic()
    try:
        while time.monotonic() - started < 1.5:
            time.sleep(0.05)
    finally:
        proc.kill()
        proc.wait()
    elapsed = time.monotonic() - started
    rate = stderr_module.FLOOD_BYTES_PER_S
    # Paced: never more than the rate allows (plus one window and one chunk of slack).
    assert log.bytes_read <= rate * (elapsed + 2 * stderr_module._PACE_WINDOW_S) + 65_536
    assert log.skipped > 0 and log.total > log.skipped
    lines = log.lines()
    assert len(lines) <= 50
    assert any("lines of stderr skipped" in line for line in lines)
    assert any(line.startswith("flood line ") for line in lines)
