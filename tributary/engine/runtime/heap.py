"""Keep the garbage collector's full passes short in long-running processes.

CPython's full (generation 2) collection walks every container object alive, and
it stops every thread while it does. Once a Tributary process has started, most
of what it holds lives as long as the process: modules, the MCP SDK's pydantic
models, Qt's wrappers in the app, torch and the embedding model in the built-in
servers. A full pass over them takes tens of milliseconds in the app and the
servers, more in a bigger process (``bench/heap_settle.py``, docs/benchmarks.md);
meanwhile the window does not repaint and every source's timeout keeps running.

``settle()`` is called once start-up is over. It collects the garbage start-up
left, then moves the survivors to the permanent generation (``gc.freeze``), so
later full passes walk only what was made since. What it freezes is never
collected as a cycle again, which is why it runs after start-up and not before:
only long-lived objects should be there.
"""

from __future__ import annotations

import gc


def settle() -> int:
    """Collect start-up's garbage, then exempt what survives from later passes.

    Returns how many objects are now exempt (``gc.get_freeze_count()``). Calling it
    again later freezes what was made in between, so it suits any point where a
    process has finished loading (an index opened, a model loaded).
    """
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
