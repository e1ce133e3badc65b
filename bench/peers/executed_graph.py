#!/usr/bin/env python3
"""Which files ONNX Runtime runs as the same graph.

Two files that ONNX Runtime's own optimizer turns into the same graph run the same kernels on
the same weights: a difference in their measured latency is noise (the sessions' memory, the
machine), never the files. The peer table compares files by timing them; this says, for the
cases where one beat another, whether there was anything to beat.

Each file is loaded at a level ("all" is what the peer table times at), the session writes the
graph it will run, and that graph is reduced to a fingerprint that names nothing: every node is
hashed from its operator, domain, attributes and the hashes of what it reads (graph inputs by
position, initializers by their bytes), and the graph is the sorted list of its nodes' hashes
with its outputs' hashes in order. Node names, tensor names and node order do not count.

    executed_graph.py [--level all|extended|basic] FILE...

prints, per group of files with the same fingerprint, the files and the node count.
"""

import argparse
import collections
import hashlib
import os
import sys
import tempfile

LEVELS = {"basic": "ORT_ENABLE_BASIC", "extended": "ORT_ENABLE_EXTENDED", "all": "ORT_ENABLE_ALL"}


def optimized_model(path: str, level: str, out_dir: str):
    """The graph ONNX Runtime runs for `path` at `level` (1 thread, CPU), as an ONNX model."""
    import onnx
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.graph_optimization_level = getattr(ort.GraphOptimizationLevel, LEVELS[level])
    opts.intra_op_num_threads = 1
    opts.log_severity_level = 3  # the "all" level warns that its file is for this machine
    out = os.path.join(out_dir, "optimized.onnx")
    opts.optimized_model_filepath = out
    if os.path.getsize(path) > 1_500_000_000:
        opts.add_session_config_entry(
            "session.optimized_model_external_initializers_file_name", "optimized.data")
    ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    return onnx.load(out)


def _attribute_bytes(attr) -> bytes:
    # A subgraph attribute (If, Loop) is hashed by its serialized form: names inside count,
    # which may split two equal graphs apart but never joins two different ones.
    return attr.SerializeToString(deterministic=True)


def fingerprint(model) -> tuple[str, int]:
    """The graph's name-free fingerprint and its node count."""
    import onnx
    import onnx.numpy_helper

    g = model.graph
    known: dict[str, bytes] = {}
    for i, x in enumerate(g.input):
        known[x.name] = hashlib.sha256(f"input:{i}".encode()).digest()
    for t in g.initializer:
        h = hashlib.sha256(f"init:{t.data_type}:{list(t.dims)}:".encode())
        h.update(onnx.numpy_helper.to_array(t).tobytes())
        known[t.name] = h.digest()
    producers = {}
    for n in g.node:
        for o in n.output:
            producers[o] = n
    memo: dict[int, bytes] = {}

    def node_hash(n) -> bytes:
        key = id(n)
        if key in memo:
            return memo[key]
        # Iterative post-order: exported decoders nest thousands of nodes deep.
        stack = [(n, False)]
        while stack:
            cur, ready = stack.pop()
            if id(cur) in memo:
                continue
            deps = [producers[i] for i in cur.input if i and i not in known and i in producers]
            if not ready:
                stack.append((cur, True))
                stack.extend((d, False) for d in deps if id(d) not in memo)
                continue
            h = hashlib.sha256(f"{cur.domain}::{cur.op_type}".encode())
            for a in sorted(cur.attribute, key=lambda a: a.name):
                h.update(_attribute_bytes(a))
            for i in cur.input:
                if not i:
                    h.update(b"<none>")
                elif i in known:
                    h.update(known[i])
                elif i in producers:
                    p = producers[i]
                    h.update(memo[id(p)] + list(p.output).index(i).to_bytes(2, "little"))
                else:
                    h.update(f"<free:{i}>".encode())
            memo[id(cur)] = h.digest()
        return memo[key]

    nodes = sorted(node_hash(n) for n in g.node)
    outputs = []
    for o in g.output:
        if o.name in producers:
            p = producers[o.name]
            outputs.append(node_hash(p) + list(p.output).index(o.name).to_bytes(2, "little"))
        else:
            outputs.append(known.get(o.name, o.name.encode()))
    total = hashlib.sha256(b"".join(nodes) + b"|" + b"".join(outputs))
    return total.hexdigest()[:16], len(g.node)


def executed_fingerprint(path: str, level: str = "all") -> tuple[str, int]:
    """fingerprint() of the graph ONNX Runtime runs for the file at `path`."""
    with tempfile.TemporaryDirectory(prefix="graphsub-executed-") as tmp:
        return fingerprint(optimized_model(path, level, tmp))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("files", nargs="+")
    p.add_argument("--level", choices=sorted(LEVELS), default="all")
    a = p.parse_args()
    groups = collections.defaultdict(list)
    for f in a.files:
        if not os.path.isfile(f):
            print(f"executed_graph: no such file: {f}", file=sys.stderr)
            return 2
        fp, nodes = executed_fingerprint(f, a.level)
        groups[(fp, nodes)].append(f)
    for (fp, nodes), files in groups.items():
        print(f"{fp} ({nodes} nodes at level {a.level}): {', '.join(files)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
