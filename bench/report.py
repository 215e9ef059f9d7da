#!/usr/bin/env python3
"""Write docs/benchmarks.md and docs/benchmarks.json from the merged benchmark JSON.

The markdown page states when, where and on which commit the numbers were
taken, how each number was measured, and gives, per dtype x layout of the
depthwise rows (float32 NCHW first), one table per suite and a table of the
performance targets (TARGETS) evaluated on each of its rows, then one table
of the dense conv2d rows. The targets' verdicts are summed up at the top.  The JSON is the same data in a
stable shape for other tools: a top-level object with gpu, commit, date,
copy_ceiling_tbps and rows (depthwise), every row carrying at least the keys
in REQUIRED_ROW_KEYS (times in µs, null where not measured), and, when the
input had dense rows, "dense": an object with its own gpu, commit, date,
copy_ceiling_tbps, fp32_peak_tflops, fp32_peak_method and rows, each row
carrying at least DENSE_REQUIRED_ROW_KEYS.

Dense rows are those of the input's "dense" object (as scripts/gpu_check.sh
writes it) and any top-level row with a "c_out" key (a convgen_bench_dense
JSON given directly).

Each depthwise row of benchmarks.json carries "dtype", "layout" and
"targets" ({target id: {value, limit, met}} for the targets that apply to
it; met is null where a number it needs was not measured), and the document
a "targets" summary and, with --baseline, the previous run it compared the
float32 NCHW rows with ("baseline").

Depthwise rows measured with a tuned library (convgen_bench_depthwise built
with CONVGEN_BENCH_TUNING: rows carry tuned_hot_us, tuned_schedule, ...) add
four columns to their suite's table (default hot, tuned hot, speedup, tuned
schedule) and a summary of the tuned library; without them the page and the
JSON are as before.
"""

import argparse
import json
import math
import os
import sys

from results import (DEFAULT_STORAGE, dense_document, depthwise_rows, fraction, group_by_storage, group_by_suite,
                     load, num, ratio, run_meta, storage, storage_title)
from storage_words import element_bytes, of_row

REQUIRED_ROW_KEYS = [
    "suite", "name", "n", "c", "h", "w", "kh", "kw", "stride", "mult", "epilogue", "dtype", "layout",
    "floor_us", "convgen_hot_us", "convgen_cold_us", "convgen_noepilogue_hot_us",
    "cudnn_hot_us", "torch_hot_us", "torch_plain_hot_us",
]

DENSE_REQUIRED_ROW_KEYS = [
    "suite", "name", "n", "c", "c_out", "h", "w", "kh", "kw", "stride", "epilogue", "flops",
    "floor_us", "roofline_us", "convgen_hot_us", "convgen_cold_us", "convgen_noepilogue_hot_us",
    "convgen_residual_hot_us", "cudnn_hot_us", "cudnn_cold_us", "torch_hot_us", "torch_plain_hot_us",
    "tflops", "convgen_frac_roofline", "fused_plain_ratio",
]

# Top-level keys of the dense benchmark copied through to benchmarks.json's "dense" object.
DENSE_META_KEYS = ["gpu", "commit", "date", "copy_ceiling_tbps", "fp32_peak_tflops", "fp32_peak_method",
                   "cublas_version", "cudnn_version"]
# ... and these when present (a dense benchmark built with a tuning database).
DENSE_OPTIONAL_META_KEYS = ["tuning_db", "tensor_peak_tflops", "tensor_peak_method", "tf32_peak_tflops",
                            "tf32_peak_method"]

# Top-level keys copied through to benchmarks.json when present.
META_KEYS = ["gpu", "commit", "date", "copy_ceiling_tbps", "torch_version",
             "torch_cudnn_version", "torch_method", "tuning_db", "runs"]

TABLE_COLUMNS = [
    "workload (N×C×H×W k s mult epilogue)", "specialized", "floor µs", "convgen hot µs",
    "convgen cold µs", "convgen no-epilogue hot µs", "cuDNN hot µs", "PyTorch hot µs",
    "PyTorch plain hot µs", "convgen % of ceiling (cold)", "copy % of ceiling (cold)", "speedup vs cuDNN (hot)",
    "speedup vs PyTorch (hot)",
]

# Added to a suite's table when its rows were measured with a tuned library.
TUNED_TABLE_COLUMNS = ["default hot µs", "tuned hot µs", "tuned speedup (hot)", "tuned schedule"]

# A tuned kernel this much slower than the default (hot) is counted as slower.
TUNED_SLOWER_MARGIN = 1.02
# Rows where the default kernel reaches less than this fraction of what a copy
# of the same bytes reaches (cold) have room left for a better schedule.
TUNED_HEADROOM = 0.9

