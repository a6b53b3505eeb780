"""Tributary's built-in MCP servers, run as subprocesses like any third-party server.

``python -m tributary.engine.servers.files`` serves code search over local repository indexes;
``python -m tributary.engine.servers.tasks`` serves task-history search (see ``tributary.engine.tasks``).
"""
