#include "harness.h"

#include <convgen/oracle/oracle.h>
#include <convgen/oracle/reference_gpu.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

namespace convgen::testing {

namespace {

using DeviceBuffer = oracle::DeviceArray<float>;
using DeviceBytes = oracle::DeviceArray<unsigned char>;

template <class T>
bool upload(const oracle::DeviceArray<T>& d, const std::vector<T>& host) {
  return host.empty() || cudaMemcpy(d.ptr, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice) == cudaSuccess;
}

// The runtime's problems as the oracle describes them, as the generator's
// operators describe their workloads (Operator::reference_problem).

// Each input channel its own group of `multiplier` outputs; uniform
// operands; with NHWC the filter is [kh, kw, c * multiplier].
oracle::ReferenceProblem reference_problem(const DepthwiseProblem& p) {
  oracle::ReferenceProblem r = oracle::convolution_geometry(p, p.n, p.out_channels());
  r.groups = p.c;
  r.filter_taps_first = true;
  return r;
}

// One group; operands multiples of 1/16, so that the convolution's sums are
// exact and one missed product exceeds the bound even in a sum of thousands.
oracle::ReferenceProblem reference_problem(const Conv2dProblem& p, DenseSum sum) {
  oracle::ReferenceProblem r = oracle::convolution_geometry(p, p.n, p.c_out);
  r.residual = p.residual;
  r.math = p.math;
  r.exact_sums = true;
  r.winograd_f4 = sum == DenseSum::kWinogradF4;
  return r;
}

// A kernel's operands, in the problem's dtype and layout (residual: null
// when the problem has none).
struct KernelOperands {
  const void* input = nullptr;
  const void* filter = nullptr;
  const void* epilogue_a = nullptr;
  const void* epilogue_b = nullptr;
  const void* residual = nullptr;
};

// Runs a problem on the operands the harness made: its output pointer is
// past the leading guard elements.
using Launch = std::function<Status(const KernelOperands& operands, void* output)>;

// The part both operators share: fresh operands from `seed` (rounded to the
// dtype), the float64 reference on float NCHW copies of them, the kernel's
// copies in its dtype and layout, the output poisoned between guard
// elements, `launch` on it, and every element compared with the reference
// by the oracle.
CheckResult launch_and_compare(const oracle::ReferenceProblem& p, std::uint64_t seed, const Launch& launch) {
  CheckResult result;
  using oracle::Tensor;
  const oracle::Operands host = oracle::make_operands(p, seed);
  const std::vector<unsigned char> input = oracle::stored(p, Tensor::kInput, host.input);
  const std::vector<unsigned char> filter = oracle::stored(p, Tensor::kFilter, host.filter);
  const std::vector<unsigned char> epilogue_a = oracle::stored(p, Tensor::kPerChannel, host.epilogue_a);
  const std::vector<unsigned char> epilogue_b = oracle::stored(p, Tensor::kPerChannel, host.epilogue_b);
  const std::vector<unsigned char> residual = oracle::stored(p, Tensor::kResidual, host.residual);
  const std::vector<unsigned char> poisoned = oracle::poisoned_output(p);
  DeviceBuffer r_in(host.input.size()), r_filter(host.filter.size()), r_a(host.epilogue_a.size()),
      r_b(host.epilogue_b.size()), r_res(host.residual.size());
  DeviceBytes d_in(input.size()), d_filter(filter.size()), d_a(epilogue_a.size()), d_b(epilogue_b.size()),
      d_res(residual.size()), d_out(poisoned.size());
  if (!r_in.ptr || !r_filter.ptr || !r_a.ptr || !r_b.ptr || (p.residual && !r_res.ptr) || !d_in.ptr ||
      !d_filter.ptr || !d_a.ptr || !d_b.ptr || (p.residual && !d_res.ptr) || !d_out.ptr) {
    result.message = "cudaMalloc failed";
    return result;
  }
  const bool uploaded = upload(r_in, host.input) && upload(r_filter, host.filter) && upload(r_a, host.epilogue_a) &&
                        upload(r_b, host.epilogue_b) && upload(r_res, host.residual) && upload(d_in, input) &&
                        upload(d_filter, filter) && upload(d_a, epilogue_a) && upload(d_b, epilogue_b) &&
                        upload(d_res, residual) && upload(d_out, poisoned);
  if (!uploaded) {
    result.message = "cudaMemcpy failed (the operands)";
    return result;
  }

  // The reference first, from operands no kernel has run on yet.
  const oracle::DeviceOperands reference_operands{r_in.ptr, r_filter.ptr, r_a.ptr, r_b.ptr,
                                                  p.residual ? r_res.ptr : nullptr};
  oracle::Reference reference;
  if (const std::string failed = oracle::reference_on_device(p, reference_operands, reference); !failed.empty()) {
    result.message = failed;
    return result;
  }
  const KernelOperands operands{d_in.ptr, d_filter.ptr, d_a.ptr, d_b.ptr, p.residual ? d_res.ptr : nullptr};
  const Status status = launch(operands, d_out.ptr + oracle::kGuardWords * oracle::element_size(p));
  if (!status.ok()) {
    result.message = std::string("launch failed: ") + status.message;
    return result;
  }
  if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess) {
    result.message = std::string("kernel failed: ") + cudaGetErrorString(e);
    return result;
  }
  std::vector<unsigned char> got(poisoned.size());
  if (cudaMemcpy(got.data(), d_out.ptr, got.size(), cudaMemcpyDeviceToHost) != cudaSuccess) {
    result.message = "cudaMemcpy failed (the output)";
    return result;
  }

