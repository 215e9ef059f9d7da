#!/usr/bin/env python3
"""The PyTorch operators over a kernel that computes through a workspace
(library `winograd_nonfused`, tests/gpu/winograd_nonfused.yaml): the
extension takes the bytes find() asks for from PyTorch's caching allocator;
each call runs convgen's kernel (no fallback to ATen) and matches a float64
convolution within fp32 rounding of F(4x4, 3x3).

  test_torch_workspace.py BUILD_DIR   (exits 77, skipped, without torch, a GPU or the library)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_test  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
LIBRARY_DIR = os.path.join(BUILD, "tests", "gpu")
gpu_test.require(LIBRARY_DIR, "winograd_nonfused", "configure with -DCONVGEN_BUILD_RANDOM_TESTS=ON")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import convgen_torch  # noqa: E402

convgen_torch.load(LIBRARY_DIR, "winograd_nonfused", runtime_dir=BUILD)

ACTIVATIONS = {"none": lambda t: t, "relu": F.relu, "relu6": F.relu6, "silu": F.silu}
# The library's kernels: (n, c, c_out, h, w, padding [top, bottom, left, right], epilogue, residual, activation);
# the runtime-batch kernels at batches of 5 and 3.
CASES = [
    (2, 67, 70, 13, 11, [1, 1, 1, 1], "scale_shift", True, "relu"),
    (3, 128, 136, 14, 14, [1, 1, 1, 1], "none", False, "relu6"),
    (5, 32, 64, 9, 10, [0, 0, 0, 0], "bias", False, "silu"),
    (5, 256, 72, 11, 9, [1, 1, 1, 1], "scale_shift", True, "silu"),  # input channels split in 2
    (3, 64, 40, 6, 13, [2, 0, 1, 1], "bias", False, "none"),  # split in 8, at a batch of 3
    (2, 40, 24, 12, 8, [1, 1, 1, 1], "scale_shift", True, "relu"),  # 16-byte rows, the residual's too
]
# |err| against the sum of an output's |products|: F(4x4)'s transforms round
# at a few times fp32's unit there (docs/performance.md, "Winograd, non-fused").
LIMIT = 2e-5

torch.manual_seed(0)
failures = 0
for n, c, c_out, h, w, pad, epilogue, residual, activation in CASES:
    x = torch.randn(n, c, h, w, device="cuda")
    weight = torch.randn(c_out, c, 3, 3, device="cuda")
    bias = torch.randn(c_out, device="cuda") if epilogue == "bias" else None
    scale = torch.randn(c_out, device="cuda") if epilogue == "scale_shift" else None
    shift = torch.randn(c_out, device="cuda") if epilogue == "scale_shift" else None
    out_h, out_w = h + pad[0] + pad[1] - 2, w + pad[2] + pad[3] - 2
    r = torch.randn(n, c_out, out_h, out_w, device="cuda") if residual else None
    args = (x, weight, bias, scale, shift, r, [1, 1], pad, [1, 1], activation)
    served = torch.ops.convgen.explain_conv2d(*args)
    before = torch.ops.convgen.fallbacks()
    y = torch.ops.convgen.conv2d(*args)
    fell_back = torch.ops.convgen.fallbacks() - before
    padded = F.pad(x.double(), (pad[2], pad[3], pad[0], pad[1]))
    ref = F.conv2d(padded, weight.double(), None if bias is None else bias.double())
    if scale is not None:
        ref = ref * scale.double().view(1, -1, 1, 1) + shift.double().view(1, -1, 1, 1)
    if r is not None:
        ref = ref + r.double()
    ref = ACTIVATIONS[activation](ref)
    magnitude = F.conv2d(padded.abs(), weight.double().abs()).clamp_min(1e-30)
    err = ((y.double() - ref).abs() / magnitude).max().item()
    ok = fell_back == 0 and err <= LIMIT and served.split(":")[1].strip().startswith("winograd_nonfused")
    failures += not ok
    print(f"{'ok  ' if ok else 'FAIL'} {served.split(':')[0]}: max |err| / sum|products| {err:.2e} "
          f"(limit {LIMIT:.0e}), fallbacks {fell_back}")
print(f"{len(CASES)} calls through a workspace, {failures} failed")
sys.exit(1 if failures else 0)