METHOD_TEXT = """\
## How each number was taken

Each section below names the data type and memory layout of its rows
(float32 NCHW first: the same workloads measured the same way as before
those sections existed); the depthwise workloads of `bench/depthwise.csv` run
in each. Numbers are on random (never zero) inputs, in microseconds per
launch unless marked otherwise; every library reads and writes tensors of the
section's dtype and layout (NHWC: `torch.channels_last`; the depthwise filter
as each library takes it) and accumulates in float32.

- **floor µs**: the fewest bytes the workload must move through device memory
  (each input read once, the output written once) divided by the copy ceiling,
  the device-to-device copy bandwidth measured by the benchmark (bytes read plus
  bytes written). No kernel can be much faster than this.
- **hot**: 100 launches captured in one CUDA graph; the graph is replayed
  several times after warm-up and the median replay time is divided by 100.
  Inputs that fit in L2 stay there, so this is the in-network, back-to-back case.
- **cold**: the L2 cache is flushed before every launch and the median is kept.
  convgen and cuDNN are timed this way by `convgen_bench_depthwise`; PyTorch by
  `triton.testing.do_bench(fn, return_mode="median")`, which flushes L2 itself.
- **convgen**: the kernel convgen generated for the workload, epilogue fused.
  *convgen no-epilogue* is the same workload generated without the epilogue,
  which shows what the fused epilogue costs.
- **specialized**: `yes` when a kernel specialised for this exact workload ran,
  `no` when a generic convgen kernel did.
- **cuDNN**: the convolution alone (groups = C, no epilogue) through cuDNN's
  legacy C API, with the fastest hot of the algorithms
  `cudnnFindConvolutionForwardAlgorithmEx` ran within 4× of its fastest (Find
  times each once, and close ones swap places from run to run), timed by the benchmark with the
  same hot and cold methods as convgen;
  the algorithm is in `benchmarks.json` (`cudnn_algo`). float32: FMA math (no
  TF32); float16 / bfloat16: `CUDNN_DATA_HALF` / `CUDNN_DATA_BFLOAT16` tensors
  (NHWC: `CUDNN_TENSOR_NHWC`, filter too), compute type float, tensor cores
  allowed.
- **PyTorch hot**: the op as PyTorch users write it:
  `F.conv2d(x, w, stride=s, padding=k//2 or 0, groups=C)` followed by the
  epilogue as separate tensor ops (`y * scale.view(1,-1,1,1) + shift.view(...)`,
  `torch.relu` / `torch.clamp(y, 0, 6)`, `+ bias.view(...)`), with
  `torch.backends.cudnn.benchmark = True` and TF32 off, on tensors of the
  section's dtype (NHWC: input, weights and parameters `channels_last`).
  *PyTorch plain* is the `F.conv2d` call alone.
- **convgen % of ceiling (cold)**: floor µs / convgen cold µs.
- **copy % of ceiling (cold)**: floor µs / the cold time of a device-to-device
  `cudaMemcpyAsync` that reads and writes as many bytes as the workload, timed
  in the same run. Small workloads do not reach the ceiling even as a copy
  (launch, ramp-up and tail take a few µs), so this is what a kernel of that
  size can reach.
- **speedup vs X (hot)**: X hot µs / convgen hot µs; above 1× convgen is faster.
- **copy rate** (targets): copy cold µs / convgen cold µs, the fraction of a
  same-size copy's rate the kernel reaches cold (convgen % of ceiling over
  copy % of ceiling); 1× is as fast as the copy.
- **targets**: each section's *Targets* table gives, per row, the measured
  value of every target that applies to it, its limit, and whether it is
  met; *not measured* where a number it needs is missing.
"""

TUNED_METHOD_TEXT = """\
- **tuned**: the kernel convgen generated for the workload from the same spec
  with a tuning database (`convgen tune`) applied, built into the same
  benchmark program and timed in the same run, on the same buffers and with
  the same hot and cold methods as the default kernel (*default hot µs*, the
  same number as *convgen hot µs*). Its output is checked against cuDNN plus
  the epilogue as the default's is, and against the default kernel's output
  (largest difference up to 1e-5 of the largest output).
  **tuned speedup (hot)** = default hot µs / tuned hot µs; above 1× the tuned
  kernel is faster. **tuned schedule** is the schedule the database gave the
  kernel, *default* where it left the default one.
"""


def parse_args(argv=None):
    p = argparse.ArgumentParser(description="Write the benchmark markdown page and JSON.")
    p.add_argument("--json", required=True, help="merged JSON from bench/torch_compare.py")
    p.add_argument("--md", default="docs/benchmarks.md", help="markdown to write (default: %(default)s)")
    p.add_argument("--out-json", default="docs/benchmarks.json",
                   help="JSON to write (default: %(default)s)")
    p.add_argument("--png-name", default="benchmarks.png",
                   help="figure to embed, relative to the markdown file (default: %(default)s)")
    p.add_argument("--baseline", default=None,
                   help="benchmarks.json of a previous run (e.g. the committed docs/benchmarks.json): the float32 "
                   "NCHW rows' hot times the no_regression target compares with, where it ran on the same GPU model; "
                   "read before anything is written")
    return p.parse_args(argv)


# ---------------------------------------------------------------------------
# Numbers and derived values.
# ---------------------------------------------------------------------------

def derived(row):
    return {
        "convgen_frac_ceiling": fraction(row, "convgen_frac_ceiling", "floor_us", "convgen_cold_us"),
        "copy_frac_ceiling": fraction(row, "copy_frac_ceiling", "floor_us", "copy_cold_us"),
        "speedup_vs_cudnn_hot": ratio(row.get("cudnn_hot_us"), row.get("convgen_hot_us")),
        "speedup_vs_torch_hot": ratio(row.get("torch_hot_us"), row.get("convgen_hot_us")),
    }


def geomean(values):
    vals = [v for v in values if v]
    return math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else None


# ---------------------------------------------------------------------------
# Targets: what the depthwise kernels must reach, evaluated per row.
# ---------------------------------------------------------------------------

HALF_NHWC = [("float16", "NHWC"), ("bfloat16", "NHWC")]


def row_key(row):
    """The workload of a row, whatever its dtype and layout: to find its float32 NCHW twin."""
    return tuple(row.get(k) for k in ("suite", "n", "c", "h", "w", "kh", "kw", "stride", "mult", "epilogue"))


def copy_rate(row):
    """The fraction of a same-size copy's rate the kernel reaches cold: copy cold / convgen cold."""
    direct = ratio(row.get("copy_cold_us"), row.get("convgen_cold_us"))
    d = derived(row)
    return direct if direct is not None else ratio(d["convgen_frac_ceiling"], d["copy_frac_ceiling"])


class Context:
    """What a target may compare a row with: the run's float32 NCHW rows, and the previous run's hot times."""

    def __init__(self, rows, baseline_hot):
        self.nchw = {row_key(r): r for r in rows if storage(r) == DEFAULT_STORAGE}
        self.baseline_hot = baseline_hot  # {row_key: hot µs} of the previous run's float32 NCHW rows

    def nchw_copy_rate(self, row):
        twin = self.nchw.get(row_key(row))
        return copy_rate(twin) if twin else None


class Target:
    """One target: which rows it applies to, what it measures there, and the limit (at least / at most)."""

    def __init__(self, ident, text, applies, measure, limit, at_least):
        self.ident, self.text, self.applies, self.measure = ident, text, applies, measure
        self.limit, self.at_least = limit, at_least

    def verdict(self, row, context):
        value = self.measure(row, context)
        met = None if value is None else (value >= self.limit if self.at_least else value <= self.limit)
        return {"value": None if value is None else round(value, 4), "limit": self.limit, "met": met}


def in_storage(*keys):
    return lambda row: storage(row) in keys


def has_epilogue(row):
    return str(row.get("epilogue", "none")) != "none"


