"""Secrets in a repository's files never reach the index or an answer: credentials files
are not indexed, and a private key inside an indexed file is redacted line for line."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.index.index_helpers import HashingEmbedder
from tributary.engine.cli.main import main
from tributary.engine.index import manager
from tributary.engine.index.credentials import REDACTED, is_credentials_file, without_private_keys
from tributary.engine.index.discovery import discover, discover_paths
from tributary.engine.index.manager import list_indexes
from tributary.engine.servers.files import FilesService

BODY = ["MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun",
        "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK"]
PEM = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(BODY) + "\n-----END RSA PRIVATE KEY-----\n"


@pytest.mark.parametrize(
    ("name", "secret"),
    [(".env", True), (".env.production", True), (".ENV.local", True), (".netrc", True), ("id_ed25519", True),
     (".git-credentials", True), (".env.example", False), (".env.sample", False), ("id_ed25519.pub", False),
     ("env.py", False), ("environment.md", False), ("netrc.py", False)],
)
def test_credentials_files_by_name(name: str, secret: bool) -> None:
    assert is_credentials_file(name) is secret


def test_a_private_keys_body_is_replaced_and_its_lines_kept() -> None:
    text = f"# test fixture\nKEY = '''\n{PEM}'''\n\ndef load():\n    return KEY\n"
    redacted = without_private_keys(text)
    assert not any(line in redacted for line in BODY)
    assert redacted.count(REDACTED) == 2
    assert redacted.count("\n") == text.count("\n")  # every later line keeps its number
    assert "-----BEGIN RSA PRIVATE KEY-----" in redacted and "def load():" in redacted


def test_a_key_written_on_one_line_with_escapes_is_redacted() -> None:
    text = 'KEY = "-----BEGIN PRIVATE KEY-----\\n' + "\\n".join(BODY) + '\\n-----END PRIVATE KEY-----\\n"\n'
    redacted = without_private_keys(text)
    assert not any(part in redacted for part in (BODY[0][:20], BODY[1][-20:]))
    assert redacted.endswith('-----END PRIVATE KEY-----\\n"\n')


def test_public_keys_certificates_and_other_text_are_left_alone() -> None:
    text = ("-----BEGIN CERTIFICATE-----\n" + BODY[0] + "\n-----END CERTIFICATE-----\n"
            "-----BEGIN PUBLIC KEY-----\n" + BODY[1] + "\n-----END PUBLIC KEY-----\n"
            "A private key is never logged: see PRIVATE KEY handling.\n")
    assert without_private_keys(text) == text


def test_a_key_with_no_end_is_redacted_to_a_bound_and_text_after_it_kept() -> None:
    text = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + BODY[0] + "\n" + "x = 1\n"
    assert without_private_keys(text) == f"-----BEGIN OPENSSH PRIVATE KEY-----\n{REDACTED}\nx = 1\n"


def test_many_armour_lines_with_no_key_stay_as_written() -> None:
    text = "-----BEGIN " * 50_000 + "PRIVATE" * 1000  # untrusted text: read in one pass
    assert without_private_keys(text) == text


def test_credentials_files_are_not_discovered_and_the_user_is_told(tmp_path: Path) -> None:
    for name in (".env", ".env.local", ".env.example", "id_rsa", "app.py"):
        (tmp_path / name).write_text("SECRET_TOKEN=hunter2\n" if name.startswith(".env") else "x = 1\n")
    heard: list[str] = []
    found = {f.path for f in discover(tmp_path, warn=heard.append)}
    assert found == {"app.py"}  # (.env.example is no language the index reads, but no secret either)
    told = {f"{name}: not indexed: a file that holds credentials" for name in (".env", ".env.local", "id_rsa")}
    assert set(heard) == told and len(heard) == 3
    assert {f.path for f in discover_paths(tmp_path, [".env", "app.py"], warn=heard.append)} == {"app.py"}


def test_an_indexed_repository_answers_without_its_secrets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Indexed from the command line and asked as a client would: no answer and no file
    read holds the key's body or the ``.env``'s token."""
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / ".env").write_text("DEPLOY_TOKEN=hunter2sekrit\n")
    (repo / "tests" / "test_tls.py").write_text(
        f'"""TLS handshake with a server key."""\n\nSERVER_KEY = """{PEM}"""\n\n\n'
        "def test_handshake_with_server_key():\n    assert handshake(SERVER_KEY)\n"
    )
    monkeypatch.setenv("TRIBUTARY_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(manager, "load_code_embedder", lambda: HashingEmbedder())

    assert main(["index", "add", "--no-history", str(repo)]) == 0
    assert ".env: not indexed: a file that holds credentials" in capsys.readouterr().err

    service = FilesService(list_indexes()[0].index_path.parent, embedder=HashingEmbedder())
    hits = service.search("server key handshake", 5).hits
    assert hits and hits[0].path == "tests/test_tls.py"
    assert all(BODY[0] not in hit.content for hit in hits)
    assert all(".env" not in hit.path and "hunter2" not in hit.content
               for hit in service.search("hunter2sekrit DEPLOY_TOKEN", 5).hits)
    read = service.read_file("tests/test_tls.py", None, None, None)
    assert BODY[0] not in read.content and REDACTED in read.content
    written = (repo / "tests" / "test_tls.py").read_text().splitlines()
    assert read.content.splitlines()[-1] == written[-1] and len(read.content.splitlines()) == len(written)
    with pytest.raises(ValueError, match="not an indexable file"):
        service.read_file(".env", None, None, None)
