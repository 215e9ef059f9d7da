// Every kernel of the shipped specs, depthwise and dense, against the float64
// reference: at the batch the spec declares, at another batch (kernels take
// the batch at launch), and the generic kernel on the same problem.
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <type_traits>

#include "harness.h"
#include "mobilenet_v2.h"
#include "seeds.h"

namespace {

using convgen::Conv2dArgs;
using convgen::Conv2dKernelInfo;
using convgen::Conv2dProblem;
using convgen::DepthwiseArgs;
using convgen::DepthwiseKernelInfo;
using convgen::DepthwiseProblem;
using convgen::Dispatch;
using convgen::Status;
using convgen::testing::check_problem;

// One shipped kernel of an operator: its library, what the library says of
// it, the library's call for the operator and the runtime's generic kernel.
template <class Problem, class Args>
struct CaseFor {
  std::string library;
  convgen::KernelInfoFor<Problem> kernel;
  Status (*run)(const Problem&, const Args&, cudaStream_t, Dispatch);
  Status (*generic)(const Problem&, const Args&, cudaStream_t);
  // Dense cases: the library's find(), which says the workspace a kernel needs.
  convgen::KernelChoice (*find)(const Problem&) = nullptr;
};
using Case = CaseFor<DepthwiseProblem, DepthwiseArgs>;
using Conv2dCase = CaseFor<Conv2dProblem, Conv2dArgs>;

// Names the case in test listings (gtest would print the object's bytes).
template <class Problem, class Args>
void PrintTo(const CaseFor<Problem, Args>& c, std::ostream* os) {
  *os << c.library << "/" << c.kernel.name;
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (const DepthwiseKernelInfo& k : convgen::seeds::depthwise_kernels()) {
    cases.push_back({"seeds", k, &convgen::seeds::depthwise_conv2d, &convgen::generic_depthwise_conv2d});
  }
  for (const DepthwiseKernelInfo& k : convgen::mobilenet_v2::depthwise_kernels()) {
    cases.push_back({"mobilenet_v2", k, &convgen::mobilenet_v2::depthwise_conv2d, &convgen::generic_depthwise_conv2d});
  }
  return cases;
}

std::vector<Conv2dCase> all_conv2d_cases() {
  std::vector<Conv2dCase> cases;
  for (const Conv2dKernelInfo& k : convgen::seeds::conv2d_kernels()) {
    cases.push_back({"seeds", k, &convgen::seeds::conv2d, &convgen::generic_conv2d, &convgen::seeds::find});
  }
  for (const Conv2dKernelInfo& k : convgen::mobilenet_v2::conv2d_kernels()) {
    cases.push_back(
        {"mobilenet_v2", k, &convgen::mobilenet_v2::conv2d, &convgen::generic_conv2d, &convgen::mobilenet_v2::find});
  }
  return cases;
}

// Runs the case's kernel under strict dispatch (or the generic kernel) on
// `problem`: a dense kernel with the workspace it asks for, against the
// bound of how it sums.
template <class Problem, class Args>
convgen::testing::CheckResult check_case(const CaseFor<Problem, Args>& c, const Problem& problem, bool generic,
                                         std::uint64_t seed) {
  const std::function<Status(const Problem&, const Args&, cudaStream_t)> run =
      [&c, generic](const Problem& p, const Args& a, cudaStream_t s) {
        return generic ? c.generic(p, a, s) : c.run(p, a, s, Dispatch::kStrict);
      };
  if constexpr (std::is_same_v<Problem, Conv2dProblem>) {
    if (!generic) {
      return check_problem(problem, convgen::testing::with_workspace(c.find, run), seed,
                           convgen::testing::DenseOperands::kSixteenths, convgen::testing::dense_sum_of(c.kernel));
    }
  }
  return check_problem(problem, run, seed);
}

template <class Problem, class Args>
void expect_correct(const CaseFor<Problem, Args>& c, const Problem& problem, bool generic) {
  const char* what = generic ? "generic" : "kernel";
  const std::uint64_t seed = convgen::testing::test_seed();
  const auto result = check_case(c, problem, generic, seed);
  EXPECT_TRUE(result.passed) << what << " " << convgen::describe(problem) << " (seed " << seed
                             << "): " << result.message;
  std::printf("  %-8s n=%-3d %lld elements, max |err|/sum|terms| = %.2e, seed %llu\n", what, problem.n,
              result.elements, result.max_rel_error, static_cast<unsigned long long>(seed));
}

// The kernel at the declared batch (2 for a runtime batch) and at another,
// under strict dispatch, and the generic kernel on the same problem.
template <class Problem, class Args>
void expect_shipped_kernel_correct(const CaseFor<Problem, Args>& c) {
  std::string why;
  if (!convgen::testing::gpu_available(&why)) GTEST_SKIP() << "no GPU, GPU tests skipped: " << why;
  Problem problem = c.kernel.problem;
  problem.n = problem.n == 0 ? 2 : problem.n;
  expect_correct(c, problem, false);
  Problem other = problem;
  other.n = problem.n == 3 ? 2 : 3;
  expect_correct(c, other, false);
  expect_correct(c, problem, true);
}

class ShippedKernel : public ::testing::TestWithParam<Case> {};
TEST_P(ShippedKernel, MatchesFloat64Reference) { expect_shipped_kernel_correct(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Shipped, ShippedKernel, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.kernel.name; });

class ShippedConv2dKernel : public ::testing::TestWithParam<Conv2dCase> {};
TEST_P(ShippedConv2dKernel, MatchesFloat64Reference) { expect_shipped_kernel_correct(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Shipped, ShippedConv2dKernel, ::testing::ValuesIn(all_conv2d_cases()),
                         [](const ::testing::TestParamInfo<Conv2dCase>& info) { return info.param.kernel.name; });
// A library may have no dense kernels; then the suite has no tests.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ShippedConv2dKernel);

}  // namespace
