#!/usr/bin/env python3
"""tools/spec_from_model.py on a small PyTorch module (torch.fx path): folds
BatchNorm2d and ReLU6/SiLU/Hardswish modules, serves dense and depthwise
convolutions, leaves grouped ones out with the reason.

  test_spec_from_torch.py CONVGEN    (exits 77, skipped, where torch is missing)
"""
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(HERE, "..", "..", "tools", "spec_from_model.py")

try:
    import torch
    from torch import nn
except ImportError as e:
    if __name__ == "__main__":
        print(f"SKIPPED: {e}: the spec writer's PyTorch path needs torch (it runs on the GPU machine)")
        sys.exit(77)
    raise

CONVGEN = None


def tiny_net():
    """Stem, a depthwise block, a grouped convolution and a Hardswish head."""
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU6(),
        nn.Conv2d(16, 32, 5, padding=2, groups=16, bias=False), nn.BatchNorm2d(32), nn.SiLU(),
        nn.Conv2d(32, 32, 3, padding=1, groups=4),
        nn.Conv2d(32, 8, 1), nn.Hardswish(),
    )


class SpecFromTorch(unittest.TestCase):
    def test_tiny_net(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "tiny.yaml")
            env = dict(os.environ, PYTHONPATH=HERE + os.pathsep + os.environ.get("PYTHONPATH", ""))
            proc = subprocess.run([sys.executable, TOOL, "test_spec_from_torch:tiny_net", "--input", "3", "32", "32",
                                   "--batch", "2", "--library", "tiny", "--out", out],
                                  capture_output=True, text=True, env=env)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            with open(out) as f:
                text = f.read()
            workloads = [line[4:] for line in text.splitlines() if line.startswith("  - ")]
            self.assertEqual(workloads, [
                "{op: conv2d, n: 2, c: 3, c_out: 16, h: 32, w: 32, filter: 3, stride: 2, dilation: 1, "
                "padding: [1, 1, 1, 1], epilogue: scale_shift, activation: relu6}",
                "{op: depthwise_conv2d, n: 2, c: 16, h: 16, w: 16, filter: 5, stride: 1, dilation: 1, "
                "padding: [2, 2, 2, 2], multiplier: 2, epilogue: scale_shift, activation: silu}",
                "{op: conv2d, n: 2, c: 32, c_out: 8, h: 16, w: 16, filter: 1, stride: 1, dilation: 1, "
                "padding: [0, 0, 0, 0], epilogue: bias, activation: hardswish}"])
            self.assertIn("6: grouped convolution (groups=4 of 32 channels", text)
            check = subprocess.run([CONVGEN, "check", out], capture_output=True, text=True)
            self.assertEqual(check.returncode, 0, check.stderr)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__)
        sys.exit(2)
    CONVGEN = sys.argv.pop(1)
    unittest.main(verbosity=2)
