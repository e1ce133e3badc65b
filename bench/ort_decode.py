#!/usr/bin/env python3
"""A key/value-cache decoder and graphsub's file of it, timed in ONNX Runtime at decode steps.

Usage: .venv/bin/python bench/ort_decode.py ORIGINAL.onnx WRITTEN.onnx [--steps B,S,P ...]
                                            [--rounds N]

Each step is a batch B of S new tokens after P cached ones (Hugging Face's inputs: input_ids,
attention_mask of P + S ones, past_key_values.* of [B, heads, P, size]; random, seeded). The
original is loaded twice (A and A', the noise control) beside the written file (B); the three
are checked to give the same outputs, then timed alternated, the order reversed every round
(bench/ort_forms.py), at level all with 1 intra-op thread. Prints per step the medians and
the speedups of B and A' over A. Default steps: decode after 255, 511 and 1023 cached tokens,
and a prefill of 64 after 64.
"""

import argparse
import os
import sys

import numpy as np
import onnxruntime as ort

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ort_forms import alternated_medians  # noqa: E402


def load(path):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.log_severity_level = 3
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def feeds(session, batch, seq, past, rng):
    out = {}
    for i in session.get_inputs():
        if i.name == "input_ids":
            out[i.name] = rng.integers(0, 100, (batch, seq)).astype(np.int64)
        elif i.name == "attention_mask":
            out[i.name] = np.ones((batch, past + seq), np.int64)
        elif i.name.startswith("past_key_values."):
            heads, size = i.shape[1], i.shape[3]
            out[i.name] = rng.standard_normal((batch, heads, past, size)).astype(np.float32)
        else:
            raise SystemExit(f"{i.name}: not an input of a Hugging Face cache decoder")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("original")
    ap.add_argument("written")
    ap.add_argument("--steps", nargs="*", default=["1,1,255", "1,1,511", "1,1,1023", "1,64,64"])
    ap.add_argument("--rounds", type=int, default=30)
    args = ap.parse_args()
    sessions = {"A (original)": load(args.original), "B (written)": load(args.written),
                "A' (original again)": load(args.original)}
    print(f"ONNX Runtime {ort.__version__}, level all, 1 intra-op thread, {args.rounds} rounds")
    for step in args.steps:
        batch, seq, past = (int(v) for v in step.split(","))
        feed = feeds(sessions["A (original)"], batch, seq, past, np.random.default_rng(0))
        med = alternated_medians(sessions, feed, args.rounds)
        a, b, again = med.values()
        print(f"batch {batch}, {seq} new after {past}: A {a * 1e3:.2f} ms, "
              f"B {b * 1e3:.2f} ms ({a / b:.3f}x), A/A {a / again:.3f}")


if __name__ == "__main__":
    main()
