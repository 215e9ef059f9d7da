# Sweep 10: pingpong's rows chosen by the spread of the tiles over the blocks (the default, variant 0) against
# the default before that rule (variant 1, spelled out), on the layers where the rule changes the default.
SG = "algorithm: implicit_gemm_sm90"
R = [  # (name, n, c, c_out, h, k, stride, act, variants); variant None is the default rule
    ("resnet b32 128 28 3x3", 32, 128, 128, 28, 3, 1, "relu",
     [None, f"{SG}, cta_tile: [256, 128, 64], warpgroups: 2, stages: 4", f"{SG}, pingpong: true, cta_tile: [128, 128, 64]"]),
    ("resnet b32 64-128 56 s2", 32, 64, 128, 56, 3, 2, "relu",
     [None, f"{SG}, cta_tile: [256, 128, 64], warpgroups: 2, stages: 4", f"{SG}, pingpong: true, cta_tile: [128, 128, 64]"]),
    ("resnet b8 64 56 3x3", 8, 64, 64, 56, 3, 1, "relu",
     [None, f"{SG}, cta_tile: [128, 64, 64], warpgroups: 1, stages: 4", f"{SG}, pingpong: true, cta_tile: [128, 64, 64]"]),
    ("b16 384-1536 14 1x1", 16, 384, 1536, 14, 1, 1, "none",
     [None, f"{SG}, pingpong: true, cta_tile: [128, 128, 64], stages: 4", f"{SG}, pingpong: false"]),
    ("resnet b16 64 56 3x3", 16, 64, 64, 56, 3, 1, "relu",
     [None, f"{SG}, pingpong: true, cta_tile: [64, 64, 64]", f"{SG}, pingpong: false"]),
    ("mnv2 b32 96-576 14 1x1", 32, 96, 576, 14, 1, 1, "relu6",
     [None, f"{SG}, pingpong: true, cta_tile: [64, 128, 64]", f"{SG}, pingpong: false"]),
]
