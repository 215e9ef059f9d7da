# Sweep 22: float32 NHWC stems in math tf32 (implicit_gemm, iterator few_channels: 1-element copies of 3
# channels). The default rule's tiles keep values in local memory there (ptxas -v, sm_90: 7x7's 256 x 64 tile
# with 64 x 64 warps spills 140 bytes, 4x4's 128 x 128 with 64 x 64 warps 940, 3x3's 128 x 32 8), and the
# three stems ran at 2.4 to 5.1 times PyTorch's TF32 time on the H200 (docs/benchmarks_h200_tf32.md). The
# variants keep every warp at 32 x 32 and a thread's copies of a step at 8 or fewer (no spill), or not.
DTYPE = "float32"
LAYOUT = "NHWC"
MATH = "tf32"


def t(m, n, wm=32, wn=32, stages=3):
    return f"cta_tile: [{m}, {n}, 16], warp_tile: [{wm}, {wn}], stages: {stages}"


R = [  # (name, n, c, c_out, h, k, stride, act, variants, padding); variant None is the default rule
    ("stem 7x7 s2 3-64 b8", 8, 3, 64, 224, 7, 2, "relu",
     [None, t(128, 64), t(128, 64, stages=4), t(64, 64), t(64, 64, stages=4), t(256, 64, 32, 64)], 3),
    ("stem 4x4 s4 3-96 b8", 8, 3, 96, 224, 4, 4, "bias",
     [None, t(64, 128), t(64, 128, stages=4), t(128, 64), t(64, 64), t(128, 128, 32, 64)], 0),
    ("stem 3x3 s2 3-32 b8", 8, 3, 32, 224, 3, 2, "silu",
     [None, t(64, 64), t(128, 64), t(64, 32), t(128, 32, stages=4)], 1),
    ("stem 7x7 s2 3-64 b1", 1, 3, 64, 224, 7, 2, "relu", [None, t(128, 64), t(64, 64), t(64, 64, stages=4)], 3),
]
