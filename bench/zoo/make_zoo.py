#!/usr/bin/env python3
"""Export the zoo: every model of models.py through each torch ONNX exporter that takes it.

    make_zoo.py --size small --out /tmp/zoo_small        # tiny configs, minutes on 2 cores
    make_zoo.py --size full --out /data/zoo_full         # published sizes, for benchmarks

Each (model, exporter) pair is one entry, OUT/<model>.<exporter>.onnx, described in
OUT/manifest.json: family, source, exporter, opset, inputs (dtype, shape with the file's
symbolic dimension names, how to draw values), two test values per symbolic dimension, what
the graph holds (op types, domains, functions, dtypes), and a check of the file in ONNX
Runtime against torch at both test values. A pair that fails to export is an entry too,
with the error, so the zoo records what today's exporters cannot do.

Exporters:
  ts      torch.onnx.export(dynamo=False), opset 17 by default, dynamic_axes
  dynamo  torch.onnx.export(dynamo=True), opset 20 (torch's default) by default,
          dynamic_shapes with torch.export.Dim; the exporter's optimizer runs (its default),
          which leaves no model-local functions
  ts-fn   as ts, with export_modules_as_functions for the block classes a recipe names, so
          that the file holds model-local functions (a few models only)

Files are written to a temporary name and renamed; an existing file is kept unless --force.
Weights and inputs are seeded from the model name, so a rerun writes the same bytes.
"""

from __future__ import annotations

import argparse
import contextlib
import fnmatch
import hashlib
import inspect
import io
import json
import os
import signal
import sys
import time
import traceback
import warnings
from typing import Callable

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import check_zoo  # noqa: E402  (the input generator and comparison shared with the check)
import models  # noqa: E402

EXPORTERS = ("ts", "dynamo", "ts-fn")
MANIFEST_VERSION = 1
PROTOBUF_LIMIT = 2**31 - 1


# ---------------------------------------------------------------------------------------
# Export-time values


def example_dims(recipe: models.Recipe) -> dict:
    """Each symbol at its export value (both 'test sets' equal, for make_inputs)."""
    return {s.name: (s.example, s.example) for s in recipe.symbols}


def test_dims(recipe: models.Recipe) -> dict:
    return {s.name: s.tests for s in recipe.symbols}


def input_dicts(recipe: models.Recipe) -> list[dict]:
    """The recipe's inputs as the manifest (and make_inputs) describe them."""
    return [{"name": i.name, "dtype": i.dtype, "shape": list(i.shape), "values": i.values}
            for i in recipe.inputs]


def example_tensors(recipe: models.Recipe, seed: int) -> list:
    """The export example, drawn like the test inputs but at the export values."""
    import torch

    arrays = check_zoo.make_inputs(input_dicts(recipe), example_dims(recipe), seed + 1, 0)
    return [torch.from_numpy(arrays[i.name]) for i in recipe.inputs]


def dynamic_axes(recipe: models.Recipe) -> dict:
    """TorchScript's dynamic_axes: every symbolic axis of every input and output, by name."""
    axes = {}
    for i in recipe.inputs:
        sym = {a: d for a, d in enumerate(i.shape) if isinstance(d, str)}
        if sym:
            axes[i.name] = sym
    for o in recipe.outputs:
        if o.axes:
            axes[o.name] = dict(o.axes)
    return axes


def dynamic_shapes(module, recipe: models.Recipe):
    """torch.export's dynamic_shapes, shaped like forward's signature.

    Named symbols become torch.export.Dim objects (one per name, shared across inputs);
    a symbol that is a sum of others cannot be stated, so it is Dim.AUTO and torch.export
    infers it. Inputs collected by a *args parameter are given as one nested tuple.
    """
    from torch.export import Dim

    dims = {s.name: (Dim.AUTO if s.sum_of else Dim(s.name)) for s in recipe.symbols}
    specs = [{a: dims[d] for a, d in enumerate(i.shape) if isinstance(d, str)} or None
             for i in recipe.inputs]
    params = list(inspect.signature(module.forward).parameters.values())
    fixed = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    has_varargs = any(p.kind == p.VAR_POSITIONAL for p in params)
    head = specs[:len(fixed)]
    return tuple(head) + ((tuple(specs[len(fixed):]),) if has_varargs else ())