TARGETS = [
    Target("mnv2_b64_copy_rate", "mnv2_b64 float16 / bfloat16 NHWC: cold ≥ 0.95× the copy rate",
           lambda r: r.get("suite") == "mnv2_b64" and in_storage(*HALF_NHWC)(r),
           lambda r, c: copy_rate(r), 0.95, True),
    Target("large_filter_copy_rate", "convnextb_b16 and mnv3_b64 float16 NHWC: cold ≥ 0.85× the copy rate",
           lambda r: r.get("suite") in ("convnextb_b16", "mnv3_b64") and in_storage(("float16", "NHWC"))(r),
           lambda r, c: copy_rate(r), 0.85, True),
    Target("vs_torch_fused", "float16 / bfloat16 NHWC: hot ≤ 0.5× PyTorch's fused sequence",
           in_storage(*HALF_NHWC), lambda r, c: ratio(r.get("convgen_hot_us"), r.get("torch_hot_us")), 0.5, False),
    Target("vs_torch_plain", "float16 / bfloat16 NHWC: hot ≤ PyTorch's plain conv",
           in_storage(*HALF_NHWC), lambda r, c: ratio(r.get("convgen_hot_us"), r.get("torch_plain_hot_us")), 1.0,
           False),
    Target("nhwc_vs_nchw", "float32 NHWC: copy rate within 5% of the same row's float32 NCHW copy rate",
           in_storage(("float32", "NHWC")), lambda r, c: ratio(copy_rate(r), c.nchw_copy_rate(r)), 0.95, True),
    Target("fused_epilogue", "fused epilogue ≤ 5% over the plain kernel (hot)",
           has_epilogue, lambda r, c: ratio(r.get("convgen_hot_us"), r.get("convgen_noepilogue_hot_us")), 1.05,
           False),
    # The same, L2 flushed: where the kernel waits on DRAM, as a large layer of a network does.
    Target("fused_epilogue_cold", "fused epilogue ≤ 5% over the plain kernel (cold)",
           has_epilogue, lambda r, c: ratio(r.get("convgen_cold_us"), r.get("convgen_noepilogue_cold_us")), 1.05,
           False),
    Target("no_regression", "float32 NCHW: hot within 3% of the previous benchmarks.json",
           in_storage(DEFAULT_STORAGE), lambda r, c: ratio(r.get("convgen_hot_us"), c.baseline_hot.get(row_key(r))),
           1.03, False),
]


def row_targets(row, context):
    """{target id: verdict} of the targets that apply to the row."""
    return {t.ident: t.verdict(row, context) for t in TARGETS if t.applies(row)}


def targets_summary(rows, context):
    """Per target: how many rows it applies to, and on how many it is met, not met, not measured."""
    summary = []
    for t in TARGETS:
        verdicts = [t.verdict(r, context) for r in rows if t.applies(r)]
        summary.append({
            "id": t.ident, "target": t.text, "limit": t.limit, "rows": len(verdicts),
            "met": sum(1 for v in verdicts if v["met"] is True),
            "not_met": sum(1 for v in verdicts if v["met"] is False),
            "not_measured": sum(1 for v in verdicts if v["met"] is None),
        })
    return summary


def fmt_verdict(verdict):
    if verdict["met"] is None:
        return "not measured"
    return f"{verdict['value']:.2f}× " + ("met" if verdict["met"] else "**not met**")


def targets_overview(rows, context, baseline):
    lines = ["## Targets", "",
             "Each target evaluated on every row it applies to; the rows' values are in each section's "
             "*Targets* table.", ""]
    if baseline:
        lines += [f"The previous run (*no_regression*): commit `{baseline.get('commit', DASH)}`, "
                  f"{baseline.get('date', DASH)}, {baseline.get('gpu', DASH)}.", ""]
    else:
        lines += ["No previous run's figures on this GPU model (`--baseline`: the benchmarks.json of an "
                  "earlier run): *no_regression* is not measured.", ""]
    lines += ["| target | limit | rows | met | not met | not measured |", "|:---|---:|---:|---:|---:|---:|"]
    for s in targets_summary(rows, context):
        if s["rows"]:
            lines.append(f"| {s['target']} (`{s['id']}`) | {s['limit']:.2f}× | {s['rows']} | {s['met']} | "
                         f"{s['not_met']} | {s['not_measured']} |")
    return lines + [""]


def targets_table(rows, context):
    """Per row of one dtype x layout: every target that applies, measured, with its verdict."""
    idents = [t.ident for t in TARGETS if any(t.applies(r) for r in rows)]
    if not idents:
        return []
    lines = ["### Targets", "", "| suite | workload | " + " | ".join(f"`{i}`" for i in idents) + " |",
             "|:---|:---|" + "---:|" * len(idents)]
    for r in rows:
        verdicts = row_targets(r, context)
        cells = [fmt_verdict(verdicts[i]) if i in verdicts else DASH for i in idents]
        lines.append(f"| {r.get('suite')} | {workload(r)} | " + " | ".join(cells) + " |")
    return lines + [""]


def baseline_figures(baseline_doc, data):
    """({row_key: hot µs}, meta) of the previous run's float32 NCHW rows; ({}, None) without one.

    A baseline that is this very run (a page regenerated over its own benchmarks.json) gives the
    figures that run compared with, which its rows keep as baseline_hot_us.
    """
    if not baseline_doc:
        return {}, None
    if baseline_doc.get("gpu") != data.get("gpu"):
        # Another GPU model's times say nothing of a regression in this code.
        print(f"report.py: the baseline ran on {baseline_doc.get('gpu')}, this run on {data.get('gpu')}; "
              "no_regression is not measured", file=sys.stderr)
        return {}, None
    rows = [r for r in depthwise_rows(baseline_doc) if storage(r) == DEFAULT_STORAGE]
    same_run = all(baseline_doc.get(k) == data.get(k) for k in ("commit", "date", "gpu"))
    if same_run:
        figures = {row_key(r): r.get("baseline_hot_us") for r in rows if num(r.get("baseline_hot_us"))}
        return figures, baseline_doc.get("baseline") if figures else None
    figures = {row_key(r): r.get("convgen_hot_us") for r in rows if num(r.get("convgen_hot_us"))}
    meta = {k: baseline_doc.get(k) for k in ("commit", "date", "gpu")}
    return figures, meta if figures else None


