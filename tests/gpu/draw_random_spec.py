#!/usr/bin/env python3
"""Draws a seeded random set of depthwise or dense problems and writes them as a convgen spec.

The draw covers the whole space the generator claims: batch 1..8, channels
1..300, height and width 1..130 (odd sizes included), filters 1..7 (square
and not), strides 1..3, every padding form, dilation 1..2, channel
multiplier 1..4, every epilogue and activation. Some draws are impossible
(a filter larger than the padded input, a pad wider than the filter): the
generator must reject those with a clear message, and the test counts them.

Options narrow the draw for one algorithm: --max-extent bounds height and
width, --filters LO HI draws filter sides from LO to HI (default 1 7; up to
11 for the large-filter draws), --schedule gives every workload a schedule
(e.g. "{algorithm: planes}"), --library names the library. With
--max-macs, each depthwise problem is shrunk (channels, then batch) until it
needs at most that many multiply-adds, so that the float64 CPU reference of
large filters stays quick.

Data types and layouts: --dtypes and --layouts (default float32 and NCHW)
and --schedules (each a flow mapping, or `default` for the default rule's)
list what the workloads take; workload i takes the i-th of every
combination of them in turn, so that each combination gets an equal share.
With --valid N, the draw goes on until N of its problems are shapes the
generator must accept (a forced algorithm may still refuse some: the
library's rejections test lists them); the impossible ones drawn on the way
stay in the spec.

--op conv2d draws dense (groups 1) problems instead: input and output
channels 1..512 (skewed toward small ones, odd counts included), the same
sizes, filters (a quarter of them 1x1), strides, paddings and dilations,
and every combination of epilogue (none, bias, scale_shift), residual
(false, true) and activation (none, relu, relu6, silu, hardswish) in turn. The float64
reference that checks them runs on the CPU, so each problem is shrunk (height
and width, or the batch) until it needs at most --max-macs multiply-adds
(default 3e7); a shape that was valid stays valid. --shapes winograd keeps
to the shapes the winograd algorithm serves (3x3, stride 1, dilation 1);
--shapes stem to the stem algorithm's (1 to 4 input channels), with filters
up to 11x11, strides up to 4 and batches up to 64, --shapes tensor_stem to
those of them the tensor_stem algorithm serves; --shapes pointwise to the
gemm and pointwise algorithms' (1x1, stride 1, no padding).
--channel-multiple and --out-channel-multiple round the input and output
channel counts up to a multiple (16-byte vectors). --maths lists the float32
workloads' math (fp32, tf32, 3xtf32), taken in turn.
"""
import argparse
import random

ACTIVATIONS = ["none", "relu", "relu6", "silu", "hardswish"]


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


