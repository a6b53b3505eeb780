"""Real repositories: files in legacy encodings, and ignore files git would accept."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from tests.index.index_helpers import HashingEmbedder
from tributary.engine.cli.main import main
from tributary.engine.index import manager
from tributary.engine.index.decoding import UndecodableError, declared_encoding, decode_source
from tributary.engine.index.discovery import discover
from tributary.engine.index.manager import list_indexes
from tributary.engine.servers.files import FilesService

LEGACY = ("# -*- coding: windows-1251 -*-\n"
          "def privet():\n"
          "    \"\"\"Приветствие пользователю на русском языке.\"\"\"\n"
          "    return 'Здравствуйте, уважаемый пользователь'\n")


def test_a_coding_cookie_decides_and_the_text_becomes_unicode() -> None:
    decoded = decode_source(LEGACY.encode("cp1251"))
    assert decoded.text == LEGACY and decoded.encoding == "cp1251"
    latin = "/* -*- coding: latin-1 -*- */\nconst caf = 'café naïve';\n"
    assert decode_source(latin.encode("latin-1")).text == latin
    assert declared_encoding(b"#!/usr/bin/env python\n# vim: set fileencoding=koi8-r :\n") == "koi8-r"
    assert declared_encoding(b"# coding: no-such-codec\n") is None


def test_boms_plain_utf8_and_detection() -> None:
    text = "def f():\n    return 'ünïcödé'\n"
    assert decode_source(codecs.BOM_UTF16_LE + text.encode("utf-16-le")).text == text
    assert decode_source(codecs.BOM_UTF8 + text.encode()).text == text
    assert decode_source(text.encode()).encoding == "utf-8"
    # No cookie: the detector recognises a longer Cyrillic text.
    body = "\n".join(["# Этот модуль считает итоговую сумму счёта с налогом и скидкой."] * 5)
    assert decode_source(body.encode("cp1251")).text == body


def test_bytes_that_are_no_text_are_refused_with_a_reason() -> None:
    with pytest.raises(UndecodableError, match="no text encoding"):
        decode_source(bytes(range(128, 256)) * 4)


def test_an_invalid_ignore_line_is_skipped_with_a_warning_naming_file_and_line(
    tmp_path: Path,
) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / ".gitignore").write_text("*.log\n!\n")
    (tmp_path / "sub" / ".gitignore").write_text("# comment\nsecret.py\n!\n")
    for name in ("a.py", "b.log", "sub/secret.py", "sub/ok.py"):
        (tmp_path / name).write_text("x = 1\n")
    warnings: list[str] = []
    found = [f.path for f in discover(tmp_path, warn=warnings.append)]
    assert found == [".gitignore", "a.py", "sub/.gitignore", "sub/ok.py"]  # valid lines apply
    assert [w.split(" (")[0] for w in warnings] == [
        ".gitignore:2: invalid pattern '!' skipped", "sub/.gitignore:3: invalid pattern '!' skipped"]


def test_index_add_and_search_a_repository_with_a_legacy_file_and_a_bad_ignore_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".gitignore").write_text("!\n*.log\n")
    (repo / "greeting.py").write_bytes(LEGACY.encode("cp1251"))
    (repo / "billing.py").write_text("def invoice_total(items):\n    return sum(items)\n")
    (repo / "noise.log").write_text("ignored\n")
    (repo / "blob.txt").write_bytes(bytes(range(128, 256)) * 4)
    monkeypatch.setenv("TRIBUTARY_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(manager, "load_code_embedder", lambda: HashingEmbedder())

    assert main(["index", "add", "--no-history", str(repo)]) == 0
    err = capsys.readouterr().err
    assert "warning: .gitignore:1: invalid pattern '!' skipped" in err
    assert "skipped: blob.txt: not UTF-8, and no text encoding could be detected" in err

    index = list_indexes()[0]
    service = FilesService(index.index_path.parent, embedder=HashingEmbedder())
    result = service.search("privet", 5)
    assert result.hits and result.hits[0].path == "greeting.py"
    assert "Здравствуйте, уважаемый пользователь" in result.hits[0].content
    assert "noise.log" not in {h.path for h in service.search("ignored", 5).hits}  # *.log held
    assert "Приветствие" in service.read_file("greeting.py", None, None, None).content
