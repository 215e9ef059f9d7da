// Planning: which algorithm, then that algorithm's defaults, checks and
// derived numbers (generator/src/ops/), then what every kernel shares.
#include "convgen/gen/plan.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <stdexcept>


namespace convgen::gen {

std::string KernelPlan::gpus_it_runs_on() const {
  if (min_arch == 0 && max_arch == 0) return "every GPU";
  const std::string oldest = "sm_" + std::to_string(min_arch);
  if (max_arch == 0) return oldest + " and newer";
  return max_arch == min_arch ? oldest : oldest + " to sm_" + std::to_string(max_arch);
}

long long KernelPlan::number(const std::string& name) const {
  const auto it = values.find(name);
  if (it == values.end() || !std::holds_alternative<long long>(it->second)) {
    throw std::out_of_range("kernel plan " + this->name + " has no number '" + name + "'");
  }
  return std::get<long long>(it->second);
}

bool KernelPlan::flag(const std::string& name) const {
  const auto it = values.find(name);
  if (it == values.end() || !std::holds_alternative<bool>(it->second)) {
    throw std::out_of_range("kernel plan " + this->name + " has no flag '" + name + "'");
  }
  return std::get<bool>(it->second);
}

std::string kernel_name(const Workload& wl) { return wl.op->kernel_name(wl); }

std::string origin_text(const KernelPlan& plan) {
  switch (plan.origin) {
    case ScheduleOrigin::kSpec:
      return "set in the spec";
    case ScheduleOrigin::kTuned: {
      char speedup[32];
      std::snprintf(speedup, sizeof speedup, "%.2fx", plan.tuned_us > 0 ? plan.default_us / plan.tuned_us : 0.0);
      return "tuned on " + plan.tuned_gpu + ": " + speedup + " the speed of the default rule's";
    }
    case ScheduleOrigin::kUnverified:
      return "UNVERIFIED tuning entry for " + plan.tuned_gpu +
             ": changed after convgen wrote it, no measurement vouches for it";
    case ScheduleOrigin::kDefault:
      break;
  }
  return "the default rule";
}

Schedule default_schedule(const Workload& wl, const PlanOptions& options) {
  Workload bare = wl;
  bare.schedule = ScheduleRequest{};
  bare.schedule.where = wl.schedule.where;
  return plan_kernel(bare, options).schedule;
}

namespace {

// "float32 in NCHW", "float16, bfloat16 or float32 (math tf32 or 3xtf32)
// in NHWC": what an algorithm serves. Its float32 maths are named where
// they matter: where it has no fp32 kernels (those serve every math it
// lists), or where the workload's math is not among them.
std::string served_text(const Algorithm& a, const Workload& wl) {
  std::string text;
  const auto& maths = a.float32_maths;
  const auto serves = [&](Math m) { return std::find(maths.begin(), maths.end(), m) != maths.end(); };
  for (size_t i = 0; i < a.dtypes.size(); ++i) {
    text += (i == 0 ? "" : i + 1 == a.dtypes.size() ? " or " : ", ") + std::string(to_string(a.dtypes[i]));
    if (a.dtypes[i] != DataType::kFloat32 || (serves(Math::kFloat32) && serves(wl.math))) continue;
    text += " (math ";
    for (size_t m = 0; m < maths.size(); ++m) {
      text += (m == 0 ? "" : m + 1 == maths.size() ? " or " : ", ") + std::string(to_string(maths[m]));
    }
    text += ")";
  }
  text += " in ";
  for (size_t i = 0; i < a.layouts.size(); ++i) text += (i == 0 ? "" : " or ") + std::string(to_string(a.layouts[i]));
  return text;
}

std::string join_keys(const std::vector<Knob>& knobs) {
  std::string text;
  for (const Knob& k : knobs) text += (text.empty() ? "" : ", ") + k.key;
  return text;
}

// The algorithm a workload uses: as the spec says; else the first whose
// knobs include every algorithm knob the spec sets (a key may belong to
// several, e.g. rows_per_thread or block_tile), else the first that owns any
// of them, each first among those that serve the workload's storage and
// shape; else the default rule's. A key the chosen algorithm does not own is an error.
const Algorithm& choose_algorithm(const Workload& wl, const PlanOptions& options) {
  const Operator& op = *wl.op;
  const ScheduleRequest& req = wl.schedule;
  const auto owns = [](const Algorithm& a, const std::string& key) {
    return std::any_of(a.knobs.begin(), a.knobs.end(), [&](const Knob& k) { return k.key == key; });
  };
  // The keys the spec sets that belong to some algorithm (not the common knobs).
  std::vector<const ScheduleRequest::Key*> algorithm_keys;
  for (const ScheduleRequest::Key& entry : req.keys) {
    if (std::any_of(op.algorithms.begin(), op.algorithms.end(), [&](const Algorithm* a) { return owns(*a, entry.key); })) {
      algorithm_keys.push_back(&entry);
    }
  }
  const Algorithm* chosen = req.algorithm ? op.algorithm(*req.algorithm) : nullptr;
  // Knobs choose among the algorithms that serve the workload's dtype and
  // layout (then, failing those, among all: the error names the mismatch).
  for (bool serving_only : {true, false}) {
    for (const Algorithm* a : op.algorithms) {
      if (chosen != nullptr || algorithm_keys.empty()) break;
      if (serving_only && !(a->serves(wl) && a->serves_shape(wl))) continue;
      if (std::all_of(algorithm_keys.begin(), algorithm_keys.end(), [&](const auto* k) { return owns(*a, k->key); })) {
        chosen = a;
      }
    }
    for (const Algorithm* a : op.algorithms) {
      if (chosen != nullptr) break;
      if (serving_only && !(a->serves(wl) && a->serves_shape(wl))) continue;
      if (std::any_of(algorithm_keys.begin(), algorithm_keys.end(), [&](const auto* k) { return owns(*a, k->key); })) {
        chosen = a;
      }
    }
  }
  if (chosen == nullptr) chosen = &op.default_algorithm(wl, options);
  // The operator's rule knows its algorithms' speed; which of them serve a
  // dtype and layout is theirs to say: where the rule's pick does not serve
  // the workload, the first algorithm that does.
  for (const Algorithm* a : op.algorithms) {
    if (chosen->serves(wl) || req.algorithm) break;
    if (a->serves(wl)) chosen = a;
  }
  if (!chosen->serves(wl)) {
    std::string serving;
    for (const Algorithm* a : op.algorithms) {
      if (a->serves(wl)) serving += std::string(serving.empty() ? "" : ", ") + a->name;
    }
    // The math is said where it is not the default, or where it alone is
    // what the algorithm (of those the spec allows) does not serve.
    const auto has = [](const auto& list, const auto& value) {
      return std::find(list.begin(), list.end(), value) != list.end();
    };
    const auto refuses_math_only = [&](const Algorithm* a) {
      return wl.dtype == DataType::kFloat32 && has(a->dtypes, wl.dtype) && has(a->layouts, wl.layout) &&
             !has(a->float32_maths, wl.math);
    };
    const bool math_refused = req.algorithm ? refuses_math_only(chosen)
                                            : std::any_of(op.algorithms.begin(), op.algorithms.end(), refuses_math_only);
    const std::string storage = std::string(to_string(wl.dtype)) +
                                (wl.math != Math::kFloat32 || math_refused ? std::string(" math ") + to_string(wl.math)
                                                                            : "") +
                                " " + to_string(wl.layout);
    const SourceLocation& blame = req.algorithm                      ? req.algorithm_where
                                  : wl.dtype != DataType::kFloat32  ? wl.dtype_where
                                  : wl.math != Math::kFloat32       ? wl.math_where
                                  : wl.layout != Layout::kNCHW      ? wl.layout_where
                                                                    : wl.where;
    if (req.algorithm) {
      throw InputError({{blame, "algorithm '" + chosen->name + "' serves " + served_text(*chosen, wl) +
                                    "; this workload is " + storage +
                                    (serving.empty() ? "; no algorithm of " + op.name + " serves it yet"
                                                     : "; the algorithms of " + op.name + " that serve it: " + serving)}});
    }
    std::string each;
    for (const Algorithm* a : op.algorithms) each += (each.empty() ? "" : "; ") + a->name + ": " + served_text(*a, wl);
    throw InputError({{blame, "no algorithm of " + op.name + " serves " + storage + " yet (" + each + ")"}});
  }
  // For each other algorithm in order, the first key it owns that the
  // chosen one does not (each key once, naming every algorithm that owns it).
  std::vector<Diagnostic> errors;
  std::vector<const ScheduleRequest::Key*> reported;
  for (const Algorithm* other : op.algorithms) {
    for (const ScheduleRequest::Key* k : algorithm_keys) {
      if (!owns(*other, k->key) || owns(*chosen, k->key)) continue;
      if (std::find(reported.begin(), reported.end(), k) == reported.end()) {
        reported.push_back(k);
        // The owners that serve the workload (all owners when none does).
        const bool any_serving = std::any_of(op.algorithms.begin(), op.algorithms.end(),
                                             [&](const Algorithm* a) { return owns(*a, k->key) && a->serves(wl); });
        std::string owners;
        for (const Algorithm* a : op.algorithms) {
          if (owns(*a, k->key) && (a->serves(wl) || !any_serving)) {
            owners += std::string(owners.empty() ? "" : "' or '") + a->name;
          }
        }
        errors.push_back({k->key_where, "'" + k->key + "' is a knob of algorithm '" + owners +
                                            "'; this workload uses algorithm '" + chosen->name +
                                            "', whose knobs are " + join_keys(chosen->knobs)});
      }
      break;
    }
  }
  if (!errors.empty()) throw InputError(std::move(errors));
  return *chosen;
}

}  // namespace

KernelPlan plan_kernel(const Workload& wl, const PlanOptions& options) {
  const Operator& op = *wl.op;
  KernelPlan p;
  p.workload = wl;
  p.name = op.kernel_name(wl);
  p.out_h = wl.out_h();
  p.out_w = wl.out_w();
  p.out_channels = wl.out_channels();
  p.cost_batch = wl.n == 0 ? 1 : wl.n;
  const Algorithm& algorithm = choose_algorithm(wl, options);
  p.schedule.algorithm = &algorithm;
  algorithm.plan(wl, options, p);
  // __launch_bounds__ asks the compiler to leave registers for min_blocks
  // resident blocks. A GPU that keeps fewer (fewer threads, blocks or shared
  // memory per SM) ignores the request with a warning and the register cap
  // is lost; so no algorithm asks for more than the tightest GPU of the
  // library's list keeps.
  if (const auto it = p.values.find("min_blocks"); it != p.values.end()) {
    const long long resident = options.target.resident_blocks(p.block_threads, p.smem_bytes);
    it->second = std::min(std::get<long long>(it->second), resident);
  }
  for (const Knob& k : op.common_knobs) {
    p.schedule.values[k.values.front()] = wl.schedule.value(k.values.front()).value_or(k.default_value);
  }
  op.plan_cost(wl, options, p);
  if (p.max_batch < std::max(1, wl.n)) {
    throw InputError({{wl.where, "one launch of this kernel (" + p.schedule.summary() + ") covers at most " +
                                    std::to_string(p.max_batch) + " image(s): its grid and 32-bit launch indices " +
                                    "cannot number more; " +
                                    (p.max_batch >= 1 ? "declare n of at most " + std::to_string(p.max_batch)
                                                      : std::string("the problem is too large for one launch"))}});
  }
  return p;
}

std::optional<KernelPlan> plan_with_schedule(const Workload& wl, const ScheduleRequest& schedule,
                                             const PlanOptions& options, std::string* why) {
  Workload scheduled = wl;
  scheduled.schedule = schedule;
  try {
    return plan_kernel(scheduled, options);
  } catch (const InputError& e) {
    if (why != nullptr) *why = e.diagnostics().front().message;
    return std::nullopt;
  }
}

namespace {

// The plan of a tuning entry's schedule. A measured entry whose schedule
// does not fit this build (a GPU list with a tighter GPU than the one it was
// tuned for, or limits that changed) is dropped (nothing returned, a note)
// and the kernel keeps the default rule's schedule. An unverified entry
// (edited, used on the user's word) that does not fit is an error at the
// entry.
std::optional<KernelPlan> plan_looked_up(const Workload& wl, const PlanOptions& options,
                                         const LookedUpSchedule& looked_up, std::vector<Diagnostic>& notes) {
  std::string reason;
  std::optional<KernelPlan> plan = plan_with_schedule(wl, looked_up.schedule, options, &reason);
  if (plan) return plan;
  const std::string why = "the tuned schedule of " + kernel_name(wl) + " does not fit the workload of " +
                          wl.where.str() + " in this build: " + reason;
  // The schedule's own error points into where it came from.
  if (looked_up.origin != ScheduleOrigin::kTuned) throw InputError({{looked_up.where, why}});
  notes.push_back({looked_up.where, "ignored: " + why + " (tuned for other GPUs, or by an older generator: "
                                    "`convgen tune --archs` with this build's GPUs tunes it again)"});
  return std::nullopt;
}

}  // namespace

LibraryPlan plan_library(const std::vector<Spec>& specs, const std::string& name_override,
                         const PlanOptions& options, OnInvalidWorkload on_invalid, const ScheduleLookup* schedules) {
  LibraryPlan lib;
  std::vector<Diagnostic> errors;
  lib.name = name_override;
  lib.target = options.target;
  if (!name_override.empty()) {
    if (std::string why = library_name_problem(name_override); !why.empty()) {
      errors.push_back(Diagnostic{SourceLocation{"--name", 0, 0}, "library name " + why});
    }
  }
  for (const Spec& spec : specs) {
    lib.spec_files.push_back(spec.file);
    if (!name_override.empty() || spec.library.empty()) continue;
    if (lib.name.empty()) {
      lib.name = spec.library;
    } else if (lib.name != spec.library) {
      errors.push_back({spec.library_where, "library '" + spec.library + "' differs from '" + lib.name +
                                                "' named by another spec; give one name with --name"});
    }
  }
  if (lib.name.empty() && errors.empty()) {
    const SourceLocation where{specs.empty() ? std::string("<no spec>") : specs.front().file, 1, 1};
    errors.push_back({where, "no library name: add 'library: <name>' to the spec or pass --name"});
  }

  if (schedules != nullptr) schedules->begin_planning(lib.tuning_notes);

  std::map<std::string, KernelPlan> by_name;
  std::set<std::string> kernel_names;  // of every workload, planned or not
  std::set<std::string> reported;      // the plan errors so far, by place and message
  for (const Spec& spec : specs) {
    lib.skipped.insert(lib.skipped.end(), spec.skipped.begin(), spec.skipped.end());
    for (const Workload& wl : spec.workloads) {
      kernel_names.insert(kernel_name(wl));
      try {
        const bool spec_schedule = wl.schedule.algorithm.has_value() || !wl.schedule.keys.empty();
        std::optional<LookedUpSchedule> looked_up;
        if (!spec_schedule && schedules != nullptr) looked_up = schedules->find(wl, kernel_name(wl), lib.tuning_notes);
        const std::optional<KernelPlan> tuned =
            looked_up ? plan_looked_up(wl, options, *looked_up, lib.tuning_notes) : std::nullopt;
        KernelPlan plan;
        if (tuned) {
          plan = *tuned;
          plan.workload.schedule = wl.schedule;
          plan.origin = looked_up->origin;
          plan.tuned_gpu = looked_up->tuned_gpu;
          plan.tuned_us = looked_up->tuned_us;
          plan.default_us = looked_up->default_us;
        } else {
          plan = plan_kernel(wl, options);
          plan.origin = spec_schedule ? ScheduleOrigin::kSpec : ScheduleOrigin::kDefault;
        }
        auto [it, inserted] = by_name.emplace(plan.name, plan);
        if (!inserted && it->second.schedule != plan.schedule) {
          errors.push_back({wl.where, "this workload is the problem of " + it->second.workload.where.str() +
                                          " (" + plan.name + ") with a different schedule; a library holds one "
                                          "kernel per problem"});
        }
      } catch (const InputError& e) {
        if (on_invalid == OnInvalidWorkload::kSkip) {
          lib.skipped.insert(lib.skipped.end(), e.diagnostics().begin(), e.diagnostics().end());
          continue;
        }
        // An error at a place every workload shares (the defaults' schedule)
        // is reported once, not once a workload.
        for (const Diagnostic& d : e.diagnostics()) {
          if (reported.insert(d.where.str() + "\n" + d.message).second) errors.push_back(d);
        }
      }
    }
  }
  if (!errors.empty()) throw InputError(std::move(errors));
  if (schedules != nullptr) schedules->report_unmatched(kernel_names, lib.tuning_notes);
  for (auto& [name, plan] : by_name) lib.kernels.push_back(std::move(plan));
  return lib;
}

}  // namespace convgen::gen
