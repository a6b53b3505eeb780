"""The ``index`` section: which backend holds the repository indexes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tributary.engine.config.errors import ConfigError
from tributary.engine.config.load import parse_config
from tributary.engine.index.backend import SQLITE, configured_backend, resolve_backend


def test_the_default_is_local_sqlite() -> None:
    config = parse_config("", source="t")
    assert config.index.backend == "sqlite" and config.index.dsn == ""


def test_postgres_needs_a_dsn_and_known_choices() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config("index:\n  backend: postgres\n  vector_index: annoy\n", source="t")
    text = str(caught.value)
    assert "index.dsn" in text and "index.vector_index" in text
    with pytest.raises(ConfigError, match=r"index\.backend"):
        parse_config("index:\n  backend: mysql\n", source="t")
    ok = parse_config("index:\n  backend: postgres\n  dsn: postgresql://ci:${PGPASSWORD}@db/tributary\n", source="t")
    assert ok.index.dsn.endswith("@db/tributary")


def test_the_dsn_is_expanded_only_when_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("index:\n  backend: postgres\n  dsn: postgresql://ci:${PGPASSWORD}@db/t\n", encoding="utf-8")
    monkeypatch.delenv("PGPASSWORD", raising=False)
    with pytest.raises(ConfigError, match="PGPASSWORD"):
        configured_backend(config)
    monkeypatch.setenv("PGPASSWORD", "s3cret")
    backend = configured_backend(config)
    assert backend.postgres and backend.dsn == "postgresql://ci:s3cret@db/t"
    assert resolve_backend(tmp_path, None) == SQLITE  # an explicit folder means SQLite files
    assert resolve_backend(None, backend) is backend


def test_config_show_hides_a_literal_dsn_password(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tributary.engine.cli.main import main

    config = tmp_path / "config.yaml"
    config.write_text("index:\n  backend: postgres\n  dsn: postgresql://ci:hunter2secret@db/t\n", encoding="utf-8")
    assert main(["--config", str(config), "config", "show"]) == 0
    shown = capsys.readouterr().out
    assert "hunter2secret" not in shown and "postgresql://ci:****@db/t" in shown


def test_an_unreachable_index_database_is_an_error_not_a_crash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The CLI reports it as a refusal (``TributaryError``): its reason, no traceback,
    no password."""
    pytest.importorskip("psycopg", reason="the postgres extra is not installed")
    from tributary.engine.cli.main import main
    from tributary.engine.errors import TributaryError
    from tributary.engine.postgres.db import PostgresError

    assert issubclass(PostgresError, TributaryError)
    config = tmp_path / "config.yaml"
    nowhere = tmp_path / "no-server-here"
    config.write_text(
        f"index:\n  backend: postgres\n  dsn: postgresql://ci:hunter2secret@/t?host={nowhere}\n",
        encoding="utf-8",
    )
    assert main(["--config", str(config), "index", "list"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: cannot connect to postgresql://ci@") and "hunter2secret" not in err
