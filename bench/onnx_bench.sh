#!/usr/bin/env bash
# ONNX Runtime latency of original versus graphsub-optimized models.
#
#   bench/onnx_bench.sh [--out DIR] [--runs N] [--threads T] [--flags "OPTIMIZE FLAGS"] [MODEL ...]
#
# Models: the torchvision exports tv:resnet50 tv:resnext50_32x4d tv:squeezenet1_1
# tv:inception_v3 (random weights, full input sizes, tools/export_torchvision.py) and the
# built-in models written by `graphsub export-onnx` (resnet50 resnext50 nasnet_a nasrnn bert
# inception_v3 squeezenet vgg19). Default: all of them.
#
# For each model: `graphsub optimize orig.onnx -o opt.onnx` (import, search, numerical check,
# export with onnx::checker; its wall time is the "graphsub s" column), then
# tools/ort_crosscheck.js runs both files in ONNX Runtime with
# its graph optimizations fully on, on the same random inputs (outputs compared with rtol 1e-4,
# atol 1e-5) and timed alternately, N runs each (medians). Prints a Markdown table and the
# geometric-mean speedup. Needs a Release build in build/ (BUILD_DIR to change), node with
# onnxruntime-node (npm ci), and Debian's python3-torch / python3-torchvision.
set -euo pipefail
cd "$(dirname "$0")/.."

out=build/onnx_bench
runs=20
threads=1
flags=""
models=()
while (($#)); do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --flags) flags=$2; shift 2 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) models+=("$1"); shift ;;
  esac
done
if ((${#models[@]} == 0)); then
  models=(tv:resnet50 tv:resnext50_32x4d tv:squeezenet1_1 tv:inception_v3
          resnet50 resnext50 nasnet_a nasrnn bert inception_v3 squeezenet vgg19)
fi
bin=${BUILD_DIR:-build}/graphsub
[ -x "$bin" ] || { echo "onnx_bench: $bin not built (cmake --build build)" >&2; exit 2; }
mkdir -p "$out"

rows=()
first_orig=""
for m in "${models[@]}"; do
  if [[ $m == tv:* ]]; then
    name=${m#tv:}
    orig=$(/usr/bin/python3 tools/export_torchvision.py "$out/torchvision" "$name" | tail -1)
    label="torchvision $name"
  else
    name=$m
    orig="$out/builtin/$name.onnx"
    mkdir -p "$out/builtin"
    [ -f "$orig" ] || "$bin" -q export-onnx --model "$name" -o "$orig"
    label="built-in $name"
  fi
  [ -n "$first_orig" ] || first_orig=$orig
  opt="$out/opt/$(basename "$orig" .onnx).${m%%:*}.opt.onnx"
  mkdir -p "$out/opt"
  log="$out/opt/$(basename "$opt" .onnx).log"
  start=$(date +%s.%N)
  # shellcheck disable=SC2086
  if ! "$bin" optimize "$orig" -o "$opt" $flags >"$log" 2>&1; then
    echo "onnx_bench: optimizing $label failed; see $log" >&2
    tail -5 "$log" >&2
    rows+=("| $label | optimize failed | | | | |")
    continue
  fi
  secs=$(awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN { print a - b }')
  json="$out/opt/$(basename "$opt" .onnx).ort.json"
  node tools/ort_crosscheck.js "$orig" "$opt" --inputs 2 --time "$runs" --threads "$threads" \
    --json "$json" >/dev/null || true
  ops=$(grep -E '^total ' "$log" | awk '{print $2 " -> " $3}')
  rows+=("$(node -e '
    const r = require(process.argv[1]);
    const t = r.timing || {};
    const diff = Math.max(...r.outputs.map((o) => o.maxAbs));
    console.log(`| ${process.argv[2]} | ${process.argv[3]} | ${Number(process.argv[4]).toFixed(1)} | ` +
      `${t.originalMs.toFixed(2)} | ${t.optimizedMs.toFixed(2)} | ${t.speedup.toFixed(3)}x | ` +
      `${r.ok ? "yes" : "NO"} (${diff.toExponential(1)}) |`);
  ' "$(realpath "$json")" "$label" "$ops" "$secs")")
  echo "${rows[-1]}" >&2
done

# Noise control: the first model against itself, timed the same way.
control=""
if [ -n "$first_orig" ]; then
  node tools/ort_crosscheck.js "$first_orig" "$first_orig" --inputs 1 --time "$runs" \
    --threads "$threads" --json "$out/control.json" >/dev/null || true
  control=$(node -e 'const t = require(process.argv[1]).timing;
    console.log(`${t.originalMs.toFixed(2)} ms vs ${t.optimizedMs.toFixed(2)} ms, ratio ${t.speedup.toFixed(3)}x`)' \
    "$(realpath "$out/control.json")")
fi

echo
echo "ONNX Runtime $(node -e 'console.log(require("onnxruntime-node").env.versions.common)'), graph optimizations all, $threads intra-op thread(s), median of $runs alternated runs; $(date -u +%Y-%m-%d), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| model | operators (graphsub) | graphsub s | original ms | optimized ms | speedup | outputs match (max abs diff) |"
echo "|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
printf '%s\n' "${rows[@]}" | node -e '
  const lines = require("fs").readFileSync(0, "utf8").trim().split("\n");
  const s = lines.map((l) => l.match(/\| ([0-9.]+)x \|/)).filter(Boolean).map((m) => Number(m[1]));
  if (s.length) {
    const g = Math.exp(s.reduce((a, x) => a + Math.log(x), 0) / s.length);
    console.log(`\ngeometric-mean speedup over ${s.length} models: ${g.toFixed(3)}x`);
  }'
[ -z "$control" ] || echo "noise control ($(basename "$first_orig") against itself): $control"
