#!/usr/bin/env python3
"""Write graphsub's built-in benchmark models as a zoo folder: OUT/<name>.onnx and a
manifest.json that bench/zoo/check_zoo.py and bench/peers/run_peers.py read like the one
bench/zoo/make_zoo.py writes.

The built-ins (TASO's benchmark graphs: resnet50, resnext50, nasnet_a, nasrnn, bert,
inception_v3, squeezenet, vgg19) are written by `graphsub export-onnx`, so they carry
graphsub's own random weights and static shapes: their inputs are float tensors drawn from a
normal distribution, with no symbolic dimension (both test sets have the same shapes and
differ in their values).

Usage: python bench/peers/builtin_zoo.py --out DIR [--graphsub PATH] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "zoo"))
import check_zoo  # noqa: E402  (write_atomic, the manifest's reader)
from run_peers import venv_command  # noqa: E402

MODELS = ["resnet50", "resnext50", "nasnet_a", "nasrnn", "bert", "inception_v3", "squeezenet",
          "vgg19"]

ONNX_DTYPES = {1: "float32", 6: "int32", 7: "int64", 10: "float16", 11: "float64"}


def describe(path: str) -> tuple[list[dict], list[dict]]:
    """The file's inputs and outputs as manifest entries (static shapes only)."""
    import onnx

    g = onnx.load(path, load_external_data=False).graph
    weights = {t.name for t in g.initializer}

    def value(v) -> dict:
        t = v.type.tensor_type
        shape = []
        for d in t.shape.dim:
            if not d.HasField("dim_value"):
                raise ValueError(f"{path}: input '{v.name}' has a symbolic dimension")
            shape.append(d.dim_value)
        return {"name": v.name, "dtype": ONNX_DTYPES.get(t.elem_type, str(t.elem_type)),
                "shape": shape}

    inputs = [{**value(v), "values": {"kind": "normal"}} for v in g.input
              if v.name not in weights]
    outputs = [value(v) for v in g.output]
    return inputs, outputs


def entry_for(name: str, path: str) -> dict:
    inputs, outputs = describe(path)
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    model = f"builtin-{name.replace('_', '-')}"
    return {"name": model, "model": model, "family": "builtin", "source": "graphsub",
            "exporter": "graphsub", "file": os.path.basename(path), "size": "builtin",
            "status": "ok", "error": None, "note": None,
            "input_seed": zlib.crc32(model.encode()) & 0x7FFFFFFF,
            "bytes": os.path.getsize(path), "sha256": digest, "inputs": inputs,
            "outputs": outputs, "dims": {}, "dim_notes": [], "graphsub_dims": {}}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, help="folder for the files and manifest.json")
    p.add_argument("--graphsub", default=venv_command("graphsub"), help="graphsub command")
    p.add_argument("--only", action="append", choices=MODELS, help="one built-in (repeatable)")
    args = p.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    entries = []
    for name in args.only or MODELS:
        path = os.path.join(args.out, f"builtin-{name.replace('_', '-')}.onnx")
        if not os.path.exists(path):
            tmp = path + ".tmp.onnx"
            subprocess.run([args.graphsub, "export-onnx", "--model", name, "-o", tmp],
                           check=True, stdout=subprocess.DEVNULL)
            os.replace(tmp, path)
        entries.append(entry_for(name, path))
        print(f"  {entries[-1]['name']}: {entries[-1]['bytes'] / 1e6:.1f} MB", file=sys.stderr)
    manifest = {"version": 1, "size": "builtin", "packages": {}, "exporters": {},
                "summary": {"entries": len(entries)}, "entries": entries}
    check_zoo.write_atomic(os.path.join(args.out, "manifest.json"),
                           json.dumps(manifest, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
