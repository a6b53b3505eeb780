"""``python -m tributary`` runs the ``tributary`` command line."""

import sys

from tributary.engine.cli.main import main

sys.exit(main())
