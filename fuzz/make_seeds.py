#!/usr/bin/env python3
"""Writes the fuzzing seeds of fuzz/corpus: one small model per operator the importer
converts (src/onnx/import_*.cpp), a few attribute variants (ceil_mode, auto_pad, group),
and models with external data in the fuzz harness's packed form (fuzz/fuzz_harness.h).
Needs the project venv's onnx:  .venv/bin/python fuzz/make_seeds.py
The output is deterministic (fixed weights), so rerunning it rewrites the same files."""
import os
import struct

import numpy as np
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
F = TensorProto.FLOAT


def weights(name, shape, seed=1):
    rng = np.random.default_rng(seed)
    return numpy_helper.from_array(rng.uniform(-1, 1, shape).astype(np.float32), name)


def ints(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def model(nodes, inputs, outputs, inits=(), opset=13, extra_opsets=()):
    g = helper.make_graph(
        nodes, "seed",
        [helper.make_tensor_value_info(n, F, s) for n, s in inputs],
        [helper.make_tensor_value_info(n, F, s) for n, s in outputs],
        list(inits))
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in extra_opsets]
    m = helper.make_model(g, opset_imports=opsets, producer_name="graphsub-seeds")
    m.ir_version = 8
    return m.SerializeToString()


def save(name, data):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)


def unary(op, **attrs):
    return model([helper.make_node(op, ["x"], ["y"], **attrs)], [("x", [2, 3])], [("y", None)])


