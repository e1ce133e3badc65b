#!/usr/bin/env python3
"""Run graphsub over ONNX's backend test cases and check its files in ONNX Runtime.

    run_conformance.py CASES_DIR --graphsub PATH [--flags "..."] [--jobs N] [--timeout S]
                       [--json OUT] [--markdown OUT] [--forbid-reasons a,b] [--filter REGEX]
    run_conformance.py CASES_DIR --passthrough ...     (the harness itself, no graphsub)

CASES_DIR is what materialize.py wrote. See README.md in this folder for the outcomes and
the refusal reasons.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import re
import select
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import reasons  # noqa: E402

OUTCOMES = ["pass", "wrong", "crash", "timeout", "refused", "runtime-fails-original"]
FAILING = {"wrong", "crash", "timeout"}


# --------------------------------------------------------------------------------------
# The ONNX Runtime side: runs in a worker process (`--ort-worker`), one request a line.
# --------------------------------------------------------------------------------------

def _load_value(path, type_proto):
    """A test-data file as onnx's runner reads it (runner._load_proto), maps included."""
    import onnx
    from onnx import numpy_helper

    with open(path, "rb") as f:
        data = f.read()
    if type_proto.HasField("sequence_type"):
        p = onnx.SequenceProto()
        p.ParseFromString(data)
        return numpy_helper.to_list(p)
    if type_proto.HasField("optional_type"):
        p = onnx.OptionalProto()
        p.ParseFromString(data)
        return numpy_helper.to_optional(p)
    if type_proto.HasField("map_type"):
        p = onnx.MapProto()
        p.ParseFromString(data)
        return numpy_helper.to_dict(p)
    p = onnx.TensorProto()
    p.ParseFromString(data)
    return numpy_helper.to_array(p)


def _compare(ref, out, rtol, atol, where):
    """None when `out` matches `ref` as onnx's backend tests judge it, else the reason.

    The policy of onnx.backend.test.runner.Runner.assert_similar_outputs: same count, same
    shape, same dtype, strings exactly, numbers by np.testing.assert_allclose(rtol, atol)
    (NaN equal to NaN), bfloat16 with rtol at least 2^-6; sequences element by element.
    """
    import numpy as np

    if ref is None or out is None:
        return None if ref is None and out is None else f"{where}: {type(out).__name__}, expected {type(ref).__name__}"
    if isinstance(ref, dict):
        if not isinstance(out, dict) or sorted(out) != sorted(ref):
            return f"{where}: map keys differ"
        for k in ref:
            r = _compare(ref[k], out[k], rtol, atol, f"{where}[{k!r}]")
            if r:
                return r
        return None
    if isinstance(ref, (list, tuple)):
        if not isinstance(out, (list, tuple)):
            return f"{where}: {type(out).__name__}, expected a sequence"
        if len(out) != len(ref):
            return f"{where}: {len(out)} elements, expected {len(ref)}"
        for j, (r_, o_) in enumerate(zip(ref, out)):
            r = _compare(r_, o_, rtol, atol, f"{where}[{j}]")
            if r:
                return r
        return None
    ref = np.asarray(ref)
    out = np.asarray(out)
    if tuple(out.shape) != tuple(ref.shape):
        return f"{where}: shape {list(out.shape)}, expected {list(ref.shape)}"
    if ref.dtype == object:
        return None if np.array_equal(out, ref) else f"{where}: strings differ"
    if out.dtype != ref.dtype:
        return f"{where}: dtype {out.dtype}, expected {ref.dtype}"
    r_tol = rtol
    if ref.dtype.name == "bfloat16":
        r_tol = max(rtol, 2 ** -6)
    if ref.dtype.kind not in "biufc":  # ml_dtypes (bfloat16, float8, int4): compare as float32
        out = out.astype(np.float32)
        ref = ref.astype(np.float32)
    try:
        np.testing.assert_allclose(out, ref, rtol=r_tol, atol=atol)
    except AssertionError as e:
        lines = [s.strip() for s in str(e).splitlines() if s.strip()]
        brief = "; ".join(s for s in lines if s.startswith(("Mismatched", "Max abs", "Max rel")))
        return f"{where}: values differ ({brief or lines[-1] if lines else 'assert_allclose'})"
    return None


