// The randomized draw (tests/gpu/draw_random_spec.py): every kernel the
// generator made from it, and the generic kernel on the same problem,
// against the float64 reference. Built once per drawn library: DRAW_LIBRARY
// names it (default random_draw).
#include <gtest/gtest.h>

#include <cstdio>

#include "harness.h"

#ifndef DRAW_LIBRARY
#define DRAW_LIBRARY random_draw
#endif
#define DRAW_STRINGIFY(x) #x
#define DRAW_EXPAND_STRINGIFY(x) DRAW_STRINGIFY(x)
#define DRAW_NAME DRAW_EXPAND_STRINGIFY(DRAW_LIBRARY)
#include DRAW_EXPAND_STRINGIFY(DRAW_LIBRARY.h)

namespace {

using convgen::DepthwiseArgs;
using convgen::DepthwiseProblem;
using convgen::Dispatch;

TEST(RandomDraw, EveryKernelAndTheGenericKernelMatchFloat64Reference) {
  std::string why;
  if (!convgen::testing::gpu_available(&why)) GTEST_SKIP() << "no GPU, GPU tests skipped: " << why;
  const std::uint64_t seed = convgen::testing::test_seed();
  std::printf(DRAW_NAME ": input seed %llu (set CONVGEN_TEST_SEED to replay)\n",
              static_cast<unsigned long long>(seed));
  auto specialized = [](const DepthwiseProblem& p, const DepthwiseArgs& a, cudaStream_t s) {
    return convgen::DRAW_LIBRARY::depthwise_conv2d(p, a, s, Dispatch::kStrict);
  };
  auto generic = [](const DepthwiseProblem& p, const DepthwiseArgs& a, cudaStream_t s) {
    return convgen::generic_depthwise_conv2d(p, a, s);
  };
  int checked = 0, kernel_failed = 0, generic_failed = 0;
  double worst = 0;
  for (const convgen::DepthwiseKernelInfo& k : convgen::DRAW_LIBRARY::depthwise_kernels()) {
    const auto kernel = convgen::testing::check_problem(k.problem, specialized, seed + checked);
    const auto fallback = convgen::testing::check_problem(k.problem, generic, seed + checked);
    ++checked;
    worst = std::max(worst, kernel.max_rel_error);
    if (!kernel.passed) ++kernel_failed;
    if (!fallback.passed) ++generic_failed;
    EXPECT_TRUE(kernel.passed) << k.name << " (" << k.spec_location << "): " << kernel.message;
    EXPECT_TRUE(fallback.passed) << "generic kernel on " << k.name << ": " << fallback.message;
    if (checked % 50 == 0) std::printf("  [%d/%zu] checked\n", checked, convgen::DRAW_LIBRARY::depthwise_kernels().size());
  }
  std::printf(DRAW_NAME ": %d kernels checked; specialized: %d passed, %d failed; generic: %d passed, %d failed; "
              "worst |err|/sum|terms| %.2e\n",
              checked, checked - kernel_failed, kernel_failed, checked - generic_failed, generic_failed, worst);
}

}  // namespace
