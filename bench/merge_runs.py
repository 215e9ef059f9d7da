#!/usr/bin/env python3
"""Merge the results of several benchmark runs of one commit into one document.

A full benchmark (every depthwise and dense row, with the CUTLASS-based
tensor-core kernels) can take longer to build than one session on a GPU
machine allows. It can then be run in parts: each part a subset of the CSVs
(scripts/gpu_check.sh with BENCH_CSV / DENSE_CSV), each writing its own
merged.json. This script puts the parts back together for plot.py and
report.py:

  - every part must carry the same commit, GPU model, timing method and
    library versions (else it refuses: rows of different code, hardware or
    method do not belong in one table);
  - depthwise rows and dense rows are concatenated, a workload measured
    twice is refused, and rows are put in the order of the CSVs when given;
  - each row keeps the times and fractions of the run that measured it and
    names it ("run"); every part's date, copy ceiling and peaks are listed
    under "runs", and report.py takes a section's references from the run
    that measured its rows;
  - the document's own keys are those of the first part holding depthwise
    rows (else the first part).
"""

import argparse
import csv
import json
import os
import sys

from results import dense_document, depthwise_rows, load

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from spec_from_model import write_whole  # noqa: E402  the whole file or nothing, with the umask's mode

# Per-run references listed under "runs": the depthwise document's and the dense one's.
RUN_KEYS = ["date", "copy_ceiling_tbps"]
DENSE_RUN_KEYS = ["copy_ceiling_tbps", "fp32_peak_tflops", "tf32_peak_tflops", "tensor_peak_tflops"]
# How the rows were measured and with what: parts that differ in one of these do not make one table.
SAME_KEYS = ["torch_version", "torch_cudnn_version", "torch_method"]
DENSE_SAME_KEYS = ["hot_launches", "hot_replays", "trials", "cold_flush", "cudnn_version", "cublas_version",
                   "tuning_db"]


def csv_order(path, dense):
    """{row key: position} of a benchmark CSV's data lines, read as the benchmark reads them (fields
    stripped, '#' lines skipped)."""
    if not path:
        return None
    with open(path, newline="") as f:
        lines = [line for line in f if line.strip() and not line.lstrip().startswith("#")]
    reader = csv.reader(lines)
    header = [h.strip() for h in next(reader)]
    order = {}
    for i, fields in enumerate(reader):
        key = row_key(dict(zip(header, (v.strip() for v in fields))), dense)
        if key in order:
            raise SystemExit(f"merge_runs: {path}: the workload {key} is listed twice")
        order[key] = i
    return order


def normal(value):
    """A CSV cell or JSON value as one spelling: integers without leading zeros, text stripped."""
    text = str(value).strip()
    try:
        return str(int(text))
    except ValueError:
        return text


def row_key(r, dense):
    """What identifies a benchmark row: its suite and workload, the same in the CSV and in the results
    (not the kernel's name: generic and runtime-batch kernels serve several rows under one)."""
    def get(*names, default=""):
        for name in names:
            if r.get(name) not in (None, ""):
                return normal(r[name])
        return default
    common = [get("suite"), get("n"), get("c", "c_in"), get("h"), get("w"), get("kh"), get("kw"), get("stride"),
              get("pad"), get("epilogue"), get("dtype", default="float32"), get("layout", default="NCHW")]
    if dense:
        return tuple(common + [get("c_out"), get("math", default="fp32")])
    return tuple(common + [get("mult")])


def ordered(tagged, order, dense, what):
    """The rows of every part ([(part, row)]) in the CSV's order; a workload measured twice is refused."""
    seen = {}
    for part, r in tagged:
        key = row_key(r, dense)
        if key in seen:
            raise SystemExit(f"merge_runs: {what} row {r.get('suite')}/{r.get('name')} {key} is in parts "
                             f"{seen[key]} and {part}")
        seen[key] = part
    rows = [r for _, r in tagged]
    if order is None:
        return rows
    missing = [r for r in rows if row_key(r, dense) not in order]
    if missing:
        r = missing[0]
        raise SystemExit(f"merge_runs: {what} row {r.get('suite')}/{r.get('name')} {row_key(r, dense)} is not in "
                         f"the CSV given ({len(missing)} such row(s))")
    return sorted(rows, key=lambda r: order[row_key(r, dense)])


def same_everywhere(documents, names, keys, what):
    """Refuse parts that disagree on one of keys (a part without the key does not count)."""
    for key in keys:
        values = {}
        for name, d in zip(names, documents):
            if d is not None and d.get(key) is not None:
                values.setdefault(json.dumps(d[key], sort_keys=True), name)
        if len(values) > 1:
            raise SystemExit(f"merge_runs: the parts' {what}{key} differ: "
                             + ", ".join(f"{v} ({n})" for v, n in values.items()))


def part_name(path):
    """A part's name: its folder's for OUT_DIR/merged.json (gpu_check's name), else the file's stem."""
    stem = os.path.splitext(os.path.basename(path))[0]
    folder = os.path.basename(os.path.dirname(os.path.abspath(path)))
    return folder if stem == "merged" and folder else stem


def merge(documents, names, depthwise_csv=None, dense_csv=None):
    """One document from the parts; each row gets "run": the name of the part that measured it."""
    same_everywhere(documents, names, ["commit", "gpu"] + SAME_KEYS, "")
    dense_parts = [dense_document(d) for d in documents]  # (meta, rows) of each part
    dense_docs = [meta if rows else None for meta, rows in dense_parts]
    same_everywhere(dense_docs, names, DENSE_SAME_KEYS, "dense ")
    base = next((d for d in documents if depthwise_rows(d)), documents[0])
    merged = {k: v for k, v in base.items() if k not in ("rows", "dense")}
    tagged = [(name, dict(r, run=name)) for name, d in zip(names, documents) for r in depthwise_rows(d)]
    merged["rows"] = ordered(tagged, csv_order(depthwise_csv, False), False, "depthwise")
    if any(dense_docs):
        dense_base = dense_docs[documents.index(base)] or next(m for m in dense_docs if m)
        dense = {k: v for k, v in dense_base.items() if k != "rows"}
        tagged = [(name, dict(r, run=name)) for name, (_, rows) in zip(names, dense_parts) for r in rows]
        dense["rows"] = ordered(tagged, csv_order(dense_csv, True), True, "dense")
        merged["dense"] = dense
    runs = []
    for name, d, (meta, rows) in zip(names, documents, dense_parts):
        run = {"part": name, "depthwise_rows": len(depthwise_rows(d)), "dense_rows": len(rows)}
        run.update({k: d.get(k) for k in RUN_KEYS if d.get(k) is not None})
        if rows:
            run["dense"] = {k: meta.get(k) for k in DENSE_RUN_KEYS if meta.get(k) is not None}
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
    names = [part_name(path) for path in args.parts]
    if len(set(names)) != len(names):
        names = list(args.parts)
    merged = merge(documents, names, args.depthwise_csv, args.dense_csv)
    write_whole(args.out, json.dumps(merged, indent=2) + "\n")
    dense_rows = len(merged.get("dense", {}).get("rows", []))
    print(f"merge_runs: {len(documents)} parts of commit {merged.get('commit')}: {len(merged['rows'])} depthwise "
          f"and {dense_rows} dense rows -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
