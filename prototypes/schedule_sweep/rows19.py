# Sweep 19: the layers of 24 output channels that pointwise's rule for narrow outputs (24 outputs, inputs up
# to 144 channels) newly takes in the shipped specs without a measurement of their own: MobileNetV3-Large's
# 64 -> 24 and 72 -> 24 on 56^2 and its 72 -> 24 on a 1 x 1 plane, against implicit_gemm forced (the default
# before the rule), and 96 -> 24 again. Run on an H200 (results/rows19_*.txt).
IG = "algorithm: implicit_gemm"
R = [  # (name, n, c, c_out, h, k, stride, act, variants); variant None is the default rule
    ("mnv3 b64 64-24 56 1x1", 64, 64, 24, 56, 1, 1, "none", [None, IG]),
    ("mnv3 b64 72-24 56 1x1", 64, 72, 24, 56, 1, 1, "none", [None, IG]),
    ("mnv3 b1 72-24 56 1x1", 1, 72, 24, 56, 1, 1, "none", [None, IG]),
    ("mnv3 b64 72-24 1 1x1", 64, 72, 24, 1, 1, 1, "relu", [None, IG]),
    ("mnv3 b1 72-24 1 1x1", 1, 72, 24, 1, 1, 1, "relu", [None, IG]),
    ("mnv2 b64 96-24 56 1x1", 64, 96, 24, 56, 1, 1, "none", [None, IG]),
]
