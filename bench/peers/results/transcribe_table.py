#!/usr/bin/env python3
"""Rows in run_peers.py's form, transcribed from the per-model table of docs/benchmarks.md as
committed at 9be1e70 (four sweeps of 2026-12-03, whose row files were not kept): the ONNX
Runtime 1-thread speedups, A/A, node counts, failures and wrong-in-OpenVINO marks that table
shows. Wall times, memory, all-cores and OpenVINO speedups are not in it, so these rows have
none. Families come from make_zoo.py's list.

    python bench/peers/results/transcribe_table.py bench/peers/results/2026-12-03-table
"""
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..", "..")
TOOLS = ["graphsub", "onnxsim", "onnxslim", "onnxoptimizer", "ort-basic", "ort-extended", "ort-transformers"]
OV_WRONG = {"hf-clip-vision", "hf-dinov2", "hf-gpt2-kv", "hf-llama-kv", "hf-siglip-vision"}
listing = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "zoo", "make_zoo.py"),
                          "--list", "--size", "full"], capture_output=True, text=True, check=True)
fam = {p[0]: p[1] for p in (line.split() for line in listing.stdout.splitlines()) if len(p) == 3}
doc = subprocess.run(["git", "show", "9be1e70:docs/benchmarks.md"], capture_output=True, text=True,
                     cwd=ROOT, check=True).stdout
sec = doc.split("### At published sizes")[1].split("### The small zoo")[0]
out = sys.argv[1]
os.makedirs(os.path.join(out, "rows"), exist_ok=True)
n = 0
for line in sec.splitlines():
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if len(cells) != 11 or not (cells[0].startswith(("hf-", "tv-", "timm-", "torch-", "builtin-"))):
        continue
    name, nodes, aa = cells[0], int(cells[1]), float(cells[2])
    model = name.split(".")[0]
    row = {"name": name, "model": model, "family": "builtin" if model.startswith("builtin-") else fam[model],
           "nodes": nodes, "tools": {}, "versions": {"graphsub": "9be1e70 table"},
           "timings": {"ort_1": {"aa": aa, "speedup": {}}, "openvino": {"outputs": {"original": {"ok": model not in OV_WRONG}}}}}
    for tool, c in zip(TOOLS, cells[3:10]):
        if c == "-":
            row["tools"][tool] = {"ok": None}
        elif c == "x":
            row["tools"][tool] = {"ok": False, "error": "failed (9be1e70 table)"}
        else:
            m = re.match(r"(!\s*)?(?:([\d.]+)x\s*)?\((\d+)(, wrong in OpenVINO)?\)", c)
            assert m, (name, c)
            row["tools"][tool] = {"ok": True, "nodes": int(m.group(3)), "outputs": {"ok": not m.group(1)}}
            if m.group(2):
                row["timings"]["ort_1"]["speedup"][tool] = float(m.group(2))
            row["timings"]["openvino"]["outputs"][tool] = {"ok": not m.group(4)}
    with open(os.path.join(out, "rows", name + ".json"), "w") as f:
        json.dump(row, f, indent=1, sort_keys=True)
        f.write("\n")
    n += 1
print(n, "rows")
