"""Where Tributary comes from, and how to add one of its optional extras.

The distribution is called :data:`DISTRIBUTION` (the import package stays
``tributary``): the name ``tributary`` on PyPI belongs to another project, so
``pip install 'tributary[…]'`` would install somebody else's code. Tributary is
installed from its source checkout, and :func:`install_hint` says how to add an
extra there.
"""

from __future__ import annotations

import sys
from pathlib import Path

DISTRIBUTION = "tributary-context"


def checkout() -> Path | None:
    """The source checkout this Tributary runs from (an editable install), if any."""
    root = Path(__file__).resolve().parents[2]
    return root if (root / "pyproject.toml").is_file() and (root / "tributary").is_dir() else None


def install_hint(extra: str) -> str:
    """The command that adds ``extra`` to this installation, from its checkout."""
    if getattr(sys, "frozen", False):
        return (f"the desktop bundle has no [{extra}] extra; run Tributary from a source "
                f"checkout with `.venv/bin/pip install -e '.[{extra}]'`")
    root = checkout()
    if root is not None:
        return f"{sys.executable} -m pip install -e '{root}[{extra}]'"
    return (f"from your Tributary checkout run `.venv/bin/pip install -e '.[{extra}]'` "
            "(or scripts/setup.sh); do not `pip install tributary`, which is another project")
