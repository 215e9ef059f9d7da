#include "tune/report.hpp"

namespace convgen::tune {

const char* state_word(State s) {
  switch (s) {
    case State::kPending: return "not run";
    case State::kCompileFailed: return "compile failed";
    case State::kLaunchFailed: return "launch failed";
    case State::kRejected: return "rejected (wrong output)";
    case State::kTimed: return "timed";
    case State::kStoppedEarly: return "stopped early (slower)";
  }
  return "?";
}

Candidate as_candidate(gen::KernelPlan plan) {
  Candidate c;
  c.plan = std::move(plan);
  return c;
}

nlohmann::json report_json(const KernelReport& r) {
  nlohmann::json cands = nlohmann::json::array();
  for (const Candidate& c : r.candidates) {
    cands.push_back({{"schedule", c.plan.schedule.summary()}, {"default", c.is_default}, {"state", state_word(c.state)},
                     {"hot_us", c.hot_us}, {"cold_us", c.cold_us}, {"compile_s", c.compile_s}, {"note", c.note}});
  }
  nlohmann::json j{{"kernel", r.kernel}, {"gpu", r.gpu}, {"space_before_pruning", r.space.before},
                   {"space_after_pruning", r.space.after < 0 ? nlohmann::json(nullptr) : nlohmann::json(r.space.after)},
                   {"space", r.space.detail}, {"search", r.space.search}, {"confirmed", r.confirmed}, {"wall_s", r.wall_s}, {"candidates", cands}};
  if (r.best >= 0) {
    const Candidate& b = r.candidates[static_cast<size_t>(r.best)];
    const Candidate& d = r.candidates[static_cast<size_t>(r.default_index)];
    j["best"] = {{"schedule", b.plan.schedule.summary()}, {"hot_us", b.hot_us}, {"cold_us", b.cold_us}};
    j["default"] = {{"schedule", d.plan.schedule.summary()}, {"hot_us", d.hot_us}, {"cold_us", d.cold_us}};
  }
  return j;
}

}  // namespace convgen::tune
