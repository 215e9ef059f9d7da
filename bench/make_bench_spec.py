#!/usr/bin/env python3
"""Write the convgen specs for the benchmark libraries from the benchmark CSVs.

Depthwise (bench/depthwise.csv -> bench/depthwise_bench.yaml, library `bench`):
every CSV row becomes one workload. A row with an epilogue also gets the same
convolution with `epilogue: none` and `activation: none`, because the
benchmark times both (the plain variant is what cuDNN is compared against).
Both CSVs may have `dtype` and `layout` columns, the dense one a `math`
column (words of runtime/include/convgen/dtype.h, read by
bench/storage_words.py; without them a row is float32 NCHW, math fp32).
They become the workload's `dtype:`, `layout:` and `math:` keys where they
differ from the spec's defaults (float32, NCHW, fp32), so a float32 NCHW
row's workload reads as it did before those columns existed.

Dense (bench/dense.csv -> bench/dense_bench.yaml, library `bench_dense`):
every row becomes an `op: conv2d` workload with `residual: false`, plus its
plain twin (no epilogue, no activation) and its residual twin (the row's
epilogue and activation with `residual: true`), so that the benchmark can
time what the fused epilogue and the fused residual add cost.

In both, identical workloads are written once, in the order they first appear.
The CSV's epilogue word ("scale_shift_relu6") is split into the spec's
epilogue and activation words by bench/epilogue_words.py, which reads them
from the runtime's table; the generator validates the spec as any other.

Usage: bench/make_bench_spec.py [--csv bench/depthwise.csv] [--out bench/depthwise_bench.yaml]
                                [--dense-csv bench/dense.csv] [--dense-out bench/dense_bench.yaml]
(paths default to the files beside this script; --no-dense writes the depthwise
spec only). Python 3 standard library only.
"""

import argparse
import csv
import sys
from pathlib import Path

import epilogue_words
import storage_words

HERE = Path(__file__).resolve().parent
PADDINGS = ("same", "valid")
TEXT_COLUMNS = ("suite", "pad", "epilogue", "dtype", "layout", "math")

# What differs between the operators: the CSV's columns, the spec's fields
# (spec key, CSV column) before the filter and after the stride, the library,
# and whether workloads carry a residual flag (and a residual twin).
DEPTHWISE = {
    "columns": ["suite", "n", "c", "h", "w", "kh", "kw", "stride", "pad", "mult", "epilogue"],
    "op": "",
    "shape": [("n", "n"), ("c", "c"), ("h", "h"), ("w", "w")],
    "after_stride": [("multiplier", "mult")],
    "residual": False,
    "library": "bench",
    "about": ["Every CSV row (in its dtype and layout), plus the same convolution without epilogue for",
              "rows that have one."],
}
DENSE = {
    "columns": ["suite", "n", "c_in", "c_out", "h", "w", "kh", "kw", "stride", "pad", "epilogue"],
    "op": "op: conv2d, ",
    "shape": [("n", "n"), ("c", "c_in"), ("c_out", "c_out"), ("h", "h"), ("w", "w")],
    "after_stride": [],
    "residual": True,
    "library": "bench_dense",
    "about": ["Every CSV row, the same convolution without epilogue, and the row's epilogue with a",
              "residual add."],
}


def fail(where, message):
    sys.exit(f"{where}: error: {message}")


