# Sweep 33: the narrow half-precision projections at batch 64 with the rule of sweeps 30 and 31 (blocks of 8
# warps of 3 tiles, told to ptxas as one an SM: __launch_bounds__(256, 1)) against the rule before (4 warps of
# 3 tiles, forced). Scale/shift without activation, and 144 -> 32 with a residual. $SWEEP_DTYPE: float16
# (default) or bfloat16.
import os

DTYPE = os.environ.get("SWEEP_DTYPE", "float16")


def before(co):
    return f"algorithm: pointwise, channel_tile: {co}, tiles_per_warp: 3, stages: 2, warps_per_block: 4"


R = [  # (name, n, c, c_out, h, k, stride, act, variants); variant None is the default rule
    ("mnv2 b64 144-32 28", 64, 144, 32, 28, 1, 1, "none", [None, before(32)]),
    ("mnv2 b64 192-32 28", 64, 192, 32, 28, 1, 1, "none", [None, before(32)]),
    ("effnet b64 144-40 28", 64, 144, 40, 28, 1, 1, "none", [None, before(40)]),
    ("effnet b64 240-40 28", 64, 240, 40, 28, 1, 1, "none", [None, before(40)]),
    ("mnv3 b64 72-40 28", 64, 72, 40, 28, 1, 1, "none", [None, before(40)]),
    ("mnv3 b64 120-40 28", 64, 120, 40, 28, 1, 1, "none", [None, before(40)]),
]
