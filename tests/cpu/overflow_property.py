#!/usr/bin/env python3
"""The overflow property of the runtime's validate(), on random problems.

    overflow_property.py --probe VALIDATE_PROBE [--seed S] [--count N]

Draws N problems of each operator (depthwise_conv2d and conv2d) with fields
near every limit of convgen/limits.h, near the 2^31 and 2^32 boundaries
where 32-bit products wrap, and ordinary ones, and runs validate() on them
through VALIDATE_PROBE (tests/cpu/validate_probe.cpp). The property: every
derived size is the same formula in Python integers (which never wrap), and

  - validate() accepts a problem exactly when every field and every derived
    size (output channels, output height and width, planes, the reduction
    length, each tensor's elements and bytes) lies within the limits;
  - for a problem it accepts, the problem's helpers (out_channels(), out_h(),
    out_w()) return the true values.

The limits are the probe's (`--limits`): the table the runtime reads. The
seed is drawn fresh each run and printed; --seed reproduces a run. Exit 0
when the property holds for every problem, 1 naming the first few that
break it.
"""
import argparse
import random
import subprocess
import sys

INT_MIN, INT_MAX = -(2 ** 31), 2 ** 31 - 1
# Where 32-bit arithmetic wraps, and values whose small multiples do
# (3 x 1431655766 = 2^32 + 2).
WRAP_POINTS = [2 ** 15, 2 ** 16, 2 ** 24, 2 ** 28, 2 ** 30, 2 ** 31 - 2, INT_MAX, 1431655766, 715827883,
               46341, 65536 * 3]
FIELDS = {
    "depthwise": ["n", "c", "h", "w", "kh", "kw", "stride_h", "stride_w", "pad_top", "pad_bottom", "pad_left",
                  "pad_right", "dilation_h", "dilation_w", "multiplier"],
    "conv2d": ["n", "c", "c_out", "h", "w", "kh", "kw", "stride_h", "stride_w", "pad_top", "pad_bottom",
               "pad_left", "pad_right", "dilation_h", "dilation_w", "groups"],
}
# The limit each field is drawn around (a name the probe prints).
FIELD_LIMIT = {"n": "batch", "c": "channels", "c_out": "out_channels", "multiplier": "multiplier", "h": "extent",
               "w": "extent", "kh": "filter", "kw": "filter", "stride_h": "stride", "stride_w": "stride",
               "dilation_h": "dilation", "dilation_w": "dilation", "pad_top": "padding", "pad_bottom": "padding",
               "pad_left": "padding", "pad_right": "padding", "groups": "groups"}


def read_limits(probe):
    out = subprocess.run([probe, "--limits"], check=True, stdout=subprocess.PIPE, text=True).stdout
    return {name: int(value) for name, value in (line.split() for line in out.splitlines())}


def floor_extent(size, pad_a, pad_b, k, stride, dilation):
    """The true output extent: floor((in + pads - d*(k-1) - 1) / stride) + 1."""
    return (size + pad_a + pad_b - dilation * (k - 1) - 1) // stride + 1


def derived(op, p):
    """Every derived size, in Python integers."""
    d = {"out_h": floor_extent(p["h"], p["pad_top"], p["pad_bottom"], p["kh"], p["stride_h"], p["dilation_h"]),
         "out_w": floor_extent(p["w"], p["pad_left"], p["pad_right"], p["kw"], p["stride_w"], p["dilation_w"])}
    if op == "depthwise":
        d["out_channels"] = p["c"] * p["multiplier"]
        d["reduction"] = p["kh"] * p["kw"]
    else:
        d["out_channels"] = p["c_out"]
        d["reduction"] = p["c"] * p["kh"] * p["kw"]
    d["in_plane"] = p["h"] * p["w"]
    d["out_plane"] = d["out_h"] * d["out_w"]
    d["input"] = p["n"] * p["c"] * p["h"] * p["w"]
    d["filter"] = d["out_channels"] * d["reduction"]
    d["output"] = p["n"] * d["out_channels"] * d["out_h"] * d["out_w"]
    return d


