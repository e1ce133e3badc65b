#!/usr/bin/env python3
"""How much of each model's ONNX Runtime time a fusion could remove, and how much graphsub did
(issue 27's second goal: at least half of each model's headroom).

Each original of a zoo manifest is profiled in ONNX Runtime (level all, CPU, 1 intra-op thread,
per-node profiling, medians over the runs). Its kernel time is split into:

  - matrix products: MatMul, Gemm, FusedMatMul, FusedGemm, MatMulNBits, the convolutions, and
    the attention kernels ONNX Runtime already fused (Attention, MultiHeadAttention,
    GroupQueryAttention), whose time is their products. A fused kernel computes those the
    same way, so no rewrite of the graph removes their time;
  - the rest (normalizations, element-wise operators, softmax, reshapes and transposes,
    layout reorders, ...): the headroom, the time a fusion could at best remove.

With a peer sweep's rows (bench/peers/run_peers.py --out DIR, its DIR/rows), the saving each
tool's file measured end to end (ONNX Runtime, 1 thread, alternated with the original) is set
against the headroom: saved = original * (1 - 1 / speedup), headroom = original * the
profile's headroom share, and the fraction saved / headroom. A file that is the original byte
for byte saves nothing (its measured speedup is the timing's noise).

  .venv/bin/python bench/ort_headroom.py ZOO/manifest.json --rows PEERS/rows \\
      --tools graphsub-fused,ort-transformers [--only 'hf-*'] [--runs 10]
"""

import argparse
import collections
import fnmatch
import json
import os
import sys
import tempfile

import onnxruntime as ort

from ort_layout import kernel_times_by_op

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "zoo"))
import check_zoo  # noqa: E402  (the zoo's inputs, as the peer sweep times them)

# Kernels whose time is matrix products: a fused kernel computes them the same way.
PRODUCTS = {"MatMul", "Gemm", "FusedMatMul", "FusedGemm", "MatMulNBits", "MatMulInteger",
            "Conv", "FusedConv", "ConvTranspose", "Attention", "MultiHeadAttention",
            "GroupQueryAttention"}


def headroom(path, entry, runs):
    feeds = check_zoo.make_inputs(entry["inputs"], entry["dims"], entry["input_seed"], 0)
    with tempfile.TemporaryDirectory() as tmp:
        by_op = kernel_times_by_op(path, runs, tmp, feeds)
    total = sum(by_op.values())
    products = sum(v for k, v in by_op.items() if k in PRODUCTS)
    rest = collections.Counter({k: v for k, v in by_op.items() if k not in PRODUCTS})
    return {"kernel_ms": total / 1000, "products_ms": products / 1000,
            "share": (total - products) / total if total else 0.0,
            "largest": rest.most_common(3)}


def row_for(rows_dir, name):
    path = os.path.join(rows_dir, f"{name}.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("manifest")
    ap.add_argument("--rows", help="a peer sweep's rows folder (run_peers.py's OUT/rows)")
    ap.add_argument("--tools", default="graphsub-fused")
    ap.add_argument("--only", action="append", default=[], help="entry name glob (repeatable)")
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args()
    with open(args.manifest) as f:
        manifest = json.load(f)
    zoo = os.path.dirname(os.path.abspath(args.manifest))
    tools = [t for t in args.tools.split(",") if t]
    entries = [e for e in manifest["entries"]
               if not args.only or any(fnmatch.fnmatch(e["name"], g) for g in args.only)]
    print(f"ONNX Runtime {ort.__version__}, level all, CPU, 1 thread, medians of {args.runs} "
          "profiled runs; speedups from the sweep's rows (1 thread, alternated)\n")
    head = "| model | kernel ms | products ms | headroom | largest outside the products |"
    rule = "|---|---|---|---|---|"
    for t in tools:
        head += f" {t}: speedup, share of headroom |"
        rule += "---|"
    print(head)
    print(rule)
    fractions = collections.defaultdict(list)
    for e in entries:
        h = headroom(os.path.join(zoo, e["file"]), e, args.runs)
        largest = ", ".join(f"{k} {v / 1000:.2f}" for k, v in h["largest"])
        line = (f"| {e['name']} | {h['kernel_ms']:.2f} | {h['products_ms']:.2f} | "
                f"{100 * h['share']:.1f}% | {largest} |")
        row = row_for(args.rows, e["name"]) if args.rows else None
        t1 = (row or {}).get("timings", {}).get("ort_1", {})
        for t in tools:
            sp = t1.get("speedup", {}).get(t)
            if not sp or not h["share"]:
                line += " - |"
                continue
            if (row or {}).get("tools", {}).get(t, {}).get("same_as_original"):
                # The file is the input byte for byte: it saves nothing, whatever the timing.
                fractions[t].append(0.0)
                line += f" = original ({sp:.3f}x: noise), 0% |"
                continue
            saved = 1 - 1 / sp  # of the original's end-to-end time
            frac = saved / h["share"]
            fractions[t].append(frac)
            line += f" {sp:.3f}x, {100 * frac:.0f}% |"
        print(line)
    for t in tools:
        fr = fractions[t]
        if fr:
            half = sum(1 for x in fr if x >= 0.5)
            print(f"\n{t}: at least half the headroom on {half} of {len(fr)} models; "
                  f"median share {100 * sorted(fr)[len(fr) // 2]:.0f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
