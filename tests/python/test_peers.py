"""The peer harness (bench/peers/run_peers.py): every tool runs as its own process, every
written file is compared with the original in ONNX Runtime and timed, and failures and wrong
outputs are reported, not hidden. On a tiny model built here, so no zoo is needed."""

import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

PEERS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "peers")
sys.path.insert(0, PEERS_DIR)
import run_peers  # noqa: E402


def _tiny_zoo(folder, scale=1.0):
    """x[batch, 8] -> MatMul -> Add -> Identity -> Relu, with a manifest like make_zoo's."""
    rng = np.random.default_rng(3)
    w = numpy_helper.from_array((scale * rng.standard_normal((8, 8))).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(8).astype(np.float32), "b")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"], name="mm"),
             helper.make_node("Add", ["m", "b"], ["a"], name="add"),
             helper.make_node("Identity", ["a"], ["i"], name="id"),
             helper.make_node("Relu", ["i"], ["y"], name="relu")]
    graph = helper.make_graph(
        nodes, "tiny", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 8])], [w, b])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, os.path.join(folder, "tiny.onnx"))
    entry = {"name": "tiny.ts", "model": "tiny", "family": "test", "exporter": "ts",
             "opset": 17, "file": "tiny.onnx", "status": "ok", "input_seed": 5,
             "inputs": [{"name": "x", "dtype": "float32", "shape": ["batch", 8],
                         "values": {"kind": "normal"}}],
             "dims": {"batch": [1, 3]}}
    with open(os.path.join(folder, "manifest.json"), "w") as f:
        json.dump({"entries": [entry]}, f)
    return entry


def test_every_tool_runs_is_checked_and_timed(tmp_path):
    _tiny_zoo(str(tmp_path))
    out = tmp_path / "out"
    tools = [t for t in run_peers.TOOLS]
    assert run_peers.main([str(tmp_path / "manifest.json"), "--out", str(out), "--runs", "3"]) == 0
    result = json.loads((out / "peers.json").read_text())
    row = result["results"][0]
    assert row["nodes"] == 4
    for tool in tools:
        r = row["tools"][tool]
        if tool == "ort-transformers":  # no model type fits a test model
            assert r["ok"] is None
            continue
        assert r["ok"], (tool, r)
        assert r["outputs"]["ok"], (tool, r["outputs"])
        assert r["seconds"] > 0 and r["peak_mib"] > 0
        assert r["nodes"] <= 4
    for label in ("ort_1", "ort_all", "openvino"):
        t = row["timings"][label]
        assert "error" not in t, t
        assert t["aa"] > 0 and set(t["speedup"]) == set(tools) - {"ort-transformers"}
    assert result["summary"]["graphsub"]["written"] == 1
    assert result["summary"]["ort-transformers"]["models"] == 0
    assert "| tiny.ts | 4 |" in (out / "peers.md").read_text()
    assert result["families"]["test"]["graphsub"]["written"] == 1
    # The tools' files are removed once measured; the entry's row is kept for a resumed run.
    assert not [n for n in os.listdir(out) if n.startswith("tiny.ts.")]
    assert (out / "rows" / "tiny.ts.json").exists()


def test_a_file_that_is_the_input_byte_for_byte_is_marked(tmp_path, monkeypatch):
    _tiny_zoo(str(tmp_path))
    real = run_peers.tool_command

    def copying_graphsub(tool, src, dst, entry, graphsub):
        return ["cp", src, dst] if tool == "graphsub" else real(tool, src, dst, entry, graphsub)

    monkeypatch.setattr(run_peers, "tool_command", copying_graphsub)
    out = tmp_path / "out"
    assert run_peers.main([str(tmp_path / "manifest.json"), "--out", str(out), "--runs", "0",
                           "--tools", "graphsub,onnxsim"]) == 0
    row = json.loads((out / "peers.json").read_text())["results"][0]
    assert row["tools"]["graphsub"]["same_as_original"] is True
    assert row["tools"]["onnxsim"]["same_as_original"] is False  # a file written anew
    assert "(4, = original)" in (out / "peers.md").read_text()


