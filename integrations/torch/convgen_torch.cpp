// PyTorch operators over one generated convgen library (torch.library):
//
//   convgen::depthwise_conv2d(Tensor input, Tensor weight, Tensor? bias, Tensor? scale, Tensor? shift,
//                             int[2] stride, int[4] padding, int[2] dilation, str activation) -> Tensor
//   convgen::conv2d(Tensor input, Tensor weight, Tensor? bias, Tensor? scale, Tensor? shift, Tensor? residual,
//                   int[2] stride, int[4] padding, int[2] dilation, str activation) -> Tensor
//   convgen::fallbacks() -> int
//   convgen::explain_depthwise_conv2d(<depthwise_conv2d's arguments>) -> str   (which kernel, its schedule;
//                                                                               or "aten: why")
//   convgen::explain_conv2d(<conv2d's arguments>) -> str                       (the same, for conv2d)
//
// padding is [top, bottom, left, right]; the epilogue is `bias`, or `scale`
// and `shift` (a folded batch norm), or neither; activation is none, relu,
// relu6, silu or hardswish. Tensors are CUDA float32, float16 or bfloat16,
// all of one dtype, which is the problem's. The layout is the input's
// (layout_of): contiguous is NCHW, channels_last is NHWC, and the output
// comes in the same memory format. The weight lies as the layout needs it:
//   NCHW: contiguous;
//   NHWC, conv2d: channels_last (PyTorch's own channels_last weight);
//   NHWC, depthwise_conv2d: [c*m, 1, kh, kw] viewing memory [kh, kw, c*m]
//         (w.permute(2, 3, 0, 1).contiguous().permute(2, 3, 0, 1)).
// Nothing is copied to make a tensor fit: anything else raises with the
// reason. A problem the library has no kernel for (or whose pointers are
// too loosely aligned for it, or whose kernel this GPU cannot run, or an
// empty batch or one past kBatchLimit) runs on ATen and is counted by
// fallbacks(). Under torch.autocast the tensors are cast to its dtype first,
// as for ATen's conv2d. The backward (autograd) is convgen_torch.py's, in
// ATen operations.
// A float32 conv2d runs a `math: tf32` kernel where PyTorch allows its own
// convolutions TF32 and the library has one (prefer_tf32_where_allowed).
// Shapes and memory formats of the outputs are also computed, without a
// GPU, by the fake implementations in convgen_torch.py (torch.compile):
// the two must agree. Built by integrations/torch/convgen_torch.py, which
// writes convgen_torch_library.h: the library's header, and the alias
// convgen_torch_library for its namespace.
#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>
#include <torch/version.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>

#include <vector>

#include "convgen_torch_library.h"

