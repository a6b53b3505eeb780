"""``tributary servers add`` / ``remove``: a server into or out of the config file from
the command line, validated, with the program after ``--`` kept whole and a literal
secret sent to the keyring."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tributary.engine import paths
from tributary.engine.cli.main import main
from tributary.engine.config.load import load_config

TOKEN = "sk-live-0123456789abcdefghij"


def config_text() -> str:
    return paths.default_config_path().read_text(encoding="utf-8")


def test_a_stdio_server_keeps_its_program_and_options(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["servers", "add", "fs", "--tool", "search_files", "--query-mode", "glob",
                   "--arguments", "{path: /srv}", "--env", "LEVEL=debug", "--timeout", "5",
                   "--", "npx", "-y", "@modelcontextprotocol/server-filesystem", "--version", "/srv"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "+ fs (stdio): npx -y @modelcontextprotocol/server-filesystem --version /srv" in out
    assert "tributary servers test fs" in out
    server = load_config(paths.default_config_path()).servers["fs"]
    assert (server.command, server.args) == ("npx", ["-y", "@modelcontextprotocol/server-filesystem", "--version", "/srv"])
    assert (server.tool, server.query_mode, server.arguments) == ("search_files", "glob", {"path": "/srv"})
    assert server.env == {"LEVEL": "debug"} and server.timeout == 5.0
    assert os.stat(paths.default_config_path()).st_mode & 0o777 == 0o600


def test_a_known_package_is_asked_as_an_import_would_ask_it(capsys: pytest.CaptureFixture[str]) -> None:
    """server-filesystem searches file names by glob in a folder it must be given, and
    server-memory by substring: added with no search settings, each is set to be asked
    so (and says so), as importing it from another client's config does."""
    assert main(["servers", "add", "fs", "--", "npx", "-y", "@modelcontextprotocol/server-filesystem",
                 "/srv/docs", "/srv/other"]) == 0
    assert main(["servers", "add", "mem", "--", "npx", "-y", "@modelcontextprotocol/server-memory"]) == 0
    assert main(["servers", "add", "plain", "--", "npx", "-y", "some-mcp-server"]) == 0
    out = capsys.readouterr().out
    assert "asked the way this package searches: tool search_files, arguments {'path': '/srv/docs'}, " \
           "query mode glob (change it with `tributary servers set fs`)" in out
    assert "query mode keywords (change it with `tributary servers set mem`)" in out
    assert out.count("asked the way") == 2
    servers = load_config(paths.default_config_path()).servers
    assert (servers["fs"].tool, servers["fs"].query_mode, servers["fs"].arguments) == (
        "search_files", "glob", {"path": "/srv/docs"})
    assert servers["mem"].query_mode == "keywords" and servers["mem"].tool is None
    assert servers["plain"].query_mode == "full" and not servers["plain"].arguments


def test_a_known_package_is_known_by_the_command_it_installs() -> None:
    """``npm install -g`` puts the package's own command on PATH; started by name or by
    path, the server is still that package."""
    assert main(["servers", "add", "fs", "--", "/usr/local/bin/mcp-server-filesystem", "/srv/docs"]) == 0
    assert main(["servers", "add", "mem", "--", "mcp-server-memory"]) == 0
    assert main(["servers", "add", "other", "--", "my-mcp-server-filesystem", "/srv/docs"]) == 0
    servers = load_config(paths.default_config_path()).servers
    assert (servers["fs"].tool, servers["fs"].query_mode, servers["fs"].arguments) == (
        "search_files", "glob", {"path": "/srv/docs"})
    assert servers["mem"].query_mode == "keywords"
    assert servers["other"].tool is None and servers["other"].query_mode == "full"


def test_a_grep_server_counts_a_quarter_beside_the_index(capsys: pytest.CaptureFixture[str]) -> None:
    """mcp-ripgrep's literal matches outvote an index's ranking at equal weight: added,
    it is asked by its search tool at a quarter of the weight, and says why; a weight
    given on the command line is kept."""
    assert main(["servers", "add", "rg", "--", "npx", "-y", "mcp-ripgrep@latest"]) == 0
    assert main(["servers", "add", "heavy", "--weight", "0.5", "--", "mcp-ripgrep"]) == 0
    out = capsys.readouterr().out
    assert "asked the way this package searches: tool search, weight 0.25 (its literal matches would " \
           "outvote an index's ranking)" in out
    servers = load_config(paths.default_config_path()).servers
    assert (servers["rg"].tool, servers["rg"].weight) == ("search", 0.25)
    assert (servers["heavy"].tool, servers["heavy"].weight) == ("search", 0.5)


