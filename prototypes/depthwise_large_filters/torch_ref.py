# PyTorch hot plain conv for the dwlarge rows: 100 launches in one CUDA graph, median of 5 replays / 100.
import torch, torch.nn.functional as F, sys
sys.path.insert(0, __file__.rsplit('/', 1)[0])
import gen
torch.backends.cudnn.allow_tf32 = False
for (name, N, C, H, W, K, S, M, EPI, ACT) in gen.ROWS:
    x = torch.randn(N, C, H, W, device='cuda'); w = torch.randn(C * M, 1, K, K, device='cuda')
    f = lambda: F.conv2d(x, w, stride=S, padding=K // 2, groups=C)
    for _ in range(3): f()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(100): f()
    g.replay(); torch.cuda.synchronize()
    ts = []
    for _ in range(5):
        a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
        a.record(); g.replay(); b.record(); b.synchronize(); ts.append(a.elapsed_time(b) / 100 * 1e3)
    ts.sort()
    print(f"TORCH row={name} plain_hot_us={ts[2]:.3f}", flush=True)
