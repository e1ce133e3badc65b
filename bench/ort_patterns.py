#!/usr/bin/env python3
"""Which rewrites does ONNX Runtime do itself, which does graphsub add, and what do they pay?

Usage: .venv/bin/python bench/ort_patterns.py [--out DIR] [--runs N] [--threads T] [PATTERN ...]

For each pattern below (a small ONNX model holding one rewrite opportunity, opset 13, seeded
random weights) this
  1. loads the model in ONNX Runtime (graph optimizations "all") and reads back the graph
     ONNX Runtime optimized it into (session option optimizedModelFilePath): "ORT itself" says
     whether the runtime already does the rewrite;
  2. runs `graphsub optimize model.onnx -o written.onnx` at default flags (--target ort, the
     end-to-end guard on) and does the same for the written file: "graphsub + ORT" says
     whether the rewrite is done in what ONNX Runtime finally runs;
  3. times the original twice (A, A': the noise control) and the written file (B) in one
     worker, rotated run by run, N runs each, medians, T intra-op threads (default 1).
Prints a Markdown table. Needs a Release build (BUILD_DIR, default build), node with
onnxruntime-node (npm ci) and Debian's python3-onnx and python3-numpy.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ort_sweep import ROOT, Worker, guard_choice, op_counts  # noqa: E402

CONV = {"Conv", "FusedConv", "NchwcConv"}
MATMUL = {"MatMul", "FusedMatMul", "Gemm", "FusedGemm"}


class Net:
    """A one-output-per-branch ONNX graph built node by node, weights seeded."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.inputs, self.outputs = [], [], [], []
        self.n = 0

    def input(self, name, shape):
        self.inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, shape))
        return name

    def const(self, array):
        name = f"w{len(self.inits)}"
        self.inits.append(numpy_helper.from_array(np.asarray(array, dtype=np.float32), name))
        return name

    def weight(self, *shape, scale=0.1):
        return self.const(self.rng.standard_normal(shape) * scale)

    def ints(self, values):
        name = f"i{len(self.inits)}"
        self.inits.append(numpy_helper.from_array(np.asarray(values, dtype=np.int64), name))
        return name

    def op(self, op_type, *inputs, outputs=1, **attrs):
        self.n += 1
        names = [f"t{self.n}_{i}" for i in range(outputs)]
        self.nodes.append(helper.make_node(op_type, list(inputs), names, name=f"n{self.n}", **attrs))
        return names[0] if outputs == 1 else names

    def output(self, name):
        self.outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))

    def model(self):
        g = helper.make_graph(self.nodes, "pattern", self.inputs, self.outputs, self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="bench/ort_patterns.py")
        return onnx.shape_inference.infer_shapes(m)


def conv_siblings(net):
    x = net.input("x", [1, 64, 28, 28])
    for _ in range(2):
        net.output(net.op("Relu", net.op("Conv", x, net.weight(32, 64, 1, 1), net.weight(32))))


def qkv_matmuls(net):
    x = net.input("x", [128, 256])
    for _ in range(3):
        net.output(net.op("MatMul", x, net.weight(256, 256)))


def conv_channel_scale(net):
    x = net.input("x", [1, 64, 28, 28])
    y = net.op("Conv", x, net.weight(64, 64, 3, 3), net.weight(64), pads=[1, 1, 1, 1])
    net.output(net.op("Mul", y, net.weight(1, 64, 1, 1)))


def conv_input_scale(net):
    x = net.input("x", [1, 64, 28, 28])
    y = net.op("Mul", x, net.const(0.5))
    net.output(net.op("Conv", y, net.weight(64, 64, 3, 3), pads=[1, 1, 1, 1]))


def matmul_scale(net):
    x = net.input("x", [128, 256])
    net.output(net.op("Mul", net.op("MatMul", x, net.weight(256, 256)), net.const(0.125)))


def matmul_input_scale(net):
    x = net.input("x", [128, 256])
    net.output(net.op("MatMul", net.op("Mul", x, net.const(0.125)), net.weight(256, 256)))


