# Sweep 14: how the layers in turns answer to the ring's stages (the default has as many as fit beside
# the two warpgroups' rows of outputs as floats, at most 6): fewer stages than the default, same tile, and
# on the 128 x 64 tile (24 KiB a stage), 7, which fits there.
SG = "algorithm: implicit_gemm_sm90, pingpong: true"
R = [  # (name, n, c, c_out, h, k, stride, act, variants); variant None is the default rule
    ("b16 384-1536 14 1x1", 16, 384, 1536, 14, 1, 1, "none",
     [None] + [f"{SG}, cta_tile: [64, 128, 64], stages: {s}" for s in (5, 4, 3, 2)]),
    ("r50 b32 256-1024 14 1x1", 32, 256, 1024, 14, 1, 1, "none",
     [None] + [f"{SG}, cta_tile: [128, 128, 64], stages: {s}" for s in (3, 2)]),
    ("resnet b32 64 56 3x3", 32, 64, 64, 56, 3, 1, "relu",
     [None] + [f"{SG}, cta_tile: [128, 64, 64], stages: {s}" for s in (7, 5, 4, 3, 2)]),
    ("resnet b32 128 28 3x3", 32, 128, 128, 28, 3, 1, "relu",
     [None] + [f"{SG}, cta_tile: [64, 128, 64], stages: {s}" for s in (5, 4, 3, 2)]),
]