def main():
    X = ("x", [1, 2, 5, 5])
    for op in ["Add", "Sub", "Mul", "Div"]:
        save(f"op_{op}.model", model([helper.make_node(op, ["x", "b"], ["y"])],
                                     [("x", [2, 3]), ("b", [3])], [("y", None)]))
    for op in ["Relu", "Sigmoid", "Tanh", "Erf", "Exp", "Sqrt", "Identity"]:
        save(f"op_{op}.model", unary(op))
    save("op_Gelu.model", model([helper.make_node("Gelu", ["x"], ["y"], domain="com.microsoft")],
                                [("x", [2, 3])], [("y", None)],
                                extra_opsets=[("com.microsoft", 1)]))
    # GroupQueryAttention after a past, with its int32 lengths as initializers.
    lengths = [numpy_helper.from_array(np.array([2], dtype=np.int32), "sk"),
               numpy_helper.from_array(np.array(3, dtype=np.int32), "total")]
    save("op_GroupQueryAttention.model", model(
        [helper.make_node("GroupQueryAttention", ["q", "k", "v", "pk", "pv", "sk", "total"],
                          ["y", "present_k", "present_v"], domain="com.microsoft",
                          num_heads=2, kv_num_heads=1)],
        [("q", [1, 1, 16]), ("k", [1, 1, 8]), ("v", [1, 1, 8]), ("pk", [1, 1, 2, 8]),
         ("pv", [1, 1, 2, 8])],
        [("y", None), ("present_k", None), ("present_v", None)], lengths,
        extra_opsets=[("com.microsoft", 1)]))
    save("op_Gemm.model", model(
        [helper.make_node("Gemm", ["x", "w", "c"], ["y"], transB=1, alpha=0.5, beta=2.0)],
        [("x", [2, 3])], [("y", None)], [weights("w", [4, 3]), weights("c", [4], 2)]))
    save("op_MatMul.model", model([helper.make_node("MatMul", ["x", "w"], ["y"])],
                                  [("x", [2, 2, 3])], [("y", None)], [weights("w", [3, 4])]))
    save("op_Conv.model", model(
        [helper.make_node("Conv", ["x", "w", "b"], ["y"], pads=[1, 1, 1, 1], strides=[2, 2])],
        [X], [("y", None)], [weights("w", [4, 2, 3, 3]), weights("b", [4], 3)]))
    save("op_Conv_group_dil.model", model(
        [helper.make_node("Conv", ["x", "w"], ["y"], group=2, dilations=[2, 2],
                          auto_pad="SAME_UPPER")],
        [X], [("y", None)], [weights("w", [2, 1, 2, 2])]))
    for op in ["MaxPool", "AveragePool"]:
        save(f"op_{op}.model", model(
            [helper.make_node(op, ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2],
                              pads=[1, 1, 1, 1])], [X], [("y", None)]))
        save(f"op_{op}_ceil.model", model(
            [helper.make_node(op, ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2],
                              ceil_mode=1)], [X], [("y", None)]))
        save(f"op_{op}_same_lower.model", model(
            [helper.make_node(op, ["x"], ["y"], kernel_shape=[2, 2], auto_pad="SAME_LOWER")],
            [X], [("y", None)]))
    for op in ["GlobalAveragePool", "GlobalMaxPool"]:
        save(f"op_{op}.model", model([helper.make_node(op, ["x"], ["y"])], [X], [("y", None)]))
    save("op_BatchNormalization.model", model(
        [helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"])], [X],
        [("y", None)], [weights("s", [2]), weights("b", [2], 2), weights("m", [2], 3),
                        numpy_helper.from_array(np.array([0.5, 2.0], np.float32), "v")]))
    save("op_LayerNormalization.model", model(
        [helper.make_node("LayerNormalization", ["x", "s", "b"], ["y"], axis=-1)],
        [("x", [2, 4])], [("y", None)], [weights("s", [4]), weights("b", [4], 2)], opset=17))
    save("op_Softmax.model", unary("Softmax", axis=1))
    save("op_Softmax11.model", model([helper.make_node("Softmax", ["x"], ["y"], axis=1)],
                                     [("x", [2, 3, 4])], [("y", None)], opset=11))
    save("op_ReduceMean.model", model(
        [helper.make_node("ReduceMean", ["x"], ["y"], axes=[1], keepdims=1)],
        [("x", [2, 3, 4])], [("y", None)]))
    save("op_Concat.model", model([helper.make_node("Concat", ["x", "z"], ["y"], axis=1)],
                                  [("x", [2, 3]), ("z", [2, 2])], [("y", None)]))
    save("op_Split.model", model(
        [helper.make_node("Split", ["x", "s"], ["a", "b"], axis=1),
         helper.make_node("Add", ["a", "b"], ["y"])],
        [("x", [2, 4])], [("y", None)], [ints("s", [2, 2])]))
    save("op_Slice.model", model(
        [helper.make_node("Slice", ["x", "st", "en", "ax", "sp"], ["y"])],
        [("x", [4, 6])], [("y", None)],
        [ints("st", [1, 0]), ints("en", [4, 6]), ints("ax", [0, 1]), ints("sp", [1, 2])]))
    save("op_Reshape.model", model([helper.make_node("Reshape", ["x", "s"], ["y"])],
                                   [("x", [2, 3, 4])], [("y", None)], [ints("s", [0, -1])]))
    save("op_Flatten.model", model([helper.make_node("Flatten", ["x"], ["y"], axis=2)],
                                   [("x", [2, 3, 4])], [("y", None)]))
    save("op_Transpose.model", model([helper.make_node("Transpose", ["x"], ["y"], perm=[2, 0, 1])],
                                     [("x", [2, 3, 4])], [("y", None)]))
    save("op_Squeeze.model", model([helper.make_node("Squeeze", ["x", "a"], ["y"])],
                                   [("x", [2, 1, 4])], [("y", None)], [ints("a", [1])]))
    save("op_Unsqueeze.model", model([helper.make_node("Unsqueeze", ["x", "a"], ["y"])],
                                     [("x", [2, 4])], [("y", None)], [ints("a", [0, 2])]))
    save("op_Pad.model", model([helper.make_node("Pad", ["x", "p", "v"], ["y"])],
                               [("x", [2, 3])], [("y", None)],
                               [ints("p", [0, 1, 1, 0]),
                                numpy_helper.from_array(np.array(0.5, np.float32), "v")]))
    save("op_Dropout.model", unary("Dropout"))
    save("op_Constant.model", model(
        [helper.make_node("Constant", [], ["c"], value=weights("v", [3])),
         helper.make_node("Add", ["x", "c"], ["y"])], [("x", [2, 3])], [("y", None)]))
    save("op_Shape.model", model(
        [helper.make_node("Shape", ["x"], ["s"]),
         helper.make_node("Reshape", ["x", "s"], ["y"])], [("x", [2, 3])], [("y", None)]))
    # The activations and index operators of modern networks (src/ops/activation_ops.cpp,
    # index_ops.cpp) and the shape computations evaluated at import (src/onnx/evaluate/).
    for op, attrs in [("HardSigmoid", {"alpha": 0.2}), ("HardSwish", {}),
                      ("LeakyRelu", {"alpha": 0.1})]:
        save(f"op_{op}.model", unary(op, **attrs))
    f32 = lambda name, v: numpy_helper.from_array(np.array(v, np.float32), name)
    save("op_Clip_relu6.model", model([helper.make_node("Clip", ["x", "lo", "hi"], ["y"])],
                                      [("x", [2, 3])], [("y", None)],
                                      [f32("lo", 0.0), f32("hi", 6.0)]))
    save("op_PRelu.model", model([helper.make_node("PRelu", ["x", "s"], ["y"])], [X],
                                 [("y", None)], [weights("s", [2, 1, 1])]))
    save("op_Pow.model", model([helper.make_node("Pow", ["x", "e"], ["y"])], [("x", [2, 3])],
                               [("y", None)], [f32("e", 2.0)]))
    save("op_SiLU.model", model([helper.make_node("Sigmoid", ["x"], ["s"]),
                                 helper.make_node("Mul", ["x", "s"], ["y"])],
                                [("x", [2, 3])], [("y", None)]))
    save("op_ReduceSum.model", model([helper.make_node("ReduceSum", ["x", "a"], ["y"], keepdims=0)],
                                     [("x", [2, 3, 4])], [("y", None)], [ints("a", [1])]))
    save("op_Expand.model", model([helper.make_node("Expand", ["x", "s"], ["y"])],
                                  [("x", [3, 1])], [("y", None)], [ints("s", [2, 3, 4])]))
    save("op_Gather.model", model([helper.make_node("Gather", ["x", "i"], ["y"], axis=1)],
                                  [("x", [2, 5])], [("y", None)], [ints("i", [4, 0, 2])]))
    save("op_Resize.model", model(
        [helper.make_node("Resize", ["x", "", "sc"], ["y"], mode="nearest")], [X],
        [("y", None)], [f32("sc", [1.0, 1.0, 2.0, 2.0])]))
    save("op_ShapeArithmetic.model", model(
        [helper.make_node("Shape", ["x"], ["s"]),
         helper.make_node("Gather", ["s", "k"], ["d"], axis=0),
         helper.make_node("Mul", ["d", "two"], ["d2"]),
         helper.make_node("Div", ["d2", "two"], ["d1"]),
         helper.make_node("Unsqueeze", ["d1", "ax"], ["u"]),
         helper.make_node("Concat", ["u", "m1"], ["t"], axis=0),
         helper.make_node("Reshape", ["x", "t"], ["y"])],
        [("x", [2, 3, 4])], [("y", None)],
        [ints("k", 0), ints("two", 2), ints("ax", [0]), ints("m1", [-1])]))
    # An operator graphsub keeps opaque, between two it converts.
    save("op_opaque_Resize.model", model(
        [helper.make_node("Relu", ["x"], ["r"]),
         helper.make_node("Resize", ["r", "", "sc"], ["z"], mode="nearest"),
         helper.make_node("Sigmoid", ["z"], ["y"])], [X], [("y", None)],
        [numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "sc")]))
    # Chains the optimizer has rules for (conv + relu, matmul + add).
    save("opt_conv_relu_pool.model", model(
        [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c"], ["r"]),
         helper.make_node("MaxPool", ["r"], ["y"], kernel_shape=[2, 2], strides=[2, 2])],
        [X], [("y", None)], [weights("w", [2, 2, 3, 3])]))

    # External data (packed as in fuzz_harness.h: "GSXD", model length, model, data file).
    data = np.arange(24, dtype=np.float32).tobytes()

    def external(location, offset=0, length=None):
        w = TensorProto(name="w", data_type=F, dims=[4, 3])
        w.data_location = TensorProto.EXTERNAL
        for k, v in [("location", location), ("offset", str(offset))] + \
                ([("length", str(length))] if length is not None else []):
            e = w.external_data.add()
            e.key, e.value = k, v
        return model([helper.make_node("MatMul", ["x", "w"], ["y"])], [("x", [2, 4])],
                     [("y", None)], [w])

    def packed(m, d=data):
        return b"GSXD" + struct.pack("<I", len(m)) + m + d

    save("ext_ok.model", packed(external("w.bin", 48, 48)))
    save("ext_no_length.model", packed(external("w.bin")))
    save("ext_inside_link.model", packed(external("inlink.bin", 0, 48)))
    save("ext_link_outside.model", packed(external("link.bin", 0, 48)))
    save("ext_fifo.model", packed(external("fifo.bin", 0, 48)))
    save("ext_dir.model", packed(external("sub", 0, 48)))
    save("ext_dotdot.model", packed(external("../w.bin", 0, 48)))
    save("ext_past_end.model", packed(external("w.bin", 90, 48)))
    save("ext_huge_offset.model", packed(external("w.bin", 9223372036854775800, 48)))


if __name__ == "__main__":
    main()