# ---------------------------------------------------------------------------
# The tuned library (rows of convgen_bench_depthwise built with a tuning database).
# ---------------------------------------------------------------------------

def has_tuned(row):
    return "tuned_hot_us" in row or "tuned_schedule" in row


def tuned_speedup(row):
    """Default hot / tuned hot; prefer the producer's value."""
    return fraction(row, "tuned_speedup_hot", "convgen_hot_us", "tuned_hot_us")


def tuned_derived(row):
    """Derived values of a row measured with a tuned library; empty for other rows."""
    if not has_tuned(row):
        return {}
    return {
        "tuned_speedup_hot": tuned_speedup(row),
        "tuned_frac_ceiling": fraction(row, "tuned_frac_ceiling", "floor_us", "tuned_cold_us"),
    }


def has_headroom(row):
    """The default kernel reaches, cold, less than TUNED_HEADROOM of what a copy of the same bytes reaches.

    Both are fractions of the copy ceiling as derived() computes them (floor / cold time), so this is
    default cold time > copy cold time / TUNED_HEADROOM.
    """
    d = derived(row)
    got, copy = d["convgen_frac_ceiling"], d["copy_frac_ceiling"]
    return got is not None and copy is not None and got < TUNED_HEADROOM * copy


def tuned_summary(rows, headroom_part=True):
    """One sentence on the tuned library over `rows`, or None when none was measured with it.

    headroom_part: also the geometric mean over the rows with headroom (has_headroom; depthwise).
    """
    rows = [r for r in rows if has_tuned(r)]
    speedups = [(r, tuned_speedup(r)) for r in rows]
    measured = [(r, s) for r, s in speedups if s]
    if not measured:
        return None if not rows else "Tuned library: no row has both a default and a tuned hot time."
    slower = sum(1 for _, s in measured if s < 1 / TUNED_SLOWER_MARGIN)
    headroom = [s for r, s in measured if has_headroom(r)]
    changed = sum(1 for r in rows if r.get("tuned_changed") is True)
    text = (f"Tuned library: geometric-mean hot speedup {fmt_x(geomean(s for _, s in measured))} over "
            f"{len(measured)} workload(s) ({changed} with a schedule from the database); "
            f"{slower} where the tuned kernel is more than {100 * (TUNED_SLOWER_MARGIN - 1):.0f}% slower (hot)")
    where = (f"where the default kernel reaches, cold, less than {TUNED_HEADROOM:.1f}× what a copy of the "
             "same bytes reaches")
    if not headroom_part:
        text += "."
    elif headroom:
        text += f"; {fmt_x(geomean(headroom))} over the {len(headroom)} workload(s) {where}."
    else:
        text += f"; no workload {where}."
    bad = [r for r in rows if r.get("tuned_check_ok") is False]
    if bad:
        text += (f" **{len(bad)} workload(s) where the tuned kernel computes a different result:** "
                 + ", ".join(f"{r.get('suite')}/{r.get('tuned_name') or r.get('name')} (max rel. error "
                             f"{r.get('tuned_vs_default_max_rel_err')} vs default, "
                             f"{r.get('tuned_max_rel_err')} vs cuDNN)"
                             for r in bad) + ".")
    return text


def fmt_schedule(row):
    if not row.get("tuned_schedule"):
        return DASH
    if row.get("tuned_changed") is False:
        return "default"
    return str(row["tuned_schedule"]).replace("|", "\\|")


# ---------------------------------------------------------------------------
# Formatting.
# ---------------------------------------------------------------------------

DASH = "—"


def fmt_us(v):
    v = num(v)
    if v is None:
        return DASH
    if v < 10:
        return f"{v:.2f}"
    if v < 1000:
        return f"{v:.1f}"
    return f"{v:.0f}"


def fmt_pct(v):
    return DASH if v is None else f"{100 * v:.0f}%"


def fmt_x(v):
    return DASH if v is None else f"{v:.2f}×"


def fmt_yes_no(v):
    if v is None:
        return DASH
    if isinstance(v, str):
        return "yes" if v.strip().lower() in ("1", "true", "yes") else "no"
    return "yes" if v else "no"


def workload(row):
    kh, kw = row.get("kh"), row.get("kw")
    k = f"k{kh}" if kh == kw else f"k{kh}×{kw}"
    return (f"{row.get('n')}×{row.get('c')}×{row.get('h')}×{row.get('w')} {k} "
            f"s{row.get('stride')} m{row.get('mult')} {row.get('epilogue', 'none')}")


def table_row(row, tuned=False):
    d = derived(row)
    cells = [
        workload(row), fmt_yes_no(row.get("specialized")), fmt_us(row.get("floor_us")),
        fmt_us(row.get("convgen_hot_us")), fmt_us(row.get("convgen_cold_us")),
        fmt_us(row.get("convgen_noepilogue_hot_us")), fmt_us(row.get("cudnn_hot_us")),
        fmt_us(row.get("torch_hot_us")), fmt_us(row.get("torch_plain_hot_us")),
        fmt_pct(d["convgen_frac_ceiling"]), fmt_pct(d["copy_frac_ceiling"]), fmt_x(d["speedup_vs_cudnn_hot"]),
        fmt_x(d["speedup_vs_torch_hot"]),
    ]
    if tuned:
        speedup = tuned_speedup(row)
        if speedup and row.get("tuned_check_ok") is False:
            speedup_text = fmt_x(speedup) + " (WRONG RESULT)"
        else:
            speedup_text = fmt_x(speedup)
        cells += [fmt_us(row.get("convgen_hot_us")), fmt_us(row.get("tuned_hot_us")), speedup_text,
                  fmt_schedule(row)]
    return "| " + " | ".join(cells) + " |"


def suite_table(suite, rows, level="###"):
    lines = [f"{level} {suite}", ""]
    sp_cudnn = geomean(derived(r)["speedup_vs_cudnn_hot"] for r in rows)
    sp_torch = geomean(derived(r)["speedup_vs_torch_hot"] for r in rows)
    lines.append(f"{len(rows)} workloads; geometric-mean hot speedup vs cuDNN {fmt_x(sp_cudnn)}, "
                 f"vs PyTorch {fmt_x(sp_torch)}.")
    tuned = any(has_tuned(r) for r in rows)
    if tuned:
        lines += ["", tuned_summary(rows)]
    columns = TABLE_COLUMNS + (TUNED_TABLE_COLUMNS if tuned else [])
    lines.append("")
    lines.append("| " + " | ".join(columns) + " |")
    # Workload, "specialized" and the tuned schedule are text; the rest are numbers, right-aligned.
    align = [":---", ":---:"] + ["---:"] * (len(TABLE_COLUMNS) - 2)
    if tuned:
        align += ["---:"] * (len(TUNED_TABLE_COLUMNS) - 1) + [":---"]
    lines.append("|" + "|".join(align) + "|")
    lines.extend(table_row(r, tuned) for r in rows)
    lines.append("")
    return lines


