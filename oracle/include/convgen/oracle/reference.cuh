// The float64 reference: one thread per output element computes the exact
// sum and the sum of its terms' magnitudes (the scale of a float32 sum's
// rounding), then the epilogue, residual and activation as the kernels
// apply them. nvcc compiles it for the GPU tests (reference_gpu.cu); the
// tuner hands this text to NVRTC. Launch kReferenceBlock threads a block,
// reference_blocks() blocks (oracle.h).
#pragma once

#include <convgen/epilogue.h>
#include <convgen/oracle/problem.h>

extern "C" __global__ void convgen_reference(convgen::oracle::ReferenceProblem p, const float* input,
                                             const float* filter, const float* ea, const float* eb,
                                             const float* residual, double* value, double* magnitude) {
  const long long plane = (long long)p.out_h * p.out_w;
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= p.n * (long long)p.c_out * plane) return;
  const int ox = (int)(i % p.out_w), oy = (int)(i / p.out_w % p.out_h), co = (int)(i / plane % p.c_out);
  const long long n = i / (plane * p.c_out);
  const int group_in = p.c / p.groups, group_out = p.c_out / p.groups;
  const int ci_begin = co / group_out * group_in;
  double acc = 0, abs_acc = 0;
  for (int k = 0; k < group_in; ++k) {
    const float* in = input + (n * p.c + ci_begin + k) * (long long)p.h * p.w;
    const float* taps = filter + ((long long)co * group_in + k) * p.kh * p.kw;
    for (int ky = 0; ky < p.kh; ++ky) {
      const int y = oy * p.stride_h - p.pad_top + ky * p.dilation_h;
      if (y < 0 || y >= p.h) continue;
      for (int kx = 0; kx < p.kw; ++kx) {
        const int x = ox * p.stride_w - p.pad_left + kx * p.dilation_w;
        if (x < 0 || x >= p.w) continue;
        const double t = (double)in[(long long)y * p.w + x] * (double)taps[ky * p.kw + kx];
        acc += t;
        abs_acc += fabs(t);
      }
    }
  }
  const double ea_co = p.epilogue == convgen::Epilogue::kNone ? 0.0 : ea[co];
  const double eb_co = p.epilogue == convgen::Epilogue::kScaleShift ? eb[co] : 0.0;
  acc = convgen::apply_epilogue(p.epilogue, acc, ea_co, eb_co);
  abs_acc = convgen::apply_epilogue(p.epilogue, abs_acc, fabs(ea_co), fabs(eb_co));
  if (p.residual) {
    acc += residual[i];
    abs_acc += fabs((double)residual[i]);
  }
  acc = convgen::activate(p.activation, acc);
  abs_acc = convgen::activation_error_scale(p.activation, abs_acc, acc);
  value[i] = acc;
  magnitude[i] = abs_acc;
}
