# Sweep 28: `pointwise`'s epilogue in groups of 2 mma tiles (computed, then stored; the template now)
# against the whole tile's epilogue before any store (sweep 26's form, $PHASES_TEMPLATES) and the
# templates of 24351e1 ($BEFORE_TEMPLATES). The whole tile at once let ptxas read every parameter up
# front and some kernels spilled 8-16 bytes (tests/gpu/tensor_core.yaml's bfloat16 40 -> 200 with a
# residual and silu, sm_90; EfficientNet-B0's 144 -> 40); in groups of 2 none of 14 checked kernels
# spills on sm_80 or sm_90. Order: groups, before, whole, groups, before, whole.
# $SWEEP_DTYPE: float16 (default) or float32 (math tf32).
import os

DTYPE = os.environ.get("SWEEP_DTYPE", "float16")
if DTYPE == "float32":
    LAYOUT, MATH = "NHWC", "tf32"
before, whole = os.environ.get("BEFORE_TEMPLATES", ""), os.environ.get("PHASES_TEMPLATES", "")
TEMPLATES = {1: before, 2: whole, 4: before, 5: whole}
AB = [None] * 6
R = [  # (name, n, c, c_out, h, k, stride, act, variants); variant None is the default rule
    ("mnv2 b64 32-192 28 1x1", 64, 32, 192, 28, 1, 1, "relu6", AB),
    ("mnv2 b64 32-192 28 1x1 plain", 64, 32, 192, 28, 1, 1, "plain", AB),
    ("mnv2 b64 24-144 56 1x1", 64, 24, 144, 56, 1, 1, "relu6", AB),
    ("mnv2 b64 16-96 112 1x1", 64, 16, 96, 112, 1, 1, "relu6", AB),
    ("mnv2 b64 96-24 56 1x1", 64, 96, 24, 56, 1, 1, "none", AB),
    ("mnv2 b1 16-96 112 1x1", 1, 16, 96, 112, 1, 1, "relu6", AB),
    ("mnv3 b64 16-64 112 1x1", 64, 16, 64, 112, 1, 1, "relu", AB),
    ("effnet b64 144-40 28 1x1", 64, 144, 40, 28, 1, 1, "none", AB),
]
