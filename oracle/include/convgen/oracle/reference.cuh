// The float64 reference: one thread per output element computes the exact
// sum and the sum of its terms' magnitudes (the scale of a float32 sum's
// rounding), then the epilogue, residual and activation as the kernels
// apply them. nvcc compiles it for the GPU tests (reference_gpu.cu); the
// tuner hands this text to NVRTC. Launch kReferenceBlock threads a block,
// reference_blocks() blocks (oracle.h).
#pragma once

#include <convgen/epilogue.h>
#include <convgen/oracle/problem.h>

// L X L^T for an R x N matrix L and an N x N matrix X.
template <int R, int N>
__device__ void sandwich(const double (&l)[R][N], const double (&x)[N][N], double (&out)[R][R]) {
  double lx[R][N];
  for (int i = 0; i < R; ++i)
    for (int k = 0; k < N; ++k) {
      lx[i][k] = 0;
      for (int m = 0; m < N; ++m) lx[i][k] += l[i][m] * x[m][k];
    }
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < R; ++j) {
      out[i][j] = 0;
      for (int k = 0; k < N; ++k) out[i][j] += lx[i][k] * l[j][k];
    }
}

// The magnitude of an output's Winograd F(4x4, 3x3) sum: over the input
// channels, sum_ij |A^T|[a][i] |A^T|[b][j] (|G||g||G^T|)[i][j] (|B^T||d||B|)[i][j],
// where (a, b) is the output's place in its 4x4 tile and d the tile's 6x6
// input patch (zeros outside the image).
__device__ double winograd_f4_magnitude(const convgen::oracle::ReferenceProblem& p, const float* input,
                                        const float* filter, long long n, int co, int oy, int ox) {
  const double bt[6][6] = {{4, 0, 5, 0, 1, 0}, {0, 4, 4, 1, 1, 0}, {0, 4, 4, 1, 1, 0},
                           {0, 2, 1, 2, 1, 0}, {0, 2, 1, 2, 1, 0}, {0, 4, 0, 5, 0, 1}};
  const double g[6][3] = {{1.0 / 4, 0, 0},          {1.0 / 6, 1.0 / 6, 1.0 / 6}, {1.0 / 6, 1.0 / 6, 1.0 / 6},
                          {1.0 / 24, 1.0 / 12, 1.0 / 6}, {1.0 / 24, 1.0 / 12, 1.0 / 6}, {0, 0, 1}};
  const double at[4][6] = {{1, 1, 1, 1, 1, 0}, {0, 1, 1, 2, 2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, 1, 8, 8, 1}};
  const int a = oy % 4, b = ox % 4;
  const int y0 = oy - a - p.pad_top, x0 = ox - b - p.pad_left;
  double total = 0;
  for (int k = 0; k < p.c; ++k) {
    const float* in = input + (n * p.c + k) * (long long)p.h * p.w;
    const float* taps = filter + ((long long)co * p.c + k) * 9;
    double d[6][6], t[3][3], v[6][6], u[6][6];
    for (int y = 0; y < 6; ++y)
      for (int x = 0; x < 6; ++x) {
        const int iy = y0 + y, ix = x0 + x;
        d[y][x] = iy >= 0 && iy < p.h && ix >= 0 && ix < p.w ? fabs((double)in[(long long)iy * p.w + ix]) : 0.0;
      }
    for (int y = 0; y < 3; ++y)
      for (int x = 0; x < 3; ++x) t[y][x] = fabs((double)taps[y * 3 + x]);
    sandwich(bt, d, v);
    sandwich(g, t, u);
    for (int i = 0; i < 6; ++i)
      for (int j = 0; j < 6; ++j) total += at[a][i] * at[b][j] * u[i][j] * v[i][j];
  }
  return total;
}

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
  if (p.winograd_f4) abs_acc = winograd_f4_magnitude(p, input, filter, n, co, oy, ox);
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
