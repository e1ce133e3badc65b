#!/usr/bin/env python3
"""Run graphsub over every model of a zoo manifest and check each result in ONNX Runtime.

For each exported entry of the manifest (bench/zoo/make_zoo.py writes it):

1. `GRAPHSUB optimize IN -o OUT --report-json R --quiet [FLAGS]`, recording success or the
   error text (with --self-check, nothing is run: the "optimized" file is the original, so
   the harness itself can be tested without graphsub);
2. the original and the written file run in ONNX Runtime (CPU) on the same random inputs
   (token ids in range, attention masks of ones, normal floats), once with every symbolic
   dimension at its first test value and once at its second;
3. per output, the largest absolute and relative difference; an output matches when
   max|a - b| <= atol + rtol * max|reference| (tolerances scaled to the output's magnitude;
   integer and bool outputs must be equal);
4. the opaque share from graphsub's report (nodes kept opaque / ONNX nodes read).

It writes a markdown table and a JSON summary, and exits nonzero if any model failed or
mismatched. Only numpy, onnx and onnxruntime are needed (make_zoo.py imports the input
generator from here, so the export-time check and this one draw identical inputs).
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import shlex
import subprocess
import sys
import time
import zlib

import numpy as np

FLOAT_TOLERANCE = {"float32": 1e-3, "float64": 1e-6, "float16": 1e-2, "bfloat16": 2e-2}


# ---------------------------------------------------------------------------------------
# Inputs


def concrete_shape(shape: list, dims: dict, k: int) -> tuple[int, ...]:
    """The shape with each symbolic dimension at its k-th test value."""
    out = []
    for d in shape:
        if isinstance(d, str):
            if d not in dims:
                raise KeyError(f"dimension '{d}' has no test values in the manifest")
            out.append(int(dims[d][k]))
        else:
            out.append(int(d))
    return tuple(out)


def input_rng(seed: int, k: int, name: str) -> np.random.Generator:
    """One generator per (entry, test set, input): values do not depend on input order."""
    return np.random.default_rng([seed, k, zlib.crc32(name.encode())])


def draw_values(spec: dict, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Values an input of this kind can take: ids in range, masks of ones, normal floats."""
    dtype = np.dtype(spec["dtype"]) if spec["dtype"] != "bfloat16" else np.dtype("float32")
    values = spec.get("values") or {"kind": "normal"}
    kind = values["kind"]
    if kind == "ones":
        return np.ones(shape, dtype=dtype)
    if kind == "int":
        return rng.integers(values["low"], values["high"], size=shape).astype(dtype)
    if np.issubdtype(dtype, np.integer) or dtype == np.bool_:
        return np.zeros(shape, dtype=dtype)
    return rng.standard_normal(shape).astype(dtype)


def make_inputs(inputs: list[dict], dims: dict, seed: int, k: int) -> dict[str, np.ndarray]:
    """Random inputs for test set k (0 or 1): every symbolic dimension at its k-th value."""
    return {spec["name"]: draw_values(spec, concrete_shape(spec["shape"], dims, k),
                                      input_rng(seed, k, spec["name"]))
            for spec in inputs}


# ---------------------------------------------------------------------------------------
# Comparison


def tolerance_for(dtype: np.dtype, rtol: float | None, atol: float | None) -> tuple[float, float]:
    """Float tolerances by element type unless given; exact comparison for everything else."""
    if not np.issubdtype(dtype, np.floating):
        return 0.0, 0.0
    default = FLOAT_TOLERANCE.get(str(dtype), 1e-3)
    return (default if rtol is None else rtol), (default if atol is None else atol)


