#!/usr/bin/env python3
"""Rotary position embedding of a Llama-style query ([1, 32 heads, S, 64], the halves form) in
each form graphsub reads, timed in ONNX Runtime (level all, 1 intra-op thread, CPU): whether
introducing a rotary operator is worth it there (issue 27, "priced where they run"). Every form
computes the same output (checked first).

Forms: the unfused graph as transformers' rotate_half writes it (q * cos + concat(-q2, q1) *
sin, with cos and sin of the full head width), ONNX's RotaryEmbedding (opset 23, cos and sin
per position) and com.microsoft RotaryEmbedding (caches read from position 0). cos and sin are
constants in every form. Runs are alternated, the order reversed every round, with the unfused
graph loaded twice as an A/A control; each sample is `--repeat` runs, the figures are medians.

  .venv/bin/python bench/ort_rotary.py [--seq 128] [--rounds 30] [--repeat 20]
"""

import argparse
import time

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

HEADS, HEAD = 32, 64
HALF = HEAD // 2


def angles(seq):
    inv = 1.0 / (10000.0 ** (np.arange(HALF, dtype=np.float64) * 2 / HEAD))
    freqs = np.outer(np.arange(seq, dtype=np.float64), inv)
    return np.cos(freqs).astype(np.float32), np.sin(freqs).astype(np.float32)


def unfused(seq, cos, sin):
    full = lambda a: np.concatenate([a, a], axis=1)[None, None]  # [1, 1, S, HEAD]
    ints = lambda name, v: numpy_helper.from_array(np.array(v, np.int64), name)
    inits = [numpy_helper.from_array(full(cos), "cos"), numpy_helper.from_array(full(sin), "sin"),
             ints("lo", [0]), ints("mid", [HALF]), ints("hi", [HEAD]), ints("axis", [3])]
    nodes = [helper.make_node("Slice", ["q", "lo", "mid", "axis"], ["q1"]),
             helper.make_node("Slice", ["q", "mid", "hi", "axis"], ["q2"]),
             helper.make_node("Neg", ["q2"], ["neg_q2"]),
             helper.make_node("Concat", ["neg_q2", "q1"], ["rotated"], axis=3),
             helper.make_node("Mul", ["q", "cos"], ["q_cos"]),
             helper.make_node("Mul", ["rotated", "sin"], ["r_sin"]),
             helper.make_node("Add", ["q_cos", "r_sin"], ["y"])]
    return nodes, inits


def onnx_rotary(seq, cos, sin):
    inits = [numpy_helper.from_array(cos[None], "cos"), numpy_helper.from_array(sin[None], "sin")]
    return [helper.make_node("RotaryEmbedding", ["q", "cos", "sin"], ["y"])], inits


def ort_rotary(seq, cos, sin):
    inits = [numpy_helper.from_array(cos, "cos"), numpy_helper.from_array(sin, "sin"),
             numpy_helper.from_array(np.array([0], np.int64), "ids")]
    return [helper.make_node("RotaryEmbedding", ["q", "ids", "cos", "sin"], ["y"],
                             domain="com.microsoft")], inits


FORMS = {"unfused": unfused, "unfused (A/A)": unfused, "ONNX RotaryEmbedding-23": onnx_rotary,
         "com.microsoft RotaryEmbedding": ort_rotary}


def session(form, seq, cos, sin):
    nodes, inits = FORMS[form](seq, cos, sin)
    shape = [1, HEADS, seq, HEAD]
    graph = helper.make_graph(nodes, "rotary",
                              [helper.make_tensor_value_info("q", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
                              inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23),
                                                    helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 10
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(model.SerializeToString(), so,
                                providers=["CPUExecutionProvider"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    cos, sin = angles(args.seq)
    sessions = {f: session(f, args.seq, cos, sin) for f in FORMS}
    rng = np.random.default_rng(0)
    feed = {"q": rng.standard_normal((1, HEADS, args.seq, HEAD)).astype(np.float32)}
    ref = sessions["unfused"].run(None, feed)[0]
    for f, s in sessions.items():
        err = float(np.abs(s.run(None, feed)[0] - ref).max())
        assert err < 1e-4, f"{f} differs from the unfused graph by {err}"
    times = {f: [] for f in FORMS}
    for r in range(args.rounds):
        order = list(FORMS) if r % 2 == 0 else list(reversed(FORMS))
        for f in order:
            t0 = time.perf_counter()
            for _ in range(args.repeat):
                sessions[f].run(None, feed)
            times[f].append((time.perf_counter() - t0) / args.repeat)
    base = float(np.median(times["unfused"]))
    print(f"ONNX Runtime {ort.__version__}, level all, 1 thread; query [1,{HEADS},{args.seq},"
          f"{HEAD}], {args.rounds} alternated rounds of {args.repeat} runs, medians")
    for f in FORMS:
        med = float(np.median(times[f]))
        print(f"  {f:<30} {med * 1e6:9.1f} us   {base / med:6.3f}x the unfused graph")


if __name__ == "__main__":
    main()