def why_invalid(op, p, limits):
    """The first field or derived size out of the limits, or None when the problem is valid."""
    lowest = {"n": 1, "c": 1, "c_out": 1, "multiplier": 1, "h": 1, "w": 1, "kh": 1, "kw": 1, "stride_h": 1,
              "stride_w": 1, "dilation_h": 1, "dilation_w": 1, "pad_top": 0, "pad_bottom": 0, "pad_left": 0,
              "pad_right": 0, "groups": 1}
    for name in FIELDS[op]:
        if not lowest[name] <= p[name] <= limits[FIELD_LIMIT[name]]:
            return f"{name} = {p[name]}"
    d = derived(op, p)
    checks = [("out_h", "out_extent"), ("out_w", "out_extent"), ("out_channels", "out_channels"),
              ("in_plane", "plane"), ("out_plane", "plane"), ("reduction", "reduction"),
              ("input", "tensor_elements"), ("filter", "tensor_elements"), ("output", "tensor_elements")]
    if d["out_h"] < 1 or d["out_w"] < 1:
        return f"empty output {d['out_h']}x{d['out_w']}"
    for size, limit in checks:
        if d[size] > limits[limit]:
            return f"{size} = {d[size]}"
    for tensor in ("input", "filter", "output"):
        if 4 * d[tensor] > limits["tensor_bytes"]:
            return f"bytes of {tensor} = {4 * d[tensor]}"
    return None


def ordinary(op, rng):
    p = {"n": rng.randint(1, 8), "c": rng.randint(1, 64), "h": rng.randint(1, 64), "w": rng.randint(1, 64),
         "kh": rng.randint(1, 7), "kw": rng.randint(1, 7), "stride_h": rng.randint(1, 3),
         "stride_w": rng.randint(1, 3), "dilation_h": rng.randint(1, 3), "dilation_w": rng.randint(1, 3),
         "pad_top": rng.randint(0, 3), "pad_bottom": rng.randint(0, 3), "pad_left": rng.randint(0, 3),
         "pad_right": rng.randint(0, 3)}
    if op == "depthwise":
        p["multiplier"] = rng.randint(1, 4)
    else:
        p["c_out"] = rng.randint(1, 64)
        p["groups"] = 1 if rng.random() < 0.95 else rng.choice([0, 2, -1, INT_MAX])
    return p


def boundary_value(rng, limit):
    """A value near a limit, near a wrap point, or an extreme of int."""
    kind = rng.random()
    if kind < 0.45:
        return max(INT_MIN, min(INT_MAX, limit + rng.randint(-2, 2)))
    if kind < 0.85:
        return max(INT_MIN, min(INT_MAX, rng.choice(WRAP_POINTS) + rng.randint(-1, 1)))
    return rng.choice([0, -1, INT_MIN, INT_MAX, 1])


def near_limits(op, rng, limits):
    """An ordinary problem with one to three fields moved to a boundary."""
    p = ordinary(op, rng)
    for name in rng.sample(FIELDS[op], rng.randint(1, 3)):
        p[name] = boundary_value(rng, limits[FIELD_LIMIT[name]])
    return p


def log_uniform(rng, hi):
    return max(1, min(hi, int(round(2 ** rng.uniform(0, hi.bit_length())))))


