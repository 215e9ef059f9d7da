// The oracle's check (oracle/include/convgen/oracle/oracle.h) on outputs
// made by hand, with no GPU: for float16 and bfloat16 the bound (the fp32
// sum's rounding plus one rounding of the output to its dtype) passes the
// correctly rounded result and is tight enough that one missed tap, or an
// output two units in the last place off, fails. And the tensors' memory
// order: stored() puts every element where convgen/convgen.h says the
// layout keeps it, and compare() reads the output back from there, so a
// kernel that writes NCHW where NHWC is due fails.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <ostream>
#include <string>
#include <vector>

#include "convgen/oracle/oracle.h"

namespace {

using convgen::DataType;
using convgen::Epilogue;
using convgen::Layout;
using convgen::Math;
using convgen::oracle::Comparison;
using convgen::oracle::kGuardWords;
using convgen::oracle::Reference;
using convgen::oracle::ReferenceProblem;
using convgen::oracle::Tensor;

// A small depthwise problem: 3 channels, multiplier 2, 5x4 input, 3x3
// filter, padding 1, scale and shift; no two extents alike, so that a
// permutation of axes shows.
ReferenceProblem depthwise(DataType dtype, Layout layout) {
  ReferenceProblem p;
  p.n = 2;
  p.c = 3;
  p.h = 5;
  p.w = 4;
  p.c_out = 6;
  p.groups = 3;
  p.out_h = 5;
  p.out_w = 4;
  p.kh = p.kw = 3;
  p.pad_top = p.pad_left = 1;
  p.epilogue = Epilogue::kScaleShift;
  p.dtype = dtype;
  p.layout = layout;
  p.filter_taps_first = true;
  return p;
}

// One product of the sum of output element `i` (logical NCHW): the input
// and filter values it multiplies.
struct Tap {
  double x = 0, w = 0;
};

// The taps of output element i, in bounds, as the convolution reads them.
std::vector<Tap> taps_of(const ReferenceProblem& p, const convgen::oracle::Operands& o, long long i) {
  const long long plane = static_cast<long long>(p.out_h) * p.out_w;
  const int ox = static_cast<int>(i % p.out_w), oy = static_cast<int>(i / p.out_w % p.out_h);
  const int co = static_cast<int>(i / plane % p.c_out);
  const long long n = i / (plane * p.c_out);
  const int ci = co / (p.c_out / p.c);  // depthwise: one input channel per group
  std::vector<Tap> taps;
  for (int ky = 0; ky < p.kh; ++ky) {
    for (int kx = 0; kx < p.kw; ++kx) {
      const int y = oy * p.stride_h - p.pad_top + ky * p.dilation_h;
      const int x = ox * p.stride_w - p.pad_left + kx * p.dilation_w;
      if (y < 0 || y >= p.h || x < 0 || x >= p.w) continue;
      taps.push_back({o.input[static_cast<size_t>(((n * p.c + ci) * p.h + y) * p.w + x)],
                      o.filter[static_cast<size_t>((co * p.kh + ky) * p.kw + kx)]});
    }
  }
  return taps;
}

// The float64 reference of a scale-shift problem written out here, apart
// from the oracle's kernel: value = sum * scale + shift, and the magnitude
// S = sum|x*w| * |scale| + |shift| the bound scales with.
Reference host_reference(const ReferenceProblem& p, const convgen::oracle::Operands& o) {
  const long long count = convgen::oracle::output_count(p);
  Reference r;
  for (long long i = 0; i < count; ++i) {
    const int co = static_cast<int>(i / (static_cast<long long>(p.out_h) * p.out_w) % p.c_out);
    double sum = 0, magnitude = 0;
    for (const Tap& t : taps_of(p, o, i)) {
      sum += t.x * t.w;
      magnitude += std::fabs(t.x * t.w);
    }
    r.value.push_back(sum * o.epilogue_a[co] + o.epilogue_b[co]);
    r.magnitude.push_back(magnitude * std::fabs(o.epilogue_a[co]) + std::fabs(o.epilogue_b[co]));
  }
  return r;
}

// The output buffer a kernel that wrote `logical` (NCHW order, rounded to
// the dtype by stored()) would leave: guards, outputs, guards.
std::vector<unsigned char> kernel_output(const ReferenceProblem& p, const std::vector<double>& logical) {
  std::vector<unsigned char> buffer = convgen::oracle::poisoned_output(p);
  const std::vector<unsigned char> outputs =
      convgen::oracle::stored(p, Tensor::kOutput, std::vector<float>(logical.begin(), logical.end()));
  std::memcpy(&buffer[kGuardWords * convgen::oracle::element_size(p)], outputs.data(), outputs.size());
  return buffer;
}

// Where logical output element i lies in memory, in elements: NCHW as is,
// NHWC as [n, y, x, c] (convgen/convgen.h).
long long output_position(const ReferenceProblem& p, long long i) {
  if (p.layout == Layout::kNCHW) return i;
  const long long plane = static_cast<long long>(p.out_h) * p.out_w;
  const long long n = i / (plane * p.c_out), c = i / plane % p.c_out, yx = i % plane;
  return (n * plane + yx) * p.c_out + c;
}

struct HalfCase {
  DataType dtype;
  Layout layout;
};
void PrintTo(const HalfCase& c, std::ostream* os) { *os << convgen::to_string(c.dtype) << " " << convgen::to_string(c.layout); }

class HalfBound : public ::testing::TestWithParam<HalfCase> {
 protected:
  const ReferenceProblem p_ = depthwise(GetParam().dtype, GetParam().layout);
  const convgen::oracle::Operands operands_ = convgen::oracle::make_operands(p_, 20);
  const Reference reference_ = host_reference(p_, operands_);
};

TEST_P(HalfBound, TheCorrectlyRoundedResultPasses) {
  const Comparison c = convgen::oracle::compare(p_, kernel_output(p_, reference_.value), reference_);
  EXPECT_TRUE(c.passed()) << convgen::oracle::describe(c, p_, 5);
  EXPECT_EQ(c.elements, 2 * 6 * 5 * 4);
}

// Outputs below float16's normal range: with one channel's scale at 2^-24
// (float16's smallest subnormal) its outputs, under 9 * 2^-24, round to a
// fixed step of 2^-24 (or to zero), so a correctly
// rounded one can be off by its whole magnitude S. The check passes them (t
// covers the step), and the worst |err| / S reported leaves them out: it
// stays at the output's rounding and the fp32 sum's share, as on the other
// channels, instead of reaching 1.
TEST_P(HalfBound, OutputsBelowTheNormalRangeLeaveTheWorstRatioAlone) {
  convgen::oracle::Operands o = operands_;
  o.epilogue_a[0] = std::ldexp(1.0f, -24);
  o.epilogue_b[0] = 0;
  const Reference reference = host_reference(p_, o);
  const Comparison c = convgen::oracle::compare(p_, kernel_output(p_, reference.value), reference);
  EXPECT_TRUE(c.passed()) << convgen::oracle::describe(c, p_, 5);
  const double u = std::ldexp(1.0, -(convgen::row(p_.dtype).fraction_bits + 1));
  EXPECT_LE(c.max_rel_error, 2 * u);
  EXPECT_GT(c.max_rel_error, 0.0);
}

// Every output with one tap left out of its sum, one output at a time: the
// check must fail wherever the missing product moves the result by more
// than the dtype's rounding can (four times the unit roundoff of the
// output, plus the fp32 sum's share); and that is nearly every tap, since
// the operands are random in [-1, 1]. The float32 sum's share of the bound
// is negligible here, so the output's rounding sets the limit.
TEST_P(HalfBound, OneMissedTapFails) {
  const double u = std::ldexp(1.0, -(convgen::row(p_.dtype).fraction_bits + 1));
  long long drops = 0, caught = 0, big_drops = 0, big_caught = 0;
  for (long long i = 0; i < convgen::oracle::output_count(p_); ++i) {
    const int co = static_cast<int>(i / (static_cast<long long>(p_.out_h) * p_.out_w) % p_.c_out);
    for (const Tap& t : taps_of(p_, operands_, i)) {
      std::vector<double> missed = reference_.value;
      const double change = t.x * t.w * operands_.epilogue_a[co];
      missed[static_cast<size_t>(i)] -= change;
      const Comparison c = convgen::oracle::compare(p_, kernel_output(p_, missed), reference_);
      ++drops;
      caught += c.passed() ? 0 : 1;
      // Past the output's two roundings (the reference's and the missed
      // sum's) with room to spare: a miss of this size must always fail.
      if (std::fabs(change) > 4 * u * (std::fabs(reference_.value[i]) + std::fabs(change)) + 1e-4) {
        ++big_drops;
        big_caught += c.passed() ? 0 : 1;
        EXPECT_FALSE(c.passed()) << "output " << i << " without the tap " << t.x << " * " << t.w;
      }
      if (!c.passed()) {
        EXPECT_EQ(c.wrong, 1) << "only output " << i << " changed";
        ASSERT_FALSE(c.first.empty());
        EXPECT_EQ(c.first[0].index, i);
      }
    }
  }
  std::printf("%s %s: %lld of %lld single missed taps fail the check (%lld of %lld past 4u|ref|)\n",
              convgen::to_string(p_.dtype), convgen::to_string(p_.layout), caught, drops, big_caught, big_drops);
  EXPECT_EQ(big_caught, big_drops);
  // Most taps are well past the rounding: at least 19 in 20 misses fail for
  // float16 (u = 2^-11) and 9 in 10 for bfloat16 (u = 2^-8).
  EXPECT_GE(caught * 20, drops * (p_.dtype == DataType::kFloat16 ? 19 : 18));
}

// An output two units in the last place of its dtype away from the
// correctly rounded value is at least 1.5 units from the exact result, past
// the bound's u * |ref| (under one unit) plus the fp32 sum's share, which
// for these sums of 9 products is far below half a unit once |ref| >= 1/4.
TEST_P(HalfBound, TwoUnitsInTheLastPlaceOffFail) {
  const std::vector<unsigned char> right = kernel_output(p_, reference_.value);
  int tried = 0;
  for (long long i = 0; i < convgen::oracle::output_count(p_); ++i) {
    if (std::fabs(reference_.value[static_cast<size_t>(i)]) < 0.25) continue;
    std::vector<unsigned char> off = right;
    // Two steps away from zero: the 16-bit pattern's magnitude plus 2.
    const size_t at = (kGuardWords + static_cast<size_t>(output_position(p_, i))) * 2;
    std::uint16_t bits;
    std::memcpy(&bits, &off[at], 2);
    bits = static_cast<std::uint16_t>(bits + 2);
    std::memcpy(&off[at], &bits, 2);
    const Comparison c = convgen::oracle::compare(p_, off, reference_);
    ++tried;
    EXPECT_FALSE(c.passed()) << "output " << i << " = " << reference_.value[static_cast<size_t>(i)] << " + 2 ulp";
    EXPECT_EQ(c.wrong, 1);
  }
  EXPECT_GT(tried, 50);  // most outputs are that large
}

// A kernel that writes its outputs in the other layout's order: the values
// are right, their places wrong.
TEST_P(HalfBound, OutputsInTheOtherLayoutFail) {
  ReferenceProblem other = p_;
  other.layout = p_.layout == Layout::kNCHW ? Layout::kNHWC : Layout::kNCHW;
  const Comparison c = convgen::oracle::compare(p_, kernel_output(other, reference_.value), reference_);
  EXPECT_FALSE(c.passed());
  EXPECT_GT(c.wrong, c.elements / 2);
}

// A write one element past either end of the output: a guard word.
TEST_P(HalfBound, AWritePastTheOutputFails) {
  std::vector<unsigned char> buffer = kernel_output(p_, reference_.value);
  const size_t size = static_cast<size_t>(convgen::oracle::element_size(p_));
  const size_t count = static_cast<size_t>(convgen::oracle::output_count(p_));
  std::vector<unsigned char> before = buffer, after = buffer;
  std::memset(&before[(kGuardWords - 1) * size], 0, size);
  std::memset(&after[(kGuardWords + count) * size], 0, size);
  EXPECT_FALSE(convgen::oracle::compare(p_, before, reference_).passed());
  EXPECT_FALSE(convgen::oracle::compare(p_, after, reference_).passed());
}

INSTANTIATE_TEST_SUITE_P(Dtypes, HalfBound,
                         ::testing::Values(HalfCase{DataType::kFloat16, Layout::kNCHW},
                                           HalfCase{DataType::kBFloat16, Layout::kNCHW},
                                           HalfCase{DataType::kFloat16, Layout::kNHWC},
                                           HalfCase{DataType::kBFloat16, Layout::kNHWC}),
                         [](const ::testing::TestParamInfo<HalfCase>& info) {
                           return std::string(convgen::row(info.param.dtype).name_part) + "_" +
                                  convgen::row(info.param.layout).name_part;
                         });

// The bytes of one value in the problem's dtype (a per-channel tensor is
// stored as is, in any layout).
std::vector<unsigned char> encoded(const ReferenceProblem& p, float v) {
  return convgen::oracle::stored(p, Tensor::kPerChannel, {v});
}

// A float rounded to the nearest TF32 (10 bits after the point, ties away
// from zero), as cvt.rna.tf32.f32 rounds it.
float to_tf32(float x) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &x, 4);
  bits = (bits + 0x1000u) & ~0x1fffu;
  std::memcpy(&x, &bits, 4);
  return x;
}