def test_a_resumed_sweep_keeps_the_rows_it_has_and_measures_the_rest(tmp_path, capsys):
    _tiny_zoo(str(tmp_path))
    out = tmp_path / "out"
    args = [str(tmp_path / "manifest.json"), "--out", str(out), "--runs", "0",
            "--tools", "onnxoptimizer"]
    assert run_peers.main(args) == 0
    row = json.loads((out / "rows" / "tiny.ts.json").read_text())
    row["tools"]["onnxoptimizer"]["seconds"] = -1.0  # a mark only a kept row carries
    (out / "rows" / "tiny.ts.json").write_text(json.dumps(row))
    capsys.readouterr()
    assert run_peers.main(args) == 0
    assert "kept from an earlier run" in capsys.readouterr().err
    kept = json.loads((out / "peers.json").read_text())["results"][0]
    assert kept["tools"]["onnxoptimizer"]["seconds"] == -1.0
    # Another graphsub binary (or peer version) measures again: a row records what measured it.
    assert kept["versions"]["graphsub"] and kept["versions"]["onnxruntime"]
    row["versions"]["graphsub"] = "another build"
    (out / "rows" / "tiny.ts.json").write_text(json.dumps(row))
    capsys.readouterr()
    assert run_peers.main(args) == 0
    assert "kept from an earlier run" not in capsys.readouterr().err
    # Other tools, or --fresh, measure again.
    assert run_peers.main(args + ["--fresh"]) == 0
    again = json.loads((out / "peers.json").read_text())["results"][0]
    assert again["tools"]["onnxoptimizer"]["seconds"] > 0


def test_removing_the_tools_files_never_removes_the_original(tmp_path):
    # make_zoo names a file <entry>.onnx; the results may be written into the zoo's folder.
    _tiny_zoo(str(tmp_path))
    os.rename(tmp_path / "tiny.onnx", tmp_path / "tiny.ts.onnx")
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    manifest["entries"][0]["file"] = "tiny.ts.onnx"
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    assert run_peers.main([str(tmp_path / "manifest.json"), "--out", str(tmp_path), "--runs",
                           "0", "--tools", "onnxoptimizer"]) == 0
    assert (tmp_path / "tiny.ts.onnx").exists()
    assert not (tmp_path / "tiny.ts.onnxoptimizer.onnx").exists()
    assert json.loads((tmp_path / "peers.json").read_text())["results"][0]["tools"][
        "onnxoptimizer"]["ok"]


def test_graphsub_is_compared_with_the_fastest_peer_within_the_band():
    def row(aa, **speedups):
        return {"timings": {"ort_1": {"aa": aa, "speedup": speedups}}}

    tools = ["graphsub", "onnxsim", "onnxslim"]
    assert run_peers.versus_best_peer(row(1.0, graphsub=1.20, onnxsim=1.0, onnxslim=1.1),
                                      tools) == "faster (1.091x onnxslim)"
    assert run_peers.versus_best_peer(row(1.0, graphsub=1.12, onnxsim=1.0, onnxslim=1.1),
                                      tools).startswith("in noise")
    # An A/A control of 0.90 widens the band to 10%.
    assert run_peers.versus_best_peer(row(0.90, graphsub=1.0, onnxsim=1.08),
                                      tools).startswith("in noise")
    assert run_peers.versus_best_peer(row(1.0, graphsub=0.9, onnxsim=1.0),
                                      tools) == "slower (0.900x onnxsim)"
    assert run_peers.versus_best_peer(row(1.0, onnxsim=1.0), tools) == "-"


