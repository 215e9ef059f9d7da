#!/usr/bin/env python3
"""Prints a tuning database (convgen tune) as a Markdown table: per kernel the
default rule's time, the tuned time, the speedup, the winning schedule, the
candidates and the tuning wall time; then the totals.

    tools/tuning_table.py bench/depthwise_bench.tuning.yaml [--json OUT.json]
"""
import argparse
import json
import math
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
    args = parser.parse_args()
    try:
        with open(args.db) as f:
            db = yaml.safe_load(f)
        entries = db["entries"]
    except (OSError, yaml.YAMLError, KeyError, TypeError) as e:
        sys.exit(f"tuning_table.py: cannot read {args.db}: {e}")

    rows = []
    for e in entries:
        c = e.get("candidates", {})
        rows.append({
            "kernel": e["kernel"], "gpu": e["gpu"], "default_us": e["default_us"], "tuned_us": e["time_us"],
            "speedup": e["default_us"] / e["time_us"], "schedule": schedule_text(e["schedule"]),
            "default_schedule": e.get("default_schedule", ""), "compiled": c.get("compiled", 0),
            "verified": c.get("verified", 0), "rejected": c.get("rejected", 0), "failed": c.get("failed", 0),
            "tuning_s": e.get("tuning_s", 0.0), "objective": e.get("objective", "hot"),
        })
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


if __name__ == "__main__":
    main()
