# Sweep 26: `pointwise`'s epilogue in two phases, A/B in one build. The kernel as it was (variants 1
# and 3, templates of 24351e1 in $BEFORE_TEMPLATES) stored each channel pair to the staging tile as it
# computed it; the compiler could not tell the staging tile from the epilogue's parameters in shared
# memory, so it read the parameters again after every store (twice a pair of channels: 48 LDS.64 a tile
# of 96 channels) and waited on each read in turn (ptxas SASS, sm_90). Now (variants 0 and 2) the
# epilogue runs in the accumulators first (the parameters read once a pair of channels, the reads
# overlapping), then rounds and stores; in float16 and bfloat16 with relu or relu6 the activation
# follows the rounding, on pairs (convgen::PairClamp, as the staged depthwise kernel does). Variant 4
# (float16 only, $PHASES_TEMPLATES) is the two phases without the clamp after the rounding. SASS of
# 32 -> 192 relu6 float16: 720 -> 648 instructions, 83 -> 59 LDS, 128 registers both.
# Kept: the two phases alone (variant 4's template); the clamp after the rounding gained nothing measurable.
import os

DTYPE = os.environ.get("SWEEP_DTYPE", "float16")
if DTYPE == "float32":
    LAYOUT, MATH = "NHWC", "tf32"
TEMPLATES = {1: os.environ.get("BEFORE_TEMPLATES", ""), 3: os.environ.get("BEFORE_TEMPLATES", "")}
AB = [None] * 4
if DTYPE == "float16":
    TEMPLATES[4] = os.environ.get("PHASES_TEMPLATES", "")
    AB = [None] * 5


def pw(ct, tpw):
    return f"algorithm: pointwise, channel_tile: {ct}, tiles_per_warp: {tpw}"


# 144 -> 32 (implicit_gemm by the rule) as pointwise of 3 tiles a warp: 0 and 2 the two phases, 1 and
# 3 before; 4 the rule's kernel.
PW3 = [pw(32, 3)] * 4 + ["algorithm: implicit_gemm"]
R = [  # (name, n, c, c_out, h, k, stride, act, variants); variant None is the default rule
    ("mnv2 b64 32-192 28 1x1", 64, 32, 192, 28, 1, 1, "relu6", AB),
    ("mnv2 b64 32-192 28 1x1 plain", 64, 32, 192, 28, 1, 1, "plain", AB),
    ("mnv2 b64 24-144 56 1x1", 64, 24, 144, 56, 1, 1, "relu6", AB),
    ("mnv2 b64 24-144 56 1x1 plain", 64, 24, 144, 56, 1, 1, "plain", AB),
    ("mnv2 b64 16-96 112 1x1", 64, 16, 96, 112, 1, 1, "relu6", AB),
    ("mnv2 b64 16-96 112 1x1 plain", 64, 16, 96, 112, 1, 1, "plain", AB),
    ("mnv2 b64 96-24 56 1x1", 64, 96, 24, 56, 1, 1, "none", AB),
    ("mnv2 b64 96-24 56 1x1 plain", 64, 96, 24, 56, 1, 1, "plain", AB),
    ("mnv2 b64 144-24 56 1x1", 64, 144, 24, 56, 1, 1, "none", AB),
    ("mnv2 b64 144-32 28 1x1", 64, 144, 32, 28, 1, 1, "none", PW3 if DTYPE != "float32" else AB),
    ("mnv2 b1 16-96 112 1x1", 1, 16, 96, 112, 1, 1, "relu6", AB),
    ("mnv3 b64 16-64 112 1x1", 64, 16, 64, 112, 1, 1, "relu", AB),
    ("mnv3 b64 16-64 112 1x1 plain", 64, 16, 64, 112, 1, 1, "plain", AB),
]
