#!/usr/bin/env python3
"""The PyTorch operators' backward (convgen_torch._conv_backward) on the
CPU, without a GPU or a library: the operators' schemas defined again in a
namespace of this test, with float64 CPU kernels that compute the forward
in ATen, and convgen_torch's fake implementations and backward registered
on them as load() registers them on the real ones. torch.autograd.gradcheck
then compares the backward with finite differences for every activation,
epilogue, residual, stride, asymmetric padding, dilation, depthwise
multiplier and both memory formats; opcheck checks the registrations, and
torch.compile's traced backward matches the eager one.

  test_backward.py      (exits 77, skipped, without torch)
"""
import itertools
import os
import sys
import unittest

try:
    import torch
    import torch.nn.functional as F
except ImportError as e:
    print(f"SKIPPED: {e}: needs torch")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import convgen_torch  # noqa: E402

ACTIVATIONS = {"none": lambda y: y, "relu": F.relu, "relu6": F.relu6, "silu": F.silu, "hardswish": F.hardswish}
NAMESPACE = "convgen_backward_test"


def forward(x, w, groups, bias, scale, shift, residual, stride, padding, dilation, activation):
    y = F.conv2d(F.pad(x, (padding[2], padding[3], padding[0], padding[1])), w, bias, stride, 0, dilation, groups)
    if scale is not None:
        y = y * scale.view(1, -1, 1, 1) + shift.view(1, -1, 1, 1)
    if residual is not None:
        y = y + residual
    return ACTIVATIONS[activation](y)


def define_twins():
    """The two operators under NAMESPACE, with CPU kernels and convgen_torch's
    fakes and backward."""
    library = torch.library.Library(NAMESPACE, "DEF")
    library.define("depthwise_conv2d(Tensor input, Tensor weight, Tensor? bias, Tensor? scale, Tensor? shift, "
                   "int[2] stride, int[4] padding, int[2] dilation, str activation) -> Tensor")
    library.define("conv2d(Tensor input, Tensor weight, Tensor? bias, Tensor? scale, Tensor? shift, "
                   "Tensor? residual, int[2] stride, int[4] padding, int[2] dilation, str activation) -> Tensor")

    def depthwise_kernel(x, w, bias, scale, shift, stride, padding, dilation, activation):
        y = forward(x, w, x.shape[1], bias, scale, shift, None, stride, padding, dilation, activation)
        return y.contiguous(memory_format=torch.channels_last if convgen_torch._nhwc(x, False) else
                            torch.contiguous_format)

    def conv2d_kernel(x, w, bias, scale, shift, residual, stride, padding, dilation, activation):
        y = forward(x, w, 1, bias, scale, shift, residual, stride, padding, dilation, activation)
        return y.contiguous(memory_format=torch.channels_last if convgen_torch._nhwc(x, False) else
                            torch.contiguous_format)

    library.impl("depthwise_conv2d", depthwise_kernel, "CPU")
    library.impl("conv2d", conv2d_kernel, "CPU")
    torch.library.register_fake(f"{NAMESPACE}::depthwise_conv2d", convgen_torch._depthwise_fake, lib=library)
    torch.library.register_fake(f"{NAMESPACE}::conv2d", convgen_torch._conv2d_fake, lib=library)
    torch.library.register_autograd(f"{NAMESPACE}::depthwise_conv2d", convgen_torch._conv_backward,
                                    setup_context=convgen_torch._setup_depthwise, lib=library)
    torch.library.register_autograd(f"{NAMESPACE}::conv2d", convgen_torch._conv_backward,
                                    setup_context=convgen_torch._setup_conv2d, lib=library)
    return library


LIBRARY = define_twins()
OPS = getattr(torch.ops, NAMESPACE)
# (stride, padding [top, bottom, left, right], dilation)
WINDOWS = [([1, 1], [1, 1, 1, 1], [1, 1]), ([2, 1], [1, 0, 0, 2], [1, 1]), ([1, 2], [2, 1, 0, 1], [2, 1])]


