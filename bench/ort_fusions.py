#!/usr/bin/env python3
"""Which fused operators ONNX Runtime's own optimizer writes into a model: each file loaded
at level "all" (1 intra-op thread, CPU) with optimized_model_filepath, and the written graph's
operators counted. It shows where its hand-written matchers stop (issue 27): the fused
kernels a model ends up with, and the attention and skip normalizations it does not get.

  .venv/bin/python bench/ort_fusions.py MODEL.onnx ...
"""

import argparse
import collections
import os
import sys
import tempfile

import onnx
import onnxruntime as ort

# ONNX Runtime's fused CPU operators (com.microsoft, and the few it puts in ONNX's domain).
FUSED = ["Attention", "MultiHeadAttention", "GroupQueryAttention", "RotaryEmbedding",
         "SkipLayerNormalization", "SkipSimplifiedLayerNormalization",
         "SimplifiedLayerNormalization", "LayerNormalization", "BiasGelu", "FastGelu", "Gelu",
         "QuickGelu", "FusedMatMul", "FusedGemm", "FusedConv"]


def written_model(path, tmp):
    """The model as ONNX Runtime runs it at level all (1 intra-op thread, CPU), written by its
    optimized_model_filepath into `tmp`, weights of 1 KB and more in a side file."""
    out = os.path.join(tmp, "optimized.onnx")
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads = 1
    so.optimized_model_filepath = out
    so.log_severity_level = 3  # the NCHWc warning: expected here
    so.add_session_config_entry("session.optimized_model_external_initializers_file_name",
                                "optimized.data")
    so.add_session_config_entry(
        "session.optimized_model_external_initializers_min_size_in_bytes", "1024")
    ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    return onnx.load(out, load_external_data=False)


def optimized_ops(path, tmp):
    m = written_model(path, tmp)
    return collections.Counter(n.op_type for n in m.graph.node), len(m.graph.node)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="+")
    args = ap.parse_args()
    print(f"ONNX Runtime {ort.__version__}, level all, CPU\n")
    print("| model | nodes in | nodes after | MatMul | Softmax | " +
          " | ".join(FUSED) + " |")
    print("|---|---|---|---|---|" + "---|" * len(FUSED))
    for path in args.models:
        nodes_in = len(onnx.load(path, load_external_data=False).graph.node)
        with tempfile.TemporaryDirectory() as tmp:
            ops, nodes = optimized_ops(path, tmp)
        name = os.path.basename(path).replace(".onnx", "")
        cells = [str(ops.get(f, 0)) for f in FUSED]
        print(f"| {name} | {nodes_in} | {nodes} | {ops.get('MatMul', 0)} | "
              f"{ops.get('Softmax', 0)} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
