// A bad call returns a status with a message and launches nothing: the
// poisoned output must stay as it was. Needs no GPU (see OperandBuffer); on
// one, the operands are device memory.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "harness.h"
#include "seed_problem.h"
#include "seeds.h"

namespace {

using convgen::DepthwiseArgs;
using convgen::DepthwiseProblem;
using convgen::Dispatch;
using convgen::StatusCode;

using convgen::testing::OperandBuffer;
using convgen::testing::seed_96;

class BadCall : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const auto* buffer : {&input_, &filter_, &output_}) ASSERT_NE(buffer->get(), nullptr) << "allocation failed";
  }
  // Every output word still holds the poison.
  void expect_output_untouched() {
    const std::vector<std::uint32_t> words = output_.words();
    ASSERT_EQ(words.size(), output_.size()) << "reading the output back failed";
    for (size_t i = 0; i < words.size(); ++i) ASSERT_EQ(words[i], kPoison) << "element " << i << " was written";
  }
  DepthwiseArgs args() const {
    DepthwiseArgs a;
    a.input = input_.get();
    a.filter = filter_.get();
    a.output = output_.get();
    return a;
  }

  static constexpr std::uint32_t kPoison = 0xffffffffu;
  static size_t tensor_floats() {
    const DepthwiseProblem p = seed_96();
    return static_cast<size_t>(p.c) * p.h * p.w;
  }
  OperandBuffer input_{tensor_floats(), 0};
  OperandBuffer filter_{256 * 9, 0};
  OperandBuffer output_{tensor_floats(), kPoison};
};

// The control: the fixture's call passes every check and reaches the launch
// (which fails without a GPU), so the refusals below are the bad argument's
// doing.
TEST_F(BadCall, TheGoodCallReachesTheLaunch) {
  const auto s = convgen::seeds::depthwise_conv2d(seed_96(), args(), nullptr, Dispatch::kStrict);
  if (OperandBuffer::on_device()) {
    EXPECT_TRUE(s.ok()) << s.message;
  } else {
    EXPECT_EQ(s.code, StatusCode::kCudaError) << s.message;
    EXPECT_NE(s.message.find("launching dw_"), std::string::npos) << s.message;
  }
}

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
  a.filter = reinterpret_cast<const float*>(reinterpret_cast<const char*>(filter_.get()) + 2);
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
  a.input = output_.get();
  const auto s = convgen::seeds::depthwise_conv2d(seed_96(), a, nullptr);
  EXPECT_EQ(s.code, StatusCode::kInvalidPointer);
  expect_output_untouched();
}

}  // namespace
