// convgen runtime: problem and pointer validation, lookup in a generated
// registry, and the generic kernel that serves every other problem.
#include "convgen/convgen.h"

#include "convgen/element_bf16.h"
#include "convgen/element_f16.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace convgen {

const char* to_string(StatusCode code) {
  switch (code) {
    case StatusCode::kSuccess: return "success";
    case StatusCode::kInvalidProblem: return "invalid problem";
    case StatusCode::kInvalidPointer: return "invalid pointer";
    case StatusCode::kNoSpecializedKernel: return "no specialized kernel";
    case StatusCode::kCudaError: return "CUDA error";
    case StatusCode::kUnsupportedDevice: return "unsupported device";
  }
  return "unknown status";
}

// Messages are built without iostreams: a library linked into another
// program (a PyTorch extension, say) must not depend on the host's stream
// and locale state.
namespace {
std::string num(int v) { return std::to_string(v); }

// " k3x3 stride 1x1 pad 1,1,1,1 dilation 1x1": the window fields both problems share.
template <class Problem>
std::string window_text(const Problem& p) {
  return " k" + num(p.kh) + "x" + num(p.kw) + " stride " + num(p.stride_h) + "x" + num(p.stride_w) + " pad " +
         num(p.pad_top) + "," + num(p.pad_bottom) + "," + num(p.pad_left) + "," + num(p.pad_right) + " dilation " +
         num(p.dilation_h) + "x" + num(p.dilation_w);
}

// A value of an enum as messages and names show it: a field of its row, or
// `prefix` and its number where it names no row (a problem validate() then
// refuses).
template <class Enum, class Row, int N, class Field>
std::string enum_text(Enum value, const Row (&table)[N], Field field, const std::string& prefix = "") {
  if (is_enumerator(value, table)) return row(value).*field;
  return prefix + num(static_cast<int>(value));
}

// "f16 NHWC" ("dtype 7 NHWC").
template <class Problem>
std::string storage_text(const Problem& p) {
  return enum_text(p.dtype, kDataTypeTable, &DataTypeRow::name_part, "dtype ") + " " +
         enum_text(p.layout, kLayoutTable, &LayoutRow::word, "layout ");
}

// "bias", "relu".
std::string epilogue_text(Epilogue e) { return enum_text(e, kEpilogueTable, &EpilogueRow::word); }
std::string activation_text(Activation a) { return enum_text(a, kActivationTable, &ActivationRow::word); }

// " math tf32" where the products may be other than fp32 ("" for fp32).
std::string math_text(Math m) {
  return m == Math::kFloat32 ? "" : " math " + enum_text(m, kMathTable, &MathRow::word);
}

// "f16_nhwc" ("dtype7_nhwc").
template <class Problem>
std::string generic_name_part(const Problem& p) {
  return enum_text(p.dtype, kDataTypeTable, &DataTypeRow::name_part, "dtype") + "_" +
         enum_text(p.layout, kLayoutTable, &LayoutRow::name_part, "layout");
}
}  // namespace

std::string describe(const DepthwiseProblem& p) {
  return "depthwise conv2d " + storage_text(p) + " n" + num(p.n) + " c" + num(p.c) + " h" + num(p.h) + " w" + num(p.w) +
         window_text(p) + " multiplier " + num(p.multiplier) + " epilogue " + epilogue_text(p.epilogue) +
         " activation " + activation_text(p.activation);
}

std::string describe(const Conv2dProblem& p) {
  return "conv2d " + storage_text(p) + " n" + num(p.n) + " c" + num(p.c) + " c_out " + num(p.c_out) + " h" + num(p.h) + " w" +
         num(p.w) + window_text(p) + " groups " + num(p.groups) + " epilogue " + epilogue_text(p.epilogue) +
         (p.residual ? " + residual" : "") + " activation " + activation_text(p.activation) + math_text(p.math);
}

std::string generic_kernel_name(const DepthwiseProblem& p) { return "generic_depthwise_" + generic_name_part(p); }

std::string generic_kernel_name(const Conv2dProblem& p) { return "generic_conv2d_" + generic_name_part(p); }

namespace {

Status error(StatusCode code, const std::string& message) { return {code, message}; }

// Pointers must be aligned to an element of the problem's dtype.
Status check_pointer(const void* p, const char* name, bool wanted, int element_size) {
  if (wanted && p == nullptr) return error(StatusCode::kInvalidPointer, std::string(name) + " is null");
  if (!wanted && p != nullptr) {
    return error(StatusCode::kInvalidPointer,
                 std::string(name) + " is set but the problem does not use it; pass null");
  }
  if (p != nullptr && reinterpret_cast<std::uintptr_t>(p) % element_size != 0) {
    return error(StatusCode::kInvalidPointer, std::string(name) + " is not " + std::to_string(element_size) +
                                                  "-byte aligned (one element)");
  }
  return Status::Ok();
}

}  // namespace

