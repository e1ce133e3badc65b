#!/usr/bin/env python3
"""ONNX Runtime sweep: original against graphsub-optimized models where users run them.

Usage: .venv/bin/python bench/ort_sweep.py [--out DIR] [--runs N] [--threads T] [--cold]
                                           [--correlation] [--flags "OPTIMIZE FLAGS"] [MODEL ...]
Models: tv:NAME (a torchvision classifier exported by tools/export_torchvision.py at opset 13,
random weights), builtin:NAME (a built-in model written by `graphsub export-onnx`), or a path
to an .onnx file. Default: the four torchvision models of the tests and the 8 built-ins.

Per model: `graphsub optimize orig.onnx -o opt.onnx` (its wall time is "graphsub s"), then
one ONNX Runtime worker (tools/ort_worker.js, graph optimizations "all", T intra-op threads,
default 1) loads the original twice (A and A', the noise control) and the written model (B)
and times all three in rotation, run by run, N runs each (medians). ONNX node counts come
from the files; "headroom" is the share of the original's ONNX Runtime kernel time (per-node
profiling) spent outside the compute kernels (Conv, MatMul, Gemm and ONNX Runtime's fused
forms of them), i.e. the most that removing, merging or fusing the other operators could
save; "taken" is the share of that headroom the written model saved (1 - written/original,
over headroom). "guard wrote" is what the end-to-end guard chose (the search's pick, a
runner-up, or the original written back); the last column compares the kernels ONNX Runtime
runs for the original and for the written model (per-node profiles, by op type), which shows
the runtime's fusions (FusedConv, FusedMatMul, LayerNormalization, ...) a rewrite gained or
broke.

--cold: first optimize each model with an empty cost table (its own --cache-dir under OUT:
every operator configuration is measured in ONNX Runtime; "cold s"), then again with that
table warm (the run whose file is timed; "warm s"); search and guard seconds come from the
warm run's --report-json.
--correlation: the warm run also writes sampled candidate graphs (--dump-candidates: the
original, graphs along the search's path, its finalists, random rewrites of the original)
with their predicted latency; each is timed end to end in the same worker (rotated, medians)
and the Spearman rank correlation of predicted against measured latency is printed per model
and over all models' samples together, with the median relative error.
Prints a Markdown table and the geometric-mean speedup.
Needs a Release build (BUILD_DIR, default build), node with onnxruntime-node (npm ci) and
the project's virtual environment (scripts/setup.sh: onnx, torch and torchvision from PyPI),
whose Python runs it (.venv/bin/python bench/ort_sweep.py ...).
"""
import argparse
import collections
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time

import onnx

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_MODELS = ["tv:resnet50", "tv:resnext50_32x4d", "tv:squeezenet1_1", "tv:inception_v3",
                  "builtin:resnet50", "builtin:resnext50", "builtin:nasnet_a", "builtin:nasrnn",
                  "builtin:bert", "builtin:inception_v3", "builtin:squeezenet", "builtin:vgg19"]
# ONNX Runtime kernels that do the arithmetic a rewrite cannot remove (their fused forms too).
COMPUTE_OPS = {"Conv", "FusedConv", "NchwcConv", "MatMul", "FusedMatMul", "Gemm", "FusedGemm",
               "QLinearConv", "MatMulInteger", "Attention", "MultiHeadAttention"}


# The version of docs/ort-worker.md this client speaks (tools/ort_worker.js's PROTOCOL).
WORKER_PROTOCOL = 1


