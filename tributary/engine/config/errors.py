"""Typed configuration errors: every problem names the file, the key path and the line.

A ``ConfigError`` carries *all* the problems found, so a user fixes a file in one
pass instead of one error per run.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from tributary.engine.errors import TributaryError


@dataclass(frozen=True, slots=True)
class ConfigIssue:
    """One problem: ``file`` and ``line`` locate it, ``key_path`` names the setting.

    ``key_path`` uses dots for mapping keys and ``[i]`` for list items, e.g.
    ``servers.git.timeout`` or ``routing.rules[0].pattern``; ``line`` is 1-based,
    or None when the value did not come from a file (a config built in code).
    """

    file: str
    key_path: str
    line: int | None
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        key = f"{self.key_path}: " if self.key_path else ""
        return f"{where}: {key}{self.message}"


def _sort_key(issue: ConfigIssue) -> tuple[str, int, str]:
    return (issue.file, issue.line if issue.line is not None else 1 << 30, issue.key_path)


class ConfigError(TributaryError):
    """A configuration that cannot be used; ``issues`` lists every problem found."""

    def __init__(self, issues: Iterable[ConfigIssue]) -> None:
        self.issues: list[ConfigIssue] = sorted(issues, key=_sort_key)
        super().__init__(self._render())

    def _render(self) -> str:
        if not self.issues:
            return "invalid configuration"
        files = {issue.file for issue in self.issues}
        count = len(self.issues)
        noun = "problem" if count == 1 else "problems"
        head = f"invalid configuration ({count} {noun})"
        if len(files) == 1:
            head = f"invalid configuration in {next(iter(files))} ({count} {noun})"
        return head + ":\n" + "\n".join(f"  {issue}" for issue in self.issues)


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest choice, or an empty string."""
    import difflib

    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""
