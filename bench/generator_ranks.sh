#!/usr/bin/env bash
# Generation on 1 and on 2 MPI ranks of this machine, alternated: wall time, each rank's time
# and peak memory, and whether both write the same library.
#
#   bench/generator_ranks.sh [--max-ops N] [--runs K] [--out DIR] [--kill-after S]
#
# Runs the shipped library's command (rules/default.rules header: TASO's operator set) at
# --max-ops N (default 4), one thread per rank, as 1 rank (no mpirun) and as 2 ranks
# (mpirun -np 2), K times each (default 1), alternating which goes first. Prints per run the
# wall time, the per-rank figures graphsub prints and the peak resident memory of the
# largest rank, then the ratios of the medians, and checks the libraries are byte-identical.
# With --kill-after S: instead, a 2-rank run with a kept run folder whose rank 1 is killed
# (SIGKILL) S seconds in, then the same command again, which must write the same library as
# an uninterrupted 2-rank run and run only the lost shares again (its log says which it found).
set -euo pipefail
cd "$(dirname "$0")/.."

n=4 runs=1 out=build/generator_ranks kill_after=""
while (($#)); do
  case "$1" in
    --max-ops) n=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --kill-after) kill_after=$2; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
bin=$(realpath "${BUILD_DIR:-build}/graphsub")
[[ -x $bin ]] || { echo "no $bin: build first" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 GRAPHSUB_DATA_DIR=$PWD
# The ranks share one machine: Open MPI's shared-memory transport. Its default network
# layers (UCX, libfabric) set up pools of about 130 MiB in every rank at start (an N = 4 run
# under `mpirun -np 1` held 1,060 MiB while enumerating, 926 MiB with these flags or without
# mpirun); on a cluster those layers carry the traffic and their pools add to each rank.
mca=(--mca pml ob1 --mca btl self,vader --mca mtl ^ofi)
flags=$(sed -n 2p rules/default.rules | sed 's/^;   graphsub generate //; s/ -o rules\/default.rules//; s/--max-ops 3/--max-ops '"$n"'/')
mkdir -p "$out"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown); flags: $flags --threads 1"

# run DIR RANKS [extra flags]: prints "wall_s max_rank_rss_kib" last.
run() {
  local dir=$1 ranks=$2; shift 2
  rm -rf "$dir" && mkdir -p "$dir"
  local t0 t1
  t0=$(date +%s.%N)
  if [[ $ranks == 1 ]]; then
    (cd "$dir" && /usr/bin/time -f "rss_kib %M" "$bin" generate $flags --threads 1 "$@" -o lib.rules) >"$dir/log" 2>&1
  else
    (cd "$dir" && mpirun -np "$ranks" --oversubscribe "${mca[@]}" /usr/bin/time -f "rss_kib %M" "$bin" generate $flags --threads 1 "$@" -o lib.rules) >"$dir/log" 2>&1
  fi
  t1=$(date +%s.%N)
  local rss
  rss=$(grep -o 'rss_kib [0-9]*' "$dir/log" | awk '{print $2}' | sort -n | tail -1)
  grep -E '^rank [0-9]+ of' "$dir/log" || true
  echo "$(echo "$t1 - $t0" | bc) $rss"
}

if [[ -n $kill_after ]]; then
  ref=$out/uninterrupted
  echo "uninterrupted 2-rank run: $(run "$ref" 2 | tail -1)"
  dir=$out/killed
  rm -rf "$dir" && mkdir -p "$dir"
  (cd "$dir" && mpirun -np 2 --oversubscribe "${mca[@]}" "$bin" generate $flags --threads 1 --run-dir run -o lib.rules >log1 2>&1 || true) &
  launcher=$!
  sleep "$kill_after"
  victim=$(pgrep -f "graphsub generate .*--run-dir run" | sort -n | tail -1)
  echo "killing rank process $victim at ${kill_after} s; run folder then: $(ls "$dir/run" | tr '\n' ' ')"
  kill -9 "$victim"
  wait "$launcher" || true
  echo "after the kill: $(ls "$dir/run" | tr '\n' ' ')"
  t0=$(date +%s.%N)
  (cd "$dir" && mpirun -np 2 --oversubscribe "${mca[@]}" "$bin" generate $flags --threads 1 --run-dir run -o lib.rules >log2 2>&1)
  echo "rerun: $(echo "$(date +%s.%N) - $t0" | bc) s"
  grep -E 'found in|not run again' "$dir/log2" || echo "(rerun found no kept share)"
  cmp "$ref/lib.rules" "$dir/lib.rules" && echo "rerun library: byte-identical to the uninterrupted run"
  exit 0
fi

declare -a one two
for k in $(seq 1 "$runs"); do
  for order in $([[ $((k % 2)) == 1 ]] && echo "1 2" || echo "2 1"); do
    r=$(run "$out/r$order.$k" "$order")
    echo "run $k, $order rank(s): $(echo "$r" | tail -1 | awk '{printf "%.1f s wall, largest rank %.0f MiB", $1, $2/1024}')"
    echo "$r" | grep '^rank' | sed 's/^/  /' || true
    if [[ $order == 1 ]]; then one+=("$(echo "$r" | tail -1)"); else two+=("$(echo "$r" | tail -1)"); fi
  done
  cmp "$out/r1.$k/lib.rules" "$out/r2.$k/lib.rules" && echo "  run $k: byte-identical libraries"
done
med() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
w1=$(printf '%s\n' "${one[@]}" | awk '{print $1}' | med) w2=$(printf '%s\n' "${two[@]}" | awk '{print $1}' | med)
m1=$(printf '%s\n' "${one[@]}" | awk '{print $2}' | med) m2=$(printf '%s\n' "${two[@]}" | awk '{print $2}' | med)
echo "medians: 1 rank ${w1} s, ${m1} KiB; 2 ranks ${w2} s, ${m2} KiB (largest rank)"
echo "2 ranks / 1 rank: wall $(echo "scale=3; $w2 / $w1" | bc), peak memory per rank $(echo "scale=3; $m2 / $m1" | bc)"