namespace {

// a * b for a, b >= 0, or kSaturated when the product would pass it: the
// exact value whenever it is below any limit, and no signed overflow for
// any fields.
constexpr long long kSaturated = 1LL << 62;
long long times(long long a, long long b) { return a != 0 && b > kSaturated / a ? kSaturated : a * b; }
long long times(long long a, long long b, long long c) { return times(times(a, b), c); }
long long times(long long a, long long b, long long c, long long d) { return times(times(a, b), times(c, d)); }

// The sizes a problem derives from its fields, each formed in 64 bits (the
// element counts saturated, and an empty output counting 0), so none wraps:
// the values the kernels index with once they are within the limits.
struct DerivedSizes {
  long long out_channels = 0;
  long long out_h = 0, out_w = 0;  // the true extents: < 1 for an empty output
  long long reduction = 0;         // products summed into one output
  long long input_elements = 0, filter_elements = 0, output_elements = 0;
};

long long positive(int v) { return std::max(v, 0); }

template <class Problem>
DerivedSizes geometry_sizes(const Problem& p, long long out_channels, long long reduction) {
  DerivedSizes d;
  d.out_channels = out_channels;
  d.out_h = p.out_h();
  d.out_w = p.out_w();
  d.reduction = reduction;
  d.input_elements = times(positive(p.n), positive(p.c), positive(p.h), positive(p.w));
  d.filter_elements = times(d.out_channels, d.reduction);
  d.output_elements = times(positive(p.n), d.out_channels, std::max(d.out_h, 0LL), std::max(d.out_w, 0LL));
  return d;
}

DerivedSizes derived_sizes(const DepthwiseProblem& p) {
  return geometry_sizes(p, times(positive(p.c), positive(p.multiplier)), times(positive(p.kh), positive(p.kw)));
}

DerivedSizes derived_sizes(const Conv2dProblem& p) {
  return geometry_sizes(p, positive(p.c_out), times(positive(p.c), positive(p.kh), positive(p.kw)));
}

// "" when `value` of `what` is at most the limit's generic bound; else why not.
std::string over(const std::string& what, long long value, const SizeLimit& limit) {
  if (value <= limit.generic) return "";
  return what + " is " + std::to_string(value) + "; at most " + std::to_string(limit.generic) + " (" +
         limit.why_generic + ")";
}

// What every convolution problem must satisfy: one window geometry, one
// data type and layout, and every field and derived size within the generic
// column of the limits table (convgen/limits.h). Checked in an order in
// which each check's arithmetic is safe given the ones before it.
template <class Problem>
Status validate_geometry(const Problem& p, const std::string& channels_text) {
  auto bad = [&](const std::string& what) {
    return error(StatusCode::kInvalidProblem, what + " (" + describe(p) + ")");
  };
  const long long element = element_bytes(p.dtype);
  if (p.n < 1 || p.c < 1 || p.h < 1 || p.w < 1) return bad("n, c, h and w must be at least 1");
  if (p.n > kMaxBatch) return bad("n must be at most " + std::to_string(kMaxBatch));
  if (p.kh < 1 || p.kw < 1) return bad("the filter must be at least 1x1");
  if (p.stride_h < 1 || p.stride_w < 1) return bad("strides must be at least 1");
  if (p.dilation_h < 1 || p.dilation_w < 1) return bad("dilations must be at least 1");
  if (p.pad_top < 0 || p.pad_bottom < 0 || p.pad_left < 0 || p.pad_right < 0) return bad("padding must be >= 0");
  const std::pair<const char*, int> fields[] = {
      {"c", p.c}, {"h", p.h}, {"w", p.w}, {"kh", p.kh}, {"kw", p.kw}, {"stride_h", p.stride_h},
      {"stride_w", p.stride_w}, {"dilation_h", p.dilation_h}, {"dilation_w", p.dilation_w},
      {"pad_top", p.pad_top}, {"pad_bottom", p.pad_bottom}, {"pad_left", p.pad_left}, {"pad_right", p.pad_right}};
  const SizeLimit* field_limits[] = {&kChannelsLimit, &kExtentLimit,   &kExtentLimit,   &kFilterLimit,
                                     &kFilterLimit,   &kStrideLimit,   &kStrideLimit,   &kDilationLimit,
                                     &kDilationLimit, &kPaddingLimit,  &kPaddingLimit,  &kPaddingLimit,
                                     &kPaddingLimit};
  static_assert(sizeof(fields) / sizeof(fields[0]) == sizeof(field_limits) / sizeof(field_limits[0]), "one limit a field");
  for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); ++i) {
    if (std::string why = over(fields[i].first, fields[i].second, *field_limits[i]); !why.empty()) return bad(why);
  }
  // The fields are small now; the derived sizes are still formed in 64 bits.
  const DerivedSizes d = derived_sizes(p);
  if (d.out_h < 1 || d.out_w < 1) {
    return bad("the dilated filter is larger than the padded input: the output would be empty (output " +
               std::to_string(d.out_h) + "x" + std::to_string(d.out_w) + ")");
  }
  const std::pair<std::string, long long> sizes[] = {
      {channels_text, d.out_channels},
      {"the output height", d.out_h},
      {"the output width", d.out_w},
      {"the input plane h x w", times(p.h, p.w)},
      {"the output plane", times(d.out_h, d.out_w)},
      {"the reduction length", d.reduction},
      {"the input's element count", d.input_elements},
      {"the filter's element count", d.filter_elements},
      {"the output's element count", d.output_elements},
      {"the input's bytes", times(d.input_elements, element)},
      {"the filter's bytes", times(d.filter_elements, element)},
      {"the output's bytes", times(d.output_elements, element)}};
  const SizeLimit* size_limits[] = {&kOutChannelsLimit,    &kOutExtentLimit,      &kOutExtentLimit,
                                    &kPlaneLimit,          &kPlaneLimit,          &kReductionLimit,
                                    &kTensorElementsLimit, &kTensorElementsLimit, &kTensorElementsLimit,
                                    &kTensorBytesLimit,    &kTensorBytesLimit,    &kTensorBytesLimit};
  static_assert(sizeof(sizes) / sizeof(sizes[0]) == sizeof(size_limits) / sizeof(size_limits[0]), "one limit a size");
  for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); ++i) {
    if (std::string why = over(sizes[i].first, sizes[i].second, *size_limits[i]); !why.empty()) return bad(why);
  }
  return Status::Ok();
}

// Whether two ranges of elements share a byte, from their true 64-bit
// extents (each at most kTensorBytesLimit.generic bytes once validated).
bool overlap(const void* a, long long a_elements, const void* b, long long b_elements, int element_size) {
  const auto a0 = reinterpret_cast<std::uintptr_t>(a);
  const auto b0 = reinterpret_cast<std::uintptr_t>(b);
  const auto a_bytes = static_cast<std::uintptr_t>(a_elements) * element_size;
  const auto b_bytes = static_cast<std::uintptr_t>(b_elements) * element_size;
  return a0 < b0 + b_bytes && b0 < a0 + a_bytes;
}

}  // namespace

