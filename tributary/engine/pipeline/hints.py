"""Request hints as a score boost: related files, issues, language, framework.

The hint signal of a hit is in 0..1: 1.0 in a related file or under a related folder
(``src/app/``), 0.6 in a related file's directory, +0.3 in the hinted language (by
extension), +0.3 mentioning the framework, +0.5 mentioning a related issue; capped at 1.
``fuse`` adds it as the ``hint`` part, scaled to the strategy's own score range (see
``fusion.apply_hints``).

A path written in the question itself ("type-check `scripts/`", "the bug in
src/app/views.py", "conftest.py") is a related file too (``mentioned_paths``); one that
ends in ``/`` names a folder, and every file under it is related.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import PurePosixPath

from tributary.engine.model import Hints, Hit

from .text import EXTENSION_LANGUAGE, language_of

SAME_FILE = 1.0
SAME_DIR = 0.6
LANGUAGE = 0.3
FRAMEWORK = 0.3
ISSUE = 0.5

# A word with a slash inside or at its end (not a URL), or a file name with a known extension.
_MENTIONED = re.compile(
    r"(?<![\w:/.@-])(?:[\w.-]+/)+[\w.-]*|(?<![\w/.@-])[\w-]+(?:\.[\w-]+)*\.(?P<ext>[A-Za-z]{1,5})\b(?![/.]\w)"
)

_LANGUAGE_ALIASES = {"py": "python", "js": "javascript", "ts": "typescript", "golang": "go", "rs": "rust"}


def _norm_path(path: str) -> PurePosixPath:
    return PurePosixPath(path.replace("\\", "/").removeprefix("./"))


def _path_matches(hit_path: PurePosixPath, related: PurePosixPath) -> bool:
    """Equal, or one a suffix of the other (servers differ in what root paths hang from)."""
    a, b = hit_path.parts, related.parts
    shorter = min(len(a), len(b))
    return shorter > 0 and a[-shorter:] == b[-shorter:]


def _issue_pattern(issues: list[str]) -> re.Pattern[str] | None:
    numbers = [i.strip().lstrip("#") for i in issues if i.strip().lstrip("#")]
    if not numbers:
        return None
    alternatives = "|".join(re.escape(n) for n in numbers)
    return re.compile(rf"(?:#|\bissue\s*|\bgh-)(?:{alternatives})\b", re.I)


def mentioned_paths(query: str) -> list[str]:
    """The paths written in ``query``: ``scripts/``, ``src/app/views.py``, ``conftest.py``
    (a bare name only with a known source extension); URLs left out."""
    found: list[str] = []
    for match in _MENTIONED.finditer(query):
        text = match.group(0).rstrip(".")
        ext = match.group("ext")
        if ext is not None and f".{ext.lower()}" not in EXTENSION_LANGUAGE:
            continue
        if "//" in text or text in ("/", "./", "../") or text in found:
            continue
        found.append(text)
    return found


def with_mentioned_paths(hints: Hints, query: str) -> Hints:
    """``hints`` with the paths the question mentions added to its related files."""
    mentioned = [p for p in mentioned_paths(query) if p not in hints.related_files]
    if not mentioned:
        return hints
    return replace(hints, related_files=[*hints.related_files, *mentioned])


def _under(folder: PurePosixPath, folders: tuple[str, ...]) -> bool:
    """``folders`` (a file's folder parts) hold ``folder``'s parts as a run."""
    want, size = folder.parts, len(folder.parts)
    return size > 0 and any(folders[i : i + size] == want for i in range(len(folders) - size + 1))


class HintScorer:
    """Prepared hints, so scoring many hits does not re-parse them."""

    def __init__(self, hints: Hints) -> None:
        files = [p for p in hints.related_files if p.strip()]
        self.related = [_norm_path(p) for p in files if not p.endswith("/")]
        self.related_dirs = {p.parent for p in self.related}
        self.folders = [_norm_path(p) for p in files if p.endswith("/")]
        language = (hints.language or "").strip().lower()
        self.language = _LANGUAGE_ALIASES.get(language, language) or None
        framework = (hints.framework or "").strip()
        self.framework = re.compile(rf"\b{re.escape(framework)}\b", re.I) if framework else None
        self.issues = _issue_pattern(hints.related_issues)

    def score(self, hit: Hit) -> float:
        signal = 0.0
        if hit.path and (self.related or self.folders):
            path = _norm_path(hit.path)
            if any(_path_matches(path, r) for r in self.related) or any(
                _under(f, path.parent.parts) for f in self.folders
            ):
                signal += SAME_FILE
            elif any(_path_matches(path.parent, d) for d in self.related_dirs if d.parts):
                signal += SAME_DIR
        if self.language and language_of(hit.path) == self.language:
            signal += LANGUAGE
        text = f"{hit.title}\n{hit.content}"
        if self.framework is not None and self.framework.search(text):
            signal += FRAMEWORK
        if self.issues is not None and self.issues.search(text):
            signal += ISSUE
        return min(1.0, signal)
