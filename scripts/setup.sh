#!/usr/bin/env bash
# Installs everything graphsub needs on Debian 12 (idempotent: quick when already there),
# builds it, and runs the main job on a built-in model.
#   scripts/setup.sh            install + build + optimize the built-in SqueezeNet
#   scripts/setup.sh --no-run   install + build only
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  build-essential cmake pkg-config git ccache
  libz3-dev libprotobuf-dev protobuf-compiler
  libdnnl-dev ocl-icd-opencl-dev
  libgtest-dev libgmock-dev libcli11-dev libfmt-dev nlohmann-json3-dev
  libxxhash-dev libgoogle-perftools-dev
  clang libclang-rt-14-dev libomp-14-dev   # the sanitizer suite and fuzz/run_fuzz.sh (clang)
  python3-dev python3-venv   # the project's virtual environment (.venv) and the module
  libopenmpi-dev openmpi-bin  # generation on the ranks of an MPI job (mpirun)
)
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then missing+=(nodejs npm); fi
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# ONNX Runtime for cross-checks (the plain install tries a download that fails offline).
if [ -f package.json ] && [ ! -d node_modules/onnxruntime-node ]; then
  ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund --loglevel=error
fi

# The project's virtual environment: every Python package pinned in pyproject.toml (onnx,
# onnxruntime, torch, transformers, timm, onnxscript, pytest, the build tools), from PyPI.
# Nothing is written into a system interpreter's site folder.
VENV=${GRAPHSUB_VENV:-.venv}
[ -x "$VENV/bin/python" ] || /usr/bin/python3 -m venv "$VENV"
build_pins=$(sed -n 's/^requires = \[\(.*\)\]/\1/p' pyproject.toml | tr -d '",')
# shellcheck disable=SC2086
"$VENV/bin/pip" install -q --disable-pip-version-check $build_pins
# ONNX's C++ library, the same release as the Python onnx, built once into ~/.cache/graphsub.
scripts/build_onnx.sh "$VENV/bin/python" >/dev/null

# graphsub itself, as users install it: `pip install .` builds the C++ core (scikit-build-core)
# and installs the module and the `graphsub` command into the venv, with the dev extras
# (ccache shares the compiled objects with the build/ tree of scripts/test.sh).
"$VENV/bin/pip" install -q --disable-pip-version-check ".[dev]"

BUILD_DIR=${BUILD_DIR:-build}
"$VENV/bin/cmake" -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
"$VENV/bin/cmake" --build "$BUILD_DIR" -j"$(nproc)"

if [ "${1:-}" != "--no-run" ]; then
  # The main job: optimize a built-in model with the shipped rules, check the result on
  # random inputs, and time original and optimized graphs on the fast executor.
  "$VENV/bin/graphsub" optimize --model squeezenet
fi
