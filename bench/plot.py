#!/usr/bin/env python3
"""Draw the convolution benchmark figure from the merged JSON.

Depthwise: one column of panels per suite (in the order the suites first appear):
  top row     hot time per workload in µs, grouped bars: convgen, cuDNN, PyTorch
  bottom row  fraction of the copy ceiling reached cold (floor_us / cold time), with a
              black tick for a device-to-device copy of the same bytes
              for convgen, cuDNN and PyTorch, where a cold time exists

Depthwise rows in several dtypes and layouts (their "dtype" and "layout"
keys; float32 NCHW where a row has none) get one such band of panels per
dtype x layout, float32 NCHW first; outside float32 NCHW the hot panels also
show PyTorch's plain conv, the bar the float16 / bfloat16 targets compare with.

Rows measured with a tuned library (convgen_bench_depthwise / _dense built
with a tuning database: tuned_hot_us, tuned_cold_us, ...) add a "convgen tuned"
bar beside convgen's in the panels of their suite; without them the figure
is as before.

Dense conv2d (when the JSON has dense rows: its "dense" object, or top-level
rows with a "c_out" key), below the depthwise panels, a band per dtype x
layout (a math other than fp32 a band of its own, titled with the peak its
roofline uses), one column per suite:
  hot time: convgen fused, convgen plain, convgen with residual, cuDNN (conv
  alone), PyTorch fused; and the fraction of the roofline reached cold
  (roofline_us / cold time) for convgen, cuDNN and PyTorch.

Input is the JSON written by bench/torch_compare.py (the plain benchmark JSON
works too: the PyTorch bars are then simply missing).
"""

import argparse
import io
import os
import sys

try:
    import matplotlib
except ImportError:
    raise SystemExit("plot.py needs matplotlib (pip install matplotlib)")

matplotlib.use("Agg")  # no display on the GPU machine
import matplotlib.pyplot as plt  # noqa: E402
from PIL import Image  # noqa: E402  (Pillow: a dependency of matplotlib)

import epilogue_words  # noqa: E402
from results import (DEFAULT_STORAGE, dense_document, depthwise_rows, fraction, group_by_storage,  # noqa: E402
                     group_by_suite, load, num, run_meta, storage, storage_title)

# (label, hot key, cold key, precomputed fraction key, colour)
SERIES = [
    ("convgen", "convgen_hot_us", "convgen_cold_us", "convgen_frac_ceiling", "#1f77b4"),
    ("cuDNN", "cudnn_hot_us", "cudnn_cold_us", "cudnn_frac_ceiling", "#ff7f0e"),
    ("PyTorch", "torch_hot_us", "torch_cold_us", "torch_frac_ceiling", "#2ca02c"),
]
# The same spec built with a tuning database; drawn beside convgen only in suites that have it.
TUNED_SERIES = ("convgen tuned", "tuned_hot_us", "tuned_cold_us", "tuned_frac_ceiling", "#9467bd")
# PyTorch's conv alone (hot only): drawn beside PyTorch's fused sequence outside float32 NCHW.
PLAIN_SERIES = ("PyTorch plain", "torch_plain_hot_us", None, None, "#98df8a")

# Dense panels: (label, hot key, colour) and (label, cold key, precomputed fraction key, colour).
DENSE_HOT_SERIES = [
    ("convgen fused", "convgen_hot_us", "#1f77b4"),
    ("convgen tuned fused", "tuned_hot_us", "#9467bd"),
    ("convgen plain", "convgen_noepilogue_hot_us", "#9ecae1"),
    ("convgen + residual", "convgen_residual_hot_us", "#08519c"),
    ("cuDNN (conv alone)", "cudnn_hot_us", "#ff7f0e"),
    ("PyTorch fused", "torch_hot_us", "#2ca02c"),
]
DENSE_ROOF_SERIES = [
    ("convgen fused", "convgen_cold_us", "convgen_frac_roofline", "#1f77b4"),
    ("convgen tuned fused", "tuned_cold_us", "tuned_frac_roofline", "#9467bd"),
    ("cuDNN (conv alone)", "cudnn_cold_us", "cudnn_frac_roofline", "#ff7f0e"),
    ("PyTorch fused", "torch_cold_us", "torch_frac_roofline", "#2ca02c"),
]

# Use a log axis once the slowest bar is this many times the fastest.
LOG_RANGE = 20.0


