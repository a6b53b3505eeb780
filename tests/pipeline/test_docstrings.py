"""A task's context cuts long docstrings past its first hits, so its budget reads more
code; the result list and other questions' contexts keep every chunk whole."""

from __future__ import annotations

from tests.pipeline.helpers import hit
from tributary.engine.model import ContextFormat, SearchRequest
from tributary.engine.pipeline.docstrings import CUT_MARK, WHOLE_LEADS, brief_docstrings, briefed
from tributary.engine.pipeline.run import run_pipeline

EXAMPLES = "\n".join(f"    >>> product(k, (k, 1, {n}))\n    {n}" for n in range(12))
LONG = f'''def product(*args, **kwargs):
    r"""
    Compute the product.

    Examples
    ========

{EXAMPLES}
    """
    prod = Product(*args, **kwargs)
    return prod.doit(deep=False) if isinstance(prod, Product) else prod
'''


def test_a_long_docstring_keeps_its_first_paragraph_and_all_the_code() -> None:
    cut = briefed(LONG)
    assert cut is not None
    text, dropped = cut
    assert text.split("\n")[:6] == [
        "def product(*args, **kwargs):", '    r"""', "    Compute the product.",
        "    [… 28 more lines of this docstring]", '    """', "    prod = Product(*args, **kwargs)"]
    assert dropped == 28 and text.count("\n") == LONG.count("\n") - 27
    assert "return prod.doit(deep=False)" in text


def test_short_one_line_and_unclosed_docstrings_and_other_code_stay_as_they_are() -> None:
    short = 'def f():\n    """Add one.\n\n    More.\n    """\n    return 1\n'
    one_line = 'def f():\n    """Add one."""\n    return 1\n'
    unclosed = LONG.split('    """\n    prod')[0]  # a chunk cut inside the docstring
    no_docstring = "def f(x):\n    text = '''\n" + "a\n" * 20 + "'''\n    return text\n"
    for code in (short, one_line, unclosed, no_docstring):
        assert briefed(code) is None, code
    class_doc = "class Product(Expr):\n" + LONG.split("\n", 1)[1]
    assert briefed(class_doc) is not None  # a class's docstring too
    multi_line_header = LONG.replace("def product(*args, **kwargs):", "def product(\n    *args,\n    **kwargs,\n):")
    assert briefed(multi_line_header) is not None


def test_only_python_past_the_leads_is_cut() -> None:
    python = hit("files", 1, LONG, path="sympy/concrete/products.py", lines=(1, 40))
    kept = hit("files", 2, LONG, path="sympy/concrete/sums.py", lines=(1, 40))
    rust = hit("files", 3, LONG, path="src/lib.rs", lines=(1, 40))
    out = brief_docstrings([python, kept, rust], whole={kept.id})
    assert out[0] is not python and out[0].metadata[CUT_MARK] == 28 and out[0].tokens == 0
    assert out[1] is kept and out[2] is rust
    assert python.content == LONG  # the input is never changed


ISSUE = '''Product(n + 1 / 2**k, [k, 0, n-1]) is incorrect

```
>>> from sympy import *
>>> p = Product(n + 1 / 2**k, [k, 0, n-1]).doit()
>>> print(simplify(p))
2**(n*(-n + 1)/2) + n**n
```
The product for `n=2` is `(2 + 2^0) * (2 + 2^(-1)) = 15/2`, not 9/2.
'''


def test_a_tasks_context_cuts_docstrings_past_its_first_hits_and_the_list_does_not() -> None:
    hits = [hit("files", n, LONG.replace("product", f"product_{n}"), path=f"sympy/m{n}.py", lines=(1, 40))
            for n in range(1, WHOLE_LEADS + 3)]
    request = SearchRequest(query=ISSUE, format=ContextFormat.MARKDOWN, max_tokens=20_000)
    done = run_pipeline({"files": hits}, request)
    assert done.context is not None
    text = done.context.text
    assert text.count("more lines of this docstring]") == 2  # the hits after the leads
    assert all(h.content.count(">>>") == 12 for h in done.hits)  # the list shows them whole
    phrase = SearchRequest(query="product of a sequence", format=ContextFormat.MARKDOWN, max_tokens=20_000)
    whole = run_pipeline({"files": hits}, phrase).context
    assert whole is not None and "more lines of this docstring" not in whole.text
