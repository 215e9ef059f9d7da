#!/usr/bin/env python3
"""The benchmark's scripts on a results file shaped like a run's (no GPU, no torch).

- bench/make_bench_spec.py: a CSV's dtype and layout columns become the
  workloads' `dtype:` and `layout:` keys (left out for float32 NCHW), a
  CSV without them is float32 NCHW, and a word dtype.h does not know is
  refused with its file:line.
- bench/report.py: on a merged results document with rows in float32 NCHW,
  float16, bfloat16 and float32 NHWC, one section per dtype x layout, each
  target evaluated per row (met, not met, not measured) from the numbers
  the rows hold, the float32 NCHW rows compared with a previous run
  (--baseline), and the same figures when the page is regenerated over its
  own benchmarks.json; the tensor-core targets of the mnv2_pw_b64 rows
  (the roofline, and a cold copy of the same bytes).
- bench/merge_runs.py: parts of one commit's run (a depthwise part, a dense
  part of float32 tf32 rows) merged into one document, rows in the CSVs'
  order, each part's references under "runs", which report.py prints with a
  float32 tf32 section against the TF32 peak; parts of two commits, and a
  row measured twice, are refused.
- bench/plot.py (when matplotlib is installed): draws the same document.
- tools/tuning_table.py: the shipped database as a table and JSON; a
  malformed database, or a --json it cannot write, named without a traceback.

Usage: test_bench_scripts.py
"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"

failures = []


def expect(ok, what):
    if not ok:
        failures.append(what)
        print(f"FAILED: {what}", file=sys.stderr)


def run(*args, ok=True):
    result = subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True)
    expect((result.returncode == 0) == ok, f"{' '.join(map(str, args))} exit {result.returncode}: {result.stderr}")
    return result


def test_spec(tmp):
    csv = tmp / "dw.csv"
    csv.write_text("suite,n,c,h,w,kh,kw,stride,pad,mult,epilogue,dtype,layout\n"
                   "s,1,8,4,4,3,3,1,same,1,bias,float32,NCHW\n"
                   "# a comment\n"
                   "s,1,8,4,4,3,3,1,same,1,bias,float16,NHWC\n")
    out = tmp / "dw.yaml"
    run(BENCH / "make_bench_spec.py", "--csv", csv, "--out", out, "--no-dense")
    workloads = [line for line in out.read_text().splitlines() if line.startswith("  - ")]
    expect(len(workloads) == 4, f"two rows and their plain twins: {workloads}")
    expect(not any("dtype" in w or "layout" in w for w in workloads[:2]), "float32 NCHW keeps the defaults")
    expect(all("dtype: float16, layout: NHWC}" in w for w in workloads[2:]), "float16 NHWC written out")

    old = tmp / "old.csv"
    old.write_text("suite,n,c,h,w,kh,kw,stride,pad,mult,epilogue\ns,1,8,4,4,3,3,1,same,1,none\n")
    run(BENCH / "make_bench_spec.py", "--csv", old, "--out", out, "--no-dense")
    expect("dtype: " not in out.read_text().split("workloads:")[1], "a CSV without the columns is float32 NCHW")

    bad = tmp / "bad.csv"
    bad.write_text("suite,n,c,h,w,kh,kw,stride,pad,mult,epilogue,dtype,layout\ns,1,8,4,4,3,3,1,same,1,none,half,NHWC\n")
    result = run(BENCH / "make_bench_spec.py", "--csv", bad, "--out", out, "--no-dense", ok=False)
    expect(f"{bad}:2: error: dtype must be one of float32, float16, bfloat16, not 'half'" in result.stderr,
           f"bad dtype message: {result.stderr}")

    # The dense CSV's math column: tf32 and 3xtf32 written out, fp32 (or none) left as the default.
    dense = tmp / "dense.csv"
    dense.write_text("suite,n,c_in,c_out,h,w,kh,kw,stride,pad,epilogue,dtype,layout,math\n"
                     "s,1,8,16,4,4,3,3,1,same,none,float32,NCHW,fp32\n"
                     "s,1,8,16,4,4,3,3,1,same,none,float32,NCHW,tf32\n"
                     "s,1,8,16,4,4,3,3,1,same,none,float32,NHWC,3xtf32\n")
    dense_out = tmp / "dense.yaml"
    run(BENCH / "make_bench_spec.py", "--csv", csv, "--out", out, "--dense-csv", dense, "--dense-out", dense_out)
    workloads = [line for line in dense_out.read_text().splitlines() if line.startswith("  - ")]
    expect(len(workloads) == 6, f"three rows and their residual twins: {workloads}")
    expect("math" not in workloads[0], f"math fp32 keeps the default: {workloads[0]}")
    expect(", math: tf32}" in workloads[2], f"math tf32 written out: {workloads[2]}")
    expect("layout: NHWC, math: 3xtf32}" in workloads[4], f"math 3xtf32 written out: {workloads[4]}")
    dense.write_text("suite,n,c_in,c_out,h,w,kh,kw,stride,pad,epilogue,dtype,layout,math\n"
                     "s,1,8,16,4,4,3,3,1,same,none,float32,NCHW,TF32\n")
    result = run(BENCH / "make_bench_spec.py", "--csv", csv, "--out", out, "--dense-csv", dense, "--dense-out",
                 dense_out, ok=False)
    expect(f"{dense}:2: error: math must be one of fp32, tf32, 3xtf32, not 'TF32'" in result.stderr,
           f"bad math message: {result.stderr}")


def row(suite, dtype, layout, c, epilogue, hot, cold, copy, plain_hot, torch_hot, torch_plain, plain_cold=None):
    """A depthwise result row as convgen_bench_depthwise + torch_compare.py write it (times in µs)."""
    return {"convgen_noepilogue_cold_us": plain_cold,"suite": suite, "name": f"dw_{dtype}_{layout}_{suite}_{c}", "specialized": True, "n": 64, "c": c,
            "h": 14, "w": 14, "kh": 3, "kw": 3, "stride": 1, "pad": "same", "mult": 1, "epilogue": epilogue,
            "dtype": dtype, "layout": layout, "out_h": 14, "out_w": 14, "floor_us": 5.0,
            "convgen_hot_us": hot, "convgen_cold_us": cold, "convgen_noepilogue_hot_us": plain_hot,
            "cudnn_hot_us": 20.0, "cudnn_cold_us": 25.0, "cudnn_algo": "IMPLICIT_GEMM", "copy_cold_us": copy,
            "check_ok": True, "torch_hot_us": torch_hot, "torch_plain_hot_us": torch_plain,
            "torch_cold_us": 40.0}


def results():
    e = "scale_shift_relu6"
    return {
        "gpu": "NVIDIA H100 80GB HBM3", "date": "2026-11-26", "commit": "new", "copy_ceiling_tbps": 2.96,
        "rows": [
            # float32 NCHW: 10.2 against 10.0 before (met), 12.0 against 10.0 (not met); fused 1.02x plain
            # (met), cold 12.0 / 11.8 (met).
            row("mnv2_b64", "float32", "NCHW", 96, e, 10.2, 12.0, 10.0, 10.0, 40.0, 20.0, plain_cold=11.8),
            row("mnv2_b64", "float32", "NCHW", 144, "none", 12.0, 12.0, 10.0, 12.0, 30.0, 30.0),
            # float16 NHWC: copy rate 9.6 / 10 = 0.96 (met); hot 5 vs PyTorch 12 fused (0.42, met), 4 plain
            # (1.25, not met); fused 5 / 4.5 = 1.11 over plain (not met), cold 10 / 9.6 = 1.04 (met).
            row("mnv2_b64", "float16", "NHWC", 96, e, 5.0, 10.0, 9.6, 4.5, 12.0, 4.0, plain_cold=9.6),
            # bfloat16 NHWC: copy rate 0.9 (not met); no PyTorch numbers (not measured).
            row("mnv2_b64", "bfloat16", "NHWC", 96, e, 5.0, 10.0, 9.0, 5.0, None, None),
            # float16 NHWC convnext: copy rate 0.86 (met).
            row("convnextb_b16", "float16", "NHWC", 256, "bias", 5.0, 10.0, 8.6, 5.0, 20.0, 10.0),
            # float32 NHWC: copy rate 0.80 against NCHW's 10/12 = 0.833: 0.96 of it (met).
            row("mnv2_b64", "float32", "NHWC", 96, e, 10.0, 12.5, 10.0, 10.0, 40.0, 20.0),
        ],
    }


def previous():
    base = results()
    base.update(commit="old", date="2026-11-24")
    base["rows"] = [dict(r, convgen_hot_us=10.0) for r in base["rows"] if r["layout"] == "NCHW"]
    for r in base["rows"]:
        del r["dtype"], r["layout"]  # results from before those keys: float32 NCHW
    return base


def verdicts(document):
    return {(r["suite"], r["c"], r["dtype"], r["layout"]): r["targets"] for r in document["rows"]}


def test_report(tmp):
    merged, base = tmp / "merged.json", tmp / "previous.json"
    merged.write_text(json.dumps(results()))
    base.write_text(json.dumps(previous()))
    md, out = tmp / "benchmarks.md", tmp / "benchmarks.json"
    run(BENCH / "report.py", "--json", merged, "--md", md, "--out-json", out, "--baseline", base)
    page = md.read_text()
    for title in ("### float32 NCHW", "### float16 NHWC", "### bfloat16 NHWC", "### float32 NHWC",
                  "#### Targets, float16 NHWC"):
        expect(title in page, f"section {title}")
    expect(page.index("### float32 NCHW") < page.index("### float16 NHWC"), "float32 NCHW first")
    expect("commit `old`" in page, "the previous run named")

    document = json.loads(out.read_text())
    v = verdicts(document)
    got = lambda key, target: (v[key].get(target) or {}).get("met", "absent")  # noqa: E731
    f32, f16, bf16 = ("float32", "NCHW"), ("float16", "NHWC"), ("bfloat16", "NHWC")
    expectations = [
        (("mnv2_b64", 96, *f32), "no_regression", True),
        (("mnv2_b64", 144, *f32), "no_regression", False),
        (("mnv2_b64", 96, *f32), "fused_epilogue", True),
        (("mnv2_b64", 144, *f32), "fused_epilogue", "absent"),  # no epilogue: does not apply
        (("mnv2_b64", 96, *f16), "mnv2_b64_copy_rate", True),
        (("mnv2_b64", 96, *f16), "vs_torch_fused", True),
        (("mnv2_b64", 96, *f16), "vs_torch_plain", False),
        (("mnv2_b64", 96, *f16), "fused_epilogue", False),
        (("mnv2_b64", 96, *f32), "fused_epilogue_cold", True),
        (("mnv2_b64", 96, *f16), "fused_epilogue_cold", True),
        (("mnv2_b64", 96, *bf16), "fused_epilogue_cold", None),  # no plain cold time: not measured
        (("mnv2_b64", 144, *f32), "fused_epilogue_cold", "absent"),
        (("mnv2_b64", 96, *f16), "no_regression", "absent"),
        (("mnv2_b64", 96, *bf16), "mnv2_b64_copy_rate", False),
        (("mnv2_b64", 96, *bf16), "vs_torch_fused", None),
        (("mnv2_b64", 96, *bf16), "large_filter_copy_rate", "absent"),
        (("convnextb_b16", 256, *f16), "large_filter_copy_rate", True),
        (("mnv2_b64", 96, "float32", "NHWC"), "nhwc_vs_nchw", True),
    ]
    for key, target, want in expectations:
        expect(got(key, target) == want, f"{key} {target}: {got(key, target)}, expected {want}")
    expect(abs(v[("mnv2_b64", 96, *f16)]["mnv2_b64_copy_rate"]["value"] - 0.96) < 1e-9, "copy rate measured")
    summary = {s["id"]: s for s in document["targets"]}
    expect((summary["no_regression"]["met"], summary["no_regression"]["not_met"]) == (1, 1), "summary counts")
    expect(document["baseline"]["commit"] == "old", "baseline recorded")

    # Regenerated over its own benchmarks.json: the same comparison, not the run with itself.
    run(BENCH / "report.py", "--json", merged, "--md", md, "--out-json", out, "--baseline", out)
    again = json.loads(out.read_text())
    expect(verdicts(again) == v and again.get("baseline") == document["baseline"], "regenerated page keeps its baseline")

    # Without a previous run, the regression target is not measured.
    run(BENCH / "report.py", "--json", merged, "--md", md, "--out-json", out)
    alone = verdicts(json.loads(out.read_text()))
    expect(alone[("mnv2_b64", 96, *f32)]["no_regression"]["met"] is None, "no baseline: not measured")

    # A previous run on another GPU model is no baseline: its times say nothing of a regression.
    base.write_text(json.dumps(dict(previous(), gpu="NVIDIA H200")))
    run(BENCH / "report.py", "--json", merged, "--md", md, "--out-json", out, "--baseline", base)
    other = json.loads(out.read_text())
    expect(verdicts(other)[("mnv2_b64", 96, *f32)]["no_regression"]["met"] is None and "baseline" not in other,
           "another GPU's run: not measured")
    expect("No previous run's figures on this GPU model" in md.read_text(), "the page says why")


def dense_row(suite, c, math, hot, cudnn, torch_plain):
    """A dense result row as convgen_bench_dense + torch_compare.py write it (times in µs)."""
    return {"suite": suite, "name": f"conv_f32_{math}_nchw_{suite}_{c}", "specialized": True, "n": 8, "c": c,
            "c_out": c, "h": 14, "w": 14, "kh": 3, "kw": 3, "stride": 1, "pad": "same", "epilogue": "none",
            "dtype": "float32", "layout": "NCHW", "math": math, "flops": 1e9, "floor_us": 2.0, "roofline_us": 3.0,
            "convgen_hot_us": hot, "convgen_cold_us": hot + 1, "convgen_noepilogue_hot_us": hot,
            "convgen_residual_hot_us": hot, "cudnn_hot_us": cudnn, "cudnn_cold_us": cudnn + 1,
            "torch_hot_us": torch_plain, "torch_plain_hot_us": torch_plain, "check_ok": True}


def test_half_dense_targets():
    """report.py's tensor-core targets on mnv2_pw_b64 rows: the roofline, and a cold copy of the same bytes
    (met at 0.8x its rate or more; a row without the copy's time is not measured)."""
    sys.path.insert(0, str(BENCH))
    import report  # noqa: E402  (bench/report.py, with bench/results.py beside it)
    rows = []
    for c, cold, copy in ((16, 10.0, 8.5), (24, 10.0, 7.0), (32, 10.0, None)):
        r = dense_row("mnv2_pw_b64", c, "fp32", 9.0, 20.0, 12.0)
        r.update({"dtype": "float16", "layout": "NHWC", "convgen_cold_us": cold, "epilogue": "scale_shift"})
        if copy is not None:
            r["copy_cold_us"] = copy
        rows.append(r)
    lines = report.half_dense_targets(rows, 700.0)
    copy_line = [t for t in lines if "cold copy of the same bytes" in t]
    expect(copy_line == ["mnv2_pw_b64 cold ≥ 0.8× the rate of a cold copy of the same bytes: **1/2** (1 not measured)"],
           f"copy-rate target line: {copy_line}")
    roofline = [t for t in lines if "of roofline" in t]
    expect(roofline == ["mnv2_pw_b64 cold ≥ 80% of roofline: **0/3**"], f"roofline target line: {roofline}")


def test_residual_target():
    """report.py's residual target: 5% over the plain kernel plus the residual's own bytes (n x out_h x out_w x
    c_out elements) at the copy rate; a row without its output's shape is not measured."""
    sys.path.insert(0, str(BENCH))
    import report  # noqa: E402
    # float16, 64 x 28 x 28 x 100 outputs: 10,035,200 bytes, 5.0 µs at 2.0070400 TB/s.
    ceiling = 2.00704
    rows = []
    for plain, residual in ((10.0, 15.7), (10.0, 15.8), (100.0, 105.0)):
        r = dense_row("mnv2_pw_b64", 100, "fp32", plain, 20.0, 12.0)
        r.update({"dtype": "float16", "layout": "NHWC", "n": 64, "out_h": 28, "out_w": 28,
                  "convgen_residual_hot_us": residual})
        rows.append(r)
    unshaped = dense_row("mnv2_pw_b64", 100, "fp32", 10.0, 20.0, 12.0)
    unshaped.update({"dtype": "float16", "layout": "NHWC"})
    met = [report.residual_within_its_bytes(r, ceiling) for r in rows + [unshaped]]
    # 15.7 ≤ 1.05 x (10 + 5) = 15.75 < 15.8; 105.0 ≤ 1.05 x 105.
    expect(met == [True, False, True, None], f"residual target per row: {met}")
    lines = [t for t in report.half_dense_targets(rows + [unshaped], 700.0, ceiling) if t.startswith("residual")]
    expect(lines == ["residual ≤ 5% over plain plus the residual's bytes at the copy rate: **2/3** (1 not measured)"],
           f"residual target line: {lines}")


def test_merge(tmp):
    depthwise_part = dict(results(), rows=list(reversed(results()["rows"])))  # out of the CSV's order
    dense_meta = {"gpu": "NVIDIA H100 80GB HBM3", "date": "2026-11-27", "commit": "new", "copy_ceiling_tbps": 2.99,
                  "fp32_peak_tflops": 51.5, "fp32_peak_method": "sgemm", "tf32_peak_tflops": 403.0,
                  "tf32_peak_method": "sgemm tf32", "tensor_peak_tflops": 745.0}
    # Two rows that one generic kernel served: the same kernel name, two workloads.
    generic = [dict(dense_row("deep_b1", c, "tf32", 10.0, 12.0 if c == 64 else 9.0, 11.0 if c == 64 else 9.5),
                    name="generic_conv2d_f32_nchw", specialized=False) for c in (64, 32)]
    dense_part = {"gpu": "NVIDIA H100 80GB HBM3", "date": "2026-11-27", "commit": "new", "copy_ceiling_tbps": 2.97,
                  "rows": [], "dense": dict(dense_meta, rows=generic)}
    for name, doc in (("depthwise", depthwise_part), ("dense", dense_part)):
        (tmp / name).mkdir()
        (tmp / name / "merged.json").write_text(json.dumps(doc))
    dw_csv, dense_csv = tmp / "dw_order.csv", tmp / "dense_order.csv"
    dw_csv.write_text("suite,n,c,h,w,kh,kw,stride,pad,mult,epilogue,dtype,layout\n" + "".join(
        f"{r['suite']},64,{r['c']},14,14,3,3,1,same,1,{r['epilogue']},{r['dtype']},{r['layout']}\n"
        for r in results()["rows"]))
    # Spaced out and commented as the benchmark accepts it.
    dense_csv.write_text("suite, n, c_in, c_out, h, w, kh, kw, stride, pad, epilogue, dtype, layout, math\n"
                         "  # the deep layers\n"
                         "deep_b1, 8, 32, 32, 14, 14, 3, 3, 1, same, none, float32, NCHW, tf32\n"
                         "deep_b1, 08, 64, 64, 14, 14, 3, 3, 1, same, none, float32, NCHW, tf32\n")
    out = tmp / "all.json"
    parts = [tmp / "depthwise" / "merged.json", tmp / "dense" / "merged.json"]
    run(BENCH / "merge_runs.py", "--out", out, "--depthwise-csv", dw_csv, "--dense-csv", dense_csv, *parts)
    merged = json.loads(out.read_text())
    expect([r["name"] for r in merged["rows"]] == [r["name"] for r in results()["rows"]], "depthwise rows in CSV order")
    expect([r["c"] for r in merged["dense"]["rows"]] == [32, 64], "dense rows in CSV order")
    expect([(p["part"], p["depthwise_rows"], p["dense_rows"]) for p in merged["runs"]]
           == [("depthwise", 6, 0), ("dense", 0, 2)], f"runs: {merged['runs']}")
    expect(merged["runs"][1]["dense"]["tf32_peak_tflops"] == 403.0, "each run's peaks kept")
    expect({r["run"] for r in merged["dense"]["rows"]} == {"dense"}, "each row names its run")
    md, page_json = tmp / "merged.md", tmp / "merged_page.json"
    run(BENCH / "report.py", "--json", out, "--md", md, "--out-json", page_json)
    page = md.read_text()
    expect("- **Runs:** 2 runs of this commit" in page, "report names the runs")
    expect("## Dense convolution, float32 tf32 NCHW (tensor cores)" in page and "**TF32 peak:** 403.0" in page,
           "tf32 section against the TF32 peak")
    # 10 us against PyTorch's 11 (met) and 9.5 (not met).
    expect("fused hot ≤ PyTorch plain conv with TF32 on (its default): **1/2**" in page, "tf32 target counted")
    expect(json.loads(page_json.read_text())["runs"] == merged["runs"], "benchmarks.json keeps the runs")

    # A section takes the references of the run that measured its rows, not the first part's.
    other_peak = dict(merged, dense=dict(merged["dense"], tf32_peak_tflops=111.0))
    (tmp / "peaks.json").write_text(json.dumps(other_peak))
    run(BENCH / "report.py", "--json", tmp / "peaks.json", "--md", md, "--out-json", page_json)
    expect("**TF32 peak:** 403.0" in md.read_text(), "the section's peak is its run's")

    def refused_with(what, text, *docs):
        paths = []
        for i, doc in enumerate(docs):
            folder = tmp / f"refused_{what}_{i}"
            folder.mkdir()
            (folder / "merged.json").write_text(json.dumps(doc))
            paths.append(folder / "merged.json")
        result = run(BENCH / "merge_runs.py", "--out", tmp / "x.json", "--dense-csv", dense_csv, *paths, ok=False)
        expect(text in result.stderr, f"{what} refused: {result.stderr}")
        expect(not (tmp / "x.json").exists() and not list(tmp.glob(".merge_runs-*")), f"{what}: nothing written")

    refused_with("commits", "commit differ", depthwise_part, dict(dense_part, commit="old"))
    refused_with("gpus", "gpu differ", depthwise_part, dict(dense_part, gpu="NVIDIA A100"))
    timed = lambda trials, rows: dict(dense_part, dense=dict(dense_part["dense"], trials=trials, rows=rows))  # noqa: E731
    refused_with("methods", "dense trials differ", timed(10, generic[:1]), timed(50, generic[1:]))
    refused_with("twice", "is in parts", dense_part, dense_part)
    refused_with("missing", "is not in the CSV given",
                 {**dense_part, "dense": dict(dense_part["dense"], rows=[dense_row("deep_b1", 16, "tf32", 1, 1, 1)])})


def test_plot(tmp):
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("matplotlib not installed: plot.py not tried")
        return
    merged, png = tmp / "merged.json", tmp / "benchmarks.png"
    merged.write_text(json.dumps(results()))
    run(BENCH / "plot.py", "--json", merged, "--out", png)
    expect(png.exists() and png.stat().st_size > 10000, "plot.py wrote a figure")


def test_tuning_table(tmp):
    """tools/tuning_table.py on the shipped database, and on databases it
    cannot read: a message and exit 1, never a traceback, and no --json
    written where it cannot be."""
    table = ROOT / "tools" / "tuning_table.py"
    out = tmp / "table.json"
    r = subprocess.run([sys.executable, str(table), str(ROOT / "specs" / "seeds.tuning.yaml"), "--json", str(out)],
                       capture_output=True, text=True)
    expect(r.returncode == 0 and "geometric-mean speedup" in r.stdout, "tuning_table.py read the shipped database")
    expect(out.exists() and len(json.loads(out.read_text())) > 0, "tuning_table.py wrote its rows as JSON")
    bad = {
        "not_a_list.yaml": ("entries:\n", "'entries' is not a list"),
        "no_gpu.yaml": ("entries:\n  - {kernel: k, time_us: 1, default_us: 1, schedule: {algorithm: rows}}\n",
                        "entry 1 is not one convgen tune writes (no 'gpu')"),
        "zero_time.yaml": ("entries:\n  - {kernel: k, gpu: g, time_us: 0, default_us: 1, schedule: {algorithm: rows}}\n",
                           "entry 1 is not one convgen tune writes"),
    }
    for name, (text, message) in bad.items():
        (tmp / name).write_text(text)
        r = subprocess.run([sys.executable, str(table), str(tmp / name)], capture_output=True, text=True)
        expect(r.returncode == 1 and message in r.stderr and "Traceback" not in r.stderr,
               f"tuning_table.py on {name}: exit 1 saying {message!r} (got {r.returncode}: {r.stderr.strip()})")
    missing = tmp / "no_such_folder" / "t.json"
    r = subprocess.run([sys.executable, str(table), str(ROOT / "specs" / "seeds.tuning.yaml"), "--json", str(missing)],
                       capture_output=True, text=True)
    expect(r.returncode == 1 and "cannot write" in r.stderr and r.stdout == "",
           "tuning_table.py refuses a --json it cannot write before printing anything")


def main():
    os.environ.setdefault("MPLBACKEND", "Agg")
    with tempfile.TemporaryDirectory() as tmp:
        test_spec(Path(tmp))
        test_report(Path(tmp))
        test_half_dense_targets()
        test_residual_target()
        test_merge(Path(tmp))
        test_plot(Path(tmp))
        test_tuning_table(Path(tmp))
    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        return 1
    print("bench scripts: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
