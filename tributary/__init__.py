"""Tributary: one question to many context sources, one ranked, budgeted answer.

``tributary.engine`` is the asyncio engine, the command line and the MCP server; it never
imports Qt. ``tributary.app`` is the desktop app, which reaches the engine through
``tributary.engine.api``.
"""
