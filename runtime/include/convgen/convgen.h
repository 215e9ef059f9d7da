// convgen runtime: the types every generated library speaks, and the generic
// kernels that serve problems no specialized kernel was made for.
//
// Each operator has a problem, an argument (pointer) struct, a generic
// kernel and an OperatorTraits specialization here. A generated library
// `<name>` adds a header `<name>.h` with, in namespace convgen::<name>, for
// depthwise conv2d:
//
//   Status depthwise_conv2d(const DepthwiseProblem&, const DepthwiseArgs&,
//                           cudaStream_t, Dispatch = Dispatch::kAllowGeneric);
//   KernelChoice find(const DepthwiseProblem&);
//   const std::vector<DepthwiseKernelInfo>& depthwise_kernels();
//
// and for dense conv2d:
//
//   Status conv2d(const Conv2dProblem&, const Conv2dArgs&, cudaStream_t,
//                 Dispatch = Dispatch::kAllowGeneric);
//   KernelChoice find(const Conv2dProblem&);
//   const std::vector<Conv2dKernelInfo>& conv2d_kernels();
//
// All calls validate the problem and the pointers first; a bad call returns a
// status with a message and launches nothing.
//
// Thread safety: every call may be made from any number of host threads at
// once, on the same or different streams, into one library or several
// linked into one program (tests/gpu/test_concurrency.cu: 8 threads on 8
// streams into two libraries). The libraries hold no mutable state but two
// kinds, both safe: the lists the *_kernels() calls return, built once on first use (a
// function-local static), and a pipelined `window` kernel's count of the
// blocks that fit on each device, found once per device and kept in an
// atomic. Calls do not synchronize the stream or the device.
//
// Determinism: the same call on the same inputs gives bitwise-identical
// output, every time, alone or concurrently with other calls: each output
// element is summed by one thread in an order fixed at generation, with no
// atomics and no split reductions. A specialized kernel and the generic
// kernel sum in different orders, so they agree to rounding, not bitwise;
// so may one spec built for two GPU architectures (different instructions).
#pragma once

#include <cuda_runtime.h>

#include "convgen/dtype.h"
#include "convgen/epilogue.h"
#include "convgen/limits.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

namespace convgen {

enum class StatusCode {
  kSuccess = 0,
  kInvalidProblem,   // impossible shape, unsupported dtype/layout, ...
  kInvalidPointer,   // null or misaligned pointer
  kNoSpecializedKernel,  // strict dispatch and no kernel was generated for the problem
  kCudaError,        // the launch itself failed, or (nothing launched) an earlier CUDA error of this thread was unread
  kUnsupportedDevice,  // the library (or the runtime) holds no image this GPU can run: rebuild with its arch
};

struct Status {
  StatusCode code = StatusCode::kSuccess;
  std::string message;

  bool ok() const { return code == StatusCode::kSuccess; }
  static Status Ok() { return {}; }
};

const char* to_string(StatusCode code);

// DataType and Layout, their words and sizes: convgen/dtype.h. Epilogue and
// Activation, their words and their math: convgen/epilogue.h.

// One depthwise convolution: output[n, c*multiplier + m, oy, ox] =
//   act(affine(sum_{ky,kx} input[n, c, oy*stride_h - pad_top + ky*dilation_h,
//                                      ox*stride_w - pad_left + kx*dilation_w]
//              * filter[c*multiplier + m, 0, ky, kx]))
// where positions outside the input read as zero. Indices are logical
// (n, channel, y, x); `layout` says how the tensors lie in memory (below,
// at DepthwiseArgs) and `dtype` what their elements are. Every data type
// accumulates in fp32 and applies the epilogue in fp32, rounding once, at
// the store.
struct DepthwiseProblem {
  int n = 1, c = 1, h = 1, w = 1;  // input shape (logical N, C, H, W)
  int kh = 3, kw = 3;              // filter window
  int stride_h = 1, stride_w = 1;
  int pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
  int dilation_h = 1, dilation_w = 1;
  int multiplier = 1;              // output channels = c * multiplier
  Epilogue epilogue = Epilogue::kNone;
  Activation activation = Activation::kNone;
  DataType dtype = DataType::kFloat32;
  Layout layout = Layout::kNCHW;

