// The randomized draw (tests/gpu/draw_random_spec.py): every kernel the
// generator made from it, and the generic kernel on the same problem,
// against the float64 reference. Built once per drawn library: DRAW_LIBRARY
// names it (default random_draw).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

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

// What one dtype x layout of the library gave (a draw may mix them).
struct Tally {
  int checked = 0, kernel_failed = 0, generic_failed = 0;
  double worst = 0, generic_worst = 0;
  std::map<std::string, int> algorithms;  // kernels per algorithm
};

// "f16 NHWC": the dtype x layout a kernel serves.
std::string storage(const DepthwiseProblem& p) {
  return std::string(convgen::row(p.dtype).name_part) + " " + convgen::row(p.layout).word;
}

// "rows" of "rows: rows_per_thread 2, ...".
std::string algorithm(const convgen::DepthwiseKernelInfo& k) { return k.schedule.substr(0, k.schedule.find(':')); }

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
  const std::vector<convgen::DepthwiseKernelInfo> kernels = convgen::DRAW_LIBRARY::depthwise_kernels();
  // A draw the generator refused whole (an algorithm that serves none of
  // its dtypes and layouts) must not pass by checking nothing.
  ASSERT_FALSE(kernels.empty()) << DRAW_NAME " has no kernels: see its rejections test";
  std::map<std::string, Tally> tallies;
  int checked = 0;
  for (const convgen::DepthwiseKernelInfo& k : kernels) {
    const auto kernel = convgen::testing::check_problem(k.problem, specialized, seed + checked);
    const auto fallback = convgen::testing::check_problem(k.problem, generic, seed + checked);
    ++checked;
    Tally& t = tallies[storage(k.problem)];
    ++t.checked;
    ++t.algorithms[algorithm(k)];
    t.worst = std::max(t.worst, kernel.max_rel_error);
    t.generic_worst = std::max(t.generic_worst, fallback.max_rel_error);
    if (!kernel.passed) ++t.kernel_failed;
    if (!fallback.passed) ++t.generic_failed;
    EXPECT_TRUE(kernel.passed) << k.name << " (" << k.spec_location << "): " << kernel.message;
    EXPECT_TRUE(fallback.passed) << "generic kernel on " << k.name << ": " << fallback.message;
    if (checked % 50 == 0) std::printf("  [%d/%zu] checked\n", checked, kernels.size());
  }
  for (const auto& [combination, t] : tallies) {
    std::string algorithms;
    for (const auto& [name, count] : t.algorithms) {
      algorithms += (algorithms.empty() ? "" : ", ") + name + " " + std::to_string(count);
    }
    std::printf(DRAW_NAME " %s: %d kernels checked (%s); specialized: %d passed, %d failed, worst |err|/sum|terms| "
                "%.2e; generic: %d passed, %d failed, worst %.2e\n",
                combination.c_str(), t.checked, algorithms.c_str(), t.checked - t.kernel_failed, t.kernel_failed,
                t.worst, t.checked - t.generic_failed, t.generic_failed, t.generic_worst);
  }
}

}  // namespace
