// The schedule space the tuner searches, which the core owns: each
// algorithm's knobs and their Knob::space(), pruned by the same plan that
// checks a spec. Needs no GPU (tests/cpu/test_tuning.cpp checks it).
#pragma once

#include <map>
#include <random>
#include <string>
#include <vector>

#include "convgen/gen/plan.hpp"

namespace convgen::gen {

// Every schedule the tuner may try for a workload, per algorithm that serves
// its dtype, layout and math: the product of its knobs' spaces (and the
// operator's common knobs).
struct AlgorithmSpace {
  const Algorithm* algorithm = nullptr;
  std::vector<const Knob*> knobs;  // the algorithm's, then the operator's common ones
  double size = 0;                 // schedules before pruning (a product; may be huge)
};
std::vector<AlgorithmSpace> schedule_space(const Workload& wl);

// The workload with the schedule fully set: `values` by value name, as
// Schedule::values holds them.
Workload with_schedule(const Workload& wl, const Algorithm& algorithm, const std::map<std::string, int>& values);

// Plans a schedule; false (and the plan untouched) when it does not fit.
bool try_plan(const Workload& wl, const Algorithm& algorithm, const std::map<std::string, int>& values,
              const PlanOptions& options, KernelPlan& plan);

// Every schedule of `space` that fits, when the space has at most `limit`
// schedules before pruning; else nothing and false.
bool enumerate_schedules(const Workload& wl, const AlgorithmSpace& space, double limit, const PlanOptions& options,
                         std::vector<KernelPlan>& out);

// The schedules one step from `from` that fit: each knob value moved to the
// next or previous value of its space, one at a time, and (for a knob of two
// or three values, such as block_tile) two values at once.
std::vector<KernelPlan> neighbour_schedules(const KernelPlan& from, const PlanOptions& options);

// A schedule reached from `from` by `steps` random single-knob moves that
// each keep it fitting (fewer when it gets stuck).
KernelPlan random_walk(const KernelPlan& from, int steps, std::mt19937_64& rng, const PlanOptions& options);

}  // namespace convgen::gen
