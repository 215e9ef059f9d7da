# Sweep 30: `pointwise` on the narrow projections with more warps a block. Sweep 27 found 1 tile a warp in
# blocks of 4 warps 1.4-1.6x slower than 3 (a block's filter rows and parameters read once for its warps'
# tiles: more blocks, more of those reads), and MobileNetV2's 144 -> 32 stays 1.25-1.34x PyTorch's plain conv
# with 3 tiles a warp. More warps a block share a block's reads among more tiles while fewer tiles a warp
# put more warps an SM at work: 8 warps of 1 or 2 tiles, 6 of 2, 12 and 16 (10 from 192 channels) of 1, 8 of 3.
# Scale/shift without activation, batch 64. $SWEEP_DTYPE: float16 (default) or bfloat16.
import os

DTYPE = os.environ.get("SWEEP_DTYPE", "float16")


def pw(ct, tpw, warps, stages=2):
    return f"algorithm: pointwise, channel_tile: {ct}, tiles_per_warp: {tpw}, stages: {stages}, warps_per_block: {warps}"


def variants(co, c):
    sixteen = pw(co, 1, 16) if c < 192 else pw(co, 1, 10)  # 16 warps' input rings exceed shared memory from 192 channels
    return [None, pw(co, 1, 8), pw(co, 2, 8), pw(co, 2, 6), pw(co, 1, 12), sixteen, pw(co, 3, 8)]


R = [  # (name, n, c, c_out, h, k, stride, act, variants); variant None is the default rule (4 warps of 3 tiles)
    ("mnv2 b64 144-32 28", 64, 144, 32, 28, 1, 1, "none", variants(32, 144)),
    ("mnv2 b64 192-32 28", 64, 192, 32, 28, 1, 1, "none", variants(32, 192)),
    ("effnet b64 144-40 28", 64, 144, 40, 28, 1, 1, "none", variants(40, 144)),
    ("effnet b64 240-40 28", 64, 240, 40, 28, 1, 1, "none", variants(40, 240)),
    ("mnv3 b64 120-40 28", 64, 120, 40, 28, 1, 1, "none", variants(40, 120)),
    ("mnv2 b64 96-24 56", 64, 96, 24, 56, 1, 1, "none", [None, pw(24, 4, 8), pw(24, 8, 8), pw(24, 2, 8), pw(24, 4, 16)]),
]