# ---------------------------------------------------------------------------------------
# Exporters


class ExportFailed(Exception):
    """An export that raised, crashed or ran too long in its child process."""

    def __init__(self, message: str, crashed: bool = False):
        super().__init__(message)
        self.crashed = crashed


def in_child(work: Callable[[], None], timeout: float) -> None:
    """Run `work` in a forked child; raise ExportFailed with its error, crash or timeout.

    TorchScript's function extraction segfaults now and then (tv-convnext's CNBlock, about
    one run in three here), and an exporter can loop; a child keeps either from taking the
    whole zoo down. fork shares the already-built module, so nothing is imported or built
    twice. The child runs torch on one thread: a forked OpenMP pool is not to be trusted.
    """
    import select

    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(read_fd)
        code, message = 0, ""
        try:
            import torch

            torch.set_num_threads(1)
            work()
        except BaseException as e:  # noqa: BLE001  reported to the parent
            code, message = 1, error_text(e)
        with os.fdopen(write_fd, "w") as pipe:
            pipe.write(message)
        os._exit(code)
    os.close(write_fd)
    chunks, deadline = [], time.monotonic() + timeout if timeout else None
    with os.fdopen(read_fd) as pipe:
        while True:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                raise ExportFailed(f"export took longer than {timeout:.0f} s (killed)")
            ready, _, _ = select.select([pipe], [], [], left)
            if ready:
                data = pipe.read()
                chunks.append(data)
                break
    _, status = os.waitpid(pid, 0)
    message = "".join(chunks)
    if os.WIFSIGNALED(status):
        sig = signal.Signals(os.WTERMSIG(status)).name
        raise ExportFailed(f"the exporter crashed ({sig})", crashed=True)
    if os.WEXITSTATUS(status) != 0:
        raise ExportFailed(message or f"export child exited with {os.WEXITSTATUS(status)}")


def export_ts(module, recipe, args, path, opset, functions=None):
    import torch

    torch.onnx.export(module, tuple(args), path, dynamo=False, opset_version=opset,
                      input_names=[i.name for i in recipe.inputs],
                      output_names=[o.name for o in recipe.outputs],
                      dynamic_axes=dynamic_axes(recipe), do_constant_folding=True,
                      export_modules_as_functions=functions or False)


def export_dynamo(module, recipe, args, path, opset):
    import torch

    program = torch.onnx.export(module, tuple(args), dynamo=True, opset_version=opset,
                                input_names=[i.name for i in recipe.inputs],
                                output_names=[o.name for o in recipe.outputs],
                                dynamic_shapes=dynamic_shapes(module, recipe), verbose=False)
    program.save(path, external_data=False)


def run_exporter(exporter: str, module, recipe, args, path, opts) -> None:
    """Write one file with the chosen exporter (to a temporary path; the caller renames)."""
    if exporter == "ts":
        export_ts(module, recipe, args, path, opts.ts_opset)
    elif exporter == "ts-fn":
        export_ts(module, recipe, args, path, opts.ts_opset, recipe.function_classes())
    else:
        export_dynamo(module, recipe, args, path, opts.dynamo_opset)


def normalize_file(path: str, exporter: str) -> None:
    """Remove what varies between identical exports, so a rerun writes the same bytes.

    The dynamo exporter's stack traces name FX modules by a process-wide counter
    ('<eval_with_key>.61'); TorchScript's function extraction names a function's values
    after whichever instance of the module it happened to take. Neither changes what the
    file computes: the counter is dropped, and function-local names are renumbered.
    """
    import onnx

    model = onnx.load(path)
    if exporter == "dynamo":
        strip_eval_counters(model)
    if model.functions:
        for f in model.functions:
            renumber_function(f)
    onnx.save(model, path)


