#!/usr/bin/env python3
"""Run graphsub and the tools users would pick instead on the same models, in one run, and
measure every result the same way.

Tools, each the PyPI release pyproject.toml pins, each called as its documentation shows:

| tool | call |
|---|---|
| graphsub | `graphsub optimize IN -o OUT` (defaults: the ort target and its latency guard) |
| onnxsim | `onnxsim IN OUT` |
| onnxslim | `onnxslim IN OUT` |
| onnxoptimizer | `onnxoptimizer.optimize(model)` (its default passes) |
| ort-basic, ort-extended | `SessionOptions.optimized_model_filepath` at ORT_ENABLE_BASIC / _EXTENDED (the "all" level writes a file for one machine's kernels and layouts, so it is not a portable result and is left out) |
| ort-transformers | `onnxruntime.transformers.optimizer.optimize_model(IN, model_type=T)` on the transformer models, T by family (MODEL_TYPES) |
| graphsub-fused (only with `--tools`) | `graphsub optimize IN -o OUT --ort-contrib-ops`: graphsub with ONNX Runtime's fused operators allowed (issue 27's acceptance 1); graphsub's own variant, never counted as a peer |

Each tool runs as its own process (`os.wait4` gives its wall time and peak memory). For every
file a tool writes:
- outputs against the original's in ONNX Runtime (graph optimizations off on both sides, so
  the files are run as written) at both test values of each symbolic dimension, max abs and
  relative difference, with check_zoo.py's tolerances;
- ONNX Runtime latency at graph optimizations "all", 1 intra-op thread: the original (twice,
  an A/A control) and every tool's file alternated run by run in rotated and reversed orders,
  medians; then the same with all of the machine's cores;
- OpenVINO's CPU runtime (its defaults, 1 thread), the original against each file, alternated
  the same way, and each file's outputs there against the original's in ONNX Runtime
  (bfloat16's tolerance where OpenVINO computes in it): a speedup over an original that
  OpenVINO computes wrongly is left out, and a file it computes wrongly is counted;
- ONNX node count.

Input: a zoo manifest (bench/zoo/make_zoo.py). Output: OUT/peers.json and OUT/peers.md.
"""

from __future__ import annotations

import argparse
import filecmp
import hashlib
import json
import math
import os
import shlex
import shutil
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "zoo"))
import check_zoo  # noqa: E402  (the zoo's inputs and comparison rules)

# The ONNX Runtime transformers optimizer's model type for each model of the zoo it fits.
MODEL_TYPES = {
    "hf-bert": "bert", "hf-distilbert": "bert", "hf-roberta": "bert", "hf-xlm-roberta": "bert",
    "hf-albert": "bert", "hf-electra": "bert", "hf-deberta-v2": "bert", "hf-mpnet": "bert",
    "hf-modernbert": "bert", "hf-mobilebert": "bert", "hf-bart-encoder": "bart",
    "hf-marian-encoder": "bart", "hf-t5-encoder": "t5", "hf-gpt2": "gpt2", "hf-gpt2-kv": "gpt2",
    "hf-gpt-neox": "gpt_neox", "hf-phi": "phi", "hf-vit": "vit", "hf-deit": "vit",
    "hf-dinov2": "vit", "hf-clip-vision": "clip", "hf-siglip-vision": "clip",
    "hf-swin": "swin", "hf-qwen3": "qwen3",
    "hf-whisper-encoder": "bert", "timm-vit": "vit", "timm-deit": "vit", "tv-vit": "vit",
}

PY_OPTIMIZER = ("import onnx, onnxoptimizer, sys\n"
                "onnx.save(onnxoptimizer.optimize(onnx.load(sys.argv[1])), sys.argv[2])\n")
PY_ORT_LEVEL = ("import onnxruntime as ort, sys\n"
                "o = ort.SessionOptions()\n"
                "o.graph_optimization_level = getattr(ort.GraphOptimizationLevel, sys.argv[3])\n"
                "o.optimized_model_filepath = sys.argv[2]\n"
                "ort.InferenceSession(sys.argv[1], o, providers=['CPUExecutionProvider'])\n")
PY_ORT_TRANSFORMERS = ("import sys\n"
                       "from onnxruntime.transformers.optimizer import optimize_model\n"
                       "optimize_model(sys.argv[1], model_type=sys.argv[3])"
                       ".save_model_to_file(sys.argv[2])\n")

