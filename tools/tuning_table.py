#!/usr/bin/env python3
"""Prints a tuning database (convgen tune) as a Markdown table: per kernel the
default rule's time, the tuned time, the speedup, the winning schedule, the
candidates and the tuning wall time; then the totals.

With --bench (the JSON of convgen_bench_depthwise, built with the database),
one row per benchmark workload instead: the default and tuned kernels' hot
times as the benchmark measured them in one run, beside the database's
search figures for the kernel.

    tools/tuning_table.py bench/depthwise_bench.tuning.yaml [--bench bench.json] [--json OUT.json]
"""
import argparse
import json
import math
import os
import sys

try:
    import yaml
except ImportError:  # pragma: no cover
    sys.exit("tuning_table.py needs PyYAML (pip install pyyaml, or apt-get install python3-yaml)")


def schedule_text(schedule):
    knobs = ", ".join(f"{k} {v}" for k, v in schedule.items() if k != "algorithm")
    return f"{schedule['algorithm']}: {knobs}" if knobs else schedule["algorithm"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("db", help="a tuning database written by convgen tune")
    parser.add_argument("--json", help="also write the rows as JSON here")
    parser.add_argument("--bench", help="a benchmark JSON with tuned columns: one row per workload")
    args = parser.parse_args()
    try:
        with open(args.db) as f:
            db = yaml.safe_load(f)
        entries = db["entries"]
    except (OSError, yaml.YAMLError, KeyError, TypeError) as e:
        sys.exit(f"tuning_table.py: cannot read {args.db}: {e}")

    rows = []
    if not isinstance(entries, list):
        sys.exit(f"tuning_table.py: {args.db}: 'entries' is not a list of entries (is it a convgen tune database?)")
    for i, e in enumerate(entries):
        try:
            c = e.get("candidates", {})
            rows.append({
                "kernel": e["kernel"], "gpu": e["gpu"], "default_us": e["default_us"], "tuned_us": e["time_us"],
                "speedup": e["default_us"] / e["time_us"], "schedule": schedule_text(e["schedule"]),
                "default_schedule": e.get("default_schedule", ""), "compiled": c.get("compiled", 0),
                "verified": c.get("verified", 0), "rejected": c.get("rejected", 0), "failed": c.get("failed", 0),
                "tuning_s": e.get("tuning_s", 0.0), "objective": e.get("objective", "hot"),
            })
        except (AttributeError, KeyError, TypeError, ZeroDivisionError) as error:
            what = f"no '{error.args[0]}'" if isinstance(error, KeyError) else str(error)
            sys.exit(f"tuning_table.py: {args.db}: entry {i + 1} is not one convgen tune writes ({what}); "
                     "`convgen check SPEC --tuning DB` says what is wrong with it")
    if args.json:
        # Checked first: a path that cannot be written fails before any table is printed.
        folder = os.path.dirname(os.path.abspath(args.json))
        if not os.path.isdir(folder) or not os.access(folder, os.W_OK) or os.path.isdir(args.json):
            sys.exit(f"tuning_table.py: cannot write {args.json}: its folder does not exist or is not writable, "
                     "or it is a folder")
    if args.bench:
        bench_rows = print_bench(args.bench, {r["kernel"]: r for r in rows})
        if args.json:
            with open(args.json, "w") as f:
                json.dump(bench_rows, f, indent=1)
        return
    print("| kernel | default us | tuned us | speedup | tuned schedule | compiled | verified | rejected | tuning s |")
    print("|---|---:|---:|---:|---|---:|---:|---:|---:|")
    for r in rows:
        same = " (the default's)" if r["schedule"].split(":")[0] == r["default_schedule"].split(":")[0] and \
            abs(r["speedup"] - 1) < 1e-9 else ""
        print(f"| `{r['kernel']}` | {r['default_us']:.2f} | {r['tuned_us']:.2f} | {r['speedup']:.2f} | "
              f"{r['schedule']}{same} | {r['compiled']} | {r['verified']} | {r['rejected']} | {r['tuning_s']:.1f} |")
    if rows:
        geo = math.exp(sum(math.log(r["speedup"]) for r in rows) / len(rows))
        print(f"\n{len(rows)} kernels on {rows[0]['gpu']} (times by the `{rows[0]['objective']}` objective): "
              f"geometric-mean speedup {geo:.3f}, best {max(r['speedup'] for r in rows):.2f}; "
              f"{sum(r['compiled'] for r in rows)} candidates compiled, {sum(r['verified'] for r in rows)} verified, "
              f"{sum(r['rejected'] for r in rows)} rejected, {sum(r['failed'] for r in rows)} failed; "
              f"tuning took {sum(r['tuning_s'] for r in rows):.0f} s, "
              f"{sum(r['tuning_s'] for r in rows) / len(rows):.1f} s per kernel on average.")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


def print_bench(path, by_kernel):
    try:
        with open(path) as f:
            bench = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"tuning_table.py: cannot read {path}: {e}")
    if not isinstance(bench, dict):
        sys.exit(f"tuning_table.py: {path} is not a benchmark JSON (an object with 'rows')")
    rows = [r for r in bench.get("rows", []) if isinstance(r, dict) and "tuned_hot_us" in r and "tuned_name" in r]
    if not rows:
        sys.exit(f"tuning_table.py: {path} has no tuned columns (was the benchmark built with a database?)")
    print("| workload | default hot us | tuned hot us | speedup | tuned schedule | compiled | verified | rejected "
          "| tuning s | default cold / copy cold |")
    print("|---|---:|---:|---:|---|---:|---:|---:|---:|---:|")
    speedups, slow_rows, out = [], [], []
    for r in rows:
        e = by_kernel.get(r["tuned_name"], {})
        speedup = r["convgen_hot_us"] / r["tuned_hot_us"]
        speedups.append(speedup)
        # The default's cold rate against a copy of the same bytes: both are floor / cold time.
        rate = r["convgen_frac_ceiling"] / r["copy_frac_ceiling"]
        if rate < 0.9:
            slow_rows.append(speedup)
        schedule = r["tuned_schedule"] if r.get("tuned_changed") else "the default's"
        workload = (f"{r['suite']} {r['n']}x{r['c']}x{r['h']}x{r['w']} k{r['kh']}x{r['kw']} s{r['stride']} "
                    f"m{r['mult']} {r['epilogue']}")
        print(f"| {workload} | {r['convgen_hot_us']:.2f} | {r['tuned_hot_us']:.2f} | {speedup:.2f} | {schedule} | "
              f"{e.get('compiled', '')} | {e.get('verified', '')} | {e.get('rejected', '')} | "
              f"{e.get('tuning_s', 0):.1f} | {rate:.2f} |")
        out.append({"workload": workload, "kernel": r["tuned_name"], "default_hot_us": r["convgen_hot_us"],
                    "tuned_hot_us": r["tuned_hot_us"], "speedup": speedup, "schedule": schedule,
                    "default_cold_over_copy_cold": rate})
    geo = lambda v: math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")
    print(f"\n{len(rows)} workloads on {bench.get('gpu', '?')} (commit {bench.get('commit', '?')}): tuned/default "
          f"geometric mean {geo(speedups):.3f}, worst {min(speedups):.3f}, best {max(speedups):.3f}; "
          f"{sum(1 for x in speedups if x < 0.98)} slower by more than 2%; {geo(slow_rows):.3f} over the "
          f"{len(slow_rows)} where the default reaches, cold, less than 0.9x the rate of a copy of the same bytes.")
    return out


if __name__ == "__main__":
    main()
