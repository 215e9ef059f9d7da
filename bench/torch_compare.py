#!/usr/bin/env python3
"""Time PyTorch on every workload of a convgen benchmark JSON and merge the numbers in.

convgen_bench_depthwise and convgen_bench_dense write one row per workload
with convgen and cuDNN timings.  This script times the same workloads through
PyTorch, the way a PyTorch user would write them (F.conv2d, with groups=C for
the depthwise rows and groups=1 for the dense ones, followed by an unfused
epilogue), in each row's dtype and layout (its "dtype" and "layout" keys;
float32 NCHW where it has none): float16 and bfloat16 tensors as AMP holds
them, and NHWC as torch.channels_last input, weights, epilogue parameters and
residual, with the same two methods the benchmarks use:

  hot   100 launches captured in one CUDA graph; the graph is replayed several
        times after warm-up and the median replay time / 100 is reported.
  cold  triton.testing.do_bench(fn, return_mode="median"), which flushes the L2
        cache before every run.

Which rows: the JSON's "rows" (a depthwise or a dense benchmark JSON), and
the rows of its "dense" object when it has one (scripts/gpu_check.sh puts the
dense benchmark's JSON there).  A row with a "c_out" key is a dense row.

Keys added to every row (microseconds unless noted):
  torch_hot_us        full op (conv + epilogue), hot
  torch_plain_hot_us  conv alone, hot
  torch_cold_us       full op, cold
  torch_frac_ceiling  floor_us / torch_cold_us (fraction of the copy ceiling)
  torch_error         only present when timing that row failed
and to every dense row:
  torch_residual_hot_us  conv + epilogue + a residual tensor added before the activation, hot
  torch_plain_tflops     flops / torch_plain_hot_us / 1e6 (TFLOP/s of the conv alone)
  torch_frac_roofline    roofline_us / torch_cold_us

Progress goes to stderr; the merged JSON is rewritten after every row so that
a run cut short still leaves the rows done so far.
"""

import argparse
import csv
import json
import math
import os
import statistics
import sys
import time

import epilogue_words
import storage_words
from results import all_rows, dense_object, is_dense, load


def log(msg):
    print(f"[torch_compare] {msg}", file=sys.stderr, flush=True)


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        description="Time PyTorch (F.conv2d + unfused epilogue) on every row of a "
        "convgen_bench_depthwise or convgen_bench_dense JSON and write the merged JSON.")
    p.add_argument("--json", required=True,
                   help="benchmark JSON written by convgen_bench_depthwise or convgen_bench_dense, "
                   "optionally with the dense one under the key 'dense'")
    p.add_argument("--out", required=True, help="where to write the merged JSON")
    p.add_argument("--csv", default="bench/depthwise.csv",
                   help="workload CSV, used only to find each row's padding when the JSON "
                   "rows do not carry it (default: %(default)s)")
    p.add_argument("--launches", type=int, default=100,
                   help="launches captured in one CUDA graph for hot timing (default: %(default)s)")
    p.add_argument("--replays", type=int, default=10,
                   help="timed graph replays; the median is kept (default: %(default)s, minimum 5)")
    p.add_argument("--warmup", type=int, default=3,
                   help="eager warm-up calls before capture, and untimed replays before timing "
                   "(default: %(default)s)")
    p.add_argument("--suite", action="append", default=None,
                   help="only time rows of this suite (repeatable); other rows are copied unchanged")
    p.add_argument("--no-cold", action="store_true", help="skip the cold (L2-flushed) timing")
    p.add_argument("--seed", type=int, default=1234, help="random seed for the inputs")
    args = p.parse_args(argv)
    args.replays = max(args.replays, 5)
    return args


# ---------------------------------------------------------------------------
# Padding.  The benchmark rows may not say how each workload was padded, so
# look in the row first, then in the workload CSV, then guess "same".
# ---------------------------------------------------------------------------

