// Every kernel of the shipped specs, depthwise and dense, against the float64
// reference: at the batch the spec declares, at another batch (kernels take
// the batch at launch), and the generic kernel on the same problem.
#include <gtest/gtest.h>

#include <cstdio>

#include "harness.h"
#include "mobilenet_v2.h"
#include "seeds.h"

namespace {

using convgen::Conv2dArgs;
using convgen::Conv2dKernelInfo;
using convgen::Conv2dProblem;
using convgen::DepthwiseArgs;
using convgen::DepthwiseProblem;
using convgen::Dispatch;
using convgen::KernelInfo;
using convgen::Status;
using convgen::testing::check_problem;

struct Case {
  std::string library;
  KernelInfo kernel;
  convgen::Status (*run)(const DepthwiseProblem&, const DepthwiseArgs&, cudaStream_t, Dispatch);
};

// Names the case in test listings (gtest would print the object's bytes).
void PrintTo(const Case& c, std::ostream* os) { *os << c.library << "/" << c.kernel.name; }

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (const KernelInfo& k : convgen::seeds::kernels()) cases.push_back({"seeds", k, &convgen::seeds::depthwise_conv2d});
  for (const KernelInfo& k : convgen::mobilenet_v2::kernels()) {
    cases.push_back({"mobilenet_v2", k, &convgen::mobilenet_v2::depthwise_conv2d});
  }
  return cases;
}

class ShippedKernel : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    std::string why;
    if (!convgen::testing::gpu_available(&why)) GTEST_SKIP() << "no GPU, GPU tests skipped: " << why;
  }

  void expect_correct(const DepthwiseProblem& problem, const convgen::testing::Runner& run, const char* what) {
    const std::uint64_t seed = convgen::testing::test_seed();
    const auto result = check_problem(problem, run, seed);
    EXPECT_TRUE(result.passed) << what << " " << convgen::describe(problem) << " (seed " << seed
                               << "): " << result.message;
    std::printf("  %-8s n=%-3d %lld elements, max |err|/sum|terms| = %.2e, seed %llu\n", what, problem.n,
                result.elements, result.max_rel_error, static_cast<unsigned long long>(seed));
  }
};

TEST_P(ShippedKernel, MatchesFloat64Reference) {
  const Case& c = GetParam();
  DepthwiseProblem problem = c.kernel.problem;
  problem.n = problem.n == 0 ? 2 : problem.n;
  auto strict = [&](const DepthwiseProblem& p, const DepthwiseArgs& a, cudaStream_t s) {
    return c.run(p, a, s, Dispatch::kStrict);
  };
  expect_correct(problem, strict, "kernel");

  // The same kernel at a batch the spec did not declare.
  DepthwiseProblem other = problem;
  other.n = problem.n == 3 ? 2 : 3;
  expect_correct(other, strict, "kernel");

  auto generic = [](const DepthwiseProblem& p, const DepthwiseArgs& a, cudaStream_t s) {
    return convgen::generic_depthwise_conv2d(p, a, s);
  };
  expect_correct(problem, generic, "generic");
}

INSTANTIATE_TEST_SUITE_P(Shipped, ShippedKernel, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.kernel.name; });

// Dense conv2d kernels.
struct Conv2dCase {
  std::string library;
  Conv2dKernelInfo kernel;
  convgen::Status (*run)(const Conv2dProblem&, const Conv2dArgs&, cudaStream_t, Dispatch);
};

void PrintTo(const Conv2dCase& c, std::ostream* os) { *os << c.library << "/" << c.kernel.name; }

std::vector<Conv2dCase> all_conv2d_cases() {
  std::vector<Conv2dCase> cases;
  for (const Conv2dKernelInfo& k : convgen::seeds::conv2d_kernels()) {
    cases.push_back({"seeds", k, &convgen::seeds::conv2d});
  }
  for (const Conv2dKernelInfo& k : convgen::mobilenet_v2::conv2d_kernels()) {
    cases.push_back({"mobilenet_v2", k, &convgen::mobilenet_v2::conv2d});
  }
  return cases;
}

class ShippedConv2dKernel : public ::testing::TestWithParam<Conv2dCase> {
 protected:
  void SetUp() override {
    std::string why;
    if (!convgen::testing::gpu_available(&why)) GTEST_SKIP() << "no GPU, GPU tests skipped: " << why;
  }

  void expect_correct(const Conv2dProblem& problem, const convgen::testing::Conv2dRunner& run, const char* what) {
    const std::uint64_t seed = convgen::testing::test_seed();
    const auto result = check_problem(problem, run, seed);
    EXPECT_TRUE(result.passed) << what << " " << convgen::describe(problem) << " (seed " << seed
                               << "): " << result.message;
    std::printf("  %-8s n=%-3d %lld elements, max |err|/sum|terms| = %.2e, seed %llu\n", what, problem.n,
                result.elements, result.max_rel_error, static_cast<unsigned long long>(seed));
  }
};

TEST_P(ShippedConv2dKernel, MatchesFloat64Reference) {
  const Conv2dCase& c = GetParam();
  Conv2dProblem problem = c.kernel.problem;
  problem.n = problem.n == 0 ? 2 : problem.n;
  auto strict = [&](const Conv2dProblem& p, const Conv2dArgs& a, cudaStream_t s) {
    return c.run(p, a, s, Dispatch::kStrict);
  };
  expect_correct(problem, strict, "kernel");

  // The same kernel at a batch the spec did not declare.
  Conv2dProblem other = problem;
  other.n = problem.n == 3 ? 2 : 3;
  expect_correct(other, strict, "kernel");

  auto generic = [](const Conv2dProblem& p, const Conv2dArgs& a, cudaStream_t s) {
    return convgen::generic_conv2d(p, a, s);
  };
  expect_correct(problem, generic, "generic");
}

INSTANTIATE_TEST_SUITE_P(Shipped, ShippedConv2dKernel, ::testing::ValuesIn(all_conv2d_cases()),
                         [](const ::testing::TestParamInfo<Conv2dCase>& info) { return info.param.kernel.name; });
// A library may have no dense kernels; then the suite has no tests.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ShippedConv2dKernel);

}  // namespace
