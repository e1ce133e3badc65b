#!/usr/bin/python3
"""ONNX Runtime sweep: original against graphsub-optimized models where users run them.

Usage: /usr/bin/python3 bench/ort_sweep.py [--out DIR] [--runs N] [--threads T]
                                           [--flags "OPTIMIZE FLAGS"] [MODEL ...]
Models: tv:NAME (a torchvision classifier exported by tools/export_torchvision.py at opset 13,
random weights), builtin:NAME (a built-in model written by `graphsub export-onnx`), or a path
to an .onnx file. Default: the four torchvision models of the tests and the 8 built-ins.

Per model: `graphsub optimize orig.onnx -o opt.onnx` (its wall time is "graphsub s"), then
one ONNX Runtime worker (tools/ort_worker.js, graph optimizations "all", T intra-op threads,
default 1) loads the original twice (A and A', the noise control) and the written model (B)
and times all three in rotation, run by run, N runs each (medians). ONNX node counts come
from the files; "headroom" is the share of the original's ONNX Runtime kernel time (per-node
profiling) spent outside the compute kernels (Conv, MatMul, Gemm and ONNX Runtime's fused
forms of them), i.e. the most that removing, merging or fusing the other operators could
save. Prints a Markdown table and the geometric-mean speedup.
Needs a Release build (BUILD_DIR, default build), node with onnxruntime-node (npm ci) and
Debian's python3-onnx, python3-torch, python3-torchvision.
"""
import argparse
import collections
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time

import onnx

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_MODELS = ["tv:resnet50", "tv:resnext50_32x4d", "tv:squeezenet1_1", "tv:inception_v3",
                  "builtin:resnet50", "builtin:resnext50", "builtin:nasnet_a", "builtin:nasrnn",
                  "builtin:bert", "builtin:inception_v3", "builtin:squeezenet", "builtin:vgg19"]
# ONNX Runtime kernels that do the arithmetic a rewrite cannot remove (their fused forms too).
COMPUTE_OPS = {"Conv", "FusedConv", "NchwcConv", "MatMul", "FusedMatMul", "Gemm", "FusedGemm",
               "QLinearConv", "MatMulInteger", "Attention", "MultiHeadAttention"}


class Worker:
    """tools/ort_worker.js over a pipe (the same worker the C++ side drives)."""

    def __init__(self):
        self.p = subprocess.Popen(["node", os.path.join(ROOT, "tools", "ort_worker.js")],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.version = self.call(op="hello")["ort"]

    def call(self, **req):
        self.p.stdin.write(json.dumps(req) + "\n")
        self.p.stdin.flush()
        reply = json.loads(self.p.stdout.readline())
        if not reply.get("ok"):
            raise RuntimeError(reply.get("error", "ONNX Runtime worker failed"))
        return reply

    def close(self):
        self.p.stdin.write(json.dumps({"op": "quit"}) + "\n")
        self.p.stdin.close()
        self.p.wait()


def original_file(model, out, graphsub):
    kind, _, name = model.partition(":")
    if kind == "tv":
        d = os.path.join(out, "torchvision")
        res = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "tools", "export_torchvision.py"),
                              d, name], check=True, capture_output=True, text=True)
        return res.stdout.strip().splitlines()[-1], f"torchvision {name}"
    if kind == "builtin":
        d = os.path.join(out, "builtin")
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, f"{name}.onnx")
        if not os.path.exists(path):
            subprocess.run([graphsub, "-q", "export-onnx", "--model", name, "-o", path], check=True)
        return path, f"built-in {name}"
    return model, os.path.basename(model)


def op_counts(path):
    m = onnx.load(path, load_external_data=False)
    return collections.Counter(n.op_type for n in m.graph.node)


def counts_change(a, b):
    changed = [f"{op} {a.get(op, 0)}->{b.get(op, 0)}" for op in sorted(set(a) | set(b))
               if a.get(op, 0) != b.get(op, 0)]
    return ", ".join(changed) if changed else "unchanged"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("models", nargs="*", default=DEFAULT_MODELS)
    p.add_argument("--out", default=os.path.join(ROOT, "build", "ort_sweep"))
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--flags", default="")
    a = p.parse_args()
    graphsub = os.path.join(ROOT, os.environ.get("BUILD_DIR", "build"), "graphsub")
    if not os.access(graphsub, os.X_OK):
        sys.exit(f"ort_sweep: {graphsub} is not built")
    os.makedirs(os.path.join(a.out, "opt"), exist_ok=True)
    worker = Worker()
    rows, speedups = [], []
    for model in a.models:
        orig, label = original_file(model, a.out, graphsub)
        base = os.path.splitext(os.path.basename(orig))[0] + "." + model.partition(":")[0]
        opt = os.path.join(a.out, "opt", base + ".opt.onnx")
        log = os.path.join(a.out, "opt", base + ".log")
        t0 = time.monotonic()
        with open(log, "w") as f:
            res = subprocess.run([graphsub, "optimize", orig, "-o", opt] + a.flags.split(),
                                 stdout=f, stderr=subprocess.STDOUT)
        secs = time.monotonic() - t0
        if res.returncode != 0:
            print(f"ort_sweep: optimizing {label} failed; see {log}", file=sys.stderr)
            rows.append(f"| {label} | optimize failed (exit {res.returncode}) | | | | | | |")
            continue
        for id_, path in (("A", orig), ("A2", orig), ("B", opt)):
            worker.call(op="load", id=id_, path=path, threads=a.threads)
        ms = worker.call(op="time", ids=["A", "A2", "B"], runs=a.runs, warmup=2)["ms"]
        med = {k: statistics.median(v) for k, v in ms.items()}
        worker.call(op="load", id="P", path=orig, threads=a.threads, profile=True)
        worker.call(op="time", ids=["P"], runs=3, warmup=0)
        prof = worker.call(op="profile", id="P", runs=5)
        for id_ in ("A", "A2", "B", "P"):
            worker.call(op="unload", id=id_)
        total = prof["total_ms"] or 1.0
        headroom = sum(v for k, v in prof["by_op"].items() if k not in COMPUTE_OPS) / total
        orig_ms = statistics.median(ms["A"] + ms["A2"])
        speedup = orig_ms / med["B"]
        control = med["A2"] / med["A"]
        speedups.append(speedup)
        ca, cb = op_counts(orig), op_counts(opt)
        rows.append(f"| {label} | {sum(ca.values())} -> {sum(cb.values())} ({counts_change(ca, cb)}) | "
                    f"{secs:.1f} | {orig_ms:.2f} | {med['B']:.2f} | {speedup:.3f}x | {control:.3f}x | "
                    f"{100 * headroom:.1f}% |")
        print(rows[-1], file=sys.stderr, flush=True)
    worker.close()
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")),
               platform.processor())
    print(f"\nONNX Runtime {worker.version}, graph optimizations all, {a.threads} intra-op thread(s), "
          f"median of {a.runs} runs rotated A A' B; {time.strftime('%Y-%m-%d', time.gmtime())}, {cpu}, "
          f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}\n")
    print("| model | ONNX nodes (changed op types) | graphsub s | original ms | written ms | speedup "
          "| A/A control | headroom |")
    print("|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    if speedups:
        g = math.exp(sum(math.log(s) for s in speedups) / len(speedups))
        print(f"\ngeometric-mean speedup over {len(speedups)} models: {g:.3f}x")


if __name__ == "__main__":
    main()
