#!/usr/bin/env bash
# Prints what a restructuring must not change, one line per item, so that two builds can be
# compared with diff: for every built-in model optimized with the analytic cost model (search
# stopped by its expansion budget, so the result does not depend on timing), the predicted
# cost before and after, the operator count after, the number of rule applications and a
# sha256 of the optimized graph's DOT text (operators, attributes, types and edges; no rule
# names); then the sha256 of `generate --max-ops 3` with the command that wrote
# rules/default.rules.
#   bench/behaviour_snapshot.sh [BUILD_DIR] [--no-generate]      default BUILD_DIR: build
# The analytic model reads the machine profile from the cache folder (GRAPHSUB_CACHE_DIR or
# --cache-dir default), so compare two builds on one machine with the same cache.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
[[ $build = /* ]] || build="$root/$build"
gen=1
[[ "${2:-}" == --no-generate ]] && gen=0
bin="$build/graphsub"
[[ -x $bin ]] || bin="$build/src/cli/graphsub"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$root"
for m in resnet50 resnext50 nasnet_a nasrnn bert inception_v3 squeezenet vgg19; do
  "$bin" -q optimize --model "$m" --runs 0 --dot "$tmp/$m" --report-json "$tmp/$m.json" >/dev/null
  "${PYTHON:-.venv/bin/python}" - "$m" "$tmp/$m.json" "$tmp/$m/optimized.dot" <<'PY'
import hashlib, json, sys
m, rep, dot = sys.argv[1:]
j = json.load(open(rep))
c = j["cost"]
h = hashlib.sha256(open(dot, "rb").read()).hexdigest()[:16]
print(f"{m:13s} cost {c['predicted_before_us']:.4f} -> {c['predicted_after_us']:.4f} us, "
      f"{j['graph_ops']['after']} ops, {j['search']['applications']} applications, dot {h}")
PY
done
if [[ $gen == 1 ]]; then
  "$bin" -q generate --max-ops 3 \
    --ops ewadd,ewmul,smul,transpose,matmul,conv,enlarge,relu,sigmoid,tanh,poolavg,poolmax,concat,split,cpool,iconv,imatmul,iewmul \
    --params act=none,relu,sigmoid,tanh --seed 1 --rlimit 50000 -o "$tmp/gen.rules" >/dev/null
  echo "generate --max-ops 3: $(grep -v '^;' "$tmp/gen.rules" | sha256sum | cut -c1-16)"
  echo "rules/default.rules:  $(grep -v '^;' rules/default.rules | sha256sum | cut -c1-16)"
fi
