"""Which files of a repository are its own: not tools' state, installed packages or
build output. The code index never reads the rest, and the task history does not count
a past commit's touch of them as evidence about where a change belongs."""

from __future__ import annotations

# Folders that hold tools' state or installed packages, never the repo's own code: skipped
# at any depth.
SKIPPED_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", "node_modules", "bower_components", "__pycache__", ".venv",
        "venv", ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".eggs",
        "site-packages", ".next", ".gradle", ".idea", ".vscode", ".cache", "htmlcov",
    }
)  # fmt: skip
# Build output and vendored copies, by their usual names: skipped at the repository's root
# only. Deeper down such a name is as often real code (a ``build`` package, a ``target``
# module); there only the ignore files decide.
ROOT_SKIPPED_DIRS = frozenset({"dist", "build", "target", "vendor", "third_party", "coverage"})


# Compiled output that some repositories commit by mistake: never text worth reading.
BUILD_OUTPUT_SUFFIXES = (
    ".pyc", ".pyo", ".pyd", ".so", ".dylib", ".dll", ".exe", ".o", ".obj", ".a", ".lib",
    ".class", ".jar", ".whl", ".egg",
)  # fmt: skip


def in_skipped_folder(parts: list[str]) -> bool:
    """Whether a path whose folders are ``parts`` lies in a skipped folder."""
    return any(part in SKIPPED_DIRS for part in parts) or bool(parts and parts[0] in ROOT_SKIPPED_DIRS)


def never_indexed(path: str) -> bool:
    """Whether a repo-relative path is tools' state or build output, which the index
    never reads whatever the ignore files say; history that touched it is no evidence."""
    return in_skipped_folder(path.split("/")[:-1]) or path.lower().endswith(BUILD_OUTPUT_SUFFIXES)
