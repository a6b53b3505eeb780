"""Tributary's engine: sources, routing, fan-out, the fusion pipeline and its MCP face.

No Qt here (a test enforces it). Importing the package first decides whether the
pipeline runs compiled or as Python (``tributary.engine._compiled``).
"""

from tributary.engine._compiled import choose as _choose

COMPILED = _choose()  # whether the mypyc-compiled pipeline is in use