namespace {

namespace lib = convgen_torch_library;

std::atomic<long long> g_fallbacks{0};

convgen::Activation activation_of(const std::string& name) {
  for (convgen::Activation a : {convgen::Activation::kNone, convgen::Activation::kRelu, convgen::Activation::kRelu6,
                                convgen::Activation::kSilu, convgen::Activation::kHardswish}) {
    if (name == convgen::to_string(a)) return a;
  }
  TORCH_CHECK(false, "convgen: activation must be none, relu, relu6, silu or hardswish, got '", name, "'");
  return convgen::Activation::kNone;  // not reached: TORCH_CHECK throws
}

// The problem's dtype: the input's.
convgen::DataType dtype_of(const at::Tensor& input) {
  switch (input.scalar_type()) {
    case at::kFloat: return convgen::DataType::kFloat32;
    case at::kHalf: return convgen::DataType::kFloat16;
    case at::kBFloat16: return convgen::DataType::kBFloat16;
    default: break;
  }
  TORCH_CHECK(false, "convgen: input must be float32, float16 or bfloat16, got ", input.scalar_type());
  return convgen::DataType::kFloat32;  // not reached: TORCH_CHECK throws
}

// A depthwise weight [c*m, 1, kh, kw] whose memory is [kh, kw, c*m]: what
// an NHWC depthwise kernel reads.
bool depthwise_nhwc_weight(const at::Tensor& weight) {
  return weight.dim() == 4 && weight.permute({2, 3, 0, 1}).is_contiguous();
}

// Weights that lie as only an NHWC kernel reads them (layout_of's `nhwc_weight`).
bool only_nhwc_depthwise_weight(const at::Tensor& weight) {
  return depthwise_nhwc_weight(weight) && !weight.is_contiguous();
}
bool only_nhwc_dense_weight(const at::Tensor& weight) {
  return weight.dim() == 4 && weight.is_contiguous(at::MemoryFormat::ChannelsLast) && !weight.is_contiguous();
}

// The problem's layout: NHWC where the input is channels_last. A tensor
// that is both (one channel, or 1x1 pixels: the same bytes either way) is
// NHWC when its weight can only be: `nhwc_weight` says whether the weight
// lies as NHWC needs and NCHW cannot read. convgen_torch.py's fake
// implementations follow the same rule.
convgen::Layout layout_of(const at::Tensor& input, bool nhwc_weight) {
  const bool channels_last = input.dim() == 4 && input.is_contiguous(at::MemoryFormat::ChannelsLast);
  if (channels_last && (!input.is_contiguous() || nhwc_weight)) return convgen::Layout::kNHWC;
  return convgen::Layout::kNCHW;
}

// Where input, weight and output hold the same bytes in either layout
// (one channel or one pixel, 1x1 filters), the layout is a name only: a
// call there runs whichever layout's kernel the library has, so that a
// squeeze-excite layer of a channels_last network finds its NHWC kernel
// (or its NCHW one). The output keeps the memory format layout_of names.
template <class Problem>
void prefer_served_layout(Problem& p, bool same_bytes_either_layout) {
  if (!same_bytes_either_layout || lib::find(p).specialized) return;
  Problem other = p;
  other.layout = p.layout == convgen::Layout::kNHWC ? convgen::Layout::kNCHW : convgen::Layout::kNHWC;
  if (lib::find(other).specialized) p = other;
}

// Whether PyTorch lets its own float32 convolutions round their products to
// TF32 (torch.backends.cudnn.allow_tf32, on by default; since 2.9 also
// torch.backends.cudnn.conv.fp32_precision = "tf32"). The query names the
// operator since 2.9: by a string in 2.9, by at::Float32Op from 2.10.
bool tf32_convolutions_allowed() {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 10)
  return at::globalContext().allowTF32CuDNN(at::Float32Op::CONV);
#elif TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR == 9
  return at::globalContext().allowTF32CuDNN("conv");
#else
  return at::globalContext().allowTF32CuDNN();
#endif
}

// A float32 dense call runs the library's `math: tf32` kernel for its
// problem where PyTorch would run the layer in TF32 itself
// (tf32_convolutions_allowed) and the library has one; otherwise the exact
// float32 kernel, so a call is never less exact than what ATen would run.
// Checked before the layout's preference, which then keeps the math.
void prefer_tf32_where_allowed(convgen::Conv2dProblem& p) {
  if (p.dtype != convgen::DataType::kFloat32 || !tf32_convolutions_allowed()) return;
  convgen::Conv2dProblem tf32 = p;
  tf32.math = convgen::Math::kTF32;
  if (lib::find(tf32).specialized) p = tf32;
}

bool both_layouts(const at::Tensor& t) {
  return t.is_contiguous() && t.is_contiguous(at::MemoryFormat::ChannelsLast);
}

at::MemoryFormat memory_format_of(convgen::Layout layout) {
  return layout == convgen::Layout::kNHWC ? at::MemoryFormat::ChannelsLast : at::MemoryFormat::Contiguous;
}

// Makes the input's GPU the current one while the guard lives: the library
// launches on, and asks the architecture of, the current device, and a
// custom operator gets no device guard of its own (a model on cuda:1).
void use_input_device(c10::cuda::OptionalCUDAGuard& guard, const at::Tensor& input) {
  TORCH_CHECK(input.is_cuda(), "convgen: input must be a CUDA tensor, got ", input.device());
  guard.set_device(input.device());
}

// A tensor of the call beside `input`: on its device, of its dtype.
void check_like_input(const at::Tensor& t, const char* what, const at::Tensor& input) {
  TORCH_CHECK(t.is_cuda(), "convgen: ", what, " must be a CUDA tensor, got ", t.device());
  TORCH_CHECK(t.device() == input.device(), "convgen: ", what, " is on ", t.device(), ", input on ", input.device());
  TORCH_CHECK(t.scalar_type() == input.scalar_type(), "convgen: ", what, " must be ", input.scalar_type(),
              " like the input, got ", t.scalar_type());
}

