// The tuner's search strategy (generator/src/tune/search.cpp) without a GPU:
// the test plays the runner, giving each candidate a made-up time.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "convgen/gen/arch.hpp"
#include "convgen/gen/plan.hpp"
#include "test_util.h"
#include "tune/search.hpp"

namespace {

using namespace convgen::gen;
using namespace convgen_test;
using convgen::tune::Candidate;
using convgen::tune::make_search;
using convgen::tune::SearchOptions;
using convgen::tune::State;

// The algorithms of the candidates a search proposes in up to `batches`
// batches of 16, each timed at `default_us` (the default rule's schedule)
// or 2 µs and a little more (every other one).
std::vector<std::string> searched_algorithms(const Workload& wl, const SearchOptions& options, double default_us,
                                             int batches) {
  std::vector<std::string> algorithms;
  auto search = make_search(wl, options, 1);
  for (int b = 0; b < batches; ++b) {
    std::vector<Candidate> batch = search->next_batch(16);
    if (batch.empty()) break;
    for (Candidate& c : batch) {
      c.state = State::kTimed;
      c.hot_us = c.is_default ? default_us : 2.0 + 0.01 * static_cast<double>(algorithms.size() % 7);
      c.cold_us = c.hot_us;
      if (!c.is_default) algorithms.push_back(c.plan.schedule.algorithm_name());
    }
    search->update(batch);
  }
  return algorithms;
}

// --algorithm NAME searches NAME's schedules alone. Where the default rule's
// schedule is another algorithm's and the fastest, it is timed but not
// walked from: the local search once queued its neighbours, so that
// `--algorithm pointwise` on MobileNetV2's 96 -> 576 spent its budget on
// implicit_gemm's tiles and stages.
TEST(Search, AnAlgorithmOptionSearchesThatAlgorithmAlone) {
  const Workload wl =
      workload("{op: conv2d, n: 64, c: 96, c_out: 576, h: 14, w: 14, filter: 1, padding: valid, dtype: float16, layout: NHWC}");
  SearchOptions options;
  options.plan_options.target = parse_arch_list("90");
  ASSERT_EQ(plan_kernel(wl, options.plan_options).schedule.algorithm_name(), "implicit_gemm") << "the premise";

  options.algorithm = "pointwise";
  const std::vector<std::string> pointwise = searched_algorithms(wl, options, 1.0, 12);
  EXPECT_GT(pointwise.size(), 24u) << "the local search ran past the seeds and samples";
  for (const std::string& a : pointwise) EXPECT_EQ(a, "pointwise");

  // Without the option, the fastest (the default) is walked from.
  options.algorithm.clear();
  const std::vector<std::string> all = searched_algorithms(wl, options, 1.0, 12);
  EXPECT_NE(std::count(all.begin(), all.end(), "implicit_gemm"), 0);
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
  EXPECT_NE(search->space().note.find("no schedule of --algorithm pointwise fits this kernel"), std::string::npos)
      << search->space().note << " / " << search->space().detail;
  const std::vector<Candidate> batch = search->next_batch(16);
  ASSERT_EQ(batch.size(), 1u);
  EXPECT_TRUE(batch.front().is_default);
}

}  // namespace
