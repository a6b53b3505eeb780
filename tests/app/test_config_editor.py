"""The config editor: inline validation, edits never lost, nothing written while invalid,
atomic save then apply, rule order and tester, secrets masked, import.

These run the engine's real config services (validation, the atomic writer, the
routing explanation, the importer) against files in a temporary folder."""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QModelIndex, QPoint, Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QLineEdit, QPushButton, QStyle, QStyleOptionViewItem

from tests.app.fakes import FakeEngine
from tributary.app.config_editor.editor import ConfigEditor
from tributary.app.config_editor.servers import (
    LATENCY_ROLE,
    NOTE_FLOOR,
    NOTE_GAP,
    LatencyDelegate,
    fitted,
    name_tooltip,
    shown_name,
)
from tributary.engine.config.load import load_config
from tributary.engine.config.schema import Config, RepoConfig, RoutingRule, ServerConfig


def sample_config(tmp_path: Path) -> Config:
    config = Config(path=tmp_path / "config.yaml")
    config.servers["files"] = ServerConfig(name="files", command="python", args=["-m", "files"])
    config.servers["git"] = ServerConfig(name="git", command="uvx", args=["mcp-server-git"],
                                         env={"GITHUB_TOKEN": "ghp_secret", "HOME_DIR": "/x",
                                              "API_KEY": "${MY_KEY}"})
    config.routing.rules = [
        RoutingRule(name="code", pattern=r"\bdef\b", servers=["files"]),
        RoutingRule(name="history", pattern=r"why|when", servers=["git"]),
        RoutingRule(name="all", pattern=r".", servers=["files", "git"]),
    ]
    return config


