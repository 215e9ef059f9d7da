// A bad call returns a status with a message and launches nothing: the
// poisoned output must stay as it was.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "harness.h"
#include "seed_problem.h"
#include "seeds.h"

namespace {

using convgen::DepthwiseArgs;
using convgen::DepthwiseProblem;
using convgen::Dispatch;
using convgen::StatusCode;

using convgen::testing::seed_96;

class BadCall : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!convgen::testing::gpu_available(&why)) GTEST_SKIP() << "no GPU, GPU tests skipped: " << why;
    const DepthwiseProblem p = seed_96();
    in_count_ = static_cast<size_t>(p.c) * p.h * p.w;
    ASSERT_EQ(cudaMalloc(&input_, in_count_ * sizeof(float)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&filter_, 256 * 9 * sizeof(float)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&output_, in_count_ * sizeof(float)), cudaSuccess);
    cudaMemset(input_, 0, in_count_ * sizeof(float));
    cudaMemset(filter_, 0, 256 * 9 * sizeof(float));
    cudaMemset(output_, 0xff, in_count_ * sizeof(float));
  }
  void TearDown() override {
    cudaFree(input_);
    cudaFree(filter_);
    cudaFree(output_);
  }
  // Every output word still holds the poison.
  void expect_output_untouched() {
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::vector<std::uint32_t> host(in_count_);
    cudaMemcpy(host.data(), output_, in_count_ * sizeof(float), cudaMemcpyDeviceToHost);
    for (size_t i = 0; i < in_count_; ++i) ASSERT_EQ(host[i], 0xffffffffu) << "element " << i << " was written";
  }
  DepthwiseArgs args() const {
    DepthwiseArgs a;
    a.input = input_;
    a.filter = filter_;
    a.output = output_;
    return a;
  }

  size_t in_count_ = 0;
  float* input_ = nullptr;
  float* filter_ = nullptr;
  float* output_ = nullptr;
};

TEST_F(BadCall, NullInputLaunchesNothing) {
  DepthwiseArgs a = args();
  a.input = nullptr;
  const auto s = convgen::seeds::depthwise_conv2d(seed_96(), a, nullptr);
  EXPECT_EQ(s.code, StatusCode::kInvalidPointer);
  EXPECT_NE(s.message.find("input is null"), std::string::npos) << s.message;
  expect_output_untouched();
}

TEST_F(BadCall, MisalignedFilterLaunchesNothing) {
  DepthwiseArgs a = args();
  a.filter = reinterpret_cast<const float*>(reinterpret_cast<const char*>(filter_) + 2);
  const auto s = convgen::seeds::depthwise_conv2d(seed_96(), a, nullptr);
  EXPECT_EQ(s.code, StatusCode::kInvalidPointer);
  EXPECT_NE(s.message.find("aligned"), std::string::npos) << s.message;
  expect_output_untouched();
}

TEST_F(BadCall, MissingEpiloguePointersLaunchNothing) {
  DepthwiseProblem p = seed_96();
  p.epilogue = convgen::Epilogue::kScaleShift;
  p.activation = convgen::Activation::kRelu;
  const auto s = convgen::seeds::depthwise_conv2d(p, args(), nullptr);
  EXPECT_EQ(s.code, StatusCode::kInvalidPointer);
  EXPECT_NE(s.message.find("scale is null"), std::string::npos) << s.message;
  expect_output_untouched();
}

TEST_F(BadCall, ImpossibleShapeLaunchesNothing) {
  DepthwiseProblem p = seed_96();
  p.h = 1;
  p.pad_top = p.pad_bottom = 0;  // a 3-row filter on a 1-row input: empty output
  const auto s = convgen::seeds::depthwise_conv2d(p, args(), nullptr);
  EXPECT_EQ(s.code, StatusCode::kInvalidProblem);
  expect_output_untouched();
}

TEST_F(BadCall, StrictMissLaunchesNothing) {
  DepthwiseProblem p = seed_96();
  p.c = 128;  // no kernel of the seeds spec has 128 channels
  const auto s = convgen::seeds::depthwise_conv2d(p, args(), nullptr, Dispatch::kStrict);
  EXPECT_EQ(s.code, StatusCode::kNoSpecializedKernel);
  EXPECT_NE(s.message.find("no kernel for"), std::string::npos) << s.message;
  expect_output_untouched();
}

TEST_F(BadCall, OverlappingInputAndOutputLaunchNothing) {
  DepthwiseArgs a = args();
  a.input = output_;
  const auto s = convgen::seeds::depthwise_conv2d(seed_96(), a, nullptr);
  EXPECT_EQ(s.code, StatusCode::kInvalidPointer);
  expect_output_untouched();
}

}  // namespace