TOOLS = ["graphsub", "onnxsim", "onnxslim", "onnxoptimizer", "ort-basic", "ort-extended",
         "ort-transformers"]
# Tools run only when --tools names them: graphsub's own variants, not peers.
OPTIONAL_TOOLS = ["graphsub-fused"]


def is_peer(tool: str) -> bool:
    return not tool.startswith("graphsub")


def venv_command(name: str) -> str:
    """A console script installed beside this interpreter (the project's venv)."""
    return os.path.join(os.path.dirname(sys.executable), name)


def tool_command(tool: str, src: str, dst: str, entry: dict, graphsub: str) -> list[str] | None:
    """The command that runs `tool` on one model; None where the tool does not apply."""
    py = sys.executable
    if tool == "graphsub":
        dims = [f"--dim={k}={v}" for k, v in sorted((entry.get("graphsub_dims") or {}).items())]
        return [graphsub, "optimize", src, "-o", dst, "--quiet", *dims]
    if tool == "graphsub-fused":
        dims = [f"--dim={k}={v}" for k, v in sorted((entry.get("graphsub_dims") or {}).items())]
        return [graphsub, "optimize", src, "-o", dst, "--quiet", "--ort-contrib-ops", *dims]
    if tool in ("onnxsim", "onnxslim"):
        return [venv_command(tool), src, dst]
    if tool == "onnxoptimizer":
        return [py, "-c", PY_OPTIMIZER, src, dst]
    if tool == "ort-basic":
        return [py, "-c", PY_ORT_LEVEL, src, dst, "ORT_ENABLE_BASIC"]
    if tool == "ort-extended":
        return [py, "-c", PY_ORT_LEVEL, src, dst, "ORT_ENABLE_EXTENDED"]
    if tool == "ort-transformers":
        model_type = MODEL_TYPES.get(entry["model"])
        return None if model_type is None else [py, "-c", PY_ORT_TRANSFORMERS, src, dst,
                                                model_type]
    raise ValueError(tool)


# Starts the tool from a small fresh interpreter and reports the tool's peak memory. Linux
# carries the high-water mark of the address space a process execs from into the new
# program's ru_maxrss, so a tool started straight from this harness (gigabytes resident after
# timing a large model) would be charged the harness's memory. Spawned from this launcher it
# is charged at most the launcher's (about 10 MiB).
PY_PEAK_LAUNCHER = ("import os, sys\n"
                    "pid = os.posix_spawnp(sys.argv[2], sys.argv[2:], os.environ)\n"
                    "_, status, usage = os.wait4(pid, 0)\n"
                    "with open(sys.argv[1], 'w') as f:\n"
                    "    f.write(str(usage.ru_maxrss))\n"
                    "code = os.waitstatus_to_exitcode(status)\n"
                    "sys.exit(code if code >= 0 else 128 - code)\n")


def read_peak_kib(path: str) -> int | None:
    """The launcher's report of the tool's peak resident memory in KiB; None if it wrote none."""
    try:
        with open(path) as f:
            return int(f.read())
    except (OSError, ValueError):
        return None
    finally:
        if os.path.exists(path):
            os.remove(path)


def run_tool(cmd: list[str], dst: str, timeout: float) -> dict:
    """Runs one tool alone: exit status, wall seconds, peak resident memory, error text."""
    peak_file = dst + ".peak"
    start = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-c", PY_PEAK_LAUNCHER, peak_file, *cmd],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True,
                            env={**os.environ, "OMP_NUM_THREADS": "1"})
    out = b""
    deadline = start + timeout
    os.set_blocking(proc.stdout.fileno(), False)
    while True:
        chunk = proc.stdout.read()
        if chunk:
            out = (out + chunk)[-20000:]
        pid, status, _ = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() > deadline:
            os.killpg(proc.pid, 9)  # the launcher and the tool under it
            os.wait4(proc.pid, 0)
            read_peak_kib(peak_file)
            return {"ok": False, "error": f"timed out after {timeout:.0f} s",
                    "seconds": round(timeout, 2)}
        time.sleep(0.02)
    rest = proc.stdout.read()
    if rest:
        out = (out + rest)[-20000:]
    rc = os.waitstatus_to_exitcode(status)
    peak = read_peak_kib(peak_file)
    row = {"ok": rc == 0 and os.path.exists(dst), "returncode": rc,
           "seconds": round(time.monotonic() - start, 2),
           "peak_mib": None if peak is None else round(peak / 1024, 1)}
    if not row["ok"]:
        text = out.decode(errors="replace").strip() or "no output"
        row["error"] = text[-1500:] if rc else f"no file written: {text[-1500:]}"
    return row


