"""The definitions an issue's names point to: a name one file defines says more about
where the fix goes than a name every printer defines, and of a shared name's definitions
the member of a class the issue also names comes first."""

from __future__ import annotations

from pathlib import Path

from tests.index.index_helpers import HashingEmbedder
from tributary.engine.index.manager import index_path_for, index_repository
from tributary.engine.index.search import _named_definitions
from tributary.engine.index.store import SearchFilter, SqliteStore

PRINTERS = ("Str", "Latex", "Repr", "Fortran", "Octave", "Julia", "Mathematica")


def printers_repo(tmp_path: Path) -> Path:
    """Seven printers, each defining ``_print_Float`` and ``_print_Derivative``; only the
    last defines ``MCodePrinter``, and one helper module defines ``stringify_args``."""
    repo = tmp_path / "printing"
    (repo / "printing").mkdir(parents=True)
    for name in PRINTERS:
        cls = "MCodePrinter" if name == "Mathematica" else f"{name}Printer"
        (repo / "printing" / f"{name.lower()}.py").write_text(
            f'"""The {name} printer."""\n\n\nclass {cls}:\n'
            "    def _print_Float(self, expr):\n        return str(expr)\n\n"
            "    def _print_Derivative(self, expr):\n        return 'D(%s)' % expr\n",
            encoding="utf-8",
        )
    (repo / "printing" / "helpers.py").write_text(
        "def stringify_args(args, sep):\n    return sep.join(str(a) for a in args)\n", encoding="utf-8"
    )
    return repo


def test_a_name_one_file_defines_leads_and_brings_its_classs_members_first(tmp_path: Path) -> None:
    repo = printers_repo(tmp_path)
    index_repository(repo, embedder=HashingEmbedder(), index_dir=tmp_path / "idx")
    store = SqliteStore(index_path_for(repo, directory=tmp_path / "idx"), readonly=True)
    try:
        # the issue uses the shared names most, the class once and the helper once
        names = ["_print_Float", "_print_Derivative", "MCodePrinter", "stringify_args"]
        ranked = _named_definitions(store, names, SearchFilter())
        chunks = store.chunks_by_id(ranked)
        placed = [(chunks[cid].path, chunks[cid].symbol) for cid in ranked]
    finally:
        store.close()
    # the names one file defines first, in the order of use
    assert placed[0] == ("printing/mathematica.py", "MCodePrinter")
    assert placed[1] == ("printing/helpers.py", "stringify_args")
    # then a shared name's definitions, the member of the named class leading them
    assert placed[2] == ("printing/mathematica.py", "MCodePrinter._print_Float")
    assert len([p for p in placed if p[1] and p[1].endswith("._print_Float")]) == 5  # five of seven