// What a tensor-core kernel of `math` would write: each product of
// operands as the math rounds them (3xtf32: the small products first),
// summed in fp32, then the scale and shift in fp32.
std::vector<double> tensor_core_outputs(const ReferenceProblem& p, const convgen::oracle::Operands& o, Math math) {
  std::vector<double> out;
  const long long count = convgen::oracle::output_count(p);
  for (long long i = 0; i < count; ++i) {
    const int co = static_cast<int>(i / (static_cast<long long>(p.out_h) * p.out_w) % p.c_out);
    float sum = 0;
    for (const Tap& t : taps_of(p, o, i)) {
      const float x = static_cast<float>(t.x), w = static_cast<float>(t.w);
      const float x_big = to_tf32(x), w_big = to_tf32(w);
      if (math == Math::k3xTF32) {
        sum += to_tf32(x - x_big) * w_big;
        sum += x_big * to_tf32(w - w_big);
      }
      sum += x_big * w_big;
    }
    out.push_back(sum * o.epilogue_a[co] + o.epilogue_b[co]);
  }
  return out;
}

// The bound of math tf32 and 3xtf32 on uniform operands (which TF32
// rounds): a kernel of that math passes it; a tf32 kernel fails fp32's and
// 3xtf32's, so a kernel that rounds to TF32 without saying so is caught.
TEST(MathBound, EachMathPassesItsOwnBoundAndTf32FailsTheTighterOnes) {
  ReferenceProblem p = depthwise(DataType::kFloat32, Layout::kNCHW);
  const convgen::oracle::Operands o = convgen::oracle::make_operands(p, 21);
  const Reference reference = host_reference(p, o);
  auto check = [&](Math bound_math, Math kernel_math) {
    ReferenceProblem q = p;
    q.math = bound_math;
    return convgen::oracle::compare(q, kernel_output(q, tensor_core_outputs(q, o, kernel_math)), reference);
  };
  for (Math m : {Math::kTF32, Math::k3xTF32}) {
    const Comparison c = check(m, m);
    EXPECT_TRUE(c.passed()) << convgen::to_string(m) << ": " << convgen::oracle::describe(c, p, 5);
  }
  EXPECT_FALSE(check(Math::kFloat32, Math::kTF32).passed());
  EXPECT_FALSE(check(Math::k3xTF32, Math::kTF32).passed());
  // 3xtf32 is fp32's accuracy: it passes fp32's bound, widened only by its
  // three products a term.
  EXPECT_TRUE(check(Math::k3xTF32, Math::k3xTF32).max_rel_error < std::ldexp(1.0, -20));
}

