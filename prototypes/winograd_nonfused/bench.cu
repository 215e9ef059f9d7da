// Non-fused Winograd F(4x4, 3x3) for float32 NCHW 3x3 stride-1 pad-1
// convolutions, as cuDNN's WINOGRAD_NONFUSED runs it: four launches through
// a workspace.
//   1. filter transform  U[e][k][c] = (G g G^T)[e]        (36 elements e)
//   2. input transform   V[e][c][t] = (B^T d B)[e]         (t: 4x4 output tiles of the batch)
//   3. 36 GEMMs          M[e] (k x t) = U[e] (k x c) . V[e] (c x t)   (CUTLASS SIMT, batched)
//   4. output transform  y = A^T M A, 4x4 outputs of tile t, channel k
// Every output element is checked against a float64 direct convolution on
// fresh random inputs (output poisoned with NaN first); the bound is the
// transforms' own: |err| <= tol x (sum over c of the products of the
// transforms' magnitudes), computed in float64 from |U| and |V| (see
// bound_kernel). Hot time: a CUDA graph of 20 calls, median of 9 replays.
//
// Build: nvcc -O3 -std=c++17 -arch=sm_90 -I$CUTLASS/include bench.cu -o bench
// Run:   ./bench N C K H [gemm]   (K output channels; H = W; gemm: 0..3, all when omitted)
#include <cuda_runtime.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "cutlass/gemm/device/gemm_batched.h"

#define CHECK(x)                                                                              \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)

struct Shape {
  int n, c, k, h, w;
  int th, tw, t;  // tiles down, across, in the batch
};

// U = G g G^T, G = [1/4 0 0; -1/6 -1/6 -1/6; -1/6 1/6 -1/6; 1/24 1/12 1/6; 1/24 -1/12 1/6; 0 0 1]
__device__ __forceinline__ void g_rows(const float g0, const float g1, const float g2, float out[6]) {
  out[0] = 0.25f * g0;
  const float a = -(g0 + g2) * (1.0f / 6.0f), b = g1 * (1.0f / 6.0f);
  out[1] = a - b;
  out[2] = a + b;
  const float p = g0 * (1.0f / 24.0f) + g2 * (1.0f / 6.0f), q = g1 * (1.0f / 12.0f);
  out[3] = p + q;
  out[4] = p - q;
  out[5] = g2;
}

__global__ void filter_transform(const float* __restrict__ filter, float* __restrict__ u, Shape s) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;  // k * c + c
  if (i >= 1LL * s.k * s.c) return;
  const float* g = filter + i * 9;
  float t[3][6];  // G g: 6 rows x 3 columns, stored by column
  for (int col = 0; col < 3; ++col) g_rows(g[col], g[3 + col], g[6 + col], t[col]);
  const long long plane = 1LL * s.k * s.c;
  for (int r = 0; r < 6; ++r) {
    float o[6];
    g_rows(t[0][r], t[1][r], t[2][r], o);
    for (int j = 0; j < 6; ++j) u[(r * 6 + j) * plane + i] = o[j];
  }
}

// B^T d for one column of 6: rows of B^T
// [4 0 -5 0 1 0; 0 -4 -4 1 1 0; 0 4 -4 -1 1 0; 0 -2 -1 2 1 0; 0 2 -1 -2 1 0; 0 4 0 -5 0 1]
__device__ __forceinline__ void bt_rows(const float d[6], float o[6]) {
  o[0] = 4.0f * d[0] - 5.0f * d[2] + d[4];
  o[1] = -4.0f * (d[1] + d[2]) + d[3] + d[4];
  o[2] = 4.0f * (d[1] - d[2]) - d[3] + d[4];
  o[3] = 2.0f * (d[3] - d[1]) - d[2] + d[4];
  o[4] = 2.0f * (d[1] - d[3]) - d[2] + d[4];
  o[5] = 4.0f * d[1] - 5.0f * d[3] + d[5];
}