namespace {

// "the enum's enumerators (float32, float16, bfloat16)".
template <class Row, int N>
std::string enumerators(const char* type, const Row (&table)[N]) {
  std::string words;
  for (const Row& r : table) words += (words.empty() ? "" : ", ") + std::string(r.word);
  return std::string(type) + "'s enumerators (" + words + ")";
}

// Every enum field a problem holds is one of its enumerators: checked before
// any rule reads them (and a cast integer that names no row would index
// past the tables).
template <class Problem>
Status validate_enums(const Problem& p) {
  auto bad = [&](const std::string& what) {
    return error(StatusCode::kInvalidProblem, what + " (" + describe(p) + ")");
  };
  if (!is_enumerator(p.dtype, kDataTypeTable)) return bad("dtype must be one of " + enumerators("DataType", kDataTypeTable));
  if (!is_enumerator(p.layout, kLayoutTable)) return bad("layout must be one of " + enumerators("Layout", kLayoutTable));
  if (!is_enumerator(p.epilogue, kEpilogueTable)) {
    return bad("epilogue must be one of " + enumerators("Epilogue", kEpilogueTable));
  }
  if (!is_enumerator(p.activation, kActivationTable)) {
    return bad("activation must be one of " + enumerators("Activation", kActivationTable));
  }
  return Status::Ok();
}

}  // namespace

Status validate(const DepthwiseProblem& p) {
  auto bad = [&](const std::string& what) {
    return error(StatusCode::kInvalidProblem, what + " (" + describe(p) + ")");
  };
  if (Status s = validate_enums(p); !s.ok()) return s;
  if (p.multiplier < 1) return bad("the channel multiplier must be at least 1");
  if (std::string why = over("multiplier", p.multiplier, kMultiplierLimit); !why.empty()) return bad(why);
  return validate_geometry(p, "the output channels c x multiplier");
}

Status validate(const Conv2dProblem& p) {
  auto bad = [&](const std::string& what) {
    return error(StatusCode::kInvalidProblem, what + " (" + describe(p) + ")");
  };
  if (Status s = validate_enums(p); !s.ok()) return s;
  if (!is_enumerator(p.math, kMathTable)) return bad("math must be one of " + enumerators("Math", kMathTable));
  if (p.c_out < 1) return bad("c_out must be at least 1");
  if (p.groups != 1) return bad("only groups = 1 (dense convolution) is supported; use depthwise_conv2d for groups = c");
  if (p.math != Math::kFloat32 && p.dtype != DataType::kFloat32) {
    return bad("math " + std::string(to_string(p.math)) + " rounds float32 operands for tensor cores; " +
               "float16 and bfloat16 products are exact in fp32: use Math::kFloat32");
  }
  return validate_geometry(p, "c_out");
}

namespace {

// The checks of a call every operator shares, in order: the problem; the
// input, filter, output and epilogue pointers; `own`, the check of the
// operator's own pointers; every tensor the kernels read apart from the
// output they write (the kernels read them through __restrict__ pointers
// and the read-only cache).
template <class Problem, class Args>
Status validate_call(const Problem& p, const Args& a, const Status& own) {
  Status s = validate(p);
  if (!s.ok()) return s;
  const bool bias = p.epilogue == Epilogue::kBias;
  const bool scale_shift = p.epilogue == Epilogue::kScaleShift;
  const int e = element_bytes(p.dtype);
  for (Status check : {check_pointer(a.input, "input", true, e), check_pointer(a.filter, "filter", true, e),
                       check_pointer(a.output, "output", true, e), check_pointer(a.bias, "bias", bias, e),
                       check_pointer(a.scale, "scale", scale_shift, e),
                       check_pointer(a.shift, "shift", scale_shift, e), own}) {
    if (!check.ok()) return check;
  }
  const DerivedSizes d = derived_sizes(p);
  if (overlap(a.input, d.input_elements, a.output, d.output_elements, e)) {
    return error(StatusCode::kInvalidPointer, "input and output overlap; the convolution is not in place");
  }
  const std::pair<const char*, std::pair<const void*, long long>> read_only[] = {
      {"filter", {a.filter, d.filter_elements}},
      {"bias", {a.bias, d.out_channels}},
      {"scale", {a.scale, d.out_channels}},
      {"shift", {a.shift, d.out_channels}}};
  for (const auto& [name, tensor] : read_only) {
    if (tensor.first != nullptr && overlap(tensor.first, tensor.second, a.output, d.output_elements, e)) {
      return error(StatusCode::kInvalidPointer,
                   std::string(name) + " and output overlap; the kernels read it while they write the output");
    }
  }
  return Status::Ok();
}

}  // namespace

Status validate(const DepthwiseProblem& p, const DepthwiseArgs& a) {
  return validate_call(p, a, Status::Ok());
}

Status validate(const Conv2dProblem& p, const Conv2dArgs& a) {
  // validate_call checks the problem (and so its dtype) before `own` is used.
  const bool known_dtype = validate(p).ok();
  Status s = validate_call(p, a, known_dtype ? check_pointer(a.residual, "residual", p.residual, element_bytes(p.dtype))
                                             : Status::Ok());
  if (!s.ok()) return s;
  const long long outputs = derived_sizes(p).output_elements;
  if (a.residual != nullptr && overlap(a.residual, outputs, a.output, outputs, element_bytes(p.dtype))) {
    return error(StatusCode::kInvalidPointer, "residual and output overlap; pass a separate output buffer");
  }
  return Status::Ok();
}

