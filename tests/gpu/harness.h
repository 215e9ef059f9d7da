// GPU test harness: runs a depthwise or dense convolution on fresh random
// inputs with the output poisoned (NaN) before launch and guarded by words on
// both sides, and checks every element against the float64 reference
// computed on the GPU: the verification oracle `convgen tune` uses too
// (oracle/include/convgen/oracle/oracle.h states the bound).
#pragma once

#include <convgen/convgen.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace convgen::testing {

// True when a CUDA device is usable; otherwise `why` says what failed.
bool gpu_available(std::string* why);
// True when device 0 has TF32 tensor cores (sm_80 and up); otherwise `why`
// says what is missing.
bool tf32_tensor_cores(std::string* why);

// A call's operand buffer, every 32-bit word set to `fill`: device memory
// where a GPU is usable, else 256-byte aligned host memory. The runtime checks
// a call's problem and pointers before any CUDA call and touches no operand
// when it refuses one, so the bad-call tests run on machines without a GPU
// too; there a call that wrongly launched would return a CUDA error instead
// of the refusal the test expects.
class OperandBuffer {
 public:
  OperandBuffer(std::size_t floats, std::uint32_t fill);
  ~OperandBuffer();
  OperandBuffer(const OperandBuffer&) = delete;
  OperandBuffer& operator=(const OperandBuffer&) = delete;

  float* get() const { return data_; }
  std::size_t size() const { return floats_; }
  // True when the buffer lives on a GPU.
  static bool on_device();
  // Its words, once the device has finished all work (empty when that or the
  // copy fails, which the caller reports as a failure).
  std::vector<std::uint32_t> words() const;

 private:
  float* data_ = nullptr;
  std::size_t floats_ = 0;
};

// Runs a problem: a library's depthwise_conv2d, or the generic kernel.
using Runner = std::function<Status(const DepthwiseProblem&, const DepthwiseArgs&, cudaStream_t)>;
// Runs a dense problem: a library's conv2d, or generic_conv2d.
using Conv2dRunner = std::function<Status(const Conv2dProblem&, const Conv2dArgs&, cudaStream_t)>;

struct CheckResult {
  bool passed = false;
  long long elements = 0;
  long long bad_elements = 0;  // outside the bound, NaN, or never written
  double max_rel_error = 0;    // max |got - ref| / S over the elements (float16: those with S >= 2^-14; S: see below)
  std::string message;         // first failures, or the launch error
};

// Per-element bound for fp32: |got - ref| <= (taps + 2) * 2^-23 * S + 1e-30,
// where S is the float64 sum of the magnitudes of every term that forms the
// output (|x*w| over the taps, scaled by |scale|, plus |bias| or |shift|).
// Rounding in an fp32 sum of `taps` products cannot exceed it; a wrong index
// or a missed tap exceeds it at once, since inputs are random in [-1, 1].
// For float16 and bfloat16, the operands are drawn rounded to the dtype and
// the bound adds the output's one rounding (oracle.h states it). The
// problem's dtype and layout say how the operands are stored.
CheckResult check_problem(const DepthwiseProblem& problem, const Runner& run, std::uint64_t seed);

// The same for a dense convolution: S sums the c*kh*kw products (|x*w|,
// scaled by |scale|), |bias| or |shift|, and |residual| when the problem
// adds one; the residual tensor is random too. Input and filter are random
// multiples of 1/16, so that the convolution's fp32 sums are exact in any
// order, and the bound is (sqrt(c*kh*kw) + 4) * 2^-23 * S + 1e-30: one
// missed product exceeds it even in a sum of thousands.
// With kUniform the input and filter are uniform in [-1, 1] instead (as the
// depthwise check draws them) and the bound is the oracle's for such sums:
// what tells the products' math apart (tf32 rounds each operand to 10 bits
// after the point; 3xtf32 keeps fp32's accuracy), where sixteenths are
// exact in every math.
// With kWinogradF4 the kernel sums through Winograd F(4x4, 3x3) (the
// winograd_nonfused algorithm), whose transforms round even sixteenths: S is
// then the magnitude of the transformed sum and the terms sqrt(36 c) + 16
// (oracle/problem.h, ReferenceProblem::winograd_f4), which a missed input
// channel or transform element still exceeds.
enum class DenseOperands { kSixteenths, kUniform };
enum class DenseSum { kProducts, kWinogradF4 };
CheckResult check_problem(const Conv2dProblem& problem, const Conv2dRunner& run, std::uint64_t seed,
                          DenseOperands operands = DenseOperands::kSixteenths,
                          DenseSum sum = DenseSum::kProducts);
// How a library's kernel sums: kWinogradF4 for the winograd_nonfused
// algorithm's kernels (their schedule names it), else kProducts.
DenseSum dense_sum_of(const Conv2dKernelInfo& kernel);

// A runner that gives each call the workspace the library's find() says its
// kernel needs (Conv2dArgs::workspace): allocated before the call and freed
// once the stream has finished the call's work.
using Conv2dFind = KernelChoice (*)(const Conv2dProblem&);
Conv2dRunner with_workspace(Conv2dFind find, Conv2dRunner run);

// Every dtype x layout that none of `kernels` (a library's
// depthwise_kernels() or conv2d_kernels()) is made for.
template <class KernelInfo>
std::vector<std::pair<DataType, Layout>> storages_without_kernels(const std::vector<KernelInfo>& kernels) {
  std::vector<std::pair<DataType, Layout>> missing;
  for (const DataTypeRow& d : kDataTypeTable) {
    for (const LayoutRow& l : kLayoutTable) {
      const bool made = std::any_of(kernels.begin(), kernels.end(), [&](const KernelInfo& k) {
        return k.problem.dtype == d.value && k.problem.layout == l.value;
      });
      if (!made) missing.emplace_back(d.value, l.value);
    }
  }
  return missing;
}

// A fresh seed per run (printed by the caller so that a failure can be
// replayed), or $CONVGEN_TEST_SEED when set.
std::uint64_t test_seed();

}  // namespace convgen::testing
