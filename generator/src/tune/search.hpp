// The search over one kernel's schedule space, behind the interface of
// AutoTVM's Tuner (tuner.py): next_batch() gives the candidates to measure,
// update() takes them back measured. A second strategy is one new unit
// beside search.cpp and a case in make_search. The search is documented in
// docs/tuning.md.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "convgen/gen/plan.hpp"
#include "tune/report.hpp"

namespace convgen::tune {

struct SearchOptions {
  std::string mode = "auto";      // auto (exhaustive when small, else sampled) or exhaustive
  std::string algorithm;          // search only this algorithm's schedules (and the default); empty: all
  std::string objective = "hot";  // what candidates are ranked by: hot or cold
  gen::PlanOptions plan_options;
  // Whether a candidate can be built and run here (its compiler, and the
  // GPU's architecture); null: every one. An algorithm whose own default
  // cannot is left out whole.
  std::function<bool(const gen::KernelPlan&)> usable;
};

// Whether `c` is one of the candidates the search walks from, and the bar
// that the runner's early stop measures the others against: every one, or
// with --algorithm that algorithm's alone (the default rule's schedule of
// another is timed in full to compare against, and is not walked from).
bool ranked(const SearchOptions& options, const Candidate& c);

class Search {
 public:
  virtual ~Search() = default;
  // At most `max` candidates not proposed before; empty when the search is over.
  virtual std::vector<Candidate> next_batch(size_t max) = 0;
  // The last batch's candidates, measured, in order (when a run is
  // interrupted, those after the interruption are missing).
  virtual void update(const std::vector<Candidate>& measured) = 0;

  const SpaceSummary& space() const { return space_; }
  // A search that tries a fixed set whole runs without a time budget.
  bool exhaustive() const { return space_.search == "exhaustive"; }

 protected:
  SpaceSummary space_;
};

// The strategy for `wl` (its schedule request empty): the defaults, then the
// whole pruned space when it is small, else samples and random walks, then a
// local search over neighbours. `seed` makes it repeatable.
std::unique_ptr<Search> make_search(const gen::Workload& wl, const SearchOptions& options, std::uint64_t seed);

}  // namespace convgen::tune