def header(data, png_name, dense=False, depthwise=True):
    ceiling = num(data.get("copy_ceiling_tbps"))
    torch_v = data.get("torch_version")
    cudnn_v = data.get("torch_cudnn_version")
    lines = [
        {(True, False): "# Depthwise convolution benchmarks", (True, True): "# Depthwise and dense convolution benchmarks",
         (False, True): "# Dense convolution benchmarks", (False, False): "# Convolution benchmarks"}[(depthwise, dense)],
        "",
        "Generated by `bench/report.py` from the output of `scripts/gpu_check.sh`; "
        "do not edit by hand.",
        "",
        f"- **Date:** {data.get('date', DASH)}",
        f"- **Commit:** `{data.get('commit', DASH)}`",
        f"- **GPU:** {data.get('gpu', DASH)}",
        f"- **Copy ceiling:** {f'{ceiling:.2f} TB/s' if ceiling else DASH} "
        "(device-to-device copy, bytes read + written)",
    ]
    if torch_v:
        lines.append(f"- **PyTorch:** {torch_v}" + (f" (cuDNN {cudnn_v})" if cudnn_v else ""))
    if data.get("tuning_db"):
        lines.append(f"- **Tuning database:** `{data['tuning_db']}` (the depthwise kernels' *tuned* columns)")
    if data.get("runs"):
        lines.append(runs_line(data["runs"]))
    lines += ["", f"![convgen vs cuDNN vs PyTorch]({png_name})", ""]
    return lines


def runs_line(runs):
    """The runs a merged document (bench/merge_runs.py) was made of, with each run's own references."""
    def tbps(x):
        return f"{x:.2f} TB/s" if num(x) else DASH

    def tflops(x):
        return f"{x:.1f}" if num(x) else DASH

    parts = []
    for run in runs:
        what = ", ".join(f"{run[k]} {label}" for k, label in (("depthwise_rows", "depthwise"), ("dense_rows", "dense"))
                         if run.get(k))
        dense = run.get("dense") or {}
        refs = f"copy {tbps(run.get('copy_ceiling_tbps') or dense.get('copy_ceiling_tbps'))}"
        if dense.get("fp32_peak_tflops") is not None:
            refs += (f", peaks fp32 / tf32 / fp16 {tflops(dense.get('fp32_peak_tflops'))} / "
                     f"{tflops(dense.get('tf32_peak_tflops'))} / {tflops(dense.get('tensor_peak_tflops'))} TFLOP/s")
        parts.append(f"`{run.get('part')}` ({what} rows; {refs})")
    return (f"- **Runs:** {len(runs)} runs of this commit on this GPU model, merged by `bench/merge_runs.py`; "
            "each row's times and fractions are those of its own run, and each section states the references "
            "of the run that measured it: " + "; ".join(parts))


def failures(rows):
    """Rows where PyTorch timing failed, so the page says why a cell is empty."""
    bad = [r for r in rows if r.get("torch_error")]
    if not bad:
        return []
    lines = ["## Rows PyTorch could not time", ""]
    lines += [f"- {r.get('suite')}/{r.get('name')}: `{r['torch_error']}`" for r in bad]
    return lines + [""]


def markdown(data, png_name, context=None, baseline=None):
    rows = depthwise_rows(data)
    context = context or Context(rows, {})
    dense_meta, dense_rows = dense_document(data)
    lines = header(data, png_name, bool(dense_rows), bool(rows))
    if rows:
        summary = tuned_summary(rows)
        if summary is None:
            lines += [METHOD_TEXT]
        else:
            lines += [METHOD_TEXT.rstrip("\n"), TUNED_METHOD_TEXT]
        lines += targets_overview(rows, context, baseline)
        lines += ["## Results", ""] + ([summary, ""] if summary else [])
        # One section per dtype x layout, its suites' tables, then its targets row by row.
        for key, storage_rows in group_by_storage(rows).items():
            lines += [f"### {storage_title(key)}", ""]
            for suite, suite_rows in group_by_suite(storage_rows).items():
                lines += suite_table(suite, suite_rows, level="####")
            lines += [line.replace("### Targets", f"#### Targets, {storage_title(key)}")
                      for line in targets_table(storage_rows, context)]
    if dense_rows:
        lines += dense_section(dense_meta, dense_rows, data.get("runs"))
    lines += failures(rows + dense_rows)
    return "\n".join(lines).rstrip() + "\n"


# ---------------------------------------------------------------------------
# Dense conv2d.
# ---------------------------------------------------------------------------

DENSE_TABLE_COLUMNS = [
    "suite", "N", "C_in→C_out", "H×W", "k", "s", "epilogue", "convgen hot µs (fused)",
    "convgen plain hot µs", "convgen residual hot µs", "cuDNN hot µs", "PyTorch hot µs (fused)",
    "PyTorch plain hot µs", "convgen TFLOP/s", "convgen % of roofline (cold)", "fused / plain",
]

# Added to the dense table when its rows were measured with a tuned library
# (the default hot time is the table's "convgen hot µs (fused)").
DENSE_TUNED_TABLE_COLUMNS = ["tuned hot µs (fused)", "tuned speedup (hot)", "tuned schedule"]

