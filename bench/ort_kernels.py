#!/usr/bin/env python3
"""ONNX Runtime's kernel time by operator for a zoo model and files written from it, side by
side: which kernels the runtime runs for each file after its own fusions (level all, CPU,
1 intra-op thread, per-node profiling, medians of the runs; the zoo's inputs, as the peer
sweep times them).

  .venv/bin/python bench/ort_kernels.py ZOO/manifest.json NAME FILE [FILE ...] \\
      [--runs 10] [--ops SimplifiedLayerNormalization,Pow,ReduceMean,Sqrt,Div]

NAME is the manifest entry (e.g. hf-llama.ts); the first column is its original. Prints the
total kernel time and the listed operators (default: the ten largest of the original), in
milliseconds, with each operator's node count in the file.
"""

import argparse
import collections
import json
import os
import sys
import tempfile

import onnx
import onnxruntime as ort

from ort_layout import kernel_times_by_op

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "zoo"))
import check_zoo  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("manifest")
    ap.add_argument("name")
    ap.add_argument("files", nargs="+")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--ops", default="", help="comma-separated operator types to list")
    args = ap.parse_args()
    with open(args.manifest) as f:
        entries = {e["name"]: e for e in json.load(f)["entries"]}
    if args.name not in entries:
        sys.exit(f"{args.manifest}: no entry named {args.name}")
    entry = entries[args.name]
    original = os.path.join(os.path.dirname(args.manifest), entry["file"])
    feeds = check_zoo.make_inputs(entry["inputs"], entry["dims"], entry["input_seed"], 0)
    paths = [original] + args.files
    times = []
    for p in paths:
        with tempfile.TemporaryDirectory() as tmp:
            times.append(kernel_times_by_op(p, args.runs, tmp, feeds))
    ops = [o for o in args.ops.split(",") if o] or [
        o for o, _ in collections.Counter(times[0]).most_common(10)]
    print(f"ONNX Runtime {ort.__version__}, level all, CPU, 1 thread, medians of {args.runs} "
          f"profiled runs; {args.name} at its first input set; ms (nodes written)\n")
    print("| operator | " + " | ".join(os.path.basename(p) for p in paths) + " |")
    print("|---|" + "---|" * len(paths))
    counts = [collections.Counter(n.op_type for n in onnx.load(p, load_external_data=False)
                                  .graph.node) for p in paths]
    print("| all kernels | " + " | ".join(f"{sum(t.values()) / 1000:.2f}" for t in times) + " |")
    for op in ops:
        print(f"| {op} | " + " | ".join(f"{t.get(op, 0) / 1000:.2f} ({c[op]})"
                                        for t, c in zip(times, counts)) + " |")


if __name__ == "__main__":
    main()
