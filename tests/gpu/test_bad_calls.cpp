// A bad call returns a status with a message and launches nothing: the
// poisoned output must stay as it was. Needs no GPU (see OperandBuffer); on
// one, the operands are device memory.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
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

// A dtype or layout that names no enumerator (a cast from a bad integer):
// kInvalidProblem, with a message naming the number, from the library, the
// generic kernel and `find`; nothing launched.
TEST_F(BadCall, DtypeOrLayoutOutsideTheirEnumeratorsLaunchNothing) {
  struct Case {
    DepthwiseProblem p;
    std::string rule, described;
  };
  std::vector<Case> cases;
  for (int dtype : {3, 7, -1}) {
    DepthwiseProblem p = seed_96();
    p.dtype = static_cast<convgen::DataType>(dtype);
    cases.push_back({p, "dtype must be one of DataType's enumerators (float32, float16, bfloat16)",
                     "depthwise conv2d dtype " + std::to_string(dtype) + " NCHW n1 c256"});
  }
  for (int layout : {2, 9}) {
    DepthwiseProblem p = seed_96();
    p.layout = static_cast<convgen::Layout>(layout);
    cases.push_back({p, "layout must be one of Layout's enumerators (NCHW, NHWC)",
                     "depthwise conv2d f32 layout " + std::to_string(layout) + " n1 c256"});
  }
  for (const Case& c : cases) {
    SCOPED_TRACE(c.described);
    for (const convgen::Status& s : {convgen::seeds::depthwise_conv2d(c.p, args(), nullptr),
                                     convgen::seeds::depthwise_conv2d(c.p, args(), nullptr, Dispatch::kStrict),
                                     convgen::generic_depthwise_conv2d(c.p, args(), nullptr),
                                     convgen::seeds::find(c.p).status}) {
      EXPECT_EQ(s.code, StatusCode::kInvalidProblem) << s.message;
      EXPECT_NE(s.message.find(c.rule), std::string::npos) << s.message;
      EXPECT_NE(s.message.find(c.described), std::string::npos) << s.message;
    }
    EXPECT_FALSE(convgen::seeds::find(c.p).specialized);
    expect_output_untouched();
  }
}

// float16 and bfloat16 elements are 2 bytes: a pointer aligned to 1 byte
// is refused, by name, whichever pointer it is.
TEST_F(BadCall, HalfPointersAlignedToOneByteLaunchNothing) {
  const auto odd = [](const void* p) { return static_cast<const char*>(p) + 1; };
  for (convgen::DataType dtype : {convgen::DataType::kFloat16, convgen::DataType::kBFloat16}) {
    for (convgen::Layout layout : {convgen::Layout::kNCHW, convgen::Layout::kNHWC}) {
      DepthwiseProblem p = seed_96();
      p.dtype = dtype;
      p.layout = layout;
      p.epilogue = convgen::Epilogue::kBias;
      SCOPED_TRACE(convgen::describe(p));
      DepthwiseArgs good = args();
      good.bias = filter_.get() + 9 * 256 / 2;  // the filter's second half: c halves fit
      std::vector<std::pair<std::string, DepthwiseArgs>> cases;
      DepthwiseArgs a = good;
      a.input = odd(good.input);
      cases.emplace_back("input", a);
      a = good;
      a.filter = odd(good.filter);
      cases.emplace_back("filter", a);
      a = good;
      a.bias = odd(good.bias);
      cases.emplace_back("bias", a);
      a = good;
      a.output = static_cast<char*>(good.output) + 1;
      cases.emplace_back("output", a);
      for (const auto& [name, bad] : cases) {
        for (const convgen::Status& s : {convgen::seeds::depthwise_conv2d(p, bad, nullptr),
                                         convgen::generic_depthwise_conv2d(p, bad, nullptr)}) {
          EXPECT_EQ(s.code, StatusCode::kInvalidPointer) << s.message;
          EXPECT_NE(s.message.find(name + " is not 2-byte aligned"), std::string::npos) << s.message;
        }
        expect_output_untouched();
      }
    }
  }
}

