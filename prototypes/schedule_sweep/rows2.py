# Sweep 2: stage counts against blocks per SM on implicit_gemm_sm90, and the thin-output 1x1 rows
SG = "algorithm: implicit_gemm_sm90"
IG = "algorithm: implicit_gemm"
R = [  # (name, n, c, c_out, h, k, stride, act, variants); variant None is the default rule
    ("r50 b32 64 56 3x3 relu", 32, 64, 64, 56, 3, 1, "relu", [
        None, f"{SG}, cta_tile: [128, 64, 64], warpgroups: 1, stages: 2", f"{SG}, cta_tile: [128, 64, 64], warpgroups: 1, stages: 3",
        f"{SG}, cta_tile: [128, 64, 64], warpgroups: 1, stages: 4", f"{SG}, cta_tile: [128, 64, 64], warpgroups: 1, stages: 5",
        f"{SG}, cta_tile: [256, 64, 64], warpgroups: 2, stages: 3"]),
    ("r34 b8 64 56 3x3 relu", 8, 64, 64, 56, 3, 1, "relu", [
        None, f"{SG}, cta_tile: [128, 64, 64], warpgroups: 1, stages: 3", f"{SG}, cta_tile: [128, 64, 64], warpgroups: 1, stages: 4",
        f"{SG}, cta_tile: [64, 64, 64], warpgroups: 1, stages: 4"]),
    ("r50 b32 128 28 3x3 relu", 32, 128, 128, 28, 3, 1, "relu", [
        None, f"{SG}, cta_tile: [128, 128, 64], warpgroups: 1, stages: 3", f"{SG}, cta_tile: [128, 128, 64], warpgroups: 1, stages: 6"]),
    ("r50 b32 64-128 56 s2 relu", 32, 64, 128, 56, 3, 2, "relu", [
        None, f"{SG}, cta_tile: [128, 128, 64], warpgroups: 1, stages: 3", f"{SG}, cta_tile: [128, 64, 64], warpgroups: 1, stages: 4"]),
    ("r50 b32 256 14 3x3 relu", 32, 256, 256, 14, 3, 1, "relu", [
        None, f"{SG}, cta_tile: [128, 128, 64], warpgroups: 1, stages: 3", f"{SG}, cta_tile: [128, 64, 64], warpgroups: 1, stages: 4"]),
    ("144-32 28", 64, 144, 32, 28, 1, 1, "none", [
        None, f"{SG}, cta_tile: [128, 32, 64], warpgroups: 1", f"{SG}, cta_tile: [128, 32, 64], warpgroups: 1, stages: 2",
        f"{SG}, cta_tile: [256, 32, 64], warpgroups: 2", f"{SG}, cta_tile: [64, 32, 64], warpgroups: 1"]),
    ("96-24 56", 64, 96, 24, 56, 1, 1, "none", [
        None, f"{SG}, cta_tile: [128, 32, 32], warpgroups: 1", f"{SG}, cta_tile: [128, 32, 64], warpgroups: 1",
        f"{SG}, cta_tile: [256, 32, 32], warpgroups: 2"]),
    ("960-160 7", 64, 960, 160, 7, 1, 1, "none", [
        None, f"{SG}, cta_tile: [64, 80, 64], warpgroups: 1", f"{SG}, cta_tile: [64, 80, 64], warpgroups: 1, stages: 4",
        f"{SG}, cta_tile: [64, 80, 64], warpgroups: 1, stages: 8", f"{SG}, cta_tile: [64, 96, 64], warpgroups: 1",
        f"{SG}, cta_tile: [64, 48, 64], warpgroups: 1"]),
]
