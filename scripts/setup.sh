#!/usr/bin/env bash
# Create .venv and install Tributary with its CPU-only PyTorch.
#
# torch is installed first and on its own: left to the resolver, sentence-transformers
# pulls a CUDA build of several GB that a CPU-only code search never uses. A CPU wheel
# already available to pip (a local wheelhouse) is preferred; otherwise PyTorch's own
# CPU index is used.
#
# Usage: scripts/setup.sh [--dev]     (--dev adds the test and lint tools)
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3}
VENV=${TRIBUTARY_VENV:-.venv}
TORCH_VERSION=${TORCH_VERSION:-2.13.0}
TORCH_CPU_INDEX=${TORCH_CPU_INDEX:-https://download.pytorch.org/whl/cpu}

if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV"
fi
PIP="$VENV/bin/python -m pip"
$PIP install --quiet --upgrade pip setuptools wheel

if ! "$VENV/bin/python" -c "import torch" 2>/dev/null; then
  # A local CPU wheel is taken alone first (its dependencies are not local), then its
  # dependencies come from the usual index with torch already satisfied.
  if $PIP install --quiet --no-index --no-deps "torch==$TORCH_VERSION" 2>/dev/null; then
    $PIP install --quiet "torch==$TORCH_VERSION"
  else
    case "$(uname -s)" in
      Darwin) $PIP install --quiet "torch==$TORCH_VERSION" ;;  # macOS wheels are CPU/MPS only
      *) $PIP install --quiet "torch==$TORCH_VERSION" --index-url "$TORCH_CPU_INDEX" ;;
    esac
  fi
fi

if [ "${1:-}" = "--dev" ]; then
  $PIP install --quiet -e ".[dev]"
else
  $PIP install --quiet -e .
fi
"$VENV/bin/python" -c "import torch; assert not torch.version.cuda, 'a CUDA build of torch was installed'; print('torch', torch.__version__, 'CPU')"
# The default embedder runs the packaged MiniLM as an int8 ONNX model, made once per
# machine from the wheel's weights (~20 s); without this step the first index or search
# would make it.
"$VENV/bin/python" -m engine.index.onnx_model

# The desktop app's Qt (from PyPI) needs X client libraries a fresh Debian/Ubuntu may
# lack; without them `tributary gui` stops with a message naming them. Installed here
# where apt-get exists and we are root; otherwise the command to run is printed.
missing_libs=$("$VENV/bin/python" -m app.desktop_libs || true)
if [ -n "$missing_libs" ] && [ "$(uname -s)" = Linux ]; then
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    echo "installing the X libraries the desktop app needs:" $missing_libs
    # Not fatal: the command line and the MCP server work without them.
    { apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing_libs >/dev/null; } \
      || echo "could not install them; the desktop app needs: apt-get install" $missing_libs
  else
    echo "the desktop app needs system libraries this machine lacks; on Debian or Ubuntu:"
    echo "  sudo apt-get install" $missing_libs
  fi
fi
