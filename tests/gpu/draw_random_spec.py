#!/usr/bin/env python3
"""Draws a seeded random set of depthwise problems and writes them as a convgen spec.

The draw covers the whole space the generator claims: batch 1..8, channels
1..300, height and width 1..130 (odd sizes included), filters 1..7 (square
and not), strides 1..3, every padding form, dilation 1..2, channel
multiplier 1..4, every epilogue and activation. Some draws are impossible
(a filter larger than the padded input, a pad wider than the filter): the
generator must reject those with a clear message, and the test counts them.

Options narrow the draw for one algorithm: --max-extent bounds height and
width, --schedule gives every workload a schedule (e.g. "{algorithm: planes}"),
--library names the library.
"""
import argparse
import random


def draw_padding(rng, kh, kw):
    form = rng.choice(["same", "valid", "int", "pair", "four"])
    if form in ("same", "valid"):
        return form
    # Pads up to one past the filter window, so that some draws are rejected.
    if form == "int":
        return str(rng.randint(0, max(kh, kw)))
    if form == "pair":
        return "[%d, %d]" % (rng.randint(0, kh - 1), rng.randint(0, kw - 1))
    return "[%d, %d, %d, %d]" % (rng.randint(0, kh - 1), rng.randint(0, kh - 1),
                                 rng.randint(0, kw - 1), rng.randint(0, kw - 1))


def draw_workload(rng, max_extent):
    kh = rng.randint(1, 7)
    kw = kh if rng.random() < 0.5 else rng.randint(1, 7)
    stride = rng.randint(1, 3)
    stride_text = str(stride) if rng.random() < 0.7 else "[%d, %d]" % (stride, rng.randint(1, 3))
    dilation = 1 if rng.random() < 0.8 else 2
    fields = {
        "n": rng.randint(1, 8),
        "c": rng.randint(1, 300),
        "h": rng.randint(1, max_extent),
        "w": rng.randint(1, max_extent),
        "filter": "[%d, %d]" % (kh, kw),
        "stride": stride_text,
        "dilation": str(dilation),
        "padding": draw_padding(rng, kh, kw),
        "multiplier": rng.randint(1, 4),
        "epilogue": rng.choice(["none", "bias", "scale_shift"]),
        "activation": rng.choice(["none", "relu", "relu6"]),
    }
    return "  - {" + ", ".join("%s: %s" % (k, v) for k, v in fields.items()) + "}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=2026, help="random seed (default 2026)")
    parser.add_argument("--count", type=int, default=580, help="problems to draw (default 580)")
    parser.add_argument("--out", required=True, help="spec file to write")
    parser.add_argument("--max-extent", type=int, default=130, help="largest height and width (default 130)")
    parser.add_argument("--schedule", help="schedule of every workload, a YAML flow mapping")
    parser.add_argument("--library", default="random_draw", help="library name (default random_draw)")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    lines = [
        "# %d depthwise problems drawn by tests/gpu/draw_random_spec.py --seed %d. Do not edit." % (args.count, args.seed),
        "library: %s" % args.library,
        "defaults: {op: depthwise_conv2d, dtype: float32, layout: NCHW%s}"
        % (", schedule: " + args.schedule if args.schedule else ""),
        "workloads:",
    ]
    lines += [draw_workload(rng, args.max_extent) for _ in range(args.count)]
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("drew %d problems (seed %d) into %s" % (args.count, args.seed, args.out))


if __name__ == "__main__":
    main()