def workload_key(d):
    """Fields that identify a workload, identical for a JSON row and a CSV line."""
    return (str(d["suite"]).strip(), int(d["n"]), int(d["c"]), int(d["h"]), int(d["w"]),
            int(d["kh"]), int(d["kw"]), int(d["stride"]), int(d["mult"]),
            str(d["epilogue"]).strip(), *storage_words.of_row(d), storage_words.math_of(d))


def load_csv_pads(path):
    """Map workload_key -> set of pad strings from the workload CSV (empty if unreadable)."""
    pads = {}
    if not path or not os.path.exists(path):
        return pads
    with open(path, newline="") as f:
        lines = [ln for ln in f if ln.strip() and not ln.lstrip().startswith("#")]
    for rec in csv.DictReader(lines):
        try:
            rec = {k.strip(): (v or "").strip() for k, v in rec.items() if k}
            pads.setdefault(workload_key(rec), set()).add(rec["pad"])
        except (KeyError, ValueError):
            continue  # a malformed line must not stop the timing of the others
    return pads


def pad_spec(row, csv_pads):
    """Return 'same', 'valid' or an int for this row."""
    for key in ("pad", "padding"):
        if key in row and row[key] is not None:
            val = row[key]
            if isinstance(val, str) and not val.strip().lstrip("-").isdigit():
                return val.strip()
            return int(val)
    try:
        found = csv_pads.get(workload_key(row), set())
    except (KeyError, TypeError, ValueError):  # a dense row without pad: no CSV key to look up
        found = set()
    if len(found) == 1:
        return next(iter(found))
    name = str(row.get("name", ""))
    if "valid" in name:
        return "valid"
    if found:
        log(f"  {name}: CSV has several paddings {sorted(found)} for this shape; assuming 'same'")
    else:
        log(f"  {name}: padding not in the row nor the CSV; assuming 'same'")
    return "same"


