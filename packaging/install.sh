#!/bin/sh
# Install this unpacked Tributary bundle for the current user, under ~/.local: the
# bundle is copied to ~/.local/lib/tributary, ~/.local/bin/tributary links to its
# executable, and the desktop entry (its Exec lines pointing at that executable, so
# the launcher needs no PATH) and the icon go where desktops look for them.
# Running it again (for example from a newer bundle) replaces the installed copy.
#
# Usage: ./install.sh              install (PREFIX=DIR instead of ~/.local)
#        ./install.sh --uninstall  remove what install put there
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
PREFIX=${PREFIX:-$HOME/.local}
DATA=${XDG_DATA_HOME:-$PREFIX/share}
DEST=$PREFIX/lib/tributary
BIN=$PREFIX/bin/tributary
ENTRY=$DATA/applications/tributary.desktop
ICON=$DATA/icons/hicolor/scalable/apps/tributary.svg

refresh() {  # menus and icon caches, where the desktop has the tools; optional
  command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database -q "$DATA/applications" || true
  command -v gtk-update-icon-cache >/dev/null 2>&1 && gtk-update-icon-cache -q -t "$DATA/icons/hicolor" || true
}

if [ "${1:-}" = "--uninstall" ]; then
  rm -f "$BIN" "$ENTRY" "$ICON"
  rm -rf "$DEST"
  refresh
  echo "Tributary removed from $PREFIX (your config and indexes are kept)"
  exit 0
fi
[ $# -eq 0 ] || { echo "usage: $0 [--uninstall]" >&2; exit 2; }
[ -x "$HERE/tributary" ] || { echo "install.sh: no tributary executable beside it in $HERE" >&2; exit 1; }
# The desktop entry's Exec="PATH" keeps a path with spaces one word; characters it
# would need escaped twice over are refused before anything is changed.
case "$DEST" in
  *[\\\"\`\$%]*) echo "install.sh: $DEST holds one of \\ \" \` \$ %; choose another PREFIX" >&2; exit 1 ;;
esac

# The new copy is made beside the old one and swapped in, so a failed copy leaves the
# installed version as it was.
if [ "$HERE" != "$DEST" ]; then
  mkdir -p "$PREFIX/lib"
  rm -rf "$DEST.new"
  cp -R "$HERE" "$DEST.new"
  rm -rf "$DEST.old"
  if [ -e "$DEST" ]; then mv "$DEST" "$DEST.old"; fi
  mv "$DEST.new" "$DEST"
  rm -rf "$DEST.old"
fi

mkdir -p "$(dirname "$BIN")" "$(dirname "$ENTRY")" "$(dirname "$ICON")"
ln -sfn "$DEST/tributary" "$BIN"
# sed's own & and | are escaped in the replacement.
QUOTED=$(printf '%s' "$DEST/tributary" | sed -e 's/[&|]/\\&/g')
sed -e "s|^Exec=tributary |Exec=\"$QUOTED\" |" "$HERE/tributary.desktop" > "$ENTRY.tmp"
mv "$ENTRY.tmp" "$ENTRY"
cp "$HERE/tributary.svg" "$ICON.tmp"
mv "$ICON.tmp" "$ICON"
refresh

echo "Tributary installed in $DEST"
echo "  command:       $BIN"
echo "  desktop entry: $ENTRY"
case ":$PATH:" in
  *":$PREFIX/bin:"*) ;;
  *) echo "  $PREFIX/bin is not on your PATH: add it to run 'tributary' by name" ;;
esac