  // The output's shape, in 64 bits: exact for any int fields (the true
  // value, never wrapped), so a caller sizing buffers from them is right
  // before validate() too. out_h and out_w are zero or negative when the
  // output would be empty (stride must be at least 1). For a problem
  // validate() accepts each lies within the limits (convgen/limits.h):
  // at most 2^24, so int holds it.
  CONVGEN_HOST_DEVICE long long out_channels() const { return 1LL * c * multiplier; }
  CONVGEN_HOST_DEVICE long long out_h() const {
    return output_extent(h, pad_top, pad_bottom, kh, stride_h, dilation_h);
  }
  CONVGEN_HOST_DEVICE long long out_w() const {
    return output_extent(w, pad_left, pad_right, kw, stride_w, dilation_w);
  }
};

// Device pointers to elements of the problem's dtype (float, __half or
// __nv_bfloat16: every tensor has the same). In memory:
//   layout NCHW: input [n, c, h, w], output [n, c*multiplier, out_h, out_w],
//                filter [c*multiplier, 1, kh, kw];
//   layout NHWC: input [n, h, w, c], output [n, out_h, out_w, c*multiplier],
//                filter [kh, kw, c*multiplier]: per tap, the channels side
//                by side. (PyTorch's channels_last leaves a depthwise
//                [c*m, 1, kh, kw] weight as it was; permute it once,
//                weight.permute(2, 3, 0, 1).contiguous().)
// For Epilogue::kBias, `bias` holds c*multiplier values; for kScaleShift,
// `scale` and `shift` do. Pointers the epilogue does not use must be null.
// All pointers must be aligned to an element (4 or 2 bytes); the output
// must not overlap any tensor the call reads (input, filter, bias, scale,
// shift). A specialized kernel may read and write with
// vectors of up to 16 bytes (DepthwiseKernelInfo::alignment): a call whose
// tensors are aligned less than that runs the generic kernel (an error
// under Dispatch::kStrict). cudaMalloc's pointers are aligned to 256 bytes.
struct DepthwiseArgs {
  const void* input = nullptr;
  const void* filter = nullptr;
  const void* bias = nullptr;
  const void* scale = nullptr;
  const void* shift = nullptr;
  void* output = nullptr;
};

// One dense (groups = 1) convolution, weights as PyTorch stores them:
//   output[n, co, oy, ox] = act(affine(sum_{ci,ky,kx}
//       input[n, ci, oy*stride_h - pad_top + ky*dilation_h, ox*stride_w - pad_left + kx*dilation_w]
//       * filter[co, ci, ky, kx]) + residual[n, co, oy, ox])
// where positions outside the input read as zero, affine is the epilogue
// (none, + bias[co], or * scale[co] + shift[co]) and the residual term is
// present only when `residual` is true. Indices are logical, as for
// DepthwiseProblem: `layout` and `dtype` say how the tensors are stored.
struct Conv2dProblem {
  int n = 1, c = 1, h = 1, w = 1;  // input shape (logical N, C, H, W)
  int c_out = 1;                   // output channels
  int kh = 3, kw = 3;              // filter window
  int stride_h = 1, stride_w = 1;
  int pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
  int dilation_h = 1, dilation_w = 1;
  int groups = 1;                  // only 1 (dense) so far
  Epilogue epilogue = Epilogue::kNone;
  bool residual = false;           // add a tensor shaped like the output before the activation
  Activation activation = Activation::kNone;
  DataType dtype = DataType::kFloat32;
  Layout layout = Layout::kNCHW;
  // How float32 products may be computed (convgen/dtype.h): kFloat32, FMA
  // in fp32; kTF32 or k3xTF32, on tensor cores. A kernel is made for one
  // mode, and only a problem of that mode runs it; the generic kernel
  // computes every mode in fp32. Float16 and bfloat16 problems take kFloat32.
  Math math = Math::kFloat32;

