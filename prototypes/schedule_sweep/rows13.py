# Sweep 13: pingpong's per-channel parameters prefetched to L1 before a warpgroup's turn (variant 0, this
# checkout) against the epilogue loading them from L2 (variant 1: $OLD_TEMPLATES, the templates before the
# change); the same default schedule in both, on the layers in turns by default.
import os

TEMPLATES = {1: os.environ.get("OLD_TEMPLATES", "")}
AB = [None, None]
R = [  # (name, n, c, c_out, h, k, stride, act, variants); variant None is the default rule
    ("b16 384-1536 14 1x1", 16, 384, 1536, 14, 1, 1, "none", AB),
    ("r50 b32 256-1024 14 1x1", 32, 256, 1024, 14, 1, 1, "none", AB),
    ("mnv2 b64 96-576 14 1x1", 64, 96, 576, 14, 1, 1, "relu6", AB),
    ("resnet b32 64 56 3x3", 32, 64, 64, 56, 3, 1, "relu", AB),
    ("resnet b32 128 28 3x3", 32, 128, 128, 28, 3, 1, "relu", AB),
    ("resnet b32 64-128 56 s2", 32, 64, 128, 56, 3, 2, "relu", AB),
    ("resnet b8 64 56 3x3", 8, 64, 64, 56, 3, 1, "relu", AB),
]
