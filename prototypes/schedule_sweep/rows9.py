# Sweep 9: pingpong handing the turn over once a tile's wgmmas are issued (variant 0, the templates of this
# checkout) against handing it over once they have completed (variant 1: $OLD_TEMPLATES, the templates before
# the change); the default before pingpong (pingpong: false) and 64-row pingpong tiles in the same run.
import os

TEMPLATES = {1: os.environ.get("OLD_TEMPLATES", "")}
SG = "algorithm: implicit_gemm_sm90, pingpong: true"
PF = "algorithm: implicit_gemm_sm90, pingpong: false"
ROWS64 = [None, None, PF, f"{SG}, cta_tile: [64, 128, 64]", f"{SG}, cta_tile: [64, 256, 64]"]
R = [  # (name, n, c, c_out, h, k, stride, act, variants); variant None is the default rule
    ("b16 384-1536 14 1x1", 16, 384, 1536, 14, 1, 1, "none", ROWS64),
    ("r50 b32 256-1024 14 1x1", 32, 256, 1024, 14, 1, 1, "none", ROWS64),
    ("mnv2 b64 96-576 14 1x1", 64, 96, 576, 14, 1, 1, "relu6", ROWS64),
    ("resnet b32 64 56 3x3", 32, 64, 64, 56, 3, 1, "relu", [None, None, PF, f"{SG}, cta_tile: [64, 64, 64]"]),
    ("r50 b32 1024-256 14 1x1", 32, 1024, 256, 14, 1, 1, "relu", ROWS64),
    ("resnet b32 128 28 3x3", 32, 128, 128, 28, 3, 1, "relu", [None, None, PF, f"{SG}, cta_tile: [64, 128, 64]"]),
    ("mnv2 b64 320-1280 7 1x1", 64, 320, 1280, 7, 1, 1, "relu6", [None, None, SG, f"{SG}, cta_tile: [64, 128, 64]"]),
    ("resnet b32 512 7 3x3", 32, 512, 512, 7, 3, 1, "relu", [None, None, SG, f"{SG}, cta_tile: [64, 128, 64]"]),
]
