#!/usr/bin/env python3
"""A second, closer look at the peer sweep's verdicts that are not "in noise".

run_peers.py times every tool's file once, each in one session held beside the others (in
groups where a model of gigabytes does not let them all be held). A session's speed depends on
where its memory landed as well as on its file: on hf-mpnet the sweep read graphsub's file,
which was the input byte for byte, at 1.032x the input's two sessions, and ORT's extended
file, which ONNX Runtime turns into the very same graph, at 1.104x. One A/A pair cannot bound
that. So every model where graphsub is read faster or slower than the fastest peer beyond the
band, or slower than its original beyond the band, is looked at again here:

- graphsub and that peer are run again on the model (their files of the sweep are gone);
- the graph ONNX Runtime runs for each file is fingerprinted (executed_graph.py): two files
  that run as the same graph cannot differ in speed but by noise;
- the original, graphsub's file and the peer's are timed in ROUNDS rounds, each with fresh
  sessions created in a rotated order and RUNS runs alternated as in the sweep; the speedup
  is the median over rounds of each round's ratio of medians.

The result is kept in the row (`confirm`), and run_peers.versus_best_peer reads it before the
first reading. Only rows of the runtime in question (ORT at 1 thread, where the goal is set,
or the runtime where graphsub's file was read slower) are timed again.

    confirm.py ZOO/manifest.json [MORE/manifest.json] --out SWEEP_OUT [--rounds 5] [--runs 10]
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import executed_graph  # noqa: E402
import run_peers  # noqa: E402
from run_peers import check_zoo  # noqa: E402

LABELS = ("ort_1", "ort_all", "openvino")


def to_confirm(row: dict, tools: list[str]) -> list[tuple[str, str | None]]:
    """(runtime label, peer or None) for each first reading of this row that is not in noise:
    graphsub against the fastest peer at 1 thread, graphsub against its original anywhere."""
    todo = []
    first = run_peers.first_reading_verdict(row, tools)
    if first["word"] in ("faster", "slower"):
        todo.append(("ort_1", first["peer"]))
    for label in LABELS:
        t = row.get("timings", {}).get(label, {})
        sp = t.get("speedup", {}).get("graphsub")
        if sp is not None and sp < 1 - run_peers.noise_band(t) and (label, None) not in todo:
            if not (label == "ort_1" and todo):  # the 1-thread rounds time the original too
                todo.append((label, None))
    return todo


def time_rounds(label: str, paths: list[str], feeds: dict, rounds: int, runs: int) -> list:
    """Per round, each file's median in ms; round r creates its sessions starting at file r."""
    per_round = []
    n = len(paths)
    for r in range(rounds):
        order = [(i + r) % n for i in range(n)]
        if r % 2:
            order.reverse()
        ordered = [paths[i] for i in order]
        if label == "openvino":
            med, _ = run_peers.time_openvino(ordered, feeds, runs)
        else:
            threads = 1 if label == "ort_1" else (os.cpu_count() or 1)
            med = run_peers.time_ort(ordered, feeds, threads, runs)
        back = [None] * n
        for i, m in zip(order, med):
            back[i] = m
        per_round.append(back)
    return per_round


def confirm_row(row: dict, entry: dict, zoo_dir: str, args) -> dict:
    """The `confirm` block for one row: per runtime checked, the files' fingerprints and
    speedups over rounds."""
    src = os.path.join(zoo_dir, entry["file"])
    feeds = check_zoo.make_inputs(entry["inputs"], entry["dims"], entry["input_seed"], 0)
    out = {"rounds": args.rounds, "runs": args.runs, "checks": {}}
    files: dict[str, str] = {}

    def tool_file(tool: str) -> str | None:
        if tool in files:
            return files[tool]
        dst = os.path.join(args.out, f"{entry['name']}.confirm.{tool}.onnx")
        cmd = run_peers.tool_command(tool, src, dst, entry, args.graphsub)
        r = run_peers.run_tool(cmd, dst, args.timeout) if cmd else {"ok": False}
        if not r["ok"] or not run_peers.outputs_match(src, dst, entry)["ok"]:
            out.setdefault("errors", {})[tool] = r.get("error", "wrong outputs")[:500]
            return None
        out.setdefault("nodes", {})[tool] = run_peers.node_count(dst)
        files[tool] = dst
        return dst

    try:
        for label, peer in to_confirm(row, args.tools):
            names = ["graphsub"] + ([peer] if peer else [])
            paths = [tool_file(t) for t in names]
            if None in paths:
                continue
            prints = {t: executed_graph.executed_fingerprint(p)[0]
                      for t, p in [("original", src), *zip(names, paths)]}
            rounds = time_rounds(label, [src, *paths], feeds, args.rounds, args.runs)
            speedups = {t: float(np.median([r[0] / r[k + 1] for r in rounds]))
                        for k, t in enumerate(names)}
            out["checks"][label] = {
                "peer": peer, "executed": prints, "speedup": speedups,
                "per_round": {t: [round(r[0] / r[k + 1], 4) for r in rounds]
                              for k, t in enumerate(names)},
                "original_ms": float(np.median([r[0] for r in rounds]))}
    finally:
        for path in files.values():
            if os.path.exists(path):
                os.remove(path)
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("manifest", nargs="+", help="the sweep's manifests (run_peers.py's)")
    p.add_argument("--out", required=True, help="the sweep's output folder (its rows/ is read "
                                                "and each confirmed row is written back)")
    p.add_argument("--graphsub", default=run_peers.venv_command("graphsub"))
    p.add_argument("--only", action="append", help="entry name glob (repeatable)")
    p.add_argument("--rounds", type=int, default=5, help="rounds of fresh sessions")
    p.add_argument("--runs", type=int, default=10, help="alternated runs per file and round")
    p.add_argument("--timeout", type=float, default=600, help="seconds per tool run")
    p.add_argument("--again", action="store_true", help="confirm rows confirmed before too")
    args = p.parse_args(argv)
    if args.rounds < 1 or args.runs < 1:
        p.error("--rounds and --runs must be at least 1")
    args.tools = run_peers.TOOLS
    done = 0
    for path in args.manifest:
        manifest, zoo_dir = check_zoo.load_manifest(path, args.out)
        for e in manifest["entries"]:
            if e.get("status") != "ok" or (args.only and not any(
                    fnmatch.fnmatch(e["name"], g) for g in args.only)):
                continue
            rp = run_peers.row_path(args.out, e)
            if not os.path.exists(rp):
                continue
            with open(rp) as f:
                row = json.load(f)
            if (row.get("confirm") and not args.again) or not to_confirm(row, args.tools):
                continue
            print(f"confirming {e['name']}: "
                  + ", ".join(f"{lb} ({pr or 'original'})" for lb, pr in
                              to_confirm(row, args.tools)), file=sys.stderr, flush=True)
            row["confirm"] = confirm_row(row, e, zoo_dir, args)
            check_zoo.write_atomic(rp, json.dumps(row, indent=1))
            print(f"  {e['name']}: {run_peers.versus_best_peer(row, args.tools)}",
                  file=sys.stderr, flush=True)
            done += 1
    print(f"confirmed {done} row(s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
