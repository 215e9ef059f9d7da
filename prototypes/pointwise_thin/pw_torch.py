"""cuDNN's float16 channels_last 1x1 convolutions (PyTorch F.conv2d, plain and with
batch norm + activation as separate ops) on the prototype's shapes, same timing method."""
import torch
import torch.nn.functional as F

torch.backends.cudnn.benchmark = True
SHAPES = [("mnv2 16->96 112^2 b64", 64, 16, 96, 112, "relu6"), ("mnv2 24->144 56^2 b64", 64, 24, 144, 56, "relu6"),
          ("mnv2 32->192 28^2 b64", 64, 32, 192, 28, "relu6"), ("effnet 16->96 112^2 b64", 64, 16, 96, 112, "silu"),
          ("effnet 40->240 28^2 b64", 64, 40, 240, 28, "silu"), ("mnv2 16->96 112^2 b1", 1, 16, 96, 112, "relu6")]


def timed(fn):
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    with torch.cuda.graph(g):
        for _ in range(20):
            fn()
    hot = []
    for _ in range(9):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); g.replay(); b.record(); b.synchronize()
        hot.append(a.elapsed_time(b) * 1e3 / 20)
    flush = torch.empty(512 << 20, dtype=torch.uint8, device="cuda")
    cold = []
    for i in range(15):
        flush.fill_(i)
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); b.synchronize()
        cold.append(a.elapsed_time(b) * 1e3)
    return sorted(hot)[4], sorted(cold)[7]


for name, n, c, co, h, act in SHAPES:
    x = torch.randn(n, c, h, h, device="cuda", dtype=torch.half).to(memory_format=torch.channels_last)
    w = torch.randn(co, c, 1, 1, device="cuda", dtype=torch.half).to(memory_format=torch.channels_last)
    sc = torch.rand(co, device="cuda", dtype=torch.half).view(1, co, 1, 1)
    sh = torch.rand(co, device="cuda", dtype=torch.half).view(1, co, 1, 1)
    actf = (lambda y: F.relu6(y)) if act == "relu6" else (lambda y: F.silu(y))
    plain = timed(lambda: F.conv2d(x, w))
    fused = timed(lambda: actf(F.conv2d(x, w) * sc + sh))
    print(f"{name} {act}: cuDNN plain hot {plain[0]:.2f} cold {plain[1]:.2f} us; conv+scale/shift+act hot {fused[0]:.2f} cold {fused[1]:.2f} us")
