// Stage 2 of the generator: a workload and its schedule request become a
// KernelPlan, the plain numbers that the templates print. Every derived
// quantity (launch shape, tiles, halo, shared memory, bytes moved) is
// computed here, by the workload's algorithm (generator/src/ops/), and
// nowhere else.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "convgen/gen/arch.hpp"
#include "convgen/gen/operator.hpp"
#include "convgen/gen/spec.hpp"

namespace convgen::gen {

// Where a kernel's schedule came from: the spec, a tuning database's entry
// for the target GPU, or the default rule. kUnverified: an entry whose
// checksum fails (changed after convgen wrote it), used because the build
// was told to (--allow-unverified-tuning): no measurement vouches for it,
// so it shows no times.
enum class ScheduleOrigin { kDefault, kSpec, kTuned, kUnverified };

struct KernelPlan {
  std::string name;  // the kernel's one name: file, symbol, registry key, CLI filter, bench row
  Workload workload;
  Schedule schedule;
  ScheduleOrigin origin = ScheduleOrigin::kDefault;
  // kTuned: the GPU, and the entry's times of this schedule and the default's
  // (kUnverified: the GPU only).
  std::string tuned_gpu;
  double tuned_us = 0, default_us = 0;

  // Output shape.
  int out_h = 0, out_w = 0, out_channels = 0;
  int threads = 0;        // threads per block that share one channel's work (tiles: threads_y * threads_x)
  int block_threads = 0;  // threads per block
  int smem_bytes = 0;     // static shared memory per block
  int alignment = 4;      // bytes the input and output pointers must be aligned to
  // The oldest GPU the kernel runs on (sm_80 is 80); 0: every GPU of the
  // library. On an older one the runtime runs the generic kernel.
  int min_arch = 0;
  // The newest GPU it runs on (90: sm_90 only, for the arch-specific
  // sm_90a instructions); 0: every GPU from min_arch. On another one the
  // runtime runs the generic kernel.
  int max_arch = 0;
  // The most images one launch covers: each algorithm lowers it where its
  // grid or a 32-bit launch index would overflow first (CUDA's grid.z, and
  // the runtime's batch limit, is 65535). A larger declared batch is a spec
  // error; a larger runtime batch gets an error status, nothing launched.
  int max_batch = kMaxBatch;
  // The scratch memory a call needs (Conv2dArgs::workspace):
  // workspace_fixed + workspace_per_image x batch bytes; 0 for kernels that
  // compute without one.
  long long workspace_fixed = 0, workspace_per_image = 0;
  long long workspace_bytes(int batch) const { return workspace_fixed + workspace_per_image * batch; }
  // Cost at the declared batch (1 when the batch is runtime).
  int cost_batch = 1;
  long long bytes_read = 0, bytes_written = 0;
  double floor_us = 0;  // (bytes_read + bytes_written) / copy bandwidth
  long long flops = 0;          // multiply-adds x 2, where the operator counts them (conv2d)
  double compute_floor_us = 0;  // flops / the peak of the kernel's arithmetic
  std::string compute_peak = "the fp32 peak";  // that peak, as the kernel's header names it
  // The algorithm's own derived numbers, by the names its template uses.
  TemplateValues values;

