#!/usr/bin/env python3
# Which kernels PyTorch's plain conv runs (cuDNN, and the GEMM library it calls on 1x1 layers) on a few rows,
# float16 channels_last with cudnn.benchmark, and their average time a call, by the PyTorch profiler.
#   python3 prototypes/schedule_sweep/cudnn_kernels.py
import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

ROWS = [  # (name, n, c, c_out, h, filter)
    ("b16 384-1536 14", 16, 384, 1536, 14, 1),
    ("b32 256-1024 14", 32, 256, 1024, 14, 1),
    ("b64 96-576 14", 64, 96, 576, 14, 1),
    ("b32 64-64 56 3x3", 32, 64, 64, 56, 3),
]
CALLS = 10

torch.backends.cudnn.benchmark = True
for name, n, c, c_out, h, k in ROWS:
    x = torch.randn(n, c, h, h, device="cuda", dtype=torch.half).to(memory_format=torch.channels_last)
    w = torch.randn(c_out, c, k, k, device="cuda", dtype=torch.half).to(memory_format=torch.channels_last)
    for _ in range(5):  # cudnn.benchmark's search, then warm
        F.conv2d(x, w, padding=k // 2)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(CALLS):
            F.conv2d(x, w, padding=k // 2)
        torch.cuda.synchronize()
    for event in prof.key_averages():
        if event.device_time > 0:  # kernels and memsets, not the host's API calls
            print(f"{name}: {event.key}  x{event.count}  avg {event.device_time:.2f} us")
