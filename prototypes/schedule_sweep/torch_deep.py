"""cuDNN via PyTorch on the sweep's rows (the rows module's DTYPE and LAYOUT: float16 or bfloat16 channels_last, or float32 NCHW or NHWC with TF32
allowed where its MATH is tf32, else off; cudnn.benchmark): plain conv, and conv + scale/shift + activation as separate ops; hot from a CUDA graph of 20
(median of 9), cold after an L2 flush (median of 15)."""
import importlib
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
rows = importlib.import_module(os.environ.get("ROWS", "rows1"))  # rows1.py to rows29.py
R = rows.R
DTYPE = getattr(rows, "DTYPE", "float16")
HALF = DTYPE != "float32"
DT = {"float16": torch.half, "bfloat16": torch.bfloat16, "float32": torch.float32}[DTYPE]
MF = torch.channels_last if getattr(rows, "LAYOUT", "NHWC" if HALF else "NCHW") == "NHWC" else torch.contiguous_format
TF32 = getattr(rows, "MATH", None) == "tf32"  # PyTorch's default: TF32 allowed for cuDNN's convolutions
ACT = {"relu6": F.relu6, "silu": F.silu, "relu": F.relu, "none": lambda y: y}


def timed(fn):
    s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(20):
            fn()
    hot = []
    for _ in range(9):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); g.replay(); b.record(); b.synchronize(); hot.append(a.elapsed_time(b) * 1e3 / 20)
    flush = torch.empty(512 << 20, dtype=torch.uint8, device="cuda"); cold = []
    for i in range(15):
        flush.fill_(i)
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); b.synchronize(); cold.append(a.elapsed_time(b) * 1e3)
    return sorted(hot)[4], sorted(cold)[7]


torch.backends.cudnn.benchmark = True
torch.backends.cudnn.allow_tf32 = TF32
for row in R:
    name, n, c, co, h, k, st, act = row[:8]
    if act == "plain":  # the row without an epilogue: PyTorch's plain conv is its fused twin's
        continue
    x = torch.randn(n, c, h, h, device="cuda", dtype=DT).to(memory_format=MF)
    w = torch.randn(co, c, k, k, device="cuda", dtype=DT).to(memory_format=MF)
    sc = torch.rand(co, device="cuda", dtype=DT).view(1, co, 1, 1)
    sh = torch.rand(co, device="cuda", dtype=DT).view(1, co, 1, 1)
    pad = row[9] if len(row) > 9 else (k - 1) // 2
    plain = timed(lambda: F.conv2d(x, w, stride=st, padding=pad))
    if act == "bias":
        fused = timed(lambda: F.conv2d(x, w, sh.view(co), stride=st, padding=pad))
    else:
        f = ACT[act]
        fused = timed(lambda: f(F.conv2d(x, w, stride=st, padding=pad) * sc + sh))
    print(f"  {name:24s} plain hot {plain[0]:8.2f} cold {plain[1]:8.2f} | fused hot {fused[0]:8.2f} cold {fused[1]:8.2f} us")