def draw_workload(rng, max_extent, filters, max_macs, extra=None, activations=ACTIVATIONS):
    """One depthwise problem as a flow mapping (`extra`: further keys, e.g.
    dtype, in order; `activations`: those to draw from), and whether the
    generator must accept its shape."""
    kh = rng.randint(*filters)
    kw = kh if rng.random() < 0.5 else rng.randint(*filters)
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
        "activation": rng.choice(activations),
    }
    if max_macs:
        # Input-sized work bounds the output's: n * c * multiplier * h * w * taps.
        def macs():
            return fields["n"] * fields["c"] * fields["multiplier"] * fields["h"] * fields["w"] * kh * kw
        while macs() > max_macs and fields["c"] > 1:
            fields["c"] = max(1, fields["c"] * 9 // 10)
        while macs() > max_macs and fields["n"] > 1:
            fields["n"] -= 1
    fields.update(extra or {})
    sh, sw = parse_pair(stride_text)
    window_h, window_w = dilation * (kh - 1), dilation * (kw - 1)
    top, bottom, left, right = pads_of(fields["padding"], window_h, window_w)
    valid = (max(top, bottom) <= window_h and max(left, right) <= window_w
             and out_extent(fields["h"], top, bottom, window_h, sh) > 0
             and out_extent(fields["w"], left, right, window_w, sw) > 0)
    return "  - {" + ", ".join("%s: %s" % (k, v) for k, v in fields.items()) + "}", valid


def draw_channels(rng):
    """1..512, skewed toward small counts; about half are odd."""
    r = rng.random()
    if r < 0.45:
        return rng.randint(1, 16)
    if r < 0.8:
        return rng.randint(17, 128)
    return rng.randint(129, 512)


def parse_pair(text):
    """'3' or '[3, 2]' -> (3, 3) or (3, 2)."""
    values = [int(v) for v in text.strip("[]").split(",")]
    return (values[0], values[-1])


def pads_of(padding, window_h, window_w):
    """(top, bottom, left, right) as the generator resolves them."""
    if padding == "same":
        return (window_h // 2, window_h - window_h // 2, window_w // 2, window_w - window_w // 2)
    if padding == "valid":
        return (0, 0, 0, 0)
    values = [int(v) for v in padding.strip("[]").split(",")]
    if len(values) == 1:
        return (values[0],) * 4
    if len(values) == 2:
        return (values[0], values[0], values[1], values[1])
    return tuple(values)


def out_extent(extent, pad_a, pad_b, window, stride):
    """The output height or width; 0 when the dilated filter does not fit."""
    if extent + pad_a + pad_b < window + 1:
        return 0
    return (extent + pad_a + pad_b - window - 1) // stride + 1


# Every (epilogue, residual, activation), taken in turn so that each appears
# count / 30 times.
EPILOGUE_COMBOS = [(e, r, a) for e in ("none", "bias", "scale_shift") for r in ("false", "true")
                   for a in ACTIVATIONS]


def draw_conv2d_workload(rng, index, max_extent, max_macs, shapes="all", channel_multiple=1, out_channel_multiple=1):
    """One dense problem as a flow mapping, and whether the generator should accept it.
    shapes "winograd": 3x3, stride 1, dilation 1 (what that algorithm serves);
    "stem": 1 to 4 input channels, filters to 11x11, strides to 4, batch to 64;
    "tensor_stem": those that algorithm serves (no dilation along rows; an
    even stride along rows and an even width where the channels are odd);
    "pointwise": 1x1, stride 1, no padding (what the gemm algorithm serves)."""
    stem = shapes in ("stem", "tensor_stem")
    if shapes == "winograd":
        kh = kw = 3
    elif shapes == "pointwise":
        kh = kw = 1
    elif stem:
        kh = rng.randint(1, 11)
        kw = kh if rng.random() < 0.6 else rng.randint(1, 11)
    elif rng.random() < 0.25:
        kh = kw = 1
    else:
        kh = rng.randint(1, 7)
        kw = kh if rng.random() < 0.5 else rng.randint(1, 7)
    max_stride = 4 if stem else 3
    stride = rng.randint(1, max_stride)
    stride_text = str(stride) if rng.random() < 0.7 else "[%d, %d]" % (stride, rng.randint(1, max_stride))
    dilation = 1 if rng.random() < 0.8 else 2
    dilation_text = str(dilation) if rng.random() < 0.8 else "[%d, %d]" % (dilation, rng.randint(1, 2))
    if shapes in ("winograd", "pointwise"):
        stride_text, dilation_text = "1", "1"
    padding = "valid" if shapes == "pointwise" else draw_padding(rng, kh, kw)
    n = rng.randint(1, 64 if stem else 8)
    c = rng.randint(1, 4) if stem else draw_channels(rng)
    if shapes == "tensor_stem":
        # Pairs of elements of the input rows: dilation 1 along them, and an
        # even stride along them where c is odd (the width likewise, below).
        dilation_text = "[%d, 1]" % parse_pair(dilation_text)[0]
        row_stride = parse_pair(stride_text)[1]
        if c % 2 == 1 and row_stride % 2 == 1:
            stride_text = "[%d, %d]" % (parse_pair(stride_text)[0], rng.choice([2, 4]))
    # Input channels rounded up to a multiple (what a 16-byte copy of a
    # pixel's channels needs); the output channels likewise where asked
    # (16-byte stores), else any count.
    c = -(-c // channel_multiple) * channel_multiple
    c_out = -(-draw_channels(rng) // out_channel_multiple) * out_channel_multiple
    h = rng.randint(1, max_extent)
    w = rng.randint(1, max_extent)
    epilogue, residual, activation = EPILOGUE_COMBOS[index % len(EPILOGUE_COMBOS)]

    sh, sw = parse_pair(stride_text)
    dh, dw = parse_pair(dilation_text)
    window_h, window_w = dh * (kh - 1), dw * (kw - 1)
    top, bottom, left, right = pads_of(padding, window_h, window_w)
    pads_ok = max(top, bottom) <= window_h and max(left, right) <= window_w

    def macs():
        return (n * c_out * out_extent(h, top, bottom, window_h, sh) * out_extent(w, left, right, window_w, sw)
                * c * kh * kw)

    # Shrink the largest of height, width and 8 x batch by a tenth, never
    # below the smallest extent that keeps an output row and column: at a
    # 1x1 output the work is at most 512 * 512 * 49 = 1.3e7 multiply-adds.
    min_h = max(1, window_h + 1 - top - bottom)
    min_w = max(1, window_w + 1 - left - right)
    while macs() > max_macs:
        candidates = []
        if h > min_h:
            candidates.append((h, "h"))
        if w > min_w:
            candidates.append((w, "w"))
        if n > 1:
            candidates.append((8 * n, "n"))
        if not candidates:
            break
        _, which = max(candidates)
        if which == "h":
            h = max(min_h, h - max(1, h // 10))
        elif which == "w":
            w = max(min_w, w - max(1, w // 10))
        else:
            n -= 1
    if shapes == "tensor_stem" and c % 2 == 1 and w % 2 == 1:
        w = w - 1 if w - 1 >= min_w else w + 1
    fields = {
        "n": n,
        "c": c,
        "c_out": c_out,
        "h": h,
        "w": w,
        "filter": "[%d, %d]" % (kh, kw),
        "stride": stride_text,
        "dilation": dilation_text,
        "padding": padding,
        "groups": 1,
        "epilogue": epilogue,
        "residual": residual,
        "activation": activation,
    }
    valid = pads_ok and macs() > 0
    return "  - {" + ", ".join("%s: %s" % (k, v) for k, v in fields.items()) + "}", valid, macs()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=2026, help="random seed (default 2026)")
    parser.add_argument("--op", choices=["depthwise_conv2d", "conv2d"], default="depthwise_conv2d",
                        help="operator to draw (default depthwise_conv2d)")
    parser.add_argument("--count", type=int, help="problems to draw (default 580 depthwise, 360 conv2d)")
    parser.add_argument("--out", required=True, help="spec file to write")
    parser.add_argument("--max-extent", type=int, default=130, help="largest height and width (default 130)")
    parser.add_argument("--schedule", help="schedule of every workload, a YAML flow mapping")
    parser.add_argument("--library", default="random_draw", help="library name (default random_draw)")
    parser.add_argument("--max-macs", type=float,
                        help="most multiply-adds per problem, batch included (default: conv2d 3e7, depthwise none)")
    parser.add_argument("--filters", type=int, nargs=2, default=[1, 7], metavar=("LO", "HI"),
                        help="depthwise: filter sides drawn from LO to HI (default 1 7)")
    parser.add_argument("--dtypes", nargs="+", default=["float32"], metavar="DTYPE",
                        help="the workloads' dtypes, taken in turn (default float32; conv2d: one)")
    parser.add_argument("--layouts", nargs="+", default=["NCHW"], metavar="LAYOUT",
                        help="the workloads' layouts, taken in turn (default NCHW; conv2d: one)")
    parser.add_argument("--maths", nargs="+", default=["fp32"], choices=["fp32", "tf32", "3xtf32"], metavar="MATH",
                        help="conv2d: the float32 workloads' math, taken in turn (default fp32)")
    parser.add_argument("--schedules", nargs="+", metavar="SCHEDULE",
                        help="depthwise: the workloads' schedules, taken in turn; `default`: the default rule's")
    parser.add_argument("--channel-multiple", type=int, default=1, metavar="K",
                        help="conv2d: input channels rounded up to a multiple of K (default 1)")
    parser.add_argument("--out-channel-multiple", type=int, default=1, metavar="K",
                        help="conv2d: output channels rounded up to a multiple of K (default 1)")
    parser.add_argument("--shapes", choices=["all", "winograd", "stem", "tensor_stem", "pointwise"], default="all",
                        help="conv2d: `winograd` draws only 3x3 filters with stride 1 and dilation 1, `stem` only "
                             "1 to 4 input channels, `tensor_stem` those of them the tensor_stem algorithm "
                             "serves, `pointwise` only 1x1 filters at stride 1 without padding (default all)")
    parser.add_argument("--activations", nargs="+", default=ACTIVATIONS, choices=ACTIVATIONS, metavar="ACTIVATION",
                        help="depthwise: the activations drawn from (default: every one)")
    parser.add_argument("--valid", type=int,
                        help="depthwise: draw on (past --count) until this many shapes are valid")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    if args.op == "conv2d":
        if args.max_macs is None:
            args.max_macs = 3e7
        draw_conv2d(args, rng)
        return
    if args.count is None:
        args.count = 580
    # The keys every workload shares go to `defaults`; those that vary
    # (several dtypes, layouts or schedules), to each workload in turn.
    choices = [("dtype", args.dtypes), ("layout", args.layouts),
               ("schedule", args.schedules or [args.schedule or "default"])]
    combinations = [[]]
    for key, values in choices:
        combinations = [c + [(key, v)] for c in combinations for v in values]
    shared = ["%s: %s" % (key, values[0]) for key, values in choices if len(values) == 1 and values[0] != "default"]
    varying = {key for key, values in choices if len(values) > 1}

    def extra(i):
        return {k: v for k, v in combinations[i % len(combinations)] if k in varying and v != "default"}

    drawn, valid = [], 0
    while len(drawn) < args.count or (args.valid and valid < args.valid):
        text, ok = draw_workload(rng, args.max_extent, args.filters, args.max_macs, extra(len(drawn)),
                                 args.activations)
        drawn.append(text)
        valid += ok
    lines = [
        "# %d depthwise problems drawn by tests/gpu/draw_random_spec.py --seed %d. Do not edit." % (len(drawn), args.seed),
        "library: %s" % args.library,
        "defaults: {%s}" % ", ".join(["op: depthwise_conv2d"] + shared),
        "workloads:",
    ] + drawn
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("drew %d problems (seed %d) into %s: %d the generator should accept" % (len(drawn), args.seed, args.out, valid))


def draw_conv2d(args, rng):
    count = 360 if args.count is None else args.count
    if len(args.dtypes) != 1 or len(args.layouts) != 1:
        raise SystemExit("--op conv2d takes one dtype and one layout")
    dtype, layout = args.dtypes[0], args.layouts[0]
    drawn = [draw_conv2d_workload(rng, i, args.max_extent, args.max_macs, args.shapes, args.channel_multiple,
                                  args.out_channel_multiple)
             for i in range(count)]
    if len(args.maths) > 1:
        # The math in turn by rounds of the epilogue combinations, so that
        # each math meets every combination: "  - {...}" becomes
        # "  - {..., math: tf32}".
        def math_of(i):
            return args.maths[i // len(EPILOGUE_COMBOS) % len(args.maths)]
        drawn = [(text[:-1] + ", math: %s}" % math_of(i), ok, m) for i, (text, ok, m) in enumerate(drawn)]
    math = ", math: " + args.maths[0] if len(args.maths) == 1 and args.maths[0] != "fp32" else ""
    lines = [
        "# %d dense conv2d problems drawn by tests/gpu/draw_random_spec.py --op conv2d --seed %d. Do not edit."
        % (count, args.seed),
        "library: %s" % args.library,
        "defaults: {op: conv2d, dtype: %s, layout: %s%s%s}"
        % (dtype, layout, math, ", schedule: " + args.schedule if args.schedule else ""),
        "workloads:",
    ]
    lines += [text for text, _, _ in drawn]
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    valid = sum(1 for _, ok, _ in drawn if ok)
    macs = sum(m for _, ok, m in drawn if ok)
    print("drew %d dense problems (seed %d) into %s: %d the generator should accept, %.2g multiply-adds in all"
          % (count, args.seed, args.out, valid, macs))


if __name__ == "__main__":
    main()
