#!/usr/bin/env python3
"""dwtable.py OUT_DIR NAME [NAME ...]: the tables of dwsweep.sh's runs (OUT_DIR/NAME.json, the benchmark's
JSON; OUT_DIR/NAME.schedules.txt, dwlist.py's lines).

Per run: one line a row, with the float32 NHWC rows' copy rate against their float32 NCHW twin's (the
`nhwc_vs_nchw` target of bench/report.py, computed with its own functions: copy rate = copy cold µs /
convgen cold µs; target = NHWC copy rate / NCHW twin's copy rate, met at >= 0.95), and the float16 and
bfloat16 NHWC rows' copy rate itself (the `mnv2_b64_copy_rate` target, met at >= 0.95).
With several NAMEs, then a summary: one line an NHWC row, that measure under every run (and the cold µs),
and the spread of the NCHW twins' copy rates over the runs (their kernels never change: run-to-run noise).
--summary-only prints the summary alone.
"""
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
from report import copy_rate, row_key  # noqa: E402  (bench/report.py: the target's own arithmetic)

LIMIT = 0.95


def load(out, name):
    path = os.path.join(out, name + ".json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        doc = json.load(f)
    return doc["rows"] if isinstance(doc, dict) else doc


def schedules(out, name):
    """{kernel name: schedule text} from dwlist.py's output."""
    found = {}
    path = os.path.join(out, name + ".schedules.txt")
    if os.path.exists(path):
        for line in open(path):
            parts = line.split(None, 2)
            if len(parts) == 3:
                found[parts[0]] = parts[2].strip()
    return found


def short_schedule(text):
    # "staged cpb  24 (96 B run) tile [ 2, 7] groups 4 thr ..." -> "cpb 24 [2,7] g4"
    m = re.search(r"cpb\s+(\d+).*?tile \[\s*(\d+),\s*(\d+)\] groups (\d+)", text)
    return f"cpb {m[1]} [{m[2]},{m[3]}] g{m[4]}" if m else text[:22]


def label(r):
    return f"{r['suite']} {r['n']}x{r['c']}x{r['h']}x{r['w']} k{r['kh']} s{r['stride']}"


def form(r):
    """A row's dtype and layout, short: "f16 NHWC"."""
    short = {"float32": "f32", "float16": "f16", "bfloat16": "bf16"}
    return f"{short.get(r.get('dtype', 'float32'), '?')} {r.get('layout', '?')}"


def fmt(x, spec=".2f"):
    return format(x, spec) if isinstance(x, (int, float)) else "-"


def twins(rows):
    return {row_key(r): r for r in rows if (r.get("dtype"), r.get("layout")) == ("float32", "NCHW")}


def measure(r, nchw):
    """An NHWC row's target measure: float32, its copy rate over its NCHW twin's; the half types, its copy rate."""
    rate = copy_rate(r) if r else None
    if not rate or r.get("dtype", "float32") != "float32":
        return rate
    twin = nchw.get(row_key(r))
    return rate / copy_rate(twin) if twin and copy_rate(twin) else None


def run_table(out, name):
    rows = load(out, name)
    if rows is None:
        print(f"{name}: no {name}.json")
        return
    scheds = schedules(out, name)
    nchw = twins(rows)
    print(f"{'row':34s} {'form':9s} {'schedule':22s} {'hot':>7s} {'cold':>7s} {'plain':>7s} {'fused/':>6s} "
          f"{'copy':>7s} {'copy':>5s} {'nhwc/':>6s}")
    print(f"{'':34s} {'':9s} {'':22s} {'µs':>7s} {'µs':>7s} {'hot µs':>7s} {'plain':>6s} "
          f"{'cold µs':>7s} {'rate':>5s} {'nchw':>6s} (half types: their copy rate)")
    for r in rows:
        hot, cold, plain = r.get("convgen_hot_us"), r.get("convgen_cold_us"), r.get("convgen_noepilogue_hot_us")
        rate = copy_rate(r)
        verdict = ""
        sched = ""
        if r.get("layout") == "NHWC":
            v = measure(r, nchw)
            if v is not None:
                verdict = f"{v:6.3f} {'met' if v >= LIMIT else 'MISS'}"
            sched = short_schedule(scheds.get(r.get("name", ""), "?"))
        fused = hot / plain if hot and plain and r.get("epilogue") != "none" else None
        print(f"{label(r):34s} {form(r):9s} {sched:22s} {fmt(hot):>7s} {fmt(cold):>7s} {fmt(plain):>7s} "
              f"{fmt(fused, '.3f'):>6s} {fmt(r.get('copy_cold_us')):>7s} {fmt(rate, '.3f'):>5s} {verdict}")


def summary(out, names):
    runs = {n: load(out, n) for n in names}
    runs = {n: rows for n, rows in runs.items() if rows}
    if not runs:
        print("summary: no run finished")
        return
    first = next(iter(runs.values()))
    # An NHWC row: its workload and dtype (a sweep may time float16 and bfloat16 rows of one workload).
    nhwc_key = lambda r: (row_key(r), r.get("dtype", "float32"))  # noqa: E731
    keys = [nhwc_key(r) for r in first if r.get("layout") == "NHWC"]
    labels = {nhwc_key(r): f"{label(r)} {form(r).split()[0]}" for r in first if r.get("layout") == "NHWC"}
    print("nhwc_vs_nchw (float32 NHWC copy rate / the NCHW twin's, same run; the half types: their copy rate;"
          " >= 0.95 met) and NHWC cold µs:")
    print(f"{'row':39s} " + " ".join(f"{n[:13]:>13s}" for n in runs) + "  best")
    for key in keys:
        cells, best = [], None
        for n, rows in runs.items():
            by = {nhwc_key(r): r for r in rows if r.get("layout") == "NHWC"}
            r = by.get(key)
            v = measure(r, twins(rows))
            cells.append(f"{fmt(v, '.3f')}/{fmt(r.get('convgen_cold_us') if r else None, '.1f'):>6s}")
            if v is not None and (best is None or v > best[0]):
                best = (v, n)
        print(f"{labels[key]:39s} " + " ".join(f"{c:>13s}" for c in cells) +
              (f"  {best[1]} {best[0]:.3f}" if best else ""))
    print("NCHW twins' copy rate over the runs (unchanged kernels: the noise), min-max:")
    for key in dict.fromkeys(k for k, _ in keys):
        rates = [copy_rate(twins(rows).get(key)) for rows in runs.values() if twins(rows).get(key)]
        rates = [x for x in rates if x]
        if rates:
            print(f"  {label(twins(first)[key]):34s} {min(rates):.3f}-{max(rates):.3f} "
                  f"(spread {max(rates) / min(rates) - 1:.1%})")


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) < 2:
        print(__doc__)
        return 2
    out, names = args[0], args[1:]
    if "--summary-only" not in sys.argv:
        for n in names:
            print(f"== {n}")
            run_table(out, n)
    if len(names) > 1 or "--summary-only" in sys.argv:
        summary(out, names)
    return 0


if __name__ == "__main__":
    sys.exit(main())