namespace {

// Index arithmetic of the generic kernels, given a problem validate()
// accepted (the generic column of convgen/limits.h):
//   - channel counts, output extents and the reduction length are at most
//     2^30, so int holds them and a channel or tap index;
//   - a position oy * stride - pad + ky * dilation lies between -pad and
//     h + pad_bottom (the window fits the padded input, and oy * stride is at
//     most the padded span), so it stays within +-3 x 2^24 in int;
//   - every product that addresses a tensor (images x channels x plane, a
//     channel times the reduction) is formed in 64 bits: up to 2^40.
static_assert(3 * kMaxGenericField < 0x7fffffffLL, "positions are int sums of three fields");
static_assert(kOutChannelsLimit.generic <= 0x7fffffffLL && kOutExtentLimit.generic <= 0x7fffffffLL &&
                  kReductionLimit.generic + 16 <= 0x7fffffffLL,
              "channel, extent and reduction indices are int");

// Where a logical element of an activation tensor [n, c, h, w] lies in
// memory in layout L (64-bit: up to 2^40 elements).
template <Layout L>
__device__ __forceinline__ long long activation_offset(long long n, int c, int y, int x, int channels, int h, int w) {
  if constexpr (L == Layout::kNCHW) {
    return ((n * channels + c) * h + y) * w + x;
  } else {
    return ((n * h + y) * w + x) * channels + c;
  }
}

// One thread per output element, numbered in memory order (so that a warp
// writes adjacent elements in either layout). Slow and simple on purpose: it
// is the fallback that keeps every valid problem running, and the reference
// the specialized kernels are compared with on the GPU.
template <class T, Layout L>
__global__ void generic_depthwise(DepthwiseProblem p, const T* __restrict__ input, const T* __restrict__ filter,
                                  const T* __restrict__ epilogue_a, const T* __restrict__ epilogue_b,
                                  T* __restrict__ output) {
  const int out_h = static_cast<int>(p.out_h());
  const int out_w = static_cast<int>(p.out_w());
  const int out_c = static_cast<int>(p.out_channels());
  const int taps = p.kh * p.kw;
  const long long total = 1LL * p.n * out_c * out_h * out_w;
  for (long long idx = blockIdx.x * 1LL * blockDim.x + threadIdx.x; idx < total; idx += 1LL * gridDim.x * blockDim.x) {
    int co, oy, ox;
    long long n;
    if constexpr (L == Layout::kNCHW) {
      ox = static_cast<int>(idx % out_w);
      oy = static_cast<int>((idx / out_w) % out_h);
      co = static_cast<int>((idx / (1LL * out_w * out_h)) % out_c);
      n = idx / (1LL * out_w * out_h * out_c);
    } else {
      co = static_cast<int>(idx % out_c);
      ox = static_cast<int>((idx / out_c) % out_w);
      oy = static_cast<int>((idx / (1LL * out_c * out_w)) % out_h);
      n = idx / (1LL * out_c * out_w * out_h);
    }
    const int ci = co / p.multiplier;
    float acc = 0.0f;
    for (int ky = 0; ky < p.kh; ++ky) {
      const int y = oy * p.stride_h - p.pad_top + ky * p.dilation_h;
      if (y < 0 || y >= p.h) continue;
      for (int kx = 0; kx < p.kw; ++kx) {
        const int x = ox * p.stride_w - p.pad_left + kx * p.dilation_w;
        if (x < 0 || x >= p.w) continue;
        const int tap = ky * p.kw + kx;
        // The filter: [c*m, 1, kh, kw] with NCHW, [kh, kw, c*m] with NHWC.
        const long long f = L == Layout::kNCHW ? 1LL * co * taps + tap : 1LL * tap * out_c + co;
        acc = fmaf(load_one(input + activation_offset<L>(n, ci, y, x, p.c, p.h, p.w)), load_one(filter + f), acc);
      }
    }
    if (p.epilogue != Epilogue::kNone) {
      acc = apply_epilogue(p.epilogue, acc, load_one(epilogue_a + co),
                           p.epilogue == Epilogue::kScaleShift ? load_one(epilogue_b + co) : 0.0f);
    }
    store_one(output + idx, activate(p.activation, acc));
  }
}

// The generic dense kernel: an implicit GEMM, out[c_out x pixels] =
// filter[c_out x (c*kh*kw)] x im2col(input)[(c*kh*kw) x pixels], with the
// pixels of every image of the batch side by side. A block computes a
// kGenericTileM x kGenericTileN tile of it, staging kGenericTileK-deep slices
// of both operands in shared memory (as floats, whatever the dtype); each
// thread keeps a 4 x 4 register tile whose rows and columns are
// kGenericThreadsM and kGenericThreadsN apart, so that a warp reads
// consecutive shared-memory words. Correct for every valid problem and
// reasonably quick (it reuses each staged value 4 times from registers); the
// specialized kernels unroll the taps instead.
constexpr int kGenericTileM = 64;    // output channels per block
constexpr int kGenericTileN = 64;    // output pixels per block
constexpr int kGenericTileK = 16;    // reduction (input channel x tap) per step
constexpr int kGenericThreadsN = 16;  // threads along the pixels
constexpr int kGenericThreads = 256;
constexpr int kGenericThreadsM = kGenericThreads / kGenericThreadsN;

// One kGenericTileM x kGenericTileN tile of the output: channels co0.., pixels pixel0...
template <class T, Layout L>
__device__ __forceinline__ void generic_conv2d_tile(const Conv2dProblem& p, int co0, long long pixel0,
                                                   float (&a_tile)[kGenericTileK][kGenericTileM],
                                                   float (&b_tile)[kGenericTileK][kGenericTileN],
                                                   const T* __restrict__ input, const T* __restrict__ filter,
                                                   const T* __restrict__ epilogue_a, const T* __restrict__ epilogue_b,
                                                   const T* __restrict__ residual, T* __restrict__ output) {
  const int out_w = static_cast<int>(p.out_w());
  const int taps = p.kh * p.kw;
  const int reduction = p.c * taps;
  const long long plane = p.out_h() * out_w;
  const long long pixels = p.n * plane;
  const int tid = threadIdx.x;
  const int tx = tid % kGenericThreadsN, ty = tid / kGenericThreadsN;

  // The pixel this thread stages im2col values for (the same at every step).
  const int load_pixel = tid % kGenericTileN;
  const long long gp = pixel0 + load_pixel;
  const bool pixel_valid = gp < pixels;
  const long long image = pixel_valid ? gp / plane : 0;
  const int oy = pixel_valid ? static_cast<int>((gp % plane) / out_w) : 0;
  const int ox = pixel_valid ? static_cast<int>(gp % out_w) : 0;
  const int iy0 = oy * p.stride_h - p.pad_top;
  const int ix0 = ox * p.stride_w - p.pad_left;

  float acc[4][4] = {};
  for (int k0 = 0; k0 < reduction; k0 += kGenericTileK) {
    // The reduction runs over (input channel, tap) in that order; the
    // filter is [c_out, c, kh, kw] with NCHW and [c_out, kh, kw, c] with NHWC.
    for (int e = tid; e < kGenericTileK * kGenericTileM; e += kGenericThreads) {
      const int m = e / kGenericTileK, k = e % kGenericTileK;
      const int kk = k0 + k;
      const bool inside = co0 + m < p.c_out && kk < reduction;
      const long long f = L == Layout::kNCHW ? kk : 1LL * (kk % taps) * p.c + kk / taps;
      a_tile[k][m] = inside ? load_one(filter + 1LL * (co0 + m) * reduction + f) : 0.0f;
    }
    for (int k = tid / kGenericTileN; k < kGenericTileK; k += kGenericThreads / kGenericTileN) {
      float value = 0.0f;
      const int kk = k0 + k;
      if (pixel_valid && kk < reduction) {
        const int ci = kk / taps, tap = kk % taps;
        const int y = iy0 + (tap / p.kw) * p.dilation_h;
        const int x = ix0 + (tap % p.kw) * p.dilation_w;
        if (y >= 0 && y < p.h && x >= 0 && x < p.w) {
          value = load_one(input + activation_offset<L>(image, ci, y, x, p.c, p.h, p.w));
        }
      }
      b_tile[k][load_pixel] = value;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kGenericTileK; ++k) {
      float a[4], b[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) a[i] = a_tile[k][ty + i * kGenericThreadsM];
#pragma unroll
      for (int j = 0; j < 4; ++j) b[j] = b_tile[k][tx + j * kGenericThreadsN];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int co = co0 + ty + i * kGenericThreadsM;
    if (co >= p.c_out) continue;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const long long pixel = pixel0 + tx + j * kGenericThreadsN;
      if (pixel >= pixels) continue;
      const long long index = L == Layout::kNCHW ? ((pixel / plane) * p.c_out + co) * plane + pixel % plane
                                                 : pixel * p.c_out + co;
      float v = acc[i][j];
      if (p.epilogue != Epilogue::kNone) {
        v = apply_epilogue(p.epilogue, v, load_one(epilogue_a + co),
                           p.epilogue == Epilogue::kScaleShift ? load_one(epilogue_b + co) : 0.0f);
      }
      if (p.residual) v += load_one(residual + index);
      store_one(output + index, activate(p.activation, v));
    }
  }
}

// Blocks step over the tiles, channels by grid.y and pixels by grid.x, so
// that every valid problem runs in one launch: up to 2^24 output channels
// (2^18 tiles, past grid.y's 65535) and 2^40 pixels (past grid.x's 2^31 - 1).
// Every thread of a block takes the same steps, so the tile's
// __syncthreads() are reached by all.
template <class T, Layout L>
__global__ void __launch_bounds__(kGenericThreads, 1)
generic_conv2d(Conv2dProblem p, const T* __restrict__ input, const T* __restrict__ filter,
               const T* __restrict__ epilogue_a, const T* __restrict__ epilogue_b, const T* __restrict__ residual,
               T* __restrict__ output) {
  __shared__ float a_tile[kGenericTileK][kGenericTileM];  // filter slice, [k][co]
  __shared__ float b_tile[kGenericTileK][kGenericTileN];  // im2col slice, [k][pixel]
  const long long pixels = p.n * p.out_h() * p.out_w();
  for (int co0 = blockIdx.y * kGenericTileM; co0 < p.c_out; co0 += gridDim.y * kGenericTileM) {
    for (long long pixel0 = blockIdx.x * 1LL * kGenericTileN; pixel0 < pixels;
         pixel0 += 1LL * gridDim.x * kGenericTileN) {
      generic_conv2d_tile<T, L>(p, co0, pixel0, a_tile, b_tile, input, filter, epilogue_a, epilogue_b, residual,
                                output);
    }
  }
}

// Calls f(T*, LayoutTag<L>) with the element type and layout of `p`: one
// instantiation of each generic kernel per dtype x layout.
template <Layout L>
using LayoutTag = std::integral_constant<Layout, L>;
template <class Problem, class F>
void with_storage(const Problem& p, F&& f) {
  const auto by_layout = [&](auto* element) {
    if (p.layout == Layout::kNCHW) {
      f(element, LayoutTag<Layout::kNCHW>{});
    } else {
      f(element, LayoutTag<Layout::kNHWC>{});
    }
  };
  switch (p.dtype) {
    case DataType::kFloat32: by_layout(static_cast<float*>(nullptr)); break;
    case DataType::kFloat16: by_layout(static_cast<__half*>(nullptr)); break;
    case DataType::kBFloat16: by_layout(static_cast<__nv_bfloat16*>(nullptr)); break;
  }
}

template <class Problem, class Args>
const void* epilogue_a(const Problem& p, const Args& a) {
  return p.epilogue == Epilogue::kBias ? a.bias : a.scale;
}

// Who built the kernel that failed to launch, and what to change, when the
// binary holds no image the GPU can run.
struct ImageSource {
  std::string what;        // "library my_layers"
  std::string archs;       // "80-real"
  std::string archs_knob;  // where the list is set
};

// The errors of a launch whose binary holds no machine code for this GPU
// and no PTX it can compile (or PTX newer than the driver).
bool no_image_for_device(cudaError_t e) {
  return e == cudaErrorNoKernelImageForDevice || e == cudaErrorInvalidDeviceFunction ||
         e == cudaErrorUnsupportedPtxVersion;
}

Status launched(cudaError_t e, const char* kernel, const ImageSource& source) {
  if (e == cudaSuccess) return Status::Ok();
  // Read: none was pending before the launch (no_pending_error), so it is
  // this launch's, reported here, and must not stop the next call.
  (void)cudaGetLastError();
  if (no_image_for_device(e)) {
    int device = 0;
    cudaDeviceProp prop{};
    cudaGetDevice(&device);
    cudaGetDeviceProperties(&prop, device);
    const std::string arch = num(prop.major * 10 + prop.minor);
    return error(StatusCode::kUnsupportedDevice,
                 source.what + " was built for CUDA architectures " + source.archs + ", none of which device " +
                     num(device) + " (" + prop.name + ", sm_" + arch + ") can run; add " + arch + " to " +
                     source.archs_knob + " and rebuild (" + kernel + " was not launched: " + cudaGetErrorString(e) +
                     ")");
  }
  return error(StatusCode::kCudaError, std::string("launching ") + kernel + ": " + cudaGetErrorString(e));
}

// A launch's status is read with cudaGetLastError(), which returns the first
// error since the last read, from any call of this thread: an error the
// caller left unread would be reported as the launch's while the kernel ran.
// So no kernel is launched over one; the error stays for the caller to read.
// (Where the runtime could not start, no GPU or driver, every call of the
// thread finds that error pending, and reading it does not clear it.)
Status no_pending_error(const char* kernel) {
  const cudaError_t e = cudaPeekAtLastError();
  if (e == cudaSuccess) return Status::Ok();
  return error(StatusCode::kCudaError,
               std::string("launching ") + kernel + ": nothing was launched, for a CUDA error is pending on this thread: " +
                   cudaGetErrorName(e) + " (" + cudaGetErrorString(e) +
                   "); an earlier call left it unread (read it with cudaGetLastError() and call again), or the "
                   "CUDA runtime could not start, or the context is lost (a sticky error), which reading does not "
                   "clear");
}

// The runtime's own kernels: built for CONVGEN_RUNTIME_ARCHS (written by CMake).
#if __has_include("convgen_runtime_archs.h")
#include "convgen_runtime_archs.h"
#else
#define CONVGEN_RUNTIME_ARCHS "(not recorded)"
#endif
Status launched_generic(cudaError_t e, const char* kernel) {
  return launched(e, kernel, {"the convgen runtime", CONVGEN_RUNTIME_ARCHS, "CONVGEN_RUNTIME_ARCHS of the convgen build"});
}

// A fact of the current device, found by `find(device)` once per device;
// 0 when CUDA cannot say (asked again next time). Thread-safe: racing first
// calls store the same number.
constexpr int kMaxDevices = 64;
template <class Find>
int current_device_fact(std::atomic<int> (&known)[kMaxDevices], Find find) {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return 0;
  if (device < kMaxDevices) {
    if (const int fact = known[device].load(std::memory_order_relaxed); fact > 0) return fact;
  }
  const int fact = find(device);
  if (fact > 0 && device < kMaxDevices) known[device].store(fact, std::memory_order_relaxed);
  return fact;
}

// The current device's compute capability as 10 x major + minor (90 for sm_90).
int current_device_arch() {
  static std::atomic<int> known[kMaxDevices];  // 0: not found yet
  return current_device_fact(known, [](int device) {
    int major = 0, minor = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
      return 0;
    }
    return 10 * major + minor;
  });
}

