#include "convgen/oracle/oracle.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

#include <cuda_bf16.h>  // the dtypes' rounding: CUDA's own conversions, on the host
#include <cuda_fp16.h>

namespace convgen::oracle {

long long input_count(const ReferenceProblem& p) { return static_cast<long long>(p.n) * p.c * p.h * p.w; }

long long filter_count(const ReferenceProblem& p) {
  return static_cast<long long>(p.c_out) * (p.c / p.groups) * p.kh * p.kw;
}

long long output_count(const ReferenceProblem& p) {
  return static_cast<long long>(p.n) * p.c_out * p.out_h * p.out_w;
}

double bound_terms(const ReferenceProblem& p) {
  if (p.winograd_f4) {
    const double products = 36.0 * p.c * row(p.math).products;
    return p.exact_sums ? std::sqrt(products) + 16 : products + 16;
  }
  const double products = static_cast<double>(p.c / p.groups) * p.kh * p.kw * row(p.math).products;
  return p.exact_sums ? std::sqrt(products) + 2 : products;
}

namespace {

std::vector<float> uniform(long long count, std::mt19937_64& rng, float lo, float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(count));
  for (float& x : v) x = dist(rng);
  return v;
}

// Multiples of 1/16 in [-1, 1]: every product is a multiple of 2^-8, and
// every partial sum of at most 2^16 of them is exact in fp32, in any order.
std::vector<float> sixteenths(long long count, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> dist(-16, 16);
  std::vector<float> v(static_cast<size_t>(count));
  for (float& x : v) x = static_cast<float>(dist(rng)) / 16.0f;
  return v;
}

// One value in the dtype's bytes, and back (round to nearest even).
void encode(DataType t, float v, unsigned char* out) {
  switch (t) {
    case DataType::kFloat32: std::memcpy(out, &v, 4); return;
    case DataType::kFloat16: { const __half h = __float2half_rn(v); std::memcpy(out, &h, 2); return; }
    case DataType::kBFloat16: { const __nv_bfloat16 b = __float2bfloat16_rn(v); std::memcpy(out, &b, 2); return; }
  }
}

float decode(DataType t, const unsigned char* in) {
  switch (t) {
    case DataType::kFloat32: { float v; std::memcpy(&v, in, 4); return v; }
    case DataType::kFloat16: { __half h; std::memcpy(&h, in, 2); return __half2float(h); }
    case DataType::kBFloat16: { __nv_bfloat16 b; std::memcpy(&b, in, 2); return __bfloat162float(b); }
  }
  return 0;
}

float rounded(DataType t, float v) {
  unsigned char bytes[4];
  encode(t, v, bytes);
  return decode(t, bytes);
}

void round_all(DataType t, std::vector<float>& values) {
  for (float& v : values) v = rounded(t, v);
}

// A guard element: a NaN no kernel computes (kernels make the canonical one).
void guard(DataType t, unsigned char* out) {
  switch (t) {
    case DataType::kFloat32: { const std::uint32_t g = 0x7fc0dead; std::memcpy(out, &g, 4); return; }
    case DataType::kFloat16: { const std::uint16_t g = 0x7dea; std::memcpy(out, &g, 2); return; }
    case DataType::kBFloat16: { const std::uint16_t g = 0x7fad; std::memcpy(out, &g, 2); return; }
  }
}

// Where logical element i ([n, c, y, x] of an activation tensor with
// `channels` channels of h x w) lies in memory in the problem's layout.
long long activation_position(const ReferenceProblem& p, long long i, int channels, int h, int w) {
  if (p.layout == Layout::kNCHW) return i;
  const long long plane = static_cast<long long>(h) * w;
  const long long n = i / (plane * channels), c = i / plane % channels, yx = i % plane;
  return (n * plane + yx) * channels + c;
}

// Where logical filter element i ([co, ci, ky, kx]) lies in memory.
long long filter_position(const ReferenceProblem& p, long long i) {
  if (p.layout == Layout::kNCHW) return i;
  const int group_in = p.c / p.groups;
  const long long taps = static_cast<long long>(p.kh) * p.kw;
  const long long co = i / (group_in * taps), ci = i / taps % group_in, tap = i % taps;
  return p.filter_taps_first ? tap * p.c_out + co : (co * taps + tap) * group_in + ci;
}

}  // namespace

int element_size(const ReferenceProblem& p) { return element_bytes(p.dtype); }

Operands make_operands(const ReferenceProblem& p, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Operands o;
  o.input = p.exact_sums ? sixteenths(input_count(p), rng) : uniform(input_count(p), rng, -1, 1);
  o.filter = p.exact_sums ? sixteenths(filter_count(p), rng) : uniform(filter_count(p), rng, -1, 1);
  o.epilogue_a = uniform(p.c_out, rng, -2, 2);
  o.epilogue_b = uniform(p.c_out, rng, -1, 3);
  if (p.residual) o.residual = uniform(output_count(p), rng, -1, 1);
  for (std::vector<float>* v : {&o.input, &o.filter, &o.epilogue_a, &o.epilogue_b, &o.residual}) round_all(p.dtype, *v);
  return o;
}

