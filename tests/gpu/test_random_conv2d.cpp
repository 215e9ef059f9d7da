// The dense randomized draw (tests/gpu/draw_random_spec.py --op conv2d):
// every dense kernel the generator made from it, under strict dispatch, and
// the generic dense kernel on the same problem, against the float64
// reference. A kernel of math tf32 or 3xtf32 is checked a second time on
// uniform operands, which its math rounds (sixteenths are exact in TF32),
// against the bound of that math. A winograd_nonfused kernel is checked
// against the bound of its F(4x4) transforms, with the workspace it asks
// for. Built once per drawn library:
// DRAW_LIBRARY names it (default random_conv2d).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "harness.h"

#ifndef DRAW_LIBRARY
#define DRAW_LIBRARY random_conv2d
#endif
#define DRAW_STRINGIFY(x) #x
#define DRAW_EXPAND_STRINGIFY(x) DRAW_STRINGIFY(x)
#define DRAW_NAME DRAW_EXPAND_STRINGIFY(DRAW_LIBRARY)
#include DRAW_EXPAND_STRINGIFY(DRAW_LIBRARY.h)

namespace {

using convgen::Conv2dArgs;
using convgen::Conv2dProblem;
using convgen::Dispatch;

TEST(RandomConv2dDraw, EveryKernelAndTheGenericKernelMatchFloat64Reference) {
  std::string why;
  if (!convgen::testing::gpu_available(&why)) GTEST_SKIP() << "no GPU, GPU tests skipped: " << why;
  const std::vector<convgen::Conv2dKernelInfo>& kernels = convgen::DRAW_LIBRARY::conv2d_kernels();
  // SKIP_INVALID drops what the generator rejects; a draw it rejected whole
  // would otherwise pass with nothing checked.
  ASSERT_FALSE(kernels.empty()) << DRAW_NAME " has no dense kernels: see the " DRAW_NAME "_rejections test";
  const std::uint64_t seed = convgen::testing::test_seed();
  std::printf(DRAW_NAME ": input seed %llu (set CONVGEN_TEST_SEED to replay)\n",
              static_cast<unsigned long long>(seed));
  // Each call with the workspace its kernel needs (winograd_nonfused's).
  const auto specialized = convgen::testing::with_workspace(
      &convgen::DRAW_LIBRARY::find, [](const Conv2dProblem& p, const Conv2dArgs& a, cudaStream_t s) {
        return convgen::DRAW_LIBRARY::conv2d(p, a, s, Dispatch::kStrict);
      });
  auto generic = [](const Conv2dProblem& p, const Conv2dArgs& a, cudaStream_t s) {
    return convgen::generic_conv2d(p, a, s);
  };
  int checked = 0, kernel_failed = 0, generic_failed = 0;
  double worst = 0, worst_generic = 0;
  for (const convgen::Conv2dKernelInfo& k : kernels) {
    const convgen::KernelChoice choice = convgen::DRAW_LIBRARY::find(k.problem);
    EXPECT_TRUE(choice.specialized && choice.kernel == k.name)
        << k.name << ": find chose " << choice.kernel << ": " << choice.reason << choice.status.message;
    const convgen::testing::DenseSum sum = convgen::testing::dense_sum_of(k);
    const auto kernel = convgen::testing::check_problem(k.problem, specialized, seed + checked,
                                                        convgen::testing::DenseOperands::kSixteenths, sum);
    const auto fallback = convgen::testing::check_problem(k.problem, generic, seed + checked);
    ++checked;
    worst = std::max(worst, kernel.max_rel_error);
    worst_generic = std::max(worst_generic, fallback.max_rel_error);
    if (k.problem.math != convgen::Math::kFloat32) {
      const auto rounded = convgen::testing::check_problem(k.problem, specialized, seed + checked,
                                                           convgen::testing::DenseOperands::kUniform, sum);
      EXPECT_TRUE(rounded.passed) << k.name << " on uniform operands (math " << convgen::to_string(k.problem.math)
                                  << "): " << rounded.message;
      if (!rounded.passed && kernel.passed) ++kernel_failed;
    }
    if (!kernel.passed) ++kernel_failed;
    if (!fallback.passed) ++generic_failed;
    EXPECT_TRUE(kernel.passed) << k.name << " (" << k.spec_location << ", " << convgen::describe(k.problem)
                               << ", schedule " << k.schedule << "): " << kernel.message;
    EXPECT_TRUE(fallback.passed) << "generic kernel on " << k.name << ": " << fallback.message;
    if (checked % 50 == 0) std::printf("  [%d/%zu] checked\n", checked, kernels.size());
  }
  std::printf(DRAW_NAME ": %d dense kernels checked; specialized: %d passed, %d failed; generic: %d passed, "
              "%d failed; worst |err|/sum|terms| %.2e specialized, %.2e generic\n",
              checked, checked - kernel_failed, kernel_failed, checked - generic_failed, generic_failed, worst,
              worst_generic);
}

}  // namespace
