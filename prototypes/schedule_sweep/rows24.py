# Sweep 24: the float32 stems' first tensor_stem rule (warp tiles of 32 pixels, 64 channels where the block's are
# a multiple of 64, up to 16 warps; variant 0) against fewer rows a block (variant 1 on the 7x7 and 3x3 rows is
# the rule kept, 12 warps at most): 14 warps get 128 registers a thread (ptxas counts warps
# in groups of 4), where ResNet's 7x7 stem without an epilogue spilled 48 bytes (ptxas -v, sm_90); 11 or fewer
# get 168. Batches 1, 8 and 64; `plain` rows run without an epilogue.
DTYPE = "float32"
LAYOUT = "NHWC"
MATH = "tf32"


def ts(co, rows, cols, wp, wc):
    return f"algorithm: tensor_stem, block_outputs: [{co}, {rows}, {cols}], warp_outputs: [{wp}, {wc}]"


R = [  # (name, n, c, c_out, h, k, stride, act, variants, padding); variant None is the default rule
    ("stem 7x7 s2 3-64 b8", 8, 3, 64, 224, 7, 2, "relu",
     [None, ts(64, 3, 112, 32, 64), ts(64, 2, 112, 32, 64)], 3),
    ("stem 7x7 s2 3-64 b8 plain", 8, 3, 64, 224, 7, 2, "plain",
     [None, ts(64, 3, 112, 32, 64), ts(64, 2, 112, 32, 64)], 3),
    ("stem 3x3 s2 3-32 b8", 8, 3, 32, 224, 3, 2, "silu",
     [None, ts(32, 3, 112, 32, 32), ts(32, 2, 112, 32, 32)], 1),
    ("stem 7x7 s2 3-64 b1", 1, 3, 64, 224, 7, 2, "relu",
     [None, ts(64, 3, 112, 32, 64), ts(64, 2, 112, 32, 64), ts(64, 2, 112, 32, 32), ts(64, 1, 112, 32, 64)], 3),
    ("stem 3x3 s2 3-32 b1", 1, 3, 32, 224, 3, 2, "silu",
     [None, ts(32, 3, 112, 32, 32), ts(32, 2, 112, 32, 32), ts(32, 1, 112, 32, 32)], 1),
    ("stem 7x7 s2 3-64 b64", 64, 3, 64, 224, 7, 2, "relu",
     [None, ts(64, 3, 112, 32, 64), ts(64, 2, 112, 32, 64)], 3),
    ("stem 4x4 s4 3-96 b64", 64, 3, 96, 224, 4, 4, "bias", [None], 0),
    ("stem 3x3 s2 3-32 b64", 64, 3, 32, 224, 3, 2, "silu",
     [None, ts(32, 3, 112, 32, 32), ts(32, 2, 112, 32, 32)], 1),
]
