"""An issue that spells out ``Class.member`` finds that member, not its namesakes."""

from __future__ import annotations

from pathlib import Path

from tributary.engine.localsearch.longquery import read_task


def test_class_members_are_read_out_of_an_issue() -> None:
    issue = ("evalf of nested functions\n\nThe code for this is in `Function._eval_evalf`; "
             "see also fits.Card.fromstring and RST.__init__.\n"
             "Nothing here is a member: e.g. S.Zero, np.nan, README.md or CONTRIBUTING.md.\n") * 6
    assert read_task(issue).members == ("Function._eval_evalf", "Card.fromstring", "RST.__init__")


def test_an_issue_naming_a_method_of_a_class_finds_that_method(tmp_path: Path) -> None:
    """Every class has an ``evaluate``; the issue says which one it means."""
    from tests.index.index_helpers import HashingEmbedder
    from tributary.engine.index.manager import index_path_for, index_repository
    from tributary.engine.index.search import hybrid_search
    from tributary.engine.index.store import SqliteStore

    repo = tmp_path / "calc"
    (repo / "calc").mkdir(parents=True)
    def module(name: str, body: str) -> str:
        methods = [f"    def evaluate(self, value, precision):\n{body}"]
        for other in ("simplify", "expand", "differentiate", "integrate"):
            lines = "".join(f"        step_{k} = self.{other}_step({k}, value)\n" for k in range(12))
            methods.append(f"    def {other}(self, value):\n{lines}        return step_11\n")
        return f"class {name}:\n" + "\n".join(methods)

    for name in ["Sum", "Product", "Power", "Sine", "Cosine", "Log", "Exp", "Root"]:
        body = (f"        \"\"\"Evaluate the {name} at a value to a precision, recursing into its arguments.\"\"\"\n"
                + "".join(f"        part_{k} = self.args[{k}].evaluate(value, precision)\n" for k in range(10))
                + "        return round(part_0 + part_9, precision)\n")
        (repo / "calc" / f"{name.lower()}.py").write_text(module(name, body), encoding="utf-8")
    inner = "".join(f"        inner_{k} = self.inner(value) + {k}\n" for k in range(10))
    (repo / "calc" / "nested.py").write_text(module("Nested", inner + "        return inner_9\n"),
                                            encoding="utf-8")
    issue = ("Evaluating a nested expression loses precision\n\n"
             "```\n>>> Nested(Sum(x)).evaluate(2, precision=30)\n2.00000000000000\n```\n\n"
             "The code for this is in `Nested.evaluate`: it does not pass the precision on "
             "to the evaluate of its arguments, so every evaluate below it rounds.\n"
             + "Evaluate should keep the precision asked for at every level of recursion. " * 8)
    index_repository(repo, embedder=HashingEmbedder(), index_dir=tmp_path / "idx")
    store = SqliteStore(index_path_for(repo, directory=tmp_path / "idx"), readonly=True)
    try:
        hits = hybrid_search(store, issue, None, repo="calc", top_k=5)
        assert (hits[0].path, hits[0].symbol) == ("calc/nested.py", "Nested.evaluate")
    finally:
        store.close()
