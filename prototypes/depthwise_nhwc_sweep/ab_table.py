"""ab_table.py DIR REPEATS: main before a change (base_N.json) against after it (new_N.json), convgen_bench_depthwise JSONs
of the same rows, N = 1..REPEATS: per row the medians, hot and cold, the copy rate, fused over plain hot and cold,
and the float32 NHWC rows' copy rate over their NCHW twins' (the target within 5%)."""
import json, statistics, sys
d, reps = sys.argv[1], int(sys.argv[2])
def load(tree):
    runs = []
    for i in range(1, reps + 1):
        try:
            runs.append(json.load(open(f"{d}/{tree}_{i}.json"))["rows"])
        except Exception as e:
            print(f"{tree}_{i}: {e}")
    rows = {}
    for run in runs:
        for r in run:
            key = (r["suite"], r["n"], r["c"], r["h"], r["kh"], r["stride"], r["epilogue"], r["dtype"], r["layout"])
            rows.setdefault(key, []).append(r)
    return rows
base, new = load("base"), load("new")
med = lambda rs, k: statistics.median(r[k] for r in rs if r.get(k) is not None) if rs else float("nan")
def rate(rs):
    return med(rs, "copy_cold_us") / med(rs, "convgen_cold_us")
print(f"{'row':58} {'base hot':>9} {'new hot':>8} {'base cold':>9} {'new cold':>9} {'new/base':>8} {'rate b':>7} {'rate n':>7} {'f/p hot':>7} {'f/p cold':>8} {'vs NCHW':>8}")
ratios = []
for key in sorted(new, key=str):
    b, n = base.get(key, []), new[key]
    nchw = new.get(key[:-1] + ("NCHW",)) if key[-2] == "float32" and key[-1] == "NHWC" else None
    vs = rate(n) / rate(nchw) if nchw else float("nan")
    fp_hot = med(n, "convgen_hot_us") / med(n, "convgen_noepilogue_hot_us")
    fp_cold = (med(n, "convgen_cold_us") / med(n, "convgen_noepilogue_cold_us")
               if any(r.get("convgen_noepilogue_cold_us") is not None for r in n) else float("nan"))
    cold_ratio = med(n, "convgen_cold_us") / med(b, "convgen_cold_us") if b else float("nan")
    ratios.append(cold_ratio)
    name = f"{key[0]} {key[1]}x{key[2]}x{key[3]}² k{key[4]} s{key[5]} {key[6][:12]} {key[7]} {key[8]}"
    sched = n[0].get("default_schedule", "")
    print(f"{name:58} {med(b,'convgen_hot_us'):9.2f} {med(n,'convgen_hot_us'):8.2f} {med(b,'convgen_cold_us'):9.2f} "
          f"{med(n,'convgen_cold_us'):9.2f} {cold_ratio:8.3f} {rate(b) if b else float('nan'):7.3f} {rate(n):7.3f} "
          f"{fp_hot:7.3f} {fp_cold:8.3f} {vs:8.3f}")
ok = [r for r in ratios if r == r]
if ok:
    print(f"cold new/base: geomean {statistics.geometric_mean(ok):.3f}, min {min(ok):.3f}, max {max(ok):.3f} over {len(ok)} rows")