def node_count(path: str) -> int:
    import onnx

    return len(onnx.load(path, load_external_data=False).graph.node)


def outputs_match(original: str, result: str, entry: dict) -> dict:
    """check_zoo's comparison of the two files in ONNX Runtime at both test sets."""
    args = argparse.Namespace(ort_opt="disable", ort_threads=1, rtol=None, atol=None)
    try:
        rows = check_zoo.ort_compare(original, result, entry, args)
    except Exception as e:  # noqa: BLE001  a file ONNX Runtime cannot run is a result
        return {"ok": False, "error": f"{type(e).__name__}: {e}"[:1000]}
    finite = [r for r in rows if "max_abs" in r]
    return {"ok": all(r["ok"] for r in rows),
            "max_abs": max((r["max_abs"] for r in finite), default=None),
            "max_rel": max((r["max_rel"] for r in finite), default=None),
            "failures": [r for r in rows if not r["ok"]][:3]}


def alternated(run_once, n: int, runs: int, warmup: int) -> list[list[float]]:
    """Times n models run by run: round r runs them in rotated order, reversed on odd rounds.
    run_once(i) runs model i once; returns the times in ms per model."""
    for _ in range(warmup):
        for i in range(n):
            run_once(i)
    ms = [[] for _ in range(n)]
    for r in range(runs):
        order = [(i + r) % n for i in range(n)]
        if r % 2:
            order.reverse()
        for i in order:
            t = time.perf_counter()
            run_once(i)
            ms[i].append(1e3 * (time.perf_counter() - t))
    return ms


def time_ort(paths: list[str], feeds: dict, threads: int, runs: int) -> list[float | None]:
    sessions = [check_zoo.ort_session(p, "all", threads) for p in paths]
    inputs = [{i.name: feeds[i.name] for i in s.get_inputs() if i.name in feeds}
              for s in sessions]
    ms = alternated(lambda i: sessions[i].run(None, inputs[i]), len(paths), runs, 2)
    return [float(np.median(m)) for m in ms]


def openvino_tolerance(core) -> float:
    """OpenVINO's CPU plugin computes in bfloat16 by default where the CPU has it; its
    outputs are then held to bfloat16's tolerance, else to float32's."""
    hint = str(core.get_property("CPU", "INFERENCE_PRECISION_HINT"))
    return check_zoo.FLOAT_TOLERANCE["bfloat16" if "bf" in hint else "float32"]


def time_openvino(paths: list[str], feeds: dict, runs: int) -> tuple[list[float], list[dict]]:
    """Medians in OpenVINO (its defaults, 1 thread), and each file's outputs there against
    the original's in ONNX Runtime: a runtime that computes a file wrongly (an empty
    output, say) is fast for no reason, and its time says nothing."""
    import openvino as ov

    reference = check_zoo.run_session(check_zoo.ort_session(paths[0]), feeds)
    core = ov.Core()
    tol = openvino_tolerance(core)
    models, checks = [], []
    for p in paths:
        compiled = core.compile_model(p, "CPU", {"INFERENCE_NUM_THREADS": 1})
        names = [i.get_any_name() for i in compiled.inputs]
        request = compiled.create_infer_request()
        models.append((request, {n: feeds[n] for n in names if n in feeds}))
        result = request.infer(models[-1][1])
        got = {}
        for port in compiled.outputs:
            for name in port.get_names():
                got[name] = np.asarray(result[port])
        rows = check_zoo.compare_outputs(list(reference), list(reference.values()), got, tol, tol)
        checks.append({"ok": all(r["ok"] for r in rows),
                       "max_rel": max((r.get("max_rel", math.inf) for r in rows), default=None),
                       "failures": [r for r in rows if not r["ok"]][:3]})
    ms = alternated(lambda i: models[i][0].infer(models[i][1]), len(paths), runs, 2)
    return [float(np.median(m)) for m in ms], checks


