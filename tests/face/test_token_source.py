"""``serve --http`` takes its bearer token from a file (or ``$TRIBUTARY_TOKEN``), so the
token need not show in the process list as ``--token`` does."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from tests.face.test_bind import _free_port, _post
from tests.face.test_face import ROOT, _config

TOKEN = "from-a-file-7f3a"


def test_the_token_comes_from_a_file_and_not_the_command_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    secret = tmp_path / "token"
    secret.write_text(f"{TOKEN}\n", encoding="utf-8")
    secret.chmod(0o600)
    port = _free_port("127.0.0.2")
    env = {k: v for k, v in os.environ.items() if k != "TRIBUTARY_TOKEN"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "tributary", "--config", str(_config(home)), "serve", "--http", str(port),
         "--host", "127.0.0.2", "--token-file", str(secret)],
        env={**env, "TRIBUTARY_HOME": str(home), "PYTHONPATH": str(ROOT)}, cwd=ROOT,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(600):  # (a bound on a start that failed, not a timing)
            try:
                socket.create_connection(("127.0.0.2", port), timeout=1).close()
                break
            except OSError:
                assert proc.poll() is None, "serve exited"
                time.sleep(0.1)
        cmdline = Path(f"/proc/{proc.pid}/cmdline")
        if cmdline.exists():
            assert TOKEN not in cmdline.read_bytes().decode("utf-8", "replace")
        own = {"Host": f"127.0.0.2:{port}"}
        assert _post(port, own) == 401
        assert _post(port, {**own, "Authorization": "Bearer wrong"}) == 401
        assert _post(port, {**own, "Authorization": f"Bearer {TOKEN}"}) == 200
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_help_says_where_else_the_token_may_come_from() -> None:
    done = subprocess.run([sys.executable, "-m", "tributary", "serve", "--help"], capture_output=True,
                          text=True, cwd=ROOT, timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})
    text = " ".join(done.stdout.split())
    assert "--token-file PATH" in text and "$TRIBUTARY_TOKEN" in text and "process list" in text


def test_an_empty_token_file_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "token"
    secret.write_text("\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "tributary", "--config", str(_config(tmp_path / "home")), "serve", "--http",
         "1", "--host", "127.0.0.2", "--token-file", str(secret)],
        capture_output=True, text=True, cwd=ROOT, timeout=60,
        env={**os.environ, "TRIBUTARY_HOME": str(tmp_path / "home"), "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode != 0 and "--token-file" in done.stderr and "empty" in done.stderr


def test_serve_with_an_invalid_config_says_where_and_exits(tmp_path: Path) -> None:
    """An LLM client's `tributary serve` over a config with a typo: the problems with file
    and line on stderr, exit status 2, over stdio and HTTP alike, and no traceback."""
    home = tmp_path / "home"
    config = tmp_path / "config.yaml"
    config.write_text("servers:\n  x:\n    comand: foo\n", encoding="utf-8")
    env = {**os.environ, "TRIBUTARY_HOME": str(home), "PYTHONPATH": str(ROOT), "TRIBUTARY_CONFIG_SETTLE_S": "0"}
    for transport in ([], ["--http", str(_free_port("127.0.0.1"))]):
        done = subprocess.run(
            [sys.executable, "-m", "tributary", "--config", str(config), "serve", *transport],
            env=env, cwd=ROOT, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120,
        )
        assert done.returncode == 2, done.stderr
        assert f"{config}:3: servers.x.comand: unknown key 'comand'" in done.stderr
        assert "Traceback" not in done.stderr
