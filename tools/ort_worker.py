#!/usr/bin/env python3
"""The ONNX Runtime worker of docs/ort-worker.md (protocol 1) over the Python package
`onnxruntime`: the release a user installs from PyPI, where tools/ort_worker.js runs npm's
onnxruntime-node (on npm the newest release is often behind PyPI's). graphsub's C++ client
(src/ort/ort_worker.cpp) drives either the same way: one JSON request per line on stdin, one
JSON reply per line on stdout, sessions kept loaded between requests.

Inputs are drawn with the JavaScript worker's seeded generator (tools/ort_common.js), so the
two workers feed a model the same values."""

import json
import math
import os
import shutil
import sys
import tempfile
import time

PROTOCOL = 1

try:
    import numpy as np
    import onnxruntime as ort
except ImportError as e:  # the client reports this line and falls back
    sys.stderr.write(f"ort_worker.py: {e} (the Python package onnxruntime is needed)\n")
    sys.exit(2)
# OpenVINO's telemetry sends from a thread through a forked process; forked from a threaded
# process, the copies wait forever on a lock, holding the client's stderr open (graphsub's
# tests waited on them). OpenVINO runs without it when the package cannot be imported.
sys.modules["openvino_telemetry"] = None
try:  # the second runtime the latency guard checks a rewrite in, where installed
    import openvino as ov
except ImportError:
    ov = None


class Rng:
    """SplitMix32-style generator of tools/ort_common.js's makeRng, bit for bit."""

    BLOCK = 1 << 20

    def __init__(self, seed):
        self.s = ((seed & 0xFFFFFFFF) ^ 0x9E3779B9) & 0xFFFFFFFF

    def next(self):
        self.s = (self.s + 0x6D2B79F5) & 0xFFFFFFFF
        z = self.s
        z = ((z ^ (z >> 15)) * (z | 1)) & 0xFFFFFFFF
        z ^= (z + (((z ^ (z >> 7)) * (z | 61)) & 0xFFFFFFFF)) & 0xFFFFFFFF
        return ((z ^ (z >> 14)) & 0xFFFFFFFF) / 4294967296.0

    def uniform(self, n):
        """The next n values of next(), bit for bit, computed with numpy: draw k's state is
        the seed's plus k times the step, so a whole block is mixed at once (one value at a
        time in Python took 36 s for a [2, 8, 1500, 1500] input of Whisper's encoder)."""
        out = np.empty(n, dtype=np.float64)
        mask, step = np.uint64(0xFFFFFFFF), np.uint64(0x6D2B79F5)
        for at in range(0, n, self.BLOCK):  # blocks bound the temporaries' memory
            k = np.arange(1, min(self.BLOCK, n - at) + 1, dtype=np.uint64)
            z = (np.uint64(self.s) + k * step) & mask
            self.s = int(z[-1])
            z = ((z ^ (z >> np.uint64(15))) * (z | np.uint64(1))) & mask
            z ^= (z + (((z ^ (z >> np.uint64(7))) * (z | np.uint64(61))) & mask)) & mask
            out[at:at + k.size] = ((z ^ (z >> np.uint64(14))) & mask) / 4294967296.0
        return out


TYPES = {"tensor(float)": "float32", "tensor(float16)": "float16", "tensor(bfloat16)": "bfloat16",
         "tensor(double)": "float64", "tensor(int64)": "int64", "tensor(int32)": "int32",
         "tensor(bool)": "bool"}


def meta_of(arg):
    return {"name": arg.name, "type": TYPES.get(arg.type, arg.type),
            "shape": [d if isinstance(d, int) else (d if d else "?") for d in arg.shape]}


def concrete_shape(meta, dim, dims):
    out = []
    for d in meta["shape"]:
        if isinstance(d, int) and d >= 0:
            out.append(d)
        elif dims and isinstance(d, str) and d in dims:
            out.append(int(dims[d]))
        else:
            out.append(dim)
    return out


def random_tensor(meta, dim, rng, dims, int_high=8):
    shape = concrete_shape(meta, dim, dims)
    n = int(np.prod(shape)) if shape else 1
    t = meta["type"]
    if t in ("float32", "float16", "float64"):
        return (2 * rng.uniform(n) - 1).astype(t).reshape(shape)
    if t in ("int64", "int32"):
        return np.floor(rng.uniform(n) * int_high).astype(t).reshape(shape)
    if t == "bool":
        return (rng.uniform(n) < 0.5).reshape(shape)
    raise ValueError(f"input '{meta['name']}': random values of type {t} are not supported")


