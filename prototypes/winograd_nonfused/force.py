#!/usr/bin/env python3
"""force.py SPEC OUT RULE [RULE ...]: copy a benchmark spec (bench/dense_bench.yaml),
giving each workload that a RULE matches that rule's schedule.

RULE is "n,c,c_out,h,stride=SCHEDULE", SCHEDULE a YAML flow mapping's body,
e.g. "32,512,512,7,1=algorithm: winograd_nonfused, split_k: 2". A field may be *.
"""
import re
import sys


def main():
    if len(sys.argv) < 4 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 2
    rules = []
    for r in sys.argv[3:]:
        key, schedule = r.split("=", 1)
        rules.append((key.split(","), schedule))
    out = []
    for line in open(sys.argv[1]):
        m = re.match(r"(\s*- \{op: conv2d, n: (\d+), c: (\d+), c_out: (\d+), h: (\d+), w: \d+, .*?stride: (\d+).*?)\}(.*)", line)
        if m:
            fields = m.group(2, 3, 4, 5, 6)
            for key, schedule in rules:
                if all(k == "*" or k == f for k, f in zip(key, fields)):
                    line = f"{m.group(1)}, schedule: {{{schedule}}}}}{m.group(7)}\n"
                    break
        out.append(line)
    open(sys.argv[2], "w").writelines(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
