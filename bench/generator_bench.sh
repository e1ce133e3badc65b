#!/usr/bin/env bash
# Generator stage counts, times and peak memory at N = 3 (and N = 4 with --n4).
#
#   bench/generator_bench.sh [--n4] [--runs N] [--out DIR]
#
# Runs `graphsub generate --max-ops N --seed 1` N times (default 1) per
# size, each under `ulimit -v 8388608` (the issue's 8 GiB bound) and /usr/bin/time, and prints
# per run: the stage table graphsub prints, wall and processor time, peak resident memory,
# and whether the library is byte-identical to the first run's (apart from the -o path in
# its header). N = 3 takes about 12 s on two idle cores, N = 4 about 8 to 9 minutes. Prints the
# machine and date first. Needs a Release build in build/ (BUILD_DIR to change).
set -euo pipefail
cd "$(dirname "$0")/.."

out=build/generator_bench
runs=1
sizes=(3)
while (($#)); do
  case "$1" in
    --n4) sizes=(3 4); shift ;;
    --runs) runs=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
bin=${BUILD_DIR:-build}/graphsub
[[ -x $bin ]] || { echo "no $bin: build first (cmake --build build)" >&2; exit 1; }
mkdir -p "$out"

echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)," \
  "$(free -g | awk '/Mem:/ {print $2}') GiB; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"

for n in "${sizes[@]}"; do
  first=""
  for r in $(seq 1 "$runs"); do
    lib=$out/n$n.run$r.rules
    echo
    echo "== N = $n, run $r: $bin generate --max-ops $n --seed 1 -o $lib"
    (
      ulimit -v 8388608
      /usr/bin/time -f 'wall %e s, user %U s, system %S s, peak %M KiB' \
        "$bin" generate --max-ops "$n" --seed 1 -o "$lib"
    ) 2>&1 | grep -vE '^prover |^  \('
    if [[ -z $first ]]; then
      first=$lib
    elif cmp -s <(grep -v '^;   graphsub generate' "$first") <(grep -v '^;   graphsub generate' "$lib"); then
      echo "library byte-identical to run 1"
    else
      echo "library DIFFERS from run 1" >&2
      exit 1
    fi
  done
done