def compare_arrays(ref: np.ndarray, got: np.ndarray, rtol: float | None = None,
                   atol: float | None = None) -> dict:
    """Max abs and relative (to the output's largest magnitude) difference, and the verdict.

    Non-finite values must sit at the same places with the same values; the tolerance test
    is on the finite rest. A relative error per element blows up where the reference is
    near zero, so it is taken against the output's magnitude instead.
    """
    result = {"shape": list(ref.shape), "dtype": str(ref.dtype)}
    if ref.shape != got.shape:
        return {**result, "ok": False, "error": f"shape {list(got.shape)} != {list(ref.shape)}"}
    r_tol, a_tol = tolerance_for(ref.dtype, rtol, atol)
    if not np.issubdtype(ref.dtype, np.floating):
        diff = np.abs(ref.astype(np.float64) - got.astype(np.float64))
        max_abs = float(diff.max()) if diff.size else 0.0
        return {**result, "max_abs": max_abs, "max_rel": max_abs, "max_ref": None,
                "ok": bool(np.array_equal(ref, got))}
    ref64, got64 = ref.astype(np.float64), got.astype(np.float64)
    finite = np.isfinite(ref64)
    same_nonfinite = bool(np.array_equal(np.isfinite(got64), finite) and np.array_equal(
        ref64[~finite], got64[~finite], equal_nan=True))
    diff = np.abs(ref64[finite] - got64[finite])
    max_abs = float(diff.max()) if diff.size else 0.0
    max_ref = float(np.abs(ref64[finite]).max()) if diff.size else 0.0
    max_rel = max_abs / max_ref if max_ref > 0 else (0.0 if max_abs == 0 else float("inf"))
    ok = same_nonfinite and max_abs <= a_tol + r_tol * max_ref
    return {**result, "max_abs": max_abs, "max_rel": max_rel, "max_ref": max_ref,
            "rtol": r_tol, "atol": a_tol, "nonfinite_match": same_nonfinite, "ok": bool(ok)}


def compare_outputs(names: list[str], ref: list[np.ndarray], got: dict[str, np.ndarray],
                    rtol=None, atol=None) -> list[dict]:
    """Compare each reference output with the output of the same name."""
    rows = []
    for name, r in zip(names, ref):
        if name not in got:
            rows.append({"name": name, "ok": False, "error": "output missing in the result"})
            continue
        rows.append({"name": name, **compare_arrays(r, got[name], rtol, atol)})
    return rows


# ---------------------------------------------------------------------------------------
# ONNX Runtime


ORT_LEVELS = {"disable": "ORT_DISABLE_ALL", "basic": "ORT_ENABLE_BASIC",
              "extended": "ORT_ENABLE_EXTENDED", "all": "ORT_ENABLE_ALL"}


def ort_session(path: str, level: str = "disable", threads: int = 1):
    """A CPU session; ORT's own graph rewrites are off by default so both files are run as
    written (otherwise a difference could come from ORT's optimizer on either side)."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.graph_optimization_level = getattr(ort.GraphOptimizationLevel, ORT_LEVELS[level])
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    return ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])


def run_session(sess, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Run with the inputs the session declares (a file may have dropped an unused one)."""
    wanted = {i.name for i in sess.get_inputs()}
    outs = sess.run(None, {k: v for k, v in feeds.items() if k in wanted})
    return {o.name: v for o, v in zip(sess.get_outputs(), outs)}


def ort_compare(original: str, result: str, entry: dict, args) -> list[dict]:
    """Run both files at both test sets; one row per (test set, output)."""
    a = ort_session(original, args.ort_opt, args.ort_threads)
    b = ort_session(result, args.ort_opt, args.ort_threads)  # its own session, even for itself
    rows = []
    for k in (0, 1):
        feeds = make_inputs(entry["inputs"], entry["dims"], entry["input_seed"], k)
        ref = run_session(a, feeds)
        got = run_session(b, feeds)
        at = {d: v[k] for d, v in entry["dims"].items()}
        for row in compare_outputs(list(ref), list(ref.values()), got, args.rtol, args.atol):
            rows.append({"set": k, "dims": at, **row})
    return rows


# ---------------------------------------------------------------------------------------
# graphsub


def opaque_share(report: dict) -> float | None:
    """Nodes graphsub kept opaque over the ONNX nodes it read, from its --report-json.

    The report lists every opaque node under import.opaque and counts the file's nodes in
    onnx_ops.before; a report without an import section (a built-in model) has no share.
    """
    imported = report.get("import") or {}
    total = (report.get("onnx_ops") or {}).get("before")
    if "opaque" not in imported or not total:
        return None
    return len(imported["opaque"]) / total


