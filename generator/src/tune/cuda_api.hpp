// The CUDA driver API and NVRTC, loaded when `convgen tune` runs (dlopen),
// so that convgen itself runs on machines without a GPU or a driver.
#pragma once

#include <cuda.h>
#include <nvrtc.h>

#include <stdexcept>
#include <string>

namespace convgen::tune {

class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The functions convgen tune calls, resolved for the CUDA version of the
// headers it was built with.
struct CudaApi {
#define CONVGEN_CUDA_FUNCTIONS(X)                                                                                  \
  X(cuInit) X(cuDeviceGetCount) X(cuDeviceGet) X(cuDeviceGetName) X(cuDeviceGetAttribute)                          \
  X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease) X(cuCtxSetCurrent) X(cuCtxSynchronize)                  \
  X(cuModuleLoadData) X(cuModuleUnload) X(cuModuleGetFunction) X(cuFuncGetAttribute) X(cuFuncSetAttribute)         \
  X(cuLaunchKernel) X(cuOccupancyMaxActiveBlocksPerMultiprocessor) X(cuMemAlloc) X(cuMemFree)                      \
  X(cuMemcpyHtoDAsync) X(cuMemcpyDtoH)                                                                             \
  X(cuMemsetD8) X(cuMemsetD8Async) X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamSynchronize)                     \
  X(cuStreamBeginCapture) X(cuStreamEndCapture) X(cuGraphInstantiateWithFlags) X(cuGraphLaunch)                    \
  X(cuGraphExecDestroy) X(cuGraphDestroy) X(cuEventCreate) X(cuEventRecord) X(cuEventSynchronize)                  \
  X(cuEventElapsedTime) X(cuEventDestroy) X(cuGetErrorString)
#define CONVGEN_NVRTC_FUNCTIONS(X)                                                                                 \
  X(nvrtcVersion) X(nvrtcCreateProgram) X(nvrtcAddNameExpression) X(nvrtcCompileProgram)                           \
  X(nvrtcGetProgramLogSize) X(nvrtcGetProgramLog) X(nvrtcGetCUBINSize) X(nvrtcGetCUBIN) X(nvrtcGetLoweredName)     \
  X(nvrtcDestroyProgram) X(nvrtcGetErrorString)
#define CONVGEN_DECLARE(name) decltype(&::name) name = nullptr;
  CONVGEN_CUDA_FUNCTIONS(CONVGEN_DECLARE)
  CONVGEN_NVRTC_FUNCTIONS(CONVGEN_DECLARE)
#undef CONVGEN_DECLARE

  // Loads libcuda.so.1 and libnvrtc, or throws CudaError saying what is
  // missing (no driver: no GPU machine; no NVRTC: set CONVGEN_NVRTC).
  static const CudaApi& get();

  // Throws CudaError("<what>: <the driver's message>") unless `r` is CUDA_SUCCESS.
  void check(CUresult r, const char* what) const;
};

}  // namespace convgen::tune
