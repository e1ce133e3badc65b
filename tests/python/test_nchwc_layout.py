"""ONNX Runtime's blocked (NCHWc) layout as graphsub predicts it (report["layout"]) against
what ONNX Runtime itself writes at level all on this CPU: convolutions it runs blocked, and
the reorders it inserts. And the channel padding for the layout: the written file computes
what the original computes in ONNX Runtime, and runs the padded convolutions blocked."""

import collections
import os

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import graphsub

NCHWC = "com.microsoft.nchwc"


def written_by_ort(model, tmp_path):
    path = os.path.join(tmp_path, "in.onnx")
    onnx.save(model, path)
    out = os.path.join(tmp_path, "ort_written.onnx")
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads = 1
    so.optimized_model_filepath = out
    so.log_severity_level = 3
    ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    m = onnx.load(out)
    ops = collections.Counter((n.domain, n.op_type) for n in m.graph.node)
    blocked = ops[(NCHWC, "Conv")]
    plain = ops[("", "Conv")] + ops[("com.microsoft", "FusedConv")]
    reorders = ops[(NCHWC, "ReorderInput")] + ops[(NCHWC, "ReorderOutput")]
    return blocked, plain, reorders


def predicted(layout):
    return (layout["blocked_convs"], layout["plain_convs"],
            layout["reorder_inputs"] + layout["reorder_outputs"])


def conv(name, x, y, cin, cout, groups=1, k=1, act=None, inits=None, rng=None):
    w = numpy_helper.from_array(
        rng.standard_normal((cout, cin // groups, k, k)).astype(np.float32) * 0.3, name + "_w")
    b = numpy_helper.from_array(rng.standard_normal(cout).astype(np.float32) * 0.1, name + "_b")
    inits += [w, b]
    out = y if act is None else name + "_pre"
    nodes = [helper.make_node("Conv", [x, w.name, b.name], [out], group=groups,
                              pads=[k // 2] * 4, name=name)]
    if act:
        nodes.append(helper.make_node(act, [out], [y], name=name + "_act"))
    return nodes


def model_of(nodes, inits, channels, side=14):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", channels, side, side])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    g = helper.make_graph(nodes, "g", [x], [y], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def chain(widths, groups_at=(), se_at=(), seed=0, group_width=8):
    """Convolutions of the given widths, a grouped 3x3 (group_width channels a group) after each
    index in groups_at, a squeeze-excitation after each index in se_at, and a residual where
    widths repeat."""
    rng = np.random.default_rng(seed)
    nodes, inits = [], []
    x = "x"
    for i in range(1, len(widths)):
        y = f"t{i}"
        nodes += conv(f"c{i}", x, y, widths[i - 1], widths[i], act="Relu", inits=inits, rng=rng)
        if i in groups_at:
            nodes += conv(f"g{i}", y, y + "g", widths[i], widths[i],
                          groups=widths[i] // group_width, k=3,
                          act="Relu", inits=inits, rng=rng)
            y += "g"
        if i in se_at:
            nodes.append(helper.make_node("GlobalAveragePool", [y], [y + "p"]))
            nodes += conv(f"s{i}", y + "p", y + "s", widths[i], widths[i], act="Sigmoid",
                          inits=inits, rng=rng)
            nodes.append(helper.make_node("Mul", [y, y + "s"], [y + "m"]))
            y += "m"
        if widths[i] == widths[i - 1] and i > 1:
            nodes.append(helper.make_node("Add", [y, x], [y + "r"]))
            y += "r"
        x = y
    nodes.append(helper.make_node("Relu", [x], ["y"]))
    return model_of(nodes, inits, widths[0])


CASES = {
    "aligned": chain([16, 32, 32, 64]),
    "unaligned inputs": chain([16, 26, 26, 110, 24]),
    "quantum of 4": chain([16, 20, 36, 104]),
    "squeeze-excitation": chain([16, 32, 32], se_at=(1, 2)),
    "groups of 8": chain([16, 48, 48, 40], groups_at=(1, 3)),
    "groups of 4": chain([16, 48, 48, 40], groups_at=(1, 3), group_width=4),
    "odd groups": chain([16, 40, 40, 56], groups_at=(1, 2, 3), se_at=(2,), group_width=4),
}


@pytest.fixture(scope="module")
def block(tmp_path_factory):
    """ONNX Runtime's block on this CPU, read from graphsub's report; skips where the runtime
    runs no blocked layout (then there is nothing to predict)."""
    blocked, _, _ = written_by_ort(chain([16, 32]), tmp_path_factory.mktemp("probe"))
    if not blocked:
        pytest.skip("ONNX Runtime runs no blocked layout on this CPU")
    _, report = graphsub.optimize(chain([16, 32]), target="ort")
    return report["layout"]["block"] if "layout" in report else None


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_predicted_layout_is_what_onnx_runtime_writes(case, tmp_path, block):
    model = CASES[case]
    out, report = graphsub.optimize(model, target="ort", seed=1)
    layout = report["layout"]
    assert layout["block"] in (8, 16)
    assert predicted(layout["original"]) == written_by_ort(model, tmp_path), case
    # And for the file graphsub writes, whichever candidate the guard chose.
    assert predicted(report["timings"]["layout"]["written"]) == written_by_ort(out, tmp_path), case


def run(model, feeds):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.log_severity_level = 3
    s = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return s.run(None, feeds)


@pytest.mark.parametrize("case", ["groups of 4", "odd groups"])
def test_padding_is_predicted_to_block_every_conv_and_the_file_computes_the_same(
        case, tmp_path, block):
    model = CASES[case]
    out, report = graphsub.optimize(model, target="ort", seed=1)
    layout = report["layout"]
    if block == 16:
        assert layout["padded_regions"], layout
        assert layout["padded"]["plain_convs"] == 0
        assert layout["padded"]["blocked_convs"] > layout["search"]["blocked_convs"]
        # Groups of 4 run blocked at neither block size: merged into 16, they do at both.
        assert layout["other_block"] == 8
        assert layout["padded_at_other_block"]["plain_convs"] == 0
    feeds = {"x": np.random.default_rng(2).standard_normal((3, model.graph.input[0].type.
                                                            tensor_type.shape.dim[1].dim_value,
                                                            14, 14)).astype(np.float32)}
    for a, b in zip(run(model, feeds), run(out, feeds)):
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-4)
    # Where the guard wrote the padded graph (on these small models it seldom finds it faster),
    # ONNX Runtime runs every convolution of it blocked.
    _, plain, _ = written_by_ort(out, tmp_path)
    if report["timings"]["layout"]["written_padded"]:
        assert plain == 0


def test_a_merge_that_gains_at_this_block_only_is_left_out_and_named(block):
    """Groups of 8 are whole blocks at block 8: merging them for block 16 would only double
    their arithmetic there, so the file written on either machine keeps them."""
    out, report = graphsub.optimize(CASES["groups of 8"], target="ort", seed=1)
    layout = report["layout"]
    if block not in (8, 16):
        pytest.skip("no blocked layout to tune for")
    if block == 8:  # groups of 8 run blocked here: there is nothing to merge
        assert not layout["padded_regions"]
        return
    assert not layout["padded_regions"], layout
    assert layout["left_out_block_dependent"], layout
    assert "gains at block 16 only" in layout["left_out_block_dependent"][0]
    assert not report["timings"]["layout"]["written_padded"]
