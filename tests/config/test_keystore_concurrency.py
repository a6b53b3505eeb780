"""The secrets store under concurrent writers (threads and processes) and a damaged file:
no write is ever lost, the file is never left half-written, and a damaged file is
reported as such, untouched, instead of a traceback."""

from __future__ import annotations

import configparser
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tributary.engine.config import keystore

ROOT = Path(__file__).resolve().parents[2]


def _token(writer: int, n: int) -> str:
    return f"token-{writer}-{n}-" + "x" * 1500  # longer than one part: stored in parts


def test_threads_never_lose_a_write() -> None:
    writers, rounds = 8, 6
    errors: list[BaseException] = []
    start = threading.Barrier(writers)

    def write(w: int) -> None:
        try:
            start.wait()
            for n in range(rounds):
                keystore.set_entry(f"oauth:s{w}:tokens", _token(w, n))
                keystore.set_entry(f"oauth:s{w}:client", f"client-{w}-{n}")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    for w in range(writers):
        assert keystore.get_entry(f"oauth:s{w}:tokens") == _token(w, rounds - 1)
        assert keystore.get_entry(f"oauth:s{w}:client") == f"client-{w}-{rounds - 1}"
    configparser.RawConfigParser().read(keystore.fallback_path(), encoding="utf-8")


_WRITER = """
import sys
from tributary.engine.config import keystore
w = int(sys.argv[1])
for n in range(int(sys.argv[2])):
    keystore.set_entry(f"oauth:p{w}:{n}", f"value-{w}-{n}")
keystore.set_secret(f"SECRET_{w}", f"secret-{w}")
"""


@pytest.mark.integration
def test_processes_never_lose_a_write() -> None:
    writers, rounds = 4, 10
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, str(w), str(rounds)], env=env,
                              stderr=subprocess.PIPE, text=True) for w in range(writers)]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    for w in range(writers):
        for n in range(rounds):
            assert keystore.get_entry(f"oauth:p{w}:{n}") == f"value-{w}-{n}"
    assert keystore.names() == [f"SECRET_{w}" for w in range(writers)]


def test_a_damaged_file_is_a_clear_error_and_stays_as_it_was() -> None:
    keystore.set_secret("KEPT", "value")
    path = keystore.fallback_path()
    damaged = path.read_text(encoding="utf-8") + "\nthis line is not INI\n"
    path.write_text(damaged, encoding="utf-8")
    with pytest.raises(keystore.KeystoreError, match=r"secrets file .*secrets\.cfg is damaged"):
        keystore.names()
    with pytest.raises(keystore.KeystoreError, match="left as it is"):
        keystore.set_entry("oauth:x:tokens", "new")
    assert path.read_text(encoding="utf-8") == damaged  # nothing else in it was lost


@pytest.mark.integration
def test_secrets_list_reports_a_damaged_file_without_a_traceback() -> None:
    keystore.set_secret("KEPT", "value")
    keystore.fallback_path().write_text("[tributary]\nno separator here\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "tributary", "secrets", "list"], env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert "is damaged" in done.stderr and str(keystore.fallback_path()) in done.stderr
