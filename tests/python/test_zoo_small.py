"""The export zoo (bench/zoo): the comparison rules of check_zoo.py, and a two-model small zoo
exported, kept on a rerun, and checked with --self-check and with stand-in graphsub binaries
that succeed, change the model, or fail.

The export part needs torch, torchvision, transformers and onnxruntime: the project venv's
pinned packages (scripts/setup.sh), which CI has.
"""

import json
import os
import stat
import subprocess
import sys

import numpy as np
import pytest

ZOO_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "zoo")
sys.path.insert(0, ZOO_DIR)

import check_zoo  # noqa: E402


def test_compare_scales_tolerance_to_magnitude():
    """A difference of 0.05 is fine on outputs near 100 and wrong on outputs near 1."""
    ref = np.array([100.0, -50.0], dtype=np.float32)
    assert check_zoo.compare_arrays(ref, ref + 0.05)["ok"]
    small = np.array([1.0, -0.5], dtype=np.float32)
    row = check_zoo.compare_arrays(small, small + 0.05)
    assert not row["ok"] and row["max_abs"] == pytest.approx(0.05, rel=1e-3)
    assert row["max_rel"] == pytest.approx(0.05, rel=1e-3)


def test_compare_integers_exact_and_nonfinite_in_place():
    ids = np.array([1, 2, 3], dtype=np.int64)
    assert check_zoo.compare_arrays(ids, ids)["ok"]
    assert not check_zoo.compare_arrays(ids, ids + 1)["ok"]
    x = np.array([np.inf, 1.0, np.nan], dtype=np.float32)
    assert check_zoo.compare_arrays(x, x.copy())["ok"]
    assert not check_zoo.compare_arrays(x, np.array([1.0, 1.0, np.nan], np.float32))["ok"]
    assert not check_zoo.compare_arrays(x, x[:2])["ok"]


def test_opaque_share_from_report():
    report = {"import": {"opaque": [{"name": "a", "op_type": "Mod", "domain": ""},
                                    {"name": "b", "op_type": "CNBlock", "domain": "tv"}]},
              "onnx_ops": {"before": 8, "after": 6}}
    assert check_zoo.opaque_share(report) == 0.25
    assert check_zoo.opaque_op_types(report) == {"Mod": 1, "tv::CNBlock": 1}
    assert check_zoo.opaque_share({"graph_ops": {}}) is None


def test_inputs_follow_manifest_and_do_not_depend_on_order():
    inputs = [{"name": "input_ids", "dtype": "int64", "shape": ["batch", "sequence"],
               "values": {"kind": "int", "low": 0, "high": 7}},
              {"name": "attention_mask", "dtype": "int64", "shape": ["batch", "s53"],
               "values": {"kind": "ones"}}]
    dims = {"batch": [1, 3], "sequence": [8, 12], "s53": [12, 18]}
    a = check_zoo.make_inputs(inputs, dims, 5, 1)
    b = check_zoo.make_inputs(inputs[::-1], dims, 5, 1)
    assert a["input_ids"].shape == (3, 12) and a["attention_mask"].shape == (3, 18)
    assert a["input_ids"].max() < 7 and (a["attention_mask"] == 1).all()
    assert np.array_equal(a["input_ids"], b["input_ids"])
    assert not np.array_equal(check_zoo.make_inputs(inputs, dims, 5, 0)["input_ids"][:1, :8],
                              a["input_ids"][:1, :8])


# ---------------------------------------------------------------------------------------
# A small zoo, exported once for the tests below


def _make_zoo(out, *extra):
    cmd = [sys.executable, os.path.join(ZOO_DIR, "make_zoo.py"), "--size", "small", "--out",
           str(out), "--only", "hf-bert", "--only", "tv-squeezenet", "--only", "hf-llama-kv",
           "--exporters", "ts,dynamo", *extra]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def zoo(tmp_path_factory):
    out = tmp_path_factory.mktemp("zoo")
    proc = _make_zoo(out)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open(out / "manifest.json") as f:
        return out, json.load(f)


def test_small_zoo_entries(zoo):
    out, manifest = zoo
    entries = {e["name"]: e for e in manifest["entries"]}
    assert set(entries) == {f"{m}.{x}" for m in ("hf-bert", "tv-squeezenet", "hf-llama-kv")
                            for x in ("ts", "dynamo")}
    for e in entries.values():
        assert e["status"] == "ok", e["error"]
        assert e["torch_check"]["ok"], e["torch_check"]
        assert os.path.getsize(out / e["file"]) == e["bytes"] < 20 * 2**20
        assert e["opset"] == (17 if e["exporter"] == "ts" else 20)
    bert = entries["hf-bert.dynamo"]
    assert bert["dims"] == {"batch": [1, 3], "sequence": [8, 12]}
    assert [i["shape"] for i in bert["inputs"]][0] == ["batch", "sequence"]
    kv = entries["hf-llama-kv.ts"]
    assert kv["dims"]["total_sequence"] == [12, 18]  # past (4, 6) + new tokens (8, 12)
    # graphsub imports past and new tokens at its default 2: the mask's length, their sum.
    assert kv["graphsub_dims"] == {"total_sequence": 4}
    assert not any(os.path.basename(p).startswith(".") for p in os.listdir(out))  # no temps


