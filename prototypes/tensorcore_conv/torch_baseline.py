"""cuDNN (through PyTorch) on the layers of tc_conv.cu, in its CSV format.

fp16, channels_last input and weight, F.conv2d alone (no bias).  The hot time
is that of a CUDA graph of 50 launches: median of 5 replays, divided by 50.
No cold time and no check of the output (cuDNN is the reference point here).

Usage: python3 torch_baseline.py [substring]   runs only the layers whose name
contains it.
"""

import sys

import torch
import torch.nn.functional as F

# name, N, C_in, C_out, H, W, k, stride (the table of tc_conv.cu)
LAYERS = [
    ("mnv2_pw_16_96", 64, 16, 96, 112, 112, 1, 1),
    ("mnv2_pw_96_24", 64, 96, 24, 56, 56, 1, 1),
    ("mnv2_pw_24_144", 64, 24, 144, 56, 56, 1, 1),
    ("mnv2_pw_144_32", 64, 144, 32, 28, 28, 1, 1),
    ("mnv2_pw_32_192", 64, 32, 192, 28, 28, 1, 1),
    ("mnv2_pw_384_64", 64, 384, 64, 14, 14, 1, 1),
    ("mnv2_pw_96_576", 64, 96, 576, 14, 14, 1, 1),
    ("mnv2_pw_960_160", 64, 960, 160, 7, 7, 1, 1),
    ("mnv2_pw_320_1280", 64, 320, 1280, 7, 7, 1, 1),
    ("resnet_64_64_56", 32, 64, 64, 56, 56, 3, 1),
    ("resnet_128_128_28", 32, 128, 128, 28, 28, 3, 1),
    ("resnet_256_256_14", 32, 256, 256, 14, 14, 3, 1),
    ("resnet_512_512_7", 32, 512, 512, 7, 7, 3, 1),
    ("resnet_64_128_56_s2", 32, 64, 128, 56, 56, 3, 2),
]

LAUNCHES_PER_GRAPH = 50
REPLAYS = 5


def median(values):
    values = sorted(values)
    m = len(values) // 2
    return values[m] if len(values) % 2 else 0.5 * (values[m - 1] + values[m])


def measure(n, c_in, c_out, h, w, k, stride):
    pad = (k - 1) // 2
    dev = torch.device("cuda")
    x = torch.empty(n, c_in, h, w, device=dev, dtype=torch.float16).uniform_(-1, 1)
    x = x.contiguous(memory_format=torch.channels_last)
    wt = torch.empty(c_out, c_in, k, k, device=dev, dtype=torch.float16).uniform_(-1, 1)
    wt = wt.contiguous(memory_format=torch.channels_last)

    def conv():
        return F.conv2d(x, wt, stride=stride, padding=pad)

    # Warm up on a side stream, as graph capture requires; this is also where
    # cudnn.benchmark tries its algorithms, so none of that is captured.
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            conv()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()

    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(LAUNCHES_PER_GRAPH):
            conv()
    graph.replay()
    torch.cuda.synchronize()

    times_ms = []
    for _ in range(REPLAYS):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        stop.record()
        stop.synchronize()
        times_ms.append(start.elapsed_time(stop))
    hot_us = 1000.0 * median(times_ms) / LAUNCHES_PER_GRAPH

    p = (h + 2 * pad - k) // stride + 1
    q = (w + 2 * pad - k) // stride + 1
    flops = 2.0 * n * p * q * c_out * c_in * k * k
    return hot_us, flops / (hot_us * 1e-6) / 1e12


def main():
    pattern = sys.argv[1] if len(sys.argv) > 1 else ""
    torch.backends.cudnn.benchmark = True
    print("layer,impl,config,status,bad,worst_rel_err,hot_us,cold_us,tflops")
    for name, *shape in LAYERS:
        if pattern not in name:
            continue
        hot_us, tflops = measure(*shape)
        print(f"{name},cudnn,torch,ok,0,0,{hot_us:.2f},,{tflops:.2f}", flush=True)


if __name__ == "__main__":
    main()
