#!/usr/bin/env python3
"""Write the convgen specs for the benchmark libraries from the benchmark CSVs.

Depthwise (bench/depthwise.csv -> bench/depthwise_bench.yaml, library `bench`):
every CSV row becomes one workload. A row with an epilogue also gets the same
convolution with `epilogue: none` and `activation: none`, because the
benchmark times both (the plain variant is what cuDNN is compared against).

Dense (bench/dense.csv -> bench/dense_bench.yaml, library `bench_dense`):
every row becomes an `op: conv2d` workload with `residual: false`, plus its
plain twin (no epilogue, no activation) and its residual twin (the row's
epilogue and activation with `residual: true`), so that the benchmark can
time what the fused epilogue and the fused residual add cost.

In both, identical workloads are written once, in the order they first appear.

Usage: bench/make_bench_spec.py [--csv bench/depthwise.csv] [--out bench/depthwise_bench.yaml]
                                [--dense-csv bench/dense.csv] [--dense-out bench/dense_bench.yaml]
(paths default to the files beside this script; --no-dense writes the depthwise
spec only). Python 3 standard library only.
"""

import argparse
import csv
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
COLUMNS = ["suite", "n", "c", "h", "w", "kh", "kw", "stride", "pad", "mult", "epilogue"]
INT_COLUMNS = ["n", "c", "h", "w", "kh", "kw", "stride", "mult"]
DENSE_COLUMNS = ["suite", "n", "c_in", "c_out", "h", "w", "kh", "kw", "stride", "pad", "epilogue"]
DENSE_INT_COLUMNS = ["n", "c_in", "c_out", "h", "w", "kh", "kw", "stride"]

# CSV epilogue name -> (spec epilogue, spec activation). "relu"/"relu6" alone
# mean an activation with no affine step.
EPILOGUES = {
    "none": ("none", "none"),
    "bias": ("bias", "none"),
    "scale_shift": ("scale_shift", "none"),
    "bias_relu": ("bias", "relu"),
    "scale_shift_relu": ("scale_shift", "relu"),
    "scale_shift_relu6": ("scale_shift", "relu6"),
    "relu": ("none", "relu"),
    "relu6": ("none", "relu6"),
}
PADDINGS = ("same", "valid")


def fail(where, message):
    sys.exit(f"{where}: error: {message}")


def read_rows(csv_path, columns=COLUMNS, int_columns=INT_COLUMNS):
    """Returns [(line_number, row_dict)] with integer fields converted."""
    rows = []
    with open(csv_path, newline="") as f:
        reader = csv.reader(f)
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
            for name in int_columns:
                try:
                    row[name] = int(row[name])
                except ValueError:
                    fail(where, f"{name} must be an integer, not '{row[name]}'")
                if row[name] <= 0:
                    fail(where, f"{name} must be positive, not {row[name]}")
            if row["pad"] not in PADDINGS:
                fail(where, f"pad must be one of {', '.join(PADDINGS)}, not '{row['pad']}'")
            if row["epilogue"] not in EPILOGUES:
                fail(where, f"epilogue must be one of {', '.join(EPILOGUES)}, not '{row['epilogue']}'")
            rows.append((line_number, row))
    if header is None:
        fail(csv_path, "no header line")
    return rows


def workload_key(row, epilogue, activation):
    """Everything that makes two workloads the same kernel request."""
    return (row["n"], row["c"], row["h"], row["w"], row["kh"], row["kw"], row["stride"],
            row["pad"], row["mult"], epilogue, activation)


def render_workload(key, note):
    n, c, h, w, kh, kw, stride, pad, mult, epilogue, activation = key
    # `padding: same` is the default, so only other paddings are written.
    padding = "" if pad == "same" else f", padding: {pad}"
    return (f"  - {{n: {n}, c: {c}, h: {h}, w: {w}, filter: [{kh}, {kw}], stride: {stride}{padding}, "
            f"multiplier: {mult}, epilogue: {epilogue}, activation: {activation}}}  # {note}")