DENSE_METHOD_TEXT = """\
Dense (groups = 1) convolutions of `bench/dense.csv`, measured by
`convgen_bench_dense` with the same hot and cold methods as above.

- **convgen hot (fused)**: the kernel generated for the row, its epilogue
  fused. *plain* is the same convolution generated without epilogue;
  *residual* is the row's epilogue with a residual tensor (shaped like the
  output) added before the activation, also fused. **fused / plain** is the
  fused hot time over the plain one: what the fused epilogue costs.
- **cuDNN hot**: the convolution alone through cuDNN's legacy API
  (`cudnnConvolutionForward`), with the fastest hot of the algorithms
  `cudnnFindConvolutionForwardAlgorithmEx` ran within 4× of its fastest under `CUDNN_FMA_MATH` (no
  TF32); its output is checked against convgen's plain kernel by the largest
  difference relative to the largest output (`max_rel_err` in `benchmarks.json`;
  accepted up to 1e-4, 1e-3 where cuDNN chose a Winograd or FFT algorithm).
- **PyTorch hot (fused)**: `F.conv2d(x, w, stride=s, padding=k//2 or 0)` then
  the epilogue as separate ops, `torch.backends.cudnn.benchmark = True`, TF32
  off (`torch.backends.cudnn.allow_tf32 = False`,
  `torch.backends.cuda.matmul.allow_tf32 = False`); *plain* is `F.conv2d` alone.
- **TFLOP/s**: 2·N·C_out·OH·OW·C_in·KH·KW / convgen hot (fused) time.
- **roofline**: max(bytes the row must move / copy ceiling, FLOPs / fp32 peak),
  the peak measured in the same run by an SGEMM without TF32 (method above);
  **% of roofline** = roofline / convgen cold time.
"""

DENSE_TUNED_METHOD_TEXT = """\
- **tuned**: as for depthwise above: the row's kernel from the same spec with
  the tuning database (`convgen_bench_dense` built with
  `CONVGEN_BENCH_DENSE_TUNING`) applied, timed in the same run on the same
  buffers; its output is checked against cuDNN plus the epilogue (the limits
  above) and against the default kernel's (1e-5). **tuned speedup (hot)** =
  convgen hot (fused) / tuned hot (fused).
"""


def dense_derived(row):
    flops = num(row.get("flops"))
    hot = num(row.get("convgen_hot_us"))
    return {
        "tflops": num(row.get("tflops")) or (flops / hot / 1e6 if flops and hot else None),
        "convgen_frac_roofline": fraction(row, "convgen_frac_roofline", "roofline_us", "convgen_cold_us"),
        "fused_plain_ratio": fraction(row, "fused_plain_ratio", "convgen_hot_us", "convgen_noepilogue_hot_us"),
        "residual_plain_ratio": fraction(row, "residual_plain_ratio", "convgen_residual_hot_us",
                                         "convgen_noepilogue_hot_us"),
        "speedup_vs_cudnn_hot": ratio(row.get("cudnn_hot_us"), row.get("convgen_hot_us")),
        "speedup_vs_torch_hot": ratio(row.get("torch_hot_us"), row.get("convgen_hot_us")),
        "torch_plain_tflops": num(row.get("torch_plain_tflops"))
        or (flops / num(row.get("torch_plain_hot_us")) / 1e6
            if flops and num(row.get("torch_plain_hot_us")) else None),
    }


def fmt_tflops(v):
    v = num(v)
    return DASH if v is None else f"{v:.1f}" if v >= 10 else f"{v:.2f}"


def fmt_ratio(v):
    return DASH if v is None else f"{v:.2f}"


def dense_table_row(row, tuned=False):
    d = dense_derived(row)
    kh, kw = row.get("kh"), row.get("kw")
    h, w = row.get("h"), row.get("w")
    cells = [
        str(row.get("suite", "?")), str(row.get("n")), f"{row.get('c')}→{row.get('c_out')}", f"{h}×{w}",
        f"{kh}×{kw}", str(row.get("stride")), str(row.get("epilogue", "none")),
        fmt_us(row.get("convgen_hot_us")), fmt_us(row.get("convgen_noepilogue_hot_us")),
        fmt_us(row.get("convgen_residual_hot_us")), fmt_us(row.get("cudnn_hot_us")),
        fmt_us(row.get("torch_hot_us")), fmt_us(row.get("torch_plain_hot_us")),
        fmt_tflops(d["tflops"]), fmt_pct(d["convgen_frac_roofline"]), fmt_ratio(d["fused_plain_ratio"]),
    ]
    if row.get("specialized") is False:
        cells[0] += " (generic)"
    if tuned:
        speedup = tuned_speedup(row)
        wrong = speedup and row.get("tuned_check_ok") is False
        cells += [fmt_us(row.get("tuned_hot_us")), fmt_x(speedup) + (" (WRONG RESULT)" if wrong else ""),
                  fmt_schedule(row)]
    return "| " + " | ".join(cells) + " |"


def dense_section(meta, rows, runs=None):
    """One section per dtype and layout: float32 NCHW first, then the tensor-core rows."""
    lines = []
    for key, group in group_by_storage(rows).items():
        lines += dense_storage_section(run_meta(meta, group, runs), group, key)
    return lines


def count_target(name, selected, ok):
    """'name: **met/of**' over the rows where ok(row) is not None (None: a number it needs is missing),
    and how many rows were not measured."""
    measured = [r for r in selected if ok(r) is not None]
    met = sum(1 for r in measured if ok(r))
    missing = len(selected) - len(measured)
    return f"{name}: **{met}/{len(measured)}**" + (f" ({missing} not measured)" if missing else "")


def at_most(a, b, factor=1.0):
    a, b = num(a), num(b)
    return None if a is None or b is None else a <= factor * b


def fused_within_5pct(r):
    ratio_ = dense_derived(r)["fused_plain_ratio"]
    return None if ratio_ is None else ratio_ <= 1.05


def residual_within_its_bytes(r, ceiling_tbps):
    """Whether the residual kernel takes at most 5% over the plain one plus the residual's own bytes (an output's)
    at the copy rate: "5% over plain" cannot hold where the residual nearly doubles a memory-bound row's bytes.
    None where a number is missing."""
    plain, residual, ceiling = (num(r.get("convgen_noepilogue_hot_us")), num(r.get("convgen_residual_hot_us")),
                                num(ceiling_tbps))
    elements = [num(r.get(k)) for k in ("n", "out_h", "out_w", "c_out")]
    size = element_bytes().get(of_row(r)[0])
    if None in (plain, residual, ceiling, size, *elements):
        return None
    residual_bytes = math.prod(elements) * size
    return residual <= 1.05 * (plain + residual_bytes / (ceiling * 1e6))  # bytes / (TB/s) in µs


