"""Which languages the code index parses into definitions, and which it treats as code.

A file's language itself is decided by its name (``tributary.engine.query.languages``).
"""

from __future__ import annotations

# Languages with a tree-sitter grammar wheel (symbol-level chunks); see chunking.
PARSED_LANGUAGES = frozenset(
    {
        "python", "javascript", "typescript", "tsx", "go", "rust", "java", "kotlin", "c",
        "cpp", "csharp", "ruby", "php", "swift", "scala", "elixir", "lua", "shell",
    }
)  # fmt: skip


def is_code(language: str) -> bool:
    return language not in {"markdown", "rst", "text", "toml", "yaml", "json", "ini", "xml"}