def matmul_bias(net):
    x = net.input("x", [128, 256])
    net.output(net.op("Add", net.op("MatMul", x, net.weight(256, 256)), net.weight(256)))


def matmul_sum(net):
    x = net.input("x", [128, 256])
    a = net.op("MatMul", x, net.weight(256, 256))
    net.output(net.op("Add", a, net.op("MatMul", x, net.weight(256, 256))))


def shared_weight_matmuls(net):
    w = net.weight(256, 256)
    for name in ("x", "y"):
        net.output(net.op("MatMul", net.input(name, [128, 256]), w))


def conv_batchnorm(net):
    x = net.input("x", [1, 64, 28, 28])
    y = net.op("Conv", x, net.weight(64, 64, 3, 3), pads=[1, 1, 1, 1])
    stats = [net.const(net.rng.uniform(0.5, 1.5, 64)), net.weight(64), net.weight(64),
             net.const(net.rng.uniform(0.5, 1.5, 64))]
    net.output(net.op("BatchNormalization", y, *stats))


def transpose_pair(net):
    x = net.input("x", [1, 64, 28, 28])
    y = net.op("Transpose", net.op("Transpose", x, perm=[0, 2, 3, 1]), perm=[0, 3, 1, 2])
    net.output(net.op("Relu", y))


def reshape_chain(net):
    x = net.input("x", [1, 64, 28, 28])
    y = net.op("Reshape", net.op("Reshape", x, net.ints([64, 784])), net.ints([1, 64, 784]))
    net.output(net.op("Relu", y))


def scale_chain(net):
    x = net.input("x", [1, 64, 28, 28])
    net.output(net.op("Mul", net.op("Mul", x, net.const(0.5)), net.const(3.0)))


def split_concat(net):
    x = net.input("x", [1, 64, 28, 28])
    a, b = net.op("Split", x, outputs=2, axis=1)
    net.output(net.op("Relu", net.op("Concat", a, b, axis=1)))


def count(counts, ops):
    return sum(counts.get(o, 0) for o in ops)


# name -> (what the rewrite is, builder, done(op counts of a graph) -> the rewrite is in it)
PATTERNS = {
    "conv_siblings": ("two 1x1 convolutions of one tensor merged into one (Inception branches)",
                      conv_siblings, lambda c: count(c, CONV) == 1),
    "qkv_matmuls": ("three matmuls of one tensor merged into one (Q/K/V, RNN gates)",
                    qkv_matmuls, lambda c: count(c, MATMUL) == 1),
    "conv_channel_scale": ("per-channel scale after a convolution folded into its weights",
                           conv_channel_scale, lambda c: c.get("Mul", 0) == 0),
    "conv_input_scale": ("scalar scale before a convolution folded into its weights",
                         conv_input_scale, lambda c: c.get("Mul", 0) == 0),
    "matmul_scale": ("scalar scale after a matmul folded into its weights",
                     matmul_scale, lambda c: c.get("Mul", 0) == 0),
    "matmul_input_scale": ("scalar scale before a matmul folded into its weights",
                           matmul_input_scale, lambda c: c.get("Mul", 0) == 0),
    "matmul_bias": ("matmul and bias add as one GEMM", matmul_bias, lambda c: c.get("Add", 0) == 0),
    "matmul_sum": ("x W1 + x W2 as x (W1 + W2)", matmul_sum, lambda c: count(c, MATMUL) == 1),
    "shared_weight_matmuls": ("two matmuls with one weight as one matmul of stacked inputs",
                              shared_weight_matmuls, lambda c: count(c, MATMUL) == 1),
    "conv_batchnorm": ("batch norm folded into the convolution's weights",
                       conv_batchnorm, lambda c: c.get("BatchNormalization", 0) == 0),
    "transpose_pair": ("a transpose and its inverse removed", transpose_pair,
                       lambda c: c.get("Transpose", 0) == 0),
    "reshape_chain": ("two reshapes as one", reshape_chain, lambda c: c.get("Reshape", 0) <= 1),
    "scale_chain": ("two scalar scales as one", scale_chain, lambda c: c.get("Mul", 0) <= 1),
    "split_concat": ("a split concatenated back in order removed", split_concat,
                     lambda c: c.get("Split", 0) == 0 and c.get("Concat", 0) == 0),
}