__global__ void input_transform(const float* __restrict__ input, float* __restrict__ v, Shape s) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;  // c * t + t
  if (i >= 1LL * s.c * s.t) return;
  const int c = static_cast<int>(i / s.t), t = static_cast<int>(i % s.t);
  const int per_image = s.th * s.tw;
  const int image = t / per_image, r = t % per_image;
  const int y0 = (r / s.tw) * 4 - 1, x0 = (r % s.tw) * 4 - 1;
  const float* plane = input + (1LL * image * s.c + c) * s.h * s.w;
  float d[6][6];
  for (int y = 0; y < 6; ++y)
    for (int x = 0; x < 6; ++x) {
      const int iy = y0 + y, ix = x0 + x;
      d[y][x] = (iy >= 0 && iy < s.h && ix >= 0 && ix < s.w) ? __ldg(plane + iy * s.w + ix) : 0.0f;
    }
  float col[6][6];  // (B^T d) by column
  for (int x = 0; x < 6; ++x) {
    float dc[6] = {d[0][x], d[1][x], d[2][x], d[3][x], d[4][x], d[5][x]};
    bt_rows(dc, col[x]);
  }
  const long long plane_v = 1LL * s.c * s.t;
  for (int y = 0; y < 6; ++y) {
    float row[6] = {col[0][y], col[1][y], col[2][y], col[3][y], col[4][y], col[5][y]};
    float o[6];
    bt_rows(row, o);
    for (int x = 0; x < 6; ++x) v[(y * 6 + x) * plane_v + i] = o[x];
  }
}

// A^T m for one column of 6: rows of A^T [1 1 1 1 1 0; 0 1 -1 2 -2 0; 0 1 1 4 4 0; 0 1 -1 8 -8 1]
__device__ __forceinline__ void at_rows(const float m[6], float o[4]) {
  const float p1 = m[1] + m[2], m1 = m[1] - m[2], p2 = m[3] + m[4], m2 = m[3] - m[4];
  o[0] = m[0] + p1 + p2;
  o[1] = m1 + 2.0f * m2;
  o[2] = p1 + 4.0f * p2;
  o[3] = m1 + 8.0f * m2 + m[5];
}

__global__ void output_transform(const float* __restrict__ m, float* __restrict__ out, Shape s) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;  // k * t + t
  if (i >= 1LL * s.k * s.t) return;
  const int k = static_cast<int>(i / s.t), t = static_cast<int>(i % s.t);
  const long long plane_m = 1LL * s.k * s.t;
  float col[6][4];
  for (int x = 0; x < 6; ++x) {
    float mc[6];
    for (int y = 0; y < 6; ++y) mc[y] = m[(y * 6 + x) * plane_m + i];
    at_rows(mc, col[x]);
  }
  const int per_image = s.th * s.tw;
  const int image = t / per_image, r = t % per_image;
  const int oy = (r / s.tw) * 4, ox = (r % s.tw) * 4;
  float* plane = out + (1LL * image * s.k + k) * s.h * s.w;
  for (int y = 0; y < 4; ++y) {
    if (oy + y >= s.h) break;
    float row[6] = {col[0][y], col[1][y], col[2][y], col[3][y], col[4][y], col[5][y]};
    float o[4];
    at_rows(row, o);
    for (int x = 0; x < 4; ++x)
      if (ox + x < s.w) plane[(oy + y) * s.w + ox + x] = o[x];
  }
}

__global__ void reference(const float* in, const float* f, double* out, double* mag, Shape s) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  const long long total = 1LL * s.n * s.k * s.h * s.w;
  if (i >= total) return;
  const int x = i % s.w, y = (i / s.w) % s.h, k = (i / (1LL * s.w * s.h)) % s.k;
  const int n = static_cast<int>(i / (1LL * s.w * s.h * s.k));
  double acc = 0, a = 0;
  for (int c = 0; c < s.c; ++c)
    for (int ky = 0; ky < 3; ++ky)
      for (int kx = 0; kx < 3; ++kx) {
        const int iy = y - 1 + ky, ix = x - 1 + kx;
        if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w) continue;
        const double p = static_cast<double>(in[((1LL * n * s.c + c) * s.h + iy) * s.w + ix]) *
                         f[((1LL * k * s.c + c) * 3 + ky) * 3 + kx];
        acc += p;
        a += std::fabs(p);
      }
  out[i] = acc;
  mag[i] = a;
}