// Winograd's transforms scale even sixteenths by 1/6, 1/12 and 1/24, so a
// kernel of math tf32 that multiplies the transformed operands on tensor
// cores rounds them: its bound on sixteenths (exact sums) must include
// tf32's product error, which the direct sum of sixteenths (exact in TF32)
// does not need. An output 2^-12 S off, within TF32's rounding and far
// outside fp32's sum, passes tf32's Winograd bound and fails fp32's and the
// direct tf32 one.
TEST(MathBound, WinogradTransformsRoundSixteenthsForTf32) {
  ReferenceProblem p = depthwise(DataType::kFloat32, Layout::kNCHW);
  p.groups = 1;  // a dense 3x3 layer of 3 input channels, stride 1
  p.exact_sums = true;
  const long long count = convgen::oracle::output_count(p);
  Reference reference;
  reference.value.assign(static_cast<size_t>(count), 1.0);
  reference.magnitude.assign(static_cast<size_t>(count), 4.0);
  const std::vector<double> off(static_cast<size_t>(count), 1.0 + std::ldexp(4.0, -12));
  auto passes = [&](Math math, bool winograd) {
    ReferenceProblem q = p;
    q.math = math;
    q.winograd_f4 = winograd;
    return convgen::oracle::compare(q, kernel_output(q, off), reference).passed();
  };
  EXPECT_TRUE(passes(Math::kTF32, true));
  EXPECT_FALSE(passes(Math::kFloat32, true));
  EXPECT_FALSE(passes(Math::k3xTF32, true));
  EXPECT_FALSE(passes(Math::kTF32, false));
}

