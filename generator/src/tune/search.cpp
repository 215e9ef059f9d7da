// The default search: seeds (every algorithm's default), exhaustive when the
// pruned space is small, else samples and random walks, then local search
// over the neighbours of the best timed candidates. docs/tuning.md
// describes it.
#include "tune/search.hpp"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <random>
#include <set>

#include "convgen/gen/tune_space.hpp"

namespace convgen::tune {

using namespace convgen::gen;

namespace {

// ---------------------------------------------------------------------------
// Search constants. The search is documented in docs/tuning.md.

// A space of at most this many schedules (before pruning) is enumerated and
// pruned whole; larger ones are explored by random walks from the defaults.
constexpr double kEnumerateLimit = 60000;
// In auto mode, a pruned space of at most this many schedules is tried whole.
constexpr size_t kExhaustiveLimit = 48;
// Schedules drawn at random (from the pruned space, or by walks) before the
// local search starts, and the length of each walk.
constexpr size_t kInitialSamples = 24;
constexpr int kWalkSteps = 4;

class SeededLocalSearch final : public Search {
 public:
  SeededLocalSearch(const Workload& wl, const SearchOptions& options, std::uint64_t seed) : options_(options) {
    std::mt19937_64 rng(seed);
    pending_ = initial_candidates(wl, rng);
  }

  std::vector<Candidate> next_batch(size_t max) override {
    while (true) {
      if (pending_.empty() && !expand()) return {};
      std::vector<Candidate> batch;
      while (!pending_.empty() && batch.size() < max) {
        Candidate c = std::move(pending_.front());
        pending_.pop_front();
        if (!tried_.insert(key(c.plan)).second) continue;
        // (The default is always proposed: it is what the best must beat.)
        if (!c.is_default && options_.usable && !options_.usable(c.plan)) continue;
        batch.push_back(std::move(c));
      }
      if (!batch.empty()) return batch;
    }
  }

  void update(const std::vector<Candidate>& measured) override {
    for (const Candidate& c : measured) {
      if (c.state == State::kTimed && ranked(options_, c) && (best_us_ <= 0 || score(c) < best_us_)) {
        best_us_ = score(c);
      }
      measured_.push_back(c);
    }
  }

 private:
  double score(const Candidate& c) const { return tune::score(c, options_.objective); }

  static std::string key(const KernelPlan& p) {
    std::string k = p.schedule.algorithm_name();
    for (const auto& [name, value] : p.schedule.values) k += " " + name + "=" + std::to_string(value);
    return k;
  }

  std::deque<Candidate> initial_candidates(const Workload& wl, std::mt19937_64& rng);
  bool expand();