# A runtime's session holds about this many bytes per byte of the file it loaded (weights,
# their prepacked copies, arenas); measured on hf-phi (2.0 GB) in ONNX Runtime.
SESSION_BYTES_PER_FILE_BYTE = 2.6


def available_memory() -> int:
    """MemAvailable in bytes (a large figure where /proc/meminfo is missing)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 1 << 50


def timing_groups(original: str, results: dict[str, str], budget: int) -> list[list[str]]:
    """The results split into groups that can be timed at once beside the original's two
    sessions within `budget` bytes: all of them where they fit (the usual case), fewer at a
    time for models of gigabytes, one at a time at the least."""
    def cost(path):
        return SESSION_BYTES_PER_FILE_BYTE * os.path.getsize(path)

    room = budget - 2 * cost(original)
    groups, used = [[]], 0.0
    for name, path in results.items():
        c = cost(path)
        if groups[-1] and used + c > room:
            groups.append([])
            used = 0.0
        groups[-1].append(name)
        used += c
    return groups


def timings(original: str, results: dict[str, str], entry: dict, runs: int) -> dict:
    """Speedups of each result over the original (the original's median over both of its
    timings), with the A/A control, in ONNX Runtime at 1 thread and all cores, and OpenVINO.
    Where the sessions of all files do not fit in memory together, the results are timed in
    groups, each against the original twice (`groups` in the row; the A/A of the first)."""
    groups = timing_groups(original, results, int(0.6 * available_memory()))
    if len(groups) == 1:
        return timings_together(original, results, entry, runs)
    parts = [timings_together(original, {n: results[n] for n in g}, entry, runs) for g in groups]
    out = {}
    for label in parts[0]:
        merged = dict(parts[0][label])
        merged["groups"] = groups
        for part in parts[1:]:
            other = part.get(label, {})
            if "error" in other and "error" not in merged:
                merged = {"error": other["error"]}
            if "error" in merged:
                continue
            merged["speedup"] = {**merged["speedup"], **other.get("speedup", {})}
            if "outputs" in other:
                merged["outputs"] = {**merged["outputs"], **other["outputs"]}
        out[label] = merged
    return out


def timings_together(original: str, results: dict[str, str], entry: dict, runs: int) -> dict:
    """timings() of files whose sessions are all held at once."""
    names = list(results)
    paths = [original, original] + [results[n] for n in names]
    feeds = check_zoo.make_inputs(entry["inputs"], entry["dims"], entry["input_seed"], 0)
    out = {}
    for label, timer in (("ort_1", lambda: (time_ort(paths, feeds, 1, runs), None)),
                         ("ort_all", lambda: (time_ort(paths, feeds, os.cpu_count() or 1, runs),
                                              None)),
                         ("openvino", lambda: time_openvino(paths, feeds, runs))):
        try:
            med, checks = timer()
        except Exception as e:  # noqa: BLE001
            out[label] = {"error": f"{type(e).__name__}: {e}"[:500]}
            continue
        orig = (med[0] + med[1]) / 2
        out[label] = {"original_ms": orig, "aa": med[0] / med[1] if med[1] else None,
                      "speedup": {n: orig / m for n, m in zip(names, med[2:]) if m}}
        if checks is not None:
            # A speedup over an original the runtime computes wrongly is no speedup; a
            # tool's file it computes wrongly is a wrong output, counted as such.
            out[label]["outputs"] = {"original": checks[0],
                                     **{n: c for n, c in zip(names, checks[2:])}}
            if not checks[0]["ok"]:
                out[label]["speedup"] = {}
            else:
                out[label]["speedup"] = {n: v for n, v in out[label]["speedup"].items()
                                         if out[label]["outputs"][n]["ok"]}
    return out


def run_entry(entry: dict, zoo_dir: str, args) -> dict:
    src = os.path.join(zoo_dir, entry["file"])
    row = {k: entry.get(k) for k in ("name", "model", "family", "exporter", "opset")}
    row["nodes"] = node_count(src)
    row["tools"] = {}
    written = {}
    for tool in args.tools:
        dst = os.path.join(args.out, f"{entry['name']}.{tool}.onnx")
        if os.path.exists(dst):
            os.remove(dst)
        cmd = tool_command(tool, src, dst, entry, args.graphsub)
        if cmd is None:
            row["tools"][tool] = {"ok": None, "error": "does not apply (no model type fits)"}
            continue
        r = run_tool(cmd, dst, args.timeout)
        r["command"] = " ".join(shlex.quote(c) for c in cmd[:2] + ["..."] if c)
        if r["ok"]:
            r["nodes"] = node_count(dst)
            # A tool that finds nothing to gain may write the input itself; a speed difference
            # on such a file is the timing's noise, and the table says so.
            r["same_as_original"] = filecmp.cmp(src, dst, shallow=False)
            r["outputs"] = outputs_match(src, dst, entry)
            if r["outputs"]["ok"]:
                written[tool] = dst
        row["tools"][tool] = r
    if args.runs > 0 and written:
        row["timings"] = timings(src, written, entry, args.runs)
    if not args.keep_files:
        # Each tool's file and its external data, whatever a tool names it; never the
        # original, which may lie in the same folder as <entry>.onnx.
        prefixes = tuple(f"{entry['name']}.{tool}." for tool in args.tools)
        for name in os.listdir(args.out):
            path = os.path.join(args.out, name)
            if name.startswith(prefixes) and not os.path.samefile(path, src):
                os.remove(path)
    return row


def geomean(values: list[float]) -> float | None:
    v = [x for x in values if x and x > 0]
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else None


def summarize(rows: list[dict], tools: list[str]) -> dict:
    s = {}
    for t in tools:
        res = [r["tools"].get(t, {}) for r in rows]
        applies = [x for x in res if x.get("ok") is not None]
        s[t] = {"models": len(applies),
                "written": sum(1 for x in applies if x.get("ok")),
                "failed": sum(1 for x in applies if x.get("ok") is False),
                "mismatch": sum(1 for x in applies if x.get("ok")
                                and not x["outputs"]["ok"]),
                "openvino_wrong": sum(1 for r in rows if not openvino_check(r, t).get("ok", True))}
        for label in ("ort_1", "ort_all", "openvino"):
            sp = [r.get("timings", {}).get(label, {}).get("speedup", {}).get(t) for r in rows]
            s[t][f"geomean_{label}"] = geomean([x for x in sp if x])
            s[t][f"timed_{label}"] = sum(1 for x in sp if x)
    return s


def openvino_check(row: dict, tool: str) -> dict:
    """The file's outputs in OpenVINO against the original's in ONNX Runtime ({} if not run)."""
    return (row.get("timings", {}).get("openvino", {}).get("outputs") or {}).get(tool) or {}


def fmt(x, spec=".3f", none="-"):
    return none if x is None else format(x, spec)


def times(x) -> str:
    """A speedup as "1.234x", or "-" where there is none."""
    return "-" if x is None else f"{x:.3f}x"


def family_summaries(rows: list[dict], tools: list[str]) -> dict:
    """summarize() per model family."""
    families = sorted({r.get("family") or "-" for r in rows})
    return {f: summarize([r for r in rows if (r.get("family") or "-") == f], tools)
            for f in families}


def noise_band(t1: dict) -> float:
    """The A/A control's band: at least 5% (this machine's spread over 20 runs)."""
    aa = t1.get("aa")
    return max(abs(aa - 1.0), 0.05) if aa else 0.05


def first_reading_verdict(row: dict, tools: list[str]) -> dict:
    """graphsub against the fastest peer on this model at 1 thread as the sweep read it:
    word (faster, in noise, slower; "-" where there is no comparison), ratio, peer, band."""
    t1 = row.get("timings", {}).get("ort_1", {})
    sp = t1.get("speedup", {})
    peers = {t: sp[t] for t in tools if is_peer(t) and t in sp}
    if "graphsub" not in sp or not peers:
        return {"word": "-"}
    best = max(peers, key=peers.get)
    ratio = sp["graphsub"] / peers[best]
    band = noise_band(t1)
    word = "faster" if ratio > 1 + band else "slower" if ratio < 1 - band else "in noise"
    return {"word": word, "ratio": ratio, "peer": best, "band": band}


def versus_best_peer(row: dict, tools: list[str]) -> str:
    """graphsub against the fastest peer at 1 thread: faster, within the noise band, or slower
    beyond it (with the peer). A reading outside the band that confirm.py looked at again is
    given as that closer look found it: the same graph in ONNX Runtime (noise by
    construction), or the median over its rounds of fresh sessions."""
    v = first_reading_verdict(row, tools)
    if v["word"] == "-":
        return "-"
    check = (row.get("confirm") or {}).get("checks", {}).get("ort_1")
    if check and check.get("peer") == v["peer"]:
        runs = check["executed"]
        if runs.get("graphsub") == runs.get(v["peer"]):
            return (f"in noise (read {v['ratio']:.3f}x {v['peer']}; ONNX Runtime runs both "
                    f"files as the same graph)")
        ratio = check["speedup"]["graphsub"] / check["speedup"][v["peer"]]
        word = ("faster" if ratio > 1 + v["band"] else "slower" if ratio < 1 - v["band"]
                else "in noise")
        rounds = len(check["per_round"]["graphsub"])
        return (f"{word} ({ratio:.3f}x {v['peer']} over {rounds} rounds of fresh sessions; "
                f"read {v['ratio']:.3f}x)")
    return f"{v['word']} ({v['ratio']:.3f}x {v['peer']})"


def slowdown_lines(rows: list[dict]) -> list[str]:
    """graphsub's files read slower than their original beyond the band, in any runtime, with
    what confirm.py's rounds of fresh sessions found where it looked again."""
    found = []
    for r in rows:
        for label in ("ort_1", "ort_all", "openvino"):
            t = r.get("timings", {}).get(label, {})
            sp = t.get("speedup", {}).get("graphsub")
            if sp is None or sp >= 1 - noise_band(t):
                continue
            check = (r.get("confirm") or {}).get("checks", {}).get(label)
            again = "not looked at again"
            if check:
                again = f"{check['speedup']['graphsub']:.3f}x over " \
                        f"{len(check['per_round']['graphsub'])} rounds of fresh sessions"
                if check["executed"].get("graphsub") == check["executed"].get("original"):
                    again += ", the same graph in ONNX Runtime as the original"
            found.append(f"{r['name']} in {label}: read {sp:.3f}x ({again})")
    if not found:
        return ["", "graphsub's files read slower than their original beyond the band: none."]
    return ["", "graphsub's files read slower than their original beyond the band: "
            + "; ".join(found) + "."]


