"""Refusal reasons: graphsub's "error: ..." messages sorted into a small documented set.

`classify(message)` returns the key of the first reason whose pattern matches (the order of
REASONS matters: specific before general), or "other". `template(message)` strips the
model path and replaces names and numbers, so that messages that differ only in those group
together in the report.
"""
from __future__ import annotations

import re

# (key, what it means, pattern). Patterns are searched case-insensitively in the message
# with the model's path removed.
REASONS: list[tuple[str, str, str]] = [
    ("check-mismatch",
     "graphsub's own result check found that its optimized graph differs (nothing written)",
     r"does NOT compute what the original computes"),
    ("no-default-opset",
     "the model imports no opset of the default ONNX domain (e.g. only ai.onnx.ml or "
     "ai.onnx.preview.training)",
     r"imports no opset of the default"),
    ("opset",
     "the default-domain opset is outside the range graphsub reads or writes",
     r"\bopset\b.*\bnot supported|\bopsets? \d+ to \d+|unsupported opset"),
    ("zero-dim",
     "a tensor with a zero-sized dimension (an empty tensor: an input of shape [0], a "
     "Slice or Split that leaves nothing)",
     r"needs positive dimensions|is empty after slicing|sizes \[[^]]*\b0\b[^]]*\] must be "
     r"positive|zero[- ]sized|zero dimension|dimension of size 0|empty tensor|"
     r"has 0 elements|\b0 elements\b|zero elements"),
    ("non-tensor-type",
     "a sequence, optional, map or sparse-tensor value (graph input, output or tensor, or "
     "the output of a Sequence*/Optional operator)",
     r"\bsequence|\boptional\b|\bmap\b|map type|sparse|is not a tensor|"
     r"\((\w*Sequence\w*|Optional\w*)\)"),
    ("opaque-no-shape",
     "an operator kept opaque whose output shape ONNX shape inference cannot give (a "
     "data-dependent shape: Unique, NonZero, Loop/Scan/If outputs, Range or Pad/Reduce* "
     "with run-time parameters)",
     r"cannot tell the shape of"),
    ("training-mode",
     "an operator in training mode (e.g. BatchNormalization or Dropout with "
     "training_mode=1) or a training-only operator",
     r"training"),
    ("element-type",
     "an element type graphsub does not handle (string, float8, int4, complex, ...)",
     r"element type|elem_type|data type|dtype"),
    ("no-shape",
     "a graph input or tensor without a (static) shape",
     r"has no shape|unknown shape|no static shape|symbolic dimension|dim_param|"
     r"not a static|--input-shape"),
    ("shape-inference",
     "ONNX shape inference failed, crashed, or disagrees with graphsub's",
     r"shape inference|inconsistent shapes|cannot infer"),
    ("custom-domain",
     "an operator of a domain other than the default one that graphsub cannot type",
     r"value_info|custom domain|\bdomain '"),
    ("subgraph",
     "control flow or subgraphs (If, Loop, Scan) or model-local functions",
     r"subgraph|\bIf\b|\bLoop\b|\bScan\b|local function"),
    ("limits",
     "a size limit of graphsub (tensor elements, total bytes, attribute ranges)",
     r"over graphsub's limit|over the limit|2\^(30|31|40|60)|out of memory"),
    ("invalid-model",
     "graphsub considers the model malformed (undefined tensors, missing inputs or "
     "attributes, bad attribute values, shapes that do not fit the operator)",
     r"is not defined|required|is missing|produced by two nodes|cycle|no outputs|"
     r"out of range|must (have|be)|cannot (reshape|squeeze|split)|does not match|differs from|"
     r"negative dimension|unknown auto_pad|repeated|holds .* values|raw data"),
    ("export",
     "the optimized graph could not be written as ONNX",
     r"^export:|\bexport\b"),
    ("internal-timeout",
     "a time limit inside graphsub ran out",
     r"did not finish within"),
]

KEYS = [k for k, _, _ in REASONS] + ["other"]
DESCRIPTIONS = {k: d for k, d, _ in REASONS}
DESCRIPTIONS["other"] = "a message none of the patterns above recognise (kept verbatim)"

_COMPILED = [(k, re.compile(p, re.IGNORECASE)) for k, _, p in REASONS]


def strip_path(message: str, model_path: str | None = None) -> str:
    """The message without the model's path (graphsub prefixes most errors with it)."""
    m = message.strip()
    if model_path:
        m = m.replace(model_path, "MODEL")
    # A path-like prefix "something/model.onnx: " left over (a relative spelling).
    m = re.sub(r"[^\s:'\"]*model\.onnx", "MODEL", m)
    return m


def classify(message: str, model_path: str | None = None) -> str:
    m = strip_path(message, model_path)
    for key, rx in _COMPILED:
        if rx.search(m):
            return key
    return "other"


def template(message: str, model_path: str | None = None) -> str:
    """The message with names and numbers replaced, for grouping."""
    m = strip_path(message, model_path)
    m = m.splitlines()[0] if m else m
    m = re.sub(r"'[^']*'", "'…'", m)
    m = re.sub(r"\"[^\"]*\"", '"…"', m)
    m = re.sub(r"\[[-0-9, x]*\]", "[…]", m)
    m = re.sub(r"(?<![A-Za-z_0-9.])-?\d+(\.\d+)*(e-?\d+)?(?![A-Za-z_0-9])", "N", m)
    return m


def variant(message: str, model_path: str | None = None) -> str:
    """The first line with the path and quoted names replaced, numbers kept (which opset,
    which element type): the distinct variants of one template."""
    m = strip_path(message, model_path)
    m = m.splitlines()[0] if m else m
    m = re.sub(r"'[^']*'", "'…'", m)
    return m

