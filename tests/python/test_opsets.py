"""The installed package over every opset ONNX Runtime runs: models written at opsets 7 to 23
come out at their own opset, pass onnx's checker and compute the original's outputs in
ONNX Runtime (the pinned PyPI release). Old and new operator forms are read with their
meaning (Clip-6, Slice-1, Pad-2, Split-18 num_outputs, Pad-18 axes, ReduceMean-18 axes)."""

import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import graphsub

ANALYTIC = {"target": "onednn", "seed": 1, "threads": 1, "budget": 200}


def run(model, feeds):
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def make(nodes, inputs, outputs, inits, opset):
    graph = helper.make_graph(nodes, f"opset{opset}", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = max(4, helper.find_min_ir_version_for(model.opset_import))
    onnx.checker.check_model(model)
    return model


def conv_net(opset):
    """Conv -> Relu -> Add(residual) -> MaxPool -> Clip -> GlobalAveragePool -> Gemm ->
    Softmax, each in the form of `opset` (Clip's bounds attributes before 11)."""
    rng = np.random.default_rng(opset)
    w = numpy_helper.from_array(rng.standard_normal((4, 4, 3, 3)).astype(np.float32) * 0.3, "w")
    fc = numpy_helper.from_array(rng.standard_normal((5, 4)).astype(np.float32), "fc")
    fb = numpy_helper.from_array(rng.standard_normal((5,)).astype(np.float32), "fb")
    inits = [w, fc, fb]
    if opset < 11:
        clip = helper.make_node("Clip", ["p"], ["cl"], min=0.0, max=6.0)
    else:
        lo = numpy_helper.from_array(np.array(0.0, np.float32), "lo")
        hi = numpy_helper.from_array(np.array(6.0, np.float32), "hi")
        inits += [lo, hi]
        clip = helper.make_node("Clip", ["p", "lo", "hi"], ["cl"])
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("Add", ["r", "x"], ["a"]),
        helper.make_node("MaxPool", ["a"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        clip,
        helper.make_node("GlobalAveragePool", ["cl"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"], axis=1),
        helper.make_node("Gemm", ["f", "fc", "fb"], ["l"], transB=1),
        helper.make_node("Softmax", ["l"], ["y"], axis=1),
    ]
    return make(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4, 8, 8])],
                [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 5])], inits, opset)


def default_opset(model):
    return next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))


def assert_same_in_ort(original, optimized, feeds):
    want = run(original, feeds)
    got = run(optimized, feeds)
    assert len(want) == len(got)
    for w, g in zip(want, got):
        assert w.shape == g.shape
        assert np.abs(w).max() > 0
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("opset", [7, 9, 10, 11, 13, 17, 18, 20, 21, 23])
def test_a_model_comes_out_at_its_own_opset_and_runs_in_onnx_runtime(opset):
    model = conv_net(opset)
    feeds = {"x": np.random.default_rng(0).standard_normal((2, 4, 8, 8)).astype(np.float32)}
    out, _ = graphsub.optimize(model, **ANALYTIC)
    assert default_opset(out) == opset
    onnx.checker.check_model(out, full_check=True)
    assert_same_in_ort(model, out, feeds)