class Worker:
    """An ONNX Runtime worker over a pipe (the ones the C++ side drives): runtime "node" is
    tools/ort_worker.js (npm's onnxruntime-node), "python" tools/ort_worker.py under this
    interpreter (PyPI's onnxruntime)."""

    def __init__(self, runtime="node"):
        script = os.path.join(ROOT, "tools", "ort_worker.js" if runtime == "node" else "ort_worker.py")
        command = ["node", script] if runtime == "node" else [sys.executable, script]
        self.p = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        hello = self.call(op="hello")
        if hello.get("protocol") != WORKER_PROTOCOL:
            raise RuntimeError(f"{script} speaks worker protocol {hello.get('protocol')}, "
                               f"this script {WORKER_PROTOCOL} (docs/ort-worker.md)")
        self.version = hello["ort"]

    def call(self, **req):
        self.p.stdin.write(json.dumps(req) + "\n")
        self.p.stdin.flush()
        reply = json.loads(self.p.stdout.readline())
        if not reply.get("ok"):
            raise RuntimeError(reply.get("error", "ONNX Runtime worker failed"))
        return reply

    def close(self):
        self.p.stdin.write(json.dumps({"op": "quit"}) + "\n")
        self.p.stdin.close()
        self.p.wait()


def original_file(model, out, graphsub):
    kind, _, name = model.partition(":")
    if kind == "tv":
        d = os.path.join(out, "torchvision")
        res = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "export_torchvision.py"),
                              d, name], check=True, capture_output=True, text=True)
        return res.stdout.strip().splitlines()[-1], f"torchvision {name}"
    if kind == "builtin":
        d = os.path.join(out, "builtin")
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, f"{name}.onnx")
        if not os.path.exists(path):
            subprocess.run([graphsub, "-q", "export-onnx", "--model", name, "-o", path], check=True)
        return path, f"built-in {name}"
    return model, os.path.basename(model)


def op_counts(path):
    m = onnx.load(path, load_external_data=False)
    return collections.Counter(n.op_type for n in m.graph.node)


def ranks(v):
    order = sorted(range(len(v)), key=lambda i: v[i])
    r = [0.0] * len(v)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2.0
        i = j + 1
    return r


