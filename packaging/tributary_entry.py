"""The desktop bundle's entry point (packaging/build.sh): the ``tributary`` command line,
whose ``gui`` starts the desktop app and whose ``_run`` starts the built-in servers."""

import sys

from tributary.engine.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
