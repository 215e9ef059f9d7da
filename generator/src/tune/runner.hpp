// Running candidates on one device: its context, stream and flush buffer,
// a kernel's problem (inputs and the float64 reference), and for each
// candidate: load, verify every output element, time hot and cold; and the
// confirmation of a winner against the default.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "convgen/gen/plan.hpp"
#include "convgen/gen/tuning_db.hpp"
#include "convgen/oracle/oracle.h"
#include "tune/builder.hpp"
#include "tune/cuda_api.hpp"
#include "tune/report.hpp"

namespace convgen::tune {

// The winner is timed again against the default, alternately, kConfirmRounds
// times each; it replaces the default only when it is kMinGain faster by the
// medians. Schedules within a few percent of each other trade places from run
// to run (and from process to process: L2 hints interact with what else ran),
// so a smaller gain is not one a user would see.
constexpr int kConfirmRounds = 5;
constexpr double kMinGain = 0.03;

class DeviceMemory {
 public:
  DeviceMemory() = default;
  DeviceMemory(const CudaApi& api, size_t bytes);
  DeviceMemory(DeviceMemory&& o) noexcept { *this = std::move(o); }
  DeviceMemory& operator=(DeviceMemory&& o) noexcept {
    std::swap(api_, o.api_);
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  ~DeviceMemory();
  CUdeviceptr get() const { return ptr_; }
  size_t bytes() const { return bytes_; }

 private:
  const CudaApi* api_ = nullptr;
  CUdeviceptr ptr_ = 0;
  size_t bytes_ = 0;
};

// One device: its context, stream, flush buffer and reference kernel.
struct Device {
  int ordinal = 0;
  CUdevice device = 0;
  CUcontext context = nullptr;
  CUstream stream = nullptr;
  gen::GpuId id;
  int arch = 0;  // 90 for sm_90
  DeviceMemory flush;  // twice the L2: writing it evicts every line a kernel left
  CUmodule reference_module = nullptr;
  CUfunction reference = nullptr;
};

// Opens device `ordinal` (its primary context, current on this thread) and
// compiles the reference kernel for it; close_device gives it back.
void open_device(const CudaApi& api, Device& d, int ordinal);
void close_device(const CudaApi& api, Device& d);

// A kernel's problem on a device: its buffers, filled with fresh random
// operands (the oracle's) in the kernel's dtype and layout, and the float64
// reference of its output.
struct Problem {
  oracle::ReferenceProblem reference_problem;  // as the kernel's operator describes it
  DeviceMemory input, filter, ea, eb, residual;
  DeviceMemory output;  // oracle::kGuardWords guard elements each side
  oracle::Reference reference;
  // Where an algorithm with Winograd F(4x4)'s bound serves the workload:
  // the same reference with that bound (the magnitudes of the transformed
  // terms), for that algorithm's candidates.
  oracle::ReferenceProblem reference_problem_f4;
  oracle::Reference reference_f4;

  CUdeviceptr out() const { return output.get() + oracle::kGuardWords * oracle::element_size(reference_problem); }
};
Problem make_problem(const CudaApi& api, Device& d, const gen::KernelPlan& plan);

// How a candidate is measured.
struct MeasureOptions {
  std::string objective = "hot";  // hot or cold
  double best_us = 0;             // the best time so far by the objective (0: none), for the early stop
  // The test hook, asked once the candidate is loaded: true launches it one
  // block short, so that its output is wrong and verification must reject it.
  std::function<bool()> break_it;
};

// Loads a compiled candidate, verifies it and times it; sets its state, note
// and times. A launch failure sets kLaunchFailed; returns false when it was a
// fault that lost the device's context (nothing more can run on it).
bool measure(const CudaApi& api, Device& d, Problem& problem, const Compiled& compiled, Candidate& c,
             const MeasureOptions& options);

// Times the best and the default again, alternately (each compiled anew and
// verified); true when the best is kMinGain faster by the medians. Their
// times by the objective are replaced by the new medians.
bool confirm(const CudaApi& api, const Builder& builder, Device& d, Problem& problem, Candidate& def,
             Candidate& best, const std::string& objective);

}  // namespace convgen::tune