def spearman(a, b):
    """Spearman rank correlation (average ranks for ties); None below 3 samples or no spread."""
    if len(a) < 3:
        return None
    ra, rb = ranks(a), ranks(b)
    ma, mb = statistics.mean(ra), statistics.mean(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = sum((x - ma) ** 2 for x in ra)
    vb = sum((y - mb) ** 2 for y in rb)
    return cov / math.sqrt(va * vb) if va > 0 and vb > 0 else None


def time_models(worker, paths, runs, threads):
    """Median ms of each path, all loaded in one worker and timed rotated run by run."""
    ids = [f"m{i}" for i in range(len(paths))]
    for id_, path in zip(ids, paths):
        worker.call(op="load", id=id_, path=path, threads=threads)
    ms = worker.call(op="time", ids=ids, runs=runs, warmup=2)["ms"]
    for id_ in ids:
        worker.call(op="unload", id=id_)
    return [statistics.median(ms[i]) for i in ids]


def sample_correlation(worker, dump_dir, runs, threads):
    """(predicted, measured) ms of every candidate graph graphsub dumped. Each is timed
    alternated with the first (the original), two models at a time, so that a sweep of large
    models holds two of them in memory, not a dozen; its time is its own median scaled by
    the original's overall median over its median in that pairing (the load of the moment
    cancels)."""
    with open(os.path.join(dump_dir, "candidates.json")) as f:
        cands = json.load(f)
    paths = [os.path.join(dump_dir, c["file"]) for c in cands]
    pairs = [time_models(worker, [paths[0], p], runs, threads) for p in paths[1:]]
    base = (statistics.median([a for a, _ in pairs]) if pairs
            else time_models(worker, paths[:1], runs, threads)[0])
    measured = [base] + [b * base / a for a, b in pairs]
    return [c["predicted_ms"] for c in cands], measured


def profile(worker, path, threads):
    """ONNX Runtime's per-node profile of one model: kernel ms and kernel counts by op type,
    i.e. what the runtime fused the graph into."""
    worker.call(op="load", id="P", path=path, threads=threads, profile=True)
    worker.call(op="time", ids=["P"], runs=3, warmup=0)
    prof = worker.call(op="profile", id="P", runs=5)
    worker.call(op="unload", id="P")
    return prof


def guard_choice(guard):
    """What the end-to-end guard wrote, from the report's timings.guard."""
    if not guard:
        return "no guard"
    if guard.get("written") == "original":
        return "original"
    n = guard.get("written_candidate", 0)
    return "search's pick" if n == 0 else f"runner-up {n}"


def run_optimize(graphsub, orig, opt, log, flags):
    t0 = time.monotonic()
    with open(log, "w") as f:
        res = subprocess.run([graphsub, "optimize", orig, "-o", opt] + flags,
                             stdout=f, stderr=subprocess.STDOUT)
    return res.returncode, time.monotonic() - t0


def counts_change(a, b):
    changed = [f"{op} {a.get(op, 0)}->{b.get(op, 0)}" for op in sorted(set(a) | set(b))
               if a.get(op, 0) != b.get(op, 0)]
    return ", ".join(changed) if changed else "unchanged"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("models", nargs="*", default=DEFAULT_MODELS)
    p.add_argument("--out", default=os.path.join(ROOT, "build", "ort_sweep"))
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--flags", default="")
    p.add_argument("--cold", action="store_true", help="time a cold-table run first")
    p.add_argument("--correlation", action="store_true",
                   help="time sampled candidate graphs against their predicted latency")
    p.add_argument("--sample-runs", type=int, default=5,
                   help="--correlation: timed runs of each sampled graph and the original")
    a = p.parse_args()
    graphsub = os.path.join(ROOT, os.environ.get("BUILD_DIR", "build"), "graphsub")
    if not os.access(graphsub, os.X_OK):
        sys.exit(f"ort_sweep: {graphsub} is not built")
    os.makedirs(os.path.join(a.out, "opt"), exist_ok=True)
    worker = Worker()
    rows, speedups, taken, ceilings = [], [], [], []
    all_pred, all_meas, corr_rows = [], [], []
    for model in a.models:
        orig, label = original_file(model, a.out, graphsub)
        # tv:NAME and builtin:NAME are told apart by their kind; a path by its file name.
        kind, colon, _ = model.partition(":")
        base = os.path.splitext(os.path.basename(orig))[0] + ("." + kind if colon else "")
        opt = os.path.join(a.out, "opt", base + ".opt.onnx")
        log = os.path.join(a.out, "opt", base + ".log")
        report = os.path.join(a.out, "opt", base + ".report.json")
        flags = a.flags.split() + ["--report-json", report]
        cold = None
        if a.cold:
            cache = os.path.join(a.out, "cache", base)
            shutil.rmtree(cache, ignore_errors=True)
            flags += ["--cache-dir", cache]
            rc, cold = run_optimize(graphsub, orig, opt, log + ".cold", flags)
            if rc != 0:
                cold = None
        dump = os.path.join(a.out, "candidates", base)
        if a.correlation:
            shutil.rmtree(dump, ignore_errors=True)
            flags += ["--dump-candidates", dump]
        rc, secs = run_optimize(graphsub, orig, opt, log, flags)
        if rc != 0:
            print(f"ort_sweep: optimizing {label} failed; see {log}", file=sys.stderr)
            rows.append(f"| {label} | optimize failed (exit {rc}) |" + " |" * 11)
            continue
        with open(report) as f:
            timings = json.load(f).get("timings", {})
        written = guard_choice(timings.get("guard"))
        search_guard = timings.get("search_s", 0) + sum(
            v for k, v in timings.items() if k.startswith("guard") and isinstance(v, float))
        for id_, path in (("A", orig), ("A2", orig), ("B", opt)):
            worker.call(op="load", id=id_, path=path, threads=a.threads)
        ms = worker.call(op="time", ids=["A", "A2", "B"], runs=a.runs, warmup=2)["ms"]
        med = {k: statistics.median(v) for k, v in ms.items()}
        for id_ in ("A", "A2", "B"):
            worker.call(op="unload", id=id_)
        prof, prof_opt = (profile(worker, path, a.threads) for path in (orig, opt))
        total = prof["total_ms"] or 1.0
        headroom = sum(v for k, v in prof["by_op"].items() if k not in COMPUTE_OPS) / total
        orig_ms = statistics.median(ms["A"] + ms["A2"])
        speedup = orig_ms / med["B"]
        control = med["A2"] / med["A"]
        speedups.append(speedup)
        share = (1 - 1 / speedup) / headroom if headroom > 0 else float("nan")
        # A change inside the A/A band (at least 5%, and at least 0.05 ms: one call's jitter
        # through Node.js, the guard's floors) is not a measured share of anything.
        in_noise = (abs(speedup - 1) <= max(abs(control - 1), 0.05)
                    or abs(orig_ms - med["B"]) <= 0.05)
        taken.append(share)
        ceilings.append(1 / max(1 - headroom, 1e-6))
        ca, cb = op_counts(orig), op_counts(opt)
        cold_s = f"{cold:.1f}" if cold is not None else "-"
        rows.append(f"| {label} | {sum(ca.values())} -> {sum(cb.values())} ({counts_change(ca, cb)}) | "
                    f"{cold_s} | {secs:.1f} | {search_guard:.1f} | {orig_ms:.2f} | {med['B']:.2f} | "
                    f"{speedup:.3f}x | {control:.3f}x | {100 * headroom:.1f}% | "
                    f"{'in noise' if in_noise else f'{100 * share:.0f}%'} | {written} | "
                    f"{counts_change(prof['counts'], prof_opt['counts'])} |")
        print(rows[-1], file=sys.stderr, flush=True)
        if a.correlation and os.path.exists(os.path.join(dump, "candidates.json")):
            pred, meas = sample_correlation(worker, dump, a.sample_runs, a.threads)
            shutil.rmtree(dump, ignore_errors=True)  # large models dump gigabytes
            all_pred += pred
            all_meas += meas
            rho = spearman(pred, meas)
            err = statistics.median(abs(p - m) / m for p, m in zip(pred, meas))
            corr_rows.append(f"| {label} | {len(pred)} | {min(meas):.2f}-{max(meas):.2f} | "
                             f"{min(pred):.2f}-{max(pred):.2f} | "
                             f"{'n/a' if rho is None else f'{rho:+.2f}'} | {100 * err:.0f}% |")
            print(corr_rows[-1], file=sys.stderr, flush=True)
    worker.close()
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")),
               platform.processor())
    print(f"\nONNX Runtime {worker.version}, graph optimizations all, {a.threads} intra-op thread(s), "
          f"median of {a.runs} runs rotated A A' B; {time.strftime('%Y-%m-%d', time.gmtime())}, {cpu}, "
          f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}\n")
    print("| model | ONNX nodes (changed op types) | cold s | warm s | search+guard s | original ms "
          "| written ms | speedup | A/A control | headroom | taken | guard wrote | ONNX Runtime kernels "
          "(changed op types) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    if speedups:
        g = math.exp(sum(math.log(s) for s in speedups) / len(speedups))
        print(f"\ngeometric-mean speedup over {len(speedups)} models: {g:.3f}x")
        c = math.exp(sum(math.log(x) for x in ceilings) / len(ceilings))
        print(f"geometric mean of the ceilings 1/(1 - headroom) (every model's headroom taken "
              f"whole): {c:.3f}x")
    if corr_rows:
        print("\nPredicted against measured end-to-end latency of sampled candidate graphs:\n")
        print("| model | samples | measured ms | predicted ms | rank corr. | median error |")
        print("|---|---|---|---|---|---|")
        print("\n".join(corr_rows))
        rho = spearman(all_pred, all_meas)
        err = statistics.median(abs(p - m) / m for p, m in zip(all_pred, all_meas))
        print(f"\nover all {len(all_pred)} samples: rank correlation "
              f"{'n/a' if rho is None else f'{rho:+.3f}'}, median relative error {100 * err:.0f}%")


if __name__ == "__main__":
    main()
