# Sweep 1: deep 1x1 and small-plane 3x3 float16 NHWC rows of bench/dense.csv, schedule variants of each
SG = "algorithm: implicit_gemm_sm90"
IG = "algorithm: implicit_gemm"
PW = "algorithm: pointwise"
R = [  # (name, n, c, c_out, h, k, stride, act, variants)
    ("144-32 28", 64, 144, 32, 28, 1, 1, "none", [
        None, f"{IG}, cta_tile: [128, 32, 32], warp_tile: [32, 32], stages: 4",
        f"{IG}, cta_tile: [64, 32, 32], warp_tile: [32, 32], stages: 6",
        f"{SG}, cta_tile: [128, 32, 32], warpgroups: 1", f"{SG}, cta_tile: [64, 32, 32], warpgroups: 1",
        f"{SG}, cta_tile: [128, 32, 64], warpgroups: 1",
        f"{PW}, channel_tile: 32, warps_per_block: 4, tiles_per_warp: 1",
        f"{PW}, channel_tile: 32, warps_per_block: 4, tiles_per_warp: 2",
        f"{PW}, channel_tile: 32, warps_per_block: 8, tiles_per_warp: 1",
        f"{PW}, channel_tile: 32, warps_per_block: 4, tiles_per_warp: 4, stages: 3"]),
    ("960-160 7", 64, 960, 160, 7, 1, 1, "none", [
        None, f"{SG}, cta_tile: [64, 160, 64], warpgroups: 1",
        f"{SG}, cta_tile: [64, 160, 64], warpgroups: 1, split_k: 2",
        f"{SG}, cta_tile: [64, 80, 64], warpgroups: 1", f"{SG}, cta_tile: [64, 64, 64], warpgroups: 1",
        f"{SG}, cta_tile: [64, 32, 64], warpgroups: 1", f"{SG}, cta_tile: [64, 128, 64], warpgroups: 1, split_k: 2",
        f"{SG}, cta_tile: [64, 80, 64], warpgroups: 1, split_k: 2",
        f"{IG}, cta_tile: [64, 32, 64], warp_tile: [32, 32]",
        f"{IG}, cta_tile: [64, 64, 64], warp_tile: [32, 32], split_k: 2"]),
    ("96-576 14 relu6", 64, 96, 576, 14, 1, 1, "relu6", [
        None, f"{SG}, cta_tile: [256, 128, 32], warpgroups: 2",
        f"{SG}, cta_tile: [128, 96, 32], warpgroups: 1", f"{SG}, cta_tile: [128, 192, 32], warpgroups: 2",
        f"{SG}, cta_tile: [256, 96, 32], warpgroups: 2", f"{SG}, cta_tile: [128, 64, 32], warpgroups: 1",
        f"{SG}, cta_tile: [128, 144, 32], warpgroups: 2",
        f"{PW}, channel_tile: 144, warps_per_block: 4, tiles_per_warp: 1",
        f"{PW}, channel_tile: 96, warps_per_block: 4, tiles_per_warp: 1",
        f"{PW}, channel_tile: 96, warps_per_block: 4, tiles_per_warp: 2",
        f"{IG}, cta_tile: [128, 128, 32], warp_tile: [64, 64], stages: 5"]),
    ("320-1280 7 relu6", 64, 320, 1280, 7, 1, 1, "relu6", [
        None, f"{SG}, cta_tile: [128, 256, 64], warpgroups: 2", f"{SG}, cta_tile: [128, 128, 64], warpgroups: 1",
        f"{SG}, cta_tile: [128, 160, 64], warpgroups: 2", f"{SG}, cta_tile: [256, 128, 32], warpgroups: 2",
        f"{SG}, cta_tile: [128, 256, 32], warpgroups: 2", f"{SG}, cta_tile: [128, 192, 64], warpgroups: 2",
        f"{IG}, cta_tile: [128, 128, 32], warp_tile: [64, 64], stages: 5"]),
    ("r34 512 7 3x3 relu", 8, 512, 512, 7, 3, 1, "relu", [
        None, f"{SG}, cta_tile: [64, 64, 64], warpgroups: 1, split_k: 4",
        f"{SG}, cta_tile: [64, 128, 64], warpgroups: 1, split_k: 2",
        f"{SG}, cta_tile: [64, 64, 64], warpgroups: 1, split_k: 8",
        f"{SG}, cta_tile: [64, 32, 64], warpgroups: 1, split_k: 4"]),
    ("r34 256-512 14 s2 relu", 8, 256, 512, 14, 3, 2, "relu", [
        None, f"{SG}, cta_tile: [64, 64, 64], warpgroups: 1, split_k: 2",
        f"{SG}, cta_tile: [64, 64, 64], warpgroups: 1, split_k: 4",
        f"{SG}, cta_tile: [64, 128, 64], warpgroups: 1, split_k: 2",
        f"{SG}, cta_tile: [64, 32, 64], warpgroups: 1, split_k: 4"]),
    ("r50 64 56 3x3 relu", 32, 64, 64, 56, 3, 1, "relu", [
        None, f"{SG}, cta_tile: [256, 64, 64], warpgroups: 2, stages: 4", f"{SG}, cta_tile: [128, 64, 64], warpgroups: 1, stages: 4",
        f"{SG}, cta_tile: [128, 64, 32], warpgroups: 1", f"{SG}, cta_tile: [256, 64, 32], warpgroups: 2",
        f"{IG}, cta_tile: [256, 64, 32], warp_tile: [64, 64], stages: 5"]),
]
