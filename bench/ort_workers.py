#!/usr/bin/env python3
"""The two ONNX Runtime workers weighed on the same files (docs/ort-worker.md): npm's
onnxruntime-node under Node.js (tools/ort_worker.js) and PyPI's onnxruntime under Python
(tools/ort_worker.py). Per model: each worker's median latency at 1 intra-op thread (level
"all"), timed in rounds that alternate the workers (N, P, P, N, ...: one worker runs while the
other waits), an A/A control inside each worker, and each worker's per-call overhead on a
one-operator model (what the cost model adds per kernel).

  .venv/bin/python bench/ort_workers.py MODEL.onnx ... [--runs 20] [--rounds 4]
"""

import argparse
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ort_sweep import Worker  # noqa: E402


def tiny_model(path):
    import onnx
    from onnx import TensorProto, helper
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "tiny",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="+")
    ap.add_argument("--runs", type=int, default=20, help="timed runs per round and file")
    ap.add_argument("--rounds", type=int, default=4, help="rounds per worker, alternated")
    args = ap.parse_args()
    workers = {"node": Worker("node"), "python": Worker("python")}
    print(f"onnxruntime-node {workers['node'].version}, onnxruntime (PyPI) "
          f"{workers['python'].version}; {args.rounds} rounds x {args.runs} runs each, "
          f"1 thread\n")
    with tempfile.TemporaryDirectory() as tmp:
        tiny = os.path.join(tmp, "tiny.onnx")
        tiny_model(tiny)
        models = [("one Relu [1,8] (per-call overhead)", tiny)] + \
            [(os.path.basename(m), m) for m in args.models]
        print("| model | node ms | python ms | python / node | A/A node | A/A python |")
        print("|---|---|---|---|---|---|")
        for label, path in models:
            ms = {k: {"a": [], "b": []} for k in workers}
            for w in workers.values():
                for i in ("a", "b"):
                    w.call(op="load", id=i, path=path, threads=1)
            for r in range(args.rounds):
                order = ["node", "python"] if r % 2 == 0 else ["python", "node"]
                for k in order:
                    t = workers[k].call(op="time", ids=["a", "b"], runs=args.runs, warmup=2)
                    for i in ("a", "b"):
                        ms[k][i] += t["ms"][i]
            med = {k: statistics.median(ms[k]["a"] + ms[k]["b"]) for k in workers}
            aa = {k: statistics.median(ms[k]["a"]) / statistics.median(ms[k]["b"]) for k in workers}
            print(f"| {label} | {med['node']:.3f} | {med['python']:.3f} | "
                  f"{med['python'] / med['node']:.3f} | {aa['node']:.3f} | {aa['python']:.3f} |",
                  flush=True)
            for w in workers.values():
                for i in ("a", "b"):
                    w.call(op="unload", id=i)
    for w in workers.values():
        w.close()


if __name__ == "__main__":
    main()
