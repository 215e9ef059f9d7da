#!/usr/bin/env python3
"""Writes the list of every distinct 2-D convolution of torchvision's
classification models, as each model computes at its native input size, for
the property test DefaultSchedule.EveryTorchvisionConvolutionGetsOne
(tests/cpu/test_plan.cpp), which plans each at batch 1 and 64 in every dtype
and layout convgen serves.

  tools/torchvision_convs.py --out tests/cpu/torchvision_convs.csv

The models are built and run on PyTorch's meta device (shapes only: no
weights, no arithmetic; a model whose construction computes with tensors is
built on the CPU, then moved); a forward hook on each
Conv2d records its input's shape. One row per distinct convolution (the
first model and module that has it); a model that cannot be built or run
is named at the top of the file with the reason.
"""
import argparse
import csv
import io
import os
import sys

COLUMNS = ["model", "module", "c", "c_out", "h", "w", "kh", "kw", "stride_h", "stride_w", "dilation_h",
           "dilation_w", "pad_top", "pad_bottom", "pad_left", "pad_right", "groups"]

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def native_size(models, name):
    """The input side a model's default weights were evaluated at (224 where none say)."""
    try:
        weights = models.get_model_weights(name).DEFAULT
        return int(weights.transforms.keywords.get("crop_size", 224))
    except Exception:
        return 224


def model_convs(models, name):
    """The (module name, Conv2d, input shape) of each convolution call of a model."""
    import torch
    from torch import nn

    try:
        with torch.device("meta"):
            model = models.get_model(name).eval()
    except NotImplementedError:
        # A model whose construction reads tensors (RegNet computes its
        # widths with them): built on the CPU, then moved to meta.
        model = models.get_model(name).eval().to("meta")
    # A vision transformer is built for one image size, whatever its weights'.
    side = getattr(model, "image_size", None) or native_size(models, name)
    seen = []
    names = {m: n for n, m in model.named_modules()}
    hooks = [m.register_forward_hook(lambda m, args, out: seen.append((names[m], m, tuple(args[0].shape))))
             for m in model.modules() if isinstance(m, nn.Conv2d)]
    try:
        with torch.no_grad():
            model(torch.empty(1, 3, side, side, device="meta"))
    finally:
        for h in hooks:
            h.remove()
    return seen


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="the CSV to write")
    args = parser.parse_args(argv)
    try:
        import torchvision
        from torchvision import models
    except ImportError:
        raise SystemExit("torchvision_convs.py: needs PyTorch and torchvision (pip install torch torchvision)")
    from spec_from_model import torch_conv_padding, write_whole

    rows, keys, left_out = [], set(), []
    names = models.list_models(module=models)
    for i, name in enumerate(names):
        print(f"[{i + 1}/{len(names)}] {name}", file=sys.stderr, flush=True)
        try:
            convs = model_convs(models, name)
        except Exception as e:  # named in the file: a model this torchvision cannot build or run on meta
            left_out.append(f"{name}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
            continue
        for module, conv, shape in convs:
            _, c, h, w = shape
            row = [c, conv.out_channels, h, w, *conv.kernel_size, *conv.stride, *conv.dilation,
                   *torch_conv_padding(conv), conv.groups]
            if tuple(row) not in keys:
                keys.add(tuple(row))
                rows.append([name, module] + row)
    text = io.StringIO()
    text.write(f"# Written by tools/torchvision_convs.py from torchvision {torchvision.__version__}: "
               f"{len(names)} classification models, {len(rows)} distinct convolutions.\n")
    text.write("# Left out: " + ("none.\n" if not left_out else "\n" + "".join(f"#   {m}\n" for m in left_out)))
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(COLUMNS)
    writer.writerows(rows)
    write_whole(args.out, text.getvalue())
    print(f"torchvision_convs: {len(rows)} convolutions of {len(names) - len(left_out)} models -> {args.out}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