def wall_time(row: dict, tools: list[str]) -> dict | None:
    """graphsub's wall time and peak memory against the slowest peer's on one model."""
    res = row.get("tools", {})
    mine = res.get("graphsub", {})
    peers = {t: res[t] for t in tools if is_peer(t) and res.get(t, {}).get("seconds")}
    if not mine.get("seconds") or not peers:
        return None
    slowest = max(peers, key=lambda t: peers[t]["seconds"])
    return {"graphsub_s": mine["seconds"], "graphsub_mib": mine.get("peak_mib"),
            "peer": slowest, "peer_s": peers[slowest]["seconds"],
            "peer_mib": peers[slowest].get("peak_mib"),
            "ratio": mine["seconds"] / peers[slowest]["seconds"]}


def wall_time_lines(rows: list[dict], tools: list[str], limit: float = 3.0) -> list[str]:
    """The models where graphsub took over `limit` times the slowest peer's wall time."""
    walls = {r["name"]: w for r in rows if (w := wall_time(r, tools))}
    if not walls:
        return []
    over = {n: w for n, w in walls.items() if w["ratio"] > limit}
    lines = ["", f"Wall time: graphsub at most {limit:g}x the slowest peer's on "
             f"{len(walls) - len(over)} of {len(walls)} models"
             + (" (over it: graphsub s, peak MiB, against the slowest peer)." if over else ".")]
    if over:
        lines += ["", "| model | graphsub | slowest peer | ratio |", "|---|---|---|---|"]
        for n, w in sorted(over.items(), key=lambda kv: -kv[1]["ratio"]):
            lines.append(f"| {n} | {w['graphsub_s']:.1f} s ({fmt(w['graphsub_mib'], '.0f')} MiB)"
                         f" | {w['peer_s']:.1f} s {w['peer']} ({fmt(w['peer_mib'], '.0f')} MiB)"
                         f" | {w['ratio']:.1f}x |")
    return lines


