// `convgen tune`: searches each kernel's schedule space on the GPU and
// records the fastest verified schedule in a tuning database.
#pragma once

#include <string>
#include <vector>

#include "convgen/gen/output.hpp"
#include "convgen/gen/plan.hpp"
#include "convgen/gen/render.hpp"
#include "convgen/gen/tuning_db.hpp"

namespace convgen::tune {

struct TuneOptions {
  std::string db_path;
  std::string kernels;             // a substring of the kernel names to tune; empty: all
  std::vector<std::string> kernel_names;  // exact names of the kernels to tune (with `kernels`: both must hold)
  double budget_s = 20;            // per kernel, for the search (exhaustive runs ignore it)
  std::vector<int> devices = {0};  // one worker per device
  bool retune = false;             // tune again kernels the database already holds (for this GPU)
  std::string objective = "hot";   // hot or cold
  std::string search = "auto";     // auto (exhaustive when small, else sampled) or exhaustive
  std::string algorithm;           // search only this algorithm's schedules (and the default); empty: all
  unsigned long long seed = 1;     // the search's random draws (inputs are drawn fresh every run)
  int break_candidate = 0;         // test hook: launch the Nth candidate of each kernel one block short
  std::string report_json;         // where to write every kernel's report (candidates included); empty: none
  std::string cutlass_include;     // CUTLASS's include folder for nvcc's builds; empty: found (tune/builder.hpp)
  double lock_timeout_s = gen::kDefaultLockTimeoutS;  // the wait for the database folder's lock, per write
};

// Tunes `lib`'s kernels (planned with default schedules; those the spec
// schedules are tuned too, but the build keeps the spec's). Returns the exit
// status: 0 when every kernel was tuned (or kept), 1 on an error, 130 when
// interrupted (the finished kernels are in the database).
int run_tune(const gen::LibraryPlan& lib, const gen::Templates& templates, const TuneOptions& options);

// The GPUs `devices` number, as a tuning database names them, and their
// architectures as a list for --archs ("90" for one H100). Throw CudaError
// where there is no driver or no such device.
std::vector<gen::GpuId> device_ids(const std::vector<int>& devices);
std::string device_archs(const std::vector<int>& devices);

// The test hook for machines without a GPU (the cluster driver's tests):
// where the environment sets CONVGEN_TUNE_FAKE_GPU to a GPU name, `convgen
// tune` measures nothing. It "tunes" each kernel it would tune in
// CONVGEN_TUNE_FAKE_SECONDS seconds (default 0) and records the default
// rule's schedule with a time drawn from the kernel's and the GPU's names,
// the same on every run, through the same database writes as a real run.
// Empty where the variable is unset.
std::string fake_gpu();
int run_fake_tune(const gen::LibraryPlan& lib, const gen::Templates& templates, const TuneOptions& options);

}  // namespace convgen::tune