// The input (on a GPU: use_input_device checked it) laid out as `layout` says.
void check_input(const at::Tensor& input, convgen::Layout layout) {
  TORCH_CHECK(input.dim() == 4, "convgen: input must have 4 dimensions (N, C, H, W), got shape ", input.sizes());
  TORCH_CHECK(input.is_contiguous(memory_format_of(layout)),
              "convgen: input must be contiguous (NCHW) or channels_last (NHWC), got strides ", input.strides());
}

void check_channels(const std::optional<at::Tensor>& t, const char* what, const at::Tensor& input, int64_t channels) {
  if (!t) return;
  check_like_input(*t, what, input);
  TORCH_CHECK(t->dim() == 1 && t->size(0) == channels, "convgen: ", what, " must hold ", channels,
              " values (one per output channel), got shape ", t->sizes());
  TORCH_CHECK(t->is_contiguous(), "convgen: ", what, " must be contiguous");
}

// `value`, the size `what` of a tensor or an argument, as the int a problem
// field holds, or raise naming it and the limit: a problem's fields are
// 32-bit, and validate() bounds each far below int's range (the generic
// column of convgen/limits.h). A value past the limit would otherwise wrap
// into a smaller, valid-looking problem. Values too small (a stride of 0, a
// negative pad) are left for validate() to name.
int narrow(int64_t value, const char* what, const convgen::SizeLimit& limit) {
  TORCH_CHECK(value <= limit.generic, "convgen: ", what, " is ", value, "; at most ", limit.generic, " (",
              limit.quantity, ": ", limit.why_generic, ")");
  TORCH_CHECK(value >= std::numeric_limits<int>::min(), "convgen: ", what, " is ", value,
              ", below the range of a 32-bit int");
  return static_cast<int>(value);
}

// A batch ATen takes and the library cannot: an empty one, or more images
// than a kernel's grid holds (kBatchLimit). Such a call is checked as a
// call of one image, then runs on ATen, counted as a fallback, as the fake
// implementations expect.
bool batch_for_aten(const at::Tensor& input) {
  return input.size(0) == 0 || input.size(0) > convgen::kBatchLimit.generic;
}

// The window and epilogue fields every convolution problem shares.
template <class Problem>
void fill_window(Problem& p, const at::Tensor& input, const at::Tensor& weight, at::IntArrayRef stride,
                 at::IntArrayRef padding, at::IntArrayRef dilation, const std::optional<at::Tensor>& bias,
                 const std::optional<at::Tensor>& scale, const std::optional<at::Tensor>& shift,
                 const std::string& activation) {
  TORCH_CHECK(input.dim() == 4, "convgen: input must have 4 dimensions (N, C, H, W), got shape ", input.sizes());
  TORCH_CHECK(weight.dim() == 4, "convgen: weight must have 4 dimensions, got shape ", weight.sizes());
  TORCH_CHECK(stride.size() == 2 && dilation.size() == 2 && padding.size() == 4,
              "convgen: stride and dilation take 2 values, padding 4 (top, bottom, left, right)");
  TORCH_CHECK(!bias || (!scale && !shift), "convgen: give bias, or scale and shift, not both");
  TORCH_CHECK(scale.has_value() == shift.has_value(), "convgen: scale and shift come together");
  p.n = batch_for_aten(input) ? 1 : narrow(input.size(0), "the batch (input dimension 0)", convgen::kBatchLimit);
  p.c = narrow(input.size(1), "the input channels (input dimension 1)", convgen::kChannelsLimit);
  p.h = narrow(input.size(2), "the input height (input dimension 2)", convgen::kExtentLimit);
  p.w = narrow(input.size(3), "the input width (input dimension 3)", convgen::kExtentLimit);
  p.kh = narrow(weight.size(2), "the filter height (weight dimension 2)", convgen::kFilterLimit);
  p.kw = narrow(weight.size(3), "the filter width (weight dimension 3)", convgen::kFilterLimit);
  p.stride_h = narrow(stride[0], "stride[0]", convgen::kStrideLimit);
  p.stride_w = narrow(stride[1], "stride[1]", convgen::kStrideLimit);
  p.pad_top = narrow(padding[0], "padding[0] (top)", convgen::kPaddingLimit);
  p.pad_bottom = narrow(padding[1], "padding[1] (bottom)", convgen::kPaddingLimit);
  p.pad_left = narrow(padding[2], "padding[2] (left)", convgen::kPaddingLimit);
  p.pad_right = narrow(padding[3], "padding[3] (right)", convgen::kPaddingLimit);
  p.dilation_h = narrow(dilation[0], "dilation[0]", convgen::kDilationLimit);
  p.dilation_w = narrow(dilation[1], "dilation[1]", convgen::kDilationLimit);
  p.epilogue = bias ? convgen::Epilogue::kBias : scale ? convgen::Epilogue::kScaleShift : convgen::Epilogue::kNone;
  p.activation = activation_of(activation);
}

