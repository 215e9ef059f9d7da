// The tuner's search strategy (generator/src/tune/search.cpp) without a GPU:
// the test plays the runner, giving each candidate a made-up time.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "convgen/gen/arch.hpp"
#include "convgen/gen/plan.hpp"
#include "convgen/gen/tune_space.hpp"
#include "test_util.h"
#include "tune/search.hpp"

namespace {

using namespace convgen::gen;
using namespace convgen_test;
using convgen::tune::Candidate;
using convgen::tune::kEarlyStop;
using convgen::tune::make_search;
using convgen::tune::ranked;
using convgen::tune::SearchOptions;
using convgen::tune::State;

// The candidates a search proposes in up to `batches` batches of 16, other
// than the default rule's schedule. The test plays the tuner's runner: the
// default takes `default_us`, every other candidate 2 µs and a little more;
// a candidate over kEarlyStop times the bar (the best so far of those the
// search ranks, tune::ranked) is stopped early, as the runner stops it.
std::vector<KernelPlan> proposed(const Workload& wl, const SearchOptions& options, double default_us, int batches) {
  std::vector<KernelPlan> plans;
  auto search = make_search(wl, options, 1);
  double bar_us = 0;
  for (int b = 0; b < batches; ++b) {
    std::vector<Candidate> batch = search->next_batch(16);
    if (batch.empty()) break;
    for (Candidate& c : batch) {
      c.hot_us = c.is_default ? default_us : 2.0 + 0.01 * static_cast<double>(plans.size() % 7);
      c.cold_us = c.hot_us;
      c.state = bar_us > 0 && c.hot_us > kEarlyStop * bar_us ? State::kStoppedEarly : State::kTimed;
      if (c.state == State::kTimed && ranked(options, c) && (bar_us <= 0 || c.hot_us < bar_us)) bar_us = c.hot_us;
      if (!c.is_default) plans.push_back(c.plan);
    }
    search->update(batch);
  }
  return plans;
}

// --algorithm NAME searches NAME's schedules alone. Where the default rule's
// schedule is another algorithm's and the fastest (here by 2x, past the
// early stop), it is timed but not walked from, and NAME's candidates are
// measured against each other: the local search once queued the default's
// neighbours, so that `--algorithm pointwise` on MobileNetV2's 96 -> 576
// (implicit_gemm's by default then) and 320 -> 1280 spent its budget on
// implicit_gemm's tiles and stages.
TEST(Search, AnAlgorithmOptionSearchesThatAlgorithmAlone) {
  const Workload wl = workload(
      "{op: conv2d, n: 64, c: 320, c_out: 1280, h: 7, w: 7, filter: 1, padding: valid, dtype: float16, layout: NHWC}");
  SearchOptions options;
  options.plan_options.target = parse_arch_list("90");
  const KernelPlan def = plan_kernel(wl, options.plan_options);
  ASSERT_EQ(def.schedule.algorithm_name(), "implicit_gemm") << "the premise";
  const auto holds = [](const std::vector<KernelPlan>& plans, const KernelPlan& p) {
    return std::any_of(plans.begin(), plans.end(), [&](const KernelPlan& q) { return q.schedule == p.schedule; });
  };

  options.algorithm = "pointwise";
  const std::vector<KernelPlan> pointwise = proposed(wl, options, 1.0, 12);
  EXPECT_GT(pointwise.size(), 24u) << "the local search ran past the seeds and samples";
  for (const KernelPlan& p : pointwise) EXPECT_EQ(p.schedule.algorithm_name(), "pointwise");

  // Without the option, the fastest (the default) is walked from: all its
  // neighbours are proposed.
  options.algorithm.clear();
  const std::vector<KernelPlan> all = proposed(wl, options, 1.0, 12);
  const std::vector<KernelPlan> neighbours = neighbour_schedules(def, options.plan_options);
  ASSERT_FALSE(neighbours.empty());
  for (const KernelPlan& n : neighbours) EXPECT_TRUE(holds(all, n)) << n.schedule.summary();
}

// An algorithm none of whose schedules fit the kernel leaves the default
// alone to time, and the search says so.
TEST(Search, AnAlgorithmThatDoesNotServeTheKernelIsSaid) {
  const Workload wl = workload(
      "{op: conv2d, n: 8, c: 64, c_out: 64, h: 28, w: 28, filter: 3, padding: same, dtype: float16, layout: NHWC}");
  SearchOptions options;
  options.plan_options.target = parse_arch_list("90");
  options.algorithm = "pointwise";  // 1x1 filters only
  auto search = make_search(wl, options, 1);
  EXPECT_NE(search->space().note.find("no schedule of --algorithm pointwise found to fit this kernel"), std::string::npos)
      << search->space().note << " / " << search->space().detail;
  const std::vector<Candidate> batch = search->next_batch(16);
  ASSERT_EQ(batch.size(), 1u);
  EXPECT_TRUE(batch.front().is_default);
}

}  // namespace
