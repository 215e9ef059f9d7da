#!/usr/bin/env python3
"""The convgen PyTorch operators on a GPU: results against ATen (served and
fallback problems, every activation), bad calls raising with the reason, and
swap() on a small network.

  test_convgen_torch.py BUILD_DIR LIBRARY      (exits 77, skipped, without torch or a GPU)
"""
import os
import sys
import unittest

try:
    import torch
    from torch import nn
    import torch.nn.functional as F
except ImportError as e:
    print(f"SKIPPED: {e}: needs torch")
    sys.exit(77)
if not torch.cuda.is_available():
    print("SKIPPED: no CUDA device")
    sys.exit(77)
if len(sys.argv) >= 3 and not os.path.exists(os.path.join(sys.argv[1], f"libconvgen_{sys.argv[2]}.a")):
    print(f"SKIPPED: no library {sys.argv[2]} in {sys.argv[1]}: configure with -DCONVGEN_BUILD_TORCH_MODELS=ON")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import convgen_torch  # noqa: E402

ACTIVATIONS = {"none": lambda y: y, "relu": F.relu, "relu6": F.relu6, "silu": F.silu, "hardswish": F.hardswish}


def aten(x, w, groups, stride, padding, dilation, bias, scale, shift, activation):
    x = F.pad(x, (padding[2], padding[3], padding[0], padding[1]))
    y = F.conv2d(x, w, bias, stride, 0, dilation, groups)
    if scale is not None:
        y = y * scale.view(1, -1, 1, 1) + shift.view(1, -1, 1, 1)
    return ACTIVATIONS[activation](y)


class Operators(unittest.TestCase):
    def setUp(self):
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False
        self.g = torch.Generator(device="cuda").manual_seed(7)

    def rand(self, *shape):
        return torch.randn(*shape, device="cuda", generator=self.g)

    def check(self, got, want):
        err = ((got - want).abs().max() / want.abs().max().clamp_min(1e-30)).item()
        self.assertLess(err, 1e-5)

    def test_depthwise_served_and_fallback(self):
        # The first depthwise layer of MobileNetV2 (32 x 112^2, 3x3, batch
        # norm, relu6) and of EfficientNet-B0 (the same with silu) have
        # kernels, which take any batch; with another activation, or on
        # 16 x 16^2, the library has none: ATen serves it, counted.
        for c, h, act, served in ((32, 112, "relu6", True), (32, 112, "silu", True), (16, 16, "relu6", False)) + \
                tuple((32, 112, a, False) for a in ("none", "relu", "hardswish")):
            x, w = self.rand(2, c, h, h), self.rand(c, 1, 3, 3)
            scale, shift = self.rand(c), self.rand(c)
            before = torch.ops.convgen.fallbacks()
            y = torch.ops.convgen.depthwise_conv2d(x, w, None, scale, shift, [1, 1], [1, 1, 1, 1], [1, 1], act)
            self.check(y, aten(x, w, c, [1, 1], [1, 1, 1, 1], [1, 1], None, scale, shift, act))
            self.assertEqual(torch.ops.convgen.fallbacks() - before, 0 if served else 1, (c, h, act))

    def test_dense_with_residual(self):
        x, w, b = self.rand(1, 16, 20, 20), self.rand(24, 16, 1, 1), self.rand(24)
        r = self.rand(1, 24, 20, 20)
        y = torch.ops.convgen.conv2d(x, w, b, None, None, r, [1, 1], [0, 0, 0, 0], [1, 1], "relu")
        self.check(y, F.relu(F.conv2d(x, w, b) + r))

    def test_bad_calls_raise_with_the_reason(self):
        x, w = self.rand(1, 8, 8, 8), self.rand(8, 1, 3, 3)
        op = torch.ops.convgen.depthwise_conv2d
        args = ([1, 1], [1, 1, 1, 1], [1, 1], "relu")
        cases = [
            ((x.double(), w.double(), None, None, None, *args), "must be float32"),
            ((x.transpose(2, 3), w, None, None, None, *args), "must be contiguous"),
            ((x, self.rand(8, 2, 3, 3), None, None, None, *args), "depthwise weight is"),
            ((x, w, self.rand(5), None, None, *args), "must hold 8 values"),
            ((x, w, None, None, None, [1, 1], [1, 1, 1, 1], [1, 1], "gelu"), "activation must be"),
            ((x, w, None, None, None, [0, 1], [1, 1, 1, 1], [1, 1], "none"), "strides must be at least 1"),
            # Once narrowed to int unchecked: 2^32 + 1 wrapped to a stride of 1.
            ((x, w, None, None, None, [2 ** 32 + 1, 1], [1, 1, 1, 1], [1, 1], "none"),
             "stride[0] is 4294967297; at most 16777216"),
            ((x, w, None, None, None, [1, 1], [1, 1, 1, 1], [1, 2 ** 31], "none"),
             "dilation[1] is 2147483648; at most 16777216"),
            ((x[0], w, None, None, None, *args), "must be NCHW"),
        ]
        for call, reason in cases:
            with self.assertRaises(RuntimeError) as caught:
                op(*call)
            self.assertIn(reason, str(caught.exception))
        with self.assertRaises((RuntimeError, NotImplementedError)):
            op(x.cpu(), w.cpu(), None, None, None, *args)

    def test_swap_matches_eager(self):
        torch.manual_seed(0)
        net = nn.Sequential(nn.Conv2d(3, 32, 3, 2, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU6(),
                            nn.Conv2d(32, 32, 3, 1, 1, groups=32, bias=False), nn.BatchNorm2d(32), nn.SiLU(),
                            nn.Conv2d(32, 16, 1), nn.Hardswish()).cuda().eval()
        for m in net.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-1, 1)
                m.running_var.uniform_(0.5, 2)
        fast = convgen_torch.swap(net)
        self.assertEqual(fast.convgen_swapped, 3)
        x = self.rand(4, 3, 224, 224)
        with torch.no_grad():
            self.check(fast(x), net(x))
        with self.assertRaises(ValueError):
            convgen_torch.swap(net.train())


if __name__ == "__main__":
    if len(sys.argv) < 3:
        print(__doc__)
        sys.exit(2)
    convgen_torch.load(sys.argv[1], sys.argv[2])
    del sys.argv[1:3]
    unittest.main(verbosity=2)
