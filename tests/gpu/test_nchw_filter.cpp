// Float32 NCHW kernels through channels-last copies take a 1x1 filter of
// unpadded rows as it is, where the call's pointer is 16-byte aligned, and
// copy it into the workspace's first part otherwise (and always where the
// rows are padded, or the filter has more taps). Each kernel of
// tests/gpu/nchw_filter.yaml (and nchw_filter_sm90.yaml, where the build is
// for sm_90) runs with the filter 16-byte aligned and shifted by one float,
// the workspace poisoned: both outputs are checked against the float64
// reference, and the workspace's filter part must be untouched exactly
// where the filter was read in place.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "harness.h"
#include "nchw_filter.h"
#ifdef CONVGEN_NCHW_FILTER_SM90
#include "nchw_filter_sm90.h"
#endif

namespace {

using convgen::Conv2dArgs;
using convgen::Conv2dKernelInfo;
using convgen::Conv2dProblem;
using convgen::Dispatch;
using convgen::Status;
using convgen::StatusCode;
using convgen::testing::OperandBuffer;

using Library = Status (*)(const Conv2dProblem&, const Conv2dArgs&, cudaStream_t, Dispatch);

constexpr std::uint32_t kPoison = 0xffffffffu;

// Runs `library` strictly on a copy of the call's filter that is 16-byte
// aligned, or one float past such an address, with a poisoned workspace;
// `filter_copied` says whether the workspace's first workspace_fixed bytes
// (the filter's copy) were written.
convgen::testing::Conv2dRunner runner(Library library, const Conv2dKernelInfo& kernel, bool shifted,
                                      bool* filter_copied) {
  return [=](const Conv2dProblem& p, const Conv2dArgs& a, cudaStream_t stream) -> Status {
    const std::size_t filter_floats = static_cast<std::size_t>(p.c_out) * p.c * p.kh * p.kw;
    const std::size_t workspace_bytes = static_cast<std::size_t>(kernel.workspace_bytes(p.n));
    OperandBuffer filter(filter_floats + 4, 0), workspace(workspace_bytes / 4, kPoison);
    if (filter.get() == nullptr || workspace.get() == nullptr) return {StatusCode::kCudaError, "cudaMalloc failed"};
    float* const moved = filter.get() + (shifted ? 1 : 0);  // cudaMalloc's pointers are 256-byte aligned
    cudaMemcpyAsync(moved, a.filter, filter_floats * sizeof(float), cudaMemcpyDeviceToDevice, stream);
    Conv2dArgs with = a;
    with.filter = moved;
    with.workspace = workspace.get();
    with.workspace_bytes = workspace_bytes;
    const Status s = library(p, with, stream, Dispatch::kStrict);
    if (cudaStreamSynchronize(stream) != cudaSuccess) return {StatusCode::kCudaError, "the call's work failed"};
    const std::vector<std::uint32_t> words = workspace.words();
    if (words.size() != workspace.size()) return {StatusCode::kCudaError, "reading the workspace back failed"};
    *filter_copied = false;
    for (long long i = 0; i < kernel.workspace_fixed / 4; ++i) *filter_copied = *filter_copied || words[i] != kPoison;
    return s;
  };
}

void check_library(const std::vector<Conv2dKernelInfo>& kernels, Library library) {
  ASSERT_FALSE(kernels.empty());
  const std::uint64_t seed = convgen::testing::test_seed();
  std::printf("input seed %llu (set CONVGEN_TEST_SEED to replay)\n", static_cast<unsigned long long>(seed));
  for (const Conv2dKernelInfo& k : kernels) {
    Conv2dProblem p = k.problem;
    p.n = 3;
    ASSERT_EQ(k.alignment, 4) << k.name;
    ASSERT_GE(k.workspace_fixed, 4LL * p.c_out * p.c * p.kh * p.kw) << k.name << ": no room for the filter's copy";
    // Float32 rows of 16 bytes: c a multiple of 4.
    const bool channels_last = p.kh * p.kw == 1 && p.c % 4 == 0;
    for (const bool shifted : {false, true}) {
      bool filter_copied = false;
      const auto r = convgen::testing::check_problem(p, runner(library, k, shifted, &filter_copied), seed);
      const char* const how = shifted ? "the filter 4-byte aligned" : "the filter 16-byte aligned";
      EXPECT_TRUE(r.passed) << k.name << ", " << how << ": " << r.message;
      EXPECT_EQ(filter_copied, shifted || !channels_last)
          << k.name << ", " << how << ": the filter " << (filter_copied ? "was" : "was not") << " copied";
    }
  }
}

TEST(NchwFilter, ImplicitGemmNchwReadsAnAlignedChannelsLastFilterInPlace) {
  std::string why;
  if (!convgen::testing::tf32_tensor_cores(&why)) GTEST_SKIP() << why;
  check_library(convgen::nchw_filter::conv2d_kernels(), &convgen::nchw_filter::conv2d);
}

TEST(NchwFilter, ImplicitGemmSm90NchwReadsAnAlignedChannelsLastFilterInPlace) {
#ifdef CONVGEN_NCHW_FILTER_SM90
  std::string why;
  if (!convgen::testing::gpu_available(&why)) GTEST_SKIP() << why;
  int major = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
  if (major != 9) GTEST_SKIP() << "Hopper's main loop runs on sm_90 only";
  check_library(convgen::nchw_filter_sm90::conv2d_kernels(), &convgen::nchw_filter_sm90::conv2d);
#else
  GTEST_SKIP() << "built without sm_90: no implicit_gemm_sm90_nchw kernels";
#endif
}

}  // namespace