// What ATen computes for the same call, in the memory format convgen's
// kernel would have written: the fallback.
at::Tensor aten_conv(const at::Tensor& input, const at::Tensor& weight, int64_t groups, at::IntArrayRef stride,
                     at::IntArrayRef padding, at::IntArrayRef dilation, const std::optional<at::Tensor>& bias,
                     const std::optional<at::Tensor>& scale, const std::optional<at::Tensor>& shift,
                     const std::optional<at::Tensor>& residual, convgen::Activation activation,
                     at::MemoryFormat memory_format) {
  ++g_fallbacks;
  const at::Tensor padded = at::constant_pad_nd(input, {padding[2], padding[3], padding[0], padding[1]}, 0.0);
  const std::vector<int64_t> no_padding = {0, 0};
  at::Tensor y = at::conv2d(padded, weight, bias, stride, no_padding, dilation, groups);
  if (scale) y = y * scale->view({1, -1, 1, 1}) + shift->view({1, -1, 1, 1});
  if (residual) y = y + *residual;
  switch (activation) {
    case convgen::Activation::kNone: break;
    case convgen::Activation::kRelu: y = at::relu(y); break;
    case convgen::Activation::kRelu6: y = at::clamp(y, 0.0, 6.0); break;
    case convgen::Activation::kSilu: y = at::silu(y); break;
    case convgen::Activation::kHardswish: y = at::hardswish(y); break;
  }
  // An empty output (an empty batch) counts as contiguous in any format and
  // keeps whatever strides the last operation gave it: give it the format's,
  // as the fake implementations do.
  if (y.numel() == 0) return at::empty(y.sizes(), y.options().memory_format(memory_format));
  return y.contiguous(memory_format);
}

// The library's answer: run, fall back, or raise.
bool ran(const convgen::Status& s) {
  if (s.ok()) return true;
  // No kernel for this problem (or its pointers), or one this GPU cannot run
  // (sm_90-only kernels elsewhere, sm_80's on a T4, more shared memory than
  // the GPU gives a block): ATen serves it, counted as a fallback.
  if (s.code == convgen::StatusCode::kNoSpecializedKernel || s.code == convgen::StatusCode::kInvalidPointer ||
      s.code == convgen::StatusCode::kUnsupportedDevice) {
    return false;
  }
  TORCH_CHECK(false, "convgen: ", s.message);
  return false;  // not reached: TORCH_CHECK throws
}

const void* pointer_or_null(const std::optional<at::Tensor>& t) { return t ? t->data_ptr() : nullptr; }

// A call as the library's problem, checked, and the memory format of its
// output (layout_of's: the problem's layout may differ where the bytes are
// the same either way, prefer_served_layout).
template <class Problem>
struct Call {
  Problem problem;
  at::MemoryFormat output_format;
};