def opaque_op_types(report: dict) -> dict[str, int]:
    """How many nodes of each op type (domain-qualified when not the default) were opaque."""
    counts: dict[str, int] = {}
    for node in (report.get("import") or {}).get("opaque", []):
        key = node.get("op_type", "?")
        if node.get("domain") not in (None, "", "ai.onnx"):
            key = f"{node['domain']}::{key}"
        counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def run_graphsub(graphsub: str, flags: list[str], src: str, dst: str, report: str,
                 timeout: float) -> dict:
    """One `graphsub optimize` run: exit status, seconds, and the end of its error output."""
    cmd = [graphsub, "optimize", src, "-o", dst, "--report-json", report, "--quiet", *flags]
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"ok": False, "command": cmd, "seconds": timeout,
                "error": f"timed out after {timeout:.0f} s"}
    except OSError as e:
        return {"ok": False, "command": cmd, "seconds": 0.0, "error": str(e)}
    out = {"ok": proc.returncode == 0 and os.path.exists(dst), "command": cmd,
           "returncode": proc.returncode, "seconds": round(time.monotonic() - start, 2)}
    if not out["ok"]:
        text = (proc.stderr.strip() or proc.stdout.strip() or "no output")
        out["error"] = text[-2000:] if proc.returncode else f"no file written: {text[-2000:]}"
    return out


def load_report(path: str) -> dict | None:
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


# ---------------------------------------------------------------------------------------
# One entry, all entries


def check_entry(entry: dict, zoo_dir: str, args) -> dict:
    """Optimize (or, for --self-check, take as is) one model and compare it in ORT."""
    src = os.path.join(zoo_dir, entry["file"])
    row = {k: entry.get(k) for k in ("name", "model", "family", "source", "exporter", "opset")}
    if args.self_check:
        dst, row["graphsub"] = src, {"ok": True, "self_check": True, "seconds": 0.0}
    else:
        dst = os.path.join(args.out, entry["name"] + ".opt.onnx")
        report_path = os.path.join(args.out, entry["name"] + ".report.json")
        for stale in (dst, report_path):
            if os.path.exists(stale):
                os.remove(stale)
        # Dimensions the model cannot run at graphsub's default get their value, as a user
        # would give it (the manifest's graphsub_dims, from the recipe).
        dims = [f"--dim={k}={v}" for k, v in sorted((entry.get("graphsub_dims") or {}).items())]
        row["graphsub"] = run_graphsub(args.graphsub, [*dims, *args.flags], src, dst,
                                       report_path, args.timeout)
        report = load_report(report_path)
        if report is not None:
            row["opaque_share"] = opaque_share(report)
            row["opaque_ops"] = opaque_op_types(report)
            row["graphsub_check"] = (report.get("check") or {}).get("ok")
            row["notes"] = (report.get("import") or {}).get("notes", [])
            ops = report.get("onnx_ops") or {}
            row["onnx_nodes"] = [ops.get("before"), ops.get("after")]
            written = ((report.get("timings") or {}).get("guard") or {}).get("written")
            row["written"] = written
    if not row["graphsub"]["ok"]:
        row["status"] = "graphsub-failed"
        return row
    try:
        row["outputs"] = ort_compare(src, dst, entry, args)
    except Exception as e:  # an ORT load or run failure is this model's result, not a crash
        row["status"], row["ort_error"] = "ort-failed", f"{type(e).__name__}: {e}"[-2000:]
        return row
    row["status"] = "ok" if all(o["ok"] for o in row["outputs"]) else "mismatch"
    return row


def worst(rows: list[dict], key: str) -> float | None:
    values = [r[key] for r in rows if r.get(key) is not None]
    return max(values) if values else None


def fmt_num(x, spec=".1e") -> str:
    return "-" if x is None else format(x, spec)