def strip_eval_counters(model) -> None:
    import re

    pattern = re.compile(r"<eval_with_key>\.\d+")
    for node in all_nodes(model.graph):
        for prop in node.metadata_props:
            if "<eval_with_key>" in prop.value:
                prop.value = pattern.sub("<eval_with_key>", prop.value)


def renumber_function(f) -> None:
    """Name a function's inputs, outputs, values and nodes by position (their scope is the
    function's own, so this cannot clash with the graph)."""
    names = {n: f"in{i}" for i, n in enumerate(f.input)}
    names.update({n: f"out{i}" for i, n in enumerate(f.output)})
    for node in f.node:
        for out in node.output:
            if out and out not in names:
                names[out] = f"v{len(names)}"
    for i, node in enumerate(f.node):
        node.name = f"{node.op_type}_{i}"
        node.input[:] = [names.get(x, x) for x in node.input]
        node.output[:] = [names.get(x, x) for x in node.output]
    f.input[:] = [names[x] for x in f.input]
    f.output[:] = [names[x] for x in f.output]


def exporter_opset(exporter: str, opts) -> int:
    return opts.dynamo_opset if exporter == "dynamo" else opts.ts_opset


# ---------------------------------------------------------------------------------------
# What a written file holds


def shape_of(value_info) -> list:
    """A value's shape: ints, dim_param names, or None for an unnamed unknown dimension."""
    t = value_info.type.tensor_type
    if not t.HasField("shape"):
        return None
    return [d.dim_param if d.HasField("dim_param") else (d.dim_value if d.HasField("dim_value")
                                                        else None) for d in t.shape.dim]


def dtype_name(elem_type: int) -> str:
    import onnx

    return onnx.helper.tensor_dtype_to_np_dtype(elem_type).name if elem_type not in (
        onnx.TensorProto.BFLOAT16,) else "bfloat16"


def all_nodes(graph):
    """Every node, including those in If/Loop/Scan bodies, with its nesting depth."""
    import onnx

    for node in graph.node:
        yield node
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                yield from all_nodes(attr.g)
            elif attr.type == onnx.AttributeProto.GRAPHS:
                for g in attr.graphs:
                    yield from all_nodes(g)


def op_key(node) -> str:
    return node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}::{node.op_type}"


def count(keys) -> dict:
    out: dict = {}
    for k in keys:
        out[k] = out.get(k, 0) + 1
    return dict(sorted(out.items(), key=lambda kv: (-kv[1], kv[0])))


def describe_graph(model) -> dict:
    """What an importer meets in this file: opsets, op types, functions, dtypes, subgraphs."""
    g = model.graph
    top = list(g.node)
    nested = list(all_nodes(g))
    value_types = [v.type.tensor_type.elem_type for v in (*g.input, *g.output, *g.value_info)]
    return {
        "ir_version": model.ir_version,
        "opsets": {(o.domain or "ai.onnx"): o.version for o in model.opset_import},
        "nodes": len(top),
        "nodes_in_subgraphs": len(nested) - len(top),
        "op_types": count(op_key(n) for n in nested),
        "functions": [{"domain": f.domain, "name": f.name, "nodes": len(f.node),
                       "op_types": count(op_key(n) for n in f.node)} for f in model.functions],
        "initializers": len(g.initializer),
        "initializer_dtypes": count(dtype_name(t.data_type) for t in g.initializer),
        "value_dtypes": count(dtype_name(t) for t in value_types if t),
        "value_info": len(g.value_info),
    }


def check_file(path: str) -> str | None:
    """onnx.checker's verdict (full check, with shape inference): None when it passes."""
    import onnx

    try:
        onnx.checker.check_model(path, full_check=True)
        return None
    except Exception as e:  # the checker raises several types; the text is the result
        return f"{type(e).__name__}: {e}"[:1000]


