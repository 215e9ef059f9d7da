# Sweep 3: output-channel tile widths that waste fewer columns (implicit_gemm_sm90, float16, batch 64, 1x1)
SG = "algorithm: implicit_gemm_sm90"
R = [  # (name, n, c, c_out, h, k, stride, act, variants); variant None is the default rule
    ("960-160 7", 64, 960, 160, 7, 1, 1, "none", [
        None, f"{SG}, cta_tile: [64, 96, 64], warpgroups: 1", f"{SG}, cta_tile: [64, 80, 64], warpgroups: 1"]),
    ("672-192 7", 64, 672, 192, 7, 1, 1, "none", [
        None, f"{SG}, cta_tile: [64, 96, 64], warpgroups: 1", f"{SG}, cta_tile: [64, 192, 64], warpgroups: 1"]),
    ("576-160 7", 64, 576, 160, 7, 1, 1, "none", [
        None, f"{SG}, cta_tile: [64, 96, 64], warpgroups: 1", f"{SG}, cta_tile: [64, 80, 64], warpgroups: 1"]),
    ("384-96 14", 64, 384, 96, 14, 1, 1, "none", [
        None, f"{SG}, cta_tile: [128, 96, 64], warpgroups: 1"]),
    ("480-112 14", 64, 480, 112, 14, 1, 1, "none", [
        None, f"{SG}, cta_tile: [128, 112, 64], warpgroups: 1", f"{SG}, cta_tile: [128, 64, 64], warpgroups: 1"]),
    ("240-80 14", 64, 240, 80, 14, 1, 1, "none", [
        None, f"{SG}, cta_tile: [128, 80, 64], warpgroups: 1", f"{SG}, cta_tile: [128, 96, 64], warpgroups: 1"]),
    ("1152-320 7", 64, 1152, 320, 7, 1, 1, "none", [
        None, f"{SG}, cta_tile: [64, 160, 64], warpgroups: 1", f"{SG}, cta_tile: [64, 128, 64], warpgroups: 1"]),
]
