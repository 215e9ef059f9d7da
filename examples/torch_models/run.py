#!/usr/bin/env python3
"""torchvision networks end to end with convgen kernels inside PyTorch, in
the precision and layout they are deployed in (default: float16
channels_last).

For each model (random weights, batch-norm statistics gathered on random
images so that every layer sees values of order 1, eval) and batch, four
ways to run it, each timed the same way (captured in a CUDA graph, median of
replays):
  eager                  the model in --dtype and memory format (cudnn.benchmark on);
  torch.compile          the same, compiled;
  convgen                convgen_torch.swap(model, x, policy="faster"): convgen's kernel
                         wherever it is faster than PyTorch's for that layer on x;
  convgen + compile      that model compiled with fullgraph=True.
The logits of each are compared with eager's in the same dtype and with a
float32 reference (the same weights and images, TF32 off), the ATen
fallbacks counted, and what the swap kept and why recorded. For float32,
eager is timed with PyTorch's default TF32 convolutions too; with --tf32,
TF32 is on everywhere, and convgen's float32 dense calls run its math tf32
kernels where the library has them (as the operators do whenever
cudnn.allow_tf32 is on).

Results merge into OUT/<stem>.json (rows of other models and batches are
kept, so models can be measured in separate runs); OUT/<stem>.md and
OUT/<stem>.png are written from all of its rows. The stem is `models` for
float16 channels_last, else models_<dtype>[_channels_last].

  run.py --build-dir BUILD --library torchvision --out docs/ [--dtype float16] [--channels-last | --nchw]
         [--batch 1 64] [--models mobilenet_v2 ...] [--replays 100]

BUILD holds libconvgen_<library>.a, its header folder and libconvgen_runtime.a
(cmake -DCONVGEN_BUILD_TORCH_MODELS=ON builds library `torchvision` from
specs/torchvision_*.yaml, which tools/spec_from_model.py wrote from these models).
"""
import argparse
import copy
import datetime
import json
import os
import sys
import time

import torch
import torchvision

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "integrations", "torch"))
import convgen_torch  # noqa: E402

MODELS = ["mobilenet_v2", "mobilenet_v3_large", "efficientnet_b0", "resnet50", "convnext_tiny"]
LEFT_OUT = {"regnet_y_400mf": "grouped convolutions (groups of 8 channels): convgen serves dense and depthwise ones"}
VARIANTS = ["eager", "torch.compile", "convgen", "convgen + compile"]
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


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
    """Median time of one forward pass fn(x), captured in a CUDA graph."""
    return convgen_torch.graph_time_us(lambda: fn(x), calls=1, replays=replays) / 1000.0


class Progress:
    """steps done/total, the current step and an ETA, on one line each."""

    def __init__(self, total):
        self.total, self.done, self.start = total, 0, time.monotonic()

    def step(self, what):
        elapsed = time.monotonic() - self.start
        eta = elapsed / self.done * (self.total - self.done) if self.done else 0
        print(f"[{self.done}/{self.total}] {what} (elapsed {elapsed:.0f} s, ETA {eta:.0f} s)", flush=True)
        self.done += 1


def relative_error(y, reference):
    return ((y.double() - reference).abs().max() / reference.abs().max()).item()


def measure(name, batch, args, progress):
    """One model at one batch: the four variants' times, errors and the swap's report."""
    device = torch.device("cuda")
    dtype = DTYPES[args.dtype]
    memory_format = torch.channels_last if args.channels_last else torch.contiguous_format
    torch.manual_seed(0)
    reference_model = calibrate(getattr(torchvision.models, name)().to(device), device)
    model = copy.deepcopy(reference_model).to(dtype=dtype, memory_format=memory_format)
    x = torch.randn(batch, 3, 224, 224, device=device).to(dtype).contiguous(memory_format=memory_format)
    tf32, torch.backends.cudnn.allow_tf32 = torch.backends.cudnn.allow_tf32, False
    with torch.no_grad():
        reference = reference_model(x.float()).double()  # float32, TF32 off
    torch.backends.cudnn.allow_tf32 = tf32
    row = {"model": name, "batch": batch, "commit": args.commit, "max_abs_logit": reference.abs().max().item()}
    progress.step(f"{name} batch {batch}: swap (policy faster: timing each layer)")
    swapped = convgen_torch.swap(model, x, policy="faster")
    report = swapped.convgen_report
    row["swap"] = {"groups": len(report), "swapped": swapped.convgen_swapped, "report": report}
    runs = {"eager": model, "torch.compile": torch.compile(model, dynamic=False), "convgen": swapped,
            "convgen + compile": torch.compile(swapped, fullgraph=True, dynamic=False)}
    with torch.no_grad():
        eager_logits = model(x).double()
    for label, fn in runs.items():
        progress.step(f"{name} batch {batch}: {label}")
        before = torch.ops.convgen.fallbacks()
        with torch.no_grad():
            y = fn(x).double()
        torch.cuda.synchronize()
        row[label] = {
            "fallbacks": torch.ops.convgen.fallbacks() - before,
            "error_vs_eager": relative_error(y, eager_logits),
            "error_vs_float32": relative_error(y, reference),
            "ms": graph_time_ms(fn, x, args.replays),
        }
    if args.dtype == "float32" and not args.tf32:  # PyTorch's default: TF32 convolutions
        torch.backends.cudnn.allow_tf32 = True
        row["eager, TF32"] = {"ms": graph_time_ms(model, x, args.replays)}
        torch.backends.cudnn.allow_tf32 = False
    return row


