// The float64 reference on the current CUDA device (the runtime API), for
// the GPU tests: the tuner launches the same kernel through NVRTC.
#pragma once

#include <string>

#include "convgen/oracle/oracle.h"

namespace convgen::oracle {

// The operands, already on the device (residual: null when the problem has none).
struct DeviceOperands {
  const float* input = nullptr;
  const float* filter = nullptr;
  const float* epilogue_a = nullptr;
  const float* epilogue_b = nullptr;
  const float* residual = nullptr;
};

// Computes the reference into `out`; returns "" or what failed.
std::string reference_on_device(const ReferenceProblem& p, const DeviceOperands& operands, Reference& out);

}  // namespace convgen::oracle