def file_dims(model, recipe: models.Recipe) -> tuple[list, list, dict, list, dict]:
    """The file's inputs and outputs, test values for each of its dim_param names, notes,
    and the values graphsub is to be given for some of them (Symbol.optimize_at).

    Exporters name symbolic dimensions their own way (dynamo calls an inferred one 's53'),
    or make one static; the names are matched to the recipe's symbols axis by axis, so the
    check can give every dimension of the file the right value. Notes say what differed.
    """
    declared = {i.name: i for i in recipe.inputs}
    symbols = {s.name: s for s in recipe.symbols}
    dims: dict = {}
    notes: list = []
    dim_values: dict = {}
    inputs = []
    for vi in model.graph.input:
        shape = shape_of(vi)
        spec = declared.get(vi.name)
        if spec is None:
            notes.append(f"input {vi.name} is not one of the model's inputs")
        else:
            map_axes(vi.name, spec.shape, shape, symbols, dims, notes, dim_values)
        inputs.append({"name": vi.name,
                       "dtype": dtype_name(vi.type.tensor_type.elem_type),
                       "shape": shape,
                       "values": spec.values if spec else {"kind": "normal"}})
    present = {i["name"] for i in inputs}
    for name in declared:
        if name not in present:
            notes.append(f"input {name} was dropped by the exporter (unused)")
    outputs = [{"name": vi.name, "dtype": dtype_name(vi.type.tensor_type.elem_type),
                "shape": shape_of(vi)} for vi in model.graph.output]
    return inputs, outputs, dims, notes, dim_values


def map_axes(name, declared_shape, shape, symbols, dims, notes, dim_values):
    """Give each dim_param of one input the test values of the recipe's symbol at that axis
    (and the value graphsub is given, where the symbol has one)."""
    if shape is None or len(shape) != len(declared_shape):
        notes.append(f"input {name}: shape {shape} does not match {list(declared_shape)}")
        return
    for axis, (want, got) in enumerate(zip(declared_shape, shape)):
        values = list(symbols[want].tests) if isinstance(want, str) else [want, want]
        if isinstance(got, str):
            if got in dims and dims[got] != values:
                notes.append(f"input {name} axis {axis}: '{got}' also stands for other values")
            dims.setdefault(got, values)
            if isinstance(want, str) and symbols[want].optimize_at is not None:
                dim_values[got] = symbols[want].optimize_at
            if isinstance(want, str) and got != want:
                extra = f" = {' + '.join(symbols[want].sum_of)}" if symbols[want].sum_of else ""
                notes.append(
                    f"input {name} axis {axis}: the exporter named '{want}{extra}' '{got}'")
            elif not isinstance(want, str):
                notes.append(f"input {name} axis {axis}: made symbolic ('{got}'), size {want}")
        elif isinstance(want, str):
            notes.append(f"input {name} axis {axis}: '{want}' was made static ({got})")
        elif got != want:
            notes.append(f"input {name} axis {axis}: size {got}, expected {want}")


# ---------------------------------------------------------------------------------------
# The file against torch


def torch_check(module, recipe: models.Recipe, path: str, seed: int) -> dict:
    """Run the file in ONNX Runtime and the module in torch at both test values.

    An exporter that baked a size into the graph, or traced one branch of a data-dependent
    path, writes a file that is wrong at other sizes; this finds it before graphsub does.
    """
    import torch

    sess = check_zoo.ort_session(path)
    sets = []
    for k in (0, 1):
        arrays = check_zoo.make_inputs(input_dicts(recipe), test_dims(recipe), seed, k)
        with torch.no_grad():
            ref = module(*[torch.from_numpy(arrays[i.name]) for i in recipe.inputs])
        ref = [t.detach().numpy() for t in (ref if isinstance(ref, (tuple, list)) else (ref,))]
        got = check_zoo.run_session(sess, arrays)
        by_position = dict(zip([o.name for o in recipe.outputs], got.values()))
        rows = check_zoo.compare_outputs([o.name for o in recipe.outputs], ref,
                                         got if set(got) == set(by_position) else by_position)
        sets.append({"dims": {s.name: s.tests[k] for s in recipe.symbols}, "outputs": rows})
    ok = all(r["ok"] for s in sets for r in s["outputs"])
    return {"ok": ok, "max_abs": max(r.get("max_abs", float("inf")) for s in sets
                                     for r in s["outputs"]), "sets": sets}