async def until(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
        await asyncio.sleep(0.01)


def make_editor(qtbot: Any, tmp_path: Path, config: Config | None = None,
                engine_type: type[FakeEngine] = FakeEngine) -> tuple[ConfigEditor, FakeEngine, Config]:
    config = config if config is not None else sample_config(tmp_path)
    engine = engine_type(config=config)
    editor = ConfigEditor(lambda: engine)
    qtbot.addWidget(editor)
    editor.load(config)
    editor.show()
    return editor, engine, config


def retype(edit: QLineEdit, text: str) -> None:
    edit.setFocus()
    edit.clear()
    QTest.keyClicks(edit, text)


def paste(edit: QLineEdit, text: str) -> None:
    edit.setText(text)
    edit.textEdited.emit(text)


@pytest.mark.asyncio
async def test_invalid_pattern_is_kept_shown_inline_and_never_written(qtbot: Any, tmp_path: Path) -> None:
    editor, engine, original = make_editor(qtbot, tmp_path)
    rules = editor.rules
    rules.list.setCurrentRow(0)
    retype(rules.pattern, r"def (\w+")
    # Inline error at once, the typed text kept in the field and in the draft.
    assert rules.pattern.property("invalid") is True
    assert not rules.pattern_error.isHidden() and "missing )" in rules.pattern_error.text()
    assert editor.draft is not None and editor.draft.routing.rules[0].pattern == r"def (\w+"
    assert original.routing.rules[0].pattern == r"\bdef\b"  # the running config is untouched
    await asyncio.sleep(0.3)  # let validation run
    assert not editor.save_button.isEnabled()
    assert "Can't save yet" in editor.status.text()
    editor.save()
    await asyncio.sleep(0.05)
    assert not (tmp_path / "config.yaml").exists() and engine.applied == []
    # Fixing it clears the error and allows the save, which then writes and applies.
    QTest.keyClicks(rules.pattern, ")")
    assert rules.pattern.property("invalid") is False and rules.pattern_error.isHidden()
    await until(lambda: editor.save_button.isEnabled())
    editor.save_button.click()
    await until(lambda: bool(engine.applied))
    written = load_config(tmp_path / "config.yaml")
    assert written.routing.rules[0].pattern == r"def (\w+)"
    assert written.servers["git"].env["GITHUB_TOKEN"] == "ghp_secret"
    assert engine.applied[0].routing.rules[0].pattern == r"def (\w+)"
    assert not editor.dirty and not editor.save_button.isEnabled()


@pytest.mark.asyncio
async def test_saving_keeps_the_repositories_the_indexes_page_changed(qtbot: Any, tmp_path: Path) -> None:
    editor, engine, _ = make_editor(qtbot, tmp_path)
    # Watch was switched on in Indexes after this editor loaded the config.
    watched = [RepoConfig(path=str(tmp_path / "repo"), watch=True)]
    engine.config = copy.deepcopy(engine.config)
    engine.config.repos = watched
    editor.rules.list.setCurrentRow(0)
    retype(editor.rules.pattern, r"\bclass\b")
    await until(lambda: editor.save_button.isEnabled())
    editor.save_button.click()
    await until(lambda: bool(engine.applied))
    assert load_config(tmp_path / "config.yaml").repos == watched
    assert engine.applied[0].repos == watched and engine.applied[0].routing.rules[0].pattern == r"\bclass\b"


async def without_git_command(editor: ConfigEditor) -> Any:
    """The git server's command emptied in the form, and the check that says so shown."""
    servers = editor.servers
    servers.list.setCurrentRow(1)  # git
    servers.command.clear()
    servers.command.textEdited.emit("")
    await until(lambda: "servers.git.command" in editor.status.text())
    return servers


@pytest.mark.asyncio
async def test_validator_issue_blocks_save_and_names_the_key(qtbot: Any, tmp_path: Path) -> None:
    editor, _, _ = make_editor(qtbot, tmp_path)
    await without_git_command(editor)
    assert "needs 'command'" in editor.status.text()
    assert not editor.save_button.isEnabled()
    assert editor.draft is not None and editor.draft.servers["git"].command is None  # edit kept
    editor.save()
    await asyncio.sleep(0.05)
    assert not (tmp_path / "config.yaml").exists()


@pytest.mark.asyncio
async def test_ctrl_s_at_once_after_mending_a_field_saves(qtbot: Any, tmp_path: Path) -> None:
    """The check runs a moment after each edit; Ctrl+S typed sooner than that, right
    after the command that was missing, saves instead of repeating the old error."""
    editor, engine, _ = make_editor(qtbot, tmp_path)
    servers = await without_git_command(editor)
    editor.activateWindow()
    retype(servers.command, "uvx")
    await until(servers.command.hasFocus)
    QTest.keySequence(servers.command, QKeySequence.StandardKey.Save)
    await until(lambda: bool(engine.applied))
    assert load_config(tmp_path / "config.yaml").servers["git"].command == "uvx"


@pytest.mark.asyncio
async def test_failed_save_keeps_every_edit(qtbot: Any, tmp_path: Path) -> None:
    editor, engine, _ = make_editor(qtbot, tmp_path)
    assert editor.draft is not None
    # The target is a non-empty folder: the atomic replace must fail (even as root).
    blocked = tmp_path / "config.yaml"
    blocked.mkdir()
    (blocked / "keep").write_text("x")
    editor.ranking.max_tokens.setValue(12000)
    await until(lambda: editor.save_button.isEnabled())
    editor.save()
    await until(lambda: "not saved" in editor.status.text())
    assert (blocked / "keep").read_text() == "x"
    assert editor.dirty and editor.draft is not None and editor.draft.budget.max_tokens == 12000
    assert engine.applied == []


@pytest.mark.asyncio
async def test_a_file_changed_on_disk_under_edits_is_not_overwritten_unasked(
        qtbot: Any, tmp_path: Path) -> None:
    editor, engine, config = make_editor(qtbot, tmp_path)
    editor.ranking.max_tokens.setValue(12000)
    await until(lambda: editor.save_button.isEnabled())
    on_disk = copy.deepcopy(config)
    on_disk.fusion.top_k = 77  # edited in a text editor meanwhile, and reloaded
    editor.changed_on_disk(on_disk)
    assert "changed on disk" in editor.status.text()
    editor.save()  # the first press only warns
    await asyncio.sleep(0.05)
    assert not (tmp_path / "config.yaml").exists() and engine.applied == []
    assert "Press Save again" in editor.status.text()
    assert editor.draft is not None and editor.draft.budget.max_tokens == 12000  # edits kept
    editor.save()  # the second overwrites, on purpose
    await until(lambda: (tmp_path / "config.yaml").exists() and not editor.dirty)
    assert load_config(tmp_path / "config.yaml").budget.max_tokens == 12000
    assert not editor.disk_changed and "changed on disk" not in editor.status.text()


@pytest.mark.asyncio
async def test_revert_after_a_change_on_disk_loads_the_files_version(qtbot: Any, tmp_path: Path) -> None:
    editor, _, config = make_editor(qtbot, tmp_path)
    editor.ranking.max_tokens.setValue(12000)
    await until(lambda: editor.save_button.isEnabled())
    on_disk = copy.deepcopy(config)
    on_disk.fusion.top_k = 77
    editor.changed_on_disk(on_disk)
    editor.revert()
    assert editor.draft is not None and editor.draft.fusion.top_k == 77
    assert not editor.dirty and not editor.disk_changed


def test_bad_arguments_and_duplicate_names_are_inline_errors(qtbot: Any, tmp_path: Path) -> None:
    editor, _, _ = make_editor(qtbot, tmp_path)
    servers = editor.servers
    servers.list.setCurrentRow(1)  # git
    assert servers.current is not None and servers.current.name == "git"
    retype(servers.args, 'mcp-server-git --repo "unterminated')
    assert servers.args.property("invalid") is True
    assert "Arguments" in servers.args_error.text()
    assert servers.args.text() == 'mcp-server-git --repo "unterminated'  # kept as typed
    # The server keeps the last arguments that parsed (typed up to the quote).
    assert servers.current.args == ["mcp-server-git", "--repo"]
    assert editor.errors()  # the form blocks saving
    retype(servers.args, "mcp-server-git --repo /src")
    assert servers.current.args == ["mcp-server-git", "--repo", "/src"]
    # Renaming onto an existing name is refused inline; a fresh name renames and
    # routing rules follow it.
    paste(servers.name, "files")
    assert servers.name.property("invalid") is True and "already" in servers.name_error.text()
    assert editor.draft is not None and "git" in editor.draft.servers
    paste(servers.name, "history")
    assert servers.name.property("invalid") is False
    assert list(editor.draft.servers) == ["files", "history"]
    assert editor.draft.routing.rules[1].servers == ["history"]


def test_fixed_tool_arguments_are_typed_as_a_mapping_in_the_form(qtbot: Any, tmp_path: Path) -> None:
    """A tool that needs more than the question (server-filesystem's ``search_files``
    wants a ``path``) gets it from the form, not only from the YAML file."""
    editor, _, _ = make_editor(qtbot, tmp_path)
    servers = editor.servers
    servers.list.setCurrentRow(1)  # git
    assert servers.current is not None and servers.tool_arguments.text() == ""
    retype(servers.tool_arguments, "{path: /srv/docs, limit: 5}")
    assert servers.current.arguments == {"path": "/srv/docs", "limit": 5}
    assert servers.tool_arguments.property("invalid") is False
    retype(servers.tool_arguments, "{path: /srv/docs, limit: [5}")
    assert servers.tool_arguments.property("invalid") is True
    assert servers.tool_arguments_error.text().startswith("Tool arguments: ")
    assert servers.tool_arguments.text() == "{path: /srv/docs, limit: [5}"  # kept as typed
    assert servers.current.arguments == {"path": "/srv/docs", "limit": 5}  # the last that parsed
    assert editor.errors()  # the form blocks saving
    retype(servers.tool_arguments, "{since: 2024-01-31}")
    assert "quote a date" in servers.tool_arguments_error.text()
    retype(servers.tool_arguments, "project: tributary")  # the braces are optional
    assert servers.current.arguments == {"project": "tributary"}
    assert not editor.errors()
    servers.list.setCurrentRow(0)
    servers.list.setCurrentRow(1)
    assert servers.tool_arguments.text() == "{project: tributary}"


def test_the_query_mode_is_chosen_in_the_form(qtbot: Any, tmp_path: Path) -> None:
    """A file-name search (server-filesystem's ``search_files``) is sent a glob, set in
    the form as the server's status advises, and every mode the config knows is offered."""
    from typing import get_args

    from tributary.app.config_editor.servers import QUERY_MODE_LABELS
    from tributary.engine.config.schema import QueryMode

    assert list(QUERY_MODE_LABELS) == list(get_args(QueryMode))
    editor, _, _ = make_editor(qtbot, tmp_path)
    servers = editor.servers
    servers.list.setCurrentRow(1)  # git
    assert servers.current is not None and servers.query_mode.currentData() == "full"
    assert servers.query_mode.count() == len(get_args(QueryMode))
    servers.query_mode.setCurrentIndex(servers.query_mode.findData("glob"))
    assert servers.current.query_mode == "glob" and editor.dirty
    servers.list.setCurrentRow(0)
    assert servers.query_mode.currentData() == "full"  # each server shows its own
    servers.list.setCurrentRow(1)
    assert servers.query_mode.currentData() == "glob"


def test_a_known_package_typed_into_a_new_server_gets_its_search_settings(qtbot: Any, tmp_path: Path) -> None:
    """server-filesystem typed into a new server's form is set to be asked as importing
    it sets it (search_files, its first folder, a glob), shown in the form; a choice the
    user then makes stays, and a server with search settings of its own is left alone."""
    editor, _, _ = make_editor(qtbot, tmp_path)
    servers = editor.servers
    servers.add_server()
    paste(servers.command, "npx")
    assert servers.current is not None and servers.current.tool is None
    retype(servers.args, "-y @modelcontextprotocol/server-filesystem /srv/docs /srv/more")  # key by key
    current = servers.current
    assert (current.tool, current.arguments, current.query_mode) == ("search_files", {"path": "/srv/docs"}, "glob")
    assert servers.tool.text() == "search_files" and servers.tool_arguments.text() == "{path: /srv/docs}"
    assert servers.query_mode.currentData() == "glob"
    servers.query_mode.setCurrentIndex(servers.query_mode.findData("keywords"))
    paste(servers.description, "docs")
    assert current.query_mode == "keywords"  # the user's choice stays
    paste(servers.args, "-y @modelcontextprotocol/server-filesystem /srv/other")
    assert (current.query_mode, current.arguments) == ("keywords", {"path": "/srv/docs"})
    servers.list.setCurrentRow(1)  # git
    assert servers.current is not None and servers.current.name == "git"
    paste(servers.tool, "git_log")  # a search setting of its own
    paste(servers.args, "-y @modelcontextprotocol/server-memory")
    assert servers.current.query_mode == "full" and servers.current.tool == "git_log"
    paste(servers.tool, "")
    paste(servers.args, "-y @modelcontextprotocol/server-memory --quiet")
    assert servers.current.query_mode == "keywords"  # search settings untouched: set
    assert servers.query_mode.currentData() == "keywords"


def test_a_grep_server_typed_into_a_new_server_counts_a_quarter(qtbot: Any, tmp_path: Path) -> None:
    """mcp-ripgrep typed into a new server's form gets its search tool and a quarter of
    the weight, shown in the form; another program typed instead gives them back."""
    editor, _, _ = make_editor(qtbot, tmp_path)
    servers = editor.servers
    servers.add_server()
    paste(servers.command, "npx")
    retype(servers.args, "-y mcp-ripgrep@latest")
    current = servers.current
    assert current is not None and (current.tool, current.weight) == ("search", 0.25)
    assert servers.tool.text() == "search" and servers.weight.value() == 0.25
    paste(servers.args, "-y some-other-server")
    assert (current.tool, current.weight) == (None, 1.0)
    assert servers.weight.value() == 1.0


def test_add_remove_and_enable_servers(qtbot: Any, tmp_path: Path) -> None:
    editor, _, _ = make_editor(qtbot, tmp_path)
    servers = editor.servers
    servers.add_server()
    assert editor.draft is not None and "new-server" in editor.draft.servers
    assert servers.current is not None and servers.current.name == "new-server"
    QTest.keyClicks(servers.command, "npx")
    assert editor.draft.servers["new-server"].command == "npx"
    item = servers.list.item(0)
    item.setCheckState(item.checkState().__class__.Unchecked)
    assert editor.draft.servers["files"].enabled is False
    servers.list.setCurrentRow(0)
    servers.remove_server()
    assert "files" not in editor.draft.servers
    assert all("files" not in r.servers for r in editor.draft.routing.rules)
    assert editor.dirty


def test_server_names_show_whole_at_1024_and_longer_ones_elide_in_the_middle(
        qtbot: Any, tmp_path: Path) -> None:
    config = sample_config(tmp_path)
    long_name = "confluence-wiki-engineering-europe-west"
    common = ("filesystem", "slack-archive-search", "github-issues-prod", "memory-warehouse-mcp")
    for name in (*common, long_name):
        config.servers[name] = ServerConfig(name=name, command="python", args=["-m", "x"])
    engine = FakeEngine(config=config)
    states = engine.server_states
    engine.server_states = lambda: [replace(s, latency_ms=850.0) for s in states()]  # type: ignore[method-assign]
    editor = ConfigEditor(lambda: engine)
    qtbot.addWidget(editor)
    editor.load(config)
    view = editor.servers.list
    font = view.font()
    font.setPointSizeF(font.pointSizeF() * 1.5)  # the width follows the font: larger than offscreen's
    view.setFont(font)
    editor.resize(760, 560)  # what the editor gets in a window on a 1024 x 640 screen
    editor.show()
    delegate = view.itemDelegate()
    assert isinstance(delegate, LatencyDelegate)

    def option(row: int) -> QStyleOptionViewItem:
        opt = QStyleOptionViewItem()
        view.initViewItemOption(opt)
        opt.rect = view.visualRect(view.model().index(row, 0))
        return opt

    rows = {view.item(row).text(): row for row in range(view.count())}
    assert view.item(rows["filesystem"]).data(LATENCY_ROLE) == "~850 ms"
    for name in common:  # up to 20 characters, beside the latency note
        assert not delegate.name_elided(option(rows[name]), view.model().index(rows[name], 0)), name
    # A name that cannot fit keeps its start and end, and the tooltip names it whole.
    index = view.model().index(rows[long_name], 0)
    opt = option(rows[long_name])
    assert delegate.name_elided(opt, index)
    delegate.initStyleOption(opt, index)
    text_rect = view.style().subElementRect(QStyle.SubElement.SE_ItemViewItemText, opt, view)
    shown = shown_name(opt, text_rect.width(), "~850 ms")
    assert shown.startswith("confluence") and shown.endswith("west") and "…" in shown
    assert long_name in name_tooltip(index) and "Checked: enabled" in name_tooltip(index)


def test_a_long_note_gives_way_to_the_server_name(qtbot: Any, tmp_path: Path) -> None:
    """A server that is up but of no use to a search says why beside its name. Where
    the two do not fit (×1.5 in a 1,024 × 640 window), the name is what tells the rows
    apart: the note is cut at its end ("no read-o…") and the name stays whole."""
    config = sample_config(tmp_path)
    config.servers["everything"] = ServerConfig(name="everything", command="npx", args=["everything"])
    engine = FakeEngine(config=config)
    states = engine.server_states
    engine.server_states = lambda: [  # type: ignore[method-assign]
        replace(s, tool=None, tool_error="no read-only search tool: search, add (mark one readOnlyHint)")
        if s.name == "everything" else s for s in states()
    ]
    editor = ConfigEditor(lambda: engine)
    qtbot.addWidget(editor)
    editor.load(config)
    view = editor.servers.list
    rows = {view.item(row).text(): row for row in range(view.count())}
    index = view.model().index(rows["everything"], 0)
    note = index.data(LATENCY_ROLE)
    assert note == "no read-only tool"
    opt = QStyleOptionViewItem()
    view.initViewItemOption(opt)
    delegate = view.itemDelegate()
    delegate.initStyleOption(opt, index)
    metrics = opt.fontMetrics
    name_width, note_width = metrics.horizontalAdvance("everything"), metrics.horizontalAdvance(note)
    floor = metrics.horizontalAdvance(NOTE_FLOOR)
    assert floor < note_width
    tight = name_width + NOTE_GAP + floor  # room for the name and a latency's width of the note
    name, cut = fitted(opt, tight, note)
    assert name == "everything" and shown_name(opt, tight, note) == "everything"
    assert cut.startswith("no") and cut.endswith("…") and metrics.horizontalAdvance(cut) <= floor
    assert fitted(opt, name_width + NOTE_GAP + note_width, note) == ("everything", note)  # room for both
    # A latency is as short as a note gets: it stays whole, and a long name gives way.
    opt.text = "confluence-wiki-engineering-europe-west"
    name, latency = fitted(opt, metrics.horizontalAdvance("confluence-wiki") + NOTE_GAP + 100, "~850 ms")
    assert latency == "~850 ms" and "…" in name


def test_secrets_are_masked_and_references_shown(qtbot: Any, tmp_path: Path) -> None:
    editor, _, _ = make_editor(qtbot, tmp_path)
    servers = editor.servers
    servers.list.setCurrentRow(1)
    rows = {row.key.text(): row for row in servers.env._rows}
    assert rows["GITHUB_TOKEN"].value.echoMode() == QLineEdit.EchoMode.Password
    assert rows["API_KEY"].value.echoMode() == QLineEdit.EchoMode.Normal  # ${MY_KEY}
    assert rows["HOME_DIR"].value.echoMode() == QLineEdit.EchoMode.Normal
    rows["GITHUB_TOKEN"].reveal.setChecked(True)
    assert rows["GITHUB_TOKEN"].value.echoMode() == QLineEdit.EchoMode.Normal
    # The secret never appears in the widgets' visible text.
    assert "ghp_secret" not in servers.test_result.text()


def test_rules_reorder_by_drag_and_tester(qtbot: Any, tmp_path: Path) -> None:
    editor, _, _ = make_editor(qtbot, tmp_path)
    rules = editor.rules
    # What a drag does to the list's model: move row 2 ("all") to the top.
    assert rules.list.model().moveRow(QModelIndex(), 2, QModelIndex(), 0)
    assert editor.draft is not None
    assert [r.name for r in editor.draft.routing.rules] == ["all", "code", "history"]
    rules.move_rule(0, 2)
    assert [r.name for r in editor.draft.routing.rules] == ["code", "history", "all"]
    # The keyboard moves the selected rule as a drag would.
    rules.list.setCurrentRow(2)
    qtbot.keyClick(rules.list, Qt.Key.Key_Up, Qt.KeyboardModifier.AltModifier)
    assert [r.name for r in editor.draft.routing.rules] == ["code", "all", "history"]
    assert rules.list.currentRow() == 1
    qtbot.keyClick(rules.list, Qt.Key.Key_Down, Qt.KeyboardModifier.AltModifier)
    qtbot.keyClick(rules.list, Qt.Key.Key_Down, Qt.KeyboardModifier.AltModifier)  # already last
    assert [r.name for r in editor.draft.routing.rules] == ["code", "history", "all"]
    rules.sample.setText("def fixture")
    rules.run_test()
    verdict = rules.verdict.text()
    assert "✔ code: matched “def”" in verdict
    assert "✓ all: matched" in verdict and "not used" in verdict  # first-match mode
    assert "· history: no match" in verdict
    assert "Asked: files\n" in verdict + "\n"
    rules.sample.setText("nothing special")
    rules.run_test()
    assert "✔ all: matched" in rules.verdict.text()
    assert "Asked: files, git" in rules.verdict.text()


def test_the_rule_testers_answer_scrolls_into_view_on_a_short_screen(qtbot: Any, tmp_path: Path) -> None:
    """On a 640-pixel screen the tester's answer falls below the fold: typing a query
    scrolls the page to it, instead of answering out of sight."""
    editor, _, _ = make_editor(qtbot, tmp_path)
    editor.resize(828, 420)
    editor.tabs.setCurrentIndex(1)
    rules = editor.rules
    QTest.qWait(50)
    paste(rules.sample, "def fixture")
    QTest.qWait(400)  # the tester's debounce, then the scroll once the lines are laid out
    assert "✔ code: matched" in rules.verdict.text()
    assert not rules.verdict.visibleRegion().isEmpty()


def test_import_adds_servers_with_unique_names(qtbot: Any, tmp_path: Path) -> None:
    editor, _, _ = make_editor(qtbot, tmp_path)
    claude = tmp_path / "claude_desktop_config.json"
    claude.write_text(json.dumps({"mcpServers": {
        "git": {"command": "uvx", "args": ["mcp-server-git", "--repository", "/srv/other"]},
        "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]},
    }}))
    added = editor.servers.import_file(claude)
    assert added == 2
    assert editor.draft is not None
    names = list(editor.draft.servers)
    assert names[:2] == ["files", "git"] and len(names) == 4 and "memory" in names
    assert editor.draft.servers["memory"].command == "npx"
    assert editor.dirty
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    messages: list[str] = []
    editor.servers.message.connect(messages.append)
    assert editor.servers.import_file(broken) == 0
    assert messages and messages[-1].startswith("Could not import")


def test_importing_servers_already_configured_adds_none_and_says_so(qtbot: Any, tmp_path: Path) -> None:
    """A client config whose servers are here already (under any name) changes nothing:
    no second copy that would answer every search twice, no unsaved changes."""
    editor, _, _ = make_editor(qtbot, tmp_path)
    claude = tmp_path / "claude_desktop_config.json"
    claude.write_text(json.dumps({"mcpServers": {
        "git": {"command": "uvx", "args": ["mcp-server-git"]},
        "repo-git": {"command": "uvx", "args": ["mcp-server-git"]},
    }}))
    messages: list[str] = []
    editor.servers.message.connect(messages.append)
    assert editor.servers.import_file(claude) == 0
    assert editor.draft is not None and list(editor.draft.servers) == ["files", "git"]
    assert messages[-1] == "Imported 0 servers from claude_desktop_config.json: none new"  # (no warnings)
    assert not editor.dirty
    claude.write_text(json.dumps({"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}}}))
    assert editor.servers.import_file(claude) == 1
    assert messages[-1] == "Imported 1 server from claude_desktop_config.json: time (save to apply)"


@pytest.mark.asyncio
async def test_saved_but_not_applied_says_so(qtbot: Any, tmp_path: Path) -> None:
    editor, engine, _ = make_editor(qtbot, tmp_path)

    async def refuse(config: Config) -> None:
        raise RuntimeError("server pool busy")

    engine.apply_config = refuse  # type: ignore[method-assign]
    messages: list[str] = []
    editor.message.connect(messages.append)
    editor.ranking.top_k.setValue(40)
    await until(lambda: editor.save_button.isEnabled())
    editor.save()
    await until(lambda: any("after a restart" in m for m in messages))
    assert load_config(tmp_path / "config.yaml").fusion.top_k == 40
    assert not editor.dirty


def test_only_the_settings_the_strategy_reads_can_be_edited(qtbot: Any, tmp_path: Path) -> None:
    editor, _, config = make_editor(qtbot, tmp_path)
    ranking = editor.ranking
    weights = ranking.composite_weights
    assert config.fusion.strategy == ranking.strategy.currentText() == "rrf"
    assert ranking.rrf_k.isEnabled() and not any(w.isEnabled() for w in weights)
    label = ranking._forms[0].labelForField(ranking.w_keyword)
    assert label is not None and not label.isEnabled()
    assert "composite" in ranking.w_keyword.toolTip()
    ranking.strategy.setCurrentText("composite")
    assert all(w.isEnabled() for w in weights) and label.isEnabled() and not ranking.rrf_k.isEnabled()
    assert ranking.config is not None and ranking.config.fusion.strategy == "composite"
    ranking.w_keyword.setValue(0.6)  # still edits the config
    assert ranking.config.fusion.composite.keyword == pytest.approx(0.6)
    ranking.strategy.setCurrentText("vote")
    assert ranking.rrf_k.isEnabled() and not any(w.isEnabled() for w in weights)


def test_duplicate_and_cache_settings_follow_their_switches(qtbot: Any, tmp_path: Path) -> None:
    editor, _, _ = make_editor(qtbot, tmp_path)
    ranking = editor.ranking
    folding = (ranking.fuzzy, ranking.semantic, ranking.semantic_threshold, ranking.overlaps)
    ranking.dedup.setChecked(True)
    ranking.semantic.setChecked(True)
    assert all(s.isEnabled() for s in folding)
    ranking.semantic.setChecked(False)
    assert not ranking.semantic_threshold.isEnabled() and ranking.fuzzy.isEnabled()
    ranking.dedup.setChecked(False)
    assert not any(s.isEnabled() for s in folding)
    enabled = {}
    for backend in ("memory", "sqlite", "redis", "off"):
        ranking.cache_backend.setCurrentText(backend)
        enabled[backend] = (ranking.ttl.isEnabled(), ranking.max_entries.isEnabled(), ranking.redis_url.isEnabled())
    assert enabled == {"memory": (True, True, False), "sqlite": (True, True, False),
                       "redis": (True, False, True), "off": (False, False, False)}


@pytest.mark.asyncio
async def test_move_secrets_to_keyring_button(qtbot: Any, tmp_path: Path) -> None:
    from tributary.engine.config import keystore

    editor, _, _ = make_editor(qtbot, tmp_path)
    servers = editor.servers
    servers.list.setCurrentRow(1)  # git: GITHUB_TOKEN is a literal, API_KEY a reference
    messages: list[str] = []
    servers.message.connect(messages.append)
    servers.keyring_button.click()
    await until(lambda: any("keyring" in m for m in messages))
    assert "Moved GITHUB_TOKEN to the keyring" in messages[-1]
    assert keystore.get_secret("GITHUB_TOKEN") == "ghp_secret"
    env = editor.draft.servers["git"].env
    assert env == {"GITHUB_TOKEN": "${keyring:GITHUB_TOKEN}", "HOME_DIR": "/x", "API_KEY": "${MY_KEY}"}
    assert editor.dirty
    editor.save()
    await until(lambda: not editor.dirty)
    assert "ghp_secret" not in (tmp_path / "config.yaml").read_text(encoding="utf-8")


@pytest.mark.asyncio
async def test_sign_in_and_out_of_a_remote_server(qtbot: Any, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    import httpx2

    from tests.fakes.oauth_server import serve_oauth_server
    from tributary.engine.sources import oauth

    opened: list[str] = []

    async def browser(url: str) -> None:  # the user's browser, approving at once
        opened.append(url)
        async with httpx2.AsyncClient(follow_redirects=True, timeout=30) as http:
            assert (await http.get(url)).status_code == 200

    monkeypatch.setattr(oauth, "_system_browser", browser)
    async with serve_oauth_server() as (url, auth):
        config = Config(path=tmp_path / "config.yaml")
        config.servers["notes"] = ServerConfig(name="notes", transport="http", url=url)
        engine = FakeEngine(config=config)
        editor = ConfigEditor(lambda: engine)
        qtbot.addWidget(editor)
        editor.load(config)
        editor.show()
        servers = editor.servers
        messages: list[str] = []
        servers.message.connect(messages.append)
        await until(lambda: servers.sign_in_state.text() == "Not signed in", timeout=10)
        assert not servers.sign_out_button.isEnabled()
        servers.sign_in_button.click()
        await until(lambda: "Signed in to notes" in messages, timeout=30)
        assert servers.sign_in_state.text() == "Signed in" and len(opened) == 1
        assert auth.counts["code"] == 1
        servers.sign_out_button.click()
        await until(lambda: "Signed out of notes" in messages, timeout=10)
        assert servers.sign_in_state.text() == "Not signed in"
        assert not oauth.signed_in(config.servers["notes"])


@pytest.mark.asyncio
async def test_import_menu_finds_every_clients_config(qtbot: Any, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "config.toml").write_text(
        '[mcp_servers.context7]\ncommand = "npx"\nargs = ["-y", "@upstash/context7-mcp"]\n', encoding="utf-8")
    (home / ".config" / "zed").mkdir(parents=True)
    (home / ".config" / "zed" / "settings.json").write_text(
        '{"context_servers": {"memory": {"command": {"path": "npx", "args": ["-y", "m"]}}}}', encoding="utf-8")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.chdir(tmp_path)
    editor, _engine, _config = make_editor(qtbot, tmp_path)
    page = editor.servers
    page._fill_import_menu()
    labels = [action.text() for action in page.import_menu.actions()]
    assert any(text.startswith("Codex:") for text in labels) and any(text.startswith("Zed:") for text in labels)
    before = set(page.config.servers)
    assert page.import_found() == 2
    assert {"context7", "memory"} <= set(page.config.servers) - before
    assert page.import_found() == 0  # the same servers again: nothing new


@pytest.mark.asyncio
async def test_an_invalid_edit_on_disk_is_shown_whole_and_not_overwritten_unasked(
        qtbot: Any, tmp_path: Path) -> None:
    """A hand edit that does not load leaves the running config in effect: the editor
    says so in full where it stays, and saving over that file asks first."""
    editor, engine, _ = make_editor(qtbot, tmp_path)
    hand_edit = "servers:\n  git:\n    timeout: soon\n"
    (tmp_path / "config.yaml").write_text(hand_edit)
    problem = ("config.yaml not applied; the running config stays in effect:\n"
               "invalid configuration in config.yaml (1 problem):\n"
               "  config.yaml:3: servers.git.timeout: must be a number")
    editor.set_file_problem(problem)
    assert editor.banner.isVisible()
    assert "config.yaml:3: servers.git.timeout: must be a number" in editor.banner.text()
    assert "Saved" not in editor.status.text()
    editor.ranking.max_tokens.setValue(12000)  # an edit made in the app afterwards
    await until(lambda: editor.save_button.isEnabled())
    editor.save()  # the first press only warns
    await asyncio.sleep(0.05)
    assert (tmp_path / "config.yaml").read_text() == hand_edit and engine.applied == []
    assert "Press Save again" in editor.banner.text()
    editor.save()  # on purpose
    await until(lambda: not editor.dirty)
    assert load_config(tmp_path / "config.yaml").budget.max_tokens == 12000
    assert editor.banner.isHidden() and editor.file_problem is None


@pytest.mark.asyncio
async def test_a_secret_typed_into_a_masked_field_is_saved_to_the_keyring(
        qtbot: Any, tmp_path: Path) -> None:
    """The file gets a ${keyring:NAME} reference, never the typed token; the editor
    shows the reference and says where the secret went."""
    from tributary.engine.config import keystore

    editor, engine, _ = make_editor(qtbot, tmp_path)
    servers = editor.servers
    servers.list.setCurrentRow(0)  # files: no environment yet
    servers.env._add.click()
    row = servers.env._rows[-1]
    QTest.keyClicks(row.key, "SEARCH_API_TOKEN")
    QTest.keyClicks(row.value, "tok-typed-123")
    assert row.value.echoMode() == QLineEdit.EchoMode.Password
    await until(lambda: editor.save_button.isEnabled())
    editor.save()
    await until(lambda: not editor.dirty)
    written = (tmp_path / "config.yaml").read_text(encoding="utf-8")
    assert "tok-typed-123" not in written and "${keyring:SEARCH_API_TOKEN}" in written
    assert keystore.get_secret("SEARCH_API_TOKEN") == "tok-typed-123"
    assert engine.applied[-1].servers["files"].env["SEARCH_API_TOKEN"] == "${keyring:SEARCH_API_TOKEN}"
    assert editor.draft is not None
    assert editor.draft.servers["files"].env["SEARCH_API_TOKEN"] == "${keyring:SEARCH_API_TOKEN}"
    assert servers.env.values()["SEARCH_API_TOKEN"] == "${keyring:SEARCH_API_TOKEN}"
    assert "SEARCH_API_TOKEN" in editor.status.text() and "keyring" in editor.status.text()


def test_headers_are_added_as_headers_and_long_names_are_read_whole(qtbot: Any, tmp_path: Path) -> None:
    editor, _, _ = make_editor(qtbot, tmp_path)
    servers = editor.servers
    assert servers.headers._add.text() == "Add header"
    assert servers.env._add.text() == "Add variable"
    editor.resize(1100, 500)
    servers.list.setCurrentRow(1)  # git
    servers.env._add.click()
    row = servers.env._rows[-1]
    QTest.keyClicks(row.key, "GITHUB_PERSONAL_ACCESS_TOKEN")
    for _ in range(3):
        QApplication.processEvents()
    assert row.key.width() >= row.key.fontMetrics().horizontalAdvance("GITHUB_PERSONAL_ACCESS_TOKEN")
    assert not servers.form_scroll.horizontalScrollBar().isVisible()


def test_a_narrow_form_puts_labels_above_fields_instead_of_scrolling_sideways(qtbot: Any, tmp_path: Path) -> None:
    # 1,024 x 640 at 150 %: the form was wider than its pane (a long variable name, the
    # Query mode choice's longest item) and scrolled sideways, cutting its labels off.
    editor, _, _ = make_editor(qtbot, tmp_path)
    servers = editor.servers
    editor.resize(600, 420)
    servers.list.setCurrentRow(1)
    servers.env._add.click()
    QTest.keyClicks(servers.env._rows[-1].key, "GITHUB_PERSONAL_ACCESS_TOKEN")
    for _ in range(3):
        QApplication.processEvents()
    assert servers.form_widget.minimumSizeHint().width() <= servers.form_scroll.viewport().width()
    assert not servers.form_scroll.horizontalScrollBar().isVisible()
    row = servers.env._rows[-1]  # the name gives room, and so does the value, down to a few characters
    ten = row.key.fontMetrics().averageCharWidth() * 10
    assert row.key.width() >= ten and row.value.width() >= ten


def test_a_new_or_other_server_opens_its_form_at_the_top(qtbot: Any, tmp_path: Path) -> None:
    """At 1,024 x 640 the form of the server last edited was scrolled to its weight; Add
    put the cursor in the new server's name, above the fold, with nothing to see."""
    editor, _, _ = make_editor(qtbot, tmp_path)
    editor.resize(800, 420)
    servers = editor.servers
    servers.list.setCurrentRow(1)
    for _ in range(3):
        QApplication.processEvents()
    bar = servers.form_scroll.verticalScrollBar()
    assert bar.maximum() > 0
    bar.setValue(bar.maximum())
    servers.weight.setValue(0.5)  # an edit and the reload after it keep the place
    assert bar.value() == bar.maximum()
    servers.add_server()
    assert bar.value() == 0
    bar.setValue(bar.maximum())
    servers.list.setCurrentRow(1)
    assert bar.value() == 0


@pytest.mark.asyncio
async def test_a_connection_test_scrolls_its_outcome_into_view(qtbot: Any, tmp_path: Path) -> None:
    editor, _, _ = make_editor(qtbot, tmp_path)
    editor.resize(800, 420)  # short: the test's outcome starts below the fold
    servers = editor.servers
    servers.list.setCurrentRow(1)
    for _ in range(3):
        QApplication.processEvents()
    servers.test_button.click()
    await until(lambda: servers.test_details.isVisible())
    viewport = servers.form_scroll.viewport()

    def in_view() -> bool:
        top = servers.test_details.mapTo(viewport, QPoint(0, 0)).y()
        return top >= 0 and top + servers.test_details.height() <= viewport.height()

    await until(in_view)


class BuiltinEngine(FakeEngine):
    """The engine double running a built-in ``files`` server beside the config's own."""

    @property
    def effective_config(self) -> Config:
        effective = copy.deepcopy(self.config)
        tuned = self.config.servers.get("files")
        effective.servers["files"] = ServerConfig(
            name="files", command="python", args=["-m", "tributary.engine.servers.files"], builtin="files",
            timeout=tuned.timeout if tuned else 5.0, weight=tuned.weight if tuned else 1.0,
            enabled=tuned.enabled if tuned else True)
        return effective


def test_built_in_servers_are_listed_and_tuned_not_rewritten(qtbot: Any, tmp_path: Path) -> None:
    """Tributary's own servers show in the list after the config's; their weight,
    timeout and on/off are saved as a tuning entry (no command), the rest is shown only."""
    config = sample_config(tmp_path)
    del config.servers["files"]  # the rules still name it: the built-in one
    editor, _, _ = make_editor(qtbot, tmp_path, config, BuiltinEngine)
    servers = editor.servers
    names = [servers.list.item(n).text() for n in range(servers.list.count())]
    assert names[-1] == "files" and names.count("files") == 1
    servers.list.setCurrentRow(len(names) - 1)
    assert servers.builtin_note.isVisible() and not servers.remove_button.isEnabled()
    assert servers.command.text() == "python" and not servers.command.isEnabled()
    assert servers.query_mode.currentText() == "the whole question"  # not a grep tool's regex
    assert servers.timeout.isEnabled() and servers.weight.isEnabled()
    assert editor.draft is not None and "files" not in editor.draft.servers and not editor.dirty
    servers.weight.setValue(2.5)
    entry = editor.draft.servers["files"]
    assert (entry.builtin, entry.command, entry.weight, entry.timeout) == ("files", None, 2.5, 5.0)
    servers.list.item(len(names) - 1).setCheckState(Qt.CheckState.Unchecked)
    assert entry.enabled is False and editor.dirty
    assert not editor.errors()
    servers.add_server()  # after the tuning entry in the config, yet listed above it
    names = [servers.list.item(n).text() for n in range(servers.list.count())]
    assert names[-2:] == ["new-server", "files"] and list(editor.draft.servers)[-2:] == ["files", "new-server"]
    assert servers.list.item(len(names) - 1).checkState() == Qt.CheckState.Unchecked
    servers.list.setCurrentRow(0)  # a server of the config's own is edited as before
    assert not servers.builtin_note.isVisible() and servers.command.isEnabled()
    assert servers.remove_button.isEnabled()
    assert servers.query_mode.currentText() == "whole (grep: a regex)"


def test_a_server_that_cannot_start_says_why_in_the_list(qtbot: Any) -> None:
    """A missing command or a server that never finishes its start was a grey dot with
    nothing beside it, like one not started yet."""
    from tributary.engine.sources.state import ServerStatus

    config = Config()
    for name in ("missing", "hung", "broken", "crashed", "fine"):
        config.servers[name] = ServerConfig(name=name, command="python", args=["-m", "x"])
    engine = FakeEngine(config=config)
    states = engine.server_states
    trouble = {
        "missing": {"status": ServerStatus.STOPPED, "last_error": "command not found: /nonexistent/server"},
        "hung": {"status": ServerStatus.STARTING, "restarts": 3,
                 "last_error": "HandshakeTimeout: no answer to initialize within 30s"},
        # waiting to start again, never having answered: its import fails
        "broken": {"status": ServerStatus.BACKOFF, "restarts": 6, "latency_ms": None,
                   "last_error": "server exited during the start-up: ModuleNotFoundError: No module named 'x'"},
        # down after it answered: it will again
        "crashed": {"status": ServerStatus.BACKOFF, "restarts": 1, "latency_ms": 40.0,
                    "last_error": "server exited"},
    }
    engine.server_states = lambda: [replace(s, **trouble.get(s.name, {})) for s in states()]  # type: ignore[method-assign]
    editor = ConfigEditor(lambda: engine)
    qtbot.addWidget(editor)
    editor.load(config)
    editor.show()
    view = editor.servers.list
    shown = {view.item(row).text(): view.item(row).data(LATENCY_ROLE) for row in range(view.count())}
    assert shown["missing"] == "no command" and shown["hung"] == "not starting"
    assert shown["broken"] == "not starting" and shown["crashed"] == "~40 ms"
    assert shown["fine"] not in ("not starting", "no command")
    hung = next(view.item(row) for row in range(view.count()) if view.item(row).text() == "hung")
    assert "HandshakeTimeout" in hung.toolTip()


def test_a_server_turned_off_says_so_in_a_rules_ask_list(qtbot: Any, tmp_path: Path) -> None:
    """A rule may name a server that is off, but it is never asked: the Ask list said so
    only for servers with no search tool, and ticking one that was off looked like any
    other. Turning a server off on the Servers tab shows it at once."""
    editor, _, _ = make_editor(qtbot, tmp_path)
    rules = editor.rules
    rules.list.setCurrentRow(1)  # "history": asks git

    def shown() -> dict[str, bool]:
        return {rules.servers.item(i).text(): rules.servers.item(i).checkState() == Qt.CheckState.Checked
                for i in range(rules.servers.count())}

    assert shown()["git"] is True
    names = [editor.servers.list.item(n).text() for n in range(editor.servers.list.count())]
    editor.servers.list.item(names.index("git")).setCheckState(Qt.CheckState.Unchecked)
    assert shown()["git — off"] is True and "files" in shown()
    assert editor.draft is not None and editor.draft.routing.rules[1].servers == ["git"]


def test_the_rule_tester_says_which_asked_servers_cannot_answer(qtbot: Any, tmp_path: Path) -> None:
    """A rule routing to a server with no search tool (mcp-server-git) was shown as
    asking it, and the question then found nothing from it without a word."""
    from tributary.engine.sources.state import ServerStatus

    config = sample_config(tmp_path)
    engine = FakeEngine(config=config)
    states = engine.server_states
    trouble = {"git": {"tool": None, "tool_error": "no search-like tool among: git_status, git_log"},
               "files": {"status": ServerStatus.STOPPED, "last_error": "command not found: /nowhere/files"}}
    engine.server_states = lambda: [replace(s, **trouble.get(s.name, {})) for s in states()]  # type: ignore[method-assign]
    editor = ConfigEditor(lambda: engine)
    qtbot.addWidget(editor)
    editor.load(config)
    rules = editor.rules
    assert "Alt+↑/↓" in rules.hint.text()
    rules.sample.setText("nothing special")
    rules.run_test()
    verdict = rules.verdict.text()
    assert "Asked: files, git" in verdict
    assert "Will not answer: files (no command); git (no search tool)" in verdict
    # The rule's Ask list says it beside the name, and ticking still saves the name alone.
    rules.list.setCurrentRow(0)
    shown = {rules.servers.item(i).text() for i in range(rules.servers.count())}
    assert "git — no search tool" in shown and "files — no command" in shown
    for i in range(rules.servers.count()):
        rules.servers.item(i).setCheckState(Qt.CheckState.Checked)
    assert editor.draft is not None and "git" in editor.draft.routing.rules[0].servers
    assert all("—" not in name for rule in editor.draft.routing.rules for name in rule.servers)
    del trouble["git"], trouble["files"]
    rules.run_test()
    assert "Will not answer" not in rules.verdict.text()


def test_no_rules_says_what_that_means_and_how_to_add_one(qtbot: Any, tmp_path: Path) -> None:
    """An empty rule list was a blank box beside a greyed form."""
    config = sample_config(tmp_path)
    config.routing.rules.clear()
    editor, _, _ = make_editor(qtbot, tmp_path, config)
    rules = editor.rules
    assert rules.rules_stack.currentWidget() is rules.empty_area and rules.empty.isVisibleTo(rules)
    assert "every enabled server" in rules.empty.text() and not rules.hint.isVisibleTo(rules)
    rules.add_rule()
    assert rules.rules_stack.currentWidget() is rules.list and rules.list.count() == 1
    rules.remove_rule()
    assert rules.rules_stack.currentWidget() is rules.empty_area


def test_add_rule_and_the_tester_stay_in_view_on_a_short_screen(qtbot: Any, tmp_path: Path) -> None:
    """At 1.5 times the size on a 768-pixel screen the rule's form, at its full height,
    pushed *Add rule* and the tester below the fold: a new user saw no way to add the
    first rule. The form scrolls on its own now."""
    config = sample_config(tmp_path)
    config.routing.rules.clear()
    editor, _, _ = make_editor(qtbot, tmp_path, config)
    editor.resize(640, 330)
    editor.tabs.setCurrentIndex(1)
    QTest.qWait(50)
    rules = editor.rules
    add = next(b for b in rules.findChildren(QPushButton) if b.text() == "Add rule")
    assert not add.visibleRegion().isEmpty()
    assert not rules.sample.visibleRegion().isEmpty()


def test_the_tester_says_why_a_matching_rule_fell_back(qtbot: Any, tmp_path: Path) -> None:
    """A rule that matched but names only a built-in server not set up yet fell back,
    and the tester said "no rule matched" under the rule's tick."""
    config = sample_config(tmp_path)
    config.routing.rules[:] = [RoutingRule(name="code", pattern=r"\bdef\b", servers=["tasks"])]
    config.servers.pop("tasks", None)
    editor, _, _ = make_editor(qtbot, tmp_path, config)
    rules = editor.rules
    rules.sample.setText("def fixture")
    rules.run_test()
    verdict = rules.verdict.text()
    assert "✔ code: matched" in verdict
    assert "no rule matched" not in verdict and "the matching rule's servers cannot be asked" in verdict
    assert "tasks (built in: it starts once a repository is added)" in verdict
    rules.sample.setText("nothing special")
    rules.run_test()
    assert "(fallback: no rule matched)" in rules.verdict.text()


@pytest.mark.asyncio
async def test_the_tool_field_offers_the_servers_own_tools(qtbot: Any, tmp_path: Path) -> None:
    """Typing a tool's name completes it from the tools the running server offers, or a
    test of one not running yet found: a misspelt name leaves the server out of searches.
    A tool that says it writes (``git_commit``, marked not read-only) is not offered:
    every search would send it its text."""
    editor, engine, _ = make_editor(qtbot, tmp_path)
    states = engine.server_states
    engine.server_states = lambda: [  # type: ignore[method-assign]
        replace(s, tools=["git_status", "git_commit", "git_log", "git_show"],
                sendable=("git_status", "git_log", "git_show")) if s.name == "git" else s for s in states()
    ]
    servers = editor.servers
    servers.list.setCurrentRow(1)  # git
    servers.refresh_states()
    completer = servers.tool.completer()
    assert completer.model().stringList() == ["git_log", "git_show", "git_status"]  # type: ignore[attr-defined]
    editor.show()
    servers.tool.setFocus()
    QTest.keyClicks(servers.tool, "SHOW")  # any part of the name, any case
    popup = completer.popup()
    assert popup.isVisible() and completer.currentCompletion() == "git_show"
    popup.setCurrentIndex(completer.completionModel().index(0, 0))
    QTest.keyClick(popup, Qt.Key.Key_Return)  # picked from the list: set, not typed
    assert servers.tool.text() == "git_show"
    assert editor.draft is not None and editor.draft.servers["git"].tool == "git_show"
    servers.add_server()
    servers.test_connection()  # a new server's tools come from its test
    await until(lambda: completer.model().stringList() == ["search"])  # type: ignore[attr-defined]
    servers.list.setCurrentRow(1)
    assert completer.model().stringList() == ["git_log", "git_show", "git_status"]  # type: ignore[attr-defined]


@pytest.mark.asyncio
async def test_ctrl_s_closes_the_tool_fields_offers(qtbot: Any, tmp_path: Path) -> None:
    """Ctrl+S typed while the tool's completions are open saves and closes them: left
    open, the list covered the form until Esc."""
    editor, engine, _ = make_editor(qtbot, tmp_path)
    states = engine.server_states
    engine.server_states = lambda: [  # type: ignore[method-assign]
        replace(s, tools=["git_status", "git_log"], sendable=("git_status", "git_log")) if s.name == "git" else s
        for s in states()
    ]
    servers = editor.servers
    servers.list.setCurrentRow(1)  # git
    servers.refresh_states()
    editor.activateWindow()
    servers.tool.setFocus()
    await until(servers.tool.hasFocus)
    QTest.keyClicks(servers.tool, "git_st")
    popup = servers.tool.completer().popup()
    await until(popup.isVisible)
    QTest.keySequence(servers.tool, QKeySequence.StandardKey.Save)
    await until(lambda: bool(engine.applied))
    assert not popup.isVisible()
    assert load_config(tmp_path / "config.yaml").servers["git"].tool == "git_st"
