// Runs every kernel of the shipped specs once, depthwise and dense, on random data, for
// compute-sanitizer (memcheck, racecheck, initcheck). Small batches keep the
// instrumented runs short; every code path of a kernel runs at any batch.
// Each kernel's operands are made in its problem's dtype and layout (the
// oracle's make_operands and stored, as the GPU tests make them), and every
// buffer is exactly as long as the call's tensor, so that a read or write
// one element past it is a memcheck error. $CONVGEN_SANITIZE_ONLY, when
// set, runs only the kernels whose "library/name" holds it (e.g. "tf32", or
// "tensor_core_sm90/" for one library).
#include <convgen/oracle/oracle.h>
#include <convgen/oracle/reference_gpu.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "mobilenet_v2.h"
#include "seeds.h"
#if defined(CONVGEN_SANITIZE_TENSOR_CORE)
#include "tensor_core.h"  // tests/gpu/tensor_core.yaml: the implicit_gemm kernels (built where CUTLASS is)
#include "sm90_float32.h"  // tests/gpu/sm90_float32.yaml: float32 kernels on clusters (split K)
#endif
#if defined(CONVGEN_SANITIZE_SM90)
#include "tensor_core_sm90.h"  // tests/gpu/tensor_core_sm90.yaml: implicit_gemm_sm90 (TMA, wgmma)
#endif
#if defined(CONVGEN_SANITIZE_WINOGRAD_NONFUSED)
#include "winograd_nonfused.h"  // tests/gpu/winograd_nonfused.yaml: F(4x4) through a workspace
#endif

namespace {

using convgen::Conv2dArgs;
using convgen::Conv2dProblem;
using convgen::DepthwiseArgs;
using convgen::DepthwiseProblem;
using convgen::oracle::ReferenceProblem;
using convgen::oracle::Tensor;

// The bytes on the device, or null (also for no bytes).
void* device_copy(const std::vector<unsigned char>& bytes) {
  void* ptr = nullptr;
  if (bytes.empty() || cudaMalloc(&ptr, bytes.size()) != cudaSuccess) return nullptr;
  cudaMemcpy(ptr, bytes.data(), bytes.size(), cudaMemcpyHostToDevice);
  return ptr;
}

// A kernel's operands on the device, in its dtype and layout: input,
// filter, the epilogue's two per-channel tensors, the residual (null when
// the problem has none) and the output (left as cudaMalloc gives it:
// initcheck reports a kernel that reads it before writing).
struct DeviceOperands {
  void* input = nullptr;
  void* filter = nullptr;
  void* epilogue_a = nullptr;
  void* epilogue_b = nullptr;
  void* residual = nullptr;
  void* output = nullptr;
  explicit DeviceOperands(const ReferenceProblem& r, unsigned seed) {
    const convgen::oracle::Operands o = convgen::oracle::make_operands(r, seed);
    input = device_copy(convgen::oracle::stored(r, Tensor::kInput, o.input));
    filter = device_copy(convgen::oracle::stored(r, Tensor::kFilter, o.filter));
    epilogue_a = device_copy(convgen::oracle::stored(r, Tensor::kPerChannel, o.epilogue_a));
    epilogue_b = device_copy(convgen::oracle::stored(r, Tensor::kPerChannel, o.epilogue_b));
    residual = device_copy(convgen::oracle::stored(r, Tensor::kResidual, o.residual));
    cudaMalloc(&output, static_cast<size_t>(convgen::oracle::output_count(r)) * convgen::oracle::element_size(r));
  }
  ~DeviceOperands() {
    for (void* ptr : {input, filter, epilogue_a, epilogue_b, residual, output}) cudaFree(ptr);
  }
  DeviceOperands(const DeviceOperands&) = delete;
  DeviceOperands& operator=(const DeviceOperands&) = delete;
};

// "f16 NHWC".
template <class Problem>
std::string storage(const Problem& p) {
  return std::string(convgen::row(p.dtype).name_part) + " " + convgen::row(p.layout).word;
}

// Whether a kernel is run: all, or those $CONVGEN_SANITIZE_ONLY names.
bool selected(const char* library, const std::string& kernel) {
  static const char* only = std::getenv("CONVGEN_SANITIZE_ONLY");
  return only == nullptr || (std::string(library) + "/" + kernel).find(only) != std::string::npos;
}

// Kernels run and failed per dtype x layout, for the summary.
std::map<std::string, std::pair<int, int>>& tally() {
  static std::map<std::string, std::pair<int, int>> counts;
  return counts;
}

// Reports one kernel's run once the device is done; returns 1 on a failure.
template <class Problem>
int report(const char* library, const std::string& kernel, const Problem& p, const convgen::Status& s) {
  const cudaError_t e = cudaDeviceSynchronize();
  const bool ok = s.ok() && e == cudaSuccess;
  auto& [run, failed] = tally()[storage(p)];
  ++run;
  failed += ok ? 0 : 1;
  std::printf("%-4s %s/%s %s n=%d %s\n", ok ? "ok" : "FAIL", library, kernel.c_str(), storage(p).c_str(), p.n,
              ok ? "" : (s.ok() ? cudaGetErrorString(e) : s.message.c_str()));
  return ok ? 0 : 1;
}

template <typename Run>
int run_all(const char* library, const std::vector<convgen::DepthwiseKernelInfo>& kernels, Run run) {
  int failures = 0;
  unsigned seed = 7;
  for (const convgen::DepthwiseKernelInfo& k : kernels) {
    if (!selected(library, k.name)) continue;
    DepthwiseProblem p = k.problem;
    p.n = p.n == 0 || p.n > 2 ? 2 : p.n;
    ReferenceProblem r = convgen::oracle::convolution_geometry(p, p.n, p.out_channels());
    r.groups = p.c;
    r.filter_taps_first = true;  // NHWC: [kh, kw, c * multiplier]
    const DeviceOperands d(r, seed++);
    DepthwiseArgs a;
    a.input = d.input;
    a.filter = d.filter;
    a.output = d.output;
    if (p.epilogue == convgen::Epilogue::kBias) a.bias = d.epilogue_a;
    if (p.epilogue == convgen::Epilogue::kScaleShift) a.scale = d.epilogue_a, a.shift = d.epilogue_b;
    failures += report(library, k.name, p, run(p, a));
  }
  return failures;
}

template <typename Run>
int run_all_conv2d(const char* library, const std::vector<convgen::Conv2dKernelInfo>& kernels, Run run) {
  int failures = 0;
  unsigned seed = 11;
  for (const convgen::Conv2dKernelInfo& k : kernels) {
    if (!selected(library, k.name)) continue;
    Conv2dProblem p = k.problem;
    p.n = p.n == 0 || p.n > 2 ? 2 : p.n;
    ReferenceProblem r = convgen::oracle::convolution_geometry(p, p.n, p.c_out);
    r.residual = p.residual;
    r.math = p.math;
    const DeviceOperands d(r, seed++);
    Conv2dArgs a;
    a.input = d.input;
    a.filter = d.filter;
    a.output = d.output;
    if (p.epilogue == convgen::Epilogue::kBias) a.bias = d.epilogue_a;
    if (p.epilogue == convgen::Epilogue::kScaleShift) a.scale = d.epilogue_a, a.shift = d.epilogue_b;
    a.residual = d.residual;
    // The workspace the kernel computes through (winograd_nonfused's), as its info sizes it.
    const long long workspace = k.workspace_bytes(p.n);
    const convgen::oracle::DeviceArray<unsigned char> scratch(static_cast<size_t>(workspace));
    a.workspace = scratch.ptr;
    a.workspace_bytes = static_cast<size_t>(workspace);
    failures += report(library, k.name, p, run(p, a));
  }
  return failures;
}

}  // namespace

