#!/usr/bin/env python3
"""The convgen PyTorch operators on a GPU: results against ATen (served and
fallback problems, every activation, float32 NCHW and float16/bfloat16
channels_last), bad calls raising with the reason, swap() on small networks
(batch norms, residual adds, both policies) and the swapped network under
torch.compile(fullgraph=True).

  test_convgen_torch.py BUILD_DIR LIBRARY      (exits 77, skipped, without torch or a GPU)
"""
import copy
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_test  # noqa: E402

if len(sys.argv) >= 3:
    gpu_test.require(sys.argv[1], sys.argv[2], "configure with -DCONVGEN_BUILD_TORCH_MODELS=ON")
else:
    gpu_test.require()

import torch  # noqa: E402
from torch import nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

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
            ((x.double(), w.double(), None, None, None, *args), "must be float32, float16 or bfloat16"),
            ((x.half(), w, None, None, None, *args), "weight must be Half like the input"),
            ((x.transpose(2, 3), w, None, None, None, *args), "must be contiguous (NCHW) or channels_last"),
            # channels_last input, weight as PyTorch holds it (not [kh, kw, c]).
            ((x.contiguous(memory_format=torch.channels_last), w[:, :, :, :2].contiguous(), None, None, None,
              *args), "must view memory laid out [kh, kw, c*m]"),
            ((x, self.rand(8, 2, 3, 3), None, None, None, *args), "depthwise weight is"),
            ((x, w, self.rand(5), None, None, *args), "must hold 8 values"),
            ((x, w, None, None, None, [1, 1], [1, 1, 1, 1], [1, 1], "gelu"), "activation must be"),
            ((x, w, None, None, None, [0, 1], [1, 1, 1, 1], [1, 1], "none"), "strides must be at least 1"),
            # Once narrowed to int unchecked: 2^32 + 1 wrapped to a stride of 1.
            ((x, w, None, None, None, [2 ** 32 + 1, 1], [1, 1, 1, 1], [1, 1], "none"),
             "stride[0] is 4294967297; at most 16777216"),
            ((x, w, None, None, None, [1, 1], [1, 1, 1, 1], [1, 2 ** 31], "none"),
             "dilation[1] is 2147483648; at most 16777216"),
            ((x[0], w, None, None, None, *args), "must have 4 dimensions"),
        ]
        for call, reason in cases:
            with self.assertRaises(RuntimeError) as caught:
                op(*call)
            self.assertIn(reason, str(caught.exception))
        with self.assertRaises((RuntimeError, NotImplementedError)):
            op(x.cpu(), w.cpu(), None, None, None, *args)

    def half_check(self, got, want, bound):
        """got (in half precision) against want (float32 on the same rounded inputs)."""
        err = ((got.float() - want).abs().max() / want.abs().max().clamp_min(1e-30)).item()
        self.assertLess(err, bound)

    def test_half_channels_last_served(self):
        # MobileNetV2's stem, first depthwise and first projection at batch 1
        # in float16 channels_last: kernels in the library (implicit_gemm
        # for the dense ones), outputs channels_last, no fallback. The bound:
        # fp32 sums, one fp16 rounding of the output (2^-11) and the fp16
        # rounding of the epilogue's parameters.
        cl = torch.channels_last
        x = self.rand(1, 3, 224, 224).half().contiguous(memory_format=cl)
        w = self.rand(32, 3, 3, 3).half().contiguous(memory_format=cl)
        scale, shift = self.rand(32).half(), self.rand(32).half()
        before = torch.ops.convgen.fallbacks()
        y = torch.ops.convgen.conv2d(x, w, None, scale, shift, None, [2, 2], [1, 1, 1, 1], [1, 1], "relu6")
        self.assertTrue(y.is_contiguous(memory_format=cl) and not y.is_contiguous())
        self.half_check(y, aten(x.float(), w.float(), 1, [2, 2], [1, 1, 1, 1], [1, 1], None, scale.float(),
                                shift.float(), "relu6"), 2e-3)
        wd = self.rand(32, 1, 3, 3).half()
        yd = torch.ops.convgen.depthwise_conv2d(y, convgen_torch.depthwise_nhwc_weight(wd), None, scale, shift,
                                                [1, 1], [1, 1, 1, 1], [1, 1], "relu6")
        self.assertTrue(yd.is_contiguous(memory_format=cl) and not yd.is_contiguous())
        self.half_check(yd, aten(y.float(), wd.float(), 32, [1, 1], [1, 1, 1, 1], [1, 1], None, scale.float(),
                                 shift.float(), "relu6"), 2e-3)
        wp = (self.rand(16, 32, 1, 1) / 4).half().contiguous(memory_format=cl)
        s16, t16 = self.rand(16).half(), self.rand(16).half()
        yp = torch.ops.convgen.conv2d(yd, wp, None, s16, t16, None, [1, 1], [0, 0, 0, 0], [1, 1], "none")
        self.half_check(yp, aten(yd.float(), wp.float(), 1, [1, 1], [0, 0, 0, 0], [1, 1], None, s16.float(),
                                 t16.float(), "none"), 2e-3)
        self.assertEqual(torch.ops.convgen.fallbacks() - before, 0)
        self.assertIn("implicit_gemm", torch.ops.convgen.explain_conv2d(
            x, w, None, scale, shift, None, [2, 2], [1, 1, 1, 1], [1, 1], "relu6"))

    def test_half_residual_and_bfloat16_fallback(self):
        # ResNet-50's first expansion (64 -> 256, 1x1 on 56^2, batch norm,
        # residual, relu) has a float16 NHWC kernel; in bfloat16 the library
        # has none: ATen serves it, counted, and the output is channels_last
        # all the same.
        cl = torch.channels_last
        for dtype, served, bound in ((torch.float16, True, 2e-3), (torch.bfloat16, False, 1.6e-2)):
            x = self.rand(1, 64, 56, 56).to(dtype).contiguous(memory_format=cl)
            w = (self.rand(256, 64, 1, 1) / 8).to(dtype).contiguous(memory_format=cl)
            r = self.rand(1, 256, 56, 56).to(dtype).contiguous(memory_format=cl)
            scale, shift = self.rand(256).to(dtype), self.rand(256).to(dtype)
            before = torch.ops.convgen.fallbacks()
            y = torch.ops.convgen.conv2d(x, w, None, scale, shift, r, [1, 1], [0, 0, 0, 0], [1, 1], "relu")
            self.assertEqual(torch.ops.convgen.fallbacks() - before, 0 if served else 1, dtype)
            self.assertEqual(y.dtype, dtype)
            self.assertTrue(y.is_contiguous(memory_format=cl) and not y.is_contiguous())
            want = F.relu(aten(x.float(), w.float(), 1, [1, 1], [0, 0, 0, 0], [1, 1], None, scale.float(),
                               shift.float(), "none") + r.float())
            self.half_check(y, want, bound)
            with self.assertRaises(RuntimeError) as caught:  # a residual in the other memory format
                torch.ops.convgen.conv2d(x, w, None, scale, shift, r.contiguous(), [1, 1], [0, 0, 0, 0], [1, 1],
                                         "relu")
            self.assertIn("residual must be laid out like the output (channels_last)", str(caught.exception))

    def test_float32_follows_allow_tf32(self):
        # MobileNetV2's projection 144 -> 24 (1x1 on 56^2, batch norm,
        # residual) has both an exact float32 kernel and a math tf32 one
        # (specs/torchvision_mobilenet_v2_tf32.yaml). With PyTorch's TF32
        # convolutions allowed, the call runs the tf32 kernel (products of
        # 10-bit mantissas: ~1e-3 of the largest output); with them off, the
        # exact one. Against a float64 reference, both served.
        x, w = self.rand(1, 144, 56, 56), self.rand(24, 144, 1, 1)
        r, scale, shift = self.rand(1, 24, 56, 56), self.rand(24), self.rand(24)
        args = (None, scale, shift, r, [1, 1], [0, 0, 0, 0], [1, 1], "none")
        want = (F.conv2d(x.double(), w.double()) * scale.double().view(1, -1, 1, 1) +
                shift.double().view(1, -1, 1, 1) + r.double())
        for allowed, kernel_part, bound in ((True, "_tf32_", 4e-3), (False, "conv_f32_nchw_", 1e-5)):
            torch.backends.cudnn.allow_tf32 = allowed
            try:
                self.assertIn(kernel_part, torch.ops.convgen.explain_conv2d(x, w, *args), allowed)
                before = torch.ops.convgen.fallbacks()
                y = torch.ops.convgen.conv2d(x, w, *args)
                self.assertEqual(torch.ops.convgen.fallbacks() - before, 0)
            finally:
                torch.backends.cudnn.allow_tf32 = False
            err = ((y.double() - want).abs().max() / want.abs().max()).item()
            self.assertLess(err, bound, allowed)
            if allowed:  # the products were rounded: the tf32 kernel ran
                self.assertGreater(err, 1e-6)

    def test_swap_half_resnet_block_compiled(self):
        # A torchvision ResNet-50 bottleneck in float16 channels_last at
        # batch 1 (its convolutions are in the library): swap fuses the
        # residual add and the relu into the last conv; the swapped block
        # compiles with fullgraph=True, keeps convgen's kernels (no
        # fallback) and agrees with eager.
        from torchvision.models.resnet import Bottleneck
        torch.manual_seed(0)
        cl = torch.channels_last
        block = Bottleneck(256, 64).cuda().eval()
        for m in block.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2)
        block = block.half().to(memory_format=cl)
        x = self.rand(1, 256, 56, 56).half().contiguous(memory_format=cl)
        for policy in ("all", "faster"):
            fast = convgen_torch.swap(block, x, policy=policy)
            report = {e["node"]: e for e in fast.convgen_report}
            self.assertEqual(sorted(report), ["conv1", "conv2", "conv3"])
            folded = report["conv3"]["folded"]  # bn3, the add of the identity, the relu
            self.assertEqual((len(folded), folded[0], "add" in folded[1], folded[2][:4]), (3, "bn3", True, "relu"))
            for e in report.values():
                self.assertEqual(e["layout"], "NHWC")
                self.assertNotIn("generic", e["kernel"])
                if policy == "faster":
                    self.assertIn("convgen_us", e)
                    self.assertEqual(e["swapped"], e["convgen_us"] < e["aten_us"])
            with torch.no_grad():
                want = copy.deepcopy(block).float()(x.float())
                before = torch.ops.convgen.fallbacks()
                got = fast(x)
                compiled = torch.compile(fast, fullgraph=True, dynamic=False)
                got_compiled = compiled(x)
                self.assertEqual(torch.ops.convgen.fallbacks() - before, 0)
            self.assertTrue(got.is_contiguous(memory_format=cl))
            self.half_check(got, want, 1e-2)
            self.half_check(got_compiled, want, 1e-2)
            print(policy, [(e["node"], e["swapped"], e["why"]) for e in fast.convgen_report])

    def test_swap_matches_eager(self):
        torch.manual_seed(0)
        net = nn.Sequential(nn.Conv2d(3, 32, 3, 2, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU6(),
                            nn.Conv2d(32, 32, 3, 1, 1, groups=32, bias=False), nn.BatchNorm2d(32), nn.SiLU(),
                            nn.Conv2d(32, 16, 1), nn.Hardswish()).cuda().eval()
        for m in net.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-1, 1)
                m.running_var.uniform_(0.5, 2)
        fast = convgen_torch.swap(net, policy="all")
        self.assertEqual(fast.convgen_swapped, 3)
        x = self.rand(4, 3, 224, 224)
        with torch.no_grad():
            self.check(fast(x), net(x))
        with self.assertRaises(ValueError):
            convgen_torch.swap(net)  # policy "faster" times on example inputs
        with self.assertRaises(ValueError):
            convgen_torch.swap(net.train(), x, policy="all")


class Loading(unittest.TestCase):
    def test_one_library_a_process(self):
        # The same library again: its extension's name, nothing rebuilt.
        self.assertEqual(convgen_torch.load(BUILD_DIR, LIBRARY), LOADED)
        # Another (or this one rebuilt, as load() sees it): a RuntimeError, not
        # torch's abort on a second registration of the convgen operators.
        content_hash = convgen_torch._content_hash
        try:
            convgen_torch._content_hash = lambda paths: "0" * 16
            with self.assertRaises(RuntimeError):
                convgen_torch.load(BUILD_DIR, LIBRARY)
        finally:
            convgen_torch._content_hash = content_hash


if __name__ == "__main__":
    if len(sys.argv) < 3:
        print(__doc__)
        sys.exit(2)
    BUILD_DIR, LIBRARY = sys.argv[1], sys.argv[2]
    LOADED = convgen_torch.load(BUILD_DIR, LIBRARY)
    del sys.argv[1:3]
    unittest.main(verbosity=2)
