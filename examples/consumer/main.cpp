// Uses the library generated from my_layers.yaml: asks which kernel serves a
// problem from the spec and one that is not in it, then (when a GPU is
// present) runs the first on random data and checks it against a CPU loop.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "my_layers.h"  // library my_layers: namespace convgen::my_layers

namespace {

convgen::DepthwiseProblem make_problem(int c, int h, int w, int k, int stride) {
  convgen::DepthwiseProblem p;
  p.n = 1;
  p.c = c;
  p.h = h;
  p.w = w;
  p.kh = p.kw = k;
  p.stride_h = p.stride_w = stride;
  p.pad_top = p.pad_bottom = p.pad_left = p.pad_right = (k - 1) / 2;  // `same` for odd k
  return p;
}

void print_choice(const char* label, const convgen::DepthwiseProblem& p) {
  const convgen::KernelChoice k = convgen::my_layers::find(p);
  if (!k.status.ok()) {
    std::printf("%s: invalid problem: %s\n", label, k.status.message.c_str());
    return;
  }
  std::printf("%s: %s\n  kernel: %s (%s)\n  reason: %s\n", label, convgen::describe(p).c_str(), k.kernel.c_str(),
              k.specialized ? "specialized" : "generic", k.reason.c_str());
}

// output[n, c*m + j, oy, ox] = sum_{ky,kx} input[n, c, oy*s - pad + ky*d, ox*s - pad + kx*d] * filter[c*m + j, ky, kx]
std::vector<float> reference(const convgen::DepthwiseProblem& p, const std::vector<float>& in,
                             const std::vector<float>& filter) {
  const int oh = p.out_h(), ow = p.out_w(), oc = p.out_channels();
  std::vector<float> out(static_cast<size_t>(p.n) * oc * oh * ow);
  for (int n = 0; n < p.n; ++n)
    for (int o = 0; o < oc; ++o)
      for (int oy = 0; oy < oh; ++oy)
        for (int ox = 0; ox < ow; ++ox) {
          const int c = o / p.multiplier;
          double acc = 0;
          for (int ky = 0; ky < p.kh; ++ky)
            for (int kx = 0; kx < p.kw; ++kx) {
              const int iy = oy * p.stride_h - p.pad_top + ky * p.dilation_h;
              const int ix = ox * p.stride_w - p.pad_left + kx * p.dilation_w;
              if (iy < 0 || iy >= p.h || ix < 0 || ix >= p.w) continue;
              acc += double(in[((size_t(n) * p.c + c) * p.h + iy) * p.w + ix]) *
                     filter[(size_t(o) * p.kh + ky) * p.kw + kx];
            }
          out[((size_t(n) * oc + o) * oh + oy) * ow + ox] = float(acc);
        }
  return out;
}

bool check_cuda(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
  return false;
}

int run_on_gpu(const convgen::DepthwiseProblem& p) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> in(size_t(p.n) * p.c * p.h * p.w), filter(size_t(p.out_channels()) * p.kh * p.kw);
  for (float& v : in) v = dist(rng);
  for (float& v : filter) v = dist(rng);
  const std::vector<float> want = reference(p, in, filter);
  std::vector<float> got(want.size());

  float *d_in = nullptr, *d_filter = nullptr, *d_out = nullptr;
  if (!check_cuda(cudaMalloc(&d_in, in.size() * sizeof(float)), "cudaMalloc") ||
      !check_cuda(cudaMalloc(&d_filter, filter.size() * sizeof(float)), "cudaMalloc") ||
      !check_cuda(cudaMalloc(&d_out, got.size() * sizeof(float)), "cudaMalloc"))
    return 1;
  if (!check_cuda(cudaMemcpy(d_in, in.data(), in.size() * sizeof(float), cudaMemcpyHostToDevice), "copy in") ||
      !check_cuda(cudaMemcpy(d_filter, filter.data(), filter.size() * sizeof(float), cudaMemcpyHostToDevice),
                  "copy in"))
    return 1;

  convgen::DepthwiseArgs a;
  a.input = d_in;
  a.filter = d_filter;
  a.output = d_out;
  // Strict: fail rather than fall back, to be sure the specialized kernel ran.
  const convgen::Status s = convgen::my_layers::depthwise_conv2d(p, a, /*stream=*/0, convgen::Dispatch::kStrict);
  if (!s.ok()) {
    std::fprintf(stderr, "depthwise_conv2d failed: %s\n", s.message.c_str());
    return 1;
  }
  if (!check_cuda(cudaDeviceSynchronize(), "kernel") ||
      !check_cuda(cudaMemcpy(got.data(), d_out, got.size() * sizeof(float), cudaMemcpyDeviceToHost), "copy back"))
    return 1;
  cudaFree(d_in);
  cudaFree(d_filter);
  cudaFree(d_out);

  double worst = 0;
  size_t worst_at = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double err = std::fabs(double(got[i]) - want[i]) / (1.0 + std::fabs(want[i]));
    if (!(err <= worst)) {  // also catches NaN
      worst = std::isnan(err) ? INFINITY : err;
      worst_at = i;
    }
  }
  const bool ok = worst < 1e-4;
  std::printf("GPU run: %zu outputs, worst relative error %.2e at %zu: %s\n", got.size(), worst, worst_at,
              ok ? "ok" : "MISMATCH");
  return ok ? 0 : 1;
}

}  // namespace

int main() {
  std::printf("library my_layers: %zu specialized kernels\n", convgen::my_layers::depthwise_kernels().size());
  for (const convgen::DepthwiseKernelInfo& k : convgen::my_layers::depthwise_kernels())
    std::printf("  %s  [%s]\n", k.name.c_str(), k.spec_location.c_str());

  const convgen::DepthwiseProblem in_spec = make_problem(32, 56, 56, 3, 1);  // my_layers.yaml's first workload
  const convgen::DepthwiseProblem not_in_spec = make_problem(48, 20, 20, 3, 1);
  print_choice("in the spec", in_spec);
  print_choice("not in the spec", not_in_spec);

  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    cudaGetLastError();  // clear the error of the query
    std::printf("no GPU: skipping the GPU run\n");
    return 0;
  }
  return run_on_gpu(in_spec);
}
