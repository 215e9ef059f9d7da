// The limits that the spec parser, the planner and the runtime's validation
// share, and convgen's version: each stated once, here.
#pragma once

// convgen's version: `convgen --version`, the tuning database's fingerprints
// and the CMake package's version (CMakeLists.txt reads it from this line).
#define CONVGEN_VERSION "0.2.0"

// Problem helpers (here and in convgen.h) are used on the host and inside
// the generic kernels.
#if defined(__CUDACC__)
#define CONVGEN_HOST_DEVICE __host__ __device__
#else
#define CONVGEN_HOST_DEVICE
#endif

namespace convgen {

// The largest batch a spec declares and one call runs: CUDA's grid.y/z limit.
inline constexpr int kMaxBatch = 65535;
// The most elements of any one tensor (input, filter, output, residual):
// kernels index with 64-bit offsets below this, and the generator's cost
// arithmetic stays far from overflow.
inline constexpr long long kMaxTensorElements = 1LL << 40;
// Static shared memory one block may use without the opt-in for more.
inline constexpr int kMaxStaticSharedBytes = 48 * 1024;
// The alignment a call's workspace (Conv2dArgs::workspace) must have: the
// widest vector a kernel moves through it.
inline constexpr int kWorkspaceAlignment = 16;

// The table of size limits: every field of a problem and every size derived
// from them, each bounded twice where the two kinds of kernel differ:
//   generic:   what validate() accepts, so what every call may ask and the
//              generic kernels (runtime/src/convgen.cu) serve;
//   generated: what a spec's workload may state, so what the specialized
//              kernels the generator emits are made for (never more than
//              `generic`: every generated problem is a valid call).
// validate() forms every derived size in 64 bits from the fields and checks
// it against `generic`; the spec parser checks `generated` at the spec's
// file:line:col. docs/hardening.md shows this table (`convgen limits`).
struct SizeLimit {
  const char* quantity;  // the fields, or the derived size, as messages name it
  long long generic;
  long long generated;
  const char* why_generic;
  const char* why_generated;
};

// The generic bound of most fields: 2^24. A sum of three of them
// (h + pad_top + pad_bottom, or a position oy * stride_h - pad_top +
// ky * dilation_h, which validation keeps inside the padded input) stays
// below 3 x 2^24 < 2^31, so the kernels' position arithmetic is safe in
// 32-bit int; every product of fields is formed in 64 bits and bounded by a
// derived row. Before this table the runtime took any positive int (a
// dilation of 1431655766 wrapped the output height); no network comes near
// 2^24 in any of these fields.
inline constexpr long long kMaxGenericField = 1LL << 24;
inline constexpr const char* kGenericFieldWhy =
    "the bound every field shares: a sum of three (h + pads, a position) stays inside 32-bit int, 3 x 2^24 < 2^31";

inline constexpr SizeLimit kBatchLimit{
    "n", kMaxBatch, kMaxBatch, "one grid slice per image: CUDA's grid.y/z limit",
    "the same; a kernel whose 32-bit launch indices run out sooner states its own max_batch"};
inline constexpr SizeLimit kChannelsLimit{"c", kMaxGenericField, 65535, kGenericFieldWhy,
                                          "a depthwise tiles kernel launches one grid.y slot per channel"};
inline constexpr SizeLimit kOutChannelsLimit{"output channels (c_out, c x multiplier)", kMaxGenericField,
                                             65535LL * 8, "as c's: a channel index is an int in the kernels",
                                             "implied: c_out takes c's range; c x multiplier at most 65535 x 8"};
inline constexpr SizeLimit kMultiplierLimit{"multiplier", kMaxGenericField, 8,
                                            "bounded by the output channels too",
                                            "the kernels unroll an input channel's output channels"};
inline constexpr SizeLimit kExtentLimit{"h, w", kMaxGenericField, 32768, kGenericFieldWhy,
                                        "the largest side a spec states (the plane limit binds first on square "
                                        "planes)"};
inline constexpr SizeLimit kFilterLimit{"kh, kw", kMaxGenericField, 11,
                                        "the shared bound; the dilated filter must also fit the padded input",
                                        "the taps are unrolled into registers; a larger filter runs on the generic "
                                        "kernel"};
inline constexpr SizeLimit kStrideLimit{"stride_h, stride_w", kMaxGenericField, 8, kGenericFieldWhy,
                                        "a tile's input halo in shared memory grows with the stride"};
inline constexpr SizeLimit kDilationLimit{"dilation_h, dilation_w", kMaxGenericField, 8,
                                          "the shared bound; the dilated filter must also fit the padded input",
                                          "a tile's input halo in shared memory grows with the dilation"};
inline constexpr SizeLimit kPaddingLimit{"pad_top, pad_bottom, pad_left, pad_right", kMaxGenericField, 64,
                                         kGenericFieldWhy,
                                         "and at most the dilated filter's reach d*(k-1): a wider pad makes "
                                         "all-zero rows, almost surely a typo"};
inline constexpr SizeLimit kGroupsLimit{"groups (conv2d)", 1, 1,
                                        "dense only; depthwise (groups = c) is its own operator", "the same"};
inline constexpr SizeLimit kOutExtentLimit{
    "output height, width", kMaxGenericField, 32768 + 2 * 64,
    "the true floor((h + pads - d*(k-1) - 1) / stride) + 1, at least 1: the dilated filter fits the padded input",
    "implied by h, w and padding"};
inline constexpr SizeLimit kPlaneLimit{"plane (h x w, out_h x out_w)", kMaxTensorElements, 1LL << 28,
                                       "offsets are 64-bit: only the tensor limit",
                                       "offsets inside one channel plane are 32-bit"};
inline constexpr SizeLimit kReductionLimit{"reduction (c x kh x kw; kh x kw for depthwise)", 1LL << 30,
                                           65535LL * 11 * 11,
                                           "the dense kernel steps through it in 32-bit int, 16 at a time",
                                           "implied by c and the filter"};
inline constexpr SizeLimit kTensorElementsLimit{
    "elements of a tensor (input, filter, output, residual)", kMaxTensorElements, kMaxTensorElements,
    "offsets across planes and images are 64-bit", "the same; the generator's cost arithmetic stays far from overflow"};
inline constexpr SizeLimit kTensorBytesLimit{"bytes of a tensor (float32)", 4 * kMaxTensorElements,
                                             4 * kMaxTensorElements,
                                             "the overlap checks compare 64-bit byte ranges", "implied by the elements"};

// Every row, in the order docs/hardening.md shows them.
inline constexpr const SizeLimit* kSizeLimits[] = {
    &kBatchLimit,     &kChannelsLimit, &kOutChannelsLimit, &kMultiplierLimit,     &kExtentLimit,
    &kFilterLimit,    &kStrideLimit,   &kDilationLimit,    &kPaddingLimit,        &kGroupsLimit,
    &kOutExtentLimit, &kPlaneLimit,    &kReductionLimit,   &kTensorElementsLimit, &kTensorBytesLimit,
};

// One output extent, as PyTorch defines it, from 64-bit arithmetic:
// floor((in + pad_a + pad_b - dilation * (k - 1) - 1) / stride) + 1. Zero or
// negative when the dilated filter does not fit the padded input (an empty
// output). Exact for any int fields with stride >= 1: nothing wraps.
CONVGEN_HOST_DEVICE constexpr long long output_extent(long long in, long long pad_a, long long pad_b, long long k,
                                                      long long stride, long long dilation) {
  const long long span = in + pad_a + pad_b - dilation * (k - 1) - 1;
  return (span >= 0 ? span / stride : -((-span + stride - 1) / stride)) + 1;
}

}  // namespace convgen
