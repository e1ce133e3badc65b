#!/usr/bin/python3
"""Exports torchvision models with random weights (weights=None, no network) to ONNX.

Usage: /usr/bin/python3 tools/export_torchvision.py OUT_DIR [MODEL ...] [--opset N] [--size S]
Models: resnet50 resnext50_32x4d squeezenet1_1 inception_v3 (default: all four).
Files are OUT_DIR/MODEL.onnx, or OUT_DIR/MODEL_S.onnx with --size S (input SxS instead
of 224x224, 299x299 for inception_v3; smaller inputs make quick tests).
Run with Debian's /usr/bin/python3 (python3-torch, python3-torchvision).
Files already present are kept (delete them to re-export). Seeded: the same
torchvision version gives the same weights.
"""
import argparse
import os
import sys

import torch
import torchvision

INPUT_SIZE = {"inception_v3": 299}


def build(name):
    ctor = getattr(torchvision.models, name)
    kwargs = {"weights": None}
    if name == "inception_v3":
        # init_weights uses scipy's truncnorm when absent; plain init keeps the export offline.
        kwargs.update(aux_logits=False, init_weights=False)
    model = ctor(**kwargs)
    model.eval()
    return model


def export(name, out_dir, opset, size=None):
    path = os.path.join(out_dir, f"{name}.onnx" if size is None else f"{name}_{size}.onnx")
    if os.path.exists(path):
        return path
    torch.manual_seed(0)
    model = build(name)
    if size is None:
        size = INPUT_SIZE.get(name, 224)
    x = torch.randn(1, 3, size, size)
    tmp = path + ".tmp"
    with torch.no_grad():
        torch.onnx.export(model, x, tmp, opset_version=opset, input_names=["input"],
                          output_names=["logits"], do_constant_folding=True)
    os.replace(tmp, path)
    return path


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out_dir")
    p.add_argument("models", nargs="*",
                   default=["resnet50", "resnext50_32x4d", "squeezenet1_1", "inception_v3"])
    p.add_argument("--opset", type=int, default=13)
    p.add_argument("--size", type=int, default=None)
    a = p.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    for name in a.models:
        print(export(name, a.out_dir, a.opset, a.size), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
