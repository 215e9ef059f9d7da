// dwcheck: every float32 kernel of the bench library (convgen::bench, the
// spec the benchmark was built from) against the runtime's generic kernel,
// on random inputs, at the batch the spec declared. The benchmark run with
// --no-cudnn checks nothing; this is the check of a forced schedule.
//
// Build (dwsweep.sh does it):
//   nvcc -std=c++17 -O2 -arch=sm_90 prototypes/depthwise_nhwc_sweep/dwcheck.cu -I runtime/include \
//        -I BUILD/bench/convgen_bench.convgen BUILD/bench/libconvgen_bench.a BUILD/libconvgen_runtime.a -o dwcheck
// Run: dwcheck [--all] (default: float32 NHWC kernels only; --all: every float32 kernel).
// Prints one line a kernel: its name, schedule, largest |difference| over
// the largest |reference| and ok / MISMATCH; exits 1 on any mismatch (or
// an output element left unwritten: outputs are poisoned with NaN first).
#include "bench.h"

#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

namespace {

#define CHECK_CUDA(call)                                                                               \
  do {                                                                                                  \
    cudaError_t e = (call);                                                                             \
    if (e != cudaSuccess) {                                                                             \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e));      \
      std::exit(2);                                                                                     \
    }                                                                                                   \
  } while (0)

struct Buffer {
  float* p = nullptr;
  size_t n = 0;
  explicit Buffer(size_t count) : n(count) { CHECK_CUDA(cudaMalloc(&p, n * sizeof(float) + 16)); }
  Buffer(const std::vector<float>& v) : Buffer(v.size()) {
    CHECK_CUDA(cudaMemcpy(p, v.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  }
  ~Buffer() { cudaFree(p); }
  std::vector<float> download() const {
    std::vector<float> v(n);
    CHECK_CUDA(cudaMemcpy(v.data(), p, n * sizeof(float), cudaMemcpyDeviceToHost));
    return v;
  }
};

std::vector<float> random_values(size_t n, float lo, float hi, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  const bool all = argc > 1 && std::strcmp(argv[1], "--all") == 0;
  const double limit = 1e-4;  // of the largest |reference| output, as the benchmark's check against cuDNN
  std::mt19937 rng(2024);
  int checked = 0, failed = 0;
  for (const convgen::DepthwiseKernelInfo& k : convgen::bench::depthwise_kernels()) {
    convgen::DepthwiseProblem p = k.problem;
    if (p.dtype != convgen::DataType::kFloat32) continue;
    if (!all && p.layout != convgen::Layout::kNHWC) continue;
    if (p.n <= 0) p.n = 2;  // a runtime batch
    const size_t in = size_t(p.n) * p.c * p.h * p.w;
    const size_t out = size_t(p.n) * p.out_channels() * p.out_h() * p.out_w();
    const size_t filt = size_t(p.out_channels()) * p.kh * p.kw;
    Buffer input(random_values(in, -1.f, 1.f, rng)), filter(random_values(filt, -1.f, 1.f, rng));
    Buffer a(random_values(size_t(p.out_channels()), 0.5f, 1.5f, rng));
    Buffer b(random_values(size_t(p.out_channels()), -0.5f, 0.5f, rng));
    Buffer special(out), reference(out);
    convgen::DepthwiseArgs args;
    args.input = input.p;
    args.filter = filter.p;
    if (p.epilogue == convgen::Epilogue::kBias) args.bias = a.p;
    if (p.epilogue == convgen::Epilogue::kScaleShift) args.scale = a.p, args.shift = b.p;
    CHECK_CUDA(cudaMemset(special.p, 0xFF, out * sizeof(float)));  // NaN: an unwritten element fails
    CHECK_CUDA(cudaMemset(reference.p, 0xFF, out * sizeof(float)));
    args.output = special.p;
    const convgen::Status s1 = convgen::bench::depthwise_conv2d(p, args, nullptr, convgen::Dispatch::kStrict);
    args.output = reference.p;
    const convgen::Status s2 = convgen::generic_depthwise_conv2d(p, args, nullptr);
    CHECK_CUDA(cudaDeviceSynchronize());
    ++checked;
    if (!s1.ok() || !s2.ok()) {
      std::printf("%-52s %s: ERROR %s / %s\n", k.name.c_str(), k.schedule.c_str(), s1.message.c_str(),
                  s2.message.c_str());
      ++failed;
      continue;
    }
    const std::vector<float> x = special.download(), r = reference.download();
    double largest = 0, diff = 0;
    size_t bad = 0;
    for (size_t i = 0; i < out; ++i) {
      largest = std::fmax(largest, std::fabs(double(r[i])));
      const double d = std::fabs(double(x[i]) - double(r[i]));
      if (!(d == d)) {
        ++bad;  // NaN: unwritten or garbage
      } else {
        diff = std::fmax(diff, d);
      }
    }
    const double rel = largest > 0 ? diff / largest : diff;
    const bool ok = bad == 0 && rel <= limit;
    if (!ok) ++failed;
    std::printf("%-52s %-62s max rel err %.2e%s %s\n", k.name.c_str(), k.schedule.c_str(), rel,
                bad ? (" (" + std::to_string(bad) + " NaN)").c_str() : "", ok ? "ok" : "MISMATCH");
  }
  std::printf("dwcheck: %d kernel(s) checked against the generic kernel, %d mismatch(es)\n", checked, failed);
  return failed ? 1 : 0;
}
