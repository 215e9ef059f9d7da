// The float64 reference on the current CUDA device (the runtime API), for
// the GPU tests: the tuner launches the same kernel through NVRTC.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "convgen/oracle/oracle.h"

namespace convgen::oracle {

// `count` elements of device memory, freed with the array; ptr is null when
// the allocation failed (or count is 0).
template <class T>
struct DeviceArray {
  T* ptr = nullptr;
  explicit DeviceArray(size_t count) {
    if (count > 0 && cudaMalloc(&ptr, count * sizeof(T)) != cudaSuccess) ptr = nullptr;
  }
  ~DeviceArray() { cudaFree(ptr); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
};

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
