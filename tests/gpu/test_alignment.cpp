// A kernel that reads and writes 16-byte vectors serves only input and output
// aligned to 16 bytes. A call whose pointers are aligned to 4 bytes only must
// still be served, by the generic kernel, and be right; strict dispatch must
// refuse it and launch nothing. Only the call that runs needs a GPU.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "harness.h"
#include "mobilenet_v2.h"
#include "seeds.h"

namespace {

using convgen::Conv2dArgs;
using convgen::Conv2dProblem;
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

// Runs `call` on copies of the input and output shifted by one float
// (4-byte aligned, not 16), then copies the output back for the check.
template <class Args, class Call>
Status call_shifted(const Args& a, size_t inputs, size_t outputs, cudaStream_t stream, Call call) {
  float* input = nullptr;
  float* output = nullptr;
  if (cudaMalloc(&input, (inputs + 4) * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&output, (outputs + 4) * sizeof(float)) != cudaSuccess) {
    cudaFree(input);
    return {StatusCode::kCudaError, "cudaMalloc failed"};
  }
  cudaMemcpyAsync(input + 1, a.input, inputs * sizeof(float), cudaMemcpyDeviceToDevice, stream);
  cudaMemcpyAsync(output + 1, a.output, outputs * sizeof(float), cudaMemcpyDeviceToDevice, stream);
  Args shifted = a;
  shifted.input = input + 1;
  shifted.output = output + 1;
  const Status status = call(shifted);
  cudaMemcpyAsync(a.output, output + 1, outputs * sizeof(float), cudaMemcpyDeviceToDevice, stream);
  cudaStreamSynchronize(stream);
  cudaFree(input);
  cudaFree(output);
  return status;
}

Status run_shifted(const DepthwiseProblem& p, const DepthwiseArgs& a, cudaStream_t stream) {
  return call_shifted(a, input_count(p), output_count(p), stream, [&](const DepthwiseArgs& shifted) {
    return convgen::mobilenet_v2::depthwise_conv2d(p, shifted, stream);
  });
}

TEST(Alignment, FourByteAlignedCallRunsTheGenericKernelAndIsRight) {
  std::string why;
  if (!convgen::testing::gpu_available(&why)) GTEST_SKIP() << "no GPU, GPU tests skipped: " << why;
  const std::uint64_t seed = convgen::testing::test_seed();
  const convgen::testing::CheckResult r = convgen::testing::check_problem(first_layer(), run_shifted, seed);
  EXPECT_TRUE(r.passed) << "seed " << seed << ": " << r.message;
}

// Needs no GPU (see OperandBuffer); on one, the operands are device memory.
TEST(Alignment, StrictDispatchRefusesAFourByteAlignedCallAndLaunchesNothing) {
  using convgen::testing::OperandBuffer;
  constexpr std::uint32_t kPoison = 0xffffffffu;
  const DepthwiseProblem p = first_layer();
  OperandBuffer input(input_count(p) + 1, 0), filter(p.c * 9, 0), scale(p.c, 0), shift(p.c, 0),
      output(output_count(p) + 1, kPoison);
  for (const OperandBuffer* buffer : {&input, &filter, &scale, &shift, &output}) {
    ASSERT_NE(buffer->get(), nullptr) << "allocation failed";
  }
  DepthwiseArgs a;
  a.input = input.get() + 1;
  a.filter = filter.get();
  a.scale = scale.get();
  a.shift = shift.get();
  a.output = output.get() + 1;
  const Status s = convgen::mobilenet_v2::depthwise_conv2d(p, a, nullptr, Dispatch::kStrict);
  EXPECT_EQ(s.code, StatusCode::kInvalidPointer);
  EXPECT_NE(s.message.find("aligned to 16 bytes"), std::string::npos) << s.message;
  const std::vector<std::uint32_t> words = output.words();
  ASSERT_EQ(words.size(), output.size()) << "reading the output back failed";
  for (size_t i = 0; i < words.size(); ++i) ASSERT_EQ(words[i], kPoison) << "element " << i << " was written";
}

// The seeds' winograd_nonfused kernel (256 channels on 64x64) stores a
// tile's rows in 16-byte stores where the call's output is 16-byte aligned,
// and one float at a time where it is not: it states an alignment of 4
// bytes, so a call whose input and output are shifted by one float runs it
// (strict dispatch: no generic kernel), and must be right.
Status run_conv2d_shifted(const Conv2dProblem& p, const Conv2dArgs& a, cudaStream_t stream) {
  const size_t inputs = static_cast<size_t>(p.n) * p.c * p.h * p.w;
  const size_t outputs = static_cast<size_t>(p.n) * p.c_out * p.out_h() * p.out_w();
  return call_shifted(a, inputs, outputs, stream, [&](const Conv2dArgs& shifted) {
    return convgen::seeds::conv2d(p, shifted, stream, Dispatch::kStrict);
  });
}

TEST(Alignment, WorkspaceKernelWithAFourByteAlignedOutputIsRight) {
  std::string why;
  if (!convgen::testing::gpu_available(&why)) GTEST_SKIP() << "no GPU, GPU tests skipped: " << why;
  const convgen::Conv2dKernelInfo* kernel = nullptr;
  for (const convgen::Conv2dKernelInfo& k : convgen::seeds::conv2d_kernels()) {
    if (k.workspace_fixed > 0) kernel = &k;
  }
  ASSERT_NE(kernel, nullptr) << "seeds has no kernel that takes a workspace";
  ASSERT_EQ(kernel->alignment, 4);
  ASSERT_EQ(kernel->problem.out_w() % 4, 0) << "the kernel's rows would not take 16-byte stores";
  const std::uint64_t seed = convgen::testing::test_seed();
  const convgen::testing::CheckResult r = convgen::testing::check_problem(
      kernel->problem, convgen::testing::with_workspace(convgen::seeds::find, run_conv2d_shifted), seed,
      convgen::testing::DenseOperands::kSixteenths, convgen::testing::dense_sum_of(*kernel));
  EXPECT_TRUE(r.passed) << "seed " << seed << ": " << r.message;
}

}  // namespace
