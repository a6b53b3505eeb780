"""The GUI's asyncio loop: qasync's QEventLoop, safe for "never" timeouts.

qasync turns every ``call_later``/``call_at`` into a QTimer of ``int(delay * 1000)``
milliseconds, so an infinite delay raises ``OverflowError`` (anyio/mcp cancel scopes
without a deadline do that inside the MCP client) and a delay beyond QTimer's 32-bit
range cannot be represented. Such a callback can never be due while the app runs, so
it is simply not scheduled; the handle is still returned and can be cancelled.
"""

from __future__ import annotations

import asyncio
import math
from typing import Any

import qasync

MAX_DELAY_S = (2**31 - 1) / 1000  # QTimer's largest interval, about 24.8 days


class AppEventLoop(qasync.QEventLoop):  # type: ignore[misc]
    def _add_callback(self, handle: asyncio.Handle, delay: float = 0) -> Any:
        if delay is not None and (math.isinf(delay) or delay > MAX_DELAY_S):
            return handle
        return super()._add_callback(handle, delay)