// Element `at` (in elements) of stored bytes.
std::vector<unsigned char> element(const ReferenceProblem& p, const std::vector<unsigned char>& bytes, long long at) {
  const size_t size = static_cast<size_t>(convgen::oracle::element_size(p));
  return {bytes.begin() + static_cast<long>(at * size), bytes.begin() + static_cast<long>((at + 1) * size)};
}

// Every element of every tensor where convgen/convgen.h says NHWC keeps it:
// input [n, h, w, c], output and residual [n, out_h, out_w, c_out],
// depthwise filter [kh, kw, c*m] (taps first), dense filter [c_out, kh, kw, c].
TEST(StoredLayout, NhwcPutsEveryElementWhereTheRuntimeReadsIt) {
  for (DataType dtype : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16}) {
    SCOPED_TRACE(convgen::to_string(dtype));
    ReferenceProblem p = depthwise(dtype, Layout::kNHWC);
    p.residual = true;
    const convgen::oracle::Operands o = convgen::oracle::make_operands(p, 7);
    const std::vector<unsigned char> input = convgen::oracle::stored(p, Tensor::kInput, o.input);
    const std::vector<unsigned char> filter = convgen::oracle::stored(p, Tensor::kFilter, o.filter);
    const std::vector<unsigned char> residual = convgen::oracle::stored(p, Tensor::kResidual, o.residual);
    for (int n = 0; n < p.n; ++n)
      for (int c = 0; c < p.c; ++c)
        for (int y = 0; y < p.h; ++y)
          for (int x = 0; x < p.w; ++x) {
            const long long logical = ((1LL * n * p.c + c) * p.h + y) * p.w + x;
            const long long at = ((1LL * n * p.h + y) * p.w + x) * p.c + c;
            ASSERT_EQ(element(p, input, at), encoded(p, o.input[static_cast<size_t>(logical)]))
                << "input n" << n << " c" << c << " y" << y << " x" << x;
          }
    for (int co = 0; co < p.c_out; ++co)
      for (int ky = 0; ky < p.kh; ++ky)
        for (int kx = 0; kx < p.kw; ++kx) {
          const long long logical = (1LL * co * p.kh + ky) * p.kw + kx;
          const long long at = (1LL * ky * p.kw + kx) * p.c_out + co;
          ASSERT_EQ(element(p, filter, at), encoded(p, o.filter[static_cast<size_t>(logical)]))
              << "depthwise filter co" << co << " ky" << ky << " kx" << kx;
        }
    for (long long i = 0; i < convgen::oracle::output_count(p); ++i) {
      ASSERT_EQ(element(p, residual, output_position(p, i)), encoded(p, o.residual[static_cast<size_t>(i)]))
          << "residual " << i;
    }

    // Dense: [c_out, kh, kw, c].
    ReferenceProblem dense = p;
    dense.groups = 1;
    dense.c_out = 2;
    dense.filter_taps_first = false;
    const convgen::oracle::Operands d = convgen::oracle::make_operands(dense, 8);
    const std::vector<unsigned char> dense_filter = convgen::oracle::stored(dense, Tensor::kFilter, d.filter);
    for (int co = 0; co < dense.c_out; ++co)
      for (int ci = 0; ci < dense.c; ++ci)
        for (int ky = 0; ky < dense.kh; ++ky)
          for (int kx = 0; kx < dense.kw; ++kx) {
            const long long logical = ((1LL * co * dense.c + ci) * dense.kh + ky) * dense.kw + kx;
            const long long at = ((1LL * co * dense.kh + ky) * dense.kw + kx) * dense.c + ci;
            ASSERT_EQ(element(dense, dense_filter, at), encoded(dense, d.filter[static_cast<size_t>(logical)]))
                << "dense filter co" << co << " ci" << ci << " ky" << ky << " kx" << kx;
          }
  }
}