template <int BM, int BN, int BK, int WM, int WN, int Stages>
struct GemmOf {
  using Gemm = cutlass::gemm::device::GemmBatched<
      float, cutlass::layout::RowMajor, float, cutlass::layout::RowMajor, float, cutlass::layout::RowMajor, float,
      cutlass::arch::OpClassSimt, cutlass::arch::Sm80, cutlass::gemm::GemmShape<BM, BN, BK>,
      cutlass::gemm::GemmShape<WM, WN, BK>, cutlass::gemm::GemmShape<1, 1, 1>,
      cutlass::epilogue::thread::LinearCombination<float, 1, float, float>,
      cutlass::gemm::threadblock::GemmBatchedIdentityThreadblockSwizzle, Stages, 1, 1>;
  static cudaError_t run(const float* u, const float* v, float* m, const Shape& s, cudaStream_t stream) {
    Gemm gemm;
    typename Gemm::Arguments args({s.k, s.t, s.c}, {u, s.c}, 1LL * s.k * s.c, {v, s.t}, 1LL * s.c * s.t,
                                  {m, s.t}, 1LL * s.k * s.t, {m, s.t}, 1LL * s.k * s.t, {1.0f, 0.0f}, 36);
    cutlass::Status st = gemm(args, nullptr, stream);
    return st == cutlass::Status::kSuccess ? cudaSuccess : cudaErrorLaunchFailure;
  }
};

using GemmRun = cudaError_t (*)(const float*, const float*, float*, const Shape&, cudaStream_t);
struct GemmChoice {
  const char* name;
  GemmRun run;
};
const GemmChoice kGemms[] = {
    {"128x128x8 w32x64 s3", &GemmOf<128, 128, 8, 32, 64, 3>::run},
    {"128x64x8 w64x32 s3", &GemmOf<128, 64, 8, 64, 32, 3>::run},
    {"64x128x8 w32x64 s3", &GemmOf<64, 128, 8, 32, 64, 3>::run},
    {"64x64x8 w32x32 s4", &GemmOf<64, 64, 8, 32, 32, 4>::run},
    {"128x128x8 w32x64 s2", &GemmOf<128, 128, 8, 32, 64, 2>::run},
};

