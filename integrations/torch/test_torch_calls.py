#!/usr/bin/env python3
"""What a call through the PyTorch operators does beside running a kernel,
over library `torch_calls` (tests/gpu/torch_calls.yaml):

  gradients  the backward (ATen operations) of served and ATen-served calls,
             of every tensor argument, against float64 autograd of the same
             computation; eagerly and under torch.compile; opcheck's checks
             of schema, fake, autograd registration and AOT dispatch;
  autocast   float32 tensors under torch.autocast: cast to its dtype, as
             ATen's conv2d is, served by the float16 kernel (bfloat16: by
             ATen), the output of that dtype either way;
  batches    an empty batch and one past the grid's limit run on ATen,
             counted, shaped and laid out as the fake implementation says;
  explain    says which kernel serves a call, or "aten: why" exactly where
             ATen does (no kernel, a misaligned tensor, autocast's dtype);
  loading    load() after this module is reloaded: the same library returns
             its name, another raises RuntimeError (no abort).

  test_torch_calls.py BUILD_DIR   (exits 77, skipped, without torch, a GPU or the library)
"""
import importlib
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_test  # noqa: E402

if len(sys.argv) < 2:
    print(__doc__)
    sys.exit(2)
BUILD = os.path.abspath(sys.argv[1])
LIBRARY_DIR = os.path.join(BUILD, "tests", "gpu")
gpu_test.require(LIBRARY_DIR, "torch_calls",
                 "configure with -DCONVGEN_BUILD_RANDOM_TESTS=ON and CUTLASS's headers (scripts/install_deps.sh)")
del sys.argv[1:2]

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import convgen_torch  # noqa: E402

LOADED = convgen_torch.load(LIBRARY_DIR, "torch_calls", runtime_dir=BUILD)
ACTIVATIONS = {"none": lambda y: y, "relu": F.relu, "relu6": F.relu6, "silu": F.silu, "hardswish": F.hardswish}
CL = torch.channels_last


# Where each activation's derivative jumps: relu at 0, relu6 at 0 and 6,
# hardswish at -3 and 3.
JUMPS = {"none": (), "relu": (0.0,), "relu6": (0.0, 6.0), "silu": (), "hardswish": (-3.0, 3.0)}


def pre_activation(x, w, groups, bias, scale, shift, residual, stride, padding, dilation):
    """The operator's computation in ATen (differentiable), up to the activation."""
    y = F.conv2d(F.pad(x, (padding[2], padding[3], padding[0], padding[1])), w, bias, stride, 0, dilation, groups)
    if scale is not None:
        y = y * scale.view(1, -1, 1, 1) + shift.view(1, -1, 1, 1)
    if residual is not None:
        y = y + residual
    return y