def test_clip_6_bounds_are_read_from_its_attributes():
    """Clip-6 clamps with attributes: read as the inputs of Clip-11, it would clamp nothing."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 6])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 6])
    model = make([helper.make_node("Clip", ["x"], ["c"], min=-0.5, max=0.25),
                  helper.make_node("Relu", ["c"], ["y"])], [x], [y], [], 10)
    out, _ = graphsub.optimize(model, **ANALYTIC)
    feeds = {"x": np.array([[-2, -0.4, 0, 0.2, 0.3, 5]], np.float32)}
    np.testing.assert_allclose(run(out, feeds)[0], [[0, 0, 0, 0.2, 0.25, 0.25]], rtol=1e-6)


def test_slice_1_and_pad_2_attribute_forms_are_read_and_written():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 6, 6])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 6, 4])
    nodes = [helper.make_node("Slice", ["x"], ["s"], starts=[1, 0], ends=[5, 4], axes=[2, 3]),
             helper.make_node("Pad", ["s"], ["p"], pads=[0, 0, 1, 0, 0, 0, 1, 0], value=2.0),
             helper.make_node("Relu", ["p"], ["y"])]
    model = make(nodes, [x], [y], [], 9)
    out, _ = graphsub.optimize(model, **ANALYTIC)
    assert default_opset(out) == 9
    feeds = {"x": np.random.default_rng(2).standard_normal((1, 2, 6, 6)).astype(np.float32)}
    assert_same_in_ort(model, out, feeds)


def test_split_18_num_outputs_gives_a_smaller_last_part():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 7])
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, k])
            for n, k in zip("abc", (3, 3, 1))]
    nodes = [helper.make_node("Relu", ["x"], ["r"]),
             helper.make_node("Split", ["r"], ["a", "b", "c"], axis=1, num_outputs=3)]
    model = make(nodes, [x], outs, [], 18)
    out, _ = graphsub.optimize(model, **ANALYTIC)
    feeds = {"x": np.arange(-3, 4, dtype=np.float32).reshape(1, 7)}
    got = run(out, feeds)
    assert [g.shape for g in got] == [(1, 3), (1, 3), (1, 1)]
    assert_same_in_ort(model, out, {"x": feeds["x"] + 4})


def test_pad_18_axes_and_reduce_mean_18_axes_inputs_are_read():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 1, 6])
    inits = [numpy_helper.from_array(np.array([1, 1], np.int64), "pads"),
             numpy_helper.from_array(np.array([-1], np.int64), "pad_axes"),
             numpy_helper.from_array(np.array(1.5, np.float32), "v"),
             numpy_helper.from_array(np.array([1], np.int64), "mean_axes")]
    nodes = [helper.make_node("Pad", ["x", "pads", "v", "pad_axes"], ["p"]),
             helper.make_node("ReduceMean", ["p", "mean_axes"], ["m"], keepdims=1),
             helper.make_node("Sigmoid", ["m"], ["y"])]
    model = make(nodes, [x], [y], inits, 18)
    out, _ = graphsub.optimize(model, **ANALYTIC)
    assert default_opset(out) == 18
    feeds = {"x": np.random.default_rng(3).standard_normal((2, 3, 4)).astype(np.float32)}
    assert_same_in_ort(model, out, feeds)


def test_a_form_graphsub_does_not_read_is_kept_opaque_and_still_runs():
    """Resize-10 (scales as its second input, no coordinate modes) is not read: it is kept as
    it was, and the model around it is still optimized and runs the same."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 2, 2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 4, 4])
    scales = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")
    nodes = [helper.make_node("Relu", ["x"], ["r"]),
             helper.make_node("Resize", ["r", "scales"], ["z"], mode="nearest"),
             helper.make_node("Relu", ["z"], ["y"])]
    model = make(nodes, [x], [y], [scales], 10)
    out, report = graphsub.optimize(model, **ANALYTIC)
    assert [n.op_type for n in out.graph.node].count("Resize") == 1
    assert any("Resize-10" in str(v) for v in report["import"].values())
    feeds = {"x": np.array([[[[1, -2], [3, 4]]]], np.float32)}
    assert_same_in_ort(model, out, feeds)


def test_a_model_older_than_opset_7_is_kept_as_written():
    """Before opset 7, Add broadcasts only with its `broadcast` attribute: such a model is
    read with every node opaque and written at its opset as it was (ONNX Runtime guarantees
    only opsets from 7, so the file is compared node by node)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    b = numpy_helper.from_array(np.array([1, 2, 3], np.float32), "b")
    nodes = [helper.make_node("Add", ["x", "b"], ["s"], broadcast=1),
             helper.make_node("Relu", ["s"], ["y"])]
    graph = helper.make_graph(nodes, "old", [x],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])], [b])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 6)])
    model.ir_version = 3
    out, report = graphsub.optimize(model, **ANALYTIC)
    assert default_opset(out) == 6
    onnx.checker.check_model(out)
    written = [(n.op_type, [(a.name, helper.get_attribute_value(a)) for a in n.attribute])
               for n in out.graph.node]
    assert written == [("Add", [("broadcast", 1)]), ("Relu", [])]
    assert any("opset 6 predates" in str(v) for v in report["import"].values())


def test_an_opset_past_the_pinned_release_is_refused_naming_the_range():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "new", [x],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2])])
    past = onnx.defs.onnx_opset_version() + 1
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", past)])
    with pytest.raises(graphsub.Error, match=rf"opset {past} .* reads opsets 1 to {past - 1}"):
        graphsub.optimize(model, **ANALYTIC)


def test_the_installed_package_and_command_are_the_ones_imported():
    """`pip install .` put the module and the `graphsub` command into this environment: the
    tests import that installation, not a build folder on the path."""
    assert "site-packages" in graphsub.__file__
    command = shutil.which("graphsub", path=os.path.dirname(sys.executable))
    assert command is not None
    done = subprocess.run([command, "optimize", "--help"], capture_output=True, text=True)
    assert done.returncode == 0 and "--target" in done.stdout
