# Sweep 20 (prepared, not yet run): pointwise's epilogue parameters as one 16-byte shared-memory load a
# lane's channel pair ({a, a', b, b'}), against the two arrays read now. On 32 -> 192 the fused epilogue
# costs 1.30x the plain kernel's time (docs/benchmarks_h200.md), and ptxas for sm_90a shows where: the
# fused kernel has 216 more instructions than the plain one, 48 of them LDS.64 of parameters in the loop
# over tiles. With the patch they are 12 LDS.128 (83 -> 47 LDS in all), but the loop gains about 40
# integer instructions and 24 -> 144 takes 198 registers instead of 162 (two blocks an SM instead of
# three). Variant 2 is the default rule built from the patched templates:
#   cp -r templates /tmp/pt && patch -p2 -d /tmp/pt < prototypes/schedule_sweep/pointwise_param_pairs.patch
#   PATCHED_TEMPLATES=/tmp/pt ROWS=rows20 ...
# Variants 0, 1 and 3 are the default from this checkout's templates: the spread of the timing around it.
import os

TEMPLATES = {2: os.environ["PATCHED_TEMPLATES"]}
AB = [None, None, None, None]
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
    ("mnv2 b1 96-24 56 1x1", 1, 96, 24, 56, 1, 1, "none", AB),
]
