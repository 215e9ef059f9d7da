// PyTorch operators over one generated convgen library (torch.library):
//
//   convgen::depthwise_conv2d(Tensor input, Tensor weight, Tensor? bias, Tensor? scale, Tensor? shift,
//                             int[2] stride, int[4] padding, int[2] dilation, str activation) -> Tensor
//   convgen::conv2d(Tensor input, Tensor weight, Tensor? bias, Tensor? scale, Tensor? shift, Tensor? residual,
//                   int[2] stride, int[4] padding, int[2] dilation, str activation) -> Tensor
//   convgen::fallbacks() -> int
//   convgen::explain_depthwise_conv2d(<depthwise_conv2d's arguments>) -> str   (which kernel, its schedule)
//
// padding is [top, bottom, left, right]; the epilogue is `bias`, or `scale`
// and `shift` (a folded batch norm), or neither; activation is none, relu,
// relu6, silu or hardswish. Tensors are CUDA float32, contiguous NCHW;
// anything else raises with the reason. A problem the library has no kernel
// for (or whose pointers are too loosely aligned for it) runs on ATen and is
// counted by fallbacks(). Built by integrations/torch/convgen_torch.py, which
// writes convgen_torch_library.h: the library's header, and the alias
// convgen_torch_library for its namespace.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <torch/library.h>

#include <atomic>
#include <cstdint>
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

void check_tensor(const at::Tensor& t, const char* what, const at::Tensor& input) {
  TORCH_CHECK(t.is_cuda(), "convgen: ", what, " must be a CUDA tensor, got ", t.device());
  TORCH_CHECK(t.device() == input.device(), "convgen: ", what, " is on ", t.device(), ", input on ", input.device());
  TORCH_CHECK(t.scalar_type() == at::kFloat, "convgen: ", what, " must be float32, got ", t.scalar_type());
  TORCH_CHECK(t.is_contiguous(), "convgen: ", what, " must be contiguous (NCHW)");
}

