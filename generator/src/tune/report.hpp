// A kernel's candidates as the tuner measured them, and the kernel's report
// (--report writes it as JSON): plain data that the search, the runner and
// the orchestrator pass between them.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "convgen/gen/plan.hpp"

namespace convgen::tune {

// A candidate whose first hot replays are kEarlyStop times the best so far
// is not timed further; the local search expands only candidates within
// kEarlyStop of the best (with --algorithm, both count that algorithm's
// candidates alone: tune::ranked).
constexpr double kEarlyStop = 1.25;

enum class State { kPending, kCompileFailed, kLaunchFailed, kRejected, kTimed, kStoppedEarly };

const char* state_word(State s);

struct Candidate {
  gen::KernelPlan plan;
  bool is_default = false;
  State state = State::kPending;
  double hot_us = 0, cold_us = 0;
  double compile_s = 0;
  std::string note;  // why it failed or was rejected
};

Candidate as_candidate(gen::KernelPlan plan);

// A candidate's time by the objective (hot or cold).
inline double score(const Candidate& c, const std::string& objective) {
  return objective == "cold" ? c.cold_us : c.hot_us;
}

// What the search made of the space when it started (search.hpp), for the
// report.
struct SpaceSummary {
  double before = 0;      // schedules before pruning
  long long after = -1;   // after pruning; -1: not enumerated (too large)
  std::string detail;     // per algorithm: its size before and after pruning
  std::string search;     // "exhaustive" or "sampled"
  std::string note;       // a line for the log, or empty
};

struct KernelReport {
  std::string kernel;
  std::string gpu;
  SpaceSummary space;
  std::vector<Candidate> candidates;
  int best = -1, default_index = -1;
  double wall_s = 0;
  bool confirmed = false;  // the best beat the default when timed again against it

  // Whether the default schedule (in the first batch) was timed: otherwise
  // nothing can be recorded or confirmed against it.
  bool default_passed() const {
    return default_index >= 0 && candidates[static_cast<size_t>(default_index)].state == State::kTimed;
  }
};

nlohmann::json report_json(const KernelReport& r);

}  // namespace convgen::tune