def near_derived_limits(op, rng, limits):
    """Fields spread over their whole range, so that the products land around
    the derived limits (2^24 channels, 2^30 reduction, 2^40 elements)."""
    p = ordinary(op, rng)
    extent = limits["extent"]
    for name in ("c", "h", "w"):
        p[name] = log_uniform(rng, extent)
    p["n"] = log_uniform(rng, limits["batch"])
    if op == "depthwise":
        p["multiplier"] = log_uniform(rng, limits["multiplier"])
    else:
        p["c_out"] = log_uniform(rng, limits["out_channels"])
    for axis, size in (("h", p["h"]), ("w", p["w"])):
        k, stride, dilation = f"k{axis}", f"stride_{axis}", f"dilation_{axis}"
        p[k] = log_uniform(rng, min(size, extent))
        p[stride] = log_uniform(rng, limits["stride"])
        p[dilation] = log_uniform(rng, max(1, size // max(1, p[k])))
        pads = ("pad_top", "pad_bottom") if axis == "h" else ("pad_left", "pad_right")
        for pad in pads:
            p[pad] = rng.choice([0, rng.randint(0, 4), log_uniform(rng, limits["padding"])])
    return p


def issue_examples():
    """The problems validate() once accepted with wrapped sizes."""
    base = {"n": 1, "h": 8, "w": 8, "kh": 3, "kw": 3, "stride_h": 1, "stride_w": 1, "pad_top": 1, "pad_bottom": 1,
            "pad_left": 1, "pad_right": 1, "dilation_h": 1, "dilation_w": 1}
    return [("depthwise", dict(base, c=3, multiplier=1431655766)),
            ("depthwise", dict(base, c=1, multiplier=1, h=10, kh=4, pad_top=0, pad_bottom=0, dilation_h=1431655766)),
            ("conv2d", dict(base, c=2 ** 28, c_out=1, groups=1))]


def line_of(op, p):
    return " ".join([op] + [str(p[name]) for name in FIELDS[op]])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--probe", required=True, help="the validate_probe executable")
    parser.add_argument("--seed", type=int, default=None, help="reproduce a run (default: a fresh seed)")
    parser.add_argument("--count", type=int, default=20000, help="problems of each operator")
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2 ** 32)
    print(f"seed {seed} (reproduce with --seed {seed})")
    rng = random.Random(seed)
    limits = read_limits(args.probe)

    problems = issue_examples()
    for op in ("depthwise", "conv2d"):
        for _ in range(args.count):
            draw = rng.random()
            if draw < 0.2:
                problems.append((op, ordinary(op, rng)))
            elif draw < 0.6:
                problems.append((op, near_limits(op, rng, limits)))
            else:
                problems.append((op, near_derived_limits(op, rng, limits)))

    text = "".join(line_of(op, p) + "\n" for op, p in problems)
    run = subprocess.run([args.probe], input=text, stdout=subprocess.PIPE, text=True)
    answers = run.stdout.splitlines()
    if run.returncode != 0 or len(answers) != len(problems):
        print(f"FAIL: the probe exited {run.returncode} with {len(answers)} answers for {len(problems)} problems")
        return 1

    failures = []
    accepted = {"depthwise": 0, "conv2d": 0}
    rejected = {"depthwise": 0, "conv2d": 0}
    largest = {}  # the largest accepted value of each derived size
    for (op, p), answer in zip(problems, answers):
        why = why_invalid(op, p, limits)
        if answer.startswith("rejected "):
            rejected[op] += 1
            if why is None:
                failures.append(f"{line_of(op, p)}: valid by the limits, but validate() says: {answer[9:]}")
            continue
        accepted[op] += 1
        if why is not None:
            failures.append(f"{line_of(op, p)}: validate() accepts it, but {why} is past the limits")
            continue
        d = derived(op, p)
        got = [int(v) for v in answer.split()[1:]]
        want = [d["out_channels"], d["out_h"], d["out_w"]]
        if got != want:
            failures.append(f"{line_of(op, p)}: the helpers say out_channels, out_h, out_w = {got}; "
                            f"the formula says {want}")
        for size, value in d.items():
            largest[size] = max(largest.get(size, 0), value)

    for op, p in issue_examples():
        index = problems.index((op, p))
        if not answers[index].startswith("rejected "):
            failures.append(f"the issue's example {line_of(op, p)} is accepted: {answers[index]}")

    total = len(problems)
    print(f"{total} problems drawn: depthwise {accepted['depthwise']} accepted, {rejected['depthwise']} rejected; "
          f"conv2d {accepted['conv2d']} accepted, {rejected['conv2d']} rejected")
    print("largest accepted: " + ", ".join(f"{k} {v:,}" for k, v in sorted(largest.items())))
    # A draw that exercises nothing would pass vacuously.
    for op in ("depthwise", "conv2d"):
        if accepted[op] < args.count // 10 or rejected[op] < args.count // 10:
            failures.append(f"{op}: the draw accepted {accepted[op]} and rejected {rejected[op]}; "
                            "it must exercise both sides")
    if largest.get("output", 0) <= 2 ** 32 or largest.get("out_channels", 0) <= 2 ** 16:
        failures.append("no accepted problem has an output past 2^32 elements or 2^16 channels: the draw is too timid")
    if failures:
        for f in failures[:10]:
            print("FAIL: " + f)
        print(f"FAIL: {len(failures)} of {total} problems break the property (seed {seed})")
        return 1
    print(f"ok: validate() accepts exactly the problems within the limits, and their helpers' sizes are exact "
          f"({total} problems)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