  long long number(const std::string& name) const;  // throws std::out_of_range naming the value
  bool flag(const std::string& name) const;
  // The GPUs it runs on, as a phrase: "every GPU", "sm_80 and newer", "sm_90".
  std::string gpus_it_runs_on() const;
};

struct PlanOptions {
  double copy_bandwidth_tbps = 3.0;  // used for the floor in the kernel headers
  int max_shared_bytes = kMaxStaticSharedBytes;  // static shared memory a block may use
  // The fp32 rate (FMA, no TF32) used for the compute floor in the kernel
  // headers: what an 8192^3 SGEMM reached on an H100.
  double fp32_peak_tflops = 51.6;
  // The fp16/bf16 tensor-core rate (fp32 sums) used for the compute floor of
  // half-precision dense kernels: what an 8192^3 fp16 GEMM (torch.mm)
  // reached on an H100.
  double tensor_peak_tflops = 762;
  // The GPUs the kernels are built for: the fit rules hold for the tightest
  // of them, the default rule sizes for the newest.
  ArchTarget target = default_target();
};

// The name that encodes the problem, e.g. dw_f32_nchw_n1_c256_h96_w96_k3x3_s1_p1_m1_ssrelu.
std::string kernel_name(const Workload& wl);

// "the default rule", "set in the spec", "tuned on <gpu>: 1.23x the
// default rule's time" or "UNVERIFIED tuning entry for <gpu> ..."; for
// headers and listings.
std::string origin_text(const KernelPlan& plan);

// The schedule a workload gets when the spec sets no knob.
Schedule default_schedule(const Workload& wl, const PlanOptions& options = {});

// Picks the algorithm (the spec's, else the one whose knobs the spec sets,
// else the default rule's), fills unset knobs with defaults, checks that the
// schedule fits and derives the plan. Throws InputError pointing at the
// offending spec key.
KernelPlan plan_kernel(const Workload& wl, const PlanOptions& options = {});

// plan_kernel with `schedule` in place of the workload's (a tuning entry's):
// nothing where that schedule does not fit, and `why` (when given) says so.
std::optional<KernelPlan> plan_with_schedule(const Workload& wl, const ScheduleRequest& schedule,
                                             const PlanOptions& options, std::string* why = nullptr);

struct LibraryPlan {
  std::string name;  // C identifier: header <name>.h, namespace convgen::<name>
  std::vector<std::string> spec_files;
  ArchTarget target;  // the GPUs it is built for (PlanOptions::target)
  std::vector<KernelPlan> kernels;  // sorted by name, duplicates merged
  std::vector<Diagnostic> skipped;  // with OnInvalidWorkload::kSkip: workloads left out, and why
  // Tuning-database entries not applied, and why (stale fingerprint); for stderr.
  std::vector<Diagnostic> tuning_notes;
};

// A schedule from outside the spec for one kernel, and where it came from.
struct LookedUpSchedule {
  ScheduleRequest schedule;
  SourceLocation where;  // blamed when the schedule does not fit the workload
  ScheduleOrigin origin = ScheduleOrigin::kTuned;
  // kTuned: the GPU, and its times of this schedule and the default rule's
  // (kUnverified: the GPU only).
  std::string tuned_gpu;
  double tuned_us = 0, default_us = 0;
};

// Where plan_library finds schedules the spec does not set, by kernel (as
// AutoTVM's ApplyHistoryBest applies its records). A tuning database is one
// (TuningSelection, tuning_db.hpp).
class ScheduleLookup {
 public:
  virtual ~ScheduleLookup() = default;
  // A library's planning starts (its counts of notes start again):
  // problems of the lookup as a whole go to `notes`
  // (LibraryPlan::tuning_notes). Throws UsageError where the lookup cannot
  // serve the arguments it was given (a GPU it holds nothing for).
  virtual void begin_planning(std::vector<Diagnostic>& notes) const = 0;
  // The schedule of `kernel`, the kernel of `wl`, or none; why a schedule
  // it holds is not used goes to `notes`. Throws InputError where what it
  // holds contradicts the workload.
  virtual std::optional<LookedUpSchedule> find(const Workload& wl, const std::string& kernel,
                                               std::vector<Diagnostic>& notes) const = 0;
  // Called once all workloads are planned, with the name of every kernel
  // the specs make: a note for what the lookup holds that names none of them.
  virtual void report_unmatched(const std::set<std::string>& /*kernels*/, std::vector<Diagnostic>& /*notes*/) const {}
};

// Plans every workload of the specs. The library is named `name_override`
// when given, else by the specs' `library` key (which must then agree).
// Throws InputError with every problem found.
// With OnInvalidWorkload::kSkip, a workload whose schedule does not fit is
// left out and listed in `skipped` (with the specs' own skipped workloads).
// With `schedules`, a workload whose spec sets no schedule key takes the
// schedule the lookup holds for its kernel, if any.
LibraryPlan plan_library(const std::vector<Spec>& specs, const std::string& name_override,
                         const PlanOptions& options = {},
                         OnInvalidWorkload on_invalid = OnInvalidWorkload::kFail,
                         const ScheduleLookup* schedules = nullptr);

}  // namespace convgen::gen
