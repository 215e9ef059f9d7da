# Sweep 7: persistent blocks whose two warpgroups take turns at the tiles (implicit_gemm_sm90's pingpong) against
# the default rule, on the layers where the default trails cuDNN most: wide 1x1 layers of few K steps (the
# epilogue and the pipeline's fill are a large share of a block's time) and ResNet's 3x3 layers at batch 32.
SG = "algorithm: implicit_gemm_sm90, pingpong: true"
PP = [None, SG, f"{SG}, cta_tile: [128, 128, 64]", f"{SG}, cta_tile: [64, 256, 64]", f"{SG}, cta_tile: [64, 128, 64]",
      f"{SG}, cta_tile: [128, 64, 64]"]
R = [  # (name, n, c, c_out, h, k, stride, act, variants); variant None is the default rule
    ("b16 384-1536 14 1x1", 16, 384, 1536, 14, 1, 1, "none", PP),
    ("r50 b32 256-1024 14 1x1", 32, 256, 1024, 14, 1, 1, "none", PP),
    ("mnv2 b64 320-1280 7 1x1", 64, 320, 1280, 7, 1, 1, "relu6", PP),
    ("mnv2 b64 96-576 14 1x1", 64, 96, 576, 14, 1, 1, "relu6", PP),
    ("mnv2 b64 960-160 7 1x1", 64, 960, 160, 7, 1, 1, "none", PP),
    ("resnet b32 64 56 3x3", 32, 64, 64, 56, 3, 1, "relu", PP),
    ("resnet b32 256 14 3x3", 32, 256, 256, 14, 3, 1, "relu", PP),
    ("resnet b32 512 7 3x3", 32, 512, 512, 7, 3, 1, "relu", PP),
    ("resnet b32 64-128 56 s2", 32, 64, 128, 56, 3, 2, "relu", PP),
]
