# Sweep 6 (prepared, not run): tiles and stages of implicit_gemm_sm90 on the wide 1x1 layers where the default
# trails cuDNN (sweep 5's rows5_torch.txt; docs/benchmarks.md's mnv2_pw_b64 rows 96->576 and 960->160).
SG = "algorithm: implicit_gemm_sm90"
WIDE = [None,
        f"{SG}, cta_tile: [128, 128, 64], stages: 3",                  # two blocks an SM
        f"{SG}, cta_tile: [256, 128, 64], warpgroups: 2, stages: 3",
        f"{SG}, cta_tile: [256, 128, 64], warpgroups: 2, stages: 4",
        f"{SG}, cta_tile: [128, 256, 64], warpgroups: 2, stages: 3",
        f"{SG}, cta_tile: [128, 256, 64], warpgroups: 2, stages: 4",
        f"{SG}, cta_tile: [128, 192, 64], warpgroups: 2, stages: 4"]
R = [  # (name, n, c, c_out, h, k, stride, act, variants); variant None is the default rule
    ("b16 384-1536 14 1x1", 16, 384, 1536, 14, 1, 1, "none", WIDE),
    ("r50 b32 256-1024 14 1x1", 32, 256, 1024, 14, 1, 1, "none", WIDE),
    ("mnv2 b64 320-1280 7 1x1", 64, 320, 1280, 7, 1, 1, "relu6", WIDE),
    ("mnv2 b64 96-576 14 1x1", 64, 96, 576, 14, 1, 1, "relu6", [
        None, f"{SG}, cta_tile: [256, 128, 32], warpgroups: 2, stages: 3",
        f"{SG}, cta_tile: [128, 128, 32], stages: 3", f"{SG}, cta_tile: [128, 192, 32], warpgroups: 2, stages: 3",
        f"{SG}, cta_tile: [128, 192, 64], warpgroups: 2, stages: 2", f"{SG}, cta_tile: [128, 96, 32], stages: 3"]),
    ("mnv2 b64 960-160 7 1x1", 64, 960, 160, 7, 1, 1, "none", [
        None, f"{SG}, cta_tile: [64, 160, 64], stages: 6", f"{SG}, cta_tile: [64, 160, 64], stages: 6, split_k: 2",
        f"{SG}, cta_tile: [128, 160, 64], warpgroups: 2, stages: 4, split_k: 2",
        f"{SG}, cta_tile: [64, 80, 64], stages: 6", f"{SG}, cta_tile: [64, 96, 64], stages: 6, split_k: 2"]),
]
