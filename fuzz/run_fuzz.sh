#!/usr/bin/env bash
# Builds the ONNX importer's libFuzzer target with clang (ASan + UBSan + libFuzzer
# instrumentation on all of graphsub) and runs it for a bounded time on the seed corpus.
#   fuzz/run_fuzz.sh [SECONDS]     default 60
# Needs clang and libclang-rt-14-dev (Debian). Inputs that crash are written to
# build-fuzz/artifacts/; copy them into fuzz/corpus/ once fixed (tests replay that folder).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
build=${FUZZ_BUILD_DIR:-build-fuzz}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
  -DGRAPHSUB_FUZZ=ON -DGRAPHSUB_BENCH=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target fuzz_onnx_import
mkdir -p "$build/corpus" "$build/artifacts"
cp -n fuzz/corpus/* "$build/corpus/" 2>/dev/null || true
# Leak checking is off: protobuf and ONNX's schema registry keep process-lifetime allocations.
ASAN_OPTIONS=detect_leaks=0 "$build/fuzz/fuzz_onnx_import" "$build/corpus" \
  -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -max_len=65536 \
  -artifact_prefix="$build/artifacts/" -print_final_stats=1
