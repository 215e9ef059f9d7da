// The randomized draw (tests/gpu/draw_random_spec.py): every kernel the
// generator made from it, and the generic kernel on the same problem,
// against the float64 reference.
#include <gtest/gtest.h>

#include <cstdio>

#include "harness.h"
#include "random_draw.h"

namespace {

using convgen::DepthwiseArgs;
using convgen::DepthwiseProblem;
using convgen::Dispatch;

TEST(RandomDraw, EveryKernelAndTheGenericKernelMatchFloat64Reference) {
  std::string why;
  if (!convgen::testing::gpu_available(&why)) GTEST_SKIP() << "no GPU, GPU tests skipped: " << why;
  const std::uint64_t seed = convgen::testing::test_seed();
  std::printf("random draw: input seed %llu (set CONVGEN_TEST_SEED to replay)\n",
              static_cast<unsigned long long>(seed));
  auto specialized = [](const DepthwiseProblem& p, const DepthwiseArgs& a, cudaStream_t s) {
    return convgen::random_draw::depthwise_conv2d(p, a, s, Dispatch::kStrict);
  };
  auto generic = [](const DepthwiseProblem& p, const DepthwiseArgs& a, cudaStream_t s) {
    return convgen::generic_depthwise_conv2d(p, a, s);
  };
  int checked = 0, kernel_failed = 0, generic_failed = 0;
  double worst = 0;
  for (const convgen::KernelInfo& k : convgen::random_draw::kernels()) {
    const auto kernel = convgen::testing::check_problem(k.problem, specialized, seed + checked);
    const auto fallback = convgen::testing::check_problem(k.problem, generic, seed + checked);
    ++checked;
    worst = std::max(worst, kernel.max_rel_error);
    if (!kernel.passed) ++kernel_failed;
    if (!fallback.passed) ++generic_failed;
    EXPECT_TRUE(kernel.passed) << k.name << " (" << k.spec_location << "): " << kernel.message;
    EXPECT_TRUE(fallback.passed) << "generic kernel on " << k.name << ": " << fallback.message;
    if (checked % 50 == 0) std::printf("  [%d/%zu] checked\n", checked, convgen::random_draw::kernels().size());
  }
  std::printf("random draw: %d kernels checked; specialized: %d passed, %d failed; generic: %d passed, %d failed; "
              "worst |err|/sum|terms| %.2e\n",
              checked, checked - kernel_failed, kernel_failed, checked - generic_failed, generic_failed, worst);
}

}  // namespace
