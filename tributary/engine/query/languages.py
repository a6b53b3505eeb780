"""Which language a file is in, decided by its name: the names ``lang:`` filters use.

The code index records each chunk's language by the same rule
(``tributary.engine.index.discovery``), so a filter and the index agree on the names.
It lives with the query, below the code index, so the query package imports nothing
of the index (which itself imports the query's classifier).
"""

from __future__ import annotations

from pathlib import PurePosixPath

_BY_SUFFIX: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".pyw": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".cs": "csharp",
    ".kt": "kotlin",
    ".kts": "kotlin",
    ".swift": "swift",
    ".rb": "ruby",
    ".php": "php",
    ".scala": "scala",
    ".lua": "lua",
    ".ex": "elixir",
    ".exs": "elixir",
    ".sc": "scala",
    ".rake": "ruby",
    ".gemspec": "ruby",
    ".sh": "shell",
    ".bash": "shell",
    ".zsh": "shell",
    ".ps1": "powershell",
    ".sql": "sql",
    ".html": "html",
    ".htm": "html",
    ".css": "css",
    ".scss": "css",
    ".vue": "vue",
    ".svelte": "svelte",
    ".md": "markdown",
    ".markdown": "markdown",
    ".rst": "rst",
    ".txt": "text",
    ".toml": "toml",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".json": "json",
    ".ini": "ini",
    ".cfg": "ini",
    ".conf": "ini",
    ".xml": "xml",
    ".proto": "protobuf",
    ".graphql": "graphql",
    ".tf": "terraform",
}

_BY_NAME: dict[str, str] = {
    "dockerfile": "dockerfile",
    "makefile": "make",
    "rakefile": "ruby",
    "gemfile": "ruby",
    "cmakelists.txt": "cmake",
    "readme": "text",
    "license": "text",
    "authors": "text",
    "changelog": "text",
    "citation": "text",
    "notice": "text",
    "contributing": "text",
}

# Text we never index: machine-written or pure markup noise.
_SKIPPED_SUFFIXES = frozenset({".svg", ".map", ".lock", ".sum", ".pem", ".key", ".crt"})


def detect_language(path: str) -> str | None:
    """The language of ``path`` (posix, repo-relative), or None when it is not indexed."""
    name = PurePosixPath(path).name.lower()
    if name in _BY_NAME:
        return _BY_NAME[name]
    suffix = PurePosixPath(name).suffix
    if suffix in _SKIPPED_SUFFIXES:
        return None
    if suffix in _BY_SUFFIX:
        return _BY_SUFFIX[suffix]
    if not suffix:
        return "text"  # extension-less files (scripts, notes) are sniffed for binary later
    return None
