// Half precision and channels_last kernels and their pointers' alignment
// (library half_calls, tests/gpu/half_calls.yaml): a kernel that moves
// 16-byte vectors states it (DepthwiseKernelInfo::alignment, and `find`'s
// reason); a call whose input or output is aligned to an element (2 bytes)
// but not to the vector runs the generic kernel, and is right, or under
// Dispatch::kStrict is refused with kInvalidPointer and launches nothing;
// a call aligned to exactly what the kernel states runs the kernel. Only the
// calls that compute need a GPU (see OperandBuffer).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "half_calls.h"
#include "harness.h"

namespace {

using convgen::DepthwiseArgs;
using convgen::DepthwiseKernelInfo;
using convgen::DepthwiseProblem;
using convgen::Dispatch;
using convgen::Status;
using convgen::StatusCode;
using convgen::testing::OperandBuffer;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

size_t bytes_of(const DepthwiseProblem& p, long long elements) {
  return static_cast<size_t>(elements) * convgen::element_bytes(p.dtype);
}
long long input_count(const DepthwiseProblem& p) { return 1LL * p.n * p.c * p.h * p.w; }
long long output_count(const DepthwiseProblem& p) { return 1LL * p.n * p.out_channels() * p.out_h() * p.out_w(); }

// The kernel's problem at batch 1.
DepthwiseProblem problem_of(const DepthwiseKernelInfo& k) {
  DepthwiseProblem p = k.problem;
  p.n = 1;
  return p;
}

bool is_half(const DepthwiseProblem& p) { return p.dtype != convgen::DataType::kFloat32; }

// Buffers for one kernel's call, 64 bytes of slack each so that a pointer
// shifted inside them stays inside; the output poisoned.
struct CallBuffers {
  static constexpr std::uint32_t kPoison = 0xffffffffu;
  static constexpr size_t kSlackFloats = 16;
  explicit CallBuffers(const DepthwiseProblem& p)
      : input(bytes_of(p, input_count(p)) / 4 + kSlackFloats, 0),
        filter(bytes_of(p, 1LL * p.out_channels() * p.kh * p.kw) / 4 + kSlackFloats, 0),
        channels(bytes_of(p, 2LL * p.out_channels()) / 4 + kSlackFloats, 0),
        output(bytes_of(p, output_count(p)) / 4 + kSlackFloats, kPoison),
        p_(p) {}
  bool allocated() const {
    return input.get() != nullptr && filter.get() != nullptr && channels.get() != nullptr && output.get() != nullptr;
  }
  // Input and output `shift` bytes past the buffers' 256-byte aligned starts.
  DepthwiseArgs args(int shift) const {
    DepthwiseArgs a;
    a.input = reinterpret_cast<const char*>(input.get()) + shift;
    a.filter = filter.get();
    if (p_.epilogue == convgen::Epilogue::kBias) a.bias = channels.get();
    if (p_.epilogue == convgen::Epilogue::kScaleShift) {
      a.scale = channels.get();
      a.shift = reinterpret_cast<const char*>(channels.get()) + bytes_of(p_, p_.out_channels());
    }
    a.output = reinterpret_cast<char*>(output.get()) + shift;
    return a;
  }
  bool output_untouched() const {
    const std::vector<std::uint32_t> words = output.words();
    if (words.size() != output.size()) return false;
    for (std::uint32_t w : words) {
      if (w != kPoison) return false;
    }
    return true;
  }
  OperandBuffer input, filter, channels, output;

