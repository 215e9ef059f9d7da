# Sweep 5: the tile order of implicit_gemm_sm90 (raster, swizzle) on its default tiles, on float16 layers whose
# grids have several output-channel tiles and more blocks than SMs, and one control whose grid has one column of
# tiles (every order is the grid's own there: its spread is the timing's).
SG = "algorithm: implicit_gemm_sm90"
ORDERS = [None] + [f"{SG}, raster: {r}, swizzle: {s}"
                   for r, s in (("pixels", 2), ("pixels", 4), ("channels", 1), ("channels", 2), ("channels", 8))]
R = [  # (name, n, c, c_out, h, k, stride, act, variants); variant None is the default rule
    ("r50 b32 256-1024 14 1x1", 32, 256, 1024, 14, 1, 1, "none", ORDERS),
    ("mnv2 b64 96-576 14 1x1", 64, 96, 576, 14, 1, 1, "relu6", ORDERS),
    ("mnv2 b64 320-1280 7 1x1", 64, 320, 1280, 7, 1, 1, "relu6", ORDERS),
    ("b16 384-1536 14 1x1", 16, 384, 1536, 14, 1, 1, "none", ORDERS),
    ("r50 b32 256 14 3x3", 32, 256, 256, 14, 3, 1, "relu", ORDERS),
    ("control: r50 b32 128 28 3x3", 32, 128, 128, 28, 3, 1, "relu", ORDERS),
]
