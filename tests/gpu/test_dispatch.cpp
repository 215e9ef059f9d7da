// Dispatch decisions and validation: pure host code, so these run on every
// machine, GPU or not. Nothing here reaches a kernel launch.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <string>
#include <utility>

#include "seed_problem.h"
#include "seeds.h"

namespace {

using convgen::DepthwiseArgs;
using convgen::DepthwiseProblem;
using convgen::Dispatch;
using convgen::StatusCode;

using convgen::testing::seed_96;

TEST(Dispatch, FindsTheKernelMadeForAProblem) {
  const auto choice = convgen::seeds::find(seed_96());
  ASSERT_TRUE(choice.status.ok()) << choice.status.message;
  EXPECT_TRUE(choice.specialized);
  EXPECT_EQ(choice.kernel, "dw_f32_nchw_n1_c256_h96_w96_k3x3_s1_p1_m1");
  EXPECT_NE(choice.reason.find("specs/seeds.yaml:"), std::string::npos) << choice.reason;
}

TEST(Dispatch, AnotherBatchUsesTheSameKernel) {
  DepthwiseProblem p = seed_96();
  p.n = 7;
  const auto choice = convgen::seeds::find(p);
  EXPECT_TRUE(choice.specialized);
  EXPECT_EQ(choice.kernel, "dw_f32_nchw_n1_c256_h96_w96_k3x3_s1_p1_m1");
  EXPECT_NE(choice.reason.find("runs any batch"), std::string::npos) << choice.reason;
}

TEST(Dispatch, EpilogueIsPartOfTheKey) {
  DepthwiseProblem p = seed_96();
  p.epilogue = convgen::Epilogue::kScaleShift;
  p.activation = convgen::Activation::kRelu;
  EXPECT_EQ(convgen::seeds::find(p).kernel, "dw_f32_nchw_n1_c256_h96_w96_k3x3_s1_p1_m1_ssrelu");
  p.activation = convgen::Activation::kRelu6;  // not in the spec
  const auto choice = convgen::seeds::find(p);
  EXPECT_FALSE(choice.specialized);
  EXPECT_EQ(choice.kernel, "generic_depthwise_f32_nchw");
}

TEST(Dispatch, AMissSaysTheGenericKernelServesIt) {
  DepthwiseProblem p = seed_96();
  p.c = 100;
  const auto choice = convgen::seeds::find(p);
  ASSERT_TRUE(choice.status.ok());
  EXPECT_FALSE(choice.specialized);
  EXPECT_NE(choice.reason.find("generic kernel serves it"), std::string::npos) << choice.reason;
}

TEST(Dispatch, StrictMissIsAnErrorBeforeAnyLaunch) {
  DepthwiseProblem p = seed_96();
  p.c = 100;
  DepthwiseArgs a;  // pointers are checked first: give plausible ones
  a.input = reinterpret_cast<const float*>(0x10000);
  a.filter = reinterpret_cast<const float*>(0x20000);
  a.output = reinterpret_cast<float*>(0x40000000);
  const auto s = convgen::seeds::depthwise_conv2d(p, a, nullptr, Dispatch::kStrict);
  EXPECT_EQ(s.code, StatusCode::kNoSpecializedKernel);
}

TEST(Dispatch, InvalidProblemsAreRejectedWithAMessage) {
  DepthwiseProblem p = seed_96();
  p.c = 0;
  EXPECT_EQ(convgen::seeds::find(p).status.code, StatusCode::kInvalidProblem);
  p = seed_96();
  p.stride_h = 0;
  EXPECT_EQ(convgen::validate(p).code, StatusCode::kInvalidProblem);
  p = seed_96();
  p.kh = 9;
  p.pad_top = p.pad_bottom = 0;
  p.h = 4;
  const auto s = convgen::validate(p);
  EXPECT_EQ(s.code, StatusCode::kInvalidProblem);
  EXPECT_NE(s.message.find("output would be empty"), std::string::npos) << s.message;
}

TEST(Dispatch, PointerChecks) {
  const DepthwiseProblem p = seed_96();
  DepthwiseArgs a;
  a.input = reinterpret_cast<const float*>(0x10000);
  a.filter = reinterpret_cast<const float*>(0x20000);
  a.output = reinterpret_cast<float*>(0x40000000);
  EXPECT_TRUE(convgen::validate(p, a).ok());
  DepthwiseArgs b = a;
  b.output = nullptr;
  EXPECT_EQ(convgen::validate(p, b).code, StatusCode::kInvalidPointer);
  b = a;
  b.input = reinterpret_cast<const float*>(0x10001);
  EXPECT_EQ(convgen::validate(p, b).code, StatusCode::kInvalidPointer);
  b = a;
  b.bias = reinterpret_cast<const float*>(0x50000);  // the problem has no bias
  EXPECT_NE(convgen::validate(p, b).message.find("does not use it"), std::string::npos);
}

// A Dispatch that is neither mode is refused, not read as kAllowGeneric;
// and an epilogue that is no enumerator gets a status from find() and from
// a strict call (their messages describe the problem), not a crash.
TEST(Dispatch, ValuesOutsideTheirEnumsAreRefused) {
  DepthwiseProblem p = seed_96();
  p.c = 128;  // no kernel: the generic one would serve it
  DepthwiseArgs a;
  a.input = reinterpret_cast<const float*>(0x10000);
  a.filter = reinterpret_cast<const float*>(0x20000);
  a.output = reinterpret_cast<float*>(0x40000000);
  const auto s = convgen::seeds::depthwise_conv2d(p, a, nullptr, static_cast<Dispatch>(2));
  EXPECT_EQ(s.code, StatusCode::kInvalidProblem);
  EXPECT_NE(s.message.find("dispatch must be Dispatch::kAllowGeneric or Dispatch::kStrict, not 2"), std::string::npos)
      << s.message;
  p = seed_96();
  p.epilogue = static_cast<convgen::Epilogue>(3);
  EXPECT_EQ(convgen::seeds::find(p).status.code, StatusCode::kInvalidProblem);
  EXPECT_EQ(convgen::seeds::depthwise_conv2d(p, a, nullptr, Dispatch::kStrict).code, StatusCode::kInvalidProblem);
}

// The output may not overlap the filter: refused before the specialized
// kernel is chosen.
TEST(Dispatch, AFilterInsideTheOutputLaunchesNothing) {
  const DepthwiseProblem p = seed_96();
  DepthwiseArgs a;
  a.input = reinterpret_cast<const float*>(0x10000);
  a.output = reinterpret_cast<float*>(0x40000000);
  a.filter = a.output;
  const auto s = convgen::seeds::depthwise_conv2d(p, a, nullptr, Dispatch::kStrict);
  EXPECT_EQ(s.code, StatusCode::kInvalidPointer);
  EXPECT_NE(s.message.find("filter and output overlap"), std::string::npos) << s.message;
}

// runs_on_current_device, the check a call makes before launching a
// kernel: the seeds' kernels run anywhere; a kernel for a GPU newer than
// any (sm_1000), or one taking more shared memory a block than any GPU
// gives, is refused with the reason where there is a GPU to ask (without
// one CUDA cannot say, and the answer is yes).
TEST(Dispatch, RunsOnCurrentDeviceSaysWhyNot) {
  const auto kernels = convgen::seeds::depthwise_kernels();
  ASSERT_FALSE(kernels.empty());
  for (const auto& k : kernels) EXPECT_TRUE(convgen::runs_on_current_device(k).ok()) << k.name;
  int devices = 0;
  const bool gpu = cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
  (void)cudaGetLastError();  // without a GPU, the failed count's error
  convgen::DepthwiseKernelInfo future = kernels.front();
  future.min_arch = 1000;
  convgen::DepthwiseKernelInfo greedy = kernels.front();
  greedy.shared_bytes = 1 << 30;
  for (const auto& [k, says] : {std::pair{future, std::string("runs on sm_1000 and newer")},
                                std::pair{greedy, std::string("takes 1073741824 bytes of shared memory a block")}}) {
    const convgen::Status s = convgen::runs_on_current_device(k);
    if (!gpu) {
      EXPECT_TRUE(s.ok()) << s.message;
      continue;
    }
    EXPECT_EQ(s.code, StatusCode::kUnsupportedDevice) << s.message;
    EXPECT_NE(s.message.find("kernel " + k.name + " " + says), std::string::npos) << s.message;
  }
}

TEST(Dispatch, KernelsListsEverySpecWorkload) {
  const auto& kernels = convgen::seeds::depthwise_kernels();
  EXPECT_EQ(kernels.size(), 9u);
  for (const auto& k : kernels) {
    EXPECT_EQ(convgen::seeds::find(k.problem).kernel, k.name);
    EXPECT_NE(k.spec_location.find("specs/seeds.yaml:"), std::string::npos);
  }
}

}  // namespace
