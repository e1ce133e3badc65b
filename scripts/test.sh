#!/usr/bin/env bash
# Runs the whole test suite: a release build (g++), then the same suite under
# AddressSanitizer and UndefinedBehaviorSanitizer (clang, the build the fuzzer uses).
# Assumes scripts/setup.sh has installed the dependencies.
#   scripts/test.sh               release + sanitizer suites + 50000 fuzzing runs
#   scripts/test.sh --release     release suite only
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
VENV=$(cd "${GRAPHSUB_VENV:-.venv}" && pwd)  # absolute: the suites run from the build folders
cmake=$VENV/bin/cmake

# The Python tests import the installed package, as users do: this tree is installed first
# (quick after setup: ccache has the objects).
"$VENV/bin/pip" install -q --disable-pip-version-check --no-deps .
"$cmake" -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
"$cmake" --build build -j"$jobs"
(cd build && "$VENV/bin/ctest" --output-on-failure -j"$jobs")
scripts/check_pip_install.sh

if [ "${1:-}" != "--release" ]; then
  # One clang build with AddressSanitizer, UndefinedBehaviorSanitizer and libFuzzer's
  # instrumentation runs the suite and then a minute of fuzzing: the same configuration as
  # fuzz/run_fuzz.sh, which finds it built. (A g++ sanitizer build beside a clang fuzzing
  # build compiled everything twice: 13 and 6 minutes of a 46-minute CI run.)
  # -O1 -g1: quicker to build than -O2 -g, and still gives sanitizer reports with line numbers.
  "$cmake" -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
    -DCMAKE_CXX_COMPILER=clang++ -DGRAPHSUB_FUZZ=ON -DGRAPHSUB_BENCH=OFF >/dev/null
  "$cmake" --build build-asan -j"$jobs"
  # Leak checking is off: Z3 and oneDNN keep process-lifetime allocations it would report.
  (cd build-asan && ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
    GRAPHSUB_SANITIZED=1 "$VENV/bin/ctest" --output-on-failure -j"$jobs")
  # Fuzzing the ONNX path (import, optimize, export) from the seed corpus; the corpus itself
  # is replayed by the suites above. A fixed seed and run count (about 40 s here) bound the
  # work on any machine and keep runs close (not equal: docs/onnx.md, "Fuzzing"). Exploring
  # with fresh seeds is done apart from CI (fuzz/run_fuzz.sh's header).
  FUZZ_BUILD_DIR=build-asan fuzz/run_fuzz.sh 600 -seed=1 -runs=50000
fi
