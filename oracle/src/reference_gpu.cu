#include <utility>

#include "convgen/oracle/reference.cuh"
#include "convgen/oracle/reference_gpu.h"

namespace convgen::oracle {

namespace {

std::string cuda_error(cudaError_t e, const char* what) { return std::string(what) + ": " + cudaGetErrorString(e); }

}  // namespace

std::string reference_on_device(const ReferenceProblem& p, const DeviceOperands& o, Reference& out) {
  const size_t count = static_cast<size_t>(output_count(p));
  DeviceArray<double> value(count), magnitude(count);
  if (count > 0 && (!value.ptr || !magnitude.ptr)) return "cudaMalloc failed (the reference)";
  out.value.resize(count);
  out.magnitude.resize(count);
  if (count == 0) return "";
  // Poisoned (all-ones bytes: NaN) before the reference writes every element: one it failed to write fails
  // the check instead of reading as zero. And a sanitizer run that instruments only the kernels under test
  // (scripts/sanitize.sh's draws) does not take the copy below for a read of memory nothing wrote.
  for (double* device : {value.ptr, magnitude.ptr}) {
    if (cudaError_t e = cudaMemset(device, 0xFF, count * sizeof(double)); e != cudaSuccess) {
      return cuda_error(e, "the reference");
    }
  }
  convgen_reference<<<reference_blocks(p), kReferenceBlock>>>(p, o.input, o.filter, o.epilogue_a, o.epilogue_b,
                                                              o.residual, value.ptr, magnitude.ptr);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return cuda_error(e, "the reference");
  if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess) return cuda_error(e, "the reference");
  for (auto [host, device] : {std::pair{&out.value, value.ptr}, std::pair{&out.magnitude, magnitude.ptr}}) {
    if (cudaError_t e = cudaMemcpy(host->data(), device, count * sizeof(double), cudaMemcpyDeviceToHost);
        e != cudaSuccess) {
      return cuda_error(e, "the reference");
    }
  }
  return "";
}

}  // namespace convgen::oracle
