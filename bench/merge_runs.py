#!/usr/bin/env python3
"""Merge the results of several benchmark runs of one commit into one document.

A full benchmark (every depthwise and dense row, with the CUTLASS-based
tensor-core kernels) can take longer to build than one session on a GPU
machine allows. It can then be run in parts: each part a subset of the CSVs
(scripts/gpu_check.sh with BENCH_CSV / DENSE_CSV), each writing its own
merged.json. This script puts the parts back together for plot.py and
report.py:

  - every part must carry the same commit and GPU model (else it refuses:
    rows of different code or hardware do not belong in one table);
  - depthwise rows and dense rows are concatenated, a row measured twice is
    refused, and rows are put in the order of the CSVs when given;
  - the document's own keys (copy ceiling, peaks, versions) are those of the
    first part holding depthwise rows (else the first part); every part's
    date, copy ceiling and peaks are listed under "runs", which report.py
    prints, so that a reader sees how far apart the runs' references were.

Each row keeps the times and fractions of the run that measured it.
"""

import argparse
import csv
import json
import os
import sys

from results import dense_document, depthwise_rows, load

# Per-run references listed under "runs": the depthwise document's and the dense one's.
RUN_KEYS = ["date", "copy_ceiling_tbps"]
DENSE_RUN_KEYS = ["fp32_peak_tflops", "tf32_peak_tflops", "tensor_peak_tflops"]


def csv_order(path, dense):
    """Kernel-name-free order key of a CSV: its data lines' (suite, shape...) tuples, in order."""
    if not path:
        return None
    with open(path, newline="") as f:
        lines = [line for line in f if line.strip() and not line.startswith("#")]
    reader = csv.DictReader(lines)
    return {row_key(r, dense): i for i, r in enumerate(reader)}


def row_key(r, dense):
    """What identifies a benchmark row: its suite and workload, the same in the CSV and in the results."""
    def get(*names):
        for name in names:
            if name in r and r[name] not in (None, ""):
                return str(r[name])
        return ""
    common = [get("suite"), get("n"), get("c", "c_in"), get("h"), get("w"), get("kh"), get("kw"), get("stride"),
              get("epilogue"), get("dtype") or "float32", get("layout") or "NCHW"]
    if dense:
        return tuple(common + [get("c_out"), get("math") or "fp32"])
    return tuple(common + [get("mult")])


def ordered(rows, order, dense, what):
    seen = {}
    for r in rows:
        key = (r.get("name"), r.get("suite"), r.get("math"))
        if key in seen:
            raise SystemExit(f"merge_runs: {what} row {r.get('suite')}/{r.get('name')} is in two parts")
        seen[key] = r
    if order is None:
        return rows
    missing = [r for r in rows if row_key(r, dense) not in order]
    if missing:
        r = missing[0]
        raise SystemExit(f"merge_runs: {what} row {r.get('suite')}/{r.get('name')} is not in the CSV given "
                         f"({len(missing)} such row(s))")
    return sorted(rows, key=lambda r: order[row_key(r, dense)])


def part_name(path):
    """A part's name: its folder's for OUT_DIR/merged.json (gpu_check's name), else the file's stem."""
    stem = os.path.splitext(os.path.basename(path))[0]
    folder = os.path.basename(os.path.dirname(os.path.abspath(path)))
    return folder if stem == "merged" and folder else stem


def merge(documents, names, depthwise_csv=None, dense_csv=None):
    commits = {d.get("commit") for d in documents}
    gpus = {d.get("gpu") for d in documents}
    if len(commits) != 1:
        raise SystemExit(f"merge_runs: the parts are of different commits: {sorted(map(str, commits))}")
    if len(gpus) != 1:
        raise SystemExit(f"merge_runs: the parts ran on different GPUs: {sorted(map(str, gpus))}")
    base = next((d for d in documents if depthwise_rows(d)), documents[0])
    merged = {k: v for k, v in base.items() if k not in ("rows", "dense")}
    merged["rows"] = ordered([r for d in documents for r in depthwise_rows(d)], csv_order(depthwise_csv, False),
                             False, "depthwise")
    dense_parts = [d for d in documents if dense_document(d)[1]]
    if dense_parts:
        dense_base = dense_document(next((d for d in dense_parts if d is base), dense_parts[0]))[0]
        dense = {k: v for k, v in dense_base.items() if k != "rows"}
        dense["rows"] = ordered([r for d in dense_parts for r in dense_document(d)[1]], csv_order(dense_csv, True),
                                True, "dense")
        merged["dense"] = dense
    runs = []
    for name, d in zip(names, documents):
        meta, dense_rows = dense_document(d)
        run = {"part": name, "depthwise_rows": len(depthwise_rows(d)), "dense_rows": len(dense_rows)}
        run.update({k: d.get(k) for k in RUN_KEYS if d.get(k) is not None})
        if dense_rows:
            run.update({k: meta.get(k) for k in DENSE_RUN_KEYS if meta.get(k) is not None})
        runs.append(run)
    merged["runs"] = runs
    return merged


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                epilog="Example: merge_runs.py --out merged.json --depthwise-csv bench/depthwise.csv "
                                       "--dense-csv bench/dense.csv part1/merged.json part2/merged.json")
    p.add_argument("parts", nargs="+", help="merged.json of each run (scripts/gpu_check.sh's OUT_DIR)")
    p.add_argument("--out", required=True, help="the merged document to write")
    p.add_argument("--depthwise-csv", help="put the depthwise rows in this CSV's order (every row must be in it)")
    p.add_argument("--dense-csv", help="put the dense rows in this CSV's order (every row must be in it)")
    args = p.parse_args()
    documents = [load(path) for path in args.parts]
    merged = merge(documents, [part_name(path) for path in args.parts], args.depthwise_csv, args.dense_csv)
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(merged, f, indent=2)
        f.write("\n")
    os.replace(tmp, args.out)
    dense_rows = len(merged.get("dense", {}).get("rows", []))
    print(f"merge_runs: {len(documents)} parts of commit {merged.get('commit')}: {len(merged['rows'])} depthwise "
          f"and {dense_rows} dense rows -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
