// A tensor-core kernel whose batch is larger than one launch covers
// (tests/gpu/tensor_core_chunks.yaml: 3 images, one a launch): its launcher
// offsets the input, residual and output of each launch. The output, 3.2 GB,
// is compared element by element with the generic kernel's, and pixels
// around each launch's first and last images with a float64 reference.
//
// Inputs, filter and bias are multiples of 1/16 in [-1, 1]: every sum of 8
// products is exact in fp32, so both kernels round the same value once to
// fp16 and must agree bit for bit.
#include <gtest/gtest.h>

#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "harness.h"
#include "tensor_core_chunks.h"

namespace {

constexpr int kN = 3, kC = 8, kOutC = 1024, kH = 725, kW = 725;
constexpr long long kPixels = 1LL * kH * kW;
constexpr long long kInputElements = kN * kPixels * kC, kOutputElements = kN * kPixels * kOutC;
static_assert(kPixels * kOutC * 2 > (1LL << 30), "one image's output must take more than half of 2^31 bytes");

__half sixteenth(std::mt19937_64& rng) {
  return __float2half(static_cast<float>(static_cast<int>(rng() % 33) - 16) / 16.0f);
}

template <class T>
T* device_copy(const std::vector<T>& host) {
  T* d = nullptr;
  if (cudaMalloc(&d, host.size() * sizeof(T)) != cudaSuccess) return nullptr;
  cudaMemcpy(d, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice);
  return d;
}

// Runs one kernel into a poisoned output and copies the output back.
std::vector<uint16_t> run(convgen::Status (*kernel)(const convgen::Conv2dProblem&, const convgen::Conv2dArgs&,
                                                    cudaStream_t),
                          const convgen::Conv2dProblem& p, convgen::Conv2dArgs a) {
  EXPECT_EQ(cudaMemset(a.output, 0xff, kOutputElements * 2), cudaSuccess);  // NaN everywhere
  const convgen::Status s = kernel(p, a, nullptr);
  EXPECT_TRUE(s.ok()) << s.message;
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<uint16_t> out(kOutputElements);
  EXPECT_EQ(cudaMemcpy(out.data(), a.output, kOutputElements * 2, cudaMemcpyDeviceToHost), cudaSuccess);
  return out;
}

convgen::Status strict(const convgen::Conv2dProblem& p, const convgen::Conv2dArgs& a, cudaStream_t s) {
  return convgen::tensor_core_chunks::conv2d(p, a, s, convgen::Dispatch::kStrict);
}

TEST(TensorCoreChunks, ABatchInSeveralLaunchesMatchesTheGenericKernel) {
  std::string why;
  if (!convgen::testing::gpu_available(&why)) GTEST_SKIP() << "no GPU: " << why;
  int major = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
  if (major < 8) GTEST_SKIP() << "tensor-core kernels need sm_80";
  size_t free_bytes = 0, total_bytes = 0;
  cudaMemGetInfo(&free_bytes, &total_bytes);
  if (free_bytes < kOutputElements * 2 + (1LL << 30)) GTEST_SKIP() << "needs 4.3 GB of GPU memory";

  convgen::Conv2dProblem p;
  p.n = kN, p.c = kC, p.c_out = kOutC, p.h = kH, p.w = kW, p.kh = p.kw = 1;
  p.epilogue = convgen::Epilogue::kBias;
  p.dtype = convgen::DataType::kFloat16;
  p.layout = convgen::Layout::kNHWC;
  std::mt19937_64 rng(2026);
  std::vector<__half> input(kInputElements), filter(1LL * kOutC * kC), bias(kOutC);
  for (auto* v : {&input, &filter, &bias}) {
    for (__half& x : *v) x = sixteenth(rng);
  }
  convgen::Conv2dArgs a;
  __half* d_input = device_copy(input);
  __half* d_filter = device_copy(filter);
  __half* d_bias = device_copy(bias);
  void* d_output = nullptr;
  ASSERT_EQ(cudaMalloc(&d_output, kOutputElements * 2), cudaSuccess);
  a.input = d_input, a.filter = d_filter, a.bias = d_bias, a.output = d_output;

  const std::vector<uint16_t> chunked = run(strict, p, a);
  const std::vector<uint16_t> generic = run(convgen::generic_conv2d, p, a);
  long long differ = 0, first = -1;
  for (long long i = 0; i < kOutputElements; ++i) {
    if (chunked[i] != generic[i] && differ++ == 0) first = i;
  }
  EXPECT_EQ(differ, 0) << "elements differ from the generic kernel's, the first at " << first << " (image "
                       << first / (kPixels * kOutC) << ")";

  // The float64 reference on the first and last rows of every image (a
  // launch's edges), every channel.
  long long checked = 0;
  for (int n = 0; n < kN; ++n) {
    for (long long pixel : {0LL, 1LL * kW - 1, kPixels - kW, kPixels - 1}) {
      for (int co = 0; co < kOutC; ++co) {
        double want = __half2float(bias[co]);
        for (int ci = 0; ci < kC; ++ci) {
          want += 1.0 * __half2float(input[(n * kPixels + pixel) * kC + ci]) * __half2float(filter[co * kC + ci]);
        }
        __half got_half;
        std::memcpy(&got_half, &chunked[(n * kPixels + pixel) * kOutC + co], 2);
        ASSERT_EQ(__half2float(got_half), __half2float(__float2half(static_cast<float>(want))))
            << "image " << n << " pixel " << pixel << " channel " << co;
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 3LL * 4 * kOutC);
  cudaFree(d_input);
  cudaFree(d_filter);
  cudaFree(d_bias);
  cudaFree(d_output);
}

}  // namespace