# ---------------------------------------------------------------------------------------
# One entry


def entry_base(spec: models.ModelSpec, exporter: str, opts) -> dict:
    name = f"{spec.name}.{exporter}"
    return {"name": name, "model": spec.name, "family": spec.family, "source": spec.source,
            "exporter": exporter, "opset": exporter_opset(exporter, opts),
            "file": name + ".onnx", "size": opts.size, "note": spec.note or None,
            "input_seed": models.seed_for(name)}


def sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@contextlib.contextmanager
def quiet():
    """Silence the exporters' progress lines and warnings (errors carry their own text)."""
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


ANSI_ESCAPE = r"\x1b\[[0-9;]*m"


def error_text(e: BaseException) -> str:
    """The cause first, then context: enough to see why without the whole traceback.

    torch.onnx wraps the real error in advice ("Next steps: ...") and puts the cause after
    an '## Exception summary' line; that cause leads, with the failing step as its prefix.
    An exception with a one-line message gets the last frames of its traceback.
    """
    import re

    if isinstance(e, ExportFailed):
        return str(e)[:3000]
    text = re.sub(ANSI_ESCAPE, "", f"{type(e).__name__}: {e}")
    lines = [ln.rstrip() for ln in text.splitlines() if ln.strip()]
    if "## Exception summary" in lines:
        at = lines.index("## Exception summary")
        step = re.search(r"step \d+/\d+", lines[0])
        what = lines[0].split(". ")[0].split(": ", 1)[-1]
        cause = [re.sub(r"^<class '([\w.]+)'>", r"\1", ln) for ln in lines[at + 1:]]
        lines = [f"{what} ({step.group(0) if step else 'torch.onnx'}): {cause[0]}" if cause
                 else what, *cause[1:]]
    elif len(lines) <= 1:
        lines += "".join(traceback.format_exception(e)[-3:]).splitlines()
    if len(lines) > 14:  # the cause, then the innermost frames, where the code is
        lines = [*lines[:3], "...", *lines[-10:]]
    return "\n".join(lines)[:3000]


def export_entry(spec, exporter, recipe, module_cache, out_dir, opts) -> dict:
    """Export one (model, exporter) pair and describe the file, or record why it failed."""
    import onnx

    entry = entry_base(spec, exporter, opts)
    path = os.path.join(out_dir, entry["file"])
    tmp = os.path.join(out_dir, f".{entry['file']}.tmp-{os.getpid()}")
    start = time.monotonic()

    def work():
        with quiet():
            run_exporter(exporter, module, recipe, args, tmp, opts)
            normalize_file(tmp, exporter)

    try:
        with quiet():
            module = module_cache.get(recipe)
            args = example_tensors(recipe, entry["input_seed"])
        if opts.in_process:
            work()
        else:
            entry["crashes"] = export_with_retries(work, opts)
        if os.path.getsize(tmp) > PROTOBUF_LIMIT:
            raise ValueError("the file is over 2 GB (protobuf limit); external data is not used")
        os.replace(tmp, path)
    except Exception as e:  # noqa: BLE001  every failure is a manifest entry
        with contextlib.suppress(FileNotFoundError):
            os.remove(tmp)
        entry.update(status="export-failed", error=error_text(e),
                     export_seconds=round(time.monotonic() - start, 2))
        return entry
    entry["export_seconds"] = round(time.monotonic() - start, 2)
    describe_entry(entry, path, onnx.load(path), recipe)
    if opts.verify:
        entry["torch_check"] = safe_torch_check(module_cache.get(recipe), recipe, path, entry)
    return entry