def build_workloads(rows):
    """Returns {key: note} in first-appearance order, plain variants included."""
    workloads = {}
    for line_number, row in rows:
        epilogue, activation = EPILOGUES[row["epilogue"]]
        note = f"{row['suite']}, csv line {line_number}"
        workloads.setdefault(workload_key(row, epilogue, activation), note)
        if (epilogue, activation) != ("none", "none"):
            workloads.setdefault(workload_key(row, "none", "none"), note + ", without epilogue")
    return workloads


def render_spec(csv_name, workloads):
    lines = [
        f"# Generated by bench/make_bench_spec.py from {csv_name}; do not edit by hand.",
        "# Rerun `python3 bench/make_bench_spec.py` after changing the CSV.",
        "# Every CSV row, plus the same convolution without epilogue for rows that have one.",
        "library: bench",
        "defaults:",
        "  dtype: float32",
        "  layout: NCHW",
        "  padding: same",
        "workloads:",
    ]
    lines += [render_workload(key, note) for key, note in workloads.items()]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------
# Dense conv2d.

def dense_key(row, epilogue, activation, residual):
    """Everything that makes two dense workloads the same kernel request."""
    return (row["n"], row["c_in"], row["c_out"], row["h"], row["w"], row["kh"], row["kw"],
            row["stride"], row["pad"], epilogue, activation, residual)


def render_dense_workload(key, note):
    n, c, c_out, h, w, kh, kw, stride, pad, epilogue, activation, residual = key
    padding = "" if pad == "same" else f", padding: {pad}"
    return (f"  - {{op: conv2d, n: {n}, c: {c}, c_out: {c_out}, h: {h}, w: {w}, filter: [{kh}, {kw}], "
            f"stride: {stride}{padding}, epilogue: {epilogue}, activation: {activation}, "
            f"residual: {'true' if residual else 'false'}}}  # {note}")


def build_dense_workloads(rows):
    """Returns {key: note} in first-appearance order: each row, its plain and its residual twin."""
    workloads = {}
    for line_number, row in rows:
        epilogue, activation = EPILOGUES[row["epilogue"]]
        note = f"{row['suite']}, csv line {line_number}"
        workloads.setdefault(dense_key(row, epilogue, activation, False), note)
        workloads.setdefault(dense_key(row, "none", "none", False), note + ", without epilogue")
        workloads.setdefault(dense_key(row, epilogue, activation, True), note + ", with residual")
    return workloads


def render_dense_spec(csv_name, workloads):
    lines = [
        f"# Generated by bench/make_bench_spec.py from {csv_name}; do not edit by hand.",
        "# Rerun `python3 bench/make_bench_spec.py` after changing the CSV.",
        "# Every CSV row, the same convolution without epilogue, and the row's epilogue with a",
        "# residual add.",
        "library: bench_dense",
        "defaults:",
        "  dtype: float32",
        "  layout: NCHW",
        "  padding: same",
        "workloads:",
    ]
    lines += [render_dense_workload(key, note) for key, note in workloads.items()]
    return "\n".join(lines) + "\n"


def write_if_changed(path, text, count):
    # Write only when the text changed, so the build does not regenerate kernels needlessly.
    if not path.exists() or path.read_text() != text:
        path.write_text(text)
    print(f"{path}: {count} workloads", file=sys.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv", type=Path, default=HERE / "depthwise.csv")
    parser.add_argument("--out", type=Path, default=HERE / "depthwise_bench.yaml")
    parser.add_argument("--dense-csv", type=Path, default=HERE / "dense.csv")
    parser.add_argument("--dense-out", type=Path, default=HERE / "dense_bench.yaml")
    parser.add_argument("--no-dense", action="store_true", help="write the depthwise spec only")
    args = parser.parse_args()

    workloads = build_workloads(read_rows(args.csv))
    write_if_changed(args.out, render_spec("bench/" + args.csv.name, workloads), len(workloads))
    if not args.no_dense:
        dense = build_dense_workloads(read_rows(args.dense_csv, DENSE_COLUMNS, DENSE_INT_COLUMNS))
        write_if_changed(args.dense_out, render_dense_spec("bench/" + args.dense_csv.name, dense), len(dense))


if __name__ == "__main__":
    main()
