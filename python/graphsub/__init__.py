"""graphsub: a superoptimizer for deep-learning computation graphs (docs/python.md).

The functions here are the command line's jobs over the same C++ library: an option left at
None takes the command line's default. Errors raise graphsub.Error with the command line's
messages (graphsub.OptionError, also a ValueError, for a bad option value). Long calls release
the GIL, stop on Ctrl-C (KeyboardInterrupt) and call progress(stage, done, total, detail)
about every 50 ms while they run; an exception raised by that callback cancels the job and
is re-raised.
"""

import json
import os

from . import _graphsub
from ._graphsub import Error, OptionError

__all__ = ["Error", "OptionError", "CheckError", "TARGETS", "optimize", "evaluate", "verify",
           "check_axioms", "generate", "unfold", "rules"]

#: The runtimes optimize() can price graphs for (its target=).
TARGETS = tuple(_graphsub.targets)


class CheckError(Error):
    """The optimized model does not compute what the original computes; nothing is
    returned. ``report`` holds the report (its "check" names the outputs that differ)."""

    def __init__(self, message, report):
        super().__init__(message)
        self.report = report


def _paths(value):
    """None, one path, or an iterable of paths -> None or a list of str."""
    if value is None:
        return None
    if isinstance(value, (str, bytes, os.PathLike)):
        return [os.fsdecode(value)]
    return [os.fsdecode(v) for v in value]


def _path(value):
    return None if value is None else os.fsdecode(value)


def _input_shapes(shapes):
    """{name: (1, 3, 224, 224)} or ["name=1x3x224x224"] -> the command line's NAME=DxD specs."""
    if shapes is None:
        return []
    if isinstance(shapes, dict):
        return [f"{name}={'x'.join(str(int(d)) for d in dims)}" for name, dims in shapes.items()]
    return [str(s) for s in shapes]


def _dims(dims):
    """{name: value} or ["name=value"] -> the command line's NAME=VALUE specs."""
    if dims is None:
        return []
    if isinstance(dims, dict):
        return [f"{name}={int(value)}" for name, value in dims.items()]
    return [str(d) for d in dims]


def _model_source(model, caller):
    """(bytes or None, path) of an onnx.ModelProto, serialized bytes or a path."""
    if isinstance(model, (bytes, bytearray, memoryview)):
        return bytes(model), ""
    if isinstance(model, (str, os.PathLike)):
        return None, os.fsdecode(model)
    if hasattr(model, "SerializeToString"):  # onnx.ModelProto, without importing onnx here
        return model.SerializeToString(), ""
    raise TypeError(f"{caller}: model must be an onnx.ModelProto, bytes or a path, "
                    f"not {type(model).__name__}")


def optimize(model, *, target=None, budget=None, alpha=None, time_limit=None,
             max_queue=None, cost=None, rules=None, disable_rules=(), builtin_rules=True,
             check=None, check_executor=None, rtol=None, atol=None, input_shapes=None,
             dims=None, seed=None, threads=None, cache_dir=None, opset=None, guard_runs=None,
             ort_contrib_ops=False, progress=None):
    """Optimizes an ONNX model: import, cost-based search over verified rewrite rules, a
    check on random inputs, export. Returns (onnx.ModelProto, report dict); the report is
    what ``graphsub optimize ... --report-json`` writes for the same flags.

    model: onnx.ModelProto, serialized bytes, or a path (external data next to it is read).
    target: a name of TARGETS (None: "ort", ONNX Runtime, falling back to "onednn" with a
    note in report["import"]["notes"] where Node.js or onnxruntime-node is missing).
    guard_runs: ort target: timed runs of the original and the result in ONNX Runtime
    before returning; a result slower beyond the noise band is replaced by the original
    (0: no guard). ort_contrib_ops: ort target: the search may introduce ONNX Runtime's
    fused com.microsoft operators by the generated rules of rules/ort_fused.rules and
    rules/ort_attention.rules, and ONNX's Attention over grouped key/value heads by
    rules/onnx_attention.rules where the file's opset is 23 or later; the model then runs in
    ONNX Runtime only. rules: a rule file or a list of them (None: the shipped
    library). check: random input sets compared (0: no check). input_shapes: {input: shape}
    for symbolic dimensions. dims: {dimension name: value}, the value of a symbolic
    dimension for every input that has it (the command's --dim). Raises CheckError when the check fails.
    """
    import onnx  # the result is a ModelProto; onnx is only needed here

    if target is not None and target not in TARGETS:
        raise OptionError(f"target {target!r}: no such target (valid targets: "
                          f"{', '.join(TARGETS)})")
    data, path = _model_source(model, "optimize")
    out, report_text, failure = _graphsub.optimize(
        model_bytes=data, path=path, target=target, budget=budget, alpha=alpha,
        time_limit=time_limit, max_queue=max_queue, cost=cost, rules=_paths(rules),
        disable_rules=list(disable_rules), builtin_rules=builtin_rules, check=check,
        check_executor=check_executor, rtol=rtol, atol=atol,
        input_shapes=_input_shapes(input_shapes), dims=_dims(dims), seed=seed, threads=threads,
        cache_dir=_path(cache_dir), opset=opset, guard_runs=guard_runs,
        ort_contrib_ops=ort_contrib_ops, progress=progress)
    report = json.loads(report_text)
    if failure:
        raise CheckError(failure, report)
    return onnx.load_from_string(out), report


