# Sweep 23: float32 NHWC stems in math tf32 on tensor_stem (the half stems' algorithm, its operands read as
# 32-bit words: one float each, rounded to TF32; mma.sync m16n8k8), against implicit_gemm with the float32 stem
# tiles of sweep 22. Variant 2 is tensor_stem's default with a block count of 1 in its launch bounds
# (LB1_TEMPLATES: the templates with __launch_bounds__(kThreads, 1) in conv2d_nhwc_tensor_stem.cu.mustache):
# without it ptxas keeps some stems to 72 registers and spills 8 bytes (ptxas -v, sm_90); with it, 127 and none.
import os

DTYPE = "float32"
LAYOUT = "NHWC"
MATH = "tf32"
TEMPLATES = {2: os.environ["LB1_TEMPLATES"]}


def ts(co, rows, cols, wp, wc):
    return f"algorithm: tensor_stem, block_outputs: [{co}, {rows}, {cols}], warp_outputs: [{wp}, {wc}]"


IG = "algorithm: implicit_gemm"
R = [  # (name, n, c, c_out, h, k, stride, act, variants, padding); variant None is the default rule
    ("stem 7x7 s2 3-64 b8", 8, 3, 64, 224, 7, 2, "relu",
     [None, IG, None, ts(64, 2, 112, 32, 32), ts(64, 2, 112, 64, 32), ts(32, 4, 112, 64, 32), ts(64, 4, 112, 32, 64)], 3),
    ("stem 4x4 s4 3-96 b8", 8, 3, 96, 224, 4, 4, "bias",
     [None, IG, None, ts(96, 2, 56, 32, 32), ts(96, 4, 56, 64, 32), ts(32, 8, 56, 32, 32)], 0),
    ("stem 3x3 s2 3-32 b8", 8, 3, 32, 224, 3, 2, "silu",
     [None, IG, None, ts(32, 2, 112, 32, 32), ts(32, 8, 112, 64, 32), ts(32, 4, 112, 64, 32)], 1),
    ("stem 7x7 s2 3-64 b1", 1, 3, 64, 224, 7, 2, "relu",
     [None, IG, None, ts(64, 2, 112, 32, 32), ts(64, 2, 112, 64, 32), ts(32, 4, 112, 64, 32)], 3),
    ("stem 3x3 s2 3-32 b1", 1, 3, 32, 224, 3, 2, "silu",
     [None, IG, None, ts(32, 2, 112, 32, 32), ts(32, 8, 112, 64, 32)], 1),
]
