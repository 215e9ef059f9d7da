# Sweep 31: after sweep 30 (8 warps of 3 tiles, one block an SM, 0.85-0.89x the rule's 4 warps of 3 on
# the narrow half-precision projections at batch 64): other blocks of one an SM (6 warps of 4 tiles, what a
# library with sm_86's 99 KiB of shared memory leaves the deeper inputs; 12 of 2), a deeper ring, the same
# layers at batch 1 (the rule: 4 warps of 1 tile), and 8 warps on the thin layers (16 -> 96, 24 -> 144,
# 32 -> 192), where the H100's sweeps had 4 warps ahead. $SWEEP_DTYPE: float16 (default) or bfloat16.
import os

DTYPE = os.environ.get("SWEEP_DTYPE", "float16")


def pw(ct, tpw, warps, stages=2):
    return f"algorithm: pointwise, channel_tile: {ct}, tiles_per_warp: {tpw}, stages: {stages}, warps_per_block: {warps}"


def b64(co, c):
    return [None, pw(co, 3, 8), pw(co, 4, 6), pw(co, 2, 12) if c < 192 else pw(co, 2, 10), pw(co, 3, 8, stages=3)]


def b1(co):
    return [None, pw(co, 1, 8), pw(co, 1, 2), pw(co, 2, 4)]


R = [  # (name, n, c, c_out, h, k, stride, act, variants); variant None is the default rule
    ("mnv2 b64 144-32 28", 64, 144, 32, 28, 1, 1, "none", b64(32, 144)),
    ("mnv2 b64 192-32 28", 64, 192, 32, 28, 1, 1, "none", b64(32, 192)),
    ("effnet b64 144-40 28", 64, 144, 40, 28, 1, 1, "none", b64(40, 144)),
    ("effnet b64 240-40 28", 64, 240, 40, 28, 1, 1, "none", b64(40, 240)),
    ("mnv3 b64 72-40 28", 64, 72, 40, 28, 1, 1, "none", b64(40, 72)),
    ("mnv3 b64 120-40 28", 64, 120, 40, 28, 1, 1, "none", b64(40, 120)),
    ("mnv2 b1 144-32 28", 1, 144, 32, 28, 1, 1, "none", b1(32)),
    ("mnv2 b1 192-32 28", 1, 192, 32, 28, 1, 1, "none", b1(32)),
    ("effnet b1 240-40 28", 1, 240, 40, 28, 1, 1, "none", b1(40)),
    ("mnv3 b1 120-40 28", 1, 120, 40, 28, 1, 1, "none", b1(40)),
    ("mnv2 b64 32-192 28 relu6", 64, 32, 192, 28, 1, 1, "relu6", [None, pw(96, 2, 8), pw(96, 3, 8), pw(96, 4, 8)]),
    ("mnv2 b64 24-144 56 relu6", 64, 24, 144, 56, 1, 1, "relu6", [None, pw(144, 4, 8), pw(144, 8, 8), pw(144, 6, 8)]),
    ("mnv2 b64 16-96 112 relu6", 64, 16, 96, 112, 1, 1, "relu6", [None, pw(96, 16, 8), pw(96, 24, 8), pw(96, 32, 8)]),
]
