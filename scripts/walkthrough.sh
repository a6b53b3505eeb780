#!/usr/bin/env bash
# Replay a session with real MCP servers under a virtual display, saving screenshots.
#
#   scripts/walkthrough.sh [WIDTHxHEIGHT] [SCALE]     e.g. 1024x640, or 1366x768 1.5
#
# Needs (Debian): xvfb openbox xdotool imagemagick. Optional servers, installed once:
#   npm install --prefix "$WORK/mcpnode" @modelcontextprotocol/server-everything
#   python3 -m venv "$WORK/mcpvenv" && "$WORK/mcpvenv/bin/pip" install mcp-server-time mcp-server-fetch
# with WORK=${TRIBUTARY_WALK:-/tmp/tributary-walk}. Screenshots go to out/walkthrough/.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE=${1:-1366x768}
SCALE=${2:-1}
WORK=${TRIBUTARY_WALK:-/tmp/tributary-walk}
OUT=out/walkthrough
BIN=$PWD/.venv/bin
export TRIBUTARY_HOME="$WORK/home-$SIZE-$SCALE" TRIBUTARY_KEYRING=file
mkdir -p "$WORK" "$OUT"
rm -rf "$TRIBUTARY_HOME" "$WORK/demo-repo"
"$BIN/python" -c "import sys; sys.path.insert(0, 'scripts'); import screenshots, pathlib; screenshots.build_fixture(pathlib.Path(sys.argv[1]))" "$WORK"
"$BIN/python" scripts/walkthrough_home.py "$TRIBUTARY_HOME" "$WORK"
"$BIN/tributary" index add "$WORK/demo-repo" >/dev/null

DISPLAY_NO=${TRIBUTARY_WALK_DISPLAY:-:77}
Xvfb "$DISPLAY_NO" -screen 0 "${SIZE}x24" >/dev/null 2>&1 & xvfb=$!
sleep 1
export DISPLAY=$DISPLAY_NO
openbox >/dev/null 2>&1 & wm=$!
QT_SCALE_FACTOR=$SCALE "$BIN/tributary" gui >"$WORK/gui.log" 2>&1 & gui=$!
trap 'kill $gui $wm $xvfb 2>/dev/null || true' EXIT
sleep 8
shot() { import -window root "$OUT/$1-$SIZE-x$SCALE.png"; echo "saved $OUT/$1-$SIZE-x$SCALE.png"; }
ask() { xdotool key ctrl+a; xdotool type --delay 15 "$1"; xdotool key Return; }

ask "how are routing rules matched"; sleep 1; shot searching   # the chips, "waiting for …"
sleep 6; shot answered
ask "why were routing rules added"; sleep 6; shot history      # commits first, said so
for i in 1 2 3 4 5 6; do                                      # many toggles between searches
  ask "routing rule $i"; sleep 1
  "$BIN/tributary" toggle --quick
done
sleep 1; shot popup
"$BIN/tributary" toggle --quick
xdotool key ctrl+2; sleep 0.5; xdotool key ctrl+1
shot after-toggles
grep -E "Traceback|Error" "$WORK/gui.log" || echo "no errors in the app's log"