def test_rerun_keeps_files_and_writes_same_bytes(zoo, tmp_path):
    out, manifest = zoo
    proc = _make_zoo(out, "--no-verify")
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open(out / "manifest.json") as f:
        again = {e["name"]: e for e in json.load(f)["entries"]}
    for e in manifest["entries"]:
        assert again[e["name"]]["kept"] and again[e["name"]]["sha256"] == e["sha256"]
    # A fresh export of the same model, in another process, writes the same bytes.
    proc = subprocess.run([sys.executable, os.path.join(ZOO_DIR, "make_zoo.py"), "--out",
                           str(tmp_path), "--only", "hf-bert", "--no-verify",
                           "--exporters", "ts,dynamo"], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open(tmp_path / "manifest.json") as f:
        fresh = {e["name"]: e["sha256"] for e in json.load(f)["entries"]}
    assert fresh == {n: again[n]["sha256"] for n in fresh}


def _check(zoo_dir, out, *extra):
    cmd = [sys.executable, os.path.join(ZOO_DIR, "check_zoo.py"),
           str(zoo_dir / "manifest.json"), "--out", str(out), *extra]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    with open(out / "summary.json") as f:
        return proc, json.load(f)


def test_self_check_passes(zoo, tmp_path):
    proc, summary = _check(zoo[0], tmp_path, "--self-check")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert summary["counts"] == {"ok": 6}
    sets = {(o["set"], o["name"]) for r in summary["results"] for o in r["outputs"]}
    assert (0, "logits") in sets and (1, "logits") in sets


FAKE_GRAPHSUB = """\
#!{python}
# Stands in for graphsub optimize: {mode}.
import json, shutil, sys
import onnx
from onnx import numpy_helper
args = sys.argv[1:]
src, dst, report = args[1], args[args.index("-o") + 1], args[args.index("--report-json") + 1]
if "{mode}" == "fail":
    sys.exit("error: cannot import " + src)
model = onnx.load(src)
if "{mode}" == "perturb":
    for init in model.graph.initializer:
        if init.data_type == onnx.TensorProto.FLOAT and len(init.dims) >= 1:
            arr = numpy_helper.to_array(init) * 1.5
            init.CopyFrom(numpy_helper.from_array(arr, init.name))
onnx.save(model, dst)
opaque = [{{"name": n.name, "op_type": n.op_type, "domain": n.domain, "reason": "test"}}
          for n in model.graph.node if n.op_type == "Where"]
with open(report, "w") as f:
    json.dump({{"import": {{"opaque": opaque}}, "onnx_ops": {{"before": len(model.graph.node)}},
               "check": {{"ok": True}}}}, f)
"""


def _fake(tmp_path, mode):
    path = tmp_path / f"graphsub-{mode}"
    path.write_text(FAKE_GRAPHSUB.format(python=sys.executable, mode=mode))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


@pytest.mark.parametrize("mode,status,rc", [("copy", "ok", 0), ("perturb", "mismatch", 1),
                                            ("fail", "graphsub-failed", 1)])
def test_check_with_stand_in_graphsub(zoo, tmp_path, mode, status, rc):
    out = tmp_path / "check"
    proc, summary = _check(zoo[0], out, "--graphsub", _fake(tmp_path, mode), "--only",
                           "hf-bert.*", "--flags=--target onednn")
    assert proc.returncode == rc, proc.stdout + proc.stderr
    assert {r["status"] for r in summary["results"]} == {status}
    assert summary["flags"] == ["--target", "onednn"]
    if mode == "fail":
        assert "cannot import" in summary["results"][0]["graphsub"]["error"]
    else:
        assert all(0 < r["opaque_share"] < 1 for r in summary["results"])
        assert "| hf-bert.ts |" in (out / "summary.md").read_text()


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-v"]))


def test_llama_kv_grouped_attention_is_onnx_attention_at_opset_23(zoo, tmp_path):
    """The small Llama with a cache shares each key/value head among a group of query heads,
    repeated before the products. With the fused operators allowed, graphsub writes ONNX's
    Attention over the shared heads (rules/onnx_attention.rules) in a file of opset 23, one per
    layer, equal to the export in ONNX Runtime with a padded row; in a file of the export's
    opset 17, which has no Attention, none."""
    import shutil

    import onnx
    import onnxruntime as ort

    out_dir, manifest = zoo
    entry = next(e for e in manifest["entries"] if e["name"] == "hf-llama-kv.ts")
    src = str(out_dir / entry["file"])
    command = shutil.which("graphsub", path=os.path.dirname(sys.executable))
    assert command is not None

    def optimize(name, *flags):
        dst = str(tmp_path / name)
        done = subprocess.run(
            [command, "--quiet", "optimize", src, "-o", dst, "--target", "ort",
             "--ort-contrib-ops", "--guard-runs", "0", "--dim", "total_sequence=4", *flags],
            capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stdout + done.stderr
        return dst, onnx.load(dst)

    layers = sum(1 for n in onnx.load(src).graph.node if n.op_type == "Softmax")
    assert layers >= 1
    path, model = optimize("opset23.onnx", "--opset", "23")
    assert [o.version for o in model.opset_import if o.domain == ""] == [23]
    attention = [n for n in model.graph.node if n.op_type == "Attention" and n.domain == ""]
    assert len(attention) == layers
    assert not any(n.op_type == "Expand" for n in model.graph.node
                   if n.output[0] in {i for a in attention for i in a.input})

    so = ort.SessionOptions()
    so.log_severity_level = 3
    reference = ort.InferenceSession(src, so, providers=["CPUExecutionProvider"])
    written = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(3)
    batch, seq, past = 2, 3, 5
    feeds = {}
    for i in reference.get_inputs():
        if i.name == "input_ids":
            feeds[i.name] = rng.integers(0, 50, (batch, seq)).astype(np.int64)
        elif i.name == "attention_mask":
            mask = np.ones((batch, past + seq), np.int64)
            mask[1, :2] = 0  # a padded row
            feeds[i.name] = mask
        else:
            heads, size = i.shape[1], i.shape[3]
            feeds[i.name] = rng.standard_normal((batch, heads, past, size)).astype(np.float32)
    for a, b in zip(reference.run(None, feeds), written.run(None, feeds)):
        assert a.shape == b.shape
        assert np.allclose(a, b, atol=1e-4, rtol=1e-4), float(np.max(np.abs(a - b)))

    report = tmp_path / "opset17.json"
    _, model17 = optimize("opset17.onnx", "--report-json", str(report))
    assert [o.version for o in model17.opset_import if o.domain == ""] == [17]
    assert not any(n.op_type == "Attention" and n.domain == "" for n in model17.graph.node)
    # ... and says what --opset 23 would let the search write.
    notes = json.loads(report.read_text())["import"]["notes"]
    held = [n for n in notes if "--opset 23" in n]
    assert held and held[0].startswith(f"{layers} place"), notes


@pytest.mark.parametrize("exporter", ["ts", "dynamo"])
def test_llama_rms_norms_are_read_whole_and_run_fused_in_onnx_runtime(zoo, tmp_path, exporter):
    """The small Llama's RMS norms (scale all ones, as transformers initializes them; rsqrt
    written as Div of 1 by TorchScript, as Reciprocal by dynamo, a form ONNX Runtime 1.31 does
    not fuse in the export itself) are each read as one rms_norm and written in the form ONNX
    Runtime fuses: its optimizer leaves no Pow or Sqrt in graphsub's file, one fused kernel
    per norm, and the outputs equal the export's."""
    import shutil

    import onnx
    import onnxruntime as ort

    out_dir, manifest = zoo
    entry = next(e for e in manifest["entries"] if e["name"] == f"hf-llama-kv.{exporter}")
    src = str(out_dir / entry["file"])
    dst, report = str(tmp_path / "out.onnx"), tmp_path / "report.json"
    command = shutil.which("graphsub", path=os.path.dirname(sys.executable))
    dims = [f"{k}={v}" for k, v in entry["graphsub_dims"].items()]
    done = subprocess.run(
        [command, "--quiet", "optimize", src, "-o", dst, "--target", "ort", "--guard-runs", "0",
         "--report-json", str(report)] + [a for d in dims for a in ("--dim", d)],
        capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    by_op = json.loads(report.read_text())["graph_ops"]["by_op"]
    norms = by_op["rms_norm"]["before"]
    assert norms >= 3 and "sqrt" not in by_op, by_op

    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    opts.optimized_model_filepath = str(tmp_path / "out.ort.onnx")
    written = ort.InferenceSession(dst, opts, providers=["CPUExecutionProvider"])
    ran = [n.op_type for n in onnx.load(opts.optimized_model_filepath).graph.node]
    assert "Pow" not in ran and "Sqrt" not in ran, ran
    assert ran.count("SimplifiedLayerNormalization") + ran.count(
        "SkipSimplifiedLayerNormalization") == norms, ran

    plain = ort.SessionOptions()
    plain.log_severity_level = 3
    reference = ort.InferenceSession(src, plain, providers=["CPUExecutionProvider"])
    feeds = check_zoo.make_inputs(entry["inputs"], entry["dims"], entry["input_seed"], 0)
    for a, b in zip(reference.run(None, feeds), written.run(None, feeds)):
        assert a.shape == b.shape
        assert np.allclose(a, b, atol=1e-4, rtol=1e-4), float(np.max(np.abs(a - b)))
