// A kernel that reads and writes 16-byte vectors serves only input and output
// aligned to 16 bytes. A call whose pointers are aligned to 4 bytes only must
// still be served, by the generic kernel, and be right; strict dispatch must
// refuse it and launch nothing.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "harness.h"
#include "mobilenet_v2.h"

namespace {

using convgen::DepthwiseArgs;
using convgen::DepthwiseProblem;
using convgen::Dispatch;
using convgen::Status;
using convgen::StatusCode;

// MobileNetV2's first depthwise layer: a rows kernel with 16-byte loads and stores.
DepthwiseProblem first_layer() {
  DepthwiseProblem p;
  p.n = 1;
  p.c = 32;
  p.h = p.w = 112;
  p.kh = p.kw = 3;
  p.pad_top = p.pad_bottom = p.pad_left = p.pad_right = 1;
  p.epilogue = convgen::Epilogue::kScaleShift;
  p.activation = convgen::Activation::kRelu6;
  return p;
}

size_t input_count(const DepthwiseProblem& p) { return static_cast<size_t>(p.n) * p.c * p.h * p.w; }
size_t output_count(const DepthwiseProblem& p) {
  return static_cast<size_t>(p.n) * p.out_channels() * p.out_h() * p.out_w();
}

TEST(Alignment, VectorKernelStatesItsAlignment) {
  const convgen::KernelChoice choice = convgen::mobilenet_v2::find(first_layer());
  ASSERT_TRUE(choice.status.ok()) << choice.status.message;
  ASSERT_TRUE(choice.specialized) << choice.reason;
  EXPECT_NE(choice.reason.find("aligned to less than 16 bytes run the generic kernel"), std::string::npos)
      << choice.reason;
  int alignment = 0;
  for (const convgen::DepthwiseKernelInfo& info : convgen::mobilenet_v2::depthwise_kernels()) {
    if (info.name == choice.kernel) alignment = info.alignment;
  }
  EXPECT_EQ(alignment, 16);
}

// Runs the library on copies of the input and output shifted by one float
// (4-byte aligned, not 16), then copies the output back for the check.
Status run_shifted(const DepthwiseProblem& p, const DepthwiseArgs& a, cudaStream_t stream) {
  float* input = nullptr;
  float* output = nullptr;
  if (cudaMalloc(&input, (input_count(p) + 4) * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&output, (output_count(p) + 4) * sizeof(float)) != cudaSuccess) {
    return {StatusCode::kCudaError, "cudaMalloc failed"};
  }
  cudaMemcpyAsync(input + 1, a.input, input_count(p) * sizeof(float), cudaMemcpyDeviceToDevice, stream);
  cudaMemcpyAsync(output + 1, a.output, output_count(p) * sizeof(float), cudaMemcpyDeviceToDevice, stream);
  DepthwiseArgs shifted = a;
  shifted.input = input + 1;
  shifted.output = output + 1;
  const Status status = convgen::mobilenet_v2::depthwise_conv2d(p, shifted, stream);
  cudaMemcpyAsync(a.output, output + 1, output_count(p) * sizeof(float), cudaMemcpyDeviceToDevice, stream);
  cudaStreamSynchronize(stream);
  cudaFree(input);
  cudaFree(output);
  return status;
}

TEST(Alignment, FourByteAlignedCallRunsTheGenericKernelAndIsRight) {
  std::string why;
  if (!convgen::testing::gpu_available(&why)) GTEST_SKIP() << "no GPU, GPU tests skipped: " << why;
  const std::uint64_t seed = convgen::testing::test_seed();
  const convgen::testing::CheckResult r = convgen::testing::check_problem(first_layer(), run_shifted, seed);
  EXPECT_TRUE(r.passed) << "seed " << seed << ": " << r.message;
}

TEST(Alignment, StrictDispatchRefusesAFourByteAlignedCallAndLaunchesNothing) {
  std::string why;
  if (!convgen::testing::gpu_available(&why)) GTEST_SKIP() << "no GPU, GPU tests skipped: " << why;
  const DepthwiseProblem p = first_layer();
  float *input = nullptr, *filter = nullptr, *scale = nullptr, *shift = nullptr, *output = nullptr;
  ASSERT_EQ(cudaMalloc(&input, (input_count(p) + 1) * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&filter, p.c * 9 * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&scale, p.c * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&shift, p.c * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&output, (output_count(p) + 1) * sizeof(float)), cudaSuccess);
  cudaMemset(input, 0, (input_count(p) + 1) * sizeof(float));
  cudaMemset(output, 0xff, (output_count(p) + 1) * sizeof(float));
  DepthwiseArgs a;
  a.input = input + 1;
  a.filter = filter;
  a.scale = scale;
  a.shift = shift;
  a.output = output + 1;
  const Status s = convgen::mobilenet_v2::depthwise_conv2d(p, a, nullptr, Dispatch::kStrict);
  EXPECT_EQ(s.code, StatusCode::kInvalidPointer);
  EXPECT_NE(s.message.find("aligned to 16 bytes"), std::string::npos) << s.message;
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<std::uint32_t> host(output_count(p) + 1);
  cudaMemcpy(host.data(), output, host.size() * sizeof(float), cudaMemcpyDeviceToHost);
  for (size_t i = 0; i < host.size(); ++i) ASSERT_EQ(host[i], 0xffffffffu) << "element " << i << " was written";
  for (float* ptr : {input, filter, scale, shift, output}) cudaFree(ptr);
}

}  // namespace