// The shared memory the current device gives a block that opts in.
int current_device_block_shared() {
  static std::atomic<int> known[kMaxDevices];  // 0: not found yet
  return current_device_fact(known, [](int device) {
    int bytes = 0;
    return cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) == cudaSuccess ? bytes : 0;
  });
}

// Why a kernel does not run on this GPU: it gives a block too little shared memory.
template <class Entry>
std::string too_little_shared_memory(const Entry& e, int bytes) {
  return std::string("kernel ") + e.name + " takes " + std::to_string(e.shared_bytes) +
         " bytes of shared memory a block; this GPU gives at most " + std::to_string(bytes);
}

// The GPUs a kernel runs on, in words: "sm_80 and newer", "sm_90 only".
template <class Entry>
std::string arch_range(const Entry& e) {
  if (e.max_arch > 0 && e.max_arch == e.min_arch) return "sm_" + std::to_string(e.min_arch) + " only";
  std::string s = "sm_" + std::to_string(e.min_arch) + " and newer";
  if (e.max_arch > 0) s = "sm_" + std::to_string(e.min_arch) + " to sm_" + std::to_string(e.max_arch);
  return s;
}

// Whether a kernel runs on a GPU of compute capability `arch` (0: unknown,
// taken as one it runs on).
template <class Entry>
bool runs_on(const Entry& e, int arch) {
  return arch <= 0 || ((e.min_arch == 0 || arch >= e.min_arch) && (e.max_arch == 0 || arch <= e.max_arch));
}