int main() {
  int failures = 0;
  const auto strict = convgen::Dispatch::kStrict;
  failures += run_all("seeds", convgen::seeds::depthwise_kernels(), [&](const DepthwiseProblem& p, const DepthwiseArgs& a) {
    return convgen::seeds::depthwise_conv2d(p, a, nullptr, strict);
  });
  failures += run_all("mobilenet_v2", convgen::mobilenet_v2::depthwise_kernels(),
                      [&](const DepthwiseProblem& p, const DepthwiseArgs& a) {
                        return convgen::mobilenet_v2::depthwise_conv2d(p, a, nullptr, strict);
                      });
  failures += run_all_conv2d("seeds", convgen::seeds::conv2d_kernels(), [&](const Conv2dProblem& p, const Conv2dArgs& a) {
    return convgen::seeds::conv2d(p, a, nullptr, strict);
  });
  failures += run_all_conv2d("mobilenet_v2", convgen::mobilenet_v2::conv2d_kernels(),
                             [&](const Conv2dProblem& p, const Conv2dArgs& a) {
                               return convgen::mobilenet_v2::conv2d(p, a, nullptr, strict);
                             });
#if defined(CONVGEN_SANITIZE_TENSOR_CORE)
  failures += run_all_conv2d("tensor_core", convgen::tensor_core::conv2d_kernels(),
                             [&](const Conv2dProblem& p, const Conv2dArgs& a) {
                               return convgen::tensor_core::conv2d(p, a, nullptr, strict);
                             });
  failures += run_all_conv2d("sm90_float32", convgen::sm90_float32::conv2d_kernels(),
                             [&](const Conv2dProblem& p, const Conv2dArgs& a) {
                               return convgen::sm90_float32::conv2d(p, a, nullptr, strict);
                             });
#endif
#if defined(CONVGEN_SANITIZE_SM90)
  failures += run_all_conv2d("tensor_core_sm90", convgen::tensor_core_sm90::conv2d_kernels(),
                             [&](const Conv2dProblem& p, const Conv2dArgs& a) {
                               return convgen::tensor_core_sm90::conv2d(p, a, nullptr, strict);
                             });
#endif
#if defined(CONVGEN_SANITIZE_WINOGRAD_NONFUSED)
  failures += run_all_conv2d("winograd_nonfused", convgen::winograd_nonfused::conv2d_kernels(),
                             [&](const Conv2dProblem& p, const Conv2dArgs& a) {
                               return convgen::winograd_nonfused::conv2d(p, a, nullptr, strict);
                             });
#endif
  int total = 0;
  for (const auto& [storage, counts] : tally()) {
    std::printf("sanitize_shipped %s: %d kernels run, %d failed\n", storage.c_str(), counts.first, counts.second);
    total += counts.first;
  }
  std::printf("sanitize_shipped: %d kernels run, %d failed\n", total, failures);
  return failures == 0 ? 0 : 1;
}
