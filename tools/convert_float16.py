#!/usr/bin/env python3
"""Converts a float32 ONNX model to float16 or bfloat16: every FLOAT initializer, Constant,
graph input, output and value_info, and every Cast to FLOAT, takes the new element type.
--to-float goes the other way (FLOAT16 and BFLOAT16 to FLOAT, exactly): ONNX Runtime's CPU
provider has no bfloat16 kernels for MatMul, Add, Relu and the like, so a bfloat16 model is
compared there after widening.

Usage: .venv/bin/python tools/convert_float16.py IN.onnx OUT.onnx [--bfloat16 | --to-float]
Values are rounded to nearest (ties to even). Run with the project venv's python
(onnx, numpy). Used by the tests to make half-precision models from the
torchvision exports; onnxconverter-common does the same with more options but is not packaged.
"""
import argparse
import sys

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper


def to_bfloat16_bits(a):
    """float32 array -> uint16 bfloat16 bit patterns, rounded to nearest even."""
    bits = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    nan = np.isnan(a)
    out = rounded.astype(np.uint16)
    out[nan] = 0x7FC0
    return out


def half_to_float(t):
    """A FLOAT16 or BFLOAT16 tensor's values as float32 (exact)."""
    if t.raw_data:
        bits = np.frombuffer(t.raw_data, dtype=np.uint16)
    else:
        bits = np.array(t.int32_data, dtype=np.uint32).astype(np.uint16)
    if t.data_type == TensorProto.FLOAT16:
        a = bits.view(np.float16).astype(np.float32)
    else:
        a = (bits.astype(np.uint32) << 16).view(np.float32)
    return a.reshape(tuple(t.dims))


def convert_tensor(t, target):
    if target == TensorProto.FLOAT:
        if t.data_type in (TensorProto.FLOAT16, TensorProto.BFLOAT16):
            t.CopyFrom(numpy_helper.from_array(half_to_float(t), t.name))
        return
    if t.data_type != TensorProto.FLOAT:
        return
    a = numpy_helper.to_array(t).astype(np.float32)
    name = t.name
    if target == TensorProto.FLOAT16:
        new = numpy_helper.from_array(a.astype(np.float16), name)
    else:
        new = TensorProto()
        new.name = name
        new.dims.extend(a.shape)
        new.data_type = TensorProto.BFLOAT16
        new.raw_data = to_bfloat16_bits(a).tobytes()
    t.CopyFrom(new)


def convert_graph(g, target):
    for t in g.initializer:
        convert_tensor(t, target)
    sources = (TensorProto.FLOAT16, TensorProto.BFLOAT16) if target == TensorProto.FLOAT else (
        TensorProto.FLOAT,)
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        tt = vi.type.tensor_type
        if tt.elem_type in sources:
            tt.elem_type = target
    for n in g.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.TENSOR:
                convert_tensor(a.t, target)
            if n.op_type == "Cast" and a.name == "to" and a.i in sources:
                a.i = target
            for sub in a.graphs:
                convert_graph(sub, target)
            if a.type == onnx.AttributeProto.GRAPH:
                convert_graph(a.g, target)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("input")
    p.add_argument("output")
    kind = p.add_mutually_exclusive_group()
    kind.add_argument("--bfloat16", action="store_true")
    kind.add_argument("--to-float", action="store_true")
    args = p.parse_args()
    m = onnx.load(args.input)
    target = TensorProto.FLOAT16
    if args.bfloat16:
        target = TensorProto.BFLOAT16
    elif args.to_float:
        target = TensorProto.FLOAT
    convert_graph(m.graph, target)
    onnx.checker.check_model(m)
    onnx.save(m, args.output)


if __name__ == "__main__":
    sys.exit(main())