// NCHW keeps the logical order, in every dtype.
TEST(StoredLayout, NchwIsTheLogicalOrder) {
  for (DataType dtype : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16}) {
    const ReferenceProblem p = depthwise(dtype, Layout::kNCHW);
    const convgen::oracle::Operands o = convgen::oracle::make_operands(p, 9);
    const std::vector<unsigned char> input = convgen::oracle::stored(p, Tensor::kInput, o.input);
    const std::vector<unsigned char> filter = convgen::oracle::stored(p, Tensor::kFilter, o.filter);
    for (size_t i = 0; i < o.input.size(); ++i) ASSERT_EQ(element(p, input, static_cast<long long>(i)), encoded(p, o.input[i]));
    for (size_t i = 0; i < o.filter.size(); ++i) ASSERT_EQ(element(p, filter, static_cast<long long>(i)), encoded(p, o.filter[i]));
  }
}

// The operands are drawn already rounded to the dtype: storing and reading
// them back changes nothing, so the reference sees what the kernel reads.
TEST(StoredLayout, OperandsAreValuesOfTheDtype) {
  for (DataType dtype : {DataType::kFloat16, DataType::kBFloat16}) {
    const ReferenceProblem p = depthwise(dtype, Layout::kNCHW);
    const convgen::oracle::Operands o = convgen::oracle::make_operands(p, 10);
    const int bits = convgen::row(dtype).fraction_bits;
    for (float v : o.input) {
      // A value of the dtype, in [-1, 1]: a multiple of 2^-(bits + 1) at
      // least (the spacing at 1/2..1), finer below.
      const double scaled = std::ldexp(static_cast<double>(v), bits - std::ilogb(v == 0 ? 1.0f : v));
      ASSERT_EQ(scaled, std::floor(scaled)) << v << " is not a " << convgen::to_string(dtype) << " value";
    }
  }
}

}  // namespace