 private:
  DepthwiseProblem p_;
};

// The library's kernels that need more than an element's alignment.
std::vector<DepthwiseKernelInfo> vector_kernels() {
  std::vector<DepthwiseKernelInfo> kernels;
  for (const DepthwiseKernelInfo& k : convgen::half_calls::depthwise_kernels()) {
    if (k.alignment > convgen::element_bytes(k.problem.dtype)) kernels.push_back(k);
  }
  return kernels;
}

TEST(HalfAlignment, HalfVectorKernelsStateTheirAlignment) {
  bool half_16 = false;
  for (const DepthwiseKernelInfo& k : convgen::half_calls::depthwise_kernels()) {
    SCOPED_TRACE(k.name);
    EXPECT_GE(k.alignment, convgen::element_bytes(k.problem.dtype));
    EXPECT_LE(k.alignment, 16);
    EXPECT_EQ(k.alignment & (k.alignment - 1), 0) << "a power of two";
    half_16 = half_16 || (is_half(k.problem) && k.alignment == 16);
    const convgen::KernelChoice choice = convgen::half_calls::find(problem_of(k));
    ASSERT_TRUE(choice.specialized) << choice.reason;
    EXPECT_EQ(choice.kernel, k.name);
    if (k.alignment > 4) {
      EXPECT_TRUE(contains(choice.reason, "aligned to less than " + std::to_string(k.alignment) +
                                              " bytes run the generic kernel"))
          << choice.reason;
    }
  }
  // The MobileNetV2 layers' half kernels move 8 halves at a time.
  EXPECT_TRUE(half_16) << "no half kernel of half_calls loads 16-byte vectors";
}

// Input or output aligned to 2 bytes (one half), not to the kernel's
// vector: strict dispatch refuses the call, naming the kernel and the
// alignment, and writes nothing.
TEST(HalfAlignment, StrictDispatchRefusesAnElementAlignedCallAndLaunchesNothing) {
  ASSERT_FALSE(vector_kernels().empty());
  for (const DepthwiseKernelInfo& k : vector_kernels()) {
    SCOPED_TRACE(k.name);
    const DepthwiseProblem p = problem_of(k);
    const CallBuffers buffers(p);
    ASSERT_TRUE(buffers.allocated());
    const int element = convgen::element_bytes(p.dtype);
    for (int which = 0; which < 2; ++which) {
      DepthwiseArgs a = buffers.args(0);
      if (which == 0) a.input = static_cast<const char*>(a.input) + element;
      if (which == 1) a.output = static_cast<char*>(a.output) + element;
      const Status s = convgen::half_calls::depthwise_conv2d(p, a, nullptr, Dispatch::kStrict);
      EXPECT_EQ(s.code, StatusCode::kInvalidPointer) << s.message;
      EXPECT_TRUE(contains(s.message, "kernel " + k.name + " needs every tensor aligned to " +
                                          std::to_string(k.alignment) + " bytes"))
          << s.message;
      EXPECT_TRUE(buffers.output_untouched()) << "the refused call wrote its output";
    }
  }
}

// The same call under kAllowGeneric goes to the generic kernel of the
// problem's dtype and layout: its launch, without a GPU.
TEST(HalfAlignment, AnElementAlignedCallReachesTheGenericKernel) {
  if (OperandBuffer::on_device()) GTEST_SKIP() << "on a GPU, ElementAlignedCallsAreRight checks the result";
  for (const DepthwiseKernelInfo& k : vector_kernels()) {
    SCOPED_TRACE(k.name);
    const DepthwiseProblem p = problem_of(k);
    const CallBuffers buffers(p);
    ASSERT_TRUE(buffers.allocated());
    const Status s = convgen::half_calls::depthwise_conv2d(p, buffers.args(convgen::element_bytes(p.dtype)), nullptr);
    EXPECT_EQ(s.code, StatusCode::kCudaError) << s.message;
    EXPECT_TRUE(contains(s.message, "launching " + convgen::generic_kernel_name(p))) << s.message;
  }
}

// Pointers aligned to exactly what a kernel states (and no more) run that
// kernel: the runtime asks no more alignment than the kernel needs, an
// element's for a kernel that moves single halves. Without a GPU the call
// reaches the kernel's launch.
TEST(HalfAlignment, AStatedAlignmentIsEnough) {
  for (const DepthwiseKernelInfo& k : convgen::half_calls::depthwise_kernels()) {
    SCOPED_TRACE(k.name);
    const DepthwiseProblem p = problem_of(k);
    const CallBuffers buffers(p);
    ASSERT_TRUE(buffers.allocated());
    // 256-byte aligned starts, shifted by the alignment: aligned to it and
    // not to twice it.
    const Status s = convgen::half_calls::depthwise_conv2d(p, buffers.args(k.alignment), nullptr, Dispatch::kStrict);
    if (OperandBuffer::on_device()) {
      EXPECT_TRUE(s.ok()) << s.message;
    } else {
      EXPECT_EQ(s.code, StatusCode::kCudaError) << s.message;
      EXPECT_TRUE(contains(s.message, "launching " + k.name)) << s.message;
    }
  }
}

// Runs the library on copies of the input and output placed one element
// past a 16-byte boundary, then copies the output back for the check.
Status run_element_aligned(const DepthwiseProblem& p, const DepthwiseArgs& a, cudaStream_t stream) {
  const size_t element = convgen::element_bytes(p.dtype);
  const size_t in = bytes_of(p, input_count(p)), out = bytes_of(p, output_count(p));
  char* input = nullptr;
  char* output = nullptr;
  if (cudaMalloc(&input, in + 16) != cudaSuccess || cudaMalloc(&output, out + 16) != cudaSuccess) {
    cudaFree(input);
    return {StatusCode::kCudaError, "cudaMalloc failed"};
  }
  cudaMemcpyAsync(input + element, a.input, in, cudaMemcpyDeviceToDevice, stream);
  cudaMemcpyAsync(output + element, a.output, out, cudaMemcpyDeviceToDevice, stream);
  DepthwiseArgs shifted = a;
  shifted.input = input + element;
  shifted.output = output + element;
  const Status status = convgen::half_calls::depthwise_conv2d(p, shifted, stream);
  cudaMemcpyAsync(a.output, output + element, out, cudaMemcpyDeviceToDevice, stream);
  cudaStreamSynchronize(stream);
  cudaFree(input);
  cudaFree(output);
  return status;
}

// On a GPU: the element-aligned call the generic kernel serves is right
// (against the float64 reference, in the problem's dtype and layout).
TEST(HalfAlignment, ElementAlignedCallsAreRight) {
  std::string why;
  if (!convgen::testing::gpu_available(&why)) GTEST_SKIP() << "no GPU, GPU tests skipped: " << why;
  const std::uint64_t seed = convgen::testing::test_seed();
  for (const DepthwiseKernelInfo& k : vector_kernels()) {
    const convgen::testing::CheckResult r = convgen::testing::check_problem(problem_of(k), run_element_aligned, seed);
    EXPECT_TRUE(r.passed) << k.name << ", seed " << seed << ": " << r.message;
  }
}

}  // namespace
