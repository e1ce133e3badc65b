#!/usr/bin/env python3
"""Write ONNX's own backend test cases as model files with their test data.

    materialize.py OUT_DIR [--filter REGEX]

Every node case (`onnx.backend.test.case.node.collect_testcases()`) and every model case
(`onnx.backend.test.case.model.collect_testcases()`) of the installed onnx package becomes

    OUT_DIR/<case>/model.onnx
    OUT_DIR/<case>/test_data_set_0/input_<i>.pb    (TensorProto, SequenceProto, OptionalProto
    OUT_DIR/<case>/test_data_set_0/output_<i>.pb    or MapProto, as onnx's own test data)
    OUT_DIR/<case>/case.json                        (kind, tolerances, opsets, operators)

and OUT_DIR/manifest.json lists the cases, the onnx version and the counts. This is the
layout of onnx/backend/test/data/node (what `backend-test-tools generate-data` writes).

Model cases of kind "real" name a URL. The ones under `onnx/backend/test/data/light/`
ship with the package (light versions of the classic CNNs with their expected output):
their input is the one onnx's runner generates (`Runner.generate_dummy_data`, random=False)
and the expected output the package's `light_<model>_output_<i>.pb`, as in onnx's own
runner. Any other URL would need a download: it is skipped and counted (nothing here
touches the network). The numpy random state is seeded before the cases are collected
(they draw their data from np.random), so two runs write the same bytes.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import sys
import warnings

import numpy as np

LIGHT_PREFIX = "onnx/backend/test/data/light/"
SEED = 0


def _proto_for(value, type_proto, name):
    from onnx import TensorProto, numpy_helper

    if type_proto.HasField("map_type"):
        return numpy_helper.from_dict(value, name)
    if type_proto.HasField("sequence_type"):
        return numpy_helper.from_list(value, name)
    if type_proto.HasField("optional_type"):
        return numpy_helper.from_optional(value, name)
    if isinstance(value, TensorProto):
        return value
    return numpy_helper.from_array(np.asarray(value), name)


def _write_data_set(case_dir, index, model, inputs, outputs):
    d = os.path.join(case_dir, f"test_data_set_{index}")
    os.makedirs(d)
    graph_inputs = [
        vi for vi in model.graph.input if vi.name not in {i.name for i in model.graph.initializer}
    ]
    for j, value in enumerate(inputs):
        vi = graph_inputs[j]
        with open(os.path.join(d, f"input_{j}.pb"), "wb") as f:
            f.write(_proto_for(value, vi.type, vi.name).SerializeToString())
    for j, value in enumerate(outputs):
        vi = model.graph.output[j]
        with open(os.path.join(d, f"output_{j}.pb"), "wb") as f:
            f.write(_proto_for(value, vi.type, vi.name).SerializeToString())


def _describe(model):
    ops = sorted({(n.domain or "", n.op_type) for n in model.graph.node})
    return {
        "opset_import": {(o.domain or ""): o.version for o in model.opset_import},
        "ir_version": model.ir_version,
        "ops": [f"{d}::{t}" if d else t for d, t in ops],
        "nodes": len(model.graph.node),
    }


def _light_case(case):
    """The model and data set onnx's runner uses for a packaged light model."""
    import onnx
    from onnx import numpy_helper
    from onnx.backend.test.runner import Runner

    pkg_root = os.path.dirname(os.path.dirname(os.path.abspath(onnx.__file__)))
    path = os.path.normpath(os.path.join(pkg_root, case.url))
    model = onnx.load(path)
    inits = {i.name for i in model.graph.initializer}
    inputs = [
        Runner.generate_dummy_data(x, seed=0, name=case.model_name, random=False)
        for x in model.graph.input
        if x.name not in inits
    ]
    prefix = os.path.splitext(path)[0]
    outputs = []
    for i in range(len(model.graph.output)):
        p = f"{prefix}_output_{i}.pb"
        if not os.path.exists(p):
            outputs = None
            break
        t = onnx.TensorProto()
        with open(p, "rb") as f:
            t.ParseFromString(f.read())
        outputs.append(numpy_helper.to_array(t))
    if outputs is None:  # as onnx's runner does: the reference evaluator's outputs
        import onnx.reference

        feeds = {x.name: v for x, v in zip([x for x in model.graph.input if x.name not in inits], inputs)}
        outputs = onnx.reference.ReferenceEvaluator(model).run(None, feeds)
    return model, [(inputs, outputs)], "package " + case.url


def collect():
    """(node cases, model cases), collected with a seeded numpy random state."""
    np.random.seed(SEED)
    random.seed(SEED)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import onnx.backend.test.case.model as model_cases
        import onnx.backend.test.case.node as node_cases

        nodes = list(node_cases.collect_testcases())
        models = list(model_cases.collect_testcases())
    return nodes, models


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--filter", help="only cases whose name matches this regular expression")
    args = ap.parse_args(argv)

    import onnx

    nodes, models = collect()
    pattern = re.compile(args.filter) if args.filter else None
    out = os.path.abspath(args.out_dir)
    os.makedirs(out, exist_ok=True)
    manifest = {
        "onnx_version": onnx.__version__,
        "numpy_seed": SEED,
        "cases": [],
        "skipped_download": [],
        "counts": {"node": 0, "model": 0, "skipped_download": 0},
    }
    seen = set()
    for source, cases in (("node", nodes), ("model", models)):
        for case in cases:
            if pattern and not pattern.search(case.name):
                continue
            if case.name in seen:
                raise SystemExit(f"materialize: two cases are named {case.name}")
            seen.add(case.name)
            if case.model is not None:
                model, data_sets, origin = case.model, case.data_sets, f"onnx.backend.test.case.{source}"
            elif case.url and case.url.startswith(LIGHT_PREFIX):
                model, data_sets, origin = _light_case(case)
            else:
                manifest["skipped_download"].append({"name": case.name, "url": case.url})
                manifest["counts"]["skipped_download"] += 1
                continue
            case_dir = os.path.join(out, case.name)
            if os.path.exists(case_dir):
                shutil.rmtree(case_dir)
            os.makedirs(case_dir)
            with open(os.path.join(case_dir, "model.onnx"), "wb") as f:
                f.write(model.SerializeToString())
            for i, (inputs, outputs) in enumerate(data_sets):
                _write_data_set(case_dir, i, model, inputs, outputs)
            info = {
                "name": case.name,
                "source": source,
                "kind": case.kind,
                "origin": origin,
                "rtol": case.rtol,
                "atol": case.atol,
                "data_sets": len(data_sets),
                **_describe(model),
            }
            with open(os.path.join(case_dir, "case.json"), "w") as f:
                json.dump(info, f, indent=1, sort_keys=True)
                f.write("\n")
            manifest["cases"].append(case.name)
            manifest["counts"][source] += 1
    manifest["cases"].sort()
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    c = manifest["counts"]
    print(
        f"materialize: onnx {onnx.__version__}: {c['node']} node cases, {c['model']} model cases, "
        f"{c['skipped_download']} skipped (need a download) -> {out}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
