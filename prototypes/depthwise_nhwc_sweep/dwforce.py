#!/usr/bin/env python3
"""dwforce.py SPEC OUT RULE [RULE ...]: copy a depthwise benchmark spec (as
bench/make_bench_spec.py writes it), giving each depthwise_conv2d workload
that a RULE matches that rule's schedule. The first matching rule wins.

RULE is "n,c,h,k,s[,dtype[,layout]]=SCHEDULE", SCHEDULE the body of a YAML
flow mapping, e.g.
    "64,144,56,3,2=algorithm: staged, channels_per_block: 48, block_tile: [7, 8]"
k is the filter's height (the benchmark's filters are square), s the stride.
Any field may be *. dtype defaults to float32 and layout to NHWC, so a rule
without them touches the float32 NHWC workloads only (their float32 NCHW
twins keep the default rule). A rule matches a row's workload and its
"without epilogue" twin alike (same n, c, h, k, s), so the plain kernel the
benchmark times beside the fused one gets the same schedule.

A rule that matches no workload is an error (a typo would otherwise leave
the default schedule in place silently). Each forced workload is reported
on stderr. Python 3 standard library only.
"""
import re
import sys

# A workload line of make_bench_spec.py's depthwise spec (no `op:` key:
# depthwise_conv2d is the default operator).
LINE = re.compile(r"(?P<head>\s*- \{(?P<body>n: (?P<n>\d+), c: (?P<c>\d+), h: (?P<h>\d+), w: \d+, "
                  r"filter: \[(?P<kh>\d+), (?P<kw>\d+)\], stride: (?P<s>\d+).*?))\}(?P<tail>.*)")


def parse_rule(text):
    if "=" not in text:
        sys.exit(f"dwforce.py: rule '{text}' has no '=' (n,c,h,k,s[,dtype[,layout]]=SCHEDULE)")
    key, schedule = text.split("=", 1)
    fields = [f.strip() for f in key.split(",")]
    if not 5 <= len(fields) <= 7:
        sys.exit(f"dwforce.py: rule key '{key}' must be n,c,h,k,s[,dtype[,layout]]")
    fields += ["float32", "NHWC"][len(fields) - 5:]
    if "schedule" in schedule or "{" in schedule:
        sys.exit(f"dwforce.py: give the mapping's body only, without braces: '{schedule}'")
    return fields, schedule.strip()


def workload_fields(m):
    body = m.group("body")
    dtype = re.search(r"\bdtype: (\w+)", body)
    layout = re.search(r"\blayout: (\w+)", body)
    return [m.group("n"), m.group("c"), m.group("h"), m.group("kh"), m.group("s"),
            dtype.group(1) if dtype else "float32", layout.group(1) if layout else "NCHW"]


def main():
    if len(sys.argv) < 3 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 2
    rules = [parse_rule(r) for r in sys.argv[3:]]
    used = [0] * len(rules)
    out = []
    for line in open(sys.argv[1]):
        m = LINE.match(line)
        if m:
            if "schedule:" in m.group("body"):
                sys.exit(f"dwforce.py: {sys.argv[1]}: a workload already has a schedule: {line.strip()}")
            fields = workload_fields(m)
            for i, (key, schedule) in enumerate(rules):
                if all(k == "*" or k == f for k, f in zip(key, fields)):
                    line = f"{m.group('head')}, schedule: {{{schedule}}}}}{m.group('tail')}\n"
                    used[i] += 1
                    print(f"dwforce.py: {','.join(fields)}: {{{schedule}}}", file=sys.stderr)
                    break
        out.append(line)
    unused = [sys.argv[3 + i] for i, n in enumerate(used) if n == 0]
    if unused:
        sys.exit("dwforce.py: rule(s) matching no workload: " + " | ".join(unused))
    text = "".join(out)
    # Write only when the text changed, so that the build does not regenerate needlessly.
    try:
        same = open(sys.argv[2]).read() == text
    except OSError:
        same = False
    if not same:
        with open(sys.argv[2], "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
