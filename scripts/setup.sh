#!/usr/bin/env bash
# Installs everything graphsub needs on Debian 12 (idempotent: quick when already there),
# builds it, and runs the main job on a built-in model.
#   scripts/setup.sh            install + build + optimize the built-in SqueezeNet
#   scripts/setup.sh --no-run   install + build only
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  build-essential cmake pkg-config git
  libz3-dev libonnx-dev libprotobuf-dev protobuf-compiler
  libdnnl-dev ocl-icd-opencl-dev
  libgtest-dev libgmock-dev libcli11-dev libfmt-dev nlohmann-json3-dev
  libxxhash-dev libgoogle-perftools-dev
  clang libclang-rt-14-dev   # the sanitizer suite and fuzz/run_fuzz.sh (one clang build)
  python3-torch python3-torchvision python3-onnx
  python3-dev pybind11-dev python3-pytest   # the Python module (python/) and its tests
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

BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD_DIR" -j"$(nproc)"

# `import graphsub` for Debian's /usr/bin/python3: a .pth file in its site folder names this
# checkout's build/python, where the module is built (run setup again after moving the
# checkout; the last checkout set up is the one imported). docs/python.md.
py_site=$(/usr/bin/python3 -c 'import site; print(site.getsitepackages()[0])')
py_dir=$(cd "$BUILD_DIR/python" && pwd)
if [ "$(cat "$py_site/graphsub.pth" 2>/dev/null)" != "$py_dir" ]; then
  $SUDO mkdir -p "$py_site"
  echo "$py_dir" | $SUDO tee "$py_site/graphsub.pth" >/dev/null
  echo "setup: import graphsub now loads $py_dir (via $py_site/graphsub.pth)"
fi

if [ "${1:-}" != "--no-run" ]; then
  # The main job: optimize a built-in model with the shipped rules, check the result on
  # random inputs, and time original and optimized graphs on the fast executor.
  "$BUILD_DIR"/graphsub optimize --model squeezenet
fi
