"""``python -m engine`` runs the ``tributary`` command line."""

import sys

from engine.cli.main import main

sys.exit(main())
