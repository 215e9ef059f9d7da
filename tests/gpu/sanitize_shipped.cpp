// Runs every kernel of the shipped specs once, depthwise and dense, on random data, for
// compute-sanitizer (memcheck, racecheck, initcheck). Small batches keep the
// instrumented runs short; every code path of a kernel runs at any batch.
#include <cstdio>
#include <random>
#include <vector>

#include "mobilenet_v2.h"
#include "seeds.h"

namespace {

using convgen::Conv2dArgs;
using convgen::Conv2dProblem;
using convgen::DepthwiseArgs;
using convgen::DepthwiseProblem;

float* device_random(size_t count, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> host(count);
  for (float& x : host) x = dist(rng);
  float* ptr = nullptr;
  if (cudaMalloc(&ptr, count * sizeof(float)) != cudaSuccess) return nullptr;
  cudaMemcpy(ptr, host.data(), count * sizeof(float), cudaMemcpyHostToDevice);
  return ptr;
}

template <typename Run>
int run_all(const char* library, const std::vector<convgen::DepthwiseKernelInfo>& kernels, Run run) {
  int failures = 0;
  std::mt19937 rng(7);
  for (const convgen::DepthwiseKernelInfo& k : kernels) {
    DepthwiseProblem p = k.problem;
    p.n = p.n == 0 || p.n > 2 ? 2 : p.n;
    const size_t in = static_cast<size_t>(p.n) * p.c * p.h * p.w;
    const size_t out = static_cast<size_t>(p.n) * p.out_channels() * p.out_h() * p.out_w();
    DepthwiseArgs a;
    float* input = device_random(in, rng);
    float* filter = device_random(static_cast<size_t>(p.out_channels()) * p.kh * p.kw, rng);
    float* ep_a = device_random(p.out_channels(), rng);
    float* ep_b = device_random(p.out_channels(), rng);
    float* output = nullptr;
    cudaMalloc(&output, out * sizeof(float));
    a.input = input;
    a.filter = filter;
    a.output = output;
    if (p.epilogue == convgen::Epilogue::kBias) a.bias = ep_a;
    if (p.epilogue == convgen::Epilogue::kScaleShift) a.scale = ep_a, a.shift = ep_b;
    const convgen::Status s = run(p, a);
    const cudaError_t e = cudaDeviceSynchronize();
    const bool ok = s.ok() && e == cudaSuccess;
    failures += ok ? 0 : 1;
    std::printf("%-4s %s/%s n=%d %s\n", ok ? "ok" : "FAIL", library, k.name.c_str(), p.n,
                ok ? "" : (s.ok() ? cudaGetErrorString(e) : s.message.c_str()));
    for (float* ptr : {input, filter, ep_a, ep_b, output}) cudaFree(ptr);
  }
  return failures;
}

template <typename Run>
int run_all_conv2d(const char* library, const std::vector<convgen::Conv2dKernelInfo>& kernels, Run run) {
  int failures = 0;
  std::mt19937 rng(11);
  for (const convgen::Conv2dKernelInfo& k : kernels) {
    Conv2dProblem p = k.problem;
    p.n = p.n == 0 || p.n > 2 ? 2 : p.n;
    const size_t in = static_cast<size_t>(p.n) * p.c * p.h * p.w;
    const size_t out = static_cast<size_t>(p.n) * p.c_out * p.out_h() * p.out_w();
    Conv2dArgs a;
    float* input = device_random(in, rng);
    float* filter = device_random(static_cast<size_t>(p.c_out) * p.c * p.kh * p.kw, rng);
    float* ep_a = device_random(p.c_out, rng);
    float* ep_b = device_random(p.c_out, rng);
    float* residual = p.residual ? device_random(out, rng) : nullptr;
    float* output = nullptr;
    cudaMalloc(&output, out * sizeof(float));
    a.input = input;
    a.filter = filter;
    a.output = output;
    if (p.epilogue == convgen::Epilogue::kBias) a.bias = ep_a;
    if (p.epilogue == convgen::Epilogue::kScaleShift) a.scale = ep_a, a.shift = ep_b;
    a.residual = residual;
    const convgen::Status s = run(p, a);
    const cudaError_t e = cudaDeviceSynchronize();
    const bool ok = s.ok() && e == cudaSuccess;
    failures += ok ? 0 : 1;
    std::printf("%-4s %s/%s n=%d %s\n", ok ? "ok" : "FAIL", library, k.name.c_str(), p.n,
                ok ? "" : (s.ok() ? cudaGetErrorString(e) : s.message.c_str()));
    for (float* ptr : {input, filter, ep_a, ep_b, residual, output}) cudaFree(ptr);
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
  const size_t total = convgen::seeds::depthwise_kernels().size() + convgen::mobilenet_v2::depthwise_kernels().size() +
                       convgen::seeds::conv2d_kernels().size() + convgen::mobilenet_v2::conv2d_kernels().size();
  std::printf("sanitize_shipped: %zu kernels run, %d failed\n", total, failures);
  return failures == 0 ? 0 : 1;
}
