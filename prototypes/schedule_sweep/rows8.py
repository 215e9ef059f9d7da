# Sweep 8: pingpong's tile and stages (implicit_gemm_sm90), on the layers where the default rule takes it and two
# beside them; the default before pingpong (pingpong: false) in the same run.
SG = "algorithm: implicit_gemm_sm90, pingpong: true"
PF = "algorithm: implicit_gemm_sm90, pingpong: false"
WIDE = [None, PF, f"{SG}, cta_tile: [64, 128, 64]", f"{SG}, cta_tile: [64, 192, 64]", f"{SG}, cta_tile: [128, 64, 64]"]
R = [  # (name, n, c, c_out, h, k, stride, act, variants); variant None is the default rule
    ("b16 384-1536 14 1x1", 16, 384, 1536, 14, 1, 1, "none", WIDE),
    ("r50 b32 256-1024 14 1x1", 32, 256, 1024, 14, 1, 1, "none", WIDE),
    ("mnv2 b64 96-576 14 1x1", 64, 96, 576, 14, 1, 1, "relu6",
     [None, PF, f"{SG}, stages: 4", f"{SG}, cta_tile: [64, 128, 64]", f"{SG}, cta_tile: [64, 192, 64]"]),
    ("resnet b32 64 56 3x3", 32, 64, 64, 56, 3, 1, "relu",
     [None, PF, f"{SG}, cta_tile: [64, 64, 64]", f"{SG}, cta_tile: [128, 64, 64], stages: 4"]),
    ("mnv2 b64 320-1280 7 1x1", 64, 320, 1280, 7, 1, 1, "relu6",
     [None, SG, f"{SG}, cta_tile: [64, 128, 64]", f"{SG}, cta_tile: [64, 192, 64]"]),
    ("resnet b32 512 7 3x3", 32, 512, 512, 7, 3, 1, "relu", [None, SG, f"{SG}, cta_tile: [64, 128, 64]"]),
]
