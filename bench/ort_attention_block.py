#!/usr/bin/env python3
"""One self-attention block of a ViT-B (x [1, S, 768] -> Q, K, V projections -> 12 heads of
attention -> [1, S, 768]) in each form graphsub reads, timed in ONNX Runtime (level all, 1
intra-op thread, CPU): whether a fused attention operator is worth introducing there (issue
27, "priced where they run"). Every form computes the same outputs (checked first).

Forms: the unfused graph as torch writes it (MatMul, Reshape, Transpose, MatMul, Mul,
Softmax, MatMul, Transpose, Reshape), ONNX's Attention (opset 23, 3-d form), com.microsoft
MultiHeadAttention after the three projections, and com.microsoft Attention with the packed
projection (bias included: ONNX Runtime 1.31.1 crashes without it). Runs are alternated, the
order reversed every round, with the unfused graph loaded twice as an A/A control; the
figures are medians.

  .venv/bin/python bench/ort_attention_block.py [--seq 197] [--rounds 30]
"""

import argparse

import numpy as np
from onnx import helper, numpy_helper
from ort_forms import ORT_VERSION, alternated_medians, print_ratios, session

D, HEADS = 768, 12


def weights(rng):
    w = [(rng.standard_normal((D, D)) * 0.02).astype(np.float32) for _ in range(3)]
    b = [(rng.standard_normal(D) * 0.02).astype(np.float32) for _ in range(3)]
    return w, b


def projections(w, b):
    """x @ W + b for q, k and v, and the initializers."""
    nodes, inits = [], []
    for t, wt, bt in zip("qkv", w, b):
        inits += [numpy_helper.from_array(wt, "W" + t), numpy_helper.from_array(bt, "b" + t)]
        nodes += [helper.make_node("MatMul", ["x", "W" + t], [t + "_mm"]),
                  helper.make_node("Add", [t + "_mm", "b" + t], [t])]
    return nodes, inits


def unfused(seq, w, b):
    d = D // HEADS
    nodes, inits = projections(w, b)
    inits += [numpy_helper.from_array(np.array([1, seq, HEADS, d], np.int64), "heads"),
              numpy_helper.from_array(np.array([1, seq, D], np.int64), "merged"),
              numpy_helper.from_array(np.array(1 / np.sqrt(d), np.float32), "scale")]
    for t in "qkv":
        nodes += [helper.make_node("Reshape", [t, "heads"], [t + "_4d"]),
                  helper.make_node("Transpose", [t + "_4d"], [t + "_h"], perm=[0, 2, 1, 3])]
    nodes += [helper.make_node("Transpose", ["k_h"], ["k_t"], perm=[0, 1, 3, 2]),
              helper.make_node("MatMul", ["q_h", "k_t"], ["s"]),
              helper.make_node("Mul", ["s", "scale"], ["s_scaled"]),
              helper.make_node("Softmax", ["s_scaled"], ["p"], axis=-1),
              helper.make_node("MatMul", ["p", "v_h"], ["o"]),
              helper.make_node("Transpose", ["o"], ["o_t"], perm=[0, 2, 1, 3]),
              helper.make_node("Reshape", ["o_t", "merged"], ["y"])]
    return nodes, inits


def onnx_attention(seq, w, b):
    nodes, inits = projections(w, b)
    nodes.append(helper.make_node("Attention", ["q", "k", "v"], ["y"], q_num_heads=HEADS,
                                  kv_num_heads=HEADS))
    return nodes, inits


def ort_mha(seq, w, b):
    nodes, inits = projections(w, b)
    nodes.append(helper.make_node("MultiHeadAttention", ["q", "k", "v"], ["y"],
                                  domain="com.microsoft", num_heads=HEADS))
    return nodes, inits


def ort_packed(seq, w, b):
    inits = [numpy_helper.from_array(np.concatenate(w, axis=1), "W"),
             numpy_helper.from_array(np.concatenate(b), "b")]
    nodes = [helper.make_node("Attention", ["x", "W", "b"], ["y"], domain="com.microsoft",
                              num_heads=HEADS)]
    return nodes, inits


FORMS = {"unfused": unfused, "unfused (A/A)": unfused, "ONNX Attention-23": onnx_attention,
         "MultiHeadAttention": ort_mha, "Attention (packed)": ort_packed}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seq", type=int, default=197)
    ap.add_argument("--rounds", type=int, default=30)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    w, b = weights(rng)
    shape = [1, args.seq, D]
    sessions = {f: session(*FORMS[f](args.seq, w, b), "x", shape, shape) for f in FORMS}
    feed = {"x": rng.standard_normal(shape).astype(np.float32)}
    medians = alternated_medians(sessions, feed, args.rounds)
    print(f"ONNX Runtime {ORT_VERSION}, level all, 1 thread; ViT-B block, {args.seq} tokens, "
          f"{args.rounds} alternated rounds, medians")
    print_ratios(medians, "ms", 1e3)


if __name__ == "__main__":
    main()
