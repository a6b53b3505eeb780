"""Print the requirement pyproject.toml states for each named distribution, one a line.

The shell scripts install some packages on their own (into a throwaway environment, or
a build tool); reading the versions from here keeps them stated once.
Usage: python scripts/requirements.py NAME...
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def main(names: list[str]) -> int:
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"].values()
    itself = project["name"].lower()  # the dev extra names the project's own extras
    pool = [r for r in [*project["dependencies"], *(r for extra in extras for r in extra)]
            if re.split(r"[\s<>=!~\[;]", r, maxsplit=1)[0].lower() != itself]
    for name in names:
        found = [r for r in pool if re.split(r"[\s<>=!~\[;]", r, maxsplit=1)[0].lower() == name.lower()]
        if not found:
            print(f"requirements.py: {name} is not in {PYPROJECT}", file=sys.stderr)
            return 1
        print(found[0])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