  const oracle::Comparison comparison = oracle::compare(p, got, reference);
  result.elements = comparison.elements;
  result.bad_elements = comparison.wrong + (comparison.guard_word >= 0 ? 1 : 0);
  result.max_rel_error = comparison.max_rel_error;
  result.passed = comparison.passed();
  if (!result.passed) result.message = oracle::describe(comparison, p, oracle::kReportedMismatches);
  return result;
}

// The epilogue's parameters as the runtime's arguments take them.
template <class Args>
void set_epilogue(Epilogue epilogue, const KernelOperands& o, Args& args) {
  if (epilogue == Epilogue::kBias) args.bias = o.epilogue_a;
  if (epilogue == Epilogue::kScaleShift) {
    args.scale = o.epilogue_a;
    args.shift = o.epilogue_b;
  }
}

}  // namespace

std::uint64_t test_seed() {
  if (const char* env = std::getenv("CONVGEN_TEST_SEED")) return std::strtoull(env, nullptr, 10);
  return std::random_device{}();
}

bool gpu_available(std::string* why) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    if (why) *why = e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device found";
    // Read, so that a convgen call does not find it pending and refuse
    // (where a driver reported it; without one it stays pending, and every
    // call refuses with it).
    (void)cudaGetLastError();
    return false;
  }
  return true;
}

bool tf32_tensor_cores(std::string* why) {
  if (!gpu_available(why)) return false;
  int major = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
  if (major < 8 && why) *why = "TF32 tensor cores need sm_80";
  return major >= 8;
}

bool OperandBuffer::on_device() {
  static const bool device = gpu_available(nullptr);
  return device;
}

OperandBuffer::OperandBuffer(std::size_t floats, std::uint32_t fill) : floats_(floats) {
  const std::size_t bytes = floats * sizeof(float);
  if (on_device()) {
    if (cudaMalloc(&data_, bytes) != cudaSuccess) {
      data_ = nullptr;
      return;
    }
    const std::vector<std::uint32_t> words(floats, fill);
    cudaMemcpy(data_, words.data(), bytes, cudaMemcpyHostToDevice);
    return;
  }
  // cudaMalloc's alignment, so that a kernel's alignment needs hold alike.
  constexpr std::size_t kAlignment = 256;
  data_ = static_cast<float*>(std::aligned_alloc(kAlignment, (bytes + kAlignment - 1) / kAlignment * kAlignment));
  if (data_ != nullptr) {
    for (std::size_t i = 0; i < floats; ++i) std::memcpy(data_ + i, &fill, sizeof(fill));
  }
}

OperandBuffer::~OperandBuffer() {
  if (on_device()) {
    cudaFree(data_);
  } else {
    std::free(data_);
  }
}

std::vector<std::uint32_t> OperandBuffer::words() const {
  std::vector<std::uint32_t> words(floats_);
  if (data_ == nullptr) return {};
  if (!on_device()) {
    std::memcpy(words.data(), data_, floats_ * sizeof(float));
    return words;
  }
  if (cudaDeviceSynchronize() != cudaSuccess ||
      cudaMemcpy(words.data(), data_, floats_ * sizeof(float), cudaMemcpyDeviceToHost) != cudaSuccess) {
    return {};
  }
  return words;
}

CheckResult check_problem(const DepthwiseProblem& p, const Runner& run, std::uint64_t seed) {
  return launch_and_compare(reference_problem(p), seed, [&](const KernelOperands& o, void* output) {
    DepthwiseArgs args;
    args.input = o.input;
    args.filter = o.filter;
    args.output = output;
    set_epilogue(p.epilogue, o, args);
    return run(p, args, nullptr);
  });
}

CheckResult check_problem(const Conv2dProblem& p, const Conv2dRunner& run, std::uint64_t seed,
                          DenseOperands operands, DenseSum sum) {
  if (p.groups != 1 || p.n < 1 || p.c < 1 || p.c_out < 1 || p.h < 1 || p.w < 1 || p.out_h() < 1 || p.out_w() < 1) {
    CheckResult result;
    result.message = "the harness checks valid dense (groups = 1) problems only: " + describe(p);
    return result;
  }
  oracle::ReferenceProblem r = reference_problem(p, sum);
  r.exact_sums = operands == DenseOperands::kSixteenths;
  return launch_and_compare(r, seed, [&](const KernelOperands& o, void* output) {
    Conv2dArgs args;
    args.input = o.input;
    args.filter = o.filter;
    args.output = output;
    set_epilogue(p.epilogue, o, args);
    args.residual = o.residual;
    return run(p, args, nullptr);
  });
}

DenseSum dense_sum_of(const Conv2dKernelInfo& kernel) {
  return kernel.schedule.rfind("winograd_nonfused:", 0) == 0 ? DenseSum::kWinogradF4 : DenseSum::kProducts;
}

Conv2dRunner with_workspace(Conv2dFind find, Conv2dRunner run) {
  return [find, run](const Conv2dProblem& p, const Conv2dArgs& a, cudaStream_t stream) {
    const std::size_t bytes = find(p).workspace_bytes;
    if (bytes == 0) return run(p, a, stream);
    oracle::DeviceArray<unsigned char> workspace(bytes);
    if (workspace.ptr == nullptr) return Status{StatusCode::kCudaError, "no device memory for the workspace"};
    Conv2dArgs with = a;
    with.workspace = workspace.ptr;
    with.workspace_bytes = bytes;
    const Status s = run(p, with, stream);
    // The call's kernels read and write the workspace until they finish.
    if (cudaStreamSynchronize(stream) != cudaSuccess) return Status{StatusCode::kCudaError, "the call's work failed"};
    return s;
  };
}

}  // namespace convgen::testing