def half_dense_targets(rows, peak, ceiling_tbps=None):
    """The tensor-core targets (float16/bfloat16 NHWC dense rows), each as 'met/of'."""
    with_epilogue = [r for r in rows if str(r.get("epilogue", "none")) != "none"]
    resnet = [r for r in rows if r.get("suite") == "resnet_b32"]
    mnv2 = [r for r in rows if r.get("suite") == "mnv2_pw_b64"]
    small = [r for r in rows if r.get("suite") in ("r34_b8", "deep_b1")]
    return [
        count_target("fused hot ≤ PyTorch plain conv", rows,
                     lambda r: at_most(r.get("convgen_hot_us"), r.get("torch_plain_hot_us"))),
        count_target("fused hot ≤ 0.5× PyTorch fused (rows with an epilogue)", with_epilogue,
                     lambda r: at_most(r.get("convgen_hot_us"), r.get("torch_hot_us"), 0.5)),
        count_target("resnet_b32 ≥ 50% of the tensor-core peak", resnet,
                     lambda r: None if not peak or num(dense_derived(r)["tflops"]) is None
                     else dense_derived(r)["tflops"] >= 0.5 * peak),
        count_target("r34_b8 and deep_b1 ≤ cuDNN", small,
                     lambda r: at_most(r.get("convgen_hot_us"), r.get("cudnn_hot_us"))),
        count_target("mnv2_pw_b64 cold ≥ 80% of roofline", mnv2,
                     lambda r: None if dense_derived(r)["convgen_frac_roofline"] is None
                     else dense_derived(r)["convgen_frac_roofline"] >= 0.8),
        # The roofline's bytes at the copy ceiling of a large copy: a cold
        # copy of these rows' own bytes reaches 25-90% of it (launch and
        # ramp on a few MB), so it is measured against that copy too.
        count_target("mnv2_pw_b64 cold ≥ 0.8× the rate of a cold copy of the same bytes", mnv2,
                     lambda r: at_most(r.get("convgen_cold_us"), r.get("copy_cold_us"), 1 / 0.8)),
        count_target("fused ≤ 5% over plain", rows, fused_within_5pct),
        count_target("residual ≤ 5% over plain plus the residual's bytes at the copy rate", rows,
                     lambda r: residual_within_its_bytes(r, ceiling_tbps)),
    ]


def tf32_dense_targets(rows, math_word):
    """float32 rows on tensor cores: tf32 against PyTorch's default (TF32 on), 3xtf32 against cuDNN's FMA math."""
    if math_word == "tf32":
        first = count_target("fused hot ≤ PyTorch plain conv with TF32 on (its default)", rows,
                             lambda r: at_most(r.get("convgen_hot_us"), r.get("torch_plain_hot_us")))
    else:
        first = count_target("fused hot ≤ cuDNN's FMA math (the accuracy 3xtf32 keeps)", rows,
                             lambda r: at_most(r.get("convgen_hot_us"), r.get("cudnn_hot_us")))
    return [first, count_target("fused ≤ 5% over plain", rows, fused_within_5pct)]


def fp32_dense_targets(rows):
    """float32 (math fp32) rows against cuDNN's FMA math: the targets of the fp32 dense work."""
    def vs_cudnn(factor):
        return lambda r: at_most(r.get("convgen_hot_us"), r.get("cudnn_hot_us"), factor)

    resnet_3x3 = [r for r in rows if r.get("suite") in ("resnet_b32", "r34_b8") and r.get("kh") == 3
                  and r.get("stride") == 1]
    ratios = [ratio(r.get("convgen_hot_us"), r.get("cudnn_hot_us")) for r in rows]
    mean = geomean(ratios)
    unmeasured = sum(1 for x in ratios if not x)
    return [
        count_target("fused hot ≤ 1.1× cuDNN", rows, vs_cudnn(1.1)),
        f"geometric mean of convgen / cuDNN (hot): **{fmt_ratio(mean)}** (≤ 0.8 asked"
        + (f"; {unmeasured} row(s) not measured" if unmeasured else "") + ")",
        count_target("resnet_b32 and r34_b8 stride-1 3×3 ≤ cuDNN", resnet_3x3, vs_cudnn(1.0)),
        count_target("deep_b1 ≤ cuDNN", [r for r in rows if r.get("suite") == "deep_b1"], vs_cudnn(1.0)),
        count_target("stems_b8 ≤ cuDNN", [r for r in rows if r.get("suite") == "stems_b8"], vs_cudnn(1.0)),
    ]


def dense_storage_section(meta, rows, key):
    math_word = key[0].partition(" ")[2]
    tensor_cores = key != DEFAULT_STORAGE
    half = tensor_cores and not math_word
    peak = num(meta.get("tensor_peak_tflops" if half else "fp32_peak_tflops"))
    ceiling = num(meta.get("copy_ceiling_tbps"))
    lines = [f"## Dense convolution, {storage_title(key)}" + (" (tensor cores)" if tensor_cores else ""), ""]
    if math_word:  # float32 operands on tensor cores: math tf32 or 3xtf32
        tf32_peak = num(meta.get("tf32_peak_tflops"))
        lines.append(f"- **TF32 peak:** {f'{tf32_peak:.1f} TFLOP/s' if tf32_peak else DASH}"
                     + (f" ({meta['tf32_peak_method']})" if meta.get("tf32_peak_method") else "")
                     + ("; the roofline of these rows" if math_word == "tf32"
                        else "; a third of it is the roofline of these rows (three products a term)"))
        lines.append("- **Targets:** " + "; ".join(tf32_dense_targets(rows, math_word)) + ".")
        lines.append("- **Baselines:** " + (
            "cuDNN with TF32 allowed (CUDNN_TENSOR_OP_MATH) and PyTorch with `allow_tf32 = True`, its default"
            if math_word == "tf32" else "cuDNN's FMA math and PyTorch without TF32 (3xtf32 keeps fp32's accuracy)")
            + "; the rest of the method is the float32 section's.")
        lines += [""]
        return lines + dense_rows_part(meta, rows)
    if half:
        lines.append(f"- **Tensor-core peak:** {f'{peak:.1f} TFLOP/s' if peak else DASH}"
                     + (f" ({meta['tensor_peak_method']})" if meta.get("tensor_peak_method") else "")
                     + "; the roofline of these rows")
        lines.append("- **Targets:** " + "; ".join(half_dense_targets(rows, peak, ceiling)) + ".")
        lines.append("- **Baselines:** cuDNN and PyTorch in the same dtype and layout (`channels_last`), "
                     "tensor-op math allowed; the rest of the method is the float32 section's.")
        lines += [""]
        return lines + dense_rows_part(meta, rows)
    lines.append(f"- **fp32 peak:** {f'{peak:.1f} TFLOP/s' if peak else DASH}"
                 + (f" ({meta['fp32_peak_method']})" if meta.get("fp32_peak_method") else ""))
    lines.append(f"- **Copy ceiling (this run):** {f'{ceiling:.2f} TB/s' if ceiling else DASH}")
    lines.append("- **Targets** (cuDNN: legacy API, FMA math): " + "; ".join(fp32_dense_targets(rows)) + ".")
    if meta.get("date") or meta.get("commit"):
        lines.append(f"- **Measured:** {meta.get('date', DASH)}, commit `{meta.get('commit', DASH)}`")
    if meta.get("tuning_db"):
        lines.append(f"- **Tuning database:** `{meta['tuning_db']}` (the *tuned* columns)")
    lines += ["", DENSE_METHOD_TEXT]
    if any(has_tuned(r) for r in rows):
        lines.append(DENSE_TUNED_METHOD_TEXT)
    return lines + dense_rows_part(meta, rows)