def compare_output(a, b, rtol, atol):
    """graphsub's tolerance (src/exec): |a - b| <= atol * max(1, max |b|) + rtol |b|; a shape
    mismatch or a non-finite value that differs is an infinite difference."""
    r = {"max_abs_diff": 0.0, "max_rel_diff": 0.0, "max_abs_value": 0.0, "match": True}
    if a.shape != b.shape:
        r.update(match=False, max_abs_diff=math.inf, max_rel_diff=math.inf,
                 note=f"shape {list(a.shape)} vs original {list(b.shape)}")
        return r
    x, y = a.astype(np.float64).ravel(), b.astype(np.float64).ravel()
    fin = np.isfinite(x) & np.isfinite(y)
    if np.isfinite(y).any():
        r["max_abs_value"] = float(np.abs(y[np.isfinite(y)]).max())
    same_nonfinite = (np.isnan(x) & np.isnan(y)) | (x == y)
    if not np.all(fin | same_nonfinite):
        r.update(match=False, max_abs_diff=math.inf)
    diff = np.abs(x[fin] - y[fin])
    if diff.size:
        scale = np.maximum(np.abs(x[fin]), np.abs(y[fin]))
        r["max_abs_diff"] = max(r["max_abs_diff"], float(diff.max()))
        rel = diff[scale > 0] / scale[scale > 0]
        r["max_rel_diff"] = float(rel.max()) if rel.size else 0.0
        tol = atol * max(1.0, r["max_abs_value"]) + rtol * np.abs(y[fin])
        if not np.all(diff <= tol):
            r["match"] = False
    return r


class OpenVinoSession:
    """A model compiled by OpenVINO for the CPU at the shapes of `feeds`, run like an ONNX
    Runtime session: run(None, feeds) returns the outputs in order."""

    def __init__(self, path, feeds, threads):
        core = ov.Core()
        model = core.read_model(path)
        model.reshape({i.get_any_name(): list(feeds[i.get_any_name()].shape)
                       for i in model.inputs})
        config = {"INFERENCE_PRECISION_HINT": "f32"}
        if threads > 0:
            config["INFERENCE_NUM_THREADS"] = threads
        self.compiled = core.compile_model(model, "CPU", config)
        self.request = self.compiled.create_infer_request()

    def run(self, names, feeds):
        results = self.request.infer(feeds)
        return [results[o] for o in self.compiled.outputs]


