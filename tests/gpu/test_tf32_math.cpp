// Each kernel computes in the math its name says (tests/gpu/tf32_math.yaml:
// the gemm algorithm in NCHW, a tensor_stem stem and a pointwise layer in NHWC;
// tf32_math_nhwc.yaml: implicit_gemm in NHWC,
// where CUTLASS's headers are found). On operands uniform in [-1, 1] every
// kernel stays within its math's bound (convgen/oracle/oracle.h), and the
// largest |err| / S over its outputs (S: the sum of its terms' magnitudes)
// tells the maths apart:
//   - fp32 and 3xtf32: only the fp32 sum's rounding, about 2^-23 x
//     sqrt(K) / sqrt(K) relative to S; below 2^-18 here (K = 64 and 144);
//   - tf32: each product off by about 2^-11.4 of itself, their sum by about
//     2^-11.4 x sqrt(sum of squares) ~ 2^-14.6 x S at K = 144, the largest of
//     thousands of outputs near 2^-13; above 2^-16 here.
// A kernel that rounded to TF32 without saying so, or a 3xtf32 kernel that
// lost its remainder products, fails.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "harness.h"
#include "tf32_math.h"
#ifdef CONVGEN_TF32_MATH_NHWC
#include "tf32_math_nhwc.h"
#endif

namespace {

using convgen::Conv2dArgs;
using convgen::Conv2dKernelInfo;
using convgen::Conv2dProblem;
using convgen::Dispatch;
using convgen::Math;

using Library = convgen::Status (*)(const Conv2dProblem&, const Conv2dArgs&, cudaStream_t, Dispatch);

void check_library(const std::vector<Conv2dKernelInfo>& kernels, Library library, size_t expected_kernels) {
  ASSERT_EQ(kernels.size(), expected_kernels);
  const std::uint64_t seed = convgen::testing::test_seed();
  std::printf("input seed %llu (set CONVGEN_TEST_SEED to replay)\n", static_cast<unsigned long long>(seed));
  for (const Conv2dKernelInfo& k : kernels) {
    Conv2dProblem p = k.problem;
    p.n = 4;
    auto strict = [library](const Conv2dProblem& q, const Conv2dArgs& a, cudaStream_t s) {
      return library(q, a, s, Dispatch::kStrict);
    };
    const auto exact = convgen::testing::check_problem(p, strict, seed);
    EXPECT_TRUE(exact.passed) << k.name << " on sixteenths: " << exact.message;
    const auto uniform =
        convgen::testing::check_problem(p, strict, seed + 1, convgen::testing::DenseOperands::kUniform);
    EXPECT_TRUE(uniform.passed) << k.name << " on uniform operands: " << uniform.message;
    const double error = uniform.max_rel_error;
    std::printf("%-60s math %-6s largest |err|/S %.3g (2^%.1f)\n", k.name.c_str(), convgen::to_string(p.math), error,
                std::log2(error));
    if (p.math == Math::kTF32) {
      EXPECT_GT(error, std::ldexp(1.0, -16)) << k.name << ": no trace of TF32 rounding";
    } else {
      EXPECT_LT(error, std::ldexp(1.0, -18)) << k.name << ": less accurate than fp32 sums";
    }
  }
}

TEST(Tf32Math, GemmAndStemKernelsComputeInTheirMath) {
  std::string why;
  if (!convgen::testing::tf32_tensor_cores(&why)) GTEST_SKIP() << why;
  check_library(convgen::tf32_math::conv2d_kernels(), &convgen::tf32_math::conv2d, 8);
}

TEST(Tf32Math, ImplicitGemmKernelsComputeInTheirMath) {
#ifdef CONVGEN_TF32_MATH_NHWC
  std::string why;
  if (!convgen::testing::tf32_tensor_cores(&why)) GTEST_SKIP() << why;
  check_library(convgen::tf32_math_nhwc::conv2d_kernels(), &convgen::tf32_math_nhwc::conv2d, 4);
#else
  GTEST_SKIP() << "built without CUTLASS's headers: no implicit_gemm kernels";
#endif
}

// A problem's math picks its kernel: the fp32 problem never runs the tf32
// kernel of the same shape, and a math without a kernel runs the generic
// kernel (in fp32, within every math's bound), or is refused under strict.
TEST(Tf32Math, TheProblemsMathChoosesTheKernel) {
  const std::vector<Conv2dKernelInfo>& kernels = convgen::tf32_math::conv2d_kernels();
  for (const Conv2dKernelInfo& k : kernels) {
    Conv2dProblem p = k.problem;
    p.n = 2;  // the kernels take the batch at launch
    const convgen::KernelChoice choice = convgen::tf32_math::find(p);
    EXPECT_TRUE(choice.specialized && choice.kernel == k.name)
        << k.name << " found " << choice.kernel << ": " << choice.reason << choice.status.message;
  }
  Conv2dProblem other = kernels.front().problem;
  other.n = 1;
  other.c = 8;  // no kernel of this shape in any math
  other.math = Math::kTF32;
  const convgen::KernelChoice choice = convgen::tf32_math::find(other);
  EXPECT_FALSE(choice.specialized);
  EXPECT_EQ(choice.kernel, "generic_conv2d_f32_nchw");
}

}  // namespace
