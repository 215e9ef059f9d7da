# Sweep 16: pingpong's epilogue in turns, the two warpgroups sharing one tile of floats, so that the ring takes
# the shared memory of the second: 128 x 128 tiles get 6 stages (4 before), 64 x 192 get 5 (3 before), and
# 64 x 128 could take 8. Run in a checkout with that change and in one without it with BEFORE=1 (which leaves
# out the 8-stage variant: it does not fit beside two tiles of floats). It is now the knob epilogue_turns, off
# by default (docs/performance.md, "Pingpong's epilogue, ring and tiles", has the figures).
import os

SG = "algorithm: implicit_gemm_sm90, pingpong: true"
BEFORE = os.environ.get("BEFORE") == "1"
R = [  # (name, n, c, c_out, h, k, stride, act, variants); variant None is the default rule
    ("b16 384-1536 14 1x1", 16, 384, 1536, 14, 1, 1, "none",
     [None, f"{SG}, cta_tile: [64, 192, 64]"] + ([] if BEFORE else [f"{SG}, cta_tile: [64, 128, 64], stages: 8"])),
    ("r50 b32 256-1024 14 1x1", 32, 256, 1024, 14, 1, 1, "none", [None]),
    ("mnv2 b64 96-576 14 1x1", 64, 96, 576, 14, 1, 1, "relu6", [None, f"{SG}, cta_tile: [64, 192, 64]"]),
    ("resnet b32 64 56 3x3", 32, 64, 64, 56, 3, 1, "relu", [None]),
    ("resnet b32 128 28 3x3", 32, 128, 128, 28, 3, 1, "relu", [None]),
    ("resnet b32 64-128 56 s2", 32, 64, 128, 56, 3, 2, "relu", [None]),
    ("resnet b8 64 56 3x3", 8, 64, 64, 56, 3, 1, "relu", [None]),
]
