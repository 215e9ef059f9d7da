// The activations as a kernel with a float16 or bfloat16 output evaluates
// them (convgen::activate_before_half_rounding: silu with the GPU's
// approximate exp and division), against the float64 definitions, on every
// float16 value and on a dense grid of floats from -100 to 100 with the
// edges (-88.7, where e^-x leaves float's range, and sums of 1e30). The
// bound: 2^-16 of the exact value (__expf is within 2 + 1.17 |x| float32 ulp,
// under 128 ulp where e^-x is finite; float16's rounding that follows is
// 2^-11, bfloat16's 2^-9), plus 2^-40 absolute, for values far below
// either half type's smallest subnormal (float16's is 2^-24).
#include <gtest/gtest.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <string>
#include <vector>

#include "convgen/epilogue.h"
#include "harness.h"

namespace {

__global__ void evaluate(convgen::Activation a, const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = convgen::activate_before_half_rounding(a, x[i]);
}

std::vector<float> inputs() {
  std::vector<float> x;
  for (int bits = 0; bits < 0x10000; ++bits) {  // every finite float16
    const float v = __half2float(__ushort_as_half(static_cast<unsigned short>(bits)));
    if (std::isfinite(v)) x.push_back(v);
  }
  for (int i = -1000000; i <= 1000000; ++i) x.push_back(i * 1e-4f);
  for (float v : {-88.72f, -88.73f, -89.0f, -103.0f, -1e30f, 1e30f}) x.push_back(v);
  return x;
}

TEST(HalfActivation, WithinTheBoundOfEveryActivation) {
  std::string why;
  if (!convgen::testing::gpu_available(&why)) GTEST_SKIP() << "no GPU: " << why;
  const std::vector<float> x = inputs();
  const int n = static_cast<int>(x.size());
  float *dx = nullptr, *dy = nullptr;
  ASSERT_EQ(cudaMalloc(&dx, n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dy, n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  for (const convgen::ActivationRow& row : convgen::kActivationTable) {
    SCOPED_TRACE(row.word);
    ASSERT_EQ(cudaMemset(dy, 0xff, n * sizeof(float)), cudaSuccess);  // NaN: an output not written shows
    evaluate<<<(n + 255) / 256, 256>>>(row.value, dx, dy, n);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::vector<float> y(n);
    ASSERT_EQ(cudaMemcpy(y.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
    int failures = 0;
    for (int i = 0; i < n && failures < 10; ++i) {
      const double exact = convgen::activate(row.value, static_cast<double>(x[i]));
      const double bound = std::ldexp(std::fabs(exact), -16) + std::ldexp(1.0, -40);
      if (!(std::fabs(y[i] - exact) <= bound)) {
        ADD_FAILURE() << row.word << "(" << x[i] << ") = " << y[i] << ", exact " << exact << ", bound " << bound;
        ++failures;
      }
    }
  }
  cudaFree(dx);
  cudaFree(dy);
}

}  // namespace
