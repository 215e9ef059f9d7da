# Sweep 21: two template changes to `pointwise`, each timed against the templates as they are, in one
# build. Variant 2 is sweep 20's (pointwise_param_pairs.patch: the epilogue parameters as one 16-byte
# shared-memory load a lane's channel pair). Variants 4 and 5 give the kernel a block count in its launch
# bounds, __launch_bounds__(kThreads, 2) and (kThreads, 3). Today ptxas picks the register count on its
# own and two torchvision float16 kernels use local memory (docs/performance.md): MobileNetV3-Large's
# 16 -> 64 on 112^2 at batch 64 spills 4 bytes at 64 registers (sm_80 and sm_90a), MobileNetV2's
# 144 -> 24 with a residual 8 bytes at 128 (sm_80). With a block count of 2 or 3 both compile clean on
# both archs (67-68 and 150-152 registers), but other kernels move too (ptxas -v, sm_90a): 24 -> 144 fused
# 162 -> 146 registers, 144 -> 24 with a residual 128 -> 152, 32 -> 192 fused 128 -> 128 (2) or 106 (3).
# The templates of variants 2, 4 and 5 (from this checkout's templates/):
#   cp -r templates /tmp/pt && patch -p2 -d /tmp/pt < prototypes/schedule_sweep/pointwise_param_pairs.patch
#   for b in 2 3; do cp -r templates /tmp/pb$b && sed -i "s/__launch_bounds__(kThreads)$/__launch_bounds__(kThreads, $b)/" \
#     /tmp/pb$b/conv2d_nhwc_pointwise.cu.mustache; done
#   PATCHED_TEMPLATES=/tmp/pt BOUNDS2_TEMPLATES=/tmp/pb2 BOUNDS3_TEMPLATES=/tmp/pb3 ROWS=rows21 ...
# Variants 0, 1 and 3 are the default from this checkout's templates: the spread of the timing around it.
import os

TEMPLATES = {2: os.environ["PATCHED_TEMPLATES"], 4: os.environ["BOUNDS2_TEMPLATES"], 5: os.environ["BOUNDS3_TEMPLATES"]}
AB = [None] * 6
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
    ("mnv3 b64 16-64 112 1x1", 64, 16, 64, 112, 1, 1, "relu", AB),
    ("mnv3 b64 16-64 112 1x1 plain", 64, 16, 64, 112, 1, 1, "plain", AB),
]
