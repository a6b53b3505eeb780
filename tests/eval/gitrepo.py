"""A tiny git repository with dated commits, for dataset-building tests."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


class Repo:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", "main")

    def git(self, *args: str, date: str | None = None) -> str:
        env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(self.path)}
        if date:
            env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = date
        done = subprocess.run(
            ["git", "-C", str(self.path), "-c", "user.name=T", "-c", "user.email=t@example.com",
             "-c", "commit.gpgsign=false", *args],
            capture_output=True, text=True, check=True, env=env,
        )
        return done.stdout.strip()

    def commit(self, message: str, date: str, files: dict[str, str | None]) -> str:
        for name, text in files.items():
            target = self.path / name
            if text is None:
                self.git("rm", "-q", name)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
            self.git("add", name)
        self.git("commit", "-q", "-m", message, date=date)
        return self.git("rev-parse", "HEAD")