  // As DepthwiseProblem's: 64-bit, exact, within the limits once validated.
  CONVGEN_HOST_DEVICE long long out_h() const {
    return output_extent(h, pad_top, pad_bottom, kh, stride_h, dilation_h);
  }
  CONVGEN_HOST_DEVICE long long out_w() const {
    return output_extent(w, pad_left, pad_right, kw, stride_w, dilation_w);
  }
};

// Device pointers to elements of the problem's dtype. filter is
// [c_out, c, kh, kw] with layout NCHW and [c_out, kh, kw, c] with NHWC (a
// channels_last weight); bias, scale and shift hold c_out values as the
// epilogue needs; residual is shaped and laid out like the output
// ([n, c_out, out_h, out_w] or [n, out_h, out_w, c_out]) when the problem
// has one. Pointers the problem does not use must be null. Alignment and
// overlap rules are those of DepthwiseArgs; the residual may not overlap
// the output either.
struct Conv2dArgs {
  const void* input = nullptr;
  const void* filter = nullptr;
  const void* bias = nullptr;
  const void* scale = nullptr;
  const void* shift = nullptr;
  const void* residual = nullptr;
  void* output = nullptr;
  // Scratch device memory for the kernels that compute through one (the
  // `winograd_nonfused` algorithm's transformed operands), as cuDNN's
  // workspace: KernelChoice::workspace_bytes (the library's find()) says
  // how many bytes a problem's kernel needs, 0 for most. The call owns it
  // until the work it launched on the stream is done: give each stream its
  // own. Aligned to kWorkspaceAlignment bytes, overlapping no tensor of the
  // call. A call whose kernel needs more than workspace_bytes returns
  // kInvalidPointer and launches nothing.
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
};

enum class Dispatch {
  kAllowGeneric,  // run the generic kernel when no specialized kernel matches
  kStrict,        // a problem with no specialized kernel is an error
};

// Describes one generated kernel of an operator.
template <class Problem>
struct KernelInfoFor {
  std::string name;     // e.g. dw_f32_nchw_n1_c256_h96_w96_k3x3_s1_p1_m1
  Problem problem;      // n is the batch the spec declared (0: runtime)
  std::string schedule;  // human-readable schedule summary
  std::string spec_location;  // spec file:line the kernel came from
  int alignment = 4;  // bytes every tensor's pointer must be aligned to (vector loads and stores)
  // The largest batch one call runs on this kernel (its grid and 32-bit
  // launch indices number no more); a larger batch runs the generic kernel
  // (kNoSpecializedKernel and nothing launched under Dispatch::kStrict):
  // split it into several calls to keep this one.
  int max_batch = kMaxBatch;
  // The oldest GPU it runs on (80: sm_80; 0: every GPU the library is built
  // for); an older one runs the generic kernel (an error under Dispatch::kStrict).
  int min_arch = 0;
  // The newest GPU it runs on (90: sm_90 only, the arch-specific wgmma and
  // TMA); 0: every GPU from min_arch. Another one runs the generic kernel.
  int max_arch = 0;
  // Bytes of dynamic shared memory a block takes (0: static, within the
  // 48 KiB every GPU gives); a GPU that gives a block less runs the generic
  // kernel (an error under Dispatch::kStrict).
  int shared_bytes = 0;
  // The workspace a call needs (Conv2dArgs::workspace): workspace_fixed +
  // workspace_per_image x batch bytes; both 0 for most kernels.
  long long workspace_fixed = 0;
  long long workspace_per_image = 0;
  long long workspace_bytes(int batch) const { return workspace_fixed + workspace_per_image * batch; }
};
using DepthwiseKernelInfo = KernelInfoFor<DepthwiseProblem>;
using Conv2dKernelInfo = KernelInfoFor<Conv2dProblem>;

// Which kernel serves a problem, and why.
struct KernelChoice {
  Status status;          // not ok: the problem itself is invalid
  bool specialized = false;
  std::string kernel;     // kernel name, or the generic kernel's: "generic_depthwise_f16_nhwc"
  std::string reason;     // one line a person can read
  // Bytes of Conv2dArgs::workspace the call needs at this problem's batch
  // (0: none; the generic kernels and most specialized ones need none).
  std::size_t workspace_bytes = 0;
};

// Checks a problem's shape and parameters without touching memory: every
// field and every size derived from them (formed in 64 bits: output
// channels and extents, elements and bytes of each tensor, the reduction)
// against the generic column of the limits table (convgen/limits.h). A
// problem it accepts is one the generic kernel computes exactly as the
// formula above says; the message of one it rejects names the size, its
// true value and the limit.
Status validate(const DepthwiseProblem& problem);
Status validate(const Conv2dProblem& problem);
// Checks a problem and its pointers (null, alignment, which epilogue
// pointers are present).
Status validate(const DepthwiseProblem& problem, const DepthwiseArgs& args);
Status validate(const Conv2dProblem& problem, const Conv2dArgs& args);

// The generic kernels: correct for every valid problem. Exposed so that
// tests and benchmarks can call them directly.
Status generic_depthwise_conv2d(const DepthwiseProblem& problem, const DepthwiseArgs& args,
                                cudaStream_t stream);
Status generic_conv2d(const Conv2dProblem& problem, const Conv2dArgs& args, cudaStream_t stream);

// Whether a library's kernel (one of its *_kernels()) runs on the current
// device: ok, or kUnsupportedDevice and why (its instructions are another
// GPU's, or it takes more shared memory a block than the GPU gives): the
// check a call makes before launching it. Ok where CUDA cannot say (no GPU).
Status runs_on_current_device(const DepthwiseKernelInfo& kernel);
Status runs_on_current_device(const Conv2dKernelInfo& kernel);

// A stable, readable rendering of a problem, used in messages and by `find`.
std::string describe(const DepthwiseProblem& problem);
std::string describe(const Conv2dProblem& problem);
// The generic kernel that serves a problem, e.g. "generic_depthwise_f16_nhwc".
std::string generic_kernel_name(const DepthwiseProblem& problem);
std::string generic_kernel_name(const Conv2dProblem& problem);

// What the runtime's registry and dispatch need of an operator beyond its
// problem and argument types: one specialization per operator. The registry,
// lookup, dispatch and listing (namespace detail) are written once over it.
template <class Problem>
struct OperatorTraits;

template <>
struct OperatorTraits<DepthwiseProblem> {
  using Args = DepthwiseArgs;
  // Every generated launcher of the operator has this type: plain types
  // only, so that the emitted .cu files need nothing but the CUDA runtime
  // header and convgen's device headers. epilogue_a is the bias or the
  // scale, epilogue_b the shift; all point to elements of the kernel's dtype.
  using Launcher = cudaError_t(const void* input, const void* filter, const void* epilogue_a,
                               const void* epilogue_b, void* output, int batch, cudaStream_t stream);
  static Status generic(const DepthwiseProblem& p, const DepthwiseArgs& a, cudaStream_t stream) {
    return generic_depthwise_conv2d(p, a, stream);
  }
  static cudaError_t launch(Launcher* launcher, const DepthwiseProblem& p, const DepthwiseArgs& a,
                            cudaStream_t stream) {
    return launcher(a.input, a.filter, p.epilogue == Epilogue::kBias ? a.bias : a.scale, a.shift, a.output, p.n,
                    stream);
  }
  // Depthwise kernels take no workspace.
  static void* workspace(const DepthwiseArgs&) { return nullptr; }
  static std::size_t workspace_bytes(const DepthwiseArgs&) { return 0; }
  // The fields a kernel is made for: all but the batch, which it takes at launch.
  // Whether `ok` holds for every pointer of a call (null ones included).
  template <class Check>
  static bool all_pointers(const DepthwiseArgs& a, const Check& ok) {
    return ok(a.input) && ok(a.filter) && ok(a.bias) && ok(a.scale) && ok(a.shift) && ok(a.output);
  }
  static auto shape(const DepthwiseProblem& p) {
    return std::tie(p.c, p.h, p.w, p.kh, p.kw, p.stride_h, p.stride_w, p.pad_top, p.pad_bottom, p.pad_left,
                    p.pad_right, p.dilation_h, p.dilation_w, p.multiplier, p.epilogue, p.activation, p.dtype,
                    p.layout);
  }
};

template <>
struct OperatorTraits<Conv2dProblem> {
  using Args = Conv2dArgs;
  using Launcher = cudaError_t(const void* input, const void* filter, const void* epilogue_a,
                               const void* epilogue_b, const void* residual, void* output, void* workspace,
                               int batch, cudaStream_t stream);
  static Status generic(const Conv2dProblem& p, const Conv2dArgs& a, cudaStream_t stream) {
    return generic_conv2d(p, a, stream);
  }
  static cudaError_t launch(Launcher* launcher, const Conv2dProblem& p, const Conv2dArgs& a, cudaStream_t stream) {
    return launcher(a.input, a.filter, p.epilogue == Epilogue::kBias ? a.bias : a.scale, a.shift, a.residual,
                    a.output, a.workspace, p.n, stream);
  }
  // The scratch memory a call gives its kernel.
  static void* workspace(const Conv2dArgs& a) { return a.workspace; }
  static std::size_t workspace_bytes(const Conv2dArgs& a) { return a.workspace_bytes; }
  template <class Check>
  static bool all_pointers(const Conv2dArgs& a, const Check& ok) {
    return ok(a.input) && ok(a.filter) && ok(a.bias) && ok(a.scale) && ok(a.shift) && ok(a.residual) && ok(a.output);
  }
  static auto shape(const Conv2dProblem& p) {
    return std::tie(p.c, p.c_out, p.h, p.w, p.kh, p.kw, p.stride_h, p.stride_w, p.pad_top, p.pad_bottom, p.pad_left,
                    p.pad_right, p.dilation_h, p.dilation_w, p.groups, p.epilogue, p.residual, p.activation, p.dtype,
                    p.layout, p.math);
  }
};

namespace detail {

// One generated kernel in a library's table.
template <class Problem>
struct RegistryEntry {
  Problem problem;  // problem.n: the batch the spec declared, 0 if runtime
  const char* name;
  const char* schedule;
  const char* spec_location;
  typename OperatorTraits<Problem>::Launcher* launch;
  int alignment;  // bytes every tensor must be aligned to; others run the generic kernel
  int max_batch;  // the most images one launch covers
  int min_arch;   // the oldest GPU it runs on (80: sm_80); 0: every GPU the library is built for
  int max_arch;   // the newest GPU it runs on (90: sm_90 only, the sm_90a instructions); 0: no limit
  // Bytes of dynamic shared memory a block takes (0: its shared memory is
  // static, within the 48 KiB every GPU gives). A GPU that gives a block
  // less (one that runs the library's code without being on its list: an
  // sm_86 running sm_80 code) runs the generic kernel.
  int shared_bytes;
  // The workspace a call needs: workspace_fixed + workspace_per_image x batch bytes.
  long long workspace_fixed;
  long long workspace_per_image;
  long long workspace_bytes(int batch) const { return workspace_fixed + workspace_per_image * batch; }
};

// A library's table of one operator's kernels, and the calls a generated
// library makes on it (defined once, in the runtime, for every operator).
template <class Problem>
struct Registry {
  const char* library;
  const char* archs;  // the GPUs its kernels are built for, as CMake names them ("75-real;90")
  const RegistryEntry<Problem>* entries;
  int count;

  KernelChoice find(const Problem& problem) const;
  Status run(const Problem& problem, const typename OperatorTraits<Problem>::Args& args, cudaStream_t stream,
             Dispatch dispatch) const;
  std::vector<KernelInfoFor<Problem>> list() const;
};

}  // namespace detail
}  // namespace convgen