// Why a kernel does not run on this GPU: its instructions are another GPU's.
template <class Entry>
std::string other_gpu(const Entry& e, int arch) {
  return std::string("kernel ") + e.name + " runs on " + arch_range(e) +
         " (tensor-core instructions); this GPU is sm_" + std::to_string(arch);
}

// Two levels, as in CUTLASS's operation table: kernels made for the same
// problem up to the batch, then a preference among them: the kernel made for
// this batch, else the one made for a runtime batch, else the first.
template <class Problem>
const detail::RegistryEntry<Problem>* lookup(const detail::Registry<Problem>& r, const Problem& p) {
  using Traits = OperatorTraits<Problem>;
  const detail::RegistryEntry<Problem>* runtime_batch = nullptr;
  const detail::RegistryEntry<Problem>* other_batch = nullptr;
  for (int i = 0; i < r.count; ++i) {
    const detail::RegistryEntry<Problem>& e = r.entries[i];
    if (Traits::shape(e.problem) != Traits::shape(p)) continue;
    if (e.problem.n == p.n) return &e;
    if (e.problem.n == 0 && runtime_batch == nullptr) runtime_batch = &e;
    if (other_batch == nullptr) other_batch = &e;
  }
  return runtime_batch != nullptr ? runtime_batch : other_batch;
}

