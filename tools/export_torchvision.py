#!/usr/bin/env python3
"""Exports torchvision models with random weights (weights=None, no network) to ONNX.

Usage: .venv/bin/python tools/export_torchvision.py OUT_DIR [MODEL ...] [--opset N] [--size S]
                                                   [--dynamic]
Models: any torchvision classifier by its constructor's name (resnet50, mobilenet_v2,
vit_b_16, ...; default: resnet50 resnext50_32x4d squeezenet1_1 inception_v3), and
transformer_encoder (a 2-layer nn.TransformerEncoder, d_model 64, input [seq, batch, 64]).
Files are OUT_DIR/MODEL.onnx, or OUT_DIR/MODEL_S.onnx with --size S (input SxS instead
of 224x224, 299x299 for inception_v3; smaller inputs make quick tests; vit_b_16 is built
for that image size; for transformer_encoder S is the sequence length, default 8).
--dynamic exports the batch axis as the symbolic dimension "batch"; the files are named
MODEL[_S]_dynamic.onnx.
Run with the project venv's python (scripts/setup.sh installs torch and torchvision there).
Files already present are kept (delete them to re-export). Seeded: the same
torchvision version gives the same weights.
"""
import argparse
import os
import sys

import torch
import torchvision

INPUT_SIZE = {"inception_v3": 299, "transformer_encoder": 8}


def build(name, size):
    if name == "transformer_encoder":
        layer = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128)
        return torch.nn.TransformerEncoder(layer, num_layers=2).eval()
    ctor = getattr(torchvision.models, name)
    kwargs = {"weights": None}
    if name in ("inception_v3", "googlenet"):
        # init_weights uses scipy's truncnorm when absent; plain init keeps the export offline.
        kwargs.update(aux_logits=False, init_weights=False)
    if name.startswith("vit_"):
        kwargs.update(image_size=size)  # a ViT is built for one image size
    model = ctor(**kwargs)
    model.eval()
    return model


def export(name, out_dir, opset, size=None, dynamic=False):
    stem = name if size is None else f"{name}_{size}"
    path = os.path.join(out_dir, stem + ("_dynamic" if dynamic else "") + ".onnx")
    if os.path.exists(path):
        return path
    torch.manual_seed(0)
    if size is None:
        size = INPUT_SIZE.get(name, 224)
    model = build(name, size)
    if name == "transformer_encoder":
        x = torch.randn(size, 1, 64)
        # Batch only: torch's TorchScript-based exporter writes the sequence length of its
        # scaled_dot_product_attention as a constant (a file "dynamic" in seq fails at any
        # other length in ONNX Runtime). bench/zoo exports seq-dynamic models with dynamo.
        axes = {1: "batch"}
    else:
        x = torch.randn(1, 3, size, size)
        axes = {0: "batch"}
    kwargs = {}
    if dynamic:
        kwargs["dynamic_axes"] = {"input": axes, "logits": axes if x.dim() == 3 else {0: "batch"}}
    tmp = path + ".tmp"
    # The TorchScript-based exporter (dynamo=False), whose graphs the tests were written for;
    # bench/zoo exports with both. Gradients stay enabled for transformers: under no_grad,
    # torch takes its fused attention fast path, which that exporter cannot write.
    with torch.set_grad_enabled(name == "transformer_encoder" or name.startswith("vit_")):
        # torch's attention is scaled_dot_product_attention, which that exporter writes from
        # opset 14 on.
        if name == "transformer_encoder" or name.startswith(("vit_", "swin_", "maxvit_")):
            opset = max(opset, 14)
        torch.onnx.export(model, x, tmp, opset_version=opset, input_names=["input"],
                          output_names=["logits"], do_constant_folding=True, dynamo=False,
                          **kwargs)
    os.replace(tmp, path)
    return path


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out_dir")
    p.add_argument("models", nargs="*",
                   default=["resnet50", "resnext50_32x4d", "squeezenet1_1", "inception_v3"])
    p.add_argument("--opset", type=int, default=13)
    p.add_argument("--size", type=int, default=None)
    p.add_argument("--dynamic", action="store_true")
    a = p.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    for name in a.models:
        print(export(name, a.out_dir, a.opset, a.size, a.dynamic), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