def test_a_failing_or_hanging_tool_is_a_result(tmp_path):
    dst = str(tmp_path / "never.onnx")
    bad = run_peers.run_tool([sys.executable, "-c", "import sys; print('bad model'); sys.exit(3)"],
                             dst, 30)
    assert bad["ok"] is False and bad["returncode"] == 3 and "bad model" in bad["error"]
    hung = run_peers.run_tool([sys.executable, "-c", "import time; time.sleep(30)"], dst, 0.5)
    assert hung["ok"] is False and "timed out" in hung["error"]


def test_a_tools_peak_memory_is_its_own_not_the_harnesss(tmp_path):
    dst = str(tmp_path / "out.bin")
    held = bytearray(600 * 1024 * 1024)  # the harness resident at 600 MiB, as after timing
    held[::4096] = b"x" * len(held[::4096])
    small = run_peers.run_tool([sys.executable, "-c", f"open({dst!r}, 'w').write('x')"], dst, 60)
    large = run_peers.run_tool(
        [sys.executable, "-c", f"b = bytearray(300 << 20); b[::4096] = b'y' * len(b[::4096]); "
         f"open({dst!r}, 'w').write('x')"], dst, 60)
    del held
    assert small["ok"] and small["peak_mib"] < 100
    assert large["ok"] and 300 <= large["peak_mib"] < 450
    assert not os.path.exists(dst + ".peak")
    killed = run_peers.run_tool([sys.executable, "-c", "import os; os.kill(os.getpid(), 9)"],
                                dst, 60)
    assert killed["ok"] is False and killed["returncode"] == 137


def _tiny_and_wrong(tmp_path):
    """The tiny zoo's entry and model, and a copy whose weights are scaled: wrong outputs."""
    entry = _tiny_zoo(str(tmp_path))
    wrong_dir = tmp_path / "wrong"
    wrong_dir.mkdir()
    _tiny_zoo(str(wrong_dir), scale=1.5)
    return entry, str(tmp_path / "tiny.onnx"), str(wrong_dir / "tiny.onnx")


def test_wrong_outputs_are_found(tmp_path):
    entry, original, wrong = _tiny_and_wrong(tmp_path)
    r = run_peers.outputs_match(original, wrong, entry)
    assert r["ok"] is False and r["max_abs"] > 0
    assert run_peers.outputs_match(original, original, entry)["ok"]


def test_a_file_openvino_computes_wrongly_is_counted_not_timed(tmp_path):
    entry, original, wrong = _tiny_and_wrong(tmp_path)
    t = run_peers.timings(original, {"same": original, "bad": wrong}, entry, 2)
    ov = t["openvino"]
    assert ov["outputs"]["original"]["ok"] and ov["outputs"]["same"]["ok"]
    assert not ov["outputs"]["bad"]["ok"] and ov["outputs"]["bad"]["max_rel"] > 0.05
    assert set(ov["speedup"]) == {"same"}  # the wrong file's time is no speedup
    assert set(t["ort_1"]["speedup"]) == {"same", "bad"}  # ORT's outputs are judged elsewhere
    row = {"name": "tiny.ts", "nodes": 4, "timings": t,
           "tools": {"bad": {"ok": True, "nodes": 4, "outputs": {"ok": True}}}}
    assert run_peers.summarize([row], ["bad"])["bad"]["openvino_wrong"] == 1
    assert "wrong in OpenVINO" in run_peers.markdown([row], run_peers.summarize([row], ["bad"]),
                                                     ["bad"])


def test_the_built_in_models_make_a_zoo_the_harness_reads(tmp_path):
    import builtin_zoo

    assert builtin_zoo.main(["--out", str(tmp_path), "--only", "squeezenet"]) == 0
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    (entry,) = manifest["entries"]
    assert entry["name"] == "builtin-squeezenet" and entry["family"] == "builtin"
    assert (tmp_path / entry["file"]).exists() and entry["dims"] == {}
    feeds = run_peers.check_zoo.make_inputs(entry["inputs"], entry["dims"], entry["input_seed"], 0)
    assert feeds and all(v.dtype == np.float32 and v.size > 0 for v in feeds.values())
    r = run_peers.outputs_match(str(tmp_path / entry["file"]), str(tmp_path / entry["file"]), entry)
    assert r["ok"], r