// Why a kernel does not take a batch: its grid and 32-bit launch indices
// number no more images than max_batch.
template <class Entry>
std::string too_big_a_batch(const Entry& e, int batch) {
  return std::string("kernel ") + e.name + " covers at most " + std::to_string(e.max_batch) +
         " images in one launch (its grid and 32-bit launch indices number no more); batch " + std::to_string(batch) +
         " runs on the generic kernel, or split it into several calls";
}

// Whether the first `bytes` of a call's workspace share a byte with one of
// its tensors (the kernels write the workspace while they read them).
bool workspace_overlaps(const Conv2dProblem& p, const Conv2dArgs& a, long long bytes) {
  const DerivedSizes d = derived_sizes(p);
  const int element = element_bytes(p.dtype);
  const long long workspace_elements = (bytes + element - 1) / element;
  const std::pair<const void*, long long> tensors[] = {
      {a.input, d.input_elements}, {a.filter, d.filter_elements}, {a.bias, d.out_channels},
      {a.scale, d.out_channels},   {a.shift, d.out_channels},     {a.residual, d.output_elements},
      {a.output, d.output_elements}};
  for (const auto& [tensor, elements] : tensors) {
    if (tensor != nullptr && overlap(a.workspace, workspace_elements, tensor, elements, element)) return true;
  }
  return false;
}
bool workspace_overlaps(const DepthwiseProblem&, const DepthwiseArgs&, long long) { return false; }  // none taken

// Why a kernel (a registry entry or a KernelInfo) does not run on the
// current device: its instructions are another GPU's, or it takes more
// shared memory a block than the GPU gives; "" where it runs (or CUDA
// cannot say).
template <class Entry>
std::string not_on_this_device(const Entry& e) {
  if (e.min_arch > 0 || e.max_arch > 0) {
    const int arch = current_device_arch();
    if (!runs_on(e, arch)) return other_gpu(e, arch);
  }
  if (e.shared_bytes > kMaxStaticSharedBytes) {
    const int bytes = current_device_block_shared();
    if (bytes > 0 && bytes < e.shared_bytes) return too_little_shared_memory(e, bytes);
  }
  return "";
}

// The bytes every tensor of a call on kernel `e` must be aligned to: an
// entry that records no alignment (0) needs only an element's.
template <class Problem>
int alignment_of(const detail::RegistryEntry<Problem>& e) {
  return std::max(e.alignment, element_bytes(e.problem.dtype));
}

template <class Info>
Status device_runs(const Info& kernel) {
  const std::string why = not_on_this_device(kernel);
  return why.empty() ? Status::Ok() : error(StatusCode::kUnsupportedDevice, why);
}

}  // namespace