// A depthwise call as the library's problem; throws with the reason.
Call<convgen::DepthwiseProblem> depthwise_call(const at::Tensor& input, const at::Tensor& weight,
                                            const std::optional<at::Tensor>& bias,
                                            const std::optional<at::Tensor>& scale,
                                            const std::optional<at::Tensor>& shift, at::IntArrayRef stride,
                                            at::IntArrayRef padding, at::IntArrayRef dilation,
                                            const std::string& activation) {
  convgen::DepthwiseProblem p;
  p.layout = layout_of(input, only_nhwc_depthwise_weight(weight));
  check_input(input, p.layout);
  p.dtype = dtype_of(input);
  check_like_input(weight, "weight", input);
  fill_window(p, input, weight, stride, padding, dilation, bias, scale, shift, activation);
  TORCH_CHECK(p.c >= 1, "convgen: the input has no channels, shape ", input.sizes());
  TORCH_CHECK(weight.size(1) == 1 && weight.size(0) % p.c == 0,
              "convgen: a depthwise weight is [channels x multiplier, 1, kh, kw]; input has ", p.c,
              " channels, weight shape ", weight.sizes());
  if (p.layout == convgen::Layout::kNHWC) {
    TORCH_CHECK(depthwise_nhwc_weight(weight),
                "convgen: with a channels_last input, a depthwise weight [c*m, 1, kh, kw] must view memory laid "
                "out [kh, kw, c*m] (w.permute(2, 3, 0, 1).contiguous().permute(2, 3, 0, 1)), got strides ",
                weight.strides());
  } else {
    TORCH_CHECK(weight.is_contiguous(), "convgen: with a contiguous (NCHW) input, the weight must be contiguous");
  }
  const int out_channels = narrow(weight.size(0), "the output channels (weight dimension 0)", convgen::kOutChannelsLimit);
  p.multiplier = out_channels / p.c;
  check_channels(bias, "bias", input, weight.size(0));
  check_channels(scale, "scale", input, weight.size(0));
  check_channels(shift, "shift", input, weight.size(0));
  const convgen::Status valid = convgen::validate(p);
  TORCH_CHECK(valid.ok(), "convgen: ", valid.message);
  const at::MemoryFormat output_format = memory_format_of(p.layout);
  prefer_served_layout(p, both_layouts(input) && weight.is_contiguous() && depthwise_nhwc_weight(weight) &&
                              (p.out_channels() == 1 || p.out_h() * p.out_w() == 1));
  return {p, output_format};
}

// A conv2d call as the library's problem; throws with the reason.
Call<convgen::Conv2dProblem> conv2d_call(const at::Tensor& input, const at::Tensor& weight,
                                      const std::optional<at::Tensor>& bias, const std::optional<at::Tensor>& scale,
                                      const std::optional<at::Tensor>& shift,
                                      const std::optional<at::Tensor>& residual, at::IntArrayRef stride,
                                      at::IntArrayRef padding, at::IntArrayRef dilation,
                                      const std::string& activation) {
  convgen::Conv2dProblem p;
  p.layout = layout_of(input, only_nhwc_dense_weight(weight));
  check_input(input, p.layout);
  p.dtype = dtype_of(input);
  check_like_input(weight, "weight", input);
  fill_window(p, input, weight, stride, padding, dilation, bias, scale, shift, activation);
  TORCH_CHECK(weight.size(1) == p.c, "convgen: a dense weight is [c_out, c, kh, kw]; input has ", p.c,
              " channels, weight shape ", weight.sizes());
  TORCH_CHECK(weight.is_contiguous(memory_format_of(p.layout)), "convgen: with a ",
              p.layout == convgen::Layout::kNHWC ? "channels_last input, the weight must be channels_last"
                                                 : "contiguous (NCHW) input, the weight must be contiguous",
              ", got strides ", weight.strides());
  p.c_out = narrow(weight.size(0), "c_out (weight dimension 0)", convgen::kOutChannelsLimit);
  p.residual = residual.has_value();
  check_channels(bias, "bias", input, p.c_out);
  check_channels(scale, "scale", input, p.c_out);
  check_channels(shift, "shift", input, p.c_out);
  const convgen::Status valid = convgen::validate(p);
  TORCH_CHECK(valid.ok(), "convgen: ", valid.message);
  if (residual) {
    const std::vector<int64_t> out_shape = {input.size(0), p.c_out, p.out_h(), p.out_w()};
    check_like_input(*residual, "residual", input);
    TORCH_CHECK(residual->sizes() == at::IntArrayRef(out_shape), "convgen: residual must be shaped like the output ",
                at::IntArrayRef(out_shape), ", got ", residual->sizes());
    TORCH_CHECK(residual->is_contiguous(memory_format_of(p.layout)), "convgen: residual must be laid out like the ",
                "output (", p.layout == convgen::Layout::kNHWC ? "channels_last" : "contiguous", "), got strides ",
                residual->strides());
  }
  const at::MemoryFormat output_format = memory_format_of(p.layout);
  prefer_tf32_where_allowed(p);
  prefer_served_layout(p, both_layouts(input) && both_layouts(weight) && (!residual || both_layouts(*residual)) &&
                              (p.c_out == 1 || p.out_h() * p.out_w() == 1));
  return {p, output_format};
}

