# Sweep 17: tiles a warp of pointwise, and the thin 1x1 layers and deep batch-1 1x1 layers that trail
# PyTorch's plain conv (docs/benchmarks.md, float16 NHWC). pointwise's default rounds the tiles a warp
# to a power of two: on 16 -> 96, 24 -> 144 and 32 -> 192 at batch 64 that makes 392 blocks of 4 warps,
# about 12 warps an SM where the rule aims at 16. Rows marked "plain" are the same layer without an
# epilogue, to show what the fused epilogue costs at each schedule. Run on an H200 (results/rows17_*.txt);
# its plain rows answered with a status, since main.cu then passed them scale and shift (it no longer does).
PW = "algorithm: pointwise"
IG = "algorithm: implicit_gemm"
SG = "algorithm: implicit_gemm_sm90"
R = [  # (name, n, c, c_out, h, k, stride, act, variants); variant None is the default rule
    ("mnv2 b64 32-192 28 1x1", 64, 32, 192, 28, 1, 1, "relu6",
     [None, f"{PW}, tiles_per_warp: 3", f"{PW}, tiles_per_warp: 2", f"{PW}, tiles_per_warp: 1",
      f"{PW}, tiles_per_warp: 6", f"{PW}, tiles_per_warp: 3, stages: 3", f"{PW}, warps_per_block: 8, tiles_per_warp: 2"]),
    ("mnv2 b64 32-192 28 1x1 plain", 64, 32, 192, 28, 1, 1, "plain",
     [None, f"{PW}, tiles_per_warp: 3", f"{PW}, tiles_per_warp: 2", f"{PW}, tiles_per_warp: 1"]),
    ("mnv2 b64 16-96 112 1x1", 64, 16, 96, 112, 1, 1, "relu6",
     [None, f"{PW}, tiles_per_warp: 24", f"{PW}, tiles_per_warp: 20", f"{PW}, tiles_per_warp: 16",
      f"{PW}, tiles_per_warp: 12"]),
    ("mnv2 b64 16-96 112 1x1 plain", 64, 16, 96, 112, 1, 1, "plain",
     [None, f"{PW}, tiles_per_warp: 24", f"{PW}, tiles_per_warp: 20"]),
    ("mnv2 b64 24-144 56 1x1", 64, 24, 144, 56, 1, 1, "relu6",
     [None, f"{PW}, tiles_per_warp: 6", f"{PW}, tiles_per_warp: 4", f"{PW}, tiles_per_warp: 16",
      f"{PW}, tiles_per_warp: 8, stages: 3"]),
    ("mnv2 b64 24-144 56 1x1 plain", 64, 24, 144, 56, 1, 1, "plain", [None, f"{PW}, tiles_per_warp: 6"]),
    ("mnv2 b64 144-32 28 1x1", 64, 144, 32, 28, 1, 1, "none",
     [None, f"{PW}, channel_tile: 32, tiles_per_warp: 1", f"{PW}, channel_tile: 32, tiles_per_warp: 2",
      f"{PW}, channel_tile: 32, tiles_per_warp: 3", f"{PW}, channel_tile: 32, tiles_per_warp: 4",
      f"{PW}, channel_tile: 32, tiles_per_warp: 2, stages: 3", f"{IG}, cta_tile: [64, 32, 32], warp_tile: [32, 32], stages: 6",
      f"{IG}, cta_tile: [128, 32, 64], warp_tile: [32, 32], stages: 3"]),
    ("mnv2 b64 96-24 56 1x1", 64, 96, 24, 56, 1, 1, "none",
     [None, f"{PW}, channel_tile: 24, tiles_per_warp: 4", f"{PW}, channel_tile: 24, tiles_per_warp: 8",
      f"{PW}, channel_tile: 24, tiles_per_warp: 6", f"{PW}, channel_tile: 24, tiles_per_warp: 4, stages: 3"]),
    ("deep b1 1024-256 14 1x1", 1, 1024, 256, 14, 1, 1, "relu",
     [None, f"{SG}, cta_tile: [64, 64, 64], split_k: 8", f"{SG}, cta_tile: [64, 32, 64], split_k: 4",
      f"{SG}, cta_tile: [64, 32, 64], split_k: 8", f"{SG}, cta_tile: [128, 64, 64], split_k: 8",
      f"{IG}, cta_tile: [64, 64, 64], warp_tile: [32, 32], stages: 4, split_k: 8"]),
    ("deep b1 2048-512 7 1x1", 1, 2048, 512, 7, 1, 1, "relu",
     [None, f"{SG}, cta_tile: [64, 64, 64], split_k: 8", f"{SG}, cta_tile: [64, 32, 64], split_k: 4",
      f"{SG}, cta_tile: [64, 32, 64], split_k: 8", f"{SG}, cta_tile: [64, 128, 64], split_k: 8",
      f"{IG}, cta_tile: [64, 64, 64], warp_tile: [32, 32], stages: 4, split_k: 8"]),
]