def cost_lines(rows: list[dict], tools: list[str]) -> list[str]:
    """Each tool's wall time and peak resident memory on each model that has them."""
    measured = [r for r in rows if any((r["tools"].get(t) or {}).get("seconds") for t in tools)]
    if not measured:
        return []
    lines = ["", "Per model: each tool's wall time and peak memory (s / MiB; x: failed, "
             "-: does not apply).", "", "| model | " + " | ".join(tools) + " |",
             "|---|" + "---|" * len(tools)]
    for r in measured:
        cells = []
        for t in tools:
            x = r["tools"].get(t) or {}
            if x.get("ok") is None:
                cells.append("-")
            else:
                cell = f"{fmt(x.get('seconds'), '.1f')} / {fmt(x.get('peak_mib'), '.0f')}"
                cells.append(cell if x.get("ok") else f"x {cell}")
        lines.append(f"| {r['name']} | " + " | ".join(cells) + " |")
    return lines


def geomean_cell(s: dict, label: str) -> str:
    """A tool's geometric mean in one runtime, with the number of models it is over where
    that is not every file written (rows of older sweeps without this timing, or files the
    runtime computes wrongly)."""
    n = s.get(f"timed_{label}", s["written"])
    return times(s[f"geomean_{label}"]) + (f" ({n})" if n != s["written"] else "")


