#!/usr/bin/env bash
# Builds the C++ library of the ONNX release that pyproject.toml pins (the same version as the
# Python `onnx` package), from that release's source distribution on PyPI, and installs it into
# a cache outside the checkout, shared by every build and checkout on this machine:
#   ${GRAPHSUB_DEPS_DIR:-~/.cache/graphsub}/onnx-VERSION-protobufPROTOC
# Quick when it is there already (a stamp file marks a complete install). Prints the prefix.
# Needs: a pip and a cmake >= 3.26 (the project venv's), Debian's protobuf (libprotobuf-dev).
#   scripts/build_onnx.sh [PYTHON]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
python=${1:-$root/.venv/bin/python}
version=$(sed -n 's/^ *"onnx==\([0-9.]*\)".*/\1/p' "$root/pyproject.toml" | head -1)
[ -n "$version" ] || { echo "build_onnx: no onnx==VERSION pin in $root/pyproject.toml" >&2; exit 1; }
protoc_version=$(protoc --version | awk '{print $2}')
prefix=${GRAPHSUB_DEPS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/graphsub}/onnx-$version-protobuf$protoc_version
if [ -f "$prefix/.complete" ]; then echo "$prefix"; exit 0; fi

work=$(mktemp -d "${TMPDIR:-/tmp}/graphsub-onnx.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "build_onnx: building ONNX $version's C++ library into $prefix (a few minutes, once)" >&2
"$python" -m pip download -q --no-deps --no-binary onnx "onnx==$version" -d "$work" >&2
tar xzf "$work/onnx-$version.tar.gz" -C "$work"
cmake=$(dirname "$python")/cmake; [ -x "$cmake" ] || cmake=cmake
# Static, position-independent libraries against Debian's shared protobuf: linked into the CLI
# and into the Python module alike. ONNX_ML: the onnx-ml.proto schema, as the PyPI wheel has.
"$cmake" -S "$work/onnx-$version" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DBUILD_SHARED_LIBS=OFF -DONNX_ML=ON \
  -DONNX_USE_PROTOBUF_SHARED_LIBS=ON -DONNX_BUILD_PYTHON=OFF -DONNX_BUILD_TESTS=OFF \
  -DONNX_GEN_PB_TYPE_STUBS=OFF -DONNX_NAMESPACE=onnx -DCMAKE_INSTALL_PREFIX="$prefix" >&2
"$cmake" --build "$work/build" -j"$(nproc)" >&2
rm -rf "$prefix"
"$cmake" --install "$work/build" >&2
touch "$prefix/.complete"
echo "$prefix"