def export_with_retries(work, opts) -> int:
    """Run the export in a child, again after a crash (up to --retries): returns the crashes.

    The crashes seen so far are flaky (the same export passes on the next try), so a crash
    is retried and counted in the manifest; an exception or a timeout is final.
    """
    crashes = 0
    while True:
        try:
            in_child(work, opts.timeout)
            return crashes
        except ExportFailed as e:
            if not e.crashed or crashes >= opts.retries:
                raise ExportFailed(f"{e} ({crashes + 1} crashes)" if e.crashed else str(e))
            crashes += 1


def safe_torch_check(module, recipe, path, entry) -> dict:
    try:
        with quiet():
            return torch_check(module, recipe, path, entry["input_seed"])
    except Exception as e:  # noqa: BLE001  a file ORT cannot run is a result
        return {"ok": False, "error": f"{type(e).__name__}: {e}"[:2000]}


def describe_entry(entry: dict, path: str, model, recipe) -> None:
    inputs, outputs, dims, notes, dim_values = file_dims(model, recipe)
    entry.update(status="ok", error=None, bytes=os.path.getsize(path), sha256=sha256(path),
                 opset=model_opset(model), inputs=inputs, outputs=outputs, dims=dims,
                 dim_notes=notes, graphsub_dims=dim_values, graph=describe_graph(model), checker=check_file(path))


def model_opset(model) -> int | None:
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)


def kept_entry(spec, exporter, recipe, module_cache, path, old, opts) -> dict:
    """An entry for a file already there: described again, its torch check reused if known."""
    import onnx

    entry = entry_base(spec, exporter, opts)
    entry["export_seconds"] = (old or {}).get("export_seconds")
    describe_entry(entry, path, onnx.load(path), recipe)
    entry["kept"] = True
    if old and old.get("sha256") == entry["sha256"] and "torch_check" in old:
        entry["torch_check"] = old["torch_check"]
    elif opts.verify:
        entry["torch_check"] = safe_torch_check(module_cache.get(recipe), recipe, path, entry)
    return entry


class ModuleCache:
    """Build each model once for all its exporters, and drop it before the next model."""

    def __init__(self):
        self.recipe, self.module = None, None

    def get(self, recipe):
        if recipe is not self.recipe:
            self.recipe, self.module = None, None
            self.module = recipe.build()
            self.recipe = recipe
        return self.module

    def clear(self):
        self.recipe, self.module = None, None


# ---------------------------------------------------------------------------------------
# The zoo


def versions() -> dict:
    """The packages that made the files: the zoo is 'today's exports' of these versions."""
    out = {"python": sys.version.split()[0]}
    for mod in ("torch", "torchvision", "onnx", "onnxruntime", "onnxscript", "transformers",
                "timm", "numpy"):
        try:
            out[mod] = __import__(mod).__version__
        except Exception:  # noqa: BLE001  a missing package is recorded, not fatal
            out[mod] = None
    return out


def exporters_for(spec: models.ModelSpec, recipe: models.Recipe, wanted) -> list[str]:
    return [e for e in wanted if e != "ts-fn" or recipe.function_classes is not None]


def wanted(spec: models.ModelSpec, exporter: str, patterns) -> bool:
    """--only matches a model name (all its exporters) or an entry name (model.exporter)."""
    if not patterns:
        return True
    return any(fnmatch.fnmatch(spec.name, p) or fnmatch.fnmatch(f"{spec.name}.{exporter}", p)
               for p in patterns)


def load_old_manifest(path: str, size: str) -> dict:
    try:
        with open(path) as f:
            old = json.load(f)
    except (OSError, ValueError):
        return {}
    if old.get("size") != size:
        return {}
    return {e["name"]: e for e in old.get("entries", [])}