def parse_args(argv=None):
    p = argparse.ArgumentParser(description="Plot convgen vs cuDNN vs PyTorch depthwise timings.")
    p.add_argument("--json", required=True, help="merged JSON from bench/torch_compare.py")
    p.add_argument("--out", required=True, help="PNG file to write")
    p.add_argument("--dpi", type=int, default=110, help="the figure's resolution, dots an inch (default 110)")
    args = p.parse_args(argv)
    if args.dpi < 1:
        p.error(f"--dpi must be at least 1, got {args.dpi}")
    if not os.path.isdir(os.path.dirname(os.path.abspath(args.out))):
        p.error(f"--out {args.out}: its folder does not exist")
    return args


def short_labels(rows):
    """Labels like '32x112² s1', adding batch, kernel, multiplier or epilogue only when useful.

    Fields that are the same for the whole suite are left out (the panel title
    names the suite), except a non-3x3 kernel, which is always worth showing.
    """
    def varies(key):
        return len({str(r.get(key)) for r in rows}) > 1

    show_n, show_mult, show_epi = varies("n"), varies("mult"), varies("epilogue")
    labels = []
    for r in rows:
        c, h, w = r.get("c"), r.get("h"), r.get("w")
        spatial = f"{h}²" if h == w else f"{h}x{w}"
        parts = [f"{c}x{spatial}", f"s{r.get('stride')}"]
        kh, kw = r.get("kh"), r.get("kw")
        if kh != 3 or kw != 3 or varies("kh") or varies("kw"):
            parts.append(f"k{kh}" if kh == kw else f"k{kh}x{kw}")
        if show_mult:
            parts.append(f"m{r.get('mult')}")
        if show_n:
            parts.insert(0, f"n{r.get('n')}")
        if show_epi:
            code = epilogue_words.short(str(r.get("epilogue", "none")))
            if code:
                parts.append(code)
        labels.append(" ".join(parts))
    return dedupe(labels)


def dedupe(labels):
    """Append #2, #3 ... to repeated labels so that no two bar groups read the same."""
    seen = {}
    out = []
    for lab in labels:
        seen[lab] = seen.get(lab, 0) + 1
        out.append(lab if seen[lab] == 1 else f"{lab} #{seen[lab]}")
    return out


def draw_bars(ax, labels, series_values, width=0.8):
    """Grouped bars: series_values is a list of (name, colour, [value or None per label])."""
    k = len(series_values)
    bar_w = width / k
    for i, (name, colour, values) in enumerate(series_values):
        xs = [x - width / 2 + (i + 0.5) * bar_w for x in range(len(labels))]
        heights = [v if v is not None else float("nan") for v in values]
        ax.bar(xs, heights, bar_w, label=name, color=colour)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=60, ha="right", fontsize=8)
    ax.set_xlim(-0.6, len(labels) - 0.4)
    ax.grid(axis="y", alpha=0.3, which="both")


def series_of(rows):
    """SERIES, with the tuned library after convgen when any of `rows` was measured with it, and
    PyTorch's plain conv last for rows other than float32 NCHW."""
    series = list(SERIES)
    if any(num(r.get(TUNED_SERIES[1])) or num(r.get(TUNED_SERIES[2])) for r in rows):
        series = SERIES[:1] + [TUNED_SERIES] + SERIES[1:]
    if any(storage(r) != DEFAULT_STORAGE for r in rows):
        series.append(PLAIN_SERIES)
    return series


def draw_hot(ax, title, labels, series):
    """Hot times as grouped bars, on a log axis when they span more than LOG_RANGE."""
    draw_bars(ax, labels, series)
    values = [v for _, _, vals in series for v in vals if v is not None]
    if values and max(values) / min(values) > LOG_RANGE:
        ax.set_yscale("log")
    ax.set_title(f"{title}: hot time (lower is better)", fontsize=10)
    ax.set_ylabel("µs per launch")


def draw_fraction(ax, title, ylabel, labels, series, copy=None):
    """Fractions of a bound (1 = at the bound) as grouped bars; `copy`: a tick per group."""
    # Leave out a library with no cold numbers at all rather than show an empty legend entry.
    series = [s for s in series if any(v is not None for v in s[2])]
    if not series:
        ax.text(0.5, 0.5, "no cold timings", ha="center", va="center", transform=ax.transAxes)
        ax.set_xticks([])
        return
    draw_bars(ax, labels, series)
    if copy and any(v is not None for v in copy):
        ax.scatter(range(len(copy)), [v if v is not None else float("nan") for v in copy], marker="_", s=400,
                   linewidths=2, color="black", zorder=3, label="copy of the same bytes")
    top = max(v for _, _, vals in series for v in vals if v is not None)
    ax.set_ylim(0, max(1.05, top * 1.1))
    ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
    ax.set_title(f"{title}, cold (higher is better)", fontsize=10)
    ax.set_ylabel(ylabel)