at::Tensor depthwise_conv2d(const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                            const std::optional<at::Tensor>& scale, const std::optional<at::Tensor>& shift,
                            at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation,
                            const std::string& activation) {
  c10::cuda::OptionalCUDAGuard device_guard;
  use_input_device(device_guard, input);
  const auto [p, memory_format] =
      depthwise_call(input, weight, bias, scale, shift, stride, padding, dilation, activation);
  if (batch_for_aten(input)) {
    return aten_conv(input, weight, p.c, stride, padding, dilation, bias, scale, shift, std::nullopt, p.activation,
                     memory_format);
  }
  const std::vector<int64_t> out_shape = {p.n, p.out_channels(), p.out_h(), p.out_w()};
  at::Tensor out = at::empty(out_shape, input.options().memory_format(memory_format));
  convgen::DepthwiseArgs a;
  a.input = input.data_ptr();
  a.filter = weight.data_ptr();
  a.bias = pointer_or_null(bias);
  a.scale = pointer_or_null(scale);
  a.shift = pointer_or_null(shift);
  a.output = out.data_ptr();
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream(input.device().index()).stream();
  if (ran(lib::depthwise_conv2d(p, a, stream, convgen::Dispatch::kStrict))) return out;
  // ATen reads the weight by its strides: the NHWC view serves as it is.
  return aten_conv(input, weight, p.c, stride, padding, dilation, bias, scale, shift, std::nullopt, p.activation,
                   memory_format);
}

at::Tensor conv2d(const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                  const std::optional<at::Tensor>& scale, const std::optional<at::Tensor>& shift,
                  const std::optional<at::Tensor>& residual, at::IntArrayRef stride, at::IntArrayRef padding,
                  at::IntArrayRef dilation, const std::string& activation) {
  c10::cuda::OptionalCUDAGuard device_guard;
  use_input_device(device_guard, input);
  const auto [p, memory_format] =
      conv2d_call(input, weight, bias, scale, shift, residual, stride, padding, dilation, activation);
  if (batch_for_aten(input)) {
    return aten_conv(input, weight, 1, stride, padding, dilation, bias, scale, shift, residual, p.activation,
                     memory_format);
  }
  const std::vector<int64_t> out_shape = {p.n, p.c_out, p.out_h(), p.out_w()};
  at::Tensor out = at::empty(out_shape, input.options().memory_format(memory_format));
  convgen::Conv2dArgs a;
  a.input = input.data_ptr();
  a.filter = weight.data_ptr();
  a.bias = pointer_or_null(bias);
  a.scale = pointer_or_null(scale);
  a.shift = pointer_or_null(shift);
  a.residual = pointer_or_null(residual);
  a.output = out.data_ptr();
  // The workspace a kernel computes through (winograd_nonfused's), from
  // PyTorch's caching allocator on this stream: freed when this returns,
  // it is reused only by work queued on the stream after this call's.
  at::Tensor workspace;
  if (const std::size_t bytes = lib::find(p).workspace_bytes; bytes > 0) {
    workspace = at::empty({static_cast<int64_t>(bytes)}, input.options().dtype(at::kByte));
    a.workspace = workspace.data_ptr();
    a.workspace_bytes = bytes;
  }
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream(input.device().index()).stream();
  if (ran(lib::conv2d(p, a, stream, convgen::Dispatch::kStrict))) return out;
  return aten_conv(input, weight, 1, stride, padding, dilation, bias, scale, shift, residual, p.activation,
                   memory_format);
}

int64_t fallbacks() { return g_fallbacks.load(); }

