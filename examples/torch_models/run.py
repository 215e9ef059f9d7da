#!/usr/bin/env python3
"""torchvision networks end to end with convgen kernels inside PyTorch.

For each model (random weights, batch-norm statistics gathered on random
images so that every layer sees values of order 1, eval, fp32, TF32 off):
the eager model
(cudnn.benchmark on), the model with its depthwise conv(+BN)(+act) groups
swapped for convgen operators, the model with its dense ones swapped too, and
torch.compile of the eager model. Checks the swapped models' logits against
eager on random images, counts ATen fallbacks, and times one forward pass of
each, every one the same way: captured in a CUDA graph, median of replays.
Writes OUT/models.md and OUT/models.json.

  run.py --build-dir BUILD --library torchvision --out docs/ [--batch 1 64]
         [--models mobilenet_v2 mobilenet_v3_large efficientnet_b0] [--replays 100]

BUILD holds libconvgen_<library>.a, its header folder and libconvgen_runtime.a
(cmake -DCONVGEN_BUILD_TORCH_MODELS=ON builds library `torchvision` from
specs/torchvision_*.yaml, which tools/spec_from_model.py wrote from these models).
"""
import argparse
import copy
import datetime
import json
import os
import statistics
import subprocess
import sys
import time

import torch
import torchvision

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "integrations", "torch"))
import convgen_torch  # noqa: E402


def calibrate(model, device, batches=8):
    """Sets each BatchNorm's running statistics to those of random images
    passing through the randomly initialized network. With the defaults (mean
    0, variance 1) the activations shrink layer by layer, to logits of 1e-9
    and less, and a comparison of logits would say little."""
    for m in model.modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            m.reset_running_stats()
            m.momentum = None  # a cumulative average over the batches below
    model.train()
    with torch.no_grad():
        for _ in range(batches):
            model(torch.randn(16, 3, 224, 224, device=device))
    return model.eval()


def graph_time_ms(fn, x, replays):
    """Median time of one replay of fn(x) captured in a CUDA graph."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side), torch.no_grad():
        for _ in range(3):  # warm-up: cudnn.benchmark, compilation, one-time queries
            fn(x)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph), torch.no_grad():
        fn(x)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(replays):
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


class Progress:
    """steps done/total, the current step and an ETA, on one terminal line."""

    def __init__(self, total):
        self.total, self.done, self.start = total, 0, time.monotonic()

    def step(self, what):
        elapsed = time.monotonic() - self.start
        eta = elapsed / self.done * (self.total - self.done) if self.done else 0
        print(f"[{self.done}/{self.total}] {what} (elapsed {elapsed:.0f} s, ETA {eta:.0f} s)", flush=True)
        self.done += 1


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build-dir", required=True)
    parser.add_argument("--library", default="torchvision")
    parser.add_argument("--out", required=True, help="folder for models.md and models.json")
    parser.add_argument("--models", nargs="+", default=["mobilenet_v2", "mobilenet_v3_large", "efficientnet_b0"])
    parser.add_argument("--batch", type=int, nargs="+", default=[1, 64])
    parser.add_argument("--replays", type=int, default=100)
    parser.add_argument("--commit", default=os.environ.get("CONVGEN_COMMIT", ""))
    args = parser.parse_args()

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    convgen_torch.load(args.build_dir, args.library)
    device = torch.device("cuda")
    rows = []
    progress = Progress(len(args.models) * len(args.batch) * 4)
    for name in args.models:
        torch.manual_seed(0)
        eager = calibrate(getattr(torchvision.models, name)().to(device), device)
        variants = {
            "depthwise swapped": convgen_torch.swap(copy.deepcopy(eager), dense=False),
            "all swapped": convgen_torch.swap(copy.deepcopy(eager)),
        }
        compiled = torch.compile(eager, dynamic=False)  # one static graph per batch size
        for batch in args.batch:
            x = torch.randn(batch, 3, 224, 224, device=device)
            with torch.no_grad():
                reference = eager(x).double()
            row = {"model": name, "batch": batch, "max_abs_logit": reference.abs().max().item()}
            for label, model in variants.items():
                before = torch.ops.convgen.fallbacks()
                with torch.no_grad():
                    y = model(x).double()
                torch.cuda.synchronize()
                row[label] = {
                    "swapped_groups": model.convgen_swapped,
                    "fallbacks": torch.ops.convgen.fallbacks() - before,
                    "max_abs_error": (y - reference).abs().max().item(),
                    "relative_error": ((y - reference).abs().max() / reference.abs().max()).item(),
                }
            for label, fn in (("eager", eager), ("depthwise swapped", variants["depthwise swapped"]),
                              ("all swapped", variants["all swapped"]), ("torch.compile", compiled)):
                progress.step(f"{name} batch {batch}: {label}")
                row.setdefault(label, {})["ms"] = graph_time_ms(fn, x, args.replays)
            rows.append(row)
            print(json.dumps(row), flush=True)

    os.makedirs(args.out, exist_ok=True)
    meta = {
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__, "torchvision": torchvision.__version__,
        "commit": args.commit, "date": datetime.date.today().isoformat(),
        "method": f"CUDA graph of one forward pass, median of {args.replays} replays; fp32, TF32 off, "
                  "cudnn.benchmark on; random weights (seed 0), batch-norm statistics from random images, "
                  "random images",
        "relative_error": "max |logit - eager logit| / max |eager logit|",
    }
    with open(os.path.join(args.out, "models.json"), "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)
    lines = [
        "# torchvision networks with convgen kernels inside PyTorch",
        "",
        f"{meta['device']}, torch {meta['torch']}, torchvision {meta['torchvision']}, commit {meta['commit']}, "
        f"{meta['date']}. {meta['method']}. Written by `examples/torch_models/run.py`.",
        "",
        "*depthwise swapped*: every depthwise conv with its BatchNorm and activation is one convgen operator; "
        "*all swapped*: the dense convolutions too (their residual adds stay in PyTorch). Error: "
        f"{meta['relative_error']}, against eager on the same images.",
        "",
        "| model | batch | eager ms | torch.compile ms | depthwise swapped ms | × eager | all swapped ms | × eager "
        "| × compile | groups swapped (dw / all) | ATen fallbacks | max \\|logit\\| | max rel. error (dw / all) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        e, c, d, a = r["eager"]["ms"], r["torch.compile"]["ms"], r["depthwise swapped"], r["all swapped"]
        lines.append(
            f"| {r['model']} | {r['batch']} | {e:.3f} | {c:.3f} | {d['ms']:.3f} | {e / d['ms']:.2f} | {a['ms']:.3f} | "
            f"{e / a['ms']:.2f} | {c / a['ms']:.2f} | {d['swapped_groups']} / {a['swapped_groups']} | "
            f"{d['fallbacks']} / {a['fallbacks']} | {r['max_abs_logit']:.2f} | "
            f"{d['relative_error']:.1e} / {a['relative_error']:.1e} |")
    with open(os.path.join(args.out, "models.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
