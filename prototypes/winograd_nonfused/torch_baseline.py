"""cuDNN through PyTorch on the rows of run.sh: float32 NCHW, TF32 off,
cudnn.benchmark on (its fastest algorithm), hot time as bench.cu takes it
(a CUDA graph of 20 calls, median of 9 replays)."""
import sys

import torch
import torch.nn.functional as F

torch.backends.cudnn.allow_tf32 = False
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.benchmark = True


def hot_us(fn):
    fn()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        fn()
        torch.cuda.synchronize()
        with torch.cuda.graph(g, stream=s):
            for _ in range(20):
                fn()
    times = []
    for _ in range(9):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        g.replay()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1000 / 20)
    return sorted(times)[4]


for row in sys.argv[1:]:
    n, c, k, h = (int(v) for v in row.split(","))
    x = torch.randn(n, c, h, h, device="cuda")
    w = torch.randn(k, c, 3, 3, device="cuda")
    print(f"n {n} c {c} k {k} {h}x{h}: cuDNN (PyTorch F.conv2d, TF32 off) {hot_us(lambda: F.conv2d(x, w, padding=1)):.2f} us")
