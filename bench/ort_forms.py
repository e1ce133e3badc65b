"""One small graph in several equivalent forms, timed in ONNX Runtime: what the form
benchmarks (ort_attention_block.py, ort_rotary.py, ort_gqa.py) share. Sessions at level all with 1
intra-op thread on the CPU; the forms' outputs checked equal to the first form's before any
timing; runs alternated, the order reversed every round; medians."""

import argparse
import time

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper


def session(nodes, inits, x_name, x_shape, y_shape):
    """A session of float inputs (x_name and x_shape, or lists of names and shapes) and one
    float output "y", opset 23 and com.microsoft 1."""
    names, shapes = ([x_name], [x_shape]) if isinstance(x_name, str) else (x_name, x_shape)
    graph = helper.make_graph(
        nodes, "form",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in zip(names, shapes)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23),
                                                    helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 10
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(model.SerializeToString(), so,
                                providers=["CPUExecutionProvider"])


def form_arguments(doc, size_flag, size_default):
    """The command line of a form benchmark: its size flag, --rounds and --repeat."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument(size_flag, type=int, default=size_default)
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--repeat", type=int, default=20)
    return ap.parse_args()


def alternated_medians(sessions, feed, rounds, repeat=1):
    """Median seconds of one run per form, after checking every form against the first."""
    forms = list(sessions)
    ref = sessions[forms[0]].run(None, feed)[0]
    for f, s in sessions.items():
        err = float(np.abs(s.run(None, feed)[0] - ref).max())
        assert err < 1e-4, f"{f} differs from {forms[0]} by {err}"
    times = {f: [] for f in forms}
    for r in range(rounds):
        for f in forms if r % 2 == 0 else reversed(forms):
            t0 = time.perf_counter()
            for _ in range(repeat):
                sessions[f].run(None, feed)
            times[f].append((time.perf_counter() - t0) / repeat)
    return {f: float(np.median(t)) for f, t in times.items()}


def print_ratios(medians, unit, scale):
    """One line per form: its median in `unit` (seconds times `scale`) and the first form's
    median over its own."""
    base = next(iter(medians.values()))
    width = max(len(f) for f in medians)
    for f, med in medians.items():
        print(f"  {f:<{width}} {med * scale:9.3f} {unit}   {base / med:6.3f}x the unfused graph")


ORT_VERSION = ort.__version__
