#!/usr/bin/env bash
# Builds the libFuzzer target of graphsub's ONNX path (import, optimize, check, export;
# fuzz/fuzz_harness.h) with clang (ASan + UBSan + libFuzzer instrumentation on all of
# graphsub) and runs it for a bounded time on the seed corpus.
#   fuzz/run_fuzz.sh [SECONDS [LIBFUZZER FLAGS...]]     default 60 s
# Needs clang and libclang-rt-14-dev (Debian). Inputs that crash are written to
# build-fuzz/artifacts/; copy them into fuzz/corpus/ once fixed (tests replay that folder).
# The seeds are written by fuzz/make_seeds.py (one per imported operator, external data).
# CI runs a fixed seed and run count (scripts/test.sh), so its verdict can be reproduced.
# To look for new failures, run longer with other seeds and keep going past crashes:
#   fuzz/run_fuzz.sh 1800 -seed=7 -fork=1 -ignore_crashes=1
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
build=${FUZZ_BUILD_DIR:-build-fuzz}
# The project venv's CMake (ONNX's build needs 3.26; Debian 12 has 3.25), as in scripts/test.sh.
cmake=cmake; [ -x .venv/bin/cmake ] && cmake=.venv/bin/cmake
# -O1 -g1 as in the sanitizer suite: far quicker to build than -O2 -g.
"$cmake" -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
  -DCMAKE_CXX_COMPILER=clang++ \
  -DGRAPHSUB_FUZZ=ON -DGRAPHSUB_BENCH=OFF >/dev/null
"$cmake" --build "$build" -j"$(nproc)" --target fuzz_onnx_import
mkdir -p "$build/corpus" "$build/artifacts"
cp -n fuzz/corpus/* "$build/corpus/" 2>/dev/null || true
# Leak checking is off: protobuf and ONNX's schema registry keep process-lifetime allocations.
# -rss_limit_mb: the harness lowers the importer's tensor limits, so inputs stay far below it.
ASAN_OPTIONS=detect_leaks=0 "$build/fuzz/fuzz_onnx_import" "$build/corpus" \
  -max_total_time="$seconds" -timeout=30 -rss_limit_mb=4096 -max_len=65536 \
  -artifact_prefix="$build/artifacts/" -print_final_stats=1 "$@"