def markdown(rows: list[dict], summary: dict, tools: list[str]) -> str:
    lines = ["| tool | models | written | failed | wrong outputs | wrong in OpenVINO |"
             " ORT 1 thread | ORT all cores | OpenVINO |", "|---|---|---|---|---|---|---|---|---|"]
    for t in tools:
        s = summary[t]
        lines.append(f"| {t} | {s['models']} | {s['written']} | {s['failed']} | {s['mismatch']} | "
                     f"{s['openvino_wrong']} | "
                     + " | ".join(geomean_cell(s, label)
                                  for label in ("ort_1", "ort_all", "openvino")) + " |")
    lines += ["", "A count in brackets: the geometric mean is over that many models, not over "
              "every file written."]
    wrong = [r["name"] for r in rows if not openvino_check(r, "original").get("ok", True)]
    if wrong:
        lines += ["", "Originals that OpenVINO computes wrongly (outputs against ONNX Runtime's; "
                  "their OpenVINO speedups are left out): " + ", ".join(wrong) + "."]
    families = family_summaries(rows, tools)
    lines += ["", "Geometric means by model family, ORT 1 thread (models timed).", "",
              "| family | models | " + " | ".join(tools) + " |",
              "|---|---|" + "---|" * len(tools)]
    for f, fs in families.items():
        n = sum(1 for r in rows if (r.get("family") or "-") == f)
        lines.append(f"| {f} | {n} | " + " | ".join(
            times(fs[t]['geomean_ort_1']) for t in tools) + " |")
    lines += ["", "Per model: ORT speedup at 1 thread (nodes written; = original: the file is "
              "the input, byte for byte; x: failed, !: wrong outputs, -: does not apply); graphsub against the fastest peer, "
              "with the A/A band (at least 5%).", "",
              "| model | nodes | A/A | " + " | ".join(tools) + " | graphsub vs best peer |",
              "|---|---|---|" + "---|" * len(tools) + "---|"]
    for r in rows:
        t1 = r.get("timings", {}).get("ort_1", {})
        cells = []
        for t in tools:
            x = r["tools"].get(t, {})
            if x.get("ok") is None:
                cells.append("-")
            elif not x.get("ok"):
                cells.append("x")
            elif not x["outputs"]["ok"]:
                cells.append(f"! ({x['nodes']})")
            else:
                mark = ", = original" if x.get("same_as_original") else ""
                mark += "" if openvino_check(r, t).get("ok", True) else ", wrong in OpenVINO"
                cells.append(f"{times(t1.get('speedup', {}).get(t))} ({x['nodes']}{mark})")
        lines.append(f"| {r['name']} | {r['nodes']} | {fmt(t1.get('aa'))} | " + " | ".join(cells)
                     + f" | {versus_best_peer(r, tools)} |")
    lines += slowdown_lines(rows) + wall_time_lines(rows, tools) + cost_lines(rows, tools)
    return "\n".join(lines) + "\n"


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("manifest", nargs="+",
                   help="manifest.json of a zoo (bench/zoo/make_zoo.py, "
                        "bench/peers/builtin_zoo.py); several are measured as one sweep")
    p.add_argument("--out", required=True, help="folder for the tools' files and the results")
    p.add_argument("--graphsub", default=venv_command("graphsub"), help="graphsub command")
    p.add_argument("--tools", default=",".join(TOOLS), help="comma-separated subset of tools")
    p.add_argument("--only", action="append", help="entry name glob (repeatable)")
    p.add_argument("--runs", type=int, default=20, help="timed runs per file (0: no timing)")
    p.add_argument("--timeout", type=float, default=600, help="seconds per tool run")
    p.add_argument("--fresh", action="store_true",
                   help="measure every entry again (default: an entry whose row OUT/rows/ "
                        "holds for the same file, tools, tool versions and runs is kept)")
    p.add_argument("--keep-files", action="store_true",
                   help="keep the files the tools wrote (default: removed once measured; "
                        "a full-size zoo times seven tools does not fit on most disks)")
    args = p.parse_args(argv)
    args.tools = [t for t in args.tools.split(",") if t]
    unknown = set(args.tools) - set(TOOLS) - set(OPTIONAL_TOOLS)
    if unknown:
        p.error(f"unknown tools {sorted(unknown)} (known: {', '.join(TOOLS + OPTIONAL_TOOLS)})")
    return args