def test_the_rows_of_several_sweeps_make_one_table_the_later_row_winning(tmp_path):
    import merge_rows

    def row(name, speedup, version, seconds=1.0):
        return {"name": name, "nodes": 4, "family": "test", "versions": {"graphsub": version},
                "tools": {"graphsub": {"ok": True, "nodes": 4, "outputs": {"ok": True},
                                       "seconds": seconds, "peak_mib": 50.0},
                          "onnxsim": {"ok": True, "nodes": 4, "outputs": {"ok": True},
                                      "seconds": 1.0, "peak_mib": 40.0}},
                "timings": {"ort_1": {"aa": 1.0, "speedup": {"graphsub": speedup,
                                                             "onnxsim": 1.0}}}}

    for folder, rows in (("old", [row("a", 0.90, "v1"), row("b", 1.10, "v1")]),
                         ("new", [row("a", 1.20, "v2", seconds=4.0)])):
        (tmp_path / folder / "rows").mkdir(parents=True)
        for r in rows:
            (tmp_path / folder / "rows" / f"{r['name']}.json").write_text(json.dumps(r))
    assert merge_rows.main([str(tmp_path / "old"), str(tmp_path / "new"),
                            "--out", str(tmp_path / "merged")]) == 0
    merged = json.loads((tmp_path / "merged" / "peers.json").read_text())
    assert [r["name"] for r in merged["results"]] == ["a", "b"]
    assert merged["results"][0]["timings"]["ort_1"]["speedup"]["graphsub"] == 1.20
    text = (tmp_path / "merged" / "peers.md").read_text()
    assert "v1 (1), v2 (1)" in text or "v2 (1), v1 (1)" in text
    # a's graphsub took 4x the slowest peer's wall time: named in the wall-time table.
    assert "at most 3x the slowest peer's on 1 of 2 models" in text and "| a | 4.0 s" in text
    assert "| a | 4.0 / 50 | 1.0 / 40 |" in text  # every tool's wall time and memory
    # --costs: the wall time and memory alone, no speedup table.
    assert merge_rows.main([str(tmp_path / "new"), "--costs",
                            "--out", str(tmp_path / "costs")]) == 0
    costs = (tmp_path / "costs" / "peers.md").read_text()
    assert "| a | 4.0 / 50 | 1.0 / 40 |" in costs and "ORT 1 thread" not in costs
    try:
        merge_rows.main([str(tmp_path / "nothing")])
    except SystemExit as e:
        assert "no rows" in str(e)
    else:
        raise AssertionError("an empty folder was merged")


def test_files_too_large_to_hold_at_once_are_timed_in_groups(tmp_path, monkeypatch):
    entry, original, wrong = _tiny_and_wrong(tmp_path)
    size = os.path.getsize(original) * run_peers.SESSION_BYTES_PER_FILE_BYTE
    results = {"a": original, "b": original, "c": wrong}
    assert run_peers.timing_groups(original, results, int(100 * size)) == [["a", "b", "c"]]
    # Room for the original's two sessions and one more: one file per group.
    assert run_peers.timing_groups(original, results, int(3.5 * size)) == [["a"], ["b"], ["c"]]
    assert run_peers.timing_groups(original, results, int(4.5 * size)) == [["a", "b"], ["c"]]
    monkeypatch.setattr(run_peers, "available_memory", lambda: int(4.5 * size / 0.6))
    t = run_peers.timings(original, results, entry, 2)
    assert t["ort_1"]["groups"] == [["a", "b"], ["c"]]
    assert set(t["ort_1"]["speedup"]) == {"a", "b", "c"}
    assert set(t["openvino"]["speedup"]) == {"a", "b"}  # c is computed wrongly there
    assert not t["openvino"]["outputs"]["c"]["ok"] and t["openvino"]["outputs"]["original"]["ok"]