// Which kernel serves a call, as the operator decides it, launching
// nothing: "<kernel>: <schedule>" (the schedule its registry holds), or
// "aten: <why>" for a call ATen serves: a batch past the kernels', a problem
// the library has no kernel for, tensors aligned too loosely for its kernel,
// or a GPU the kernel does not run on (the operator's Dispatch::kStrict
// refusals, which send it to ATen). What a caller reads to know which build
// of the library this extension links (integrations/torch/test_torch_rebuild.py),
// and which layers a swap serves.
template <class Problem, class Infos>
std::string explain(const Problem& p, const Infos& kernels, const std::vector<const at::Tensor*>& tensors) {
  const at::Tensor& input = *tensors.front();
  if (batch_for_aten(input)) {
    return "aten: a batch of " + std::to_string(input.size(0)) + " images runs on ATen (kernels take 1 to " +
           std::to_string(convgen::kBatchLimit.generic) + ")";
  }
  const convgen::KernelChoice choice = lib::find(p);
  TORCH_CHECK(choice.status.ok(), "convgen: ", choice.status.message);
  // find()'s reason, up to where it names the generic kernel, which the
  // operators leave to ATen: "library L has no kernel for <problem>", or
  // "kernel K covers at most N images in one launch (...)".
  if (!choice.specialized) return "aten: " + choice.reason.substr(0, choice.reason.find("; "));
  const auto kernel = std::find_if(kernels.begin(), kernels.end(), [&](const auto& k) { return k.name == choice.kernel; });
  TORCH_CHECK(kernel != kernels.end(), "convgen: find() names ", choice.kernel, ", which the library does not list");
  for (const at::Tensor* t : tensors) {
    if (t->defined() && reinterpret_cast<std::uintptr_t>(t->data_ptr()) % kernel->alignment != 0) {
      return "aten: kernel " + kernel->name + " needs every tensor aligned to " + std::to_string(kernel->alignment) +
             " bytes; one of this call's is not";
    }
  }
  if (const convgen::Status here = convgen::runs_on_current_device(*kernel); !here.ok()) {
    return "aten: " + here.message;
  }
  return choice.kernel + ": " + kernel->schedule;
}

std::vector<const at::Tensor*> present(std::initializer_list<const std::optional<at::Tensor>*> optional,
                                       std::vector<const at::Tensor*> tensors) {
  for (const auto* t : optional) {
    if (t->has_value()) tensors.push_back(&**t);
  }
  return tensors;
}

std::string explain_depthwise_conv2d(const at::Tensor& input, const at::Tensor& weight,
                                     const std::optional<at::Tensor>& bias, const std::optional<at::Tensor>& scale,
                                     const std::optional<at::Tensor>& shift, at::IntArrayRef stride,
                                     at::IntArrayRef padding, at::IntArrayRef dilation,
                                     const std::string& activation) {
  c10::cuda::OptionalCUDAGuard device_guard;
  use_input_device(device_guard, input);
  return explain(depthwise_call(input, weight, bias, scale, shift, stride, padding, dilation, activation).problem,
                 lib::depthwise_kernels(), present({&bias, &scale, &shift}, {&input, &weight}));
}

std::string explain_conv2d(const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                           const std::optional<at::Tensor>& scale, const std::optional<at::Tensor>& shift,
                           const std::optional<at::Tensor>& residual, at::IntArrayRef stride,
                           at::IntArrayRef padding, at::IntArrayRef dilation, const std::string& activation) {
  c10::cuda::OptionalCUDAGuard device_guard;
  use_input_device(device_guard, input);
  return explain(
      conv2d_call(input, weight, bias, scale, shift, residual, stride, padding, dilation, activation).problem,
      lib::conv2d_kernels(), present({&bias, &scale, &shift, &residual}, {&input, &weight}));
}

// Under torch.autocast("cuda"), a call runs as ATen's conv2d does there:
// its floating-point CUDA tensors cast to the autocast dtype (cached_cast,
// which also keeps the casts of weights for the autocast region), then the
// operator itself with autocast off. The output is of that dtype, whether
// the library serves the call or ATen does (aten_conv, autocast off too).
at::ScalarType autocast_dtype() {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
  return at::autocast::get_autocast_dtype(at::kCUDA);
#else
  return at::autocast::get_autocast_gpu_dtype();
#endif
}

template <class T>
T autocast(const T& tensor) {
  return at::autocast::cached_cast(autocast_dtype(), tensor, c10::DeviceType::CUDA);
}

at::Tensor depthwise_conv2d_autocast(const at::Tensor& input, const at::Tensor& weight,
                                     const std::optional<at::Tensor>& bias, const std::optional<at::Tensor>& scale,
                                     const std::optional<at::Tensor>& shift, at::IntArrayRef stride,
                                     at::IntArrayRef padding, at::IntArrayRef dilation,
                                     const std::string& activation) {
  static const auto op = c10::Dispatcher::singleton()
                              .findSchemaOrThrow("convgen::depthwise_conv2d", "")
                              .typed<decltype(depthwise_conv2d)>();
  c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::DispatchKey::AutocastCUDA);
  return op.call(autocast(input), autocast(weight), autocast(bias), autocast(scale), autocast(shift), stride, padding,
            dilation, activation);
}

