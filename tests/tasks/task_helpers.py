"""Helpers for the task-history tests: a deterministic embedder, task files, git repos."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

_WORD = re.compile(r"[a-z0-9]+")


class HashEmbedder:
    """Bag of hashed words, L2-normalised: similar wording gives similar vectors."""

    name = "test-hash"
    version = "1"
    dim = 64

    def __init__(self) -> None:
        self.calls = 0
        self.encoded = 0

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        self.encoded += len(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                bucket = int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dim
                out[row, bucket] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return out / norms


@pytest.fixture
def embedder() -> HashEmbedder:
    return HashEmbedder()


FIXTURE_TASKS: list[dict[str, Any]] = [
    {"id": "t1", "date": "2020-01-10T10:00:00+00:00", "title": "Fix login redirect loop",
     "body": "Users were redirected forever after authentication.",
     "files": ["app/auth/login.py", "app/auth/session.py", "tests/test_login.py"]},
    {"id": "t2", "date": "2021-03-05T09:00:00+00:00", "title": "Add password reset email",
     "body": "Send a reset token by email when a user forgets the password.",
     "files": ["app/auth/reset.py", "app/mail/templates.py"]},
    {"id": "t3", "date": "2021-06-01T12:00:00+00:00", "title": "Speed up CSV export",
     "body": "Stream rows instead of building the whole report in memory.",
     "files": ["app/export/csv_writer.py", "docs/export.md"]},
    {"id": "t4", "date": "2022-02-14T08:30:00+00:00", "title": "Login fails with expired session cookie",
     "body": "Clear the stale session cookie and retry authentication.",
     "files": ["app/auth/session.py", "app/auth/cookies.py"]},
    {"id": "t5", "date": "2023-09-20T16:00:00+00:00", "title": "Reformat the whole code base",
     "body": "Run the formatter over everything.",
     "files": [f"app/module_{i}.py" for i in range(40)] + ["app/auth/session.py"]},
    {"id": "t6", "date": "2024-05-01T10:00:00+00:00", "title": "Session timeout for login is configurable",
     "body": "New setting SESSION_TIMEOUT for the authentication session.",
     "files": ["app/auth/session.py", "app/settings.py", "old/removed_helper.py"]},
]


def write_jsonl(path: Path, rows: Sequence[dict[str, Any] | str]) -> Path:
    lines = [row if isinstance(row, str) else json.dumps(row) for row in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def tasks_jsonl(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "tasks.jsonl", FIXTURE_TASKS)


@pytest.fixture
def repo_dir(tmp_path: Path) -> Path:
    """A plain folder standing for the repository (files that exist 'now')."""
    repo = tmp_path / "repo"
    for rel in ["app/auth/login.py", "app/auth/session.py", "app/auth/reset.py",
                "app/auth/cookies.py", "app/settings.py", "app/export/csv_writer.py",
                "app/mail/templates.py", "tests/test_login.py", "docs/export.md"]:
        target = repo / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("# stub\n", encoding="utf-8")
    return repo


def git(repo: Path, *args: str, date: str | None = None, stdin: bytes | None = None) -> str:
    env = {
        "GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "t@example.org",
        "HOME": str(repo), "PATH": "/usr/bin:/bin:/usr/local/bin",
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    if date:
        env["GIT_AUTHOR_DATE"] = date
        env["GIT_COMMITTER_DATE"] = date
    done = subprocess.run(["git", "-C", str(repo), *args], env=env, input=stdin,
                          capture_output=True, check=True)
    return done.stdout.decode("utf-8", "replace")


def commit(repo: Path, files: dict[str, str], message: bytes | str, date: str) -> str:
    for rel, text in files.items():
        target = repo / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    git(repo, "add", "-A")
    raw = message.encode() if isinstance(message, str) else message
    git(repo, "commit", "-q", "-F", "-", date=date, stdin=raw)
    return git(repo, "rev-parse", "HEAD").strip()


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "gitrepo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit(repo, {"src/parser.py": "a = 1\n"}, "Add the config parser\n\nParses YAML.",
           "2022-01-01T10:00:00+00:00")
    commit(repo, {"src/parser.py": "a = 2\n", "tests/test_parser.py": "t = 1\n"},
           "Fix parser crash on empty file", "2022-02-01T10:00:00+00:00")
    commit(repo, {"README.md": "hello\n"}, "Document installation", "2022-03-01T10:00:00+00:00")
    return repo
