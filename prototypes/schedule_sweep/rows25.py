# Sweep 25: `pointwise` in float32 NHWC with math tf32 (mma.sync m16n8k8, operands rounded to TF32 with
# cvt.rna: the input's fragments as they are read, the filter once in shared memory), against
# implicit_gemm and implicit_gemm_sm90 on MobileNetV2's 1x1 rows at batch 64, four of which trailed
# PyTorch's TF32 plain conv in the benchmark at 6246334 (16 -> 96 1.27x, 96 -> 24 1.11x, 24 -> 144 1.43x,
# 32 -> 192 1.03x). Variant 0 is the default rule, which now takes pointwise on these rows as it does in
# half precision (at most 40 input channels, or at most 24 output channels from at most 144); ptxas -v on
# sm_90: 166, 252, 166 and 138 registers, no local memory. `plain` rows run without an epilogue.
DTYPE = "float32"
LAYOUT = "NHWC"
MATH = "tf32"


def pw(ct, tpw, warps=4, stages=2):
    return (f"algorithm: pointwise, channel_tile: {ct}, tiles_per_warp: {tpw}, warps_per_block: {warps}, "
            f"stages: {stages}")


IG = "algorithm: implicit_gemm"
SM90 = "algorithm: implicit_gemm_sm90"
R = [  # (name, n, c, c_out, h, k, stride, act, variants); variant None is the default rule
    ("mnv2 b64 16-96 112 1x1", 64, 16, 96, 112, 1, 1, "relu6",
     [None, IG, pw(96, 16), pw(96, 64), pw(48, 32), pw(96, 32, stages=3), pw(96, 16, warps=8)]),
    ("mnv2 b64 16-96 112 1x1 plain", 64, 16, 96, 112, 1, 1, "plain", [None, IG]),
    ("mnv2 b64 24-144 56 1x1", 64, 24, 144, 56, 1, 1, "relu6",
     [None, IG, pw(72, 8), pw(144, 4), pw(144, 16), pw(72, 4), pw(48, 8)]),
    ("mnv2 b64 24-144 56 1x1 plain", 64, 24, 144, 56, 1, 1, "plain", [None, IG]),
    ("mnv2 b64 32-192 28 1x1", 64, 32, 192, 28, 1, 1, "relu6",
     [None, SM90, IG, pw(96, 2), pw(96, 8), pw(64, 4), pw(192, 4)]),
    ("mnv2 b64 32-192 28 1x1 plain", 64, 32, 192, 28, 1, 1, "plain", [None, SM90]),
    ("mnv2 b64 96-24 56 1x1", 64, 96, 24, 56, 1, 1, "none", [None, IG, pw(24, 4), pw(24, 16), pw(24, 8, stages=3)]),
    ("mnv2 b64 96-24 56 1x1 plain", 64, 96, 24, 56, 1, 1, "plain", [None, IG]),
    ("mnv2 b64 144-32 28 1x1", 64, 144, 32, 28, 1, 1, "none", [None, pw(32, 2), pw(32, 3), pw(32, 4)]),
    ("mnv2 b1 96-24 56 1x1", 1, 96, 24, 56, 1, 1, "none", [None, IG]),
    ("mnv2 b1 16-96 112 1x1", 1, 16, 96, 112, 1, 1, "relu6", [None, IG]),
]