def tool_versions(args) -> dict:
    """What measured a row: each peer's package version, and graphsub's command line by the
    hash of the binary it runs (one version number spans many commits). A row measured by
    other versions is measured again."""
    from importlib import metadata

    versions = {}
    for package in ("onnxsim", "onnxslim", "onnxoptimizer", "onnxruntime", "openvino"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    binary = shutil.which(args.graphsub) or args.graphsub
    if os.path.abspath(binary) == os.path.abspath(venv_command("graphsub")):
        try:  # the venv's console script execs the binary inside the installed package
            import graphsub

            binary = os.path.join(os.path.dirname(graphsub.__file__), "bin", "graphsub")
        except ImportError:
            pass
    try:
        with open(binary, "rb") as f:
            versions["graphsub"] = hashlib.sha256(f.read()).hexdigest()[:16]
    except OSError:
        versions["graphsub"] = None
    return versions


def row_path(out: str, entry: dict) -> str:
    return os.path.join(out, "rows", f"{entry['name']}.json")


def cached_row(out: str, entry: dict, args) -> dict | None:
    """The row an earlier run kept for this entry, if it measured the same tools the same way
    on the same file (a long sweep that stops resumes where it stopped)."""
    try:
        with open(row_path(out, entry)) as f:
            row = json.load(f)
    except (OSError, ValueError):
        return None
    same = (row.get("sha256") == entry.get("sha256") and row.get("runs") == args.runs
            and sorted(row.get("tools", {})) == sorted(args.tools)
            and row.get("versions") == args.versions)
    return row if same else None


def main(argv=None) -> int:
    args = parse_args(argv)
    args.versions = tool_versions(args)
    work = []
    for path in args.manifest:
        manifest, zoo_dir = check_zoo.load_manifest(path, args.out)
        entries = check_zoo.select([e for e in manifest["entries"] if e["status"] == "ok"],
                                   args.only)
        work += [(e, zoo_dir) for e in entries]
    os.makedirs(os.path.join(args.out, "rows"), exist_ok=True)
    rows = []
    for k, (e, zoo_dir) in enumerate(work):
        row = None if args.fresh else cached_row(args.out, e, args)
        print(f"[{k + 1}/{len(work)}] {e['name']}{' (kept from an earlier run)' if row else ''}",
              file=sys.stderr, flush=True)
        if row is None:
            row = run_entry(e, zoo_dir, args)
            row["sha256"], row["runs"], row["versions"] = e.get("sha256"), args.runs, args.versions
            check_zoo.write_atomic(row_path(args.out, e), json.dumps(row, indent=1))
        rows.append(row)
    summary = summarize(rows, args.tools)
    import onnxruntime

    result = {"manifests": [os.path.abspath(m) for m in args.manifest], "tools": args.tools,
              "runs": args.runs, "cores": os.cpu_count(),
              "versions": {"onnxruntime": onnxruntime.__version__},
              "summary": summary, "families": family_summaries(rows, args.tools),
              "results": rows}
    text = markdown(rows, summary, args.tools)
    check_zoo.write_atomic(os.path.join(args.out, "peers.json"), json.dumps(result, indent=1))
    check_zoo.write_atomic(os.path.join(args.out, "peers.md"), text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
