# Sweep 4: Winograd F(4x4, 3x3) block tiles against the default F(2x2, 3x3) on 14 of the 15 stride-1 3x3 float32
# rows of bench/dense.csv (all but seed 32 -> 32; NCHW, TF32 off). output_tile is not a knob of the product: apply
# winograd_f4.patch (made on eb35444) to the checkout run.sh installs.
DTYPE = "float32"
W4 = "algorithm: winograd, output_tile: 4"
F4 = [
    f"{W4}, block: [32, 16], thread_groups: [2, 2], k_step: 8",  # 288 threads, 64 sums each
    f"{W4}, block: [16, 32], thread_groups: [2, 2], k_step: 8",  # 288 threads
    f"{W4}, block: [16, 16], thread_groups: [2, 2], k_step: 8",  # 144 threads, two blocks an SM
    f"{W4}, block: [32, 16], thread_groups: [4, 2], k_step: 8",  # 144 threads, 128 sums each
    f"{W4}, block: [16, 32], thread_groups: [2, 4], k_step: 4",  # 144 threads, 128 sums each
    f"{W4}, block: [32, 16], thread_groups: [2, 2], k_step: 4",
]
R = [  # (name, n, c, c_out, h, k, stride, act, variants); variant None is the default rule
    ("seed 16 64", 1, 16, 16, 64, 3, 1, "none", [None] + F4),
    ("seed 64 64", 1, 64, 64, 64, 3, 1, "none", [None] + F4),
    ("seed 128 64", 1, 128, 128, 64, 3, 1, "none", [None] + F4),
    ("seed 256 64", 1, 256, 256, 64, 3, 1, "none", [None] + F4),
    ("deep 384 13", 1, 384, 384, 13, 3, 1, "relu", [None] + F4),
    ("deep 1024 7", 1, 1024, 1024, 7, 3, 1, "relu", [None] + F4),
    ("r34 64 56 b8", 8, 64, 64, 56, 3, 1, "relu", [None] + F4),
    ("r34 128 28 b8", 8, 128, 128, 28, 3, 1, "relu", [None] + F4),
    ("r34 256 14 b8", 8, 256, 256, 14, 3, 1, "relu", [None] + F4),
    ("r34 512 7 b8", 8, 512, 512, 7, 3, 1, "relu", [None] + F4),
    ("resnet 64 56 b32", 32, 64, 64, 56, 3, 1, "relu", [None] + F4),
    ("resnet 128 28 b32", 32, 128, 128, 28, 3, 1, "relu", [None] + F4),
    ("resnet 256 14 b32", 32, 256, 256, 14, 3, 1, "relu", [None] + F4),
    ("resnet 512 7 b32", 32, 512, 512, 7, 3, 1, "relu", [None] + F4),
]