def ort_graph(worker, path, out, threads):
    worker.call(op="load", id="O", path=path, threads=threads, optimized=out)
    worker.call(op="unload", id="O")
    return op_counts(out)


def show(counts):
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))


def yes(flag):
    return "yes" if flag else "no"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("patterns", nargs="*", default=list(PATTERNS))
    p.add_argument("--out", default=os.path.join(ROOT, "build", "ort_patterns"))
    p.add_argument("--runs", type=int, default=30)
    p.add_argument("--threads", type=int, default=1)
    a = p.parse_args()
    unknown = [n for n in a.patterns if n not in PATTERNS]
    if unknown:
        sys.exit(f"ort_patterns: unknown pattern(s) {', '.join(unknown)}; known: {', '.join(PATTERNS)}")
    graphsub = os.path.join(ROOT, os.environ.get("BUILD_DIR", "build"), "graphsub")
    if not os.access(graphsub, os.X_OK):
        sys.exit(f"ort_patterns: {graphsub} is not built")
    os.makedirs(a.out, exist_ok=True)
    worker = Worker()
    rows = []
    for i, name in enumerate(a.patterns):
        what, build, done = PATTERNS[name]
        net = Net(seed=i + 1)
        build(net)
        orig = os.path.join(a.out, f"{name}.onnx")
        onnx.save(net.model(), orig)
        opt = os.path.join(a.out, f"{name}.graphsub.onnx")
        report = os.path.join(a.out, f"{name}.report.json")
        with open(os.path.join(a.out, f"{name}.log"), "w") as log:
            rc = subprocess.run([graphsub, "optimize", orig, "-o", opt, "--report-json", report],
                                stdout=log, stderr=subprocess.STDOUT).returncode
        if rc != 0:
            rows.append(f"| {name} | {what} | graphsub failed (exit {rc}) |" + " |" * 5)
            continue
        with open(report) as f:
            wrote = guard_choice(json.load(f).get("timings", {}).get("guard"))
        ort_orig = ort_graph(worker, orig, os.path.join(a.out, f"{name}.ort.onnx"), a.threads)
        ort_opt = ort_graph(worker, opt, os.path.join(a.out, f"{name}.graphsub.ort.onnx"), a.threads)
        for id_, path in (("A", orig), ("A2", orig), ("B", opt)):
            worker.call(op="load", id=id_, path=path, threads=a.threads)
        ms = worker.call(op="time", ids=["A", "A2", "B"], runs=a.runs, warmup=3)["ms"]
        for id_ in ("A", "A2", "B"):
            worker.call(op="unload", id=id_)
        med = {k: statistics.median(v) for k, v in ms.items()}
        orig_ms = statistics.median(ms["A"] + ms["A2"])
        rows.append(f"| {name} | {what} | {yes(done(ort_orig))} ({show(ort_orig)}) | "
                    f"{yes(done(op_counts(opt)))} | {wrote} | {yes(done(ort_opt))} ({show(ort_opt)}) | "
                    f"{orig_ms:.3f} | {orig_ms / med['B']:.3f}x | {med['A2'] / med['A']:.3f}x |")
        print(rows[-1], file=sys.stderr, flush=True)
    worker.close()
    print(f"\nONNX Runtime {worker.version}, graph optimizations all, {a.threads} intra-op thread(s), "
          f"median of {a.runs} runs rotated A A' B, load {os.getloadavg()[0]:.2f}\n")
    print("| pattern | rewrite | ORT itself (its kernels) | graphsub writes it | guard wrote "
          "| graphsub + ORT (kernels) | original ms | speedup | A/A |")
    print("|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