namespace detail {

template <class Problem>
KernelChoice Registry<Problem>::find(const Problem& p) const {
  KernelChoice choice;
  choice.status = validate(p);
  if (!choice.status.ok()) return choice;
  const auto* e = lookup(*this, p);
  if (e == nullptr) {
    choice.kernel = generic_kernel_name(p);
    choice.reason = std::string("library ") + library + " has no kernel for " + describe(p) +
                    "; the generic kernel serves it";
    return choice;
  }
  if (p.n > e->max_batch) {
    choice.kernel = generic_kernel_name(p);
    choice.reason = too_big_a_batch(*e, p.n);
    return choice;
  }
  choice.specialized = true;
  choice.kernel = e->name;
  choice.workspace_bytes = static_cast<std::size_t>(e->workspace_bytes(p.n));
  const std::string alignment =
      e->alignment > element_bytes(p.dtype) ? "; tensors aligned to less than " + std::to_string(e->alignment) +
                                                  " bytes run the generic kernel"
                                            : "";
  choice.reason = e->problem.n == p.n   ? std::string("made for this problem (") + e->spec_location + ")"
                  : e->problem.n == 0   ? std::string("made for this problem with a runtime batch (") +
                                            e->spec_location + ")"
                                        : std::string("made for this problem at batch ") +
                                            std::to_string(e->problem.n) + "; runs any batch (" + e->spec_location +
                                            ")";
  choice.reason += alignment;
  if (e->max_arch > 0) {
    choice.reason += "; GPUs other than " + arch_range(*e) + " run the generic kernel";
  } else if (e->min_arch > 0) {
    choice.reason += "; GPUs older than sm_" + std::to_string(e->min_arch) + " run the generic kernel";
  }
  if (e->shared_bytes > kMaxStaticSharedBytes) {
    choice.reason += "; GPUs that give a block less than " + std::to_string(e->shared_bytes) +
                     " bytes of shared memory run the generic kernel";
  }
  return choice;
}

template <class Problem>
Status Registry<Problem>::run(const Problem& p, const typename OperatorTraits<Problem>::Args& a, cudaStream_t stream,
                              Dispatch dispatch) const {
  using Traits = OperatorTraits<Problem>;
  if (dispatch != Dispatch::kAllowGeneric && dispatch != Dispatch::kStrict) {
    return error(StatusCode::kInvalidProblem, "dispatch must be Dispatch::kAllowGeneric or Dispatch::kStrict, not " +
                                                  std::to_string(static_cast<int>(dispatch)) + "; nothing was launched");
  }
  Status s = validate(p, a);
  if (!s.ok()) return s;
  const auto* e = lookup(*this, p);
  if (e == nullptr) {
    if (dispatch == Dispatch::kStrict) {
      return error(StatusCode::kNoSpecializedKernel,
                   std::string("library ") + library + " has no kernel for " + describe(p));
    }
    return Traits::generic(p, a, stream);
  }
  const std::uintptr_t alignment = static_cast<std::uintptr_t>(alignment_of(*e));
  const auto aligned = [&](const void* ptr) { return reinterpret_cast<std::uintptr_t>(ptr) % alignment == 0; };
  // Every tensor: a kernel may load its filter and epilogue parameters as
  // vectors too (null pointers, which the problem does not use, pass).
  if (!Traits::all_pointers(a, aligned)) {
    if (dispatch == Dispatch::kStrict) {
      return error(StatusCode::kInvalidPointer, std::string("kernel ") + e->name + " needs every tensor aligned to " +
                                                    std::to_string(alignment) + " bytes");
    }
    return Traits::generic(p, a, stream);
  }
  if (p.n > e->max_batch) {
    if (dispatch == Dispatch::kStrict) {
      return error(StatusCode::kNoSpecializedKernel, too_big_a_batch(*e, p.n) + "; nothing was launched");
    }
    return Traits::generic(p, a, stream);
  }
  if (const std::string why = not_on_this_device(*e); !why.empty()) {
    if (dispatch == Dispatch::kStrict) return error(StatusCode::kUnsupportedDevice, why + "; nothing was launched");
    return Traits::generic(p, a, stream);
  }
  if (const long long need = e->workspace_bytes(p.n); need > 0) {
    const void* given = Traits::workspace(a);
    const std::uintptr_t misaligned = reinterpret_cast<std::uintptr_t>(given) % kWorkspaceAlignment;
    if (given == nullptr || Traits::workspace_bytes(a) < static_cast<std::size_t>(need) || misaligned != 0) {
      return error(StatusCode::kInvalidPointer,
                   std::string("kernel ") + e->name + " needs a workspace of " + std::to_string(need) +
                       " bytes aligned to " + std::to_string(kWorkspaceAlignment) +
                       " (KernelChoice::workspace_bytes, from find()); the call gives " +
                       (given == nullptr ? std::string("none")
                                         : std::to_string(Traits::workspace_bytes(a)) + " bytes at " +
                                               std::to_string(misaligned) + " past a multiple of " +
                                               std::to_string(kWorkspaceAlignment)) +
                       "; nothing was launched");
    }
    if (workspace_overlaps(p, a, need)) {
      return error(StatusCode::kInvalidPointer, std::string("kernel ") + e->name +
                                                    ": the workspace overlaps a tensor of the call; nothing was "
                                                    "launched");
    }
  }
  if (Status pending = no_pending_error(e->name); !pending.ok()) return pending;
  return launched(Traits::launch(e->launch, p, a, stream), e->name,
                  {std::string("library ") + library, archs,
                   std::string("the ARCHS of the convgen_add_library() that makes library ") + library});
}

template <class Problem>
std::vector<KernelInfoFor<Problem>> Registry<Problem>::list() const {
  std::vector<KernelInfoFor<Problem>> infos;
  for (int i = 0; i < count; ++i) {
    const RegistryEntry<Problem>& e = entries[i];
    infos.push_back({e.name, e.problem, e.schedule, e.spec_location, alignment_of(e), e.max_batch, e.min_arch, e.max_arch,
                     e.shared_bytes, e.workspace_fixed, e.workspace_per_image});
  }
  return infos;
}

// Every operator's registry: one line each.
template struct Registry<DepthwiseProblem>;
template struct Registry<Conv2dProblem>;

}  // namespace detail

Status runs_on_current_device(const DepthwiseKernelInfo& kernel) { return device_runs(kernel); }
Status runs_on_current_device(const Conv2dKernelInfo& kernel) { return device_runs(kernel); }

Status generic_depthwise_conv2d(const DepthwiseProblem& p, const DepthwiseArgs& a, cudaStream_t stream) {
  Status s = validate(p, a);
  if (!s.ok()) return s;
  if (Status pending = no_pending_error(generic_kernel_name(p).c_str()); !pending.ok()) return pending;
  const long long total = p.n * p.out_channels() * p.out_h() * p.out_w();
  const int threads = 256;
  const long long blocks = (total + threads - 1) / threads;
  const int grid = static_cast<int>(blocks < (1LL << 20) ? blocks : (1LL << 20));
  with_storage(p, [&](auto* element, auto layout) {
    using T = std::remove_pointer_t<decltype(element)>;
    generic_depthwise<T, decltype(layout)::value><<<grid, threads, 0, stream>>>(
        p, static_cast<const T*>(a.input), static_cast<const T*>(a.filter), static_cast<const T*>(epilogue_a(p, a)),
        static_cast<const T*>(a.shift), static_cast<T*>(a.output));
  });
  return launched_generic(cudaGetLastError(), generic_kernel_name(p).c_str());
}

Status generic_conv2d(const Conv2dProblem& p, const Conv2dArgs& a, cudaStream_t stream) {
  Status s = validate(p, a);
  if (!s.ok()) return s;
  if (Status pending = no_pending_error(generic_kernel_name(p).c_str()); !pending.ok()) return pending;
  // One block a tile where the grid has room; the blocks step over the rest.
  const long long pixel_tiles = (p.n * p.out_h() * p.out_w() + kGenericTileN - 1) / kGenericTileN;
  const long long channel_tiles = (p.c_out + kGenericTileM - 1) / kGenericTileM;
  const dim3 grid(static_cast<unsigned>(std::min(pixel_tiles, 0x7fffffffLL)),
                  static_cast<unsigned>(std::min(channel_tiles, 65535LL)));
  with_storage(p, [&](auto* element, auto layout) {
    using T = std::remove_pointer_t<decltype(element)>;
    generic_conv2d<T, decltype(layout)::value><<<grid, kGenericThreads, 0, stream>>>(
        p, static_cast<const T*>(a.input), static_cast<const T*>(a.filter), static_cast<const T*>(epilogue_a(p, a)),
        static_cast<const T*>(a.shift), static_cast<const T*>(a.residual), static_cast<T*>(a.output));
  });
  return launched_generic(cudaGetLastError(), generic_kernel_name(p).c_str());
}

}  // namespace convgen