def tensors(depthwise, epilogue, residual, window, channels_last, dtype=torch.float64, seed=0):
    g = torch.Generator().manual_seed(seed)
    fmt = torch.channels_last if channels_last else torch.contiguous_format
    n, c, h, w, k = 2, 3, 6, 7, 3
    c_out = 2 * c if depthwise else 4  # depthwise: multiplier 2

    def rand(*shape):
        return torch.randn(*shape, generator=g, dtype=dtype)

    x = rand(n, c, h, w).contiguous(memory_format=fmt)
    weight = rand(c_out, 1 if depthwise else c, k, k)
    if channels_last:
        weight = convgen_torch.depthwise_nhwc_weight(weight) if depthwise else weight.contiguous(memory_format=fmt)
    bias = rand(c_out) if epilogue == "bias" else None
    scale = rand(c_out) if epilogue == "scale_shift" else None
    shift = rand(c_out) if epilogue == "scale_shift" else None
    stride, padding, dilation = window
    out = [(size + padding[2 * i] + padding[2 * i + 1] - dilation[i] * (k - 1) - 1) // stride[i] + 1
           for i, size in enumerate((h, w))]
    res = rand(n, c_out, *out).contiguous(memory_format=fmt) if residual else None
    return [x, weight, bias, scale, shift] + ([] if depthwise else [res])


class Backward(unittest.TestCase):
    def test_gradcheck(self):
        # Every tensor argument's gradient against finite differences, in
        # float64, away from the activations' jumps (random inputs).
        cases = itertools.product((False, True), ACTIVATIONS, ("none", "bias", "scale_shift"), (False, True),
                                  WINDOWS, (False, True))
        count = 0
        for depthwise, activation, epilogue, residual, window, channels_last in cases:
            if depthwise and residual:
                continue
            ts = [t.requires_grad_() if t is not None else None
                  for t in tensors(depthwise, epilogue, residual, window, channels_last, seed=count)]
            present = [t for t in ts if t is not None]
            op = OPS.depthwise_conv2d if depthwise else OPS.conv2d

            def call(*args):
                it = iter(args)
                full = [next(it) if t is not None else None for t in ts]
                return op(*full, *window, activation)

            with self.subTest(depthwise=depthwise, activation=activation, epilogue=epilogue, residual=residual,
                              window=window, channels_last=channels_last):
                self.assertTrue(torch.autograd.gradcheck(call, present, raise_exception=False))
            count += 1
        self.assertEqual(count, 2 * 5 * 3 * 3 * 2 + 5 * 3 * 3 * 2)

    def test_only_some_arguments_need_gradients(self):
        ts = tensors(False, "scale_shift", True, WINDOWS[1], False)
        ts[0].requires_grad_()  # the input alone
        OPS.conv2d(*ts, *WINDOWS[1], "silu").sum().backward()
        self.assertEqual(ts[0].grad.shape, ts[0].shape)
        self.assertTrue(all(t.grad is None for t in ts[1:] if t is not None))

    def test_opcheck(self):
        for depthwise in (False, True):
            ts = [t.float().requires_grad_() if t is not None else None
                  for t in tensors(depthwise, "scale_shift", not depthwise, WINDOWS[1], True)]
            op = OPS.depthwise_conv2d if depthwise else OPS.conv2d
            torch.library.opcheck(op.default, (*ts, *WINDOWS[1], "hardswish"))

    def test_compiled_backward_matches_eager(self):
        ts = [t.float().requires_grad_() for t in tensors(False, "scale_shift", True, WINDOWS[2], True)
              if t is not None]
        x, w, scale, shift, res = ts

        def f(x, w, scale, shift, res):
            return OPS.conv2d(x, w, None, scale, shift, res, *WINDOWS[2], "silu")

        torch.compile(f, fullgraph=True, backend="aot_eager")(*ts).sum().backward()
        compiled = [t.grad.clone() for t in ts]
        for t in ts:
            t.grad = None
        f(*ts).sum().backward()
        for a, t in zip(compiled, ts):
            torch.testing.assert_close(a, t.grad)


if __name__ == "__main__":
    unittest.main(verbosity=2)
