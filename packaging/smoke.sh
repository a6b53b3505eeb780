#!/usr/bin/env bash
# Smoke test of the desktop bundle (packaging/build.sh) as a user would run it: version,
# index a small git repository, search it (the built-in servers run from the bundle,
# in the background engine the first search starts and the second attaches to),
# `serve` answering an MCP initialize and listing its tools, the desktop app
# started offscreen and closed, and install.sh run in a temporary HOME (the command
# linked from ~/.local/bin, the desktop entry's Exec at the installed executable, the
# icon). Any `python` on PATH is a trap: the bundle must never need one. Nothing is
# written outside a temporary folder.
#
# Usage: packaging/smoke.sh [BUNDLE]   (a bundle's tarball, unpacked first, or its folder;
#                                      default: the tarball build.sh made last)
set -euo pipefail
cd "$(dirname "$0")/.."
MAX_MB=400  # the unpacked bundle's size limit
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tributary-smoke.XXXXXX")
GUI_PID=""
SERVE_PID=""
cleanup() {
  [ -z "${EXE:-}" ] || "$EXE" engine stop > /dev/null 2>&1 || true
  for pid in $GUI_PID $SERVE_PID; do
    if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid"; fi
  done
  rm -rf "$WORK"
}
trap cleanup EXIT
fail() { echo "smoke: FAILED: $*" >&2; exit 1; }
step() { echo "smoke: $*"; }

BUNDLE=${1:-$(ls -t dist/tributary-*.tar.gz 2>/dev/null | head -n 1)}
[ -n "$BUNDLE" ] || fail "no bundle: run packaging/build.sh first"
if [ -f "$BUNDLE" ]; then
  step "unpacking $BUNDLE"
  mkdir "$WORK/unpacked"
  tar -C "$WORK/unpacked" -xzf "$BUNDLE"
  BUNDLE="$WORK/unpacked/tributary"
fi
BUNDLE=$(cd "$BUNDLE" && pwd)
EXE="$BUNDLE/tributary"
SIZE_MB=$(du -sm "$BUNDLE" | cut -f1)
[ "$SIZE_MB" -le "$MAX_MB" ] || fail "the bundle is $SIZE_MB MB unpacked (limit $MAX_MB)"

mkdir -p "$WORK/bin"
for name in python python3; do
  printf '#!/bin/sh\necho "$0 $*" >> "%s/python-called"\nexit 97\n' "$WORK" > "$WORK/bin/$name"
  chmod +x "$WORK/bin/$name"
done
export PATH="$WORK/bin:$PATH" TRIBUTARY_HOME="$WORK/home" XDG_CACHE_HOME="$WORK/cache"
export QT_QPA_PLATFORM=offscreen
unset PYTHONPATH PYTHONHOME TRIBUTARY_MODEL_CACHE TRIBUTARY_ONNX_MODEL TRIBUTARY_CONFIG

step "version"
"$EXE" --version | grep -q '^tributary ' || fail "--version"

step "index add"
REPO="$WORK/repo"
mkdir -p "$REPO/src/billing" "$REPO/src/net"
cat > "$REPO/src/billing/invoice.py" <<'PY'
def invoice_total(items, tax_rate):
    """Compute the invoice total including tax."""
    return sum(item.price * item.quantity for item in items) * (1 + tax_rate)
PY
cat > "$REPO/src/net/fetch.py" <<'PY'
import urllib.request


def fetch_page(url):
    """Download a web page and return its text."""
    with urllib.request.urlopen(url) as response:
        return response.read().decode()
PY
git -C "$REPO" init -q
git -C "$REPO" add .
git -C "$REPO" -c user.name=smoke -c user.email=smoke@example.invalid commit -q -m "Add invoice totals and page fetching"
"$EXE" index add "$REPO" > "$WORK/index.log" 2>&1 || { cat "$WORK/index.log"; fail "index add"; }

step "search"
"$EXE" search "compute the invoice total with tax" > "$WORK/search.log" 2>&1 || { cat "$WORK/search.log"; fail "search"; }
grep -q '^1 .*src/billing/invoice.py' "$WORK/search.log" || { cat "$WORK/search.log"; fail "search: first hit"; }
grep -q 'files: ok' "$WORK/search.log" || { cat "$WORK/search.log"; fail "search: files server"; }

