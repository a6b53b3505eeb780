"""The app finds its icons and style sheet from a source tree and from a wheel's share/."""

from __future__ import annotations

from pathlib import Path

from tributary.app import theme


def test_a_source_tree_wins_and_an_installed_share_dir_is_the_fallback(tmp_path: Path) -> None:
    tree, share = tmp_path / "resources", tmp_path / "prefix" / "share" / "tributary"
    assert theme.resources_dir(tree, share) == share  # a wheel: no source tree beside the code
    (tree / "styles").mkdir(parents=True)
    (tree / "styles" / "app.qss").write_text("QWidget {}", encoding="utf-8")
    assert theme.resources_dir(tree, share) == tree


def test_every_icon_the_app_asks_for_exists() -> None:
    names = {p.stem for p in theme.ICONS.glob("*.svg")}
    used = set()
    for source in Path(theme.__file__).parent.rglob("*.py"):
        text = source.read_text(encoding="utf-8")
        for chunk in text.split('icon("')[1:]:
            used.add(chunk.split('"', 1)[0])
    assert used and used <= names, sorted(used - names)