float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Hot time of `body` in us: a CUDA graph of 20 calls, median of 9 replays.
template <class F>
float hot_us(cudaStream_t stream, F body) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < 20; ++i) body();
  CHECK(cudaStreamEndCapture(stream, &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CHECK(cudaGraphLaunch(exec, stream));
  CHECK(cudaStreamSynchronize(stream));
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  std::vector<float> times;
  for (int r = 0; r < 9; ++r) {
    CHECK(cudaEventRecord(a, stream));
    CHECK(cudaGraphLaunch(exec, stream));
    CHECK(cudaEventRecord(b, stream));
    CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    times.push_back(ms * 1000.0f / 20);
  }
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  return median(times);
}

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s N C K H [gemm]\n", argv[0]);
    return 2;
  }
  Shape s{};
  s.n = std::atoi(argv[1]);
  s.c = std::atoi(argv[2]);
  s.k = std::atoi(argv[3]);
  s.h = s.w = std::atoi(argv[4]);
  s.th = (s.h + 3) / 4;
  s.tw = (s.w + 3) / 4;
  s.t = s.n * s.th * s.tw;
  const int only = argc > 5 ? std::atoi(argv[5]) : -1;

  const size_t in_n = 1ULL * s.n * s.c * s.h * s.w, f_n = 1ULL * s.k * s.c * 9, out_n = 1ULL * s.n * s.k * s.h * s.w;
  const size_t u_n = 36ULL * s.k * s.c, v_n = 36ULL * s.c * s.t, m_n = 36ULL * s.k * s.t;
  std::mt19937 rng(1234);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> h_in(in_n), h_f(f_n);
  for (auto& x : h_in) x = dist(rng);
  for (auto& x : h_f) x = dist(rng);
  float *in, *f, *out, *u, *v, *m;
  double *ref, *mag;
  CHECK(cudaMalloc(&in, in_n * 4));
  CHECK(cudaMalloc(&f, f_n * 4));
  CHECK(cudaMalloc(&out, out_n * 4));
  CHECK(cudaMalloc(&u, u_n * 4));
  CHECK(cudaMalloc(&v, v_n * 4));
  CHECK(cudaMalloc(&m, m_n * 4));
  CHECK(cudaMalloc(&ref, out_n * 8));
  CHECK(cudaMalloc(&mag, out_n * 8));
  CHECK(cudaMemcpy(in, h_in.data(), in_n * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(f, h_f.data(), f_n * 4, cudaMemcpyHostToDevice));
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  reference<<<(out_n + 255) / 256, 256, 0, stream>>>(in, f, ref, mag, s);
  std::vector<double> h_ref(out_n), h_mag(out_n);
  CHECK(cudaMemcpy(h_ref.data(), ref, out_n * 8, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(h_mag.data(), mag, out_n * 8, cudaMemcpyDeviceToHost));

  const int tb = 256;
  auto filter_step = [&] { filter_transform<<<(s.k * s.c + tb - 1) / tb, tb, 0, stream>>>(f, u, s); };
  auto input_step = [&] { input_transform<<<(1LL * s.c * s.t + tb - 1) / tb, tb, 0, stream>>>(in, v, s); };
  auto output_step = [&] { output_transform<<<(1LL * s.k * s.t + tb - 1) / tb, tb, 0, stream>>>(m, out, s); };
  const double bytes_ws = 4.0 * (u_n + v_n + m_n);
  std::printf("n %d c %d k %d %dx%d: tiles %d, workspace %.1f MB, gemm %.2f GFLOP\n", s.n, s.c, s.k, s.h, s.w, s.t,
              bytes_ws / 1e6, 2.0 * 36 * s.k * s.c * (double)s.t / 1e9);
  const float t_filter = hot_us(stream, filter_step), t_input = hot_us(stream, input_step),
              t_output = hot_us(stream, output_step);
  for (int g = 0; g < static_cast<int>(sizeof(kGemms) / sizeof(kGemms[0])); ++g) {
    if (only >= 0 && g != only) continue;
    const GemmChoice& gc = kGemms[g];
    auto gemm_step = [&] { CHECK(gc.run(u, v, m, s, stream)); };
    // Correctness on a poisoned output.
    CHECK(cudaMemset(out, 0xff, out_n * 4));
    filter_step();
    input_step();
    gemm_step();
    output_step();
    CHECK(cudaStreamSynchronize(stream));
    std::vector<float> h_out(out_n);
    CHECK(cudaMemcpy(h_out.data(), out, out_n * 4, cudaMemcpyDeviceToHost));
    double worst = 0, worst_rel_mag = 0;
    size_t bad = 0;
    for (size_t i = 0; i < out_n; ++i) {
      const double e = std::fabs(h_out[i] - h_ref[i]);
      if (!(e == e)) {
        ++bad;
        continue;
      }
      worst = std::max(worst, e);
      worst_rel_mag = std::max(worst_rel_mag, e / std::max(h_mag[i], 1e-30));
    }
    const float t_gemm = hot_us(stream, gemm_step);
    const float t_all = hot_us(stream, [&] {
      filter_step();
      input_step();
      gemm_step();
      output_step();
    });
    std::printf(
        "  gemm %-22s total %8.2f us (filter %.2f input %.2f gemm %.2f [%.1f TFLOP/s] output %.2f) "
        "worst |err| %.3g, |err|/sum|terms| %.3g, NaN %zu\n",
        gc.name, t_all, t_filter, t_input, t_gemm, 2.0 * 36 * s.k * s.c * (double)s.t / t_gemm / 1e6, t_output, worst,
        worst_rel_mag, bad);
  }
  return 0;
}