def dense_rows_part(meta, rows):
    """A dense section's summary line, findings and table."""
    lines = []
    sp_cudnn = geomean(dense_derived(r)["speedup_vs_cudnn_hot"] for r in rows)
    sp_torch = geomean(dense_derived(r)["speedup_vs_torch_hot"] for r in rows)
    fused = geomean(dense_derived(r)["fused_plain_ratio"] for r in rows)
    lines.append(f"{len(rows)} workloads; geometric-mean hot speedup vs cuDNN {fmt_x(sp_cudnn)}, "
                 f"vs PyTorch {fmt_x(sp_torch)}; fused / plain {fmt_ratio(fused)}.")
    generic = [r for r in rows if r.get("specialized") is False]
    if generic:
        lines.append(f"{len(generic)} row(s) ran convgen's generic kernel (marked *generic*).")
    bad = [r for r in rows if r.get("check_ok") is False]
    if bad:
        lines.append(f"**{len(bad)} row(s) where convgen and cuDNN disagree:** "
                     + ", ".join(f"{r.get('suite')}/{r.get('name')} (max rel. error {r.get('max_rel_err')})"
                                 for r in bad) + ".")
    tuned = any(has_tuned(r) for r in rows)
    if tuned:
        lines += ["", tuned_summary(rows, headroom_part=False)]
    lines.append("")
    columns = DENSE_TABLE_COLUMNS + (DENSE_TUNED_TABLE_COLUMNS if tuned else [])
    lines.append("| " + " | ".join(columns) + " |")
    align = [":---"] * 7 + ["---:"] * (len(DENSE_TABLE_COLUMNS) - 7)
    if tuned:
        align += ["---:"] * (len(DENSE_TUNED_TABLE_COLUMNS) - 1) + [":---"]
    lines.append("|" + "|".join(align) + "|")
    lines.extend(dense_table_row(r, tuned) for r in rows)
    lines.append("")
    return lines


def dense_out_row(row):
    """Dense required keys first (null when missing), then the rest, then derived values."""
    out = {k: row.get(k) for k in DENSE_REQUIRED_ROW_KEYS}
    for k, v in row.items():
        if k not in out and k != "torch_version":
            out[k] = v
    for k, v in {**dense_derived(row), **tuned_derived(row)}.items():
        out.setdefault(k, v)
        if out[k] is None:
            out[k] = v
    return out



# ---------------------------------------------------------------------------
# JSON.
# ---------------------------------------------------------------------------

def out_row(row, context):
    """Required keys first (null when missing), then everything else the row had, then derived and targets."""
    out = {k: row.get(k) for k in REQUIRED_ROW_KEYS}
    out["dtype"], out["layout"] = storage(row)
    for k, v in row.items():
        if k not in out and k != "torch_version":  # torch_version is kept once, top-level
            out[k] = v
    for k, v in {**derived(row), **tuned_derived(row)}.items():
        out.setdefault(k, v)
        if out[k] is None:
            out[k] = v
    out["copy_rate"] = copy_rate(row)
    baseline_hot = context.baseline_hot.get(row_key(row)) if storage(row) == DEFAULT_STORAGE else None
    if baseline_hot is not None:
        out["baseline_hot_us"] = baseline_hot
    out["targets"] = row_targets(row, context)
    return out


def out_json(data, context=None, baseline=None):
    rows = depthwise_rows(data)
    context = context or Context(rows, {})
    out = {k: data.get(k) for k in META_KEYS[:4]}
    out.update({k: data[k] for k in META_KEYS[4:] if k in data})
    if baseline:
        out["baseline"] = baseline
    if rows:
        out["targets"] = targets_summary(rows, context)
    out["rows"] = [out_row(r, context) for r in rows]
    dense_meta, dense_rows = dense_document(data)
    if dense_rows:
        dense = {k: dense_meta.get(k) for k in DENSE_META_KEYS}
        dense.update({k: dense_meta[k] for k in DENSE_OPTIONAL_META_KEYS if k in dense_meta})
        dense["rows"] = [dense_out_row(r) for r in dense_rows]
        out["dense"] = dense
    return out


def write(path, text):
    parent = os.path.dirname(path)
    if parent:
        os.makedirs(parent, exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def main(argv=None):
    args = parse_args(argv)
    data = load(args.json)
    if not depthwise_rows(data) and not dense_document(data)[1]:
        print("report.py: the JSON has no rows", file=sys.stderr)
        return 1
    # Read before anything is written: the baseline may be the file --out-json names.
    baseline_doc = load(args.baseline) if args.baseline and os.path.exists(args.baseline) else None
    if args.baseline and baseline_doc is None:
        print(f"report.py: no baseline {args.baseline}; no_regression is not measured", file=sys.stderr)
    baseline_hot, baseline = baseline_figures(baseline_doc, data)
    context = Context(depthwise_rows(data), baseline_hot)
    write(args.md, markdown(data, args.png_name, context, baseline))
    write(args.out_json, json.dumps(out_json(data, context, baseline), indent=2) + "\n")
    print(f"[report] wrote {args.md} and {args.out_json}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