  SearchOptions options_;
  std::deque<Candidate> pending_;
  std::set<std::string> tried_;
  std::vector<Candidate> measured_;
  std::vector<size_t> expanded_;  // candidates whose neighbours were queued
  double best_us_ = 0;
};

// Every algorithm's own default (the default rule's schedule first), then
// the rest of the pruned space when it is small, else random samples of it.
std::deque<Candidate> SeededLocalSearch::initial_candidates(const Workload& wl, std::mt19937_64& rng) {
  std::deque<Candidate> out;
  const auto seen = [&](const KernelPlan& p) {
    return std::any_of(out.begin(), out.end(), [&](const Candidate& c) { return c.plan.schedule == p.schedule; });
  };
  Candidate def;
  def.plan = plan_kernel(wl, options_.plan_options);
  def.is_default = true;
  out.push_back(def);

  std::vector<KernelPlan> pruned;
  bool enumerated = true;
  std::vector<KernelPlan> algorithm_defaults;
  for (const AlgorithmSpace& space : schedule_space(wl)) {
    if (!options_.algorithm.empty() && space.algorithm->name != options_.algorithm) continue;
    KernelPlan own;
    const bool own_fits = try_plan(wl, *space.algorithm, {}, options_.plan_options, own);
    if (own_fits && options_.usable && !options_.usable(own)) continue;
    space_.before += space.size;
    if (own_fits) algorithm_defaults.push_back(own);
    const size_t before = pruned.size();
    char line[200];
    if (enumerate_schedules(wl, space, kEnumerateLimit, options_.plan_options, pruned)) {
      std::snprintf(line, sizeof line, "%s %.3g -> %zu fit", space.algorithm->name.c_str(), space.size,
                    pruned.size() - before);
    } else {
      enumerated = false;
      std::snprintf(line, sizeof line, "%s %.3g (not enumerated%s)", space.algorithm->name.c_str(), space.size,
                    own.schedule.algorithm != nullptr ? "" : "; its default does not fit");
    }
    space_.detail += (space_.detail.empty() ? "" : "; ") + std::string(line);
  }
  if (!options_.algorithm.empty() && algorithm_defaults.empty() && pruned.empty()) {
    space_.note = "  no schedule of --algorithm " + options_.algorithm + " found to fit this kernel (" +
                  (enumerated ? "the algorithm does not serve its workload, or cannot be built here"
                              : "its own default does not fit, and its space is too large to enumerate") +
                  "): only the default is timed";
  }
  space_.after = enumerated ? static_cast<long long>(pruned.size()) : -1;
  for (const KernelPlan& p : algorithm_defaults) {
    if (!seen(p)) out.push_back(as_candidate(p));
  }
  const bool exhaustive = options_.mode == "exhaustive" ? enumerated : enumerated && pruned.size() <= kExhaustiveLimit;
  if (options_.mode == "exhaustive" && !enumerated) {
    space_.note += std::string(space_.note.empty() ? "" : "\n") + "  the space is too large to enumerate (over " +
                  std::to_string(static_cast<long long>(kEnumerateLimit)) +
                  " schedules for an algorithm): searching instead";
  }
  space_.search = exhaustive ? "exhaustive" : "sampled";
  if (exhaustive) {
    for (const KernelPlan& p : pruned) {
      if (!seen(p)) out.push_back(as_candidate(p));
    }
    return out;
  }
  // Samples: uniform over the enumerated part, random walks from each
  // algorithm's default for the rest.
  std::shuffle(pruned.begin(), pruned.end(), rng);
  size_t drawn = 0;
  for (size_t i = 0; i < pruned.size() && drawn < kInitialSamples / 2; ++i) {
    if (!seen(pruned[i])) {
      out.push_back(as_candidate(pruned[i]));
      ++drawn;
    }
  }
  for (int attempt = 0; drawn < kInitialSamples && attempt < 4 * static_cast<int>(kInitialSamples) &&
                        !algorithm_defaults.empty();
       ++attempt) {
    const KernelPlan& from = algorithm_defaults[static_cast<size_t>(attempt) % algorithm_defaults.size()];
    KernelPlan p = random_walk(from, kWalkSteps, rng, options_.plan_options);
    if (!seen(p)) {
      out.push_back(as_candidate(p));
      ++drawn;
    }
  }
  return out;
}

// Local search: queues the neighbours of the best timed candidate not yet
// expanded; false when there is none (or the search is exhaustive).
bool SeededLocalSearch::expand() {
  if (exhaustive()) return false;
  int best = -1;
  for (size_t i = 0; i < measured_.size(); ++i) {
    const Candidate& c = measured_[i];
    if (c.state != State::kTimed || !ranked(options_, c)) continue;
    if (std::find(expanded_.begin(), expanded_.end(), i) != expanded_.end()) continue;
    if (best < 0 || score(c) < score(measured_[static_cast<size_t>(best)])) best = static_cast<int>(i);
  }
  if (best < 0) return false;
  // Expand only candidates within kEarlyStop of the best searched one.
  if (score(measured_[static_cast<size_t>(best)]) > kEarlyStop * best_us_) return false;
  expanded_.push_back(static_cast<size_t>(best));
  for (KernelPlan& n : neighbour_schedules(measured_[static_cast<size_t>(best)].plan, options_.plan_options)) {
    if (!tried_.count(key(n))) pending_.push_back(as_candidate(std::move(n)));
  }
  return true;
}

}  // namespace

bool ranked(const SearchOptions& options, const Candidate& c) {
  return options.algorithm.empty() || c.plan.schedule.algorithm_name() == options.algorithm;
}

std::unique_ptr<Search> make_search(const Workload& wl, const SearchOptions& options, std::uint64_t seed) {
  return std::make_unique<SeededLocalSearch>(wl, options, seed);
}

}  // namespace convgen::tune
