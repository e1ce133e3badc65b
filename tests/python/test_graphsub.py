"""The Python module graphsub: every function, its errors, interruption, and that
optimize()'s report is the command line's --report-json (run through CTest: python_tests)."""

import json
import os
import signal
import subprocess
import threading
import time

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import graphsub

SOURCE_DIR = os.environ.get("GRAPHSUB_SOURCE_DIR",
                            os.path.join(os.path.dirname(__file__), "..", ".."))
GRAPHSUB_BIN = os.environ.get("GRAPHSUB_BIN", os.path.join(SOURCE_DIR, "build", "graphsub"))
TRUE_RULES = os.path.join(SOURCE_DIR, "tests", "rules", "true.rules")

UNSOUND_RULE = '(rule drop-addend "x + y is not x" (source (ewadd ?x ?y)) (target ?x))\n'


def conv_relu_model():
    """x -> Conv -> Relu -> Add(., x) -> Relu -> y: the conv absorbs the relu and the add."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((3, 3, 3, 3)).astype(np.float32), "w")
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("Add", ["r", "x"], ["a"]),
        helper.make_node("Relu", ["a"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "conv_relu", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 8, 8])], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


@pytest.fixture
def model_file(tmp_path):
    path = tmp_path / "model.onnx"
    onnx.save(conv_relu_model(), str(path))
    return path


@pytest.fixture
def cache_dir(tmp_path_factory):
    # One cache for the module and the command line: the same machine profile, so the same
    # predicted costs.
    return str(tmp_path_factory.getbasetemp() / "cache")


def without_timings(report):
    return {k: v for k, v in report.items() if k != "timings"}


# target="onednn" (analytic costs) wherever a test asserts what was rewritten or compares two
# runs: with the default ort target, ONNX Runtime timings (the cost table, the latency guard)
# decide, and a loaded CI machine once made the guard keep the original.
DETERMINISTIC = {"target": "onednn"}


def test_optimize_model_proto_returns_a_checked_model_and_a_report(cache_dir):
    model, report = graphsub.optimize(conv_relu_model(), cache_dir=cache_dir, **DETERMINISTIC)
    onnx.checker.check_model(model)
    assert report["job"] == "onnx"
    assert report["onnx_ops"]["before"] == 4
    assert report["graph_ops"]["after"] < report["graph_ops"]["before"]
    assert report["rules"]["steps"], report["rules"]
    assert report["check"]["ok"] and report["check"]["runs"] == 3
    assert [o["name"] for o in report["check"]["outputs"]] == ["y"]
    assert report["cost"]["predicted_after_us"] <= report["cost"]["predicted_before_us"]
    assert set(report["timings"]) >= {"search_s", "import_s", "check_s", "export_s"}


def test_default_target_is_onnx_runtime_guarded_by_a_timing(cache_dir):
    # Which file the guard keeps depends on timings; that it reports its choice and returns
    # that file does not.
    model, report = graphsub.optimize(conv_relu_model(), cache_dir=cache_dir, budget=100)
    onnx.checker.check_model(model)
    if report["options"]["target"] == "onednn":  # no Node.js or onnxruntime-node here
        notes = report["import"]["notes"]
        assert any("ONNX Runtime is not available" in n for n in notes), notes
        return
    assert report["options"]["target"] == "ort" and report["cost"]["model"] == "ort"
    guard = report["timings"]["guard"]
    assert guard["written"] in ("optimized", "original", "input"), guard
    assert guard["runs"] >= 3 and len(guard["candidates"]) >= 1, guard
    assert report["onnx_ops"]["after"] == len(model.graph.node)


def test_ort_contrib_ops_reports_what_it_fused(cache_dir):
    model, report = graphsub.optimize(conv_relu_model(), cache_dir=cache_dir, budget=100,
                                      ort_contrib_ops=True)
    assert report["options"]["target"] == "ort"  # else ort_contrib_ops is an error
    assert report["options"]["ort_contrib_ops"] == "true"
    assert report["ort_contrib_ops"]["written"] == {}  # nothing of ONNX Runtime's for a conv
    assert all(n.domain in ("", "ai.onnx") for n in model.graph.node)


def test_ort_contrib_ops_need_the_ort_target(cache_dir):
    with pytest.raises(ValueError, match="--ort-contrib-ops: .* --target ort only"):
        graphsub.optimize(conv_relu_model(), cache_dir=cache_dir, target="onednn",
                          ort_contrib_ops=True)


def test_optimize_takes_bytes_or_a_path_alike(model_file, cache_dir):
    from_path, report_path = graphsub.optimize(model_file, cache_dir=cache_dir, **DETERMINISTIC)
    from_bytes, report_bytes = graphsub.optimize(model_file.read_bytes(), cache_dir=cache_dir,
                                                 **DETERMINISTIC)
    assert from_path.SerializeToString() == from_bytes.SerializeToString()
    assert without_timings(report_path) == without_timings(report_bytes)


def test_report_is_the_command_lines_report_json(model_file, tmp_path, cache_dir):
    flags = {"budget": 50, "alpha": 1.1, "check": 2, "seed": 7, **DETERMINISTIC}
    _, report = graphsub.optimize(str(model_file), cache_dir=cache_dir, **flags)
    out, report_json = tmp_path / "cli.onnx", tmp_path / "cli.json"
    subprocess.run([GRAPHSUB_BIN, "-q", "optimize", str(model_file), "-o", str(out),
                    "--report-json", str(report_json), "--cache-dir", cache_dir,
                    "--budget", "50", "--alpha", "1.1", "--check", "2", "--seed", "7",
                    "--target", "onednn"],
                   check=True)
    cli_report = json.loads(report_json.read_text())
    assert without_timings(report) == without_timings(cli_report)
    assert report["timings"].keys() == cli_report["timings"].keys()


def test_missing_file_raises_error_naming_it(tmp_path):
    missing = tmp_path / "missing.onnx"
    with pytest.raises(graphsub.Error, match="cannot open it: No such file or directory"):
        graphsub.optimize(missing)


def test_garbage_bytes_raise_error():
    with pytest.raises(graphsub.Error, match="not a valid ONNX model"):
        graphsub.optimize(b"definitely not a model")


def test_wrong_model_type_is_a_type_error():
    with pytest.raises(TypeError, match="onnx.ModelProto, bytes or a path"):
        graphsub.optimize(42)


@pytest.mark.parametrize("option, message", [
    ({"alpha": float("nan")}, "--alpha nan: must be a number from 1 to 10"),
    ({"rtol": -1.0}, "--rtol -1: must be a finite number"),
    ({"atol": float("inf")}, "--atol inf: must be a finite number"),
    ({"budget": 10**9}, "without --time-limit the budget is at most"),
    ({"threads": 100000}, "--threads 100000: at most"),
])
def test_bad_option_values_are_value_errors_with_the_cli_message(option, message, cache_dir):
    with pytest.raises(ValueError, match=message) as e:
        graphsub.optimize(conv_relu_model(), cache_dir=cache_dir, **option)
    assert isinstance(e.value, graphsub.Error)


def test_input_shape_naming_no_input_lists_the_inputs(cache_dir):
    with pytest.raises(graphsub.Error,
                       match="--input-shape names 'nope', which is not an input of the model "
                             "\\(its inputs: x\\)"):
        graphsub.optimize(conv_relu_model(), cache_dir=cache_dir, input_shapes={"nope": (1, 3, 8, 8)})


def test_unknown_target_lists_the_valid_ones():
    assert graphsub.TARGETS == ("ort", "onednn")
    with pytest.raises(ValueError, match="no such target \\(valid targets: ort, onednn\\)"):
        graphsub.optimize(conv_relu_model(), target="gpu")


def test_unknown_rule_name_is_an_error(cache_dir):
    with pytest.raises(graphsub.Error, match="--disable-rule no-such-rule: no rule of that name"):
        graphsub.optimize(conv_relu_model(), disable_rules=["no-such-rule"], cache_dir=cache_dir)


def test_a_false_rule_fails_the_check_and_is_named(tmp_path, cache_dir):
    rules = tmp_path / "unsound.rules"
    rules.write_text(UNSOUND_RULE)
    # onednn: the search's choice is checked as soon as it is found.
    with pytest.raises(graphsub.CheckError, match="--disable-rule drop-addend") as e:
        graphsub.optimize(conv_relu_model(), rules=rules, cache_dir=cache_dir, **DETERMINISTIC)
    assert e.value.report["check"]["ok"] is False


def test_a_false_rule_is_never_written_for_onnx_runtime(tmp_path, cache_dir):
    """With the ort target only the model to be written is checked, after the latency guard:
    the false rewrite is refused when the guard picks it, and otherwise the input is written,
    unchanged, with no check needed."""
    rules = tmp_path / "unsound.rules"
    rules.write_text(UNSOUND_RULE)
    original = conv_relu_model()
    try:
        model, report = graphsub.optimize(original, rules=rules, cache_dir=cache_dir)
    except graphsub.CheckError as e:
        assert "--disable-rule drop-addend" in str(e)
        assert e.report["check"]["ok"] is False
        return
    assert report["check"] is None
    # The input as given, or (where the guard timed it faster) the original as imported:
    # either way the false rule's Add-less graph is not what was written.
    if report["check_not_needed"] == "the input is written as given":
        assert model == original
    else:
        assert report["check_not_needed"] == "the original as imported is written"
        assert [n.op_type for n in model.graph.node] == [n.op_type for n in original.graph.node]


def test_verify_proves_true_rules_and_refutes_a_false_one():
    verdicts = graphsub.verify(TRUE_RULES, threads=2)
    assert verdicts and all(v["proved"] for v in verdicts), verdicts
    false = graphsub.verify(UNSOUND_RULE)
    assert [(v["name"], v["verdict"]) for v in false] == [("drop-addend", "counterexample")]


def test_verify_errors_name_the_file_and_the_line(tmp_path):
    with pytest.raises(graphsub.Error, match="cannot"):
        graphsub.verify(tmp_path / "none.rules")
    with pytest.raises(graphsub.Error, match="<text>:1"):
        graphsub.verify("(rule broken")


def test_check_axioms_tests_the_named_axioms():
    result = graphsub.check_axioms(only=["ewadd-comm", "ewmul-assoc"], threads=2)
    assert [a["name"] for a in result["axioms"]] == ["ewadd-comm", "ewmul-assoc"]
    assert result["all_hold"] and all(a["instances"] > 0 for a in result["axioms"])
    with pytest.raises(graphsub.Error, match="no axiom named 'nope'"):
        graphsub.check_axioms(only=["nope"])


def test_generate_writes_a_library_of_proved_rules(tmp_path):
    out = tmp_path / "small.rules"
    result = graphsub.generate(2, ops=["ewadd", "relu"], output=out, threads=2)
    assert result["rules"] > 0
    assert out.read_text() == result["library"]
    assert (tmp_path / "small.unproved").read_text() == result["unproved"]
    assert "graphsub generate --max-ops 2 --ops ewadd,relu" in result["command"]
    proved = graphsub.verify(str(out), threads=2)
    # Each equality is written in both directions where both can rewrite.
    assert len(proved) >= result["rules"] and all(v["proved"] for v in proved)
    with pytest.raises(ValueError, match="--max-ops 9: expected 1 to 5"):
        graphsub.generate(9)


def test_unfold_writes_the_proved_forms_of_a_fused_operator(tmp_path):
    out = tmp_path / "att.rules"
    result = graphsub.unfold("(ort_mha_heads ?p_heads 1 ?q ?k ?v)",
                             ["ort-mha-heads", "attention-packed-heads", "attention-sdpa-heads"],
                             via=["permute-middle-then-last"], depth=1, output=out, threads=2)
    # The unfolded form, and the key moved straight into its transpose.
    assert result["rules"] == 2 and result["forms"] == 2
    assert out.read_text() == result["library"]
    assert "(permute 0_2_3_1 (split_axis 2 ?p_heads ?b))" in result["library"]
    assert result["command"].startswith("graphsub unfold --term")
    assert all(v["proved"] for v in graphsub.verify(str(out), threads=2))
    with pytest.raises(graphsub.Error, match="name it \\?p_heads"):
        graphsub.unfold("(ort_mha_heads ?h 1 ?q ?k ?v)", "ort-mha-heads")


def test_generate_measures_a_fraction_of_the_shares():
    whole = graphsub.generate(3, ops=["ewadd", "relu", "transpose"], threads=2)
    half = graphsub.generate(3, ops=["ewadd", "relu", "transpose"], threads=2, shards=(1, 2))
    assert "--shards 1/2" in half["command"] and "--shards" not in whole["command"]
    assert 0 < half["graphs"] < whole["graphs"]
    same = graphsub.generate(3, ops=["ewadd", "relu", "transpose"], threads=2, shards="2/2")
    assert same["graphs"] == whole["graphs"]
    with pytest.raises(ValueError, match="--shards '3/2': expected K/R"):
        graphsub.generate(3, ops=["ewadd"], shards=(3, 2))


def test_rules_lists_names_origins_and_text():
    listed = graphsub.rules(TRUE_RULES, builtin=False)
    assert listed[0]["name"] == "ewadd-reorder"
    assert listed[0]["origin"].endswith("true.rules:6")
    assert listed[0]["text"].startswith("(rule ewadd-reorder")
    shipped = graphsub.rules()
    assert any(r["origin"] == "built-in" and r["text"] == "" for r in shipped)
    # An equality's name disables both its directions, NAME~rev the reverse alone.
    first = shipped[0]["name"]
    assert shipped[1]["name"] == first + "~rev"
    assert len(graphsub.rules(disabled=[first])) == len(shipped) - 2
    assert len(graphsub.rules(disabled=[first + "~rev"])) == len(shipped) - 1
    with pytest.raises(graphsub.Error, match="--disable-rule nope: no rule of that name"):
        graphsub.rules(disabled=["nope"])


def long_generate(**kwargs):
    # About ten seconds of work or more on an idle machine: long enough to be interrupted.
    return graphsub.generate(3, threads=2, **kwargs)


def test_progress_is_reported_and_a_raising_callback_cancels_the_job():
    calls = []

    def progress(stage, done, total, detail):
        calls.append((stage, done, total, detail))
        if len(calls) == 3:
            raise RuntimeError("enough")

    start = time.monotonic()
    with pytest.raises(RuntimeError, match="enough"):
        long_generate(progress=progress)
    assert time.monotonic() - start < 8
    assert len(calls) == 3
    for stage, done, total, detail in calls:
        assert isinstance(stage, str) and stage and isinstance(detail, str)
        assert 0 <= done and (total == 0 or done <= total)


def test_keyboard_interrupt_from_the_callback_stops_the_job():
    def stop(stage, done, total, detail):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        long_generate(progress=stop)


def test_ctrl_c_interrupts_a_long_call():
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    start = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            long_generate()
    finally:
        timer.cancel()
    assert time.monotonic() - start < 8
    # The module still works afterwards.
    assert graphsub.rules(TRUE_RULES, builtin=False)