class _OrtRunner:
    def __init__(self):
        import onnxruntime as ort

        self.ort = ort

    def _run(self, sess, outs, feeds, ins):
        return _run_ort(self.ort, sess, outs, feeds, ins)

    def run(self, req):
        import onnx

        ort = self.ort
        orig = onnx.load(os.path.join(req["case_dir"], "model.onnx"), load_external_data=False)
        inits = {i.name for i in orig.graph.initializer}
        ins = [vi for vi in orig.graph.input if vi.name not in inits]
        outs = list(orig.graph.output)
        result = {"status": "ok"}
        if req.get("count_nodes"):
            try:
                m = onnx.load(req["model"], load_external_data=False)
                result["nodes"] = len(m.graph.node)
                result["ops"] = sorted({n.op_type for n in m.graph.node})
            except Exception as e:  # noqa: BLE001
                return {"status": "load-fails", "detail": f"onnx cannot read the file: {e}"}
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        so.inter_op_num_threads = 1
        so.log_severity_level = 3
        try:
            sess = ort.InferenceSession(req["model"], so, providers=["CPUExecutionProvider"])
        except Exception as e:  # noqa: BLE001
            return {**result, "status": "load-fails", "detail": _short(e)}
        sets = sorted(
            d for d in os.listdir(req["case_dir"]) if d.startswith("test_data_set_")
        )
        for ds in sets:
            d = os.path.join(req["case_dir"], ds)
            n_in = len([f for f in os.listdir(d) if f.startswith("input_")])
            n_out = len([f for f in os.listdir(d) if f.startswith("output_")])
            try:
                feeds = {
                    ins[i].name: _load_value(os.path.join(d, f"input_{i}.pb"), ins[i].type)
                    for i in range(n_in)
                }
                expected = [
                    _load_value(os.path.join(d, f"output_{i}.pb"), outs[i].type)
                    for i in range(n_out)
                ]
            except Exception as e:  # noqa: BLE001
                return {**result, "status": "harness-error", "detail": f"{ds}: {_short(e)}"}
            try:
                got = self._run(sess, [o for o in outs[:n_out]], feeds, ins)
            except Exception as e:  # noqa: BLE001
                return {**result, "status": "run-fails", "detail": f"{ds}: {_short(e)}"}
            if len(got) != len(expected):
                return {**result, "status": "mismatch", "detail": f"{ds}: {len(got)} outputs, expected {len(expected)}"}
            for i, (ref, o) in enumerate(zip(expected, got)):
                why = _compare(ref, o, req["rtol"], req["atol"], f"{ds} output {i} '{outs[i].name}'")
                if why:
                    return {**result, "status": "mismatch", "detail": why}
        return result


# Element types numpy holds only through ml_dtypes, which onnxruntime's Python binding does
# not take or give as numpy arrays: bfloat16, the float8 types, float8e8m0. They go in and
# out as OrtValues of raw bytes (4- and 2-bit types are packed differently: not handled).
_BYTE_TYPES = {16, 17, 18, 19, 20, 24}


def _elem(vi):
    return vi.type.tensor_type.elem_type if vi.type.HasField("tensor_type") else 0


