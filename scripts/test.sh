#!/usr/bin/env bash
# Run every check CI runs: lint, types, and the test suite (unit, integration with real
# MCP server subprocesses, GUI tests offscreen). Installs what the tests need first:
# third-party MCP servers from npm, redis-server for the cache backend tests and ripgrep
# for the grep server. (The postgres tests start their own PostgreSQL + pgvector:
# pgserver, from the dev extra.)
#
# Usage: scripts/test.sh [--fast] [pytest args...]     (after scripts/setup.sh --dev)
#
# The default is the full lane, which CI runs. --fast leaves out the tests marked slow
# or integration (real server processes, the real embedding model, a fresh CLI process
# per test): a few minutes on two cores, for the edit-test loop.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${TRIBUTARY_VENV:-.venv}
lane=()
if [ "${1:-}" = "--fast" ]; then
  shift
  lane=(-m "not slow and not integration")
fi
export PATH="$PWD/$VENV/bin:$PATH"

# System packages the tests use: redis-server (cache backend) and ripgrep (the rg that
# the mcp-ripgrep server runs). Only attempted where apt-get exists and we are root.
# (The X/GL client libraries Qt needs, even offscreen, are scripts/setup.sh's:
# tributary/app/desktop_libs.py lists them.)
missing=()
command -v redis-server >/dev/null || missing+=(redis-server)
command -v rg >/dev/null || missing+=(ripgrep)
if [ ${#missing[@]} -gt 0 ] && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  echo "installing system packages: ${missing[*]}"
  apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Third-party MCP servers nobody here wrote, for the integration tests.
# (Not for the fast lane, which runs no integration test.)
if [ ${#lane[@]} = 0 ] && command -v npm >/dev/null && [ ! -d tests/node/node_modules/mcp-ripgrep ]; then
  echo "installing npm MCP servers for the integration tests"
  npm install --silent --no-audit --no-fund --prefix tests/node \
    @modelcontextprotocol/server-memory @modelcontextprotocol/server-filesystem mcp-ripgrep >/dev/null
fi

echo "== ruff"; ruff check .
echo "== mypy"; mypy tributary
echo "== pytest"
export QT_QPA_PLATFORM=offscreen
python -m pytest -q -p no:cacheprovider ${lane[@]+"${lane[@]}"} "$@"