def graph_totals(entries: list[dict]) -> dict:
    """Across the exported files, per exporter: op types (nodes, and files holding them),
    opsets, value and initializer dtypes, and model-local functions: what an importer of
    today's exports has to read."""
    out: dict = {}
    for e in entries:
        if e["status"] != "ok":
            continue
        g = e["graph"]
        t = out.setdefault(e["exporter"], {"files": 0, "nodes": 0, "op_types": {}, "opsets": {},
                                           "ir_versions": {}, "value_dtypes": {},
                                           "initializer_dtypes": {}, "function_files": 0,
                                           "functions": 0, "function_op_types": {}})
        t["files"] += 1
        t["nodes"] += g["nodes"]
        for op, n in g["op_types"].items():
            row = t["op_types"].setdefault(op, {"nodes": 0, "files": 0})
            row["nodes"] += n
            row["files"] += 1
        for domain, version in g["opsets"].items():
            key = f"{domain} {version}"
            t["opsets"][key] = t["opsets"].get(key, 0) + 1
        bump(t["ir_versions"], str(g["ir_version"]))
        for key in ("value_dtypes", "initializer_dtypes"):
            for dtype in g[key]:
                bump(t[key], dtype)
        t["function_files"] += bool(g["functions"])
        t["functions"] += len(g["functions"])
        for f in g["functions"]:
            for op, n in f["op_types"].items():
                t["function_op_types"][op] = t["function_op_types"].get(op, 0) + n
    for t in out.values():
        t["op_types"] = dict(sorted(t["op_types"].items(), key=lambda kv: (-kv[1]["nodes"], kv[0])))
    return out


def bump(counts: dict, key: str) -> None:
    counts[key] = counts.get(key, 0) + 1


def summarize(entries: list[dict]) -> dict:
    """Counts by exporter and family, and the failures, for the manifest's head."""
    by = {"exporter": {}, "family": {}}
    for e in entries:
        for key in by:
            row = by[key].setdefault(e[key], {"ok": 0, "failed": 0})
            row["ok" if e["status"] == "ok" else "failed"] += 1
    return {"entries": len(entries), "exported": sum(e["status"] == "ok" for e in entries),
            "models": len({e["model"] for e in entries}), **{f"by_{k}": v for k, v in by.items()},
            "torch_check_failed": [e["name"] for e in entries
                                   if e["status"] == "ok" and not (e.get("torch_check") or
                                                                   {"ok": True})["ok"]],
            "export_failed": {e["name"]: e["error"].splitlines()[0][:300]
                              for e in entries if e["status"] != "ok"},
            "graphs": graph_totals(entries)}


def write_manifest(path: str, size: str, opts, entries: list[dict]) -> None:
    manifest = {"version": MANIFEST_VERSION, "size": size, "packages": versions(),
                "exporters": {"ts": "torch.onnx.export(dynamo=False, opset_version="
                                    f"{opts.ts_opset})",
                              "dynamo": f"torch.onnx.export(dynamo=True, opset_version="
                                        f"{opts.dynamo_opset}, optimize=True)",
                              "ts-fn": f"torch.onnx.export(dynamo=False, opset_version="
                                       f"{opts.ts_opset}, export_modules_as_functions=...)"},
                "summary": summarize(entries), "entries": entries}
    check_zoo.write_atomic(path, json.dumps(manifest, indent=1) + "\n")


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def make_zoo(opts) -> list[dict]:
    """Export every selected pair; entries of models not selected stay as they were."""
    os.makedirs(opts.out, exist_ok=True)
    manifest_path = os.path.join(opts.out, "manifest.json")
    old = load_old_manifest(manifest_path, opts.size)
    results = dict(old)
    cache = ModuleCache()
    for spec in models.MODELS:
        todo = [e for e in opts.exporters if wanted(spec, e, opts.only)]
        if not todo:
            continue
        recipe = spec.recipe(opts.size)
        for exporter in exporters_for(spec, recipe, todo):
            entry = one_entry(spec, exporter, recipe, cache, old, opts)
            results[entry["name"]] = entry
            log(f"{entry['status']:>14} {entry.get('export_seconds') or 0:6.1f}s "
                f"{entry['name']}{'' if entry['status'] == 'ok' else ': ' + first_line(entry)}")
            write_manifest(manifest_path, opts.size, opts, ordered(results))
        cache.clear()
    entries = ordered(results)
    write_manifest(manifest_path, opts.size, opts, entries)
    return entries