def draw_hot_panel(ax, suite, rows, labels):
    series = [(name, colour, [num(r.get(hot)) for r in rows])
              for name, hot, _, _, colour in series_of(rows)]
    draw_hot(ax, suite, labels, series)


def draw_ceiling_panel(ax, suite, rows, labels):
    series = [(name, colour, [fraction(r, frac, "floor_us", cold) for r in rows])
              for name, _, cold, frac, colour in series_of(rows) if cold]
    # What a copy of the same bytes reaches cold: the most any kernel of this
    # size can expect, launch and ramp included.
    copy = [fraction(r, "copy_frac_ceiling", "floor_us", "copy_cold_us") for r in rows]
    draw_fraction(ax, f"{suite}: fraction of copy ceiling", "floor / cold time", labels, series, copy)


def dense_labels(rows):
    """Labels like '64→128 56² s2', adding batch, kernel or epilogue only when they vary."""
    def varies(key):
        return len({str(r.get(key)) for r in rows}) > 1

    labels = []
    for r in rows:
        h, w = r.get("h"), r.get("w")
        parts = [f"{r.get('c')}→{r.get('c_out')}", f"{h}²" if h == w else f"{h}x{w}"]
        if r.get("stride") != 1 or varies("stride"):
            parts.append(f"s{r.get('stride')}")
        kh, kw = r.get("kh"), r.get("kw")
        if varies("kh") or varies("kw"):
            parts.append(f"k{kh}" if kh == kw else f"k{kh}x{kw}")
        if varies("n"):
            parts.insert(0, f"n{r.get('n')}")
        if varies("epilogue"):
            code = epilogue_words.short(str(r.get("epilogue", "none")))
            if code:
                parts.append(code)
        labels.append(" ".join(parts))
    return dedupe(labels)


def draw_dense_hot_panel(ax, suite, rows, labels):
    series = [(name, colour, [num(r.get(key)) for r in rows]) for name, key, colour in DENSE_HOT_SERIES]
    series = [s for s in series if any(v is not None for v in s[2])]
    draw_hot(ax, f"dense {suite}", labels, series)


def draw_dense_roofline_panel(ax, suite, rows, labels):
    series = [(name, colour, [fraction(r, frac, "roofline_us", cold) for r in rows])
              for name, cold, frac, colour in DENSE_ROOF_SERIES]
    draw_fraction(ax, f"dense {suite}: fraction of roofline", "roofline / cold time", labels, series)


def title_of(data, what="depthwise conv (float32 NCHW)"):
    gpu = data.get("gpu", "unknown GPU")
    date = data.get("date", "unknown date")
    commit = data.get("commit", "unknown commit")
    ceiling = num(data.get("copy_ceiling_tbps"))
    text = f"convgen {what} — {gpu} — {date} — commit {commit}"
    if ceiling:
        text += f" — copy ceiling {ceiling:.2f} TB/s"
    return text


def collect_legend(fig, axes_rows):
    """One legend for a figure: the series of every panel, each name once."""
    handles, names = [], []
    for axes in axes_rows:
        for ax in axes:
            for handle, name in zip(*ax.get_legend_handles_labels()):
                if name not in names:
                    handles.append(handle)
                    names.append(name)
    return handles, names


def draw_suites(fig_or_subfig, suites, labels_of, draw_top, draw_bottom):
    """One column per suite: draw_top and draw_bottom panels over the same bar groups."""
    counts = [len(r) for r in suites.values()]
    axes = fig_or_subfig.subplots(2, len(suites), squeeze=False,
                                  gridspec_kw={"width_ratios": [max(c, 2) for c in counts]})
    for col, (suite, rows) in enumerate(suites.items()):
        labels = labels_of(rows)
        draw_top(axes[0][col], suite, rows, labels)
        draw_bottom(axes[1][col], suite, rows, labels)
    return axes


def draw_depthwise(fig_or_subfig, suites):
    return draw_suites(fig_or_subfig, suites, short_labels, draw_hot_panel, draw_ceiling_panel)


def draw_dense(fig_or_subfig, suites):
    return draw_suites(fig_or_subfig, suites, dense_labels, draw_dense_hot_panel, draw_dense_roofline_panel)