at::Tensor conv2d_autocast(const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                           const std::optional<at::Tensor>& scale, const std::optional<at::Tensor>& shift,
                           const std::optional<at::Tensor>& residual, at::IntArrayRef stride,
                           at::IntArrayRef padding, at::IntArrayRef dilation, const std::string& activation) {
  static const auto op =
      c10::Dispatcher::singleton().findSchemaOrThrow("convgen::conv2d", "").typed<decltype(conv2d)>();
  c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::DispatchKey::AutocastCUDA);
  return op.call(autocast(input), autocast(weight), autocast(bias), autocast(scale), autocast(shift), autocast(residual),
            stride, padding, dilation, activation);
}

// explain_* under autocast: the call's problem and pointers as the
// operator's autocast kernel would pass them on, without casting a value
// (explain launches nothing): a tensor cached_cast would cast (its rule,
// at::autocast::is_eligible) to another dtype is replaced by an empty one
// of the autocast dtype, fresh from the allocator as a cast's result is.
at::Tensor autocast_like(const at::Tensor& t) {
  if (!at::autocast::is_eligible(t, c10::DeviceType::CUDA) || t.scalar_type() == autocast_dtype()) return t;
  return at::empty_like(t, t.options().dtype(autocast_dtype()));
}
std::optional<at::Tensor> autocast_like(const std::optional<at::Tensor>& t) {
  return t ? std::optional<at::Tensor>(autocast_like(*t)) : std::nullopt;
}

std::string explain_depthwise_conv2d_autocast(const at::Tensor& input, const at::Tensor& weight,
                                              const std::optional<at::Tensor>& bias,
                                              const std::optional<at::Tensor>& scale,
                                              const std::optional<at::Tensor>& shift, at::IntArrayRef stride,
                                              at::IntArrayRef padding, at::IntArrayRef dilation,
                                              const std::string& activation) {
  return explain_depthwise_conv2d(autocast_like(input), autocast_like(weight), autocast_like(bias),
                                  autocast_like(scale), autocast_like(shift), stride, padding, dilation, activation);
}

std::string explain_conv2d_autocast(const at::Tensor& input, const at::Tensor& weight,
                                    const std::optional<at::Tensor>& bias, const std::optional<at::Tensor>& scale,
                                    const std::optional<at::Tensor>& shift, const std::optional<at::Tensor>& residual,
                                    at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation,
                                    const std::string& activation) {
  return explain_conv2d(autocast_like(input), autocast_like(weight), autocast_like(bias), autocast_like(scale),
                        autocast_like(shift), autocast_like(residual), stride, padding, dilation, activation);
}

}  // namespace

TORCH_LIBRARY(convgen, m) {
  m.def(
      "depthwise_conv2d(Tensor input, Tensor weight, Tensor? bias, Tensor? scale, Tensor? shift, int[2] stride, "
      "int[4] padding, int[2] dilation, str activation) -> Tensor");
  m.def(
      "conv2d(Tensor input, Tensor weight, Tensor? bias, Tensor? scale, Tensor? shift, Tensor? residual, "
      "int[2] stride, int[4] padding, int[2] dilation, str activation) -> Tensor");
  m.def("fallbacks() -> int", &fallbacks);
  m.def(
      "explain_depthwise_conv2d(Tensor input, Tensor weight, Tensor? bias, Tensor? scale, Tensor? shift, "
      "int[2] stride, int[4] padding, int[2] dilation, str activation) -> str",
      &explain_depthwise_conv2d);
  m.def(
      "explain_conv2d(Tensor input, Tensor weight, Tensor? bias, Tensor? scale, Tensor? shift, Tensor? residual, "
      "int[2] stride, int[4] padding, int[2] dilation, str activation) -> str",
      &explain_conv2d);
}

TORCH_LIBRARY_IMPL(convgen, CUDA, m) {
  m.impl("depthwise_conv2d", &depthwise_conv2d);
  m.impl("conv2d", &conv2d);
}

TORCH_LIBRARY_IMPL(convgen, AutocastCUDA, m) {
  m.impl("depthwise_conv2d", &depthwise_conv2d_autocast);
  m.impl("conv2d", &conv2d_autocast);
  m.impl("explain_depthwise_conv2d", &explain_depthwise_conv2d_autocast);
  m.impl("explain_conv2d", &explain_conv2d_autocast);
}