def test_graphsub_with_fused_operators_runs_when_named_and_is_no_peer(tmp_path):
    _tiny_zoo(str(tmp_path))
    out = tmp_path / "out"
    tools = ["graphsub", "graphsub-fused", "onnxsim"]
    assert run_peers.main([str(tmp_path / "manifest.json"), "--out", str(out), "--runs", "3",
                           "--tools", ",".join(tools)]) == 0
    row = json.loads((out / "peers.json").read_text())["results"][0]
    fused = row["tools"]["graphsub-fused"]
    assert fused["ok"] and fused["outputs"]["ok"], fused
    assert set(row["timings"]["ort_1"]["speedup"]) == set(tools)
    # graphsub is measured against the peers only: its own variant is never the best peer.
    assert "graphsub-fused" not in run_peers.versus_best_peer(row, tools)
    assert run_peers.versus_best_peer(row, tools).endswith("onnxsim)")
    assert run_peers.wall_time(row, tools)["peer"] == "onnxsim"
    # Left out unless named.
    assert "graphsub-fused" not in run_peers.TOOLS


def _chain_model(path, perm=False, scale=1.0, names="t"):
    """x -> MatMul(w) -> Add(b) -> Relu; `perm` lists the nodes in another (valid) order and
    `names` renames every tensor and node, neither of which changes the graph run."""
    rng = np.random.default_rng(7)
    w = numpy_helper.from_array((scale * rng.standard_normal((8, 8))).astype(np.float32),
                                f"{names}_w")
    b = numpy_helper.from_array(rng.standard_normal(8).astype(np.float32), f"{names}_b")
    mm = helper.make_node("MatMul", ["x", f"{names}_w"], [f"{names}_m"], name=f"{names}1")
    add = helper.make_node("Add", [f"{names}_m", f"{names}_b"], [f"{names}_a"], name=f"{names}2")
    relu = helper.make_node("Relu", [f"{names}_a"], ["y"], name=f"{names}3")
    side = helper.make_node("Relu", [f"{names}_m"], ["z"], name=f"{names}4")
    nodes = [mm, side, add, relu] if perm else [mm, add, relu, side]
    graph = helper.make_graph(
        nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 8])], [w, b])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return path


def test_files_onnx_runtime_runs_as_one_graph_share_a_fingerprint(tmp_path):
    import executed_graph

    a = _chain_model(str(tmp_path / "a.onnx"))
    b = _chain_model(str(tmp_path / "b.onnx"), perm=True, names="other")
    c = _chain_model(str(tmp_path / "c.onnx"), scale=2.0)  # other weights
    fa, fb, fc = (executed_graph.executed_fingerprint(p) for p in (a, b, c))
    assert fa == fb
    assert fa[0] != fc[0] and fa[1] == fc[1]
    # Outputs in another order are another graph.
    m = onnx.load(a)
    outs = list(m.graph.output)
    del m.graph.output[:]
    m.graph.output.extend(reversed(outs))
    assert executed_graph.fingerprint(m)[0] != executed_graph.fingerprint(onnx.load(a))[0]


def _row_read_slower(out, **extra):
    """The sweep's row of the tiny zoo, graphsub read 10% slower than onnxsim at 1 thread."""
    row = {"name": "tiny.ts", "model": "tiny", "family": "test", "tools": {},
           "timings": {"ort_1": {"aa": 1.0, "speedup": {"graphsub": 0.95, "onnxsim": 1.06}}},
           **extra}
    os.makedirs(os.path.join(out, "rows"), exist_ok=True)
    with open(os.path.join(out, "rows", "tiny.ts.json"), "w") as f:
        json.dump(row, f)
    return row


