"""Reading the benchmarks' result JSON: one reader for report.py, plot.py and torch_compare.py.

A result document is what convgen_bench_depthwise or convgen_bench_dense
writes (--json): gpu, date, commit, copy_ceiling_tbps, ... and "rows". The
merged document scripts/gpu_check.sh builds is the depthwise one with the
dense one under "dense"; bench/torch_compare.py adds torch_* keys to both.
A row with a "c_out" key is a dense row, wherever it stands. A row's
"dtype" and "layout" say how its tensors were stored; a row without them
(results from before those keys) is float32 NCHW.
"""

import json
import math

import storage_words


def load(path):
    """A results document (a JSON object), or SystemExit naming what is wrong
    with `path`: the benchmark's scripts never end on a traceback."""
    try:
        with open(path) as f:
            data = json.load(f)
    except OSError as e:
        raise SystemExit(f"{path}: cannot read it: {e.strerror}")
    except ValueError as e:
        raise SystemExit(f"{path}: not JSON ({e})")
    if not isinstance(data, dict):
        raise SystemExit(f"{path}: not a benchmark results document (a JSON object with 'rows')")
    return data


def is_dense(row):
    """Dense conv2d rows (convgen_bench_dense) carry c_out; depthwise rows do not."""
    return row.get("c_out") is not None


def dense_object(data):
    """The merged document's "dense" object, or None."""
    return data.get("dense") if isinstance(data.get("dense"), dict) else None


def dense_document(data):
    """(meta, rows) of the dense benchmark: the "dense" object, else top-level dense rows."""
    doc = dense_object(data)
    if doc is not None:
        return doc, list(doc.get("rows", []))
    return data, [r for r in data.get("rows", []) if is_dense(r)]


def depthwise_rows(data):
    return [r for r in data.get("rows", []) if not is_dense(r)]


def all_rows(data):
    """Every row: the top-level ones, then the "dense" object's (the same dicts, to update in place)."""
    return list(data.get("rows", [])) + list((dense_object(data) or {}).get("rows", []))


def storage(row):
    """(dtype, layout) of a row: ("float16", "NHWC"); float32 NCHW where it does not say. A math other
    than fp32 joins the dtype: ("float32 tf32", "NCHW"), a table of its own."""
    dtype, layout = storage_words.of_row(row)
    math = storage_words.math_of(row)
    return (dtype if math == storage_words.DEFAULT_MATH else f"{dtype} {math}", layout)


DEFAULT_STORAGE = (storage_words.DEFAULT_DTYPE, storage_words.DEFAULT_LAYOUT)


def group_by_storage(rows):
    """{(dtype, layout): rows}: float32 NCHW first, then the others in the order they first appear."""
    groups = {DEFAULT_STORAGE: []}
    for r in rows:
        groups.setdefault(storage(r), []).append(r)
    return {k: v for k, v in groups.items() if v}


def storage_title(key):
    return f"{key[0]} {key[1]}"


def group_by_suite(rows):
    """{suite: rows} in the order the suites first appear."""
    suites = {}
    for r in rows:
        suites.setdefault(str(r.get("suite", "?")), []).append(r)
    return suites


def num(v):
    """A positive finite float, or None (missing, null, zero or NaN)."""
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) and f > 0 else None


def ratio(a, b):
    a, b = num(a), num(b)
    return a / b if a and b else None


def fraction(row, frac_key, base_key, cold_key):
    """base / cold time (floor_us or roofline_us over a cold time); prefer the value the producer computed."""
    f = num(row.get(frac_key))
    return f if f is not None else ratio(row.get(base_key), row.get(cold_key))


def run_meta(meta, rows, runs):
    """A section's references: those of the run that measured all its rows (merge_runs.py tags each row with
    it), else the document's."""
    names = {r.get("run") for r in rows}
    if len(names) != 1 or None in names:
        return meta
    run = next((x for x in runs or [] if x.get("part") in names), None)
    return dict(meta, **(run or {}).get("dense", {}))
