"""Discovery: .gitignore (nested), include/exclude globs, binaries, generated files."""

from __future__ import annotations

from pathlib import Path

from engine.index.discovery import discover, discover_paths
from engine.index.languages import detect_language


def _paths(root: Path, **kwargs: object) -> set[str]:
    return {f.path for f in discover(root, **kwargs)}  # type: ignore[arg-type]


def test_gitignore_binary_generated_and_vendored_are_skipped(repo: Path) -> None:
    found = _paths(repo)
    assert "src/billing/invoice.py" in found
    assert "docs/guide.md" in found
    assert "app.log" not in found  # root .gitignore
    assert "secret/keys.txt" not in found  # ignored folder
    assert "web/generated.js" not in found  # nested .gitignore
    assert "web/app.js" in found
    assert "package-lock.json" not in found  # lock file
    assert "node_modules/dep/index.js" not in found  # vendored
    assert "assets/logo.bin" not in found  # binary / unknown


def test_negation_and_nested_override(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / ".gitignore").write_text("*.txt\n")
    (tmp_path / "a" / ".gitignore").write_text("!keep.txt\n")
    for name in ("x.txt", "a/keep.txt", "a/drop.txt"):
        (tmp_path / name).write_text("hello\n")
    assert "a/keep.txt" in _paths(tmp_path)
    assert "a/drop.txt" not in _paths(tmp_path)
    assert "x.txt" not in _paths(tmp_path)


def test_include_exclude_globs(repo: Path) -> None:
    assert _paths(repo, include=["src/**"]) == {"src/billing/invoice.py", "src/net/http_client.py"}
    assert not any(p.startswith("web/") for p in _paths(repo, exclude=["web/"]))


def test_size_limit_and_minified(tmp_path: Path) -> None:
    (tmp_path / "big.py").write_text("x = 1\n" * 1000)
    (tmp_path / "bundle.min.js").write_text("var a=1;")
    (tmp_path / "dense.js").write_text("var a=1;" * 2000)  # one huge line: generated
    assert _paths(tmp_path, max_bytes=100) == set()
    assert _paths(tmp_path) == {"big.py"}


def test_discover_paths_matches_discover(repo: Path) -> None:
    every = [
        "app.log",
        "web/generated.js",
        "web/app.js",
        "secret/keys.txt",
        "src/net/http_client.py",
    ]
    assert {f.path for f in discover_paths(repo, every)} == {"web/app.js", "src/net/http_client.py"}


def test_language_detection() -> None:
    assert detect_language("a/b.py") == "python"
    assert detect_language("x.tsx") == "tsx"
    assert detect_language("README") == "text"
    assert detect_language("Makefile") == "make"
    assert detect_language("img.svg") is None
    assert detect_language("data.parquet") is None