std::vector<unsigned char> stored(const ReferenceProblem& p, Tensor t, const std::vector<float>& logical) {
  const int size = element_size(p);
  std::vector<unsigned char> bytes(logical.size() * size);
  for (size_t i = 0; i < logical.size(); ++i) {
    long long at = static_cast<long long>(i);
    switch (t) {
      case Tensor::kInput: at = activation_position(p, at, p.c, p.h, p.w); break;
      case Tensor::kFilter: at = filter_position(p, at); break;
      case Tensor::kResidual:
      case Tensor::kOutput: at = activation_position(p, at, p.c_out, p.out_h, p.out_w); break;
      case Tensor::kPerChannel: break;
    }
    encode(p.dtype, logical[i], &bytes[static_cast<size_t>(at) * size]);
  }
  return bytes;
}

unsigned reference_blocks(const ReferenceProblem& p) {
  return static_cast<unsigned>((output_count(p) + kReferenceBlock - 1) / kReferenceBlock);
}

std::vector<unsigned char> poisoned_output(const ReferenceProblem& p) {
  const size_t size = static_cast<size_t>(element_size(p));
  const size_t count = static_cast<size_t>(output_count(p));
  std::vector<unsigned char> buffer((count + 2 * kGuardWords) * size, 0xff);
  for (size_t g = 0; g < kGuardWords; ++g) {
    guard(p.dtype, &buffer[g * size]);
    guard(p.dtype, &buffer[(kGuardWords + count + g) * size]);
  }
  return buffer;
}

Comparison compare(const ReferenceProblem& p, const std::vector<unsigned char>& buffer, const Reference& reference) {
  Comparison c;
  c.elements = output_count(p);
  const size_t size = static_cast<size_t>(element_size(p));
  const size_t count = static_cast<size_t>(c.elements);
  unsigned char expected_guard[4];
  guard(p.dtype, expected_guard);
  for (size_t g = 0; g < kGuardWords && c.guard_word < 0; ++g) {
    if (std::memcmp(&buffer[g * size], expected_guard, size) != 0 ||
        std::memcmp(&buffer[(kGuardWords + count + g) * size], expected_guard, size) != 0) {
      c.guard_word = static_cast<long long>(g);
    }
  }
  // Products of operands rounded by the math (tf32, 3xtf32), where the
  // operands are not already exact in it (multiples of 1/16 are, but not
  // once Winograd's transforms have scaled them by 1/6, 1/12, 1/24).
  const int product_bits = row(p.math).product_bits;
  const bool exact_operands = p.exact_sums && !p.winograd_f4;
  const double product_error = exact_operands || product_bits == 0 ? 0.0 : std::ldexp(1.0, -product_bits);
  const double unit = (bound_terms(p) + 2) * std::ldexp(1.0, -23) + product_error;
  // The output's one rounding to its dtype (none past the fp32 sum's for
  // float32), and half the smallest subnormal step where that is not tiny.
  const int fraction_bits = row(p.dtype).fraction_bits;
  const double roundoff = p.dtype == DataType::kFloat32 ? 0.0 : std::ldexp(1.0, -(fraction_bits + 1));
  const double tiny = p.dtype == DataType::kFloat16 ? std::ldexp(1.0, -25) : 1e-30;
  // max_rel_error leaves out the elements whose S lies below float16's
  // smallest normal, 2^-14: there the output's rounding is a fixed step
  // that t covers, and |err| / S reaches 1 on a correctly rounded output.
  const double smallest_normal = p.dtype == DataType::kFloat16 ? std::ldexp(1.0, -14) : 0.0;
  for (size_t i = 0; i < count; ++i) {
    const long long at = activation_position(p, static_cast<long long>(i), p.c_out, p.out_h, p.out_w);
    const double got = decode(p.dtype, &buffer[(kGuardWords + static_cast<size_t>(at)) * size]);
    const double sum_error = unit * reference.magnitude[i];
    const double bound = sum_error * (1 + roundoff) + roundoff * std::fabs(reference.value[i]) + tiny;
    const double err = std::fabs(got - reference.value[i]);
    if (!(err <= bound)) {  // NaN fails too
      if (c.first.size() < kReportedMismatches) c.first.push_back({static_cast<long long>(i), got, reference.value[i], bound});
      ++c.wrong;
    }
    if (std::isfinite(got) && reference.magnitude[i] >= smallest_normal) {
      c.max_rel_error = std::max(c.max_rel_error, err / std::max(reference.magnitude[i], 1e-30));
    }
  }
  return c;
}

namespace {

std::string mismatch_text(const Mismatch& m, const ReferenceProblem& p) {
  const long long plane = static_cast<long long>(p.out_h) * p.out_w;
  char text[200];
  std::snprintf(text, sizeof text, "output[n=%lld, c=%lld, y=%lld, x=%lld] = %g, expected %g (bound %g)",
                m.index / (plane * p.c_out), m.index / plane % p.c_out, m.index % plane / p.out_w, m.index % p.out_w,
                m.got, m.expected, m.bound);
  return text;
}

}  // namespace

std::string describe(const Comparison& c, const ReferenceProblem& p, std::size_t mismatches) {
  std::string text;
  if (c.guard_word >= 0) text = "wrote outside the output (guard word " + std::to_string(c.guard_word) + ")";
  if (c.wrong == 0) return text;
  if (!text.empty()) text += "; ";
  text += std::to_string(c.wrong) + " of " + std::to_string(c.elements) + " outputs wrong";
  for (size_t i = 0; i < c.first.size() && i < mismatches; ++i) {
    text += (i == 0 ? "; " : "\n  ") + mismatch_text(c.first[i], p);
  }
  return text;
}

}  // namespace convgen::oracle
