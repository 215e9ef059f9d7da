# Sweep 18: pointwise on 1x1 layers with narrow outputs (24 to 64 channels) and deep inputs, against the
# default rule's algorithm (implicit_gemm or implicit_gemm_sm90): sweep 17 ran 96 -> 24 at batch 64 in 13.1 us
# hot as pointwise against 19.1 as implicit_gemm. "pointwise" alone is that algorithm's own default tile.
# Variant 4 of the first rows is the default built from the templates before the epilogue parameters were
# read after the first input copies (BASE_TEMPLATES: a folder of them); variants 1 to 3 there repeat the
# default, to show the spread of the timing. Run on an H200 (results/rows18_*.txt).
import os

PW = "algorithm: pointwise"
TEMPLATES = {4: os.environ["BASE_TEMPLATES"]}
AB = [None, None, None, None, None]
R = [  # (name, n, c, c_out, h, k, stride, act, variants); variant None is the default rule
    ("mnv2 b64 32-192 28 1x1", 64, 32, 192, 28, 1, 1, "relu6", AB),
    ("mnv2 b64 32-192 28 1x1 plain", 64, 32, 192, 28, 1, 1, "plain", AB),
    ("mnv2 b64 24-144 56 1x1", 64, 24, 144, 56, 1, 1, "relu6", AB),
    ("mnv2 b64 24-144 56 1x1 plain", 64, 24, 144, 56, 1, 1, "plain", AB),
    ("mnv2 b64 16-96 112 1x1", 64, 16, 96, 112, 1, 1, "relu6", AB),
    ("mnv2 b64 16-96 112 1x1 plain", 64, 16, 96, 112, 1, 1, "plain", AB),
    ("mnv2 b64 96-24 56 1x1", 64, 96, 24, 56, 1, 1, "none",
     [None, PW, f"{PW}, tiles_per_warp: 6", f"{PW}, tiles_per_warp: 12"]),
    ("mnv2 b64 144-24 56 1x1", 64, 144, 24, 56, 1, 1, "none",
     [None, PW, f"{PW}, tiles_per_warp: 6", f"{PW}, tiles_per_warp: 12"]),
    ("mnv2 b64 144-32 28 1x1", 64, 144, 32, 28, 1, 1, "none",
     [None, PW, f"{PW}, tiles_per_warp: 3", f"{PW}, tiles_per_warp: 4"]),
    ("mnv2 b64 192-32 28 1x1", 64, 192, 32, 28, 1, 1, "none",
     [None, PW, f"{PW}, tiles_per_warp: 3", f"{PW}, tiles_per_warp: 1"]),
    ("effb0 b64 144-40 28 1x1", 64, 144, 40, 28, 1, 1, "none", [None, PW, f"{PW}, tiles_per_warp: 3"]),
    ("effb0 b64 240-40 28 1x1", 64, 240, 40, 28, 1, 1, "none", [None, PW, f"{PW}, tiles_per_warp: 3"]),
    ("mnv2 b1 96-24 56 1x1", 1, 96, 24, 56, 1, 1, "none", [None, PW, f"{PW}, warps_per_block: 2"]),
    ("mnv2 b1 144-32 28 1x1", 1, 144, 32, 28, 1, 1, "none", [None, PW, f"{PW}, warps_per_block: 2"]),
    ("mnv2 b64 192-64 14 1x1", 64, 192, 64, 14, 1, 1, "none", [None, PW, f"{PW}, tiles_per_warp: 2"]),
    ("r50 b32 256-64 56 1x1", 32, 256, 64, 56, 1, 1, "relu", [None, PW, f"{PW}, tiles_per_warp: 8"]),
]