def read_rows(csv_path, columns):
    """Returns [(line_number, row_dict)] with integer fields converted and the epilogue split."""
    rows = []
    dtypes, layouts = storage_words.words()
    maths = storage_words.math_words()
    try:
        with open(csv_path, newline="", encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        fail(str(csv_path), f"cannot read it: {e.strerror}")
    except UnicodeDecodeError as e:
        fail(str(csv_path), f"not UTF-8 text ({e.reason} at byte {e.start})")
    reader = csv.reader(lines)
    header = None
    for line_number, fields in enumerate(reader, start=1):
        fields = [x.strip() for x in fields]
        if not any(fields) or fields[0].startswith("#"):
            continue
        where = f"{csv_path}:{line_number}"
        if header is None:
            missing = [c for c in columns if c not in fields]
            if missing:
                fail(where, f"header lacks column(s) {', '.join(missing)}")
            header = fields
            continue
        if len(fields) != len(header):
            fail(where, f"expected {len(header)} fields, found {len(fields)}")
        row = dict(zip(header, fields))
        for name in (c for c in columns if c not in TEXT_COLUMNS):
            try:
                row[name] = int(row[name])
            except ValueError:
                fail(where, f"{name} must be an integer, not '{row[name]}'")
            if row[name] <= 0:
                fail(where, f"{name} must be positive, not {row[name]}")
        if row["pad"] not in PADDINGS:
            fail(where, f"pad must be one of {', '.join(PADDINGS)}, not '{row['pad']}'")
        row.setdefault("dtype", storage_words.DEFAULT_DTYPE)
        row.setdefault("layout", storage_words.DEFAULT_LAYOUT)
        if row["dtype"] not in dtypes:
            fail(where, f"dtype must be one of {', '.join(dtypes)}, not '{row['dtype']}'")
        if row["layout"] not in layouts:
            fail(where, f"layout must be one of {', '.join(layouts)}, not '{row['layout']}'")
        row["math"] = row.get("math") or storage_words.DEFAULT_MATH
        if row["math"] not in maths:
            fail(where, f"math must be one of {', '.join(maths)}, not '{row['math']}'")
        row["split"] = epilogue_words.split(row["epilogue"])
        if row["split"] is None:
            fail(where, f"unknown epilogue '{row['epilogue']}' (an epilogue, an activation, or both "
                        f"joined by '_', as in runtime/include/convgen/epilogue.h)")
        rows.append((line_number, row))
    if header is None:
        fail(csv_path, "no header line")
    return rows


def render_workload(operator, row, epilogue, activation, residual):
    """One workload line, without its comment; also the key that makes two workloads the same."""
    fields = lambda pairs: "".join(f", {key}: {row[column]}" for key, column in pairs)  # noqa: E731
    # `padding: same` is the default, so only other paddings are written.
    padding = "" if row["pad"] == "same" else f", padding: {row['pad']}"
    flag = f", residual: {'true' if residual else 'false'}" if operator["residual"] else ""
    # The defaults (float32, NCHW) are not written either.
    storage = "".join(f", {key}: {row[key]}" for key, default in
                      (("dtype", storage_words.DEFAULT_DTYPE), ("layout", storage_words.DEFAULT_LAYOUT),
                       ("math", storage_words.DEFAULT_MATH))
                      if row[key] != default)
    return (f"  - {{{operator['op']}{fields(operator['shape'])[2:]}, filter: [{row['kh']}, {row['kw']}], "
            f"stride: {row['stride']}{padding}{fields(operator['after_stride'])}, epilogue: {epilogue}, "
            f"activation: {activation}{flag}{storage}}}")


def build_workloads(operator, rows):
    """Returns {workload line: note} in first-appearance order: each row, its plain and (dense) residual twin."""
    workloads = {}
    for line_number, row in rows:
        epilogue, activation = row["split"]
        note = f"{row['suite']}, csv line {line_number}"
        if (row["dtype"], row["layout"]) != (storage_words.DEFAULT_DTYPE, storage_words.DEFAULT_LAYOUT):
            note = f"{row['suite']} {row['dtype']} {row['layout']}, csv line {line_number}"
        if row["math"] != storage_words.DEFAULT_MATH:
            note = f"{row['suite']} {row['dtype']} {row['layout']} math {row['math']}, csv line {line_number}"
        workloads.setdefault(render_workload(operator, row, epilogue, activation, False), note)
        workloads.setdefault(render_workload(operator, row, "none", "none", False), note + ", without epilogue")
        if operator["residual"]:
            workloads.setdefault(render_workload(operator, row, epilogue, activation, True), note + ", with residual")
    return workloads


def render_spec(operator, csv_name, workloads):
    lines = [
        f"# Generated by bench/make_bench_spec.py from {csv_name}; do not edit by hand.",
        "# Rerun `python3 bench/make_bench_spec.py` after changing the CSV.",
        *(f"# {line}" for line in operator["about"]),
        f"library: {operator['library']}",
        "defaults:",
        f"  dtype: {storage_words.DEFAULT_DTYPE}",
        f"  layout: {storage_words.DEFAULT_LAYOUT}",
        "  padding: same",
        "workloads:",
    ]
    lines += [f"{line}  # {note}" for line, note in workloads.items()]
    return "\n".join(lines) + "\n"


def spec_text(operator, csv_path):
    workloads = build_workloads(operator, read_rows(csv_path, operator["columns"]))
    return render_spec(operator, "bench/" + csv_path.name, workloads), len(workloads)


def write_spec(out_path, text, count):
    # Write only when the text changed, so the build does not regenerate kernels needlessly.
    try:
        if not out_path.exists() or out_path.read_text() != text:
            out_path.write_text(text)
    except OSError as e:
        fail(str(out_path), f"cannot write it: {e.strerror}")
    print(f"{out_path}: {count} workloads", file=sys.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv", type=Path, default=HERE / "depthwise.csv", help="the depthwise workloads' CSV")
    parser.add_argument("--out", type=Path, default=HERE / "depthwise_bench.yaml", help="the depthwise spec to write")
    parser.add_argument("--dense-csv", type=Path, default=HERE / "dense.csv", help="the dense workloads' CSV")
    parser.add_argument("--dense-out", type=Path, default=HERE / "dense_bench.yaml", help="the dense spec to write")
    parser.add_argument("--no-dense", action="store_true", help="write the depthwise spec only")
    args = parser.parse_args()

    # Both specs made before either is written: a bad CSV leaves both files as they were.
    specs = [(args.out, *spec_text(DEPTHWISE, args.csv))]
    if not args.no_dense:
        specs.append((args.dense_out, *spec_text(DENSE, args.dense_csv)))
    for out_path, text, count in specs:
        write_spec(out_path, text, count)


if __name__ == "__main__":
    main()
