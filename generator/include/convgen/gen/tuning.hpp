// The tuning database: schedules `convgen tune` measured best on a GPU, kept
// in a YAML file beside the spec and applied by the build (a schedule the
// spec writes wins, then the database's entry for the target GPU, then the
// default rule). And the schedule space the tuner searches, which the core
// owns: each algorithm's knobs and their Knob::space(), pruned by the same
// plan that checks a spec.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "convgen/gen/plan.hpp"
#include "convgen/gen/spec.hpp"

namespace convgen::gen {

// The generator's version (convgen/limits.h): part of every fingerprint, and `--version`.
inline constexpr const char* kConvgenVersion = CONVGEN_VERSION;

// The GPU an entry was tuned on, as the CUDA driver names it.
struct GpuId {
  std::string name;                // e.g. "NVIDIA H100 80GB HBM3"
  int sms = 0;                     // streaming multiprocessors
  std::string compute_capability;  // e.g. "9.0"
};

// One kernel tuned on one GPU.
struct TuningEntry {
  SourceLocation where;      // the entry's list item
  std::string kernel;        // the kernel's one name (kernel_name())
  const Operator* op = nullptr;
  GpuId gpu;
  ScheduleRequest schedule;  // the chosen schedule, parsed as a spec's `schedule:` is
  std::string objective = "hot";  // what it was ranked by: hot or cold
  double time_us = 0;        // the chosen schedule's time, by the objective
  double default_us = 0;     // the default rule's schedule's, in the same run
  std::string default_schedule;  // the default rule's schedule, for the reader
  int compiled = 0, verified = 0, rejected = 0, failed = 0;  // candidates
  double tuning_s = 0;       // wall time spent on this kernel
  std::string date;          // YYYY-MM-DD
  std::string fingerprint;   // tuning_fingerprint() of the generator that tuned it
};

struct TuningDb {
  std::string file;
  std::vector<TuningEntry> entries;  // sorted by kernel, then GPU name

  // The entry of `kernel` on the GPU named `gpu`; null if none.
  const TuningEntry* find(const std::string& kernel, const std::string& gpu) const;
  // The GPU names the entries are for, sorted, each once.
  std::vector<std::string> gpus() const;
  // Adds or replaces the entry of the same kernel and GPU, keeping the order.
  void put(TuningEntry entry);
};

// Parses a tuning database. Throws SpecError listing every problem found
// (file:line:col, what is wrong and what is allowed), as for a spec.
TuningDb parse_tuning_file(const std::string& path);
TuningDb parse_tuning_text(const std::string& text, const std::string& path);

// The database as YAML, entries in order; parse_tuning_text reads it back.
std::string tuning_text(const TuningDb& db);
// Writes `tuning_text(db)` to `path` through a temporary file renamed into
// place: a reader (or a killed run) never sees half a database. Throws
// std::runtime_error on an I/O failure.
void write_tuning_file(const std::string& path, const TuningDb& db);

// 16 hex digits identifying what made a kernel from a schedule: the
// generator's version and the algorithm's template text. An entry whose
// fingerprint differs from the current one is stale: reported, never used.
std::string tuning_fingerprint(const std::string& template_text);

// What plan_library applies: the database, the GPU whose entries to use
// (empty: the database's only GPU) and the current fingerprint of each
// template file (by name, Algorithm::template_file).
struct TuningSelection {
  const TuningDb* db = nullptr;
  std::string gpu;
  std::map<std::string, std::string> fingerprints;
};

// ---------------------------------------------------------------------------
// The schedule space.

// Every schedule the tuner may try for a workload, per algorithm: the
// product of its knobs' spaces (and the operator's common knobs).
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