def padding_tuple(spec, kh, kw):
    """PyTorch padding for a 'same' / 'valid' / int spec: same = (k-1)//2 on each side."""
    if spec == "same":
        return ((kh - 1) // 2, (kw - 1) // 2)
    if spec == "valid":
        return (0, 0)
    return (int(spec), int(spec))


# ---------------------------------------------------------------------------
# The ops being timed, written the way a PyTorch user writes them.
# ---------------------------------------------------------------------------

def make_ops(row, padding, device, gen):
    """Build {"full", "plain", "residual"} closures over random inputs for one row.

    Depthwise rows run F.conv2d with groups=C (C*mult output channels), dense
    rows with groups=1 and c_out output channels; the code is otherwise the
    same.  "residual" (dense rows only, else None) is the full op with a
    tensor shaped like the output added before the activation.  Every tensor
    is of the row's dtype; with layout NHWC the 4-d ones are channels_last.
    """
    import torch
    import torch.nn.functional as F

    n, c, h, w = (int(row[k]) for k in ("n", "c", "h", "w"))
    kh, kw, stride = (int(row[k]) for k in ("kh", "kw", "stride"))
    word = str(row.get("epilogue", "none"))
    split = epilogue_words.split(word)
    if split is None:
        raise ValueError(f"unknown epilogue {word!r}")
    epilogue, activation_word = split
    dtype_word, layout_word = storage_words.of_row(row)
    dtype = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}[dtype_word]
    memory_format = {"NCHW": torch.contiguous_format, "NHWC": torch.channels_last}[layout_word]
    dense = is_dense(row)
    if dense:
        groups, cout = 1, int(row["c_out"])
    else:
        groups, cout = c, c * int(row["mult"])

    def rand(*shape, offset=0.0, scale=1.0):
        # Random, never all zeros: zeros can run faster than real data.
        t = torch.randn(*shape, generator=gen, dtype=torch.float32)
        t = (t * scale + offset).to(device=device, dtype=dtype)
        return t.contiguous(memory_format=memory_format) if t.dim() == 4 else t

    x = rand(n, c, h, w)
    weight = rand(cout, c // groups, kh, kw, scale=1.0 / math.sqrt((c // groups) * kh * kw))
    scale = rand(cout, offset=1.0, scale=0.1).view(1, -1, 1, 1)
    shift = rand(cout, scale=0.1).view(1, -1, 1, 1)
    bias = rand(cout, scale=0.1).view(1, -1, 1, 1)
    residual = None
    if dense:
        out_h = (h + 2 * padding[0] - kh) // stride + 1
        out_w = (w + 2 * padding[1] - kw) // stride + 1
        residual = rand(n, cout, out_h, out_w)

    def plain():
        return F.conv2d(x, weight, None, stride, padding, 1, groups)

    # The epilogue and activation as PyTorch users write them, by their spec words.
    affine = {
        "none": lambda y: y,
        "bias": lambda y: y + bias,
        "scale_shift": lambda y: y * scale + shift,
    }[epilogue]
    activation = {
        "none": lambda y: y,
        "relu": torch.relu,
        "relu6": lambda y: torch.clamp(y, 0, 6),
        "silu": F.silu,
        "hardswish": F.hardswish,
    }[activation_word]

    def full():
        return activation(affine(F.conv2d(x, weight, None, stride, padding, 1, groups)))

    def with_residual():
        return activation(affine(F.conv2d(x, weight, None, stride, padding, 1, groups)) + residual)

    return {"full": full, "plain": plain, "residual": with_residual if dense else None}


# ---------------------------------------------------------------------------
# Timing methods.
# ---------------------------------------------------------------------------

def time_hot_us(fn, launches, replays, warmup):
    """Median replay time of a CUDA graph holding `launches` calls of fn, per call, in µs."""
    import torch

    # Warm up on a side stream, as graph capture requires; this is also where
    # cudnn.benchmark picks its algorithm, which must not happen inside capture.
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(max(warmup, 1)):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()

    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        # Results are dropped at once, so the graph's private pool reuses the
        # same few buffers instead of holding `launches` outputs.
        for _ in range(launches):
            fn()
    torch.cuda.synchronize()

    for _ in range(max(warmup, 1)):
        graph.replay()
    torch.cuda.synchronize()

    times_ms = []
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    for _ in range(replays):
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        times_ms.append(start.elapsed_time(end))
    del graph
    return statistics.median(times_ms) / launches * 1000.0


def time_cold_us(fn):
    """Median time of one call with L2 flushed before each run, in µs (triton's do_bench)."""
    import triton.testing

    return float(triton.testing.do_bench(fn, return_mode="median")) * 1000.0


# ---------------------------------------------------------------------------
# Driver.
# ---------------------------------------------------------------------------

def setup_torch():
    try:
        import torch
    except ImportError:
        raise SystemExit("torch_compare: needs PyTorch (pip install torch), and triton for its timings")

    if not torch.cuda.is_available():
        raise SystemExit("torch_compare: no CUDA device visible to PyTorch")
    # float32 rows without TF32: convgen's float32 kernels of math fp32 round
    # no input to TF32, so it would not compare (rows of math tf32 allow it:
    # time_row). float16 and bfloat16 rows take whatever cuDNN picks (tensor
    # cores), as AMP users get.
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    # Let cuDNN pick its fastest algorithm per shape, as a tuned PyTorch user would.
    torch.backends.cudnn.benchmark = True
    return torch


def time_row(row, args, csv_pads, gen):
    """Return the torch_* keys for one row (errors become torch_error, not exceptions)."""
    import torch

    dense = is_dense(row)
    out = {"torch_hot_us": None, "torch_plain_hot_us": None, "torch_cold_us": None,
           "torch_frac_ceiling": None}
    if dense:
        out.update({"torch_residual_hot_us": None, "torch_plain_tflops": None,
                    "torch_frac_roofline": None})
    # A row of math tf32 against PyTorch's default (allow_tf32 on for cuDNN's
    # convolutions); fp32 and 3xtf32 rows against fp32 without TF32.
    torch.backends.cudnn.allow_tf32 = storage_words.math_of(row) == "tf32"
    try:
        kh, kw = int(row["kh"]), int(row["kw"])
        padding = padding_tuple(pad_spec(row, csv_pads), kh, kw)
        ops = make_ops(row, padding, "cuda", gen)
        out["torch_hot_us"] = time_hot_us(ops["full"], args.launches, args.replays, args.warmup)
        out["torch_plain_hot_us"] = time_hot_us(ops["plain"], args.launches, args.replays, args.warmup)
        if dense:
            out["torch_residual_hot_us"] = time_hot_us(ops["residual"], args.launches, args.replays,
                                                       args.warmup)
            flops = row.get("flops")
            if flops and out["torch_plain_hot_us"]:
                out["torch_plain_tflops"] = float(flops) / out["torch_plain_hot_us"] / 1e6
        if not args.no_cold:
            out["torch_cold_us"] = time_cold_us(ops["full"])
            floor = row.get("floor_us")
            if floor and out["torch_cold_us"]:
                out["torch_frac_ceiling"] = float(floor) / out["torch_cold_us"]
            roofline = row.get("roofline_us")
            if dense and roofline and out["torch_cold_us"]:
                out["torch_frac_roofline"] = float(roofline) / out["torch_cold_us"]
    except Exception as exc:  # one bad row (OOM, odd shape) must not lose the others
        out["torch_error"] = f"{type(exc).__name__}: {exc}"
    finally:
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
    return out


def write_json(path, data):
    """Write atomically so a reader never sees half a file."""
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)