void check_channels(const std::optional<at::Tensor>& t, const char* what, const at::Tensor& input, int64_t channels) {
  if (!t) return;
  check_tensor(*t, what, input);
  TORCH_CHECK(t->dim() == 1 && t->size(0) == channels, "convgen: ", what, " must hold ", channels,
              " values (one per output channel), got shape ", t->sizes());
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

// The window and epilogue fields every convolution problem shares.
template <class Problem>
void fill_window(Problem& p, const at::Tensor& input, const at::Tensor& weight, at::IntArrayRef stride,
                 at::IntArrayRef padding, at::IntArrayRef dilation, const std::optional<at::Tensor>& bias,
                 const std::optional<at::Tensor>& scale, const std::optional<at::Tensor>& shift,
                 const std::string& activation) {
  TORCH_CHECK(input.dim() == 4, "convgen: input must be NCHW (4 dimensions), got shape ", input.sizes());
  TORCH_CHECK(weight.dim() == 4, "convgen: weight must have 4 dimensions, got shape ", weight.sizes());
  TORCH_CHECK(stride.size() == 2 && dilation.size() == 2 && padding.size() == 4,
              "convgen: stride and dilation take 2 values, padding 4 (top, bottom, left, right)");
  TORCH_CHECK(!bias || (!scale && !shift), "convgen: give bias, or scale and shift, not both");
  TORCH_CHECK(scale.has_value() == shift.has_value(), "convgen: scale and shift come together");
  p.n = narrow(input.size(0), "the batch (input dimension 0)", convgen::kBatchLimit);
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

// What ATen computes for the same call: the fallback.
at::Tensor aten_conv(const at::Tensor& input, const at::Tensor& weight, int64_t groups, at::IntArrayRef stride,
                     at::IntArrayRef padding, at::IntArrayRef dilation, const std::optional<at::Tensor>& bias,
                     const std::optional<at::Tensor>& scale, const std::optional<at::Tensor>& shift,
                     const std::optional<at::Tensor>& residual, convgen::Activation activation) {
  ++g_fallbacks;
  const at::Tensor padded = at::constant_pad_nd(input, {padding[2], padding[3], padding[0], padding[1]}, 0.0);
  const std::vector<int64_t> no_padding = {0, 0};
  at::Tensor y = at::conv2d(padded, weight, bias, stride, no_padding, dilation, groups);
  if (scale) y = y * scale->view({1, -1, 1, 1}) + shift->view({1, -1, 1, 1});
  if (residual) y = y + *residual;
  switch (activation) {
    case convgen::Activation::kNone: return y;
    case convgen::Activation::kRelu: return at::relu(y);
    case convgen::Activation::kRelu6: return at::clamp(y, 0.0, 6.0);
    case convgen::Activation::kSilu: return at::silu(y);
    case convgen::Activation::kHardswish: return at::hardswish(y);
  }
  return y;
}

// The library's answer: run, fall back, or raise.
bool ran(const convgen::Status& s) {
  if (s.ok()) return true;
  // No kernel for this problem (or its pointers): ATen serves it.
  if (s.code == convgen::StatusCode::kNoSpecializedKernel || s.code == convgen::StatusCode::kInvalidPointer) {
    return false;
  }
  TORCH_CHECK(false, "convgen: ", s.message);
  return false;  // not reached: TORCH_CHECK throws
}

at::Tensor depthwise_conv2d(const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                            const std::optional<at::Tensor>& scale, const std::optional<at::Tensor>& shift,
                            at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation,
                            const std::string& activation) {
  check_tensor(input, "input", input);
  check_tensor(weight, "weight", input);
  convgen::DepthwiseProblem p;
  fill_window(p, input, weight, stride, padding, dilation, bias, scale, shift, activation);
  TORCH_CHECK(p.c >= 1, "convgen: the input has no channels, shape ", input.sizes());
  TORCH_CHECK(weight.size(1) == 1 && weight.size(0) % p.c == 0,
              "convgen: a depthwise weight is [channels x multiplier, 1, kh, kw]; input has ", p.c,
              " channels, weight shape ", weight.sizes());
  const int out_channels = narrow(weight.size(0), "the output channels (weight dimension 0)", convgen::kOutChannelsLimit);
  p.multiplier = out_channels / p.c;
  check_channels(bias, "bias", input, weight.size(0));
  check_channels(scale, "scale", input, weight.size(0));
  check_channels(shift, "shift", input, weight.size(0));
  const convgen::Status valid = convgen::validate(p);
  TORCH_CHECK(valid.ok(), "convgen: ", valid.message);
  const std::vector<int64_t> out_shape = {p.n, p.out_channels(), p.out_h(), p.out_w()};
  at::Tensor out = at::empty(out_shape, input.options());
  convgen::DepthwiseArgs a;
  a.input = input.data_ptr<float>();
  a.filter = weight.data_ptr<float>();
  a.bias = bias ? bias->data_ptr<float>() : nullptr;
  a.scale = scale ? scale->data_ptr<float>() : nullptr;
  a.shift = shift ? shift->data_ptr<float>() : nullptr;
  a.output = out.data_ptr<float>();
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream(input.device().index()).stream();
  if (ran(lib::depthwise_conv2d(p, a, stream, convgen::Dispatch::kStrict))) return out;
  return aten_conv(input, weight, p.c, stride, padding, dilation, bias, scale, shift, std::nullopt, p.activation);
}

at::Tensor conv2d(const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                  const std::optional<at::Tensor>& scale, const std::optional<at::Tensor>& shift,
                  const std::optional<at::Tensor>& residual, at::IntArrayRef stride, at::IntArrayRef padding,
                  at::IntArrayRef dilation, const std::string& activation) {
  check_tensor(input, "input", input);
  check_tensor(weight, "weight", input);
  convgen::Conv2dProblem p;
  fill_window(p, input, weight, stride, padding, dilation, bias, scale, shift, activation);
  TORCH_CHECK(weight.size(1) == p.c, "convgen: a dense weight is [c_out, c, kh, kw]; input has ", p.c,
              " channels, weight shape ", weight.sizes());
  p.c_out = narrow(weight.size(0), "c_out (weight dimension 0)", convgen::kOutChannelsLimit);
  p.residual = residual.has_value();
  check_channels(bias, "bias", input, p.c_out);
  check_channels(scale, "scale", input, p.c_out);
  check_channels(shift, "shift", input, p.c_out);
  const convgen::Status valid = convgen::validate(p);
  TORCH_CHECK(valid.ok(), "convgen: ", valid.message);
  const std::vector<int64_t> out_shape = {p.n, p.c_out, p.out_h(), p.out_w()};
  if (residual) {
    check_tensor(*residual, "residual", input);
    TORCH_CHECK(residual->sizes() == at::IntArrayRef(out_shape), "convgen: residual must be shaped like the output ",
                at::IntArrayRef(out_shape), ", got ", residual->sizes());
  }
  at::Tensor out = at::empty(out_shape, input.options());
  convgen::Conv2dArgs a;
  a.input = input.data_ptr<float>();
  a.filter = weight.data_ptr<float>();
  a.bias = bias ? bias->data_ptr<float>() : nullptr;
  a.scale = scale ? scale->data_ptr<float>() : nullptr;
  a.shift = shift ? shift->data_ptr<float>() : nullptr;
  a.residual = residual ? residual->data_ptr<float>() : nullptr;
  a.output = out.data_ptr<float>();
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream(input.device().index()).stream();
  if (ran(lib::conv2d(p, a, stream, convgen::Dispatch::kStrict))) return out;
  return aten_conv(input, weight, 1, stride, padding, dilation, bias, scale, shift, residual, p.activation);
}

int64_t fallbacks() { return g_fallbacks.load(); }

// Which kernel serves a depthwise call (the library's KernelChoice), and
// the schedule its registry holds for it: "<kernel>: <schedule>", or
// "<generic kernel>: " when none is made for the problem. Launches nothing.
// What a caller reads to know which build of the library this extension
// links (integrations/torch/test_torch_rebuild.py).
std::string explain_depthwise_conv2d(const at::Tensor& input, const at::Tensor& weight,
                                     const std::optional<at::Tensor>& bias, const std::optional<at::Tensor>& scale,
                                     const std::optional<at::Tensor>& shift, at::IntArrayRef stride,
                                     at::IntArrayRef padding, at::IntArrayRef dilation,
                                     const std::string& activation) {
  convgen::DepthwiseProblem p;
  fill_window(p, input, weight, stride, padding, dilation, bias, scale, shift, activation);
  TORCH_CHECK(p.c > 0 && weight.size(1) == 1 && weight.size(0) % p.c == 0,
              "convgen: a depthwise weight is [channels x multiplier, 1, kh, kw]; weight shape ", weight.sizes());
  p.multiplier =
      narrow(weight.size(0), "the output channels (weight dimension 0)", convgen::kOutChannelsLimit) / p.c;
  const convgen::KernelChoice choice = lib::find(p);
  TORCH_CHECK(choice.status.ok(), "convgen: ", choice.status.message);
  std::string schedule;
  for (const convgen::DepthwiseKernelInfo& k : lib::depthwise_kernels()) {
    if (k.name == choice.kernel) schedule = k.schedule;
  }
  return choice.kernel + ": " + schedule;
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
}

TORCH_LIBRARY_IMPL(convgen, CUDA, m) {
  m.impl("depthwise_conv2d", &depthwise_conv2d);
  m.impl("conv2d", &conv2d);
}
