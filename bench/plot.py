#!/usr/bin/env python3
"""Draw the depthwise-convolution benchmark figure from the merged JSON.

One column of panels per suite (in the order the suites first appear):
  top row     hot time per workload in µs, grouped bars: convgen, cuDNN, PyTorch
  bottom row  fraction of the copy ceiling reached cold (floor_us / cold time), with a
              black tick for a device-to-device copy of the same bytes
              for convgen, cuDNN and PyTorch, where a cold time exists

Input is the JSON written by bench/torch_compare.py (the plain benchmark JSON
works too: the PyTorch bars are then simply missing).
"""

import argparse
import json
import math
import sys

import matplotlib

matplotlib.use("Agg")  # no display on the GPU machine
import matplotlib.pyplot as plt  # noqa: E402

# (label, hot key, cold key, precomputed fraction key, colour)
SERIES = [
    ("convgen", "convgen_hot_us", "convgen_cold_us", "convgen_frac_ceiling", "#1f77b4"),
    ("cuDNN", "cudnn_hot_us", "cudnn_cold_us", "cudnn_frac_ceiling", "#ff7f0e"),
    ("PyTorch", "torch_hot_us", "torch_cold_us", "torch_frac_ceiling", "#2ca02c"),
]

# Short codes so that epilogues fit under a bar group.
EPILOGUE_SHORT = {
    "none": "", "relu": "r", "relu6": "r6", "bias": "b", "bias_relu": "br",
    "scale_shift": "ss", "scale_shift_relu": "ssr", "scale_shift_relu6": "ssr6",
}

# Use a log axis once the slowest bar is this many times the fastest.
LOG_RANGE = 20.0


def parse_args(argv=None):
    p = argparse.ArgumentParser(description="Plot convgen vs cuDNN vs PyTorch depthwise timings.")
    p.add_argument("--json", required=True, help="merged JSON from bench/torch_compare.py")
    p.add_argument("--out", required=True, help="PNG file to write")
    p.add_argument("--dpi", type=int, default=110)
    return p.parse_args(argv)


def num(v):
    """A positive finite float, or None (missing, null, zero or NaN values draw no bar)."""
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) and f > 0 else None


def frac_ceiling(row, cold_key, frac_key):
    """floor_us / cold time; prefer the value the producer computed."""
    f = num(row.get(frac_key))
    if f is not None:
        return f
    floor, cold = num(row.get("floor_us")), num(row.get(cold_key))
    return floor / cold if floor and cold else None


def group_by_suite(rows):
    suites = {}
    for r in rows:
        suites.setdefault(str(r.get("suite", "?")), []).append(r)
    return suites


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
            epi = str(r.get("epilogue", "none"))
            code = EPILOGUE_SHORT.get(epi, epi)
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


def draw_hot_panel(ax, suite, rows, labels):
    series = [(name, colour, [num(r.get(hot)) for r in rows])
              for name, hot, _, _, colour in SERIES]
    draw_bars(ax, labels, series)
    values = [v for _, _, vals in series for v in vals if v is not None]
    if values and max(values) / min(values) > LOG_RANGE:
        ax.set_yscale("log")
    ax.set_title(f"{suite}: hot time (lower is better)", fontsize=10)
    ax.set_ylabel("µs per launch")


def draw_ceiling_panel(ax, suite, rows, labels):
    series = [(name, colour, [frac_ceiling(r, cold, frac) for r in rows])
              for name, _, cold, frac, colour in SERIES]
    # Leave out a library with no cold numbers at all rather than show an empty legend entry.
    series = [s for s in series if any(v is not None for v in s[2])]
    if not series:
        ax.text(0.5, 0.5, "no cold timings", ha="center", va="center", transform=ax.transAxes)
        ax.set_xticks([])
        return
    draw_bars(ax, labels, series)
    # What a copy of the same bytes reaches cold: the most any kernel of this
    # size can expect, launch and ramp included.
    copy = [frac_ceiling(r, "copy_cold_us", "copy_frac_ceiling") for r in rows]
    if any(v is not None for v in copy):
        ax.scatter(range(len(rows)), [v if v is not None else float("nan") for v in copy], marker="_", s=400,
                   linewidths=2, color="black", zorder=3, label="copy of the same bytes")
    top = max(v for _, _, vals in series for v in vals if v is not None)
    ax.set_ylim(0, max(1.05, top * 1.1))
    ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
    ax.set_title(f"{suite}: fraction of copy ceiling, cold (higher is better)", fontsize=10)
    ax.set_ylabel("floor / cold time")


def title_of(data):
    gpu = data.get("gpu", "unknown GPU")
    date = data.get("date", "unknown date")
    commit = data.get("commit", "unknown commit")
    ceiling = num(data.get("copy_ceiling_tbps"))
    text = f"convgen depthwise conv (fp32 NCHW) — {gpu} — {date} — commit {commit}"
    if ceiling:
        text += f" — copy ceiling {ceiling:.2f} TB/s"
    return text


def plot(data, out_path, dpi=110):
    suites = group_by_suite(data.get("rows", []))
    if not suites:
        raise SystemExit("plot.py: the JSON has no rows")
    counts = [len(r) for r in suites.values()]
    # Width grows with the number of bar groups so that labels stay readable.
    width = max(8.0, 0.55 * sum(counts) + 1.5 * len(counts))
    fig, axes = plt.subplots(2, len(suites), figsize=(width, 9), squeeze=False,
                             gridspec_kw={"width_ratios": [max(c, 2) for c in counts]})
    for col, (suite, rows) in enumerate(suites.items()):
        labels = short_labels(rows)
        draw_hot_panel(axes[0][col], suite, rows, labels)
        draw_ceiling_panel(axes[1][col], suite, rows, labels)
    # One legend for the figure: the libraries, and the copy tick where a ceiling panel drew it.
    handles, names = axes[0][0].get_legend_handles_labels()
    for ax in axes[1]:
        for handle, name in zip(*ax.get_legend_handles_labels()):
            if name not in names:
                handles.append(handle)
                names.append(name)
    fig.legend(handles, names, loc="upper right", ncol=len(names), fontsize=9)
    fig.suptitle(title_of(data), fontsize=11, x=0.01, ha="left")
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    fig.savefig(out_path, dpi=dpi)
    plt.close(fig)


def main(argv=None):
    args = parse_args(argv)
    with open(args.json) as f:
        data = json.load(f)
    plot(data, args.out, args.dpi)
    print(f"[plot] wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
