#!/usr/bin/env python3
"""Writes an N-node chain ONNX model, for measuring how the optimizer scales with model size.

    bench/make_chain.py N OUT.onnx [--mix]

Plain: x -> Relu -> Relu -> ... (N Relu nodes), input float[1,64].
--mix: a repeating block of MatMul (16x16 weight), Add (bias), Relu, input float[1,16], cut
to N nodes; rules such as fusing the activation into the MatMul apply
at every block. Needs the project venv's onnx (.venv/bin/python).
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    mix = "--mix" in sys.argv
    if len(args) != 2:
        sys.exit(__doc__)
    n, out = int(args[0]), args[1]
    width = 16 if mix else 64
    nodes, inits = [], []
    rng = np.random.default_rng(1)
    prev = "x"
    for i in range(n):
        name = f"t{i}"
        kind = ["MatMul", "Add", "Relu"][i % 3] if mix else "Relu"
        if kind == "MatMul":
            w = f"w{i}"
            inits.append(numpy_helper.from_array(
                (rng.standard_normal((width, width)) / 8).astype(np.float32), w))
            nodes.append(helper.make_node("MatMul", [prev, w], [name], name=f"n{i}"))
        elif kind == "Add":
            b = f"b{i}"
            inits.append(numpy_helper.from_array(
                rng.standard_normal((width,)).astype(np.float32), b))
            nodes.append(helper.make_node("Add", [prev, b], [name], name=f"n{i}"))
        else:
            nodes.append(helper.make_node("Relu", [prev], [name], name=f"n{i}"))
        prev = name
    graph = helper.make_graph(
        nodes, "chain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, width])],
        [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [1, width])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, out)


if __name__ == "__main__":
    main()