def _run_ort(ort, sess, outs, feeds, ins):
    import numpy as np

    special = any(_elem(vi) in _BYTE_TYPES for vi in list(ins) + list(outs))
    if not special or not all(isinstance(v, np.ndarray) for v in feeds.values()):
        return sess.run([o.name for o in outs], feeds)
    by_name = {vi.name: vi for vi in ins}
    vals = {}
    for k, a in feeds.items():
        if a.dtype.kind == "V" and _elem(by_name[k]) in _BYTE_TYPES:
            raw = a.view(np.uint8 if a.itemsize == 1 else np.uint16)
            vals[k] = ort.OrtValue.ortvalue_from_numpy_with_onnx_type(raw, _elem(by_name[k]))
        else:
            vals[k] = ort.OrtValue.ortvalue_from_numpy(a)
    got = sess.run_with_ort_values([o.name for o in outs], vals)
    res = []
    for vi, v in zip(outs, got):
        a = v.numpy()
        if _elem(vi) in _BYTE_TYPES:
            from onnx import helper

            a = a.view(helper.tensor_dtype_to_np_dtype(_elem(vi)))
        res.append(a)
    return res


def _short(e, limit=600):
    s = f"{type(e).__name__}: {e}".strip().replace("\n", " ")
    # ONNX Runtime's messages name the source line and the C++ signature before the reason.
    s = re.sub(r"/onnxruntime_src/\S+:\d+ (\S+?\((?:[^()]|\([^()]*\))*\)( const)? )?", "", s)
    return s if len(s) <= limit else s[: limit // 3] + " ... " + s[-(2 * limit) // 3:]


def ort_worker_main():
    """The worker loop: one JSON request a line on stdin, one JSON answer a line on stdout."""
    import warnings

    warnings.simplefilter("ignore")
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # anything a library prints goes to stderr, not into the protocol
    runner = _OrtRunner()
    out.write(json.dumps({"ready": True, "onnxruntime": runner.ort.__version__}) + "\n")
    for line in sys.stdin:
        req = json.loads(line)
        try:
            ans = runner.run(req)
        except Exception:  # noqa: BLE001
            ans = {"status": "harness-error", "detail": traceback.format_exc(limit=3)[-800:]}
        out.write(json.dumps(ans) + "\n")


class OrtClient:
    """One long-lived worker process (restarted when it dies or hangs)."""

    def __init__(self, python, timeout):
        self.python = python
        self.timeout = timeout
        self.proc = None
        self.version = None

    def _start(self):
        self.proc = subprocess.Popen(
            [self.python, os.path.abspath(__file__), "--ort-worker"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True, bufsize=1, start_new_session=True,
        )
        hello = self._read(120)
        if not hello or not hello.get("ready"):
            raise RuntimeError("the onnxruntime worker did not start (is onnxruntime installed?)")
        self.version = hello["onnxruntime"]

    def _read(self, timeout):
        r, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not r:
            return None
        line = self.proc.stdout.readline()
        return json.loads(line) if line else None

    def _kill(self):
        if self.proc:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()
            self.proc = None

    def run(self, **req):
        if self.proc is None:
            self._start()
        try:
            self.proc.stdin.write(json.dumps(req) + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass
        ans = self._read(self.timeout)
        if ans is None:
            rc = self.proc.poll()
            self._kill()
            if rc is None:
                return {"status": "hang", "detail": f"onnxruntime did not finish within {self.timeout} s"}
            return {"status": "ort-crash", "detail": f"onnxruntime crashed ({_exit_text(rc)})"}
        return ans

    def close(self):
        if self.proc:
            try:
                self.proc.stdin.close()
                self.proc.wait(timeout=10)
            except Exception:  # noqa: BLE001
                self._kill()
            self.proc = None


def _exit_text(rc):
    if rc is not None and rc < 0:
        try:
            return f"signal {signal.Signals(-rc).name}"
        except ValueError:
            return f"signal {-rc}"
    return f"exit status {rc}"


# --------------------------------------------------------------------------------------
# The harness.
# --------------------------------------------------------------------------------------

def run_graphsub(args, case_dir, out_path):
    """(status, message, seconds): status ok | refused | crash | timeout."""
    model = os.path.join(case_dir, "model.onnx")
    t = time.monotonic()
    if args.passthrough:
        shutil.copyfile(model, out_path)
        return "ok", "", 0.0, 0
    cmd = [args.graphsub, "optimize", model, "-o", out_path, "--quiet", *shlex.split(args.flags)]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         errors="replace", start_new_session=True, cwd=os.path.dirname(out_path))
    try:
        so, se = p.communicate(timeout=args.timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        return "timeout", f"no result within {args.timeout} s", time.monotonic() - t, None
    secs = time.monotonic() - t
    rc = p.returncode
    text = (se or "") + (so or "")
    if rc == 0:
        if not os.path.exists(out_path):
            return "crash", "exit status 0 but no output file written", secs, rc
        return "ok", "", secs, rc
    # A clean refusal: exit status 1 and a line "error: ..." (src/cli/main.cpp,
    # optimize_command.cpp); "internal error:" (exit 2), signals and anything else: a crash.
    lines = text.splitlines()
    idx = [i for i, s in enumerate(lines) if s.startswith("error: ")]
    if rc == 1 and idx:
        msg = "\n".join(lines[idx[0]:]).strip()[len("error: "):]
        return "refused", msg, secs, rc
    tail = "\n".join(lines[-8:]).strip()
    return "crash", f"{_exit_text(rc)}: {tail}"[:2000], secs, rc


def process_case(args, name, client, work):
    case_dir = os.path.join(args.cases_dir, name)
    info_path = os.path.join(case_dir, "case.json")
    info = {}
    if os.path.exists(info_path):
        with open(info_path) as f:
            info = json.load(f)
    rtol = info.get("rtol", 1e-3) if args.rtol is None else args.rtol
    atol = info.get("atol", 1e-7) if args.atol is None else args.atol
    res = {"name": name, "source": info.get("source"), "ops": info.get("ops"),
           "opset": info.get("opset_import", {}).get("", info.get("opset_import", {}).get("ai.onnx"))}
    t0 = time.monotonic()
    out_dir = os.path.join(work, name)
    os.makedirs(out_dir, exist_ok=True)
    out_path = os.path.join(out_dir, "opt.onnx")

    control = client.run(model=os.path.join(case_dir, "model.onnx"), case_dir=case_dir,
                         rtol=rtol, atol=atol)
    res["control"] = control["status"]
    if control["status"] != "ok":
        res["control_detail"] = control.get("detail", "")

    status, msg, secs, rc = run_graphsub(args, case_dir, out_path)
    res["graphsub"] = {"status": status, "seconds": round(secs, 3), "exit": rc}
    if msg:
        res["graphsub"]["message"] = msg
    if status == "refused":
        res["graphsub"]["reason"] = reasons.classify(msg, os.path.join(case_dir, "model.onnx"))

    if status in ("crash", "timeout"):
        res["outcome"] = status
        res["detail"] = msg
    elif control["status"] != "ok":
        # ONNX Runtime cannot run the original or disagrees with onnx's expected outputs:
        # nothing about graphsub's file can be judged (graphsub's own status is kept).
        res["outcome"] = "runtime-fails-original"
        res["detail"] = f"{control['status']}: {control.get('detail', '')}"
    elif status == "refused":
        res["outcome"] = "refused"
        res["reason"] = res["graphsub"]["reason"]
        res["detail"] = msg
    else:
        got = client.run(model=out_path, case_dir=case_dir, rtol=rtol, atol=atol, count_nodes=True)
        res["optimized_nodes"] = got.get("nodes")
        if got["status"] == "ok":
            res["outcome"] = "pass"
        else:
            res["outcome"] = "wrong"
            res["detail"] = f"{got['status']}: {got.get('detail', '')}"
    res["seconds"] = round(time.monotonic() - t0, 3)
    if not args.keep:
        shutil.rmtree(out_dir, ignore_errors=True)
    return res


def outcome_key(r):
    return f"refused:{r['reason']}" if r["outcome"] == "refused" else r["outcome"]


def write_markdown(path, summary, results):
    L = []
    L.append(f"# graphsub conformance on ONNX {summary['onnx_version']} backend test cases\n")
    L.append(f"graphsub: `{summary['graphsub']}` {('flags `' + summary['flags'] + '`') if summary['flags'] else ''}  ")
    L.append(f"onnxruntime {summary['onnxruntime_version']} (CPU); {summary['cases']} cases "
             f"({summary['by_source'].get('node', 0)} node, {summary['by_source'].get('model', 0)} model); "
             f"{summary['wall_seconds']:.0f} s with {summary['jobs']} jobs\n")
    L.append("| outcome | cases |")
    L.append("|---|---:|")
    for k, v in summary["outcomes"].items():
        L.append(f"| {k} | {v} |")
    L.append("")
    L.append("| outcome (refusals by reason) | cases |")
    L.append("|---|---:|")
    for k, v in summary["counts"].items():
        L.append(f"| {k} | {v} |")
    L.append("")
    if summary["refusal_reasons"]:
        L.append("## Refusals by reason\n")
        L.append("| reason | cases | meaning |")
        L.append("|---|---:|---|")
        for k, v in summary["refusal_reasons"].items():
            L.append(f"| {k} | {v} | {reasons.DESCRIPTIONS.get(k, '')} |")
        L.append("")
        L.append("## Refusal messages (grouped, names and numbers replaced)\n")
        L.append("| reason | cases | message | e.g. |")
        L.append("|---|---:|---|---|")
        for g in summary["refusal_messages"]:
            ex = ", ".join(g["cases"][:3]) + (" ..." if len(g["cases"]) > 3 else "")
            vs = list(g["variants"].items())
            var = "" if len(vs) < 2 else "<br>" + "<br>".join(
                f"{n} x {_md(v)}" for v, n in vs[:6]) + (f"<br>... {len(vs) - 6} more" if len(vs) > 6 else "")
            L.append(f"| {g['reason']} | {g['count']} | {_md(g['template'])}{var} | {ex} |")
        L.append("")
    bad = [r for r in results if r["outcome"] in FAILING]
    if bad:
        L.append("## wrong, crash, timeout\n")
        L.append("| case | outcome | detail |")
        L.append("|---|---|---|")
        for r in bad:
            L.append(f"| {r['name']} | {r['outcome']} | {_md(r.get('detail', ''))[:400]} |")
        L.append("")
    rfo = [r for r in results if r["outcome"] == "runtime-fails-original"]
    if rfo:
        L.append("## runtime-fails-original (ONNX Runtime itself fails the case; graphsub's status)\n")
        c = collections.Counter(
            (r["control"], r["graphsub"]["status"] + (":" + r["graphsub"]["reason"] if r["graphsub"].get("reason") else ""))
            for r in rfo)
        L.append("| onnxruntime on the original | graphsub | cases |")
        L.append("|---|---|---:|")
        for (a, b), n in sorted(c.items(), key=lambda x: -x[1]):
            L.append(f"| {a} | {b} | {n} |")
        L.append("")
    with open(path, "w") as f:
        f.write("\n".join(L))


def _md(s):
    return str(s).replace("|", "\\|").replace("\n", " ")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("cases_dir")
    ap.add_argument("--graphsub", help="the graphsub binary")
    ap.add_argument("--passthrough", action="store_true",
                    help="no graphsub: a copy of each original stands for its output (tests the harness)")
    ap.add_argument("--flags", default="", help="extra flags for `graphsub optimize` (one string)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=60, help="seconds per graphsub run (default 60)")
    ap.add_argument("--ort-timeout", type=float, default=60,
                    help="seconds per ONNX Runtime run of one model (default 60)")
    ap.add_argument("--json", dest="json_out")
    ap.add_argument("--markdown")
    ap.add_argument("--forbid-reasons", default="",
                    help="comma-separated refusal reasons that fail the run (e.g. opset,zero-dim)")
    ap.add_argument("--filter", help="only cases whose name matches this regular expression")
    ap.add_argument("--rtol", type=float, help="override every case's rtol")
    ap.add_argument("--atol", type=float, help="override every case's atol")
    ap.add_argument("--keep", help="keep graphsub's output files in this folder")
    ap.add_argument("--python", default=sys.executable,
                    help="python with onnx and onnxruntime for the worker processes")
    ap.add_argument("--quiet", action="store_true", help="no progress line per case")
    ap.add_argument("--reclassify", metavar="OLD_JSON",
                    help="run nothing: rebuild the counts and reports of an earlier --json with "
                         "the current reasons.py (and --forbid-reasons)")
    args = ap.parse_args(argv)

    if args.reclassify:
        return report(args, *reclassify(args))
    if not args.passthrough and not args.graphsub:
        ap.error("give --graphsub PATH (or --passthrough)")
    if args.graphsub:
        args.graphsub = os.path.abspath(args.graphsub)
        if not os.access(args.graphsub, os.X_OK):
            ap.error(f"--graphsub {args.graphsub}: not an executable file")
    forbid = {s.strip() for s in args.forbid_reasons.split(",") if s.strip()}
    unknown = forbid - set(reasons.KEYS)
    if unknown:
        ap.error(f"--forbid-reasons: unknown reason(s) {sorted(unknown)}; known: {reasons.KEYS}")
    args.cases_dir = os.path.abspath(args.cases_dir)
    names = sorted(d for d in os.listdir(args.cases_dir)
                   if os.path.exists(os.path.join(args.cases_dir, d, "model.onnx")))
    if args.filter:
        rx = re.compile(args.filter)
        names = [n for n in names if rx.search(n)]
    if not names:
        print(f"run_conformance: no cases in {args.cases_dir}", file=sys.stderr)
        return 2
    onnx_version = "?"
    mpath = os.path.join(args.cases_dir, "manifest.json")
    if os.path.exists(mpath):
        with open(mpath) as f:
            onnx_version = json.load(f).get("onnx_version", "?")

    if args.keep:
        work = os.path.abspath(args.keep)
        os.makedirs(work, exist_ok=True)
        tmp = None
    else:
        tmp = tempfile.mkdtemp(prefix="graphsub-conformance-")
        work = tmp
    local = threading.local()
    clients = []
    clients_lock = threading.Lock()

    def client():
        if not hasattr(local, "c"):
            local.c = OrtClient(args.python, args.ort_timeout)
            with clients_lock:
                clients.append(local.c)
        return local.c

    done = [0]
    lock = threading.Lock()

    def job(name):
        try:
            r = process_case(args, name, client(), work)
        except Exception:  # noqa: BLE001
            r = {"name": name, "outcome": "crash", "graphsub": {"status": "harness-error"},
                 "control": "?", "detail": "harness error: " + traceback.format_exc(limit=4)[-1500:]}
        with lock:
            done[0] += 1
            if not args.quiet:
                print(f"[{done[0]:4d}/{len(names)}] {outcome_key(r):<28} {name}", flush=True)
        return r

    t0 = time.monotonic()
    try:
        # Largest models first (the light CNNs take seconds each, the rest well under one),
        # so that no long case starts last; results are reported in name order.
        size = {n: os.path.getsize(os.path.join(args.cases_dir, n, "model.onnx")) for n in names}
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as ex:
            by_name = dict(zip(sched := sorted(names, key=lambda n: (-size[n], n)),
                               ex.map(job, sched)))
        results = [by_name[n] for n in names]
    finally:
        for c in clients:
            c.close()
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    wall = time.monotonic() - t0
    meta = {
        "onnx_version": onnx_version,
        "onnxruntime_version": next((c.version for c in clients if c.version), "?"),
        "graphsub": "passthrough" if args.passthrough else args.graphsub,
        "flags": args.flags,
        "jobs": args.jobs,
        "timeout": args.timeout,
        "wall_seconds": round(wall, 1),
    }
    return report(args, meta, results)


def reclassify(args):
    with open(args.reclassify) as f:
        old = json.load(f)
    results = old["results"]
    for r in results:
        g = r.get("graphsub", {})
        if g.get("status") == "refused":
            g["reason"] = reasons.classify(g["message"], os.path.join(args.cases_dir, r["name"], "model.onnx"))
            if r["outcome"] == "refused":
                r["reason"] = g["reason"]
    keys = ("onnx_version", "onnxruntime_version", "graphsub", "flags", "jobs", "timeout", "wall_seconds")
    return {k: old["summary"].get(k) for k in keys}, results


def report(args, meta, results):
    """Counts, grouped refusal messages, the JSON and markdown files; the exit status."""
    forbid = {s.strip() for s in args.forbid_reasons.split(",") if s.strip()}
    unknown = forbid - set(reasons.KEYS)
    if unknown:
        print(f"--forbid-reasons: unknown reason(s) {sorted(unknown)}; known: {reasons.KEYS}",
              file=sys.stderr)
        return 2
    cases_dir = os.path.abspath(args.cases_dir)
    wall = meta["wall_seconds"] or 0
    order = {k: i for i, k in enumerate(OUTCOMES)}
    counts = collections.Counter(outcome_key(r) for r in results)
    outcome_totals = collections.Counter(r["outcome"] for r in results)
    reason_counts = collections.Counter(r["reason"] for r in results if r["outcome"] == "refused")
    groups = {}
    for r in results:
        g = r.get("graphsub", {})
        if g.get("status") != "refused":
            continue
        tpl = reasons.template(g["message"], os.path.join(cases_dir, r["name"], "model.onnx"))
        e = groups.setdefault((g["reason"], tpl), {"reason": g["reason"], "template": tpl,
                                                    "count": 0, "cases": [],
                                                    "counted_as_refused": 0})
        e["count"] += 1
        e["counted_as_refused"] += r["outcome"] == "refused"
        e["cases"].append(r["name"])
        v = reasons.variant(g["message"], os.path.join(cases_dir, r["name"], "model.onnx"))
        e.setdefault("variants", collections.Counter())[v] += 1
    for e in groups.values():
        e["variants"] = dict(e["variants"].most_common())
    summary = {
        **meta,
        "cases": len(results),
        "by_source": dict(collections.Counter(r.get("source") or "?" for r in results)),
        "counts": {k: counts[k] for k in sorted(
            counts, key=lambda k: (order.get(k.split(":")[0], 99), -counts[k], k))},
        "outcomes": {k: outcome_totals[k] for k in OUTCOMES if outcome_totals[k]},
        "refusal_reasons": dict(reason_counts.most_common()),
        "refusal_messages": sorted(groups.values(), key=lambda g: (-g["count"], g["template"])),
        "forbidden_reasons": sorted(forbid),
    }
    failing = [r for r in results if r["outcome"] in FAILING]
    forbidden = [r for r in results if r["outcome"] == "refused" and r["reason"] in forbid]
    summary["failed"] = bool(failing or forbidden)
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump({"summary": summary, "results": results}, f, indent=1)
            f.write("\n")
    if args.markdown:
        write_markdown(args.markdown, summary, results)

    print(f"\nconformance: {len(results)} cases in {wall:.0f} s ({summary['graphsub']})")
    for k, v in summary["counts"].items():
        print(f"  {k:<32} {v}")
    if failing:
        print(f"FAILED: {len(failing)} wrong/crash/timeout: "
              + ", ".join(r["name"] for r in failing[:20]) + (" ..." if len(failing) > 20 else ""))
    if forbidden:
        print(f"FAILED: {len(forbidden)} refusals in forbidden reasons {sorted(forbid)}: "
              + ", ".join(r["name"] for r in forbidden[:20]) + (" ..." if len(forbidden) > 20 else ""))
    return 1 if summary["failed"] else 0


if __name__ == "__main__":
    if len(sys.argv) == 2 and sys.argv[1] == "--ort-worker":
        ort_worker_main()
    else:
        sys.exit(main())
