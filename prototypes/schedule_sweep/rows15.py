# Sweep 15: pingpong tiles of 64, 96 and 192 output channels on the layers in turns, against the default (64
# or 128 rows by 128 channels). A persistent block's time is about its largest count of tiles times a tile's
# time; if a tile's time grows with its area, on 384 -> 1536 at batch 16 the 392 tiles of 64 x 192 (3 a block
# at most, 3 x 12,288 pixel-channels) take 10% less than the 588 of 64 x 128 (5 a block, 5 x 8,192), and on
# 96 -> 576 at batch 64 the 1,176 tiles of 64 x 96 (9 x 6,144) 16% less than the 490 of 128 x 128 (4 x 16,384).
# (128 x 192 would give a thread 192 accumulators: the plan refuses it.)
SG = "algorithm: implicit_gemm_sm90, pingpong: true"
V = [None] + [f"{SG}, cta_tile: [{m}, {n}, 64]" for (m, n) in ((64, 96), (64, 192), (128, 96), (64, 64))]
R = [  # (name, n, c, c_out, h, k, stride, act, variants); variant None is the default rule
    ("b16 384-1536 14 1x1", 16, 384, 1536, 14, 1, 1, "none", V),
    ("r50 b32 256-1024 14 1x1", 32, 256, 1024, 14, 1, 1, "none", V),
    ("mnv2 b64 96-576 14 1x1", 64, 96, 576, 14, 1, 1, "relu6", V),
    ("resnet b32 128 28 3x3", 32, 128, 128, 28, 3, 1, "relu", V),
    ("resnet b32 256 14 3x3", 32, 256, 256, 14, 3, 1, "relu", V),
]
