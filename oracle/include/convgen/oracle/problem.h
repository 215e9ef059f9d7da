// The problem the float64 reference computes, in plain numbers: a grouped 2D
// convolution (logical NCHW, weights OIHW) with the epilogue, residual and
// activation the kernels apply, and the data type and layout the kernel's
// tensors are stored in (the reference reads float NCHW copies of the same
// rounded values). An operator describes its workloads as one
// (Operator::reference_problem); the GPU tests describe the runtime's
// problems. The same layout under nvcc, NVRTC and a host compiler: the
// tuner hands it to the reference kernel by value.
#pragma once

#include <convgen/dtype.h>
#include <convgen/epilogue.h>

namespace convgen::oracle {

struct ReferenceProblem {
  int n = 1, c = 0, h = 0, w = 0;        // the input
  int c_out = 0, out_h = 0, out_w = 0;   // the output (n as the input)
  int kh = 0, kw = 0;                    // the filter: c_out x (c / groups) x kh x kw
  // Output channel co reads the c / groups input channels of its group,
  // co / (c_out / groups): 1 for a dense convolution, c for a depthwise one
  // (whose multiplier is then c_out / c).
  int groups = 1;
  int stride_h = 1, stride_w = 1;
  int pad_top = 0, pad_left = 0;
  int dilation_h = 1, dilation_w = 1;
  Epilogue epilogue = Epilogue::kNone;
  bool residual = false;  // a tensor shaped like the output, added before the activation
  Activation activation = Activation::kNone;
  DataType dtype = DataType::kFloat32;  // every tensor's elements
  Layout layout = Layout::kNCHW;        // activations' (and weights') memory order
  Math math = Math::kFloat32;           // how the kernel multiplies float32 operands
  // With NHWC, the filter is [kh, kw, c_out] (a depthwise filter: taps
  // first, the channels side by side), else [c_out, kh, kw, c / groups]
  // (channels_last).
  bool filter_taps_first = false;
  // Input and filter drawn as multiples of 1/16, so that every sum of
  // products is exact in fp32 in any order: the bound then stays tight
  // enough to catch one missed product in a sum of thousands. Otherwise
  // they are uniform in [-1, 1], and the bound grows with the sum's length.
  bool exact_sums = false;
  // The kernel computes through Winograd F(4x4, 3x3) (3x3, stride 1, one
  // group): its transforms round intermediate values far larger than the
  // products (G holds 1/6, 1/12, 1/24), so S is the magnitude of the
  // transformed sum, per input channel |A^T| (|G||g||G^T| o |B^T||d||B|) |A|
  // at the output's place in its 4x4 tile (at least the products' S), and
  // the sum counts as sqrt(36 c) + 16 terms (36 c + 16 with uniform operands).
  bool winograd_f4 = false;
};

}  // namespace convgen::oracle
