"""Tributary's built-in MCP servers, run as subprocesses like any third-party server.

``python -m engine.servers.files`` serves code search over local repository indexes;
``python -m engine.servers.tasks`` serves task-history search (see ``engine.tasks``).
"""
