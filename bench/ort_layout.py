#!/usr/bin/env python3
"""Where ONNX Runtime's blocked (NCHWc) layout starts and stops in a model (issue 29): each
file run at level "all" on the CPU with 1 intra-op thread and per-node profiling, and

  - the share of kernel time spent in layout reorders (ReorderInput, ReorderOutput),
  - how many convolutions run blocked (domain com.microsoft.nchwc) and how many stay NCHW,
    with the channel counts of the ones that stay (the reason, by ONNX Runtime's conditions),
  - the reorder count, from the model ONNX Runtime writes after its optimizations.

Given pairs ORIGINAL=REWRITTEN it prints both and the change. The block size (8 with AVX2,
16 with AVX-512) is MLAS's choice for this CPU; it is printed from the written model.

  .venv/bin/python bench/ort_layout.py MODEL.onnx [ORIGINAL.onnx=REWRITTEN.onnx ...] [--runs 20]
"""

import argparse
import bisect
import collections
import json
import os
import sys
import tempfile

import numpy as np
import onnxruntime as ort

from ort_fusions import written_model

REORDERS = ("ReorderInput", "ReorderOutput")
NCHWC_DOMAIN = "com.microsoft.nchwc"


def feeds_for(session, seed=0):
    rng = np.random.default_rng(seed)
    types = {"tensor(float)": np.float32, "tensor(float16)": np.float16,
             "tensor(int64)": np.int64, "tensor(int32)": np.int32, "tensor(bool)": np.bool_}
    feeds = {}
    for i in session.get_inputs():
        shape = [d if isinstance(d, int) else 1 for d in i.shape]
        dtype = types[i.type]
        if np.issubdtype(dtype, np.floating):
            feeds[i.name] = rng.standard_normal(shape).astype(dtype)
        else:
            feeds[i.name] = np.zeros(shape, dtype)
    return feeds


def block_size(model):
    """The channel block of the written model: a ReorderInput's NCHWc output padding, read
    from the weights of a blocked convolution (its output channels, rounded up)."""
    inits = {t.name: t for t in model.graph.initializer}
    for n in model.graph.node:
        if n.domain == NCHWC_DOMAIN and n.op_type == "Conv" and n.input[1] in inits:
            out_ch = inits[n.input[1]].dims[0]
            for b in (16, 8):
                if out_ch % b == 0:
                    return b
    return None


def conv_census(model):
    """Blocked and NCHW convolutions; for the NCHW ones, (in, out, group) of their weights."""
    inits = {t.name: t for t in model.graph.initializer}
    blocked, plain = 0, []
    for n in model.graph.node:
        if n.op_type not in ("Conv", "FusedConv"):
            continue
        if n.domain == NCHWC_DOMAIN:
            blocked += 1
            continue
        w = inits.get(n.input[1])
        group = next((a.i for a in n.attribute if a.name == "group"), 1)
        plain.append((w.dims[1] * group if w is not None else None,
                      w.dims[0] if w is not None else None, group))
    return blocked, plain


def run_kernel_times(path, runs, tmp, feeds=None):
    """Per profiled run, the kernel time of each operator type, in microseconds. `feeds`:
    the inputs (by default random, every symbolic dimension 1)."""
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    so.enable_profiling = True
    so.profile_file_prefix = os.path.join(tmp, "profile")
    s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    if feeds is None:
        feeds = feeds_for(s)
    else:
        feeds = {i.name: feeds[i.name] for i in s.get_inputs()}
    warm = 3  # pre-packing and first-touch allocations happen in the first runs
    for _ in range(warm + runs):
        s.run(None, feeds)
    with open(s.end_profiling()) as f:
        events = json.load(f)
    # Each run's node events lie inside its model_run event's time span.
    spans = sorted((e["ts"], e["ts"] + e["dur"]) for e in events
                   if e.get("cat") == "Session" and e.get("name") == "model_run")[warm:]
    run_totals = [collections.Counter() for _ in spans]
    starts = [a for a, _ in spans]
    for e in events:
        if e.get("cat") != "Node" or not e["name"].endswith("_kernel_time"):
            continue
        i = bisect.bisect_right(starts, e["ts"]) - 1
        if i >= 0 and e["ts"] <= spans[i][1]:
            run_totals[i][e["args"]["op_name"]] += e["dur"]
    return run_totals


def kernel_times_by_op(path, runs, tmp, feeds=None):
    """The median over the runs of each operator type's kernel time, in microseconds."""
    run_totals = run_kernel_times(path, runs, tmp, feeds)
    ops = set().union(*run_totals)
    return {op: sorted(t[op] for t in run_totals)[len(run_totals) // 2] for op in ops}


def profile(path, runs, tmp):
    run_totals = run_kernel_times(path, runs, tmp)
    kernel = sorted(sum(t.values()) for t in run_totals)
    reorder = sorted(sum(t[k] for k in REORDERS) for t in run_totals)
    return kernel[len(kernel) // 2], reorder[len(reorder) // 2]


def describe(path, runs):
    with tempfile.TemporaryDirectory() as tmp:
        m = written_model(path, tmp)
        kernel_us, reorder_us = profile(path, runs, tmp)
    ops = collections.Counter(n.op_type for n in m.graph.node)
    blocked, plain = conv_census(m)
    return {
        "kernel_ms": kernel_us / 1000, "reorder_ms": reorder_us / 1000,
        "share": reorder_us / kernel_us if kernel_us else 0.0,
        "reorders": sum(ops[k] for k in REORDERS), "blocked": blocked, "plain": plain,
        "block": block_size(m),
    }


def plain_text(plain):
    c = collections.Counter(plain)
    return ", ".join(f"{n}x {i}->{o}" + (f"/g{g}" if g > 1 else "")
                     for (i, o, g), n in sorted(c.items(), key=lambda kv: -kv[1])[:6])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="+", help="MODEL.onnx, or ORIGINAL.onnx=REWRITTEN.onnx")
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    print(f"ONNX Runtime {ort.__version__}, level all, CPU, 1 thread, "
          f"medians of {args.runs} profiled runs\n")
    print("| model | block | kernel ms | reorder share | reorders | blocked convs | "
          "NCHW convs (in->out/group, most common) |")
    print("|---|---|---|---|---|---|---|")
    for spec in args.models:
        paths = spec.split("=")
        rows = [describe(p, args.runs) for p in paths]
        name = os.path.basename(paths[0]).replace(".onnx", "")
        if len(rows) == 1:
            r = rows[0]
            print(f"| {name} | {r['block']} | {r['kernel_ms']:.2f} | {100 * r['share']:.1f}% | "
                  f"{r['reorders']} | {r['blocked']} | {len(r['plain'])}: "
                  f"{plain_text(r['plain'])} |", flush=True)
        else:
            a, b = rows
            print(f"| {name} | {a['block']} | {a['kernel_ms']:.2f} -> {b['kernel_ms']:.2f} | "
                  f"{100 * a['share']:.1f}% -> {100 * b['share']:.1f}% | "
                  f"{a['reorders']} -> {b['reorders']} | {a['blocked']} -> {b['blocked']} | "
                  f"{len(a['plain'])} -> {len(b['plain'])}: {plain_text(b['plain'])} |",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
