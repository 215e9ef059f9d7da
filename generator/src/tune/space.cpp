// The schedule space: each algorithm's knobs and their spaces, enumerated
// and pruned by planning each schedule, and the moves of the local search.
#include "convgen/gen/tune_space.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>

namespace convgen::gen {

std::vector<AlgorithmSpace> schedule_space(const Workload& wl) {
  const Operator& op = *wl.op;
  std::vector<AlgorithmSpace> spaces;
  for (const Algorithm* a : op.algorithms) {
    if (!a->serves(wl)) continue;  // its dtype, layout or math is not the workload's
    AlgorithmSpace s;
    s.algorithm = a;
    s.size = 1;
    for (const std::vector<Knob>* knobs : {&a->knobs, &op.common_knobs}) {
      for (const Knob& k : *knobs) {
        s.knobs.push_back(&k);
        s.size *= std::pow(static_cast<double>(k.space().size()), static_cast<double>(k.values.size()));
      }
    }
    spaces.push_back(s);
  }
  return spaces;
}

Workload with_schedule(const Workload& wl, const Algorithm& algorithm, const std::map<std::string, int>& values) {
  Workload out = wl;
  ScheduleRequest& req = out.schedule;
  req = ScheduleRequest{};
  req.where = wl.where;
  req.algorithm = algorithm.name;
  req.values = values;
  for (const std::vector<Knob>* knobs : {&algorithm.knobs, &algorithm.op->common_knobs}) {
    for (const Knob& k : *knobs) {
      if (values.count(k.values.front())) req.keys.push_back({k.key, wl.where, wl.where});
    }
  }
  return out;
}

bool try_plan(const Workload& wl, const Algorithm& algorithm, const std::map<std::string, int>& values,
              const PlanOptions& options, KernelPlan& plan) {
  try {
    KernelPlan p = plan_kernel(with_schedule(wl, algorithm, values), options);
    // The plan fills knobs the values leave out: the schedule is what it planned.
    if (p.schedule.algorithm != &algorithm) return false;
    plan = std::move(p);
    plan.workload.schedule = wl.schedule;
    return true;
  } catch (const InputError&) {
    return false;
  }
}

namespace {

// Every value name of a space, with the knob's space.
struct Axis {
  std::string name;
  std::vector<int> values;
};

std::vector<Axis> axes_of(const Algorithm& algorithm) {
  std::vector<Axis> axes;
  for (const std::vector<Knob>* knobs : {&algorithm.knobs, &algorithm.op->common_knobs}) {
    for (const Knob& k : *knobs) {
      for (const std::string& name : k.values) axes.push_back({name, k.space()});
    }
  }
  return axes;
}

}  // namespace

bool enumerate_schedules(const Workload& wl, const AlgorithmSpace& space, double limit, const PlanOptions& options,
                         std::vector<KernelPlan>& out) {
  if (space.size > limit) return false;
  const std::vector<Axis> axes = axes_of(*space.algorithm);
  std::vector<size_t> at(axes.size(), 0);
  while (true) {
    std::map<std::string, int> values;
    for (size_t i = 0; i < axes.size(); ++i) values[axes[i].name] = axes[i].values[at[i]];
    KernelPlan plan;
    if (try_plan(wl, *space.algorithm, values, options, plan)) out.push_back(std::move(plan));
    size_t i = 0;
    while (i < axes.size() && ++at[i] == axes[i].values.size()) at[i++] = 0;
    if (i == axes.size()) break;
  }
  return true;
}

namespace {

// The index of `value` in `values`, or of the nearest one.
size_t nearest(const std::vector<int>& values, int value) {
  size_t best = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    if (std::abs(values[i] - value) < std::abs(values[best] - value)) best = i;
  }
  return best;
}

}  // namespace

std::vector<KernelPlan> neighbour_schedules(const KernelPlan& from, const PlanOptions& options) {
  const Algorithm& algorithm = *from.schedule.algorithm;
  std::vector<KernelPlan> out;
  std::vector<std::map<std::string, int>> tried;
  const auto add = [&](const std::map<std::string, int>& values) {
    if (values == from.schedule.values) return;
    if (std::find(tried.begin(), tried.end(), values) != tried.end()) return;
    tried.push_back(values);
    KernelPlan plan;
    if (try_plan(from.workload, algorithm, values, options, plan)) out.push_back(std::move(plan));
  };
  const auto moved = [&](std::map<std::string, int> values, const std::string& name, const std::vector<int>& space,
                         int step) -> std::optional<std::map<std::string, int>> {
    const long long i = static_cast<long long>(nearest(space, values.at(name))) + step;
    if (i < 0 || i >= static_cast<long long>(space.size())) return std::nullopt;
    values[name] = space[static_cast<size_t>(i)];
    return values;
  };
  for (const std::vector<Knob>* knobs : {&algorithm.knobs, &algorithm.op->common_knobs}) {
    for (const Knob& k : *knobs) {
      const std::vector<int> space = k.space();
      for (const std::string& name : k.values) {
        for (int step : {-1, 1}) {
          if (auto v = moved(from.schedule.values, name, space, step)) add(*v);
        }
      }
      // A list knob's values often go together (a tile and its threads): move two at once.
      for (size_t a = 0; a < k.values.size(); ++a) {
        for (size_t b = a + 1; b < k.values.size(); ++b) {
          for (int sa : {-1, 1}) {
            for (int sb : {-1, 1}) {
              auto v = moved(from.schedule.values, k.values[a], space, sa);
              if (v) v = moved(*v, k.values[b], space, sb);
              if (v) add(*v);
            }
          }
        }
      }
    }
  }
  return out;
}

KernelPlan random_walk(const KernelPlan& from, int steps, std::mt19937_64& rng, const PlanOptions& options) {
  KernelPlan at = from;
  for (int i = 0; i < steps; ++i) {
    std::vector<KernelPlan> next = neighbour_schedules(at, options);
    if (next.empty()) break;
    at = std::move(next[std::uniform_int_distribution<size_t>(0, next.size() - 1)(rng)]);
  }
  return at;
}

}  // namespace convgen::gen