def evaluate(model, inputs, *, progress=None):
    """Runs an ONNX model with graphsub's reference kernels, the semantics its rules are
    proved under, and returns {output name: numpy float32 array}, in the model's order.

    model: onnx.ModelProto, serialized bytes, or a path. inputs: {input name: array-like},
    one float tensor per graph input; a symbolic dimension takes the size fed. Raises Error
    for an unreadable model, a missing or misshapen input, or an operator graphsub keeps
    opaque (it has no semantics for it).
    """
    import numpy as np  # only this function needs numpy

    data, path = _model_source(model, "evaluate")
    if data is None:
        with open(path, "rb") as f:
            data = f.read()
    feeds = []
    for name, value in inputs.items():
        a = np.ascontiguousarray(value, dtype=np.float32)
        feeds.append((name, list(a.shape), a.tobytes()))
    outs = _graphsub.evaluate(model_bytes=data, inputs=feeds, progress=progress)
    return {name: np.frombuffer(raw, dtype=np.float32).reshape(shape).copy()
            for name, shape, raw in outs}


def _rule_source(rules):
    """(file label, text) of a rule file path or of rule text in the rule language."""
    if isinstance(rules, os.PathLike):
        return os.fsdecode(rules), ""
    if isinstance(rules, str) and rules.lstrip().startswith(("(", ";")):
        return "<text>", rules
    return os.fsdecode(rules), ""


def verify(rules, axioms=None, *, timeout_ms=None, rlimit=None, threads=None, numeric=True,
           reuse_context=False, progress=None):
    """Proves rules from the axioms with Z3 (after a numeric pre-test), like ``graphsub
    verify``. rules: a rule file's path, or rule text (a string starting with "(" or ";").
    Returns one dict per rule: name, verdict (proved, counterexample, unknown, timeout,
    invalid), proved, reason, output, tested, numeric_ms, solver_ms."""
    file, text = _rule_source(rules)
    return _graphsub.verify(file=file, text=text, axioms=_path(axioms), timeout_ms=timeout_ms,
                            rlimit=rlimit, threads=threads, numeric=numeric,
                            reuse_context=reuse_context, progress=progress)


def check_axioms(axioms=None, *, only=(), threads=None, seed=None, progress=None):
    """Tests every axiom on all legal parameters and small shapes with the reference kernels,
    like ``graphsub check-axioms``. Returns {file, axioms: [{name, holds, instances, exact,
    param_sets, counterexample}], all_hold, instances, exact, seconds}."""
    return _graphsub.check_axioms(axioms=_path(axioms), only=list(only), threads=threads,
                                  seed=seed, progress=progress)


def generate(max_ops, *, ops=None, with_ops=None, params=(), pool=None, axioms=None,
             output=None, unproved=None, threads=None, seed=None, timeout_ms=None, rlimit=None,
             parts=None, reduce_from=None, max_vars=None, minimal_reads_from=None,
             shards=None, progress=None):
    """Generates a rule library like ``graphsub generate``: ops and with_ops (keep only the
    rules using one of them) are lists (or comma-separated strings) of axiom operator names.
    Returns {library, unproved (texts), command, rules,
    lifted, unproved_count, graphs, verifier_calls, output, unproved_path, seconds}; with
    output= the texts are also written (the unproved report beside it). shards=(K, R) (or
    "K/R") measures a fraction, as ``--shards``: only the largest graphs of the shares of
    ranks 0 to K-1 of an R-rank run are enumerated."""
    if ops is not None and not isinstance(ops, str):
        ops = ",".join(ops)
    if with_ops is not None and not isinstance(with_ops, str):
        with_ops = ",".join(with_ops)
    if shards is not None and not isinstance(shards, str):
        shards = "/".join(str(int(x)) for x in shards)
    return _graphsub.generate(max_ops=max_ops, ops=ops, with_ops=with_ops, params=list(params),
                              pool=pool,
                              axioms=_path(axioms), output=_path(output),
                              unproved=_path(unproved), threads=threads, seed=seed,
                              timeout_ms=timeout_ms, rlimit=rlimit, parts=parts,
                              reduce_from=reduce_from, max_vars=max_vars,
                              minimal_reads_from=minimal_reads_from, shards=shards,
                              progress=progress)


def unfold(terms, unfold, *, via=(), depth=None, axioms=None, output=None, rlimit=None,
           threads=None, progress=None):
    """The rules of fused operators unfolded from their defining axioms, like ``graphsub
    unfold``: terms (a fused term or a list of them, in the rule language), unfold and via
    (lists of axiom names, or comma-separated strings; NAME~rev reads one right to left).
    Every form is proved; one that is not raises graphsub.Error. Returns {library (text),
    command, rules, forms, output}; with output= the library is also written."""
    if isinstance(terms, str):
        terms = [terms]
    if not isinstance(unfold, str):
        unfold = ",".join(unfold)
    if not isinstance(via, str):
        via = ",".join(via)
    return _graphsub.unfold(terms=list(terms), unfold=unfold, via=via or None, depth=depth,
                            axioms=_path(axioms), output=_path(output), rlimit=rlimit,
                            threads=threads, progress=progress)


def rules(path=None, *, builtin=True, disabled=()):
    """The rules optimize() would use: [{name, origin ("FILE:LINE" or "built-in"), text (in
    the rule language; "" for built-in rules)}]. path: a rule file or a list of them (None:
    the shipped library)."""
    return _graphsub.rules(files=_paths(path), builtin=builtin, disabled=list(disabled))
