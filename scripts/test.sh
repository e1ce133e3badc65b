#!/usr/bin/env bash
# Runs the whole test suite: a release build, then the same suite under AddressSanitizer
# and UndefinedBehaviorSanitizer. Assumes scripts/setup.sh has installed the dependencies.
#   scripts/test.sh               release + sanitizer suites + 60 s of fuzzing
#   scripts/test.sh --release     release suite only
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$jobs"
(cd build && ctest --output-on-failure -j"$jobs")

if [ "${1:-}" != "--release" ]; then
  # -O1 -g1: quicker to build than -O2 -g, and still gives sanitizer reports with line numbers.
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
    -DGRAPHSUB_SANITIZE=ON >/dev/null
  cmake --build build-asan -j"$jobs"
  # Leak checking is off: Z3 and oneDNN keep process-lifetime allocations it would report.
  (cd build-asan && ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
    GRAPHSUB_SANITIZED=1 ctest --output-on-failure -j"$jobs")
  # A minute of fuzzing the ONNX path (import, optimize, export) from the seed corpus; the
  # corpus itself is replayed by the suites above.
  fuzz/run_fuzz.sh 60
fi