class Worker:
    def __init__(self):
        self.sessions = {}

    def load(self, req):
        if req.get("runtime", "onnxruntime") == "openvino":
            return self.load_openvino(req)
        if req.get("runtime", "onnxruntime") != "onnxruntime":
            raise RuntimeError(f"unknown runtime '{req['runtime']}'")
        return self.load_ort(req)

    def load_openvino(self, req):
        """The model in OpenVINO with the feeds ONNX Runtime would get: its inputs are read
        by an unoptimized ONNX Runtime session, dropped once the feeds are drawn."""
        if ov is None:
            raise RuntimeError("OpenVINO is not installed beside this worker")
        entry = self.load_ort({**req, "threads": 1, "profile": False, "optimized": None,
                               "level": "disabled"})
        e = self.sessions[req["id"]]
        try:
            e["session"] = OpenVinoSession(req["path"], e["feeds"], req.get("threads", 0))
        except Exception as ex:
            self.sessions.pop(req["id"], None)
            raise RuntimeError(f"OpenVINO cannot load '{req['path']}': {ex}") from None
        return entry

    def load_ort(self, req):
        so = ort.SessionOptions()
        so.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_DISABLE_ALL
                                       if req.get("level") == "disabled"
                                       else ort.GraphOptimizationLevel.ORT_ENABLE_ALL)
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        # Fatal messages only: every failure comes back to the client as an error reply, and
        # the runtime's own log lines (a reference input that cannot run at some dimensions,
        # the warning that a saved NCHWc graph is specific to this CPU) would reach
        # graphsub's terminal even with --quiet.
        so.log_severity_level = 4
        so.inter_op_num_threads = 1
        if req.get("threads", 0) > 0:
            so.intra_op_num_threads = req["threads"]
        profile_dir = None
        if req.get("profile"):
            profile_dir = tempfile.mkdtemp(prefix="graphsub-ort-profile-")
            so.enable_profiling = True
            so.profile_file_prefix = os.path.join(profile_dir, "profile")
        if req.get("optimized"):
            so.optimized_model_filepath = req["optimized"]
        try:
            session = ort.InferenceSession(req["path"], so, providers=["CPUExecutionProvider"])
        except Exception as e:
            raise RuntimeError(f"ONNX Runtime cannot load '{req['path']}': {e}") from None
        entry = {"session": session, "dim": req.get("dim") or 1, "dims": req.get("dims"),
                 "profile_dir": profile_dir,
                 "inputs": [meta_of(i) for i in session.get_inputs()],
                 "outputs": [meta_of(o) for o in session.get_outputs()]}
        entry["feeds"], entry["int_high"] = self.runnable_feeds(entry, req.get("seed") or 1)
        self.sessions[req["id"]] = entry
        return {"inputs": entry["inputs"], "outputs": entry["outputs"]}

    def draw(self, entry, seed, int_high):
        rng = Rng(seed)
        return {m["name"]: random_tensor(m, entry["dim"], rng, entry["dims"], int_high)
                for m in entry["inputs"]}

    def runnable_feeds(self, entry, seed):
        """Integer inputs in [0, 8), else [0, 2), else 0, where the model refuses them as
        indices (tools/ort_worker.js's rule)."""
        if not any(m["type"] in ("int64", "int32") for m in entry["inputs"]):
            return self.draw(entry, seed, 8), 8
        for high in (8, 2, 1):
            feeds = self.draw(entry, seed, high)
            try:
                entry["session"].run(None, feeds)
                return feeds, high
            except Exception as e:
                text = str(e).lower()
                if not any(w in text for w in ("indices", "index", "bounds")):
                    break
        return self.draw(entry, seed, 8), 8

    def get(self, id_):
        if id_ not in self.sessions:
            raise RuntimeError(f"no model loaded as '{id_}'")
        return self.sessions[id_]

    def time(self, req):
        ids = req["ids"]
        entries = [self.get(i) for i in ids]
        for _ in range(req.get("warmup") or 0):
            for e in entries:
                e["session"].run(None, e["feeds"])
        ms = {i: [] for i in ids}
        for r in range(req["runs"]):
            order = [ids[(k + r) % len(ids)] for k in range(len(ids))]
            if r % 2:
                order.reverse()
            for i in order:
                e = self.sessions[i]
                t0 = time.perf_counter_ns()
                e["session"].run(None, e["feeds"])
                ms[i].append((time.perf_counter_ns() - t0) / 1e6)
        return {"ms": ms}

    def profile(self, req):
        e = self.get(req["id"])
        if not e["profile_dir"]:
            raise RuntimeError(f"model '{req['id']}' was loaded without profiling")
        for _ in range(req["runs"]):
            e["session"].run(None, e["feeds"])
        path = e["session"].end_profiling()
        with open(path) as f:
            events = json.load(f)
        shutil.rmtree(e["profile_dir"], ignore_errors=True)
        e["profile_dir"] = None
        per_node = {}
        for ev in events:
            args = ev.get("args") or {}
            if ev.get("cat") != "Node" or "op_name" not in args or \
                    not ev.get("name", "").endswith("_kernel_time"):
                continue
            per_node.setdefault(ev["name"], (args["op_name"], []))[1].append(ev["dur"])
        by_op, counts, total = {}, {}, 0.0
        for op, us in per_node.values():
            v = float(np.median(us)) / 1000
            by_op[op] = by_op.get(op, 0.0) + v
            counts[op] = counts.get(op, 0) + 1
            total += v
        return {"by_op": by_op, "counts": counts, "total_ms": total, "kernels": len(per_node)}

    def compare(self, req):
        ref, cand = (self.get(i) for i in req["ids"])
        names = [o["name"] for o in ref["outputs"]]
        cand_names = {o["name"] for o in cand["outputs"]}
        missing = [n for n in names if n not in cand_names]
        if missing:
            raise RuntimeError(f"the candidate lacks output(s) {', '.join(missing)}")
        acc = {n: {"name": n, "max_abs_diff": 0.0, "max_rel_diff": 0.0, "max_abs_value": 0.0,
                   "match": True} for n in names}
        rng = Rng(req.get("seed") or 1)
        for _ in range(req.get("sets") or 1):
            feeds = {m["name"]: random_tensor(m, ref["dim"], rng, ref["dims"], ref["int_high"])
                     for m in ref["inputs"]}
            try:  # the reference first: where it cannot run, nothing is compared
                b = dict(zip(names, ref["session"].run(names, feeds)))
            except Exception as e:  # noqa: BLE001  ONNX Runtime's errors have no common type
                return {"match": False, "outputs": [], "reference_error": str(e)}
            a = dict(zip(names, cand["session"].run(names, feeds)))
            for n in names:
                c = compare_output(np.asarray(a[n]), np.asarray(b[n]), req.get("rtol", 0),
                                   req.get("atol", 0))
                o = acc[n]
                for k in ("max_abs_diff", "max_rel_diff", "max_abs_value"):
                    o[k] = max(o[k], c[k])
                o["match"] = o["match"] and c["match"]
                if "note" in c:
                    o["note"] = c["note"]
        outputs = list(acc.values())
        for o in outputs:  # JSON has no infinity: a shape mismatch reports -1
            for k in ("max_abs_diff", "max_rel_diff"):
                if not math.isfinite(o[k]):
                    o[k] = -1
        return {"match": all(o["match"] for o in outputs), "outputs": outputs}

    def handle(self, req):
        op = req.get("op")
        if op == "hello":
            return {"protocol": PROTOCOL, "ort": ort.__version__,
                    "python": sys.version.split()[0],
                    "openvino": ov.__version__.split("-")[0] if ov else ""}
        if op == "load":
            return self.load(req)
        if op == "time":
            return self.time(req)
        if op == "profile":
            return self.profile(req)
        if op == "compare":
            return self.compare(req)
        if op == "unload":
            self.sessions.pop(req["id"], None)
            return {}
        raise RuntimeError(f"unknown request '{op}'")


def main():
    worker = Worker()
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
            if req.get("op") == "quit":
                break
            reply = {"ok": True, **worker.handle(req)}
        except Exception as e:  # every failure is a reply; the worker keeps serving
            reply = {"ok": False, "error": str(e)}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
