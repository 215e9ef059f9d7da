# Sweep 29: `pointwise`'s epilogue parameters copied with the filter (cp.async, the filter's group; in
# half precision converted to fp32 after that group lands) against the templates before
# ($BEFORE_TEMPLATES: read one at a time with plain loads, whose wait came before a thread's first input
# copies: 11% of the stall samples of 32 -> 192's fused kernel in sweep 27's profile). Order: copied,
# before, copied, before. $SWEEP_DTYPE: float16 (default) or float32 (math tf32). The change is
# pointwise_param_copies.patch (it applies to the templates of the commit that adds it); the sweep was built
# with the patched templates installed and $BEFORE_TEMPLATES the templates as they are. Not kept: 0.90-1.07x
# the time before, 1.01x on 32 -> 192.
import os

DTYPE = os.environ.get("SWEEP_DTYPE", "float16")
if DTYPE == "float32":
    LAYOUT, MATH = "NHWC", "tf32"
before = os.environ.get("BEFORE_TEMPLATES", "")
TEMPLATES = {1: before, 3: before}
AB = [None] * 4
R = [  # (name, n, c, c_out, h, k, stride, act, variants); variant None is the default rule
    ("mnv2 b64 32-192 28 1x1", 64, 32, 192, 28, 1, 1, "relu6", AB),
    ("mnv2 b64 32-192 28 1x1 plain", 64, 32, 192, 28, 1, 1, "plain", AB),
    ("mnv2 b64 24-144 56 1x1", 64, 24, 144, 56, 1, 1, "relu6", AB),
    ("mnv2 b64 16-96 112 1x1", 64, 16, 96, 112, 1, 1, "relu6", AB),
    ("mnv2 b64 96-24 56 1x1", 64, 96, 24, 56, 1, 1, "none", AB),
    ("mnv2 b1 16-96 112 1x1", 1, 16, 96, 112, 1, 1, "relu6", AB),
    ("mnv2 b1 96-24 56 1x1", 1, 96, 24, 56, 1, 1, "none", AB),
    ("mnv2 b64 144-32 28 1x1", 64, 144, 32, 28, 1, 1, "none", AB),
    ("mnv3 b64 16-64 112 1x1", 64, 16, 64, 112, 1, 1, "relu", AB),
]