def kept_summary(report):
    """How many groups the swap kept on ATen, by reason."""
    slower = sum(1 for e in report if not e["swapped"] and "convgen_us" in e)
    other = {}
    for e in report:
        if not e["swapped"] and "convgen_us" not in e:
            why = e["why"].split(":")[0]  # "ATen serves it: <the problem's reason>" counts as one reason
            other[why] = other.get(why, 0) + 1
    parts = [f"{slower} slower"] if slower else []
    parts += [f"{n} {why}" for why, n in other.items()]
    return ", ".join(parts) or "none"


def write_report(out, stem, meta, rows):
    rows = sorted(rows, key=lambda r: (MODELS.index(r["model"]) if r["model"] in MODELS else 99, r["batch"]))
    with open(os.path.join(out, stem + ".json"), "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)
    tf32 = meta["dtype"] == "float32" and not meta.get("tf32")
    # Rows merged from other runs say which GPU and commit measured them.
    several_gpus = len({r["device"] for r in rows}) > 1
    several_commits = len({r.get("commit", "") for r in rows}) > 1
    lines = [
        f"# torchvision networks with convgen kernels inside PyTorch: {meta['dtype']}"
        f"{' channels_last' if meta['channels_last'] else ' NCHW'}{', TF32 on' if meta.get('tf32') else ''}",
        "",
        f"{meta['device']}, torch {meta['torch']}, torchvision {meta['torchvision']}, commit {meta['commit']}, "
        f"{meta['date']}. {meta['method']}. Written by `examples/torch_models/run.py`.",
        "",
        "*convgen*: `convgen_torch.swap(model, x, policy=\"faster\")`, convgen's kernel (conv, batch norm, residual "
        "add and activation in one) for each layer where it measured faster than what PyTorch runs for that layer "
        "on the same input; *convgen + compile*: that model under `torch.compile(fullgraph=True)`. "
        f"Errors: {meta['relative_error']}, against eager in the same dtype and against the float32 model.",
        "",
        "| model | batch | " + ("GPU | " if several_gpus else "") + ("commit | " if several_commits else "") +
        "eager ms | " + ("eager TF32 ms | " if tf32 else "") +
        "compile ms | convgen ms | × eager | convgen + compile ms | × compile | layers swapped | kept on ATen | "
        "fallbacks | error vs eager | error vs fp32 (eager / convgen) |",
        "|---|---:|" + ("---|" if several_gpus else "") + ("---|" if several_commits else "") + "---:|" +
        ("---:|" if tf32 else "") +
        "---:|---:|---:|---:|---:|---:|---|---:|---:|---:|",
    ]
    for r in rows:
        e, c, s, sc = (r[v]["ms"] for v in VARIANTS)
        fallbacks = r["convgen"]["fallbacks"] + r["convgen + compile"]["fallbacks"]
        lines.append(
            f"| {r['model']} | {r['batch']} | " + (f"{r['device']} | " if several_gpus else "") +
            (f"{r.get('commit', '')} | " if several_commits else "") + f"{e:.3f} | " +
            (f"{r.get('eager, TF32', {}).get('ms', float('nan')):.3f} | " if tf32 else "") +
            f"{c:.3f} | {s:.3f} | {s / e:.2f} | {sc:.3f} | {sc / c:.2f} | "
            f"{r['swap']['swapped']} / {r['swap']['groups']} | {kept_summary(r['swap']['report'])} | {fallbacks} | "
            f"{max(r['convgen']['error_vs_eager'], r['convgen + compile']['error_vs_eager']):.1e} | "
            f"{r['eager']['error_vs_float32']:.1e} / {r['convgen']['error_vs_float32']:.1e} |")
    lines += ["", "Left out: " + "; ".join(f"{m}: {why}" for m, why in LEFT_OUT.items()) + ".", "",
              f"![times]({stem}.png)", ""]
    with open(os.path.join(out, stem + ".md"), "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("run.py: no matplotlib: the plot is left out", file=sys.stderr)
        return
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for ax, batch in zip(axes, sorted({r["batch"] for r in rows})[:2]):
        chosen = [r for r in rows if r["batch"] == batch]
        width = 0.2
        for i, v in enumerate(VARIANTS):
            ax.bar([j + (i - 1.5) * width for j in range(len(chosen))],
                   [r[v]["ms"] / r["eager"]["ms"] for r in chosen], width, label=v)
        ax.axhline(1.0, color="gray", linewidth=0.8)
        ax.set_xticks(range(len(chosen)))
        ax.set_xticklabels([r["model"] for r in chosen], rotation=20, fontsize=8)
        ax.set_ylabel("time / eager's")
        ax.set_title(f"batch {batch}")
        ax.legend(fontsize=8)
    fig.suptitle(f"{meta['dtype']}{' channels_last' if meta['channels_last'] else ''}, {meta['device']}, "
                 f"commit {meta['commit']}", fontsize=9)
    fig.tight_layout()
    fig.savefig(os.path.join(out, stem + ".png"), dpi=110)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build-dir", required=True)
    parser.add_argument("--library", default="torchvision")
    parser.add_argument("--out", required=True, help="folder of the results (merged into its JSON)")
    parser.add_argument("--models", nargs="+", default=MODELS)
    parser.add_argument("--batch", type=int, nargs="+", default=[1, 64])
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="float16")
    layout = parser.add_mutually_exclusive_group()
    layout.add_argument("--channels-last", dest="channels_last", action="store_true", default=None,
                        help="run the models channels_last (the default for float16 and bfloat16)")
    layout.add_argument("--nchw", dest="channels_last", action="store_false",
                        help="run them contiguous (the default for float32)")
    parser.add_argument("--tf32", action="store_true",
                        help="float32 with PyTorch's default TF32 convolutions (cudnn.allow_tf32) everywhere: eager, "
                             "compile, the swap's timing of PyTorch's layers, and convgen's dense calls (its math tf32 "
                             "kernels where the library has them) (default: TF32 off)")
    parser.add_argument("--replays", type=int, default=100)
    parser.add_argument("--commit", default=os.environ.get("CONVGEN_COMMIT", ""))
    args = parser.parse_args()
    if args.tf32 and args.dtype != "float32":
        parser.error("--tf32 is for --dtype float32")
    if args.channels_last is None:
        args.channels_last = args.dtype != "float32"
    stem = "models" if (args.dtype, args.channels_last) == ("float16", True) else \
        f"models_{args.dtype}{'_channels_last' if args.channels_last else ''}{'_tf32' if args.tf32 else ''}"

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = args.tf32
    torch.backends.cudnn.benchmark = True
    convgen_torch.load(args.build_dir, args.library)
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, stem + ".json")
    device = torch.cuda.get_device_name()
    rows = []
    if os.path.exists(path):
        with open(path) as f:
            earlier = json.load(f)
        rows = [r for r in earlier["rows"] if not (r["model"] in args.models and r["batch"] in args.batch)]
        for r in rows:  # rows written before each row named its GPU: the report's
            r.setdefault("device", earlier["meta"]["device"])
    progress = Progress(len(args.models) * len(args.batch) * (len(VARIANTS) + 1))
    for name in args.models:
        for batch in args.batch:
            row = measure(name, batch, args, progress)
            row["device"] = device
            rows.append(row)
            print(json.dumps({k: v for k, v in row.items() if k != "swap"}), flush=True)
    # Rows merged from earlier runs keep their commit and GPU: the report
    # names every one.
    meta = {
        "device": ", ".join(sorted({r["device"] for r in rows})),
        "torch": torch.__version__, "torchvision": torchvision.__version__,
        "commit": ", ".join(sorted({r.get("commit", "") for r in rows})),
        "date": datetime.date.today().isoformat(),
        "dtype": args.dtype, "channels_last": args.channels_last, "tf32": args.tf32,
        "method": f"CUDA graph of one forward pass, median of {args.replays} replays; {args.dtype}"
                  f"{', channels_last' if args.channels_last else ', NCHW'}; "
                  f"{'TF32 on (PyTorch default) everywhere' if args.tf32 else 'TF32 off unless a column says TF32'}; "
                  "cudnn.benchmark on; random weights (seed 0), batch-norm statistics from random images, "
                  "random images",
        "relative_error": "max |logit - reference logit| / max |reference logit|",
    }
    write_report(args.out, stem, meta, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