def test_a_reading_beyond_the_band_is_looked_at_again_in_rounds_of_fresh_sessions(tmp_path):
    import confirm

    _tiny_zoo(str(tmp_path))
    out = str(tmp_path / "out")
    row = _row_read_slower(out)
    tools = run_peers.TOOLS
    assert run_peers.versus_best_peer(row, tools) == "slower (0.896x onnxsim)"
    assert confirm.to_confirm(row, tools) == [("ort_1", "onnxsim")]
    assert confirm.main([str(tmp_path / "manifest.json"), "--out", out, "--rounds", "3",
                         "--runs", "2"]) == 0
    row = json.loads(open(os.path.join(out, "rows", "tiny.ts.json")).read())
    check = row["confirm"]["checks"]["ort_1"]
    assert check["peer"] == "onnxsim"
    assert set(check["executed"]) == {"original", "graphsub", "onnxsim"}
    assert len(check["per_round"]["graphsub"]) == 3 and check["speedup"]["onnxsim"] > 0
    verdict = run_peers.versus_best_peer(row, tools)
    if check["executed"]["graphsub"] == check["executed"]["onnxsim"]:
        assert "same graph" in verdict, verdict
    else:
        assert "over 3 rounds of fresh sessions; read 0.896x" in verdict, verdict
    # The tools' files of the closer look are gone; the original stays.
    assert not [n for n in os.listdir(out) if n.endswith(".onnx")]
    assert os.path.exists(tmp_path / "tiny.onnx")


def test_a_confirmed_reading_is_judged_by_its_rounds():
    row = {"timings": {"ort_1": {"aa": 1.0, "speedup": {"graphsub": 0.95, "onnxsim": 1.06}}},
           "confirm": {"checks": {"ort_1": {
               "peer": "onnxsim", "executed": {"graphsub": "a", "onnxsim": "b"},
               "speedup": {"graphsub": 1.022, "onnxsim": 0.970},
               "per_round": {"graphsub": [1.02, 1.03], "onnxsim": [0.97, 0.97]}}}}}
    tools = ["graphsub", "onnxsim"]
    assert run_peers.versus_best_peer(row, tools) == (
        "faster (1.054x onnxsim over 2 rounds of fresh sessions; read 0.896x)")
    row["confirm"]["checks"]["ort_1"]["speedup"]["onnxsim"] = 1.0
    assert run_peers.versus_best_peer(row, tools).startswith("in noise (1.022x onnxsim")
    row["confirm"]["checks"]["ort_1"]["speedup"]["onnxsim"] = 1.2
    assert run_peers.versus_best_peer(row, tools).startswith("slower (0.852x onnxsim")
    row["confirm"]["checks"]["ort_1"]["executed"]["onnxsim"] = "a"
    assert "same graph" in run_peers.versus_best_peer(row, tools)
    # A row in noise at first needs no closer look; one read slower than its original does.
    quiet = {"timings": {"ort_1": {"aa": 1.0, "speedup": {"graphsub": 1.0, "onnxsim": 1.01}},
                         "openvino": {"aa": 1.0, "speedup": {"graphsub": 0.90}}}}
    import confirm

    assert confirm.to_confirm(quiet, tools) == [("openvino", None)]


def test_a_file_read_slower_than_its_original_is_named_with_its_closer_look():
    row = {"name": "m", "timings": {"ort_all": {"aa": 1.0, "speedup": {"graphsub": 0.90}},
                                    "ort_1": {"aa": 1.0, "speedup": {"graphsub": 0.97}}}}
    assert run_peers.slowdown_lines([row])[-1].endswith(
        "m in ort_all: read 0.900x (not looked at again).")
    row["confirm"] = {"checks": {"ort_all": {
        "peer": None, "executed": {"original": "a", "graphsub": "a"},
        "speedup": {"graphsub": 0.995}, "per_round": {"graphsub": [0.99, 1.0, 0.995]}}}}
    assert "0.995x over 3 rounds of fresh sessions, the same graph in ONNX Runtime as the " \
           "original" in run_peers.slowdown_lines([row])[-1]
    row["timings"]["ort_all"]["speedup"]["graphsub"] = 0.99
    assert run_peers.slowdown_lines([row])[-1].endswith("band: none.")
