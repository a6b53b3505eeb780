#!/usr/bin/env bash
# Run every check CI runs: lint, types, and the test suite (unit, integration with real
# MCP server subprocesses, GUI tests offscreen). Installs what the tests need first:
# third-party MCP servers from npm, and redis-server for the cache backend tests.
#
# Usage: scripts/test.sh [pytest args...]     (after scripts/setup.sh --dev)
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${TRIBUTARY_VENV:-.venv}
export PATH="$PWD/$VENV/bin:$PATH"

# System packages the tests use: redis-server (cache backend), and the X/GL client
# libraries Qt needs even offscreen. Only attempted where apt-get exists and we are root.
need_apt=()
command -v redis-server >/dev/null || need_apt+=(redis-server)
ldconfig -p 2>/dev/null | grep -q libEGL.so.1 || need_apt+=(libegl1)
ldconfig -p 2>/dev/null | grep -q libxkbcommon.so.0 || need_apt+=(libxkbcommon0)
ldconfig -p 2>/dev/null | grep -q libfontconfig.so.1 || need_apt+=(libfontconfig1)
ldconfig -p 2>/dev/null | grep -q libdbus-1.so.3 || need_apt+=(libdbus-1-3)
if [ ${#need_apt[@]} -gt 0 ] && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  echo "installing system packages: ${need_apt[*]}"
  apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# Third-party MCP servers nobody here wrote, for the integration tests.
if command -v npm >/dev/null && [ ! -d tests/node/node_modules/@modelcontextprotocol/server-memory ]; then
  echo "installing npm MCP servers for the integration tests"
  npm install --silent --no-audit --no-fund --prefix tests/node \
    @modelcontextprotocol/server-memory @modelcontextprotocol/server-filesystem >/dev/null
fi

echo "== ruff"; ruff check .
echo "== mypy"; mypy engine app
echo "== pytest"
export QT_QPA_PLATFORM=offscreen
python -m pytest -q -p no:cacheprovider "$@"
