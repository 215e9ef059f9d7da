# Sweep 12: pingpong's epilogue in registers (no shared-memory tile of floats; the per-channel parameters prefetched
# to L1 before the turn), run from a checkout with that template against the same rows from one with the
# shared-memory epilogue (run.sh in each; without the tile of floats, a ring of 7 or 8 stages fits). The register
# epilogue was not kept: docs/performance.md, "Pingpong's epilogue and ring", describes it and its figures.
# The layers in turns by default, and one that is not.
SG = "algorithm: implicit_gemm_sm90"
R = [  # (name, n, c, c_out, h, k, stride, act, variants); variant None is the default rule
    ("b16 384-1536 14 1x1", 16, 384, 1536, 14, 1, 1, "none", [None, f"{SG}, pingpong: true, cta_tile: [64, 128, 64], stages: 8"]),
    ("r50 b32 256-1024 14 1x1", 32, 256, 1024, 14, 1, 1, "none", [None, f"{SG}, pingpong: true, cta_tile: [128, 128, 64], stages: 7"]),
    ("mnv2 b64 96-576 14 1x1", 64, 96, 576, 14, 1, 1, "relu6", [None, f"{SG}, pingpong: true, cta_tile: [128, 128, 64], stages: 7"]),
    ("resnet b32 64 56 3x3", 32, 64, 64, 56, 3, 1, "relu", [None, f"{SG}, pingpong: true, cta_tile: [128, 64, 64], stages: 8"]),
    ("resnet b32 128 28 3x3", 32, 128, 128, 28, 3, 1, "relu", [None, f"{SG}, pingpong: true, cta_tile: [64, 128, 64], stages: 8"]),
    ("resnet b32 64-128 56 s2", 32, 64, 128, 56, 3, 2, "relu", [None, f"{SG}, pingpong: true, cta_tile: [64, 128, 64], stages: 8"]),
    ("mnv2 b64 320-1280 7 1x1", 64, 320, 1280, 7, 1, 1, "relu6", [None, f"{SG}, pingpong: true"]),
]