step "background engine"
grep -q 'started an engine in the background' "$WORK/search.log" || { cat "$WORK/search.log"; fail "search: no background engine"; }
"$EXE" search "fetch a web page" > "$WORK/search2.log" 2>&1 || { cat "$WORK/search2.log"; fail "second search"; }
grep -q 'answered by the running engine' "$WORK/search2.log" || { cat "$WORK/search2.log"; fail "second search: not attached"; }
grep -q '^1 .*src/net/fetch.py' "$WORK/search2.log" || { cat "$WORK/search2.log"; fail "second search: first hit"; }
"$EXE" engine stop | grep -q 'stopped the background engine' || fail "engine stop"

step "serve"
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"smoke","version":"0"}}}'
READY='{"jsonrpc":"2.0","method":"notifications/initialized"}'
LIST='{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
mkfifo "$WORK/serve.in"
"$EXE" serve < "$WORK/serve.in" > "$WORK/serve.out" 2> "$WORK/serve.err" &
SERVE_PID=$!
exec 3> "$WORK/serve.in"
printf '%s\n%s\n%s\n' "$INIT" "$READY" "$LIST" >&3
for _ in $(seq 240); do  # until both answers are in (the server starts its sources too)
  grep -q '"id":2' "$WORK/serve.out" && break
  kill -0 "$SERVE_PID" 2>/dev/null || break
  sleep 0.5
done
exec 3>&-  # end of input: the server exits
for _ in $(seq 60); do kill -0 "$SERVE_PID" 2>/dev/null || break; sleep 0.5; done
kill -0 "$SERVE_PID" 2>/dev/null && fail "serve: still running 30 s after its input ended"
wait "$SERVE_PID" || true
SERVE_PID=""
grep -q '"serverInfo"' "$WORK/serve.out" || { cat "$WORK/serve.err"; fail "serve: initialize"; }
grep -q '"name":"search"' "$WORK/serve.out" || { cat "$WORK/serve.out" "$WORK/serve.err"; fail "serve: tools/list"; }

step "gui (offscreen)"
"$EXE" gui > "$WORK/gui.log" 2>&1 &
GUI_PID=$!
# The running app listens on a local socket named for the user and the Tributary home.
SOCKET="${TMPDIR:-/tmp}/tributary-$(printf '%s' "$(id -un):$TRIBUTARY_HOME" | sha1sum | cut -c1-12)"
for _ in $(seq 120); do
  [ -S "$SOCKET" ] && break
  kill -0 "$GUI_PID" 2>/dev/null || { cat "$WORK/gui.log"; fail "gui exited early"; }
  sleep 0.5
done
[ -S "$SOCKET" ] || { cat "$WORK/gui.log"; fail "gui: no instance socket after 60 s"; }
kill -TERM "$GUI_PID"
status=0
wait "$GUI_PID" || status=$?
GUI_PID=""
[ "$status" = 0 ] || { cat "$WORK/gui.log"; fail "gui: exit status $status"; }
grep -q "shut down" "$WORK/gui.log" || { cat "$WORK/gui.log"; fail "gui: no clean shutdown"; }

step "install.sh (in a temporary HOME)"
USER_HOME="$WORK/user home"  # a space: the desktop entry must quote the path
mkdir -p "$USER_HOME"
[ -x "$BUNDLE/install.sh" ] || fail "install.sh: not in the bundle"
HOME="$USER_HOME" XDG_DATA_HOME="" PREFIX="" "$BUNDLE/install.sh" > "$WORK/install.log" 2>&1 \
  || { cat "$WORK/install.log"; fail "install.sh"; }
INSTALLED="$USER_HOME/.local/lib/tributary/tributary"
ENTRY="$USER_HOME/.local/share/applications/tributary.desktop"
[ -f "$ENTRY" ] || fail "install.sh: no desktop entry"
grep -qxF "Exec=\"$INSTALLED\" gui" "$ENTRY" || { cat "$ENTRY"; fail "install.sh: Exec does not run $INSTALLED"; }
if command -v desktop-file-validate >/dev/null 2>&1; then
  desktop-file-validate "$ENTRY" || fail "install.sh: desktop-file-validate"
fi
[ -f "$USER_HOME/.local/share/icons/hicolor/scalable/apps/tributary.svg" ] || fail "install.sh: no icon"
"$USER_HOME/.local/bin/tributary" --version | grep -q '^tributary ' || fail "installed: --version via ~/.local/bin"
"$INSTALLED" --version | grep -q '^tributary ' || fail "installed: --version"

[ ! -e "$WORK/python-called" ] || { cat "$WORK/python-called"; fail "the bundle ran a Python from PATH"; }
echo "smoke: all passed ($SIZE_MB MB unpacked)"