def one_entry(spec, exporter, recipe, cache, old, opts) -> dict:
    name = f"{spec.name}.{exporter}"
    path = os.path.join(opts.out, name + ".onnx")
    if os.path.exists(path) and not opts.force:
        return kept_entry(spec, exporter, recipe, cache, path, old.get(name), opts)
    return export_entry(spec, exporter, recipe, cache, opts.out, opts)


def first_line(entry: dict) -> str:
    return (entry.get("error") or "").splitlines()[0][:160] if entry.get("error") else ""


def ordered(results: dict) -> list[dict]:
    """Entries in model-list order, then exporter order: a stable manifest."""
    rank = {s.name: i for i, s in enumerate(models.MODELS)}
    return sorted(results.values(), key=lambda e: (rank.get(e["model"], len(rank)),
                                                   EXPORTERS.index(e["exporter"])
                                                   if e["exporter"] in EXPORTERS else 99))


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=__doc__.split("\n\n", 1)[1])
    p.add_argument("--size", choices=models.SIZES, default="small")
    p.add_argument("--out", help="output folder (default /tmp/zoo_SIZE)")
    p.add_argument("--only", action="append",
                   help="model or entry name glob, e.g. 'hf-*' or 'tv-resnet.dynamo' (repeatable)")
    p.add_argument("--exporters", default=",".join(EXPORTERS),
                   help=f"comma-separated subset of {','.join(EXPORTERS)}")
    p.add_argument("--force", action="store_true", help="export again over existing files")
    p.add_argument("--ts-opset", type=int, default=17)
    p.add_argument("--dynamo-opset", type=int, default=20)
    p.add_argument("--timeout", type=float, default=600, help="seconds per export (0: none)")
    p.add_argument("--retries", type=int, default=2, help="exports again after a crash")
    p.add_argument("--in-process", action="store_true",
                   help="export in this process, not a forked child (for debugging; no timeout)")
    p.add_argument("--no-verify", dest="verify", action="store_false",
                   help="skip the ONNX Runtime vs torch check of each file")
    p.add_argument("--list", action="store_true", help="list the models and exit")
    p.add_argument("--threads", type=int, default=0,
                   help="torch threads (0: torch's default)")
    opts = p.parse_args(argv)
    opts.exporters = [e.strip() for e in opts.exporters.split(",") if e.strip()]
    bad = [e for e in opts.exporters if e not in EXPORTERS]
    if bad:
        p.error(f"unknown exporter(s) {bad}; known: {list(EXPORTERS)}")
    opts.out = opts.out or f"/tmp/zoo_{opts.size}"
    return opts


def print_list() -> None:
    for s in models.MODELS:
        print(f"{s.name:22} {s.family:26} {s.source}")
    print(f"{len(models.MODELS)} models")


def pin_hash_seed() -> None:
    """Re-run this script with PYTHONHASHSEED=0 unless it already has it.

    Some models iterate over a set of strings while tracing (transformers' ModernBERT
    computes its rotary embeddings in `set(config.layer_types)` order), so the traced graph's
    node order follows Python's per-process hash seed: equivalent files, different bytes.
    """
    if os.environ.get("PYTHONHASHSEED") != "0":
        env = dict(os.environ, PYTHONHASHSEED="0")
        os.execve(sys.executable, [sys.executable, os.path.abspath(__file__), *sys.argv[1:]], env)


def main(argv=None) -> int:
    opts = parse_args(argv)
    if argv is None:
        pin_hash_seed()
    if opts.list:
        print_list()
        return 0
    if opts.threads:
        import torch

        torch.set_num_threads(opts.threads)
    start = time.monotonic()
    entries = make_zoo(opts)
    summary = summarize(entries)
    log(f"{summary['exported']} of {summary['entries']} entries exported "
        f"({summary['models']} models) in {time.monotonic() - start:.0f} s -> {opts.out}")
    for e in summary["torch_check_failed"]:
        log(f"  torch check failed: {e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
