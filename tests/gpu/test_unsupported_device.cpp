// A library without an image for the GPU at hand (built for 80-real only,
// no PTX) answers a call with StatusCode::kUnsupportedDevice, naming the
// library, its architectures, the device's and what to add to ARCHS; it
// launches nothing, and the device stays usable.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "harness.h"
#include "sm80_only.h"

namespace {

using convgen::DepthwiseArgs;
using convgen::DepthwiseProblem;
using convgen::StatusCode;

DepthwiseProblem the_problem() {
  DepthwiseProblem p;
  p.n = 1;
  p.c = 32;
  p.h = p.w = 16;
  p.kh = p.kw = 3;
  p.pad_top = p.pad_bottom = p.pad_left = p.pad_right = 1;
  return p;
}

TEST(UnsupportedDevice, CallGetsAStatusNamingTheArchToAdd) {
  std::string why;
  if (!convgen::testing::gpu_available(&why)) GTEST_SKIP() << "no GPU, GPU tests skipped: " << why;
  cudaDeviceProp prop{};
  ASSERT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  // sm_80 machine code runs on every 8.x GPU.
  if (prop.major == 8) GTEST_SKIP() << prop.name << " runs sm_80 code: nothing to refuse";
  const std::string arch = std::to_string(prop.major * 10 + prop.minor);

  const DepthwiseProblem p = the_problem();
  ASSERT_TRUE(convgen::sm80_only::find(p).specialized);
  const size_t in = static_cast<size_t>(p.c) * p.h * p.w, taps = static_cast<size_t>(p.c) * p.kh * p.kw;
  float *input = nullptr, *filter = nullptr, *output = nullptr;
  ASSERT_EQ(cudaMalloc(&input, in * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&filter, taps * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&output, in * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemset(input, 0, in * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemset(filter, 0, taps * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemset(output, 0xff, in * sizeof(float)), cudaSuccess);  // NaN: written by nothing
  DepthwiseArgs a;
  a.input = input;
  a.filter = filter;
  a.output = output;

  const convgen::Status s = convgen::sm80_only::depthwise_conv2d(p, a, nullptr);
  EXPECT_EQ(s.code, StatusCode::kUnsupportedDevice) << s.message;
  for (const std::string& part : {std::string("library sm80_only"), std::string("80-real"), "sm_" + arch,
                                  "add " + arch + " to the ARCHS", std::string("was not launched")}) {
    EXPECT_NE(s.message.find(part), std::string::npos) << "no '" << part << "' in: " << s.message;
  }
  std::vector<float> host(in);
  ASSERT_EQ(cudaMemcpy(host.data(), output, in * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  for (float v : host) ASSERT_TRUE(v != v) << "the output was written: something was launched";

  // Not sticky: the runtime's generic kernel (built for this GPU too) still runs.
  DepthwiseProblem other = p;
  other.h = other.w = 15;
  EXPECT_FALSE(convgen::sm80_only::find(other).specialized);
  const convgen::Status generic = convgen::sm80_only::depthwise_conv2d(other, a, nullptr);
  EXPECT_TRUE(generic.ok()) << generic.message;
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  cudaFree(input);
  cudaFree(filter);
  cudaFree(output);
}

}  // namespace