class Call:
    """One operator call: its tensors (None where absent), window and
    activation, and what the library does with it."""

    def __init__(self, op, dtype, n, c, c_out, hw, k, stride, padding, epilogue, residual, activation,
                 channels_last, seed):
        g = torch.Generator(device="cuda").manual_seed(seed)
        self.depthwise = op == "depthwise"
        self.groups = c if self.depthwise else 1
        fmt = CL if channels_last else torch.contiguous_format

        def rand(*shape, scale=1.0):
            return (torch.randn(*shape, device="cuda", generator=g) * scale).to(dtype)

        self.x = rand(n, c, *hw).contiguous(memory_format=fmt)
        w = rand(c_out, 1 if self.depthwise else c, k, k, scale=(1.0 / (c * k * k)) ** 0.5)
        if self.depthwise:
            self.w = convgen_torch.depthwise_nhwc_weight(w) if channels_last else w
        else:
            self.w = w.contiguous(memory_format=fmt)
        self.bias = rand(c_out) if epilogue == "bias" else None
        self.scale = rand(c_out, scale=0.5) if epilogue == "scale_shift" else None
        self.shift = rand(c_out) if epilogue == "scale_shift" else None
        self.stride, self.padding, self.dilation, self.activation = stride, padding, [1, 1], activation
        out_hw = [(hw[i] + padding[2 * i] + padding[2 * i + 1] - k) // stride[i] + 1 for i in (0, 1)]
        self.residual = rand(n, c_out, *out_hw).contiguous(memory_format=fmt) if residual else None

    def tensors(self):
        return [self.x, self.w, self.bias, self.scale, self.shift] + ([] if self.depthwise else [self.residual])

    def run(self, tensors):
        window = (self.stride, self.padding, self.dilation, self.activation)
        if self.depthwise:
            return torch.ops.convgen.depthwise_conv2d(*tensors, *window)
        return torch.ops.convgen.conv2d(*tensors, *window)

    def explain(self, tensors=None):
        window = (self.stride, self.padding, self.dilation, self.activation)
        op = torch.ops.convgen.explain_depthwise_conv2d if self.depthwise else torch.ops.convgen.explain_conv2d
        return op(*(self.tensors() if tensors is None else tensors), *window)

    def pre_activation(self, tensors):
        x, w, bias, scale, shift = tensors[:5]
        residual = None if self.depthwise else tensors[5]
        return pre_activation(x, w, self.groups, bias, scale, shift, residual, self.stride, self.padding,
                              self.dilation)

    def reference(self, tensors):
        return ACTIVATIONS[self.activation](self.pre_activation(tensors))

    def output_gradient(self):
        """A random gradient of the output, zero where the float64 value
        before the activation lies within 3e-2 of a jump of its derivative:
        there the dtype's rounding of that value (the backward computes it
        again) may put an element on the other side, and its derivative is
        the other one."""
        with torch.no_grad():
            z = self.pre_activation([t.double() if t is not None else None for t in self.tensors()])
        g = torch.randn(z.shape, device="cuda", generator=torch.Generator(device="cuda").manual_seed(11))
        for jump in JUMPS[self.activation]:
            g = g.masked_fill((z - jump).abs() < 3e-2, 0.0)
        return g


# (call, served by the library): the library's three kernels, and a problem
# it has none for (a dense float16 call with hardswish), which ATen serves.
def calls():
    return [
        (Call("dense", torch.float16, 2, 32, 64, (14, 14), 3, [1, 1], [1, 1, 1, 1], "scale_shift", True, "silu",
              True, 1), True),
        (Call("depthwise", torch.float16, 2, 32, 32, (14, 14), 3, [1, 1], [1, 1, 1, 1], "scale_shift", False,
              "relu6", True, 2), True),
        (Call("dense", torch.float32, 3, 8, 16, (9, 11), 3, [2, 2], [1, 0, 0, 1], "bias", False, "hardswish",
              False, 3), True),
        (Call("dense", torch.float16, 2, 32, 64, (14, 14), 3, [1, 1], [1, 1, 1, 1], "scale_shift", True,
              "hardswish", True, 4), False),
    ]


# A gradient's error against float64 autograd, relative to the largest
# magnitude of the float64 gradient: the forward's rounding to the dtype
# (the kernel's output, the recomputed convolution) bounds it; float16's
# unit is 2^-11, float32's 2^-24, with sums of a few hundred products.
GRAD_LIMIT = {torch.float16: 2e-2, torch.float32: 1e-4}


class Gradients(unittest.TestCase):
    def setUp(self):
        self.tf32 = torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False

    def tearDown(self):
        torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = self.tf32

    def grads(self, call, run):
        """The gradients of sum(y * g) for every present tensor, and how
        many calls fell back to ATen on the way."""
        tensors = [t.detach().clone().requires_grad_() if t is not None else None for t in call.tensors()]
        before = torch.ops.convgen.fallbacks()
        y = run(tensors)
        fell_back = torch.ops.convgen.fallbacks() - before
        (y.float() * call.output_gradient()).sum().backward()
        return y, [t.grad if t is not None else None for t in tensors], fell_back

    def want(self, call):
        tensors = [t.detach().double().requires_grad_() if t is not None else None for t in call.tensors()]
        y = call.reference(tensors)
        (y * call.output_gradient().double()).sum().backward()
        return y, [t.grad if t is not None else None for t in tensors]

    def check_grads(self, call, got, want, what):
        limit = GRAD_LIMIT[call.x.dtype]
        names = ["input", "weight", "bias", "scale", "shift", "residual"]
        for name, a, b in zip(names, got, want):
            if b is None:
                self.assertIsNone(a, f"{what}: {name}")
                continue
            self.assertIsNotNone(a, f"{what}: {name} got no gradient")
            self.assertEqual(a.dtype, call.x.dtype, f"{what}: {name}")
            err = ((a.double() - b).abs().max() / b.abs().max().clamp_min(1e-30)).item()
            self.assertLess(err, limit, f"{what}: {name}")

    def test_eager(self):
        for call, served in calls():
            what = call.explain()
            y, got, fell_back = self.grads(call, call.run)
            self.assertEqual(fell_back, 0 if served else 1, what)
            self.assertIsNotNone(y.grad_fn, what)
            _, want = self.want(call)
            self.check_grads(call, got, want, what)

    def test_compiled(self):
        # torch.compile traces the backward from the same formulas, with
        # the operators' fakes; outside no_grad, as a user may call it.
        for call, served in calls():
            torch._dynamo.reset()
            compiled = torch.compile(call.run, fullgraph=True)
            what = "compiled " + call.explain()
            _, got, fell_back = self.grads(call, compiled)
            self.assertEqual(fell_back, 0 if served else 1, what)
            _, want = self.want(call)
            self.check_grads(call, got, want, what)

    def test_opcheck(self):
        # The float32 call (tight bounds): schema, fake against real,
        # autograd registration, AOT dispatch of forward and backward.
        call = next(c for c, _ in calls() if c.x.dtype == torch.float32)
        tensors = [t.detach().clone().requires_grad_() if t is not None else None for t in call.tensors()]
        window = (call.stride, call.padding, call.dilation, call.activation)
        torch.library.opcheck(torch.ops.convgen.conv2d.default, (*tensors, *window))

    def test_no_grad_records_nothing(self):
        call, _ = calls()[0]
        tensors = [t.detach().clone().requires_grad_() if t is not None else None for t in call.tensors()]
        with torch.no_grad():
            self.assertIsNone(call.run(tensors).grad_fn)
        with torch.inference_mode():
            self.assertFalse(call.run(tensors).requires_grad)


class Autocast(unittest.TestCase):
    def test_cast_to_the_autocast_dtype(self):
        # The float16 dense call's problem in float32 tensors: autocast to
        # float16 finds the float16 kernel; to bfloat16, none (ATen).
        call, _ = calls()[0]
        tensors = [t.float() if t is not None else None for t in call.tensors()]
        for dtype, served in ((torch.float16, True), (torch.bfloat16, False)):
            before = torch.ops.convgen.fallbacks()
            with torch.no_grad(), torch.autocast("cuda", dtype=dtype):
                y = call.run(tensors)
            self.assertEqual(torch.ops.convgen.fallbacks() - before, 0 if served else 1, dtype)
            self.assertEqual(y.dtype, dtype)
            self.assertTrue(y.is_contiguous(memory_format=CL))
            want = call.reference([t.to(dtype).double() if t is not None else None for t in tensors])
            err = ((y.double() - want).abs().max() / want.abs().max()).item()
            # float16: the kernel's one rounding of the output; bfloat16:
            # ATen's, one per operation (conv, scale, shift, residual, silu)
            # at 2^-8 each, on values up to a few times the output's.
            self.assertLess(err, 5e-2 if dtype == torch.bfloat16 else 5e-3, dtype)

    def test_without_autocast_the_dtype_is_the_input_s(self):
        call, _ = calls()[0]
        tensors = [t.float() if t is not None else None for t in call.tensors()]
        with torch.no_grad():
            self.assertEqual(call.run(tensors).dtype, torch.float32)  # ATen serves float32 here


class Explain(unittest.TestCase):
    def test_explain_says_who_serves_the_call(self):
        # explain names a kernel exactly where the call runs one, and says
        # "aten: why" where ATen serves it: every call of calls(), the first
        # with its input one element off the kernel's 16-byte vectors, and
        # in float32 under autocast to float16 (served) and to bfloat16 (no
        # kernel).
        says = ("conv_f16_nhwc_", "dw_f16_nhwc_", "conv_f32_nchw_",
                "aten: library torch_calls has no kernel for conv2d f16 NHWC")
        cases = [(c, c.tensors(), None, what) for (c, _), what in zip(calls(), says)]
        call = cases[0][0]
        flat = torch.empty(call.x.numel() + 1, dtype=call.x.dtype, device="cuda")
        shifted = flat[1:].view(call.x.permute(0, 2, 3, 1).shape).permute(0, 3, 1, 2)
        shifted.copy_(call.x)
        self.assertTrue(shifted.is_contiguous(memory_format=CL))
        cases.append((call, [shifted] + call.tensors()[1:], None, "needs every tensor aligned to 16 bytes"))
        floats = [t.float() if t is not None else None for t in call.tensors()]
        cases.append((call, floats, torch.float16, "conv_f16_nhwc"))
        cases.append((call, floats, torch.bfloat16, "aten: library torch_calls has no kernel for conv2d bf16 NHWC"))
        for c, tensors, autocast, says in cases:
            with torch.no_grad(), torch.autocast("cuda", dtype=autocast or torch.float16, enabled=bool(autocast)):
                what = c.explain(tensors)
                before = torch.ops.convgen.fallbacks()
                c.run(tensors)
                fell_back = torch.ops.convgen.fallbacks() - before
            self.assertEqual(fell_back, 1 if what.startswith("aten: ") else 0, what)
            self.assertNotIn("generic", what)
            if says is not None:
                self.assertIn(says, what)


class Batches(unittest.TestCase):
    def test_batches_aten_serves(self):
        # The float32 dense call's problem and a float16 channels_last
        # depthwise one at batch 0 and at 70000 (past CUDA's grid.y/z limit,
        # 65535): ATen's result, counted, as the fake implementation shapes
        # and lays it out.
        for n in (0, 70000):
            cases = [(Call("dense", torch.float32, n, 8, 16, (3, 4), 3, [2, 2], [1, 0, 0, 1], "bias", False,
                           "hardswish", False, 5), convgen_torch._conv2d_fake, torch.contiguous_format),
                     (Call("depthwise", torch.float16, n, 32, 32, (3, 3), 3, [1, 1], [1, 1, 1, 1], "scale_shift",
                           False, "relu6", True, 6), convgen_torch._depthwise_fake, CL)]
            for call, fake_of, memory_format in cases:
                before = torch.ops.convgen.fallbacks()
                with torch.no_grad():
                    y = call.run(call.tensors())
                    want = call.reference(call.tensors())
                self.assertEqual(torch.ops.convgen.fallbacks() - before, 1, n)
                fake = fake_of(*call.tensors(), call.stride, call.padding, call.dilation, call.activation)
                self.assertEqual(y.shape, fake.shape)
                self.assertEqual(y.stride(), fake.stride())
                self.assertEqual(y.dtype, fake.dtype)
                self.assertTrue(y.is_contiguous(memory_format=memory_format))
                if n:
                    torch.testing.assert_close(y, want)
                self.assertTrue(call.explain().startswith("aten: "), call.explain())

    def test_bad_calls_at_those_batches_raise(self):
        # Checked as at any batch before ATen runs them: scale without
        # shift, bias with scale and shift.
        for n in (0, 70000):
            call = Call("dense", torch.float32, n, 8, 16, (3, 4), 3, [2, 2], [1, 0, 0, 1], "scale_shift", False,
                        "none", False, 7)
            x, w, _, scale, shift, _ = call.tensors()
            window = (call.stride, call.padding, call.dilation, call.activation)
            with self.assertRaisesRegex(RuntimeError, "scale and shift come together"):
                torch.ops.convgen.conv2d(x, w, None, scale, None, None, *window)
            with self.assertRaisesRegex(RuntimeError, "not both"):
                torch.ops.convgen.conv2d(x, w, shift, scale, shift, None, *window)


class Loading(unittest.TestCase):
    def test_after_a_reload(self):
        # The loaded extension is the process's, not the module's: a
        # reloaded module finds it (the same library: its name; another, or
        # this one rebuilt: RuntimeError), where a second registration of
        # the operators would abort the process.
        module = importlib.reload(convgen_torch)
        self.assertEqual(module.load(LIBRARY_DIR, "torch_calls", runtime_dir=BUILD), LOADED)
        content_hash = module._content_hash
        try:
            module._content_hash = lambda paths: "0" * 16  # the library rebuilt, as load() sees it
            with self.assertRaises(RuntimeError):
                module.load(LIBRARY_DIR, "torch_calls", runtime_dir=BUILD)
        finally:
            module._content_hash = content_hash


if __name__ == "__main__":
    unittest.main(verbosity=2)
