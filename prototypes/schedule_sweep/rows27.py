# Sweep 27: `pointwise` on outputs of 32 and 40 channels, after the epilogue in two phases (sweep 26),
# against the default rule's kernel (implicit_gemm; pointwise only takes outputs of at most 24 channels).
# Sweeps 18 and 19 found pointwise 0.85-1.04x as fast as implicit_gemm on these layers with the old
# epilogue, faster with 3 tiles a warp than with the rule's 2; sweep 26 measured 144 -> 32 with 3 tiles a
# warp at 7.7 us against implicit_gemm's 8.5. Layers of MobileNetV2 (x -> 32), EfficientNet-B0 (x -> 40)
# and MobileNetV3-Large (72 -> 40, 120 -> 40), scale/shift without activation (projections), batch 64
# and 1; deeper rings (3 and 4 stages: 2 keep one tile's copy in flight a warp). $SWEEP_DTYPE: float16 (default), bfloat16 or float32 (math tf32).
import os

DTYPE = os.environ.get("SWEEP_DTYPE", "float16")
if DTYPE == "float32":
    LAYOUT, MATH = "NHWC", "tf32"


def pw(ct, tpw, stages=2, warps=4):
    return f"algorithm: pointwise, channel_tile: {ct}, tiles_per_warp: {tpw}, stages: {stages}, warps_per_block: {warps}"


def b64(co):
    rings = [pw(co, 3, stages=3), pw(co, 3, stages=4)] if DTYPE != "float32" else []  # float32: over 227 KiB
    return [None, pw(co, 2), pw(co, 3), pw(co, 4), pw(co, 1)] + rings


def b1(co):
    return [None, pw(co, 1), pw(co, 2)]


R = [  # (name, n, c, c_out, h, k, stride, act, variants); variant None is the default rule
    # and the thin layer whose epilogue still costs 12% over its plain kernel: deeper rings, more warps
    ("mnv2 b64 32-192 28 relu6", 64, 32, 192, 28, 1, 1, "relu6",
     [None, pw(96, 4, stages=3), pw(96, 4, stages=4), pw(96, 2, warps=8), pw(192, 4), pw(96, 4, stages=3, warps=2)]),
    ("mnv2 b64 32-192 28 plain", 64, 32, 192, 28, 1, 1, "plain", [None, pw(96, 4, stages=3)]),
    ("mnv2 b64 144-32 28", 64, 144, 32, 28, 1, 1, "none", b64(32)),
    ("mnv2 b64 192-32 28", 64, 192, 32, 28, 1, 1, "none", b64(32)),
    ("effnet b64 144-40 28", 64, 144, 40, 28, 1, 1, "none", b64(40)),
    ("effnet b64 240-40 28", 64, 240, 40, 28, 1, 1, "none", b64(40)),
    ("mnv3 b64 72-40 28", 64, 72, 40, 28, 1, 1, "none", b64(40)),
    ("mnv3 b64 120-40 28", 64, 120, 40, 28, 1, 1, "none", b64(40)),
    ("mnv2 b1 144-32 28", 1, 144, 32, 28, 1, 1, "none", b1(32)),
    ("mnv2 b1 192-32 28", 1, 192, 32, 28, 1, 1, "none", b1(32)),
    ("effnet b1 144-40 28", 1, 144, 40, 28, 1, 1, "none", b1(40)),
    ("effnet b1 240-40 28", 1, 240, 40, 28, 1, 1, "none", b1(40)),
    ("mnv3 b1 120-40 28", 1, 120, 40, 28, 1, 1, "none", b1(40)),
]
