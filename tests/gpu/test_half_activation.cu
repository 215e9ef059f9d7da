// The activations as a kernel with a float16 or bfloat16 output evaluates
// them (convgen::activate_before_half_rounding: silu with the GPU's
// approximate exp and division), against the float64 definitions, on every
// float16 value and on a dense grid of floats from -100 to 100 with the
// edges (-88.7, where e^-x leaves float's range, and sums of 1e30). The
// bound: 2^-16 of the exact value (__expf is within 2 + 1.17 |x| float32 ulp,
// under 128 ulp where e^-x is finite; float16's rounding that follows is
// 2^-11, bfloat16's 2^-9), plus 2^-40 absolute, for values far below
// either half type's smallest subnormal (float16's is 2^-24).
//
// And the clamps after the rounding (convgen::PairClamp: relu and
// relu6 on a rounded pair) against the clamp before it, as every other
// kernel rounds, bit for bit (a zero's sign aside), in both half types.
#include <gtest/gtest.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "convgen/element_bf16.h"
#include "convgen/element_f16.h"
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

// Output i of both ways: clamped before the rounding (store_one of
// activate) into `before`, and after it, as the pair (x[i], x[n - 1 - i])
// into `after` (each pair written once, by the thread of its first index).
template <class T, convgen::Activation A>
__global__ void clamp_both_ways(const float* x, T* before, T* after, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  convgen::store_one(before + i, convgen::activate(A, x[i]));
  const int j = n - 1 - i;
  const convgen::PairClamp<T, A> clamp;
  if (i < j) clamp.store_two(after + i, after + j, x[i], x[j]);
  if (i == j) convgen::store_one(after + i, convgen::activate(A, x[i]));
}

std::vector<float> clamp_inputs() {
  std::vector<float> x = inputs();
  // Around the bounds, every float from below 0 to past 6 at a finer step
  // than either half type's, ties of the rounding included; then the values
  // a clamp must send to a bound.
  for (int i = -200000; i <= 800000; ++i) x.push_back(i * 1e-5f);
  for (float b : {0.0f, 6.0f}) {
    float v = b;
    for (int k = 0; k < 64; ++k) x.push_back(v = std::nextafter(v, 1e30f));
    v = b;
    for (int k = 0; k < 64; ++k) x.push_back(v = std::nextafter(v, -1e30f));
  }
  for (float v : {-0.0f, 6.00390625f, 6.0078125f, 5.998046875f, 5.99609375f, 65504.0f, 65520.0f, 1e30f, -1e30f,
                  std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                  std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(),
                  std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::denorm_min()}) {
    x.push_back(v);
  }
  return x;
}

template <class T, convgen::Activation A>
void expect_clamps_commute(const char* what) {
  SCOPED_TRACE(what);
  const std::vector<float> x = clamp_inputs();
  const int n = static_cast<int>(x.size());
  float* dx = nullptr;
  T *dbefore = nullptr, *dafter = nullptr;
  ASSERT_EQ(cudaMalloc(&dx, n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dbefore, n * sizeof(T)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dafter, n * sizeof(T)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  // Unequal poison: an output not written shows.
  ASSERT_EQ(cudaMemset(dbefore, 0x7c, n * sizeof(T)), cudaSuccess);
  ASSERT_EQ(cudaMemset(dafter, 0xff, n * sizeof(T)), cudaSuccess);
  clamp_both_ways<T, A><<<(n + 255) / 256, 256>>>(dx, dbefore, dafter, n);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<unsigned short> before(n), after(n);
  static_assert(sizeof(T) == sizeof(unsigned short), "a half type");
  ASSERT_EQ(cudaMemcpy(before.data(), dbefore, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(after.data(), dafter, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  int failures = 0;
  for (int i = 0; i < n && failures < 10; ++i) {
    // The sign bit of a zero may differ; every other bit may not.
    const bool zeros = (before[i] & 0x7fff) == 0 && (after[i] & 0x7fff) == 0;
    if (before[i] != after[i] && !zeros) {
      ADD_FAILURE() << what << "(" << x[i] << "): clamped before the rounding 0x" << std::hex << before[i]
                    << ", after it 0x" << after[i] << std::dec;
      ++failures;
    }
  }
  cudaFree(dx);
  cudaFree(dbefore);
  cudaFree(dafter);
}

TEST(HalfActivation, ClampsOnRoundedPairsEqualRoundedClamps) {
  std::string why;
  if (!convgen::testing::gpu_available(&why)) GTEST_SKIP() << "no GPU: " << why;
  for (const convgen::ActivationRow& row : convgen::kActivationTable) {
    // The activations this holds for, and no other: a change to the table
    // shows here.
    const bool clamp = row.value == convgen::Activation::kRelu || row.value == convgen::Activation::kRelu6;
    EXPECT_EQ(convgen::clamps_after_half_rounding(row.value), clamp) << row.word;
  }
  expect_clamps_commute<__half, convgen::Activation::kRelu>("float16 relu");
  expect_clamps_commute<__half, convgen::Activation::kRelu6>("float16 relu6");
  expect_clamps_commute<__nv_bfloat16, convgen::Activation::kRelu>("bfloat16 relu");
  expect_clamps_commute<__nv_bfloat16, convgen::Activation::kRelu6>("bfloat16 relu6");
}

}  // namespace