def markdown_table(results: list[dict], skipped: list[dict]) -> str:
    """One line per model: what graphsub did, how long, the opaque share and the worst error."""
    lines = ["| entry | family | exporter | opset | graphsub | s | nodes | opaque | max abs "
             "| max rel | status |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        g = r["graphsub"]
        what = "self-check" if g.get("self_check") else ("ok" if g["ok"] else "failed")
        if r.get("written"):
            what += f" ({r['written']})"
        share = r.get("opaque_share")
        outs = r.get("outputs", [])
        lines.append(
            f"| {r['name']} | {r['family']} | {r['exporter']} | {r['opset']} | {what} "
            f"| {g.get('seconds', 0):.1f} | {nodes_text(r.get('onnx_nodes'))} "
            f"| {'-' if share is None else f'{100 * share:.1f}%'} "
            f"| {fmt_num(worst(outs, 'max_abs'))} | {fmt_num(worst(outs, 'max_rel'))} "
            f"| {r['status']} |")
    for e in skipped:
        lines.append(f"| {e['name']} | {e['family']} | {e['exporter']} | {e.get('opset') or '-'} "
                     f"| - | - | - | - | - | - | not exported |")
    failures = [r for r in results if r["status"] != "ok"]
    if failures:
        lines += ["", "Failures:", ""]
        for r in failures:
            lines.append(f"- **{r['name']}** ({r['status']}): {failure_text(r)}")
    return "\n".join(lines) + "\n"


def nodes_text(nodes) -> str:
    """ONNX nodes before -> after, as graphsub's report counts them."""
    if not nodes or nodes[0] is None:
        return "-"
    return f"{nodes[0]} -> {nodes[1]}"


def failure_text(r: dict) -> str:
    """The first line that says why an entry failed, for the table's footnotes."""
    if r["status"] == "graphsub-failed":
        text = r["graphsub"].get("error", "")
    elif r["status"] == "ort-failed":
        text = r.get("ort_error", "")
    else:
        bad = [o for o in r.get("outputs", []) if not o["ok"]]
        text = "; ".join(f"{o['name']} at {o['dims']}: " + (
            o.get("error") or f"max abs {o['max_abs']:.3g} (max |ref| {o['max_ref']:.3g})")
            for o in bad[:3])
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return " / ".join(lines[-3:])[:600] if lines else "?"


def select(entries: list[dict], patterns: list[str] | None) -> list[dict]:
    if not patterns:
        return entries
    return [e for e in entries if any(fnmatch.fnmatch(e["name"], p) for p in patterns)]


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("manifest", help="manifest.json of a zoo (the .onnx files lie next to it)")
    p.add_argument("--graphsub", default="build/graphsub", help="graphsub binary")
    p.add_argument("--flags", default="",
                   help='extra graphsub flags, e.g. --flags="--target onednn"')
    p.add_argument("--out", default="/tmp/zoo_check", help="folder for results and reports")
    p.add_argument("--self-check", action="store_true",
                   help="compare each original against itself in ORT (no graphsub)")
    p.add_argument("--only", action="append", help="entry name glob (repeatable)")
    p.add_argument("--timeout", type=float, default=900, help="seconds per graphsub run")
    p.add_argument("--rtol", type=float, default=None, help="default by dtype (1e-3 for float32)")
    p.add_argument("--atol", type=float, default=None, help="default by dtype (1e-3 for float32)")
    p.add_argument("--ort-opt", choices=sorted(ORT_LEVELS), default="disable",
                   help="ORT graph optimization level for both files")
    p.add_argument("--ort-threads", type=int, default=1)
    p.add_argument("--json", help="summary JSON (default OUT/summary.json)")
    p.add_argument("--markdown", help="summary table (default OUT/summary.md)")
    args = p.parse_args(argv)
    args.flags = shlex.split(args.flags)
    return args


def write_atomic(path: str, text: str) -> None:
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def load_manifest(path: str, out: str) -> tuple[dict, str]:
    """The manifest and the folder its files lie in; `out` is created."""
    with open(path) as f:
        manifest = json.load(f)
    os.makedirs(out, exist_ok=True)
    return manifest, os.path.dirname(os.path.abspath(path))


def main(argv=None) -> int:
    args = parse_args(argv)
    manifest, zoo_dir = load_manifest(args.manifest, args.out)
    entries = select(manifest["entries"], args.only)
    exported = [e for e in entries if e["status"] == "ok"]
    skipped = [e for e in entries if e["status"] != "ok"]
    results = []
    for e in exported:
        r = check_entry(e, zoo_dir, args)
        results.append(r)
        print(f"{r['status']:>15}  {e['name']}", file=sys.stderr, flush=True)
    table = markdown_table(results, skipped)
    counts: dict[str, int] = {}
    for r in results:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    summary = {"manifest": os.path.abspath(args.manifest), "self_check": args.self_check,
               "graphsub": None if args.self_check else args.graphsub, "flags": args.flags,
               "ort_opt": args.ort_opt, "counts": counts,
               "not_exported": [e["name"] for e in skipped], "results": results}
    write_atomic(args.json or os.path.join(args.out, "summary.json"),
                 json.dumps(summary, indent=1) + "\n")
    write_atomic(args.markdown or os.path.join(args.out, "summary.md"), table)
    print(table)
    return 0 if results and all(r["status"] == "ok" for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