def plot(data, out_path, dpi=110):
    dense_meta, dense_rows = dense_document(data)
    if dense_rows or len(group_by_storage(depthwise_rows(data))) > 1:
        return plot_with_dense(data, dense_meta, dense_rows, out_path, dpi)
    suites = group_by_suite(data.get("rows", []))
    if not suites:
        raise SystemExit("plot.py: the JSON has no rows")
    counts = [len(r) for r in suites.values()]
    # Width grows with the number of bar groups so that labels stay readable.
    width = max(8.0, 0.55 * sum(counts) + 1.5 * len(counts))
    fig = plt.figure(figsize=(width, 9))
    # One legend for the figure: the libraries, and the copy tick where a ceiling panel drew it.
    handles, names = collect_legend(fig, draw_depthwise(fig, suites))
    fig.legend(handles, names, loc="upper right", ncol=len(names), fontsize=9)
    fig.suptitle(title_of(data), fontsize=11, x=0.01, ha="left")
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    save_png(fig, out_path, dpi)
    plt.close(fig)


def save_png(fig, out_path, dpi):
    """The figure as a PNG of a 256-colour palette: its flat bar colours and text fit one, and the file of a
    page of many bands takes a third of the bytes of full colour (docs/benchmarks.png is committed)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    buffer.seek(0)
    with Image.open(buffer) as image:
        image.convert("RGB").quantize(colors=256).save(out_path, optimize=True)  # median cut


def dense_peak_text(meta, key):
    """The peak a dense band's roofline uses: fp32 FMA, the TF32 tensor cores (3xtf32: a third), or fp16's."""
    math_word = key[0].partition(" ")[2]
    if math_word:
        peak, what = num(meta.get("tf32_peak_tflops")), "TF32 peak {:.1f} TFLOP/s" + (
            " (3xtf32: a third of it)" if math_word == "3xtf32" else "")
    elif key != DEFAULT_STORAGE:
        peak, what = num(meta.get("tensor_peak_tflops")), "tensor-core peak {:.1f} TFLOP/s (fp16 GEMM)"
    else:
        peak, what = num(meta.get("fp32_peak_tflops")), "fp32 peak {:.1f} TFLOP/s (SGEMM, no TF32)"
    return what.format(peak) if peak else ""


def plot_with_dense(data, dense_meta, dense_rows, out_path, dpi=110):
    """A band of panels per dtype x layout: the depthwise ones (when there are depthwise rows), then the
    dense ones (a math other than fp32 is a band of its own)."""
    dw_storages = {key: group_by_suite(rows) for key, rows in group_by_storage(depthwise_rows(data)).items()}
    dense_storages = {key: group_by_suite(rows) for key, rows in group_by_storage(dense_rows).items()}
    bars = max([sum(len(r) for r in suites.values()) + 3 * len(suites) for suites in dw_storages.values()] +
               [int(1.6 * sum(len(r) for r in suites.values())) + 3 * len(suites)
                for suites in dense_storages.values()])
    width = max(10.0, 0.55 * bars)
    bands = len(dw_storages) + len(dense_storages)
    fig = plt.figure(figsize=(width, 9.5 * bands), layout="constrained")
    subfigs = list(fig.subfigures(bands, 1, hspace=0.02)) if bands > 1 else [fig]
    axes = []
    for subfig, (key, suites) in zip(subfigs, dw_storages.items()):
        if bands > 1:
            subfig.suptitle(f"depthwise {storage_title(key)}", fontsize=10, x=0.01, ha="left")
        axes += list(draw_depthwise(subfig, suites))
    for subfig, (key, suites) in zip(subfigs[len(dw_storages):], dense_storages.items()):
        peak_text = dense_peak_text(run_meta(dense_meta, [r for rs in suites.values() for r in rs], data.get("runs")),
                                    key)
        if bands > 1:
            subfig.suptitle(f"dense conv2d {storage_title(key)}" + (f" — {peak_text}" if peak_text else ""),
                            fontsize=10, x=0.01, ha="left")
        axes += list(draw_dense(subfig, suites))
    handles, names = collect_legend(fig, axes)
    fig.legend(handles, names, loc="outside lower center", ncol=min(len(names), 9), fontsize=9)
    what = ", ".join(storage_title(k) for k in dw_storages)
    if dw_storages:
        title = title_of(data, f"depthwise ({what})" + (" + dense conv" if dense_storages else ""))
    else:
        title = title_of(dense_meta, "dense conv")
        if len(dense_storages) == 1:
            peak_text = dense_peak_text(dense_meta, next(iter(dense_storages)))
            title += f" — {peak_text}" if peak_text else ""
    fig.suptitle(title, fontsize=11, x=0.01, ha="left")
    save_png(fig, out_path, dpi)
    plt.close(fig)


def main(argv=None):
    args = parse_args(argv)
    data = load(args.json)
    plot(data, args.out, args.dpi)
    print(f"[plot] wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
