// A batch larger than one launch of a kernel covers (its grid, or the 32-bit
// indices its launcher numbers units with, run out first) never reaches the
// launcher: `find` sends it to the generic kernel and says why, and strict
// dispatch returns an error having launched nothing. Host-side only: the
// calls below return before any CUDA call, so the pointers are addresses
// that are never touched, and no GPU is needed (labelled cpu).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "hardening.h"

namespace {

using convgen::DepthwiseArgs;
using convgen::DepthwiseKernelInfo;
using convgen::DepthwiseProblem;
using convgen::Dispatch;
using convgen::StatusCode;

// Far apart, 256-byte aligned, never dereferenced.
float* address(int which) { return reinterpret_cast<float*>(static_cast<std::uintptr_t>(which) << 44); }

void expect_limited(const DepthwiseKernelInfo& k, int expected_max) {
  EXPECT_EQ(k.max_batch, expected_max) << k.name;
  EXPECT_LT(k.max_batch, 65535) << k.name << ": the test wants a kernel limited below the runtime's batch limit";
}

TEST(LaunchLimits, DepthwiseBatchPastTheKernelsLaunchRunsGenericOrFailsStrict) {
  // planes numbers input planes (batch x 40000) with an int; rows numbers
  // thread groups (batch x 45000 channels x 1 band).
  int limited = 0;
  for (const DepthwiseKernelInfo& k : convgen::hardening::depthwise_kernels()) {
    if (k.problem.c != 40000 && k.problem.c != 45000) continue;
    ++limited;
    expect_limited(k, 0x7fffffff / k.problem.c);
    DepthwiseProblem p = k.problem;
    p.n = k.max_batch;
    EXPECT_TRUE(convgen::hardening::find(p).specialized) << convgen::hardening::find(p).reason;
    p.n = k.max_batch + 1;
    const convgen::KernelChoice choice = convgen::hardening::find(p);
    EXPECT_FALSE(choice.specialized) << k.name;
    EXPECT_EQ(choice.kernel, "generic_depthwise_f32_nchw");
    EXPECT_NE(choice.reason.find("covers at most " + std::to_string(k.max_batch) + " images in one launch"),
              std::string::npos)
        << choice.reason;
    DepthwiseArgs args;
    args.input = address(1);
    args.filter = address(2);
    args.output = address(3);
    const convgen::Status s = convgen::hardening::depthwise_conv2d(p, args, nullptr, Dispatch::kStrict);
    EXPECT_EQ(s.code, StatusCode::kNoSpecializedKernel) << s.message;
    EXPECT_NE(s.message.find("nothing was launched"), std::string::npos) << s.message;
  }
  EXPECT_EQ(limited, 2);
}

TEST(LaunchLimits, BatchPastGridZIsAnInvalidProblem) {
  DepthwiseProblem p = convgen::hardening::depthwise_kernels().front().problem;
  p.n = 65536;
  const convgen::KernelChoice choice = convgen::hardening::find(p);
  EXPECT_EQ(choice.status.code, StatusCode::kInvalidProblem);
  EXPECT_NE(choice.status.message.find("n must be at most 65535"), std::string::npos) << choice.status.message;
}

}  // namespace