def test_the_same_package_started_another_way_is_the_same_server(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """server-filesystem configured by its installed command and again by npx answered
    every search twice, and its file names counted as two sources agreeing. Added again
    from the command line, it is said to be the same server; imported, it is skipped."""
    assert main(["servers", "add", "fs", "--", "/usr/local/bin/mcp-server-filesystem", "/srv/docs"]) == 0
    assert main(["servers", "add", "fs2", "--", "npx", "-y", "@modelcontextprotocol/server-filesystem@2025.8.21",
                 "/srv/docs"]) == 0
    assert main(["servers", "add", "fs3", "--", "npx", "-y", "@modelcontextprotocol/server-filesystem",
                 "/srv/other"]) == 0
    out = capsys.readouterr().out
    assert out.count("starts the same server") == 1
    assert "note: 'fs' starts the same server with the same tool" in out.split("+ fs2")[1].split("+ fs3")[0]
    desktop = tmp_path / "claude_desktop_config.json"
    desktop.write_text('{"mcpServers": {"files": {"command": "npx", "args": '
                       '["-y", "@modelcontextprotocol/server-filesystem", "/srv/docs"]},'
                       ' "git": {"command": "uvx", "args": ["mcp-server-git", "--repository", "/srv/docs"]}}}',
                       encoding="utf-8")
    assert main(["config", "import", str(desktop)]) == 0
    out = capsys.readouterr().out
    assert "skipped files: already configured as 'fs'" in out
    assert "+ git (stdio)" in out


def test_a_search_setting_given_for_a_known_package_is_all_it_is_set() -> None:
    assert main(["servers", "add", "fs", "--tool", "read_text_file", "--", "npx", "-y",
                 "@modelcontextprotocol/server-filesystem", "/srv/docs"]) == 0
    server = load_config(paths.default_config_path()).servers["fs"]
    assert (server.tool, server.query_mode, server.arguments) == ("read_text_file", "full", {})


def test_a_remote_servers_secret_header_goes_to_the_keyring(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["servers", "add", "docs", "--url", "https://docs.example/mcp",
                   "--header", f"Authorization: Bearer {TOKEN}"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "+ docs (http): https://docs.example/mcp" in out and "keyring" in out
    assert TOKEN not in config_text() and TOKEN not in out
    server = load_config(paths.default_config_path()).servers["docs"]
    assert server.headers["Authorization"].startswith("Bearer ${keyring:")


@pytest.mark.parametrize(("argv", "says"), [
    (["bad"], "a command after --"),
    (["bad", "--url", "http://x", "--", "y"], "either --url or a command"),
    (["bad", "--env", "NOEQ", "--", "y"], "--env 'NOEQ': expected KEY=VALUE"),
    (["bad", "--arguments", "[1, 2]", "--", "y"], "expected a mapping"),
    (["bad", "--arguments", "{a: [", "--", "y"], "--arguments '{a: ['"),
    (["bad", "--header", "X: y", "--", "y"], "--header is for a server reached at a --url"),
    (["bad name", "--", "y"], "server name 'bad name'"),
])
def test_bad_arguments_say_which_and_save_nothing(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["servers", "add", *argv]) == 1
    assert says in capsys.readouterr().err
    assert not paths.default_config_path().exists()


def test_an_invalid_setting_and_a_taken_name_leave_the_file_as_it_was(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["servers", "add", "one", "--", "srv"]) == 0
    before = config_text()
    capsys.readouterr()
    assert main(["servers", "add", "two", "--weight", "-2", "--", "srv"]) == 1
    out = capsys.readouterr().out
    assert "not added (the config file is unchanged)" in out and "servers.two.weight" in out
    assert main(["servers", "add", "one", "--", "other"]) == 1
    assert "already configured" in capsys.readouterr().err
    assert config_text() == before


def test_remove_takes_the_server_out_of_rules_and_refuses_to_empty_one(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    for name in ("rg", "fs"):
        assert main(["servers", "add", name, "--", name]) == 0
    path = paths.default_config_path()
    path.write_text(config_text() + "routing:\n  fallback: [rg, fs]\n  rules:\n"
                    "  - {name: only-fs, pattern: glob, servers: [fs]}\n"
                    "  - {name: both, pattern: grep, servers: [rg, fs]}\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["servers", "remove", "fs"]) == 1
    assert "routing rule 'only-fs' asks only 'fs'" in capsys.readouterr().err
    assert "fs" in load_config(path).servers
    assert main(["servers", "remove", "nope"]) == 1
    assert "no server named 'nope' in the config (configured: fs, rg)" in capsys.readouterr().err
    assert main(["servers", "remove", "rg"]) == 0
    out = capsys.readouterr().out
    assert "- rg: rg" in out and "routing rule: both" in out and "no longer a fallback server" in out
    config = load_config(path)
    assert "rg" not in config.servers
    assert [r.servers for r in config.routing.rules] == [["fs"], ["fs"]] and config.routing.fallback == ["fs"]


def test_the_program_is_kept_after_the_top_levels_config_option(tmp_path: Path) -> None:
    """``--config FILE`` before the command was taken for the command's name, and the
    program after ``--`` was then refused as unrecognised arguments."""
    chosen = tmp_path / "other.yaml"
    assert main(["--config", str(chosen), "servers", "add", "rg", "--", "mcp-ripgrep", "-y"]) == 0
    server = load_config(chosen).servers["rg"]
    assert (server.command, server.args) == ("mcp-ripgrep", ["-y"])


def test_set_changes_the_named_settings_and_keeps_the_others(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["servers", "add", "rg", "--tool", "search", "--arguments", "{path: /src}",
                 "--env", "A=1", "--", "mcp-ripgrep"]) == 0
    capsys.readouterr()
    assert main(["servers", "set", "rg", "--timeout", "10", "--query-mode", "pattern", "--env", "B=2",
                 "--env", f"TOKEN={TOKEN}", "--disable"]) == 0
    out = capsys.readouterr().out
    assert "~ rg: env B set; env TOKEN set; timeout 3.0 → 10.0; enabled True → False; query_mode full → pattern" in out
    assert TOKEN not in config_text() and TOKEN not in out and "keyring" in out
    server = load_config(paths.default_config_path()).servers["rg"]
    assert (server.command, server.tool, server.arguments) == ("mcp-ripgrep", "search", {"path": "/src"})
    assert (server.env["A"], server.env["B"], server.timeout, server.enabled) == ("1", "2", 10.0, False)
    assert main(["servers", "set", "rg", "--reset", "query_mode", "--reset", "timeout", "--unset-env", "A",
                 "--enable", "--", "rg-mcp", "--stdio"]) == 0
    assert "env A removed" in capsys.readouterr().out
    server = load_config(paths.default_config_path()).servers["rg"]
    assert (server.command, server.args, server.query_mode, server.timeout) == ("rg-mcp", ["--stdio"], "full", 3.0)
    assert "A" not in server.env and server.enabled
    assert main(["servers", "set", "rg", "--url", "http://127.0.0.1:9/mcp"]) == 0
    server = load_config(paths.default_config_path()).servers["rg"]
    assert (server.transport, server.url, server.command, server.env) == ("http", "http://127.0.0.1:9/mcp", None, {})
    assert "env B removed" in capsys.readouterr().out


def test_set_takes_the_switch_as_add_spells_it() -> None:
    """``servers add --disabled`` is how a user learns the switch; ``set`` takes it too."""
    assert main(["servers", "add", "rg", "--", "mcp-ripgrep"]) == 0
    assert main(["servers", "set", "rg", "--disabled"]) == 0
    assert not load_config(paths.default_config_path()).servers["rg"].enabled
    assert main(["servers", "set", "rg", "--enabled"]) == 0
    assert load_config(paths.default_config_path()).servers["rg"].enabled


@pytest.mark.parametrize(("argv", "says"), [
    (["rg"], "nothing to change"),
    (["rg", "--reset", "tool", "--tool", "x"], "--reset tool and a new value for it"),
    (["rg", "--tool", ""], "--tool '': to go back to the default, give --reset tool"),
    (["rg", "--weight", "-1"], "not changed (the config file is unchanged)"),
    (["nope", "--timeout", "3"], "no server named 'nope' in the config (configured: rg)"),
    (["files", "--weight", "2"], "'files' is a built-in server, run once a repository is indexed"),
])
def test_set_says_what_is_wrong_and_saves_nothing(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["servers", "add", "rg", "--", "mcp-ripgrep"]) == 0
    before = config_text()
    capsys.readouterr()
    assert main(["servers", "set", *argv]) == 1
    said = capsys.readouterr()
    assert says in said.err + said.out
    assert config_text() == before


def test_set_tunes_a_built_in_server_and_nothing_else_of_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from tributary.engine.index.store import SqliteStore

    paths.indexes_dir().mkdir(parents=True, exist_ok=True)
    store = SqliteStore(paths.indexes_dir() / "proj-1.files.sqlite")
    store.set_meta("root", str(tmp_path))
    store.close()
    assert main(["servers", "set", "files", "--weight", "2", "--timeout", "12"]) == 0
    assert "~ files: timeout 10.0 → 12.0; weight 1.0 → 2.0" in capsys.readouterr().out
    entry = load_config(paths.default_config_path()).servers["files"]
    assert entry.tunes_builtin and (entry.builtin, entry.weight, entry.timeout) == ("files", 2.0, 12.0)
    assert main(["servers", "set", "files", "--reset", "timeout"]) == 0
    assert "timeout 12.0 → 10.0" in capsys.readouterr().out  # the built-in's own default
    before = config_text()
    assert main(["servers", "set", "files", "--tool", "x"]) == 1
    assert "only --timeout, --weight, --enable and --disable apply to it, not --tool" in capsys.readouterr().err
    assert config_text() == before