def fmt(v):
    return "-" if v is None else f"{v:.2f}"


def main(argv=None):
    args = parse_args(argv)
    data = load(args.json)
    # Depthwise (or dense) rows at the top level, then the dense benchmark's rows.
    dense_doc = dense_object(data) or {}
    rows = all_rows(data)
    torch = setup_torch()
    gen = torch.Generator().manual_seed(args.seed)
    csv_pads = load_csv_pads(args.csv)

    gpu = torch.cuda.get_device_name()
    for doc in (data, dense_doc):
        if doc.get("gpu") and str(doc["gpu"]) not in gpu and gpu not in str(doc["gpu"]):
            log(f"WARNING: benchmark JSON says GPU {doc['gpu']!r} but PyTorch sees {gpu!r}")
    # The benchmark may not know its commit (no git on the GPU machine);
    # gpu_check.sh exports the one it found.
    if str(data.get("commit") or "").strip() in ("", "unknown") and os.environ.get("CONVGEN_COMMIT"):
        data["commit"] = os.environ["CONVGEN_COMMIT"]
    data["torch_version"] = torch.__version__
    data["torch_cudnn_version"] = torch.backends.cudnn.version()
    data["torch_gpu"] = gpu
    data["torch_method"] = {
        "hot": f"{args.launches} launches in one CUDA graph, median of {args.replays} replays / "
               f"{args.launches}",
        "cold": "triton.testing.do_bench(return_mode='median'), L2 flushed before each run",
        "storage": "each row's dtype; layout NHWC: torch.channels_last input, weights and residual; math tf32: "
                   "torch.backends.cudnn.allow_tf32 = True (PyTorch's default), other rows False",
    }
    log(f"torch {torch.__version__}, cuDNN {data['torch_cudnn_version']}, GPU {gpu}, "
        f"{len(rows)} rows")

    failures = 0
    for i, row in enumerate(rows, 1):
        name = row.get("name", f"row{i}")
        if args.suite and row.get("suite") not in args.suite:
            continue
        t0 = time.time()
        res = time_row(row, args, csv_pads, gen)
        row.update(res)
        row["torch_version"] = torch.__version__
        if "torch_error" in res:
            failures += 1
            log(f"[{i}/{len(rows)}] {row.get('suite')}/{name}: FAILED {res['torch_error']}")
        else:
            log(f"[{i}/{len(rows)}] {row.get('suite')}/{name} {' '.join(storage_words.of_row(row))}: "
                f"hot {fmt(res['torch_hot_us'])} us, "
                f"plain {fmt(res['torch_plain_hot_us'])} us, cold {fmt(res['torch_cold_us'])} us "
                f"(convgen hot {fmt(row.get('convgen_hot_us'))} us) [{time.time() - t0:.1f}s]")
        write_json(args.out, data)

    write_json(args.out, data)
    log(f"wrote {args.out} ({failures} row(s) failed)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
