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

import numpy as np
from onnx import helper, numpy_helper
from ort_forms import ORT_VERSION, alternated_medians, form_arguments, print_ratios, session

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


def main():
    args = form_arguments(__doc__, "--seq", 128)
    cos, sin = angles(args.seq)
    shape = [1, HEADS, args.seq, HEAD]
    sessions = {f: session(*FORMS[f](args.seq, cos, sin), "q", shape, shape) for f in FORMS}
    rng = np.random.default_rng(0)
    feed = {"q": rng.standard_normal(shape).astype(np.float32)}
    medians = alternated_medians(sessions, feed, args.rounds, args.repeat)
    print(f"ONNX Runtime {ORT_VERSION}, level all, 1 thread; query [1,{HEADS},{args.seq},"
          f"{HEAD}], {args.rounds} alternated rounds of {args.repeat} runs, medians")
    print_ratios(medians, "us", 1e6)


if __name__ == "__main__":
    main()