// The seeds' 96x96 problem in a dtype or layout no kernel of the library
// has: `find` names the generic kernel of that dtype and layout and why
// ("... has no kernel for depthwise conv2d f16 NHWC n1 c256 ..."); strict
// dispatch refuses it, naming them, and launches nothing.
TEST_F(BadCall, ADtypeOrLayoutNoKernelHasRunsTheGenericKernel) {
  const auto unserved = convgen::testing::storages_without_kernels(convgen::seeds::depthwise_kernels());
  ASSERT_FALSE(unserved.empty()) << "seeds has depthwise kernels of every dtype and layout";
  for (const auto& [dtype, layout] : unserved) {
    DepthwiseProblem p = seed_96();
    p.dtype = dtype;
    p.layout = layout;
    const std::string storage = std::string(convgen::row(dtype).name_part) + " " + convgen::row(layout).word;
    SCOPED_TRACE(storage);
    const convgen::KernelChoice choice = convgen::seeds::find(p);
    ASSERT_TRUE(choice.status.ok()) << choice.status.message;
    EXPECT_FALSE(choice.specialized) << choice.kernel;
    EXPECT_EQ(choice.kernel, convgen::generic_kernel_name(p));
    EXPECT_EQ(choice.kernel, std::string("generic_depthwise_") + convgen::row(dtype).name_part + "_" +
                                 convgen::row(layout).name_part);
    EXPECT_NE(choice.reason.find("library seeds has no kernel for depthwise conv2d " + storage + " n1 c256 h96 w96"),
              std::string::npos)
        << choice.reason;
    EXPECT_NE(choice.reason.find("the generic kernel serves it"), std::string::npos) << choice.reason;
    const convgen::Status s = convgen::seeds::depthwise_conv2d(p, args(), nullptr, Dispatch::kStrict);
    EXPECT_EQ(s.code, StatusCode::kNoSpecializedKernel) << s.message;
    EXPECT_NE(s.message.find("depthwise conv2d " + storage), std::string::npos) << s.message;
    expect_output_untouched();
  }
}

// The same call under kAllowGeneric passes every check and reaches the
// generic kernel's launch (which fails without a GPU, and on one writes
// the output).
TEST_F(BadCall, ADtypeOrLayoutNoKernelHasReachesTheGenericLaunch) {
  for (const auto& [dtype, layout] : convgen::testing::storages_without_kernels(convgen::seeds::depthwise_kernels())) {
    DepthwiseProblem p = seed_96();
    p.dtype = dtype;
    p.layout = layout;
    SCOPED_TRACE(convgen::describe(p));
    const convgen::Status s = convgen::seeds::depthwise_conv2d(p, args(), nullptr);
    if (OperandBuffer::on_device()) {
      EXPECT_TRUE(s.ok()) << s.message;
    } else {
      EXPECT_EQ(s.code, StatusCode::kCudaError) << s.message;
      EXPECT_NE(s.message.find(convgen::generic_kernel_name(p)), std::string::npos) << s.message;
    }
  }
}

// An error an earlier call left unread (here a failed cudaMalloc) would be
// what cudaGetLastError() returns after a launch: a call made over one
// launches nothing, neither the library's kernel nor the generic one, says
// so, and leaves the error for the caller to read; once read, the same call
// runs.
TEST_F(BadCall, AnErrorLeftUnreadLaunchesNothing) {
  if (!OperandBuffer::on_device()) GTEST_SKIP() << "needs a GPU: without one every CUDA call fails";
  const std::vector<std::pair<std::string, std::function<convgen::Status()>>> calls = {
      {"dw_", [&] { return convgen::seeds::depthwise_conv2d(seed_96(), args(), nullptr); }},
      {"generic_depthwise_f32_nchw", [&] { return convgen::generic_depthwise_conv2d(seed_96(), args(), nullptr); }},
  };
  for (const auto& [kernel, call] : calls) {
    SCOPED_TRACE(kernel);
    void* huge = nullptr;
    ASSERT_EQ(cudaMalloc(&huge, std::size_t{1} << 60), cudaErrorMemoryAllocation);
    const convgen::Status s = call();
    EXPECT_EQ(s.code, StatusCode::kCudaError) << s.message;
    EXPECT_NE(s.message.find("launching " + kernel), std::string::npos) << s.message;
    EXPECT_NE(s.message.find("nothing was launched"), std::string::npos) << s.message;
    EXPECT_NE(s.message.find("cudaErrorMemoryAllocation"), std::string::npos) << s.message;
    expect_output_untouched();
    EXPECT_EQ(cudaGetLastError(), cudaErrorMemoryAllocation) << "the caller's error was read by the call";
  }
  for (const auto& [kernel, call] : calls) {
    const convgen::Status again = call();
    EXPECT_TRUE(again.ok()) << kernel << ": " << again.message;
  }
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

TEST_F(BadCall, OverlappingInputAndOutputLaunchNothing) {
  DepthwiseArgs a = args();
  a.input = output_.get();
  const auto s = convgen::seeds::depthwise_conv2d(seed_96(), a, nullptr);
  EXPECT_EQ(s.code, StatusCode::kInvalidPointer);
  expect_output_untouched();
}

}  // namespace
