#!/usr/bin/env python3
"""tools/spec_from_model.py on ONNX models built here with onnx.helper (no GPU,
no torch): what it serves, what it folds, what it leaves out and why, that its
output is the same on every run, that convgen accepts the spec it writes,
that a model it serves nothing of is an error that writes nothing, and that
external data is read only when asked.

  test_spec_from_model.py CONVGEN    (exits 77, skipped, where onnx is missing)
"""
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:
    print(f"SKIPPED: {e}: the spec writer's ONNX tests need the onnx package (scripts/install_deps.sh installs it)")
    sys.exit(77)

import spec_from_model  # noqa: E402

CONVGEN = None


def conv_node(name, x, c, c_out, k, groups=1, stride=1, pads=None, bias=True, dilation=1, auto_pad=None):
    """A Conv node and its initializers (weights OIHW)."""
    inits = [numpy_helper.from_array(np.zeros((c_out, c // groups, k, k), np.float32), f"{name}_w")]
    inputs = [x, f"{name}_w"]
    if bias:
        inits.append(numpy_helper.from_array(np.zeros(c_out, np.float32), f"{name}_b"))
        inputs.append(f"{name}_b")
    attrs = {"kernel_shape": [k, k], "strides": [stride, stride], "group": groups, "dilations": [dilation, dilation]}
    if auto_pad:
        attrs["auto_pad"] = auto_pad
    else:
        attrs["pads"] = pads if pads is not None else [k // 2] * 4
    return helper.make_node("Conv", inputs, [f"{name}_y"], name=name, **attrs), inits


def batch_norm(name, x, c):
    inits = [numpy_helper.from_array(np.ones(c, np.float32), f"{name}_{p}") for p in ("s", "b", "m", "v")]
    node = helper.make_node("BatchNormalization", [x] + [f"{name}_{p}" for p in ("s", "b", "m", "v")],
                            [f"{name}_y"], name=name)
    return node, inits


def model(nodes, inits, x_shape, y, elem=TensorProto.FLOAT):
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", elem, x_shape)],
                              [helper.make_tensor_value_info(y, elem, None)], initializer=inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


class SpecFromOnnx(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, m, name="m.onnx"):
        path = os.path.join(self.tmp.name, name)
        onnx.save(m, path)
        return path

    def run_tool(self, m, out, *extra):
        return subprocess.run([sys.executable, os.path.join(HERE, "..", "..", "tools", "spec_from_model.py"),
                               self.write(m), "--out", out, "--library", "net", *extra], capture_output=True, text=True)

    def spec(self, m, *extra):
        out = os.path.join(self.tmp.name, "spec.yaml")
        proc = self.run_tool(m, out, *extra)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(out) as f:
            return f.read(), proc.stderr, out

    def workloads(self, text):
        return [line[4:] for line in text.splitlines() if line.startswith("  - ")]

    def test_depthwise_with_batch_norm_and_relu6_folds_into_one_workload(self):
        conv, ci = conv_node("dw", "x", 32, 32, 3, groups=32, bias=False)
        bn, bi = batch_norm("bn", "dw_y", 32)
        lo = numpy_helper.from_array(np.array(0, np.float32), "lo")
        hi = numpy_helper.from_array(np.array(6, np.float32), "hi")
        clip = helper.make_node("Clip", ["bn_y", "lo", "hi"], ["y"], name="clip")
        text, _, _ = self.spec(model([conv, bn, clip], ci + bi + [lo, hi], [1, 32, 112, 112], "y"), "--batch", "1", "64")
        self.assertEqual(self.workloads(text), [
            "{op: depthwise_conv2d, n: 1, c: 32, h: 112, w: 112, filter: 3, stride: 1, dilation: 1, "
            "padding: [1, 1, 1, 1], multiplier: 1, epilogue: scale_shift, activation: relu6}",
            "{op: depthwise_conv2d, n: 64, c: 32, h: 112, w: 112, filter: 3, stride: 1, dilation: 1, "
            "padding: [1, 1, 1, 1], multiplier: 1, epilogue: scale_shift, activation: relu6}"])
        self.assertIn("# Left out: none.", text)

    def test_dense_with_bias_relu_silu_and_hardswish(self):
        c1, i1 = conv_node("c1", "x", 16, 24, 1, pads=[0, 0, 0, 0])
        relu = helper.make_node("Relu", ["c1_y"], ["r"], name="relu")
        c2, i2 = conv_node("c2", "r", 24, 24, 3, stride=2)
        sig = helper.make_node("Sigmoid", ["c2_y"], ["s"], name="sig")
        mul = helper.make_node("Mul", ["c2_y", "s"], ["m"], name="mul")
        c3, i3 = conv_node("c3", "m", 24, 8, 5, auto_pad="SAME_UPPER")
        hs = helper.make_node("HardSwish", ["c3_y"], ["y"], name="hs")
        text, _, _ = self.spec(model([c1, relu, c2, sig, mul, c3, hs], i1 + i2 + i3, [2, 16, 20, 20], "y"))
        self.assertEqual(self.workloads(text), [
            "{op: conv2d, n: 1, c: 16, c_out: 24, h: 20, w: 20, filter: 1, stride: 1, dilation: 1, "
            "padding: [0, 0, 0, 0], epilogue: bias, activation: relu}",
            "{op: conv2d, n: 1, c: 24, c_out: 24, h: 20, w: 20, filter: 3, stride: 2, dilation: 1, "
            "padding: [1, 1, 1, 1], epilogue: bias, activation: silu}",
            "{op: conv2d, n: 1, c: 24, c_out: 8, h: 10, w: 10, filter: 5, stride: 1, dilation: 1, "
            "padding: [2, 2, 2, 2], epilogue: bias, activation: hardswish}"])

    def test_math_tf32_on_the_dense_float32_convolutions_only(self):
        dense, di = conv_node("dense", "x", 16, 32, 3)
        dw, wi = conv_node("dw", "dense_y", 32, 32, 3, groups=32)
        text, _, path = self.spec(model([dense, dw], di + wi, [1, 16, 20, 20], "dw_y"), "--math", "tf32")
        workloads = self.workloads(text)
        self.assertTrue(workloads[0].startswith("{op: conv2d,") and workloads[0].endswith(", math: tf32}"), workloads)
        self.assertNotIn("math", workloads[1])
        if CONVGEN:
            proc = subprocess.run([CONVGEN, "check", path], capture_output=True, text=True)
            self.assertEqual(proc.returncode, 0, proc.stderr)
        # Half-precision workloads keep fp32 (their products are exact in fp32).
        text, _, _ = self.spec(model([dense], di, [1, 16, 20, 20], "dense_y"), "--math", "tf32", "--dtype", "float16",
                               "--channels-last")
        self.assertNotIn("math", text.split("workloads:")[1])
        proc = self.run_tool(model([dense], di, [1, 16, 20, 20], "dense_y"), os.path.join(self.tmp.name, "x.yaml"),
                             "--math", "TF32")
        self.assertEqual(proc.returncode, 2)
        self.assertIn("invalid choice: 'TF32'", proc.stderr)

    def test_left_out_with_reasons(self):
        served, si = conv_node("served", "x", 8, 8, 3)
        grouped, gi = conv_node("grouped", "served_y", 8, 8, 3, groups=2)
        text, err, _ = self.spec(model([served, grouped], si + gi, [1, 8, 8, 8], "grouped_y"))
        self.assertEqual(len(self.workloads(text)), 1)
        self.assertIn("grouped: grouped convolution (groups=2 of 8 channels", text)
        self.assertIn("left out grouped: grouped convolution", err)

    def assert_nothing_written(self, proc, out):
        self.assertEqual(proc.returncode, 3, proc.stderr)
        self.assertEqual(proc.stdout, "")
        self.assertFalse(os.path.exists(out), "a spec was written though no layer is served")
        self.assertEqual(sorted(os.listdir(self.tmp.name)), ["m.onnx"], "a temporary file was left behind")
        self.assertNotIn("Traceback", proc.stderr)

    def test_no_convolution_is_an_error_naming_the_layers_and_writes_nothing(self):
        w = numpy_helper.from_array(np.zeros((16, 8), np.float32), "fc_w")
        fc = helper.make_node("MatMul", ["x", "fc_w"], ["fc_y"], name="fc")
        relu = helper.make_node("Relu", ["fc_y"], ["y"], name="relu")
        out = os.path.join(self.tmp.name, "spec.yaml")
        proc = self.run_tool(model([fc, relu], [w], [1, 16], "y"), out)
        self.assert_nothing_written(proc, out)
        self.assertEqual(proc.stderr.splitlines(), [
            f"spec_from_model: error: no layer of {self.tmp.name}/m.onnx is served, so no spec is written: it has "
            "no 2-D convolution, and convolutions are all that convgen serves.",
            "spec_from_model: its 2 layers:",
            "spec_from_model:   fc: MatMul [1, 16] -> [1, 8]",
            "spec_from_model:   relu: Relu [1, 8] -> [1, 8]"])

    def test_no_convolution_served_names_each_reason(self):
        wide, hi = conv_node("wide", "x", 8, 8, 3)
        for init in hi:
            init.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(init).astype(np.float64), init.name))
        relu = helper.make_node("Relu", ["wide_y"], ["y"], name="relu")
        out = os.path.join(self.tmp.name, "spec.yaml")
        proc = self.run_tool(model([wide, relu], hi, [1, 8, 8, 8], "y", TensorProto.DOUBLE), out)
        self.assert_nothing_written(proc, out)
        self.assertIn("so no spec is written: convgen serves none of its 1 convolution.\n", proc.stderr)
        self.assertIn("  wide: Conv [1, 8, 8, 8] -> [1, 8, 8, 8]: left out: dtype double (convgen serves float32, "
                      "float16, bfloat16)\n", proc.stderr)
        self.assertIn("  relu: Relu [1, 8, 8, 8] -> [1, 8, 8, 8]", proc.stderr)
        # A float16 conv in NCHW, which no dense algorithm serves: convgen check says so.
        half, fi = conv_node("half", "x", 8, 8, 3)
        for init in fi:
            init.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(init).astype(np.float16), init.name))
        proc = self.run_tool(model([half], fi, [1, 8, 8, 8], "half_y", TensorProto.FLOAT16), out, "--convgen",
                             CONVGEN)
        self.assert_nothing_written(proc, out)
        self.assertIn("  half: Conv [1, 8, 8, 8] -> [1, 8, 8, 8]: left out: no algorithm of conv2d serves float16 "
                      "NCHW yet", proc.stderr)

    def test_a_long_list_of_layers_is_cut_short_with_their_kinds(self):
        nodes = [helper.make_node("Relu", ["x"], ["r0"], name="r0")]
        for i in range(1, 15):
            nodes.append(helper.make_node("Relu" if i % 2 else "Sigmoid", [f"r{i - 1}"], [f"r{i}"], name=f"r{i}"))
        out = os.path.join(self.tmp.name, "spec.yaml")
        proc = self.run_tool(model(nodes, [], [1, 4], "r14"), out)
        self.assert_nothing_written(proc, out)
        self.assertIn("its 15 layers:", proc.stderr)
        self.assertIn("  r11: Relu [1, 4] -> [1, 4]\n", proc.stderr)
        self.assertNotIn("r12:", proc.stderr)
        self.assertTrue(proc.stderr.endswith("  ... and 3 more: 2 Sigmoid, 1 Relu\n"), proc.stderr)

    def test_nothing_folds_into_a_convolution_whose_output_is_read_twice(self):
        c1, i1 = conv_node("c1", "x", 8, 8, 3)
        bn, bi = batch_norm("bn", "c1_y", 8)
        add = helper.make_node("Add", ["bn_y", "c1_y"], ["y"], name="add")
        text, _, _ = self.spec(model([c1, bn, add], i1 + bi, [1, 8, 8, 8], "y"))
        self.assertEqual(self.workloads(text), [
            "{op: conv2d, n: 1, c: 8, c_out: 8, h: 8, w: 8, filter: 3, stride: 1, dilation: 1, "
            "padding: [1, 1, 1, 1], epilogue: bias, activation: none}"])

    def test_same_problem_once_and_the_same_bytes_every_run(self):
        c1, i1 = conv_node("c1", "x", 8, 8, 3, groups=8)
        c2, i2 = conv_node("c2", "c1_y", 8, 8, 3, groups=8)
        m = model([c1, c2], i1 + i2, [1, 8, 8, 8], "c2_y")
        first, _, _ = self.spec(m, "--batch", "4")
        second, _, _ = self.spec(m, "--batch", "4")
        self.assertEqual(first, second)
        self.assertEqual(len(self.workloads(first)), 1)
        self.assertIn("# 2 convolutions, 2 served, 1 distinct workloads.", first)

    def test_convgen_accepts_the_spec(self):
        conv, ci = conv_node("dw", "x", 32, 64, 3, groups=32, stride=2)
        relu = helper.make_node("Relu", ["dw_y"], ["y"], name="relu")
        _, _, path = self.spec(model([conv, relu], ci, [1, 32, 30, 30], "y"), "--batch", "1", "8")
        proc = subprocess.run([CONVGEN, "check", path], capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("has 2 kernels", proc.stdout + proc.stderr)

    def test_what_convgen_refuses_is_left_out_with_its_message(self):
        # A ViT patchify conv (16x16, stride 16: past a spec's filter and
        # stride limits) beside a depthwise and a 1x1 conv; asked for
        # float32 NHWC, where no dense algorithm serves: convgen check
        # refuses those two, and the spec keeps the depthwise one only.
        patch, pi = conv_node("patch", "x", 3, 32, 16, stride=16, pads=[0, 0, 0, 0])
        dw, di = conv_node("dw", "patch_y", 32, 32, 3, groups=32)
        pw, wi = conv_node("pw", "dw_y", 32, 16, 1, pads=[0, 0, 0, 0])
        m = model([patch, dw, pw], pi + di + wi, [1, 3, 224, 224], "pw_y")
        text, err, path = self.spec(m, "--batch", "1", "8", "--channels-last", "--convgen", CONVGEN)
        self.assertEqual(len(self.workloads(text)), 2, text)
        self.assertTrue(all("depthwise_conv2d" in w for w in self.workloads(text)))
        self.assertIn("defaults: {dtype: float32, layout: NHWC}", text)
        self.assertIn("#   patch: 'filter' must be an integer from 1 to 11, got 16 (convgen check)", text)
        self.assertIn("#   pw: no algorithm of conv2d serves float32 math fp32 NHWC yet", text)
        self.assertIn("# 3 convolutions, 1 served, 2 distinct workloads.", text)
        self.assertIn("left out patch: 'filter' must be", err)
        proc = subprocess.run([CONVGEN, "check", path], capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        # In float16 the 1x1 conv is served too (implicit_gemm).
        text, _, _ = self.spec(m, "--batch", "1", "--channels-last", "--dtype", "float16", "--convgen", CONVGEN)
        self.assertEqual(len(self.workloads(text)), 2, text)
        self.assertIn("defaults: {dtype: float16, layout: NHWC}", text)

    def test_external_data_is_read_only_when_asked(self):
        # A depthwise conv and a Clip whose bounds (0 and 6) the model keeps
        # in an external file: a ReLU6 only to a reader of that file.
        conv, ci = conv_node("dw", "x", 8, 8, 3, groups=8, bias=False)
        lo = numpy_helper.from_array(np.array(0, np.float32), "lo")
        hi = numpy_helper.from_array(np.array(6, np.float32), "hi")
        clip = helper.make_node("Clip", ["dw_y", "lo", "hi"], ["y"], name="clip")
        path = os.path.join(self.tmp.name, "ext.onnx")
        onnx.save(model([conv, clip], ci + [lo, hi], [1, 8, 16, 16], "y"), path, save_as_external_data=True,
                  all_tensors_to_one_file=True, location="ext.data", size_threshold=0)
        tool = [sys.executable, os.path.join(HERE, "..", "..", "tools", "spec_from_model.py"), path,
                "--library", "net", "--out", "-"]

        asked = subprocess.run(tool + ["--external-data"], capture_output=True, text=True)
        self.assertEqual(asked.returncode, 0, asked.stderr)
        self.assertIn("activation: relu6}", asked.stdout)

        # Not asked: the same shapes, from the model alone; the bounds unread.
        os.rename(os.path.join(self.tmp.name, "ext.data"), os.path.join(self.tmp.name, "moved.data"))
        plain = subprocess.run(tool, capture_output=True, text=True)
        self.assertEqual(plain.returncode, 0, plain.stderr)
        self.assertIn("{op: depthwise_conv2d, n: 1, c: 8, h: 16, w: 16, filter: 3,", plain.stdout)
        self.assertIn("activation: none}", plain.stdout)
        # Asked, the file the model names must be there: it was read.
        missing = subprocess.run(tool + ["--external-data"], capture_output=True, text=True)
        self.assertEqual(missing.returncode, 1, missing.stderr)
        self.assertIn("spec_from_model: cannot read", missing.stderr)

    def test_a_bad_model_is_an_error_not_a_traceback(self):
        path = os.path.join(self.tmp.name, "broken.onnx")
        with open(path, "wb") as f:
            f.write(b"not a model")
        proc = subprocess.run([sys.executable, os.path.join(HERE, "..", "..", "tools", "spec_from_model.py"), path,
                               "--out", os.path.join(self.tmp.name, "s.yaml"), "--library", "net"],
                              capture_output=True, text=True)
        self.assertEqual(proc.returncode, 1)
        self.assertIn("spec_from_model: cannot read", proc.stderr)
        self.assertNotIn("Traceback", proc.stderr)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__)
        sys.exit(2)
    CONVGEN = sys.argv.pop(1)
    unittest.main(verbosity=2)
