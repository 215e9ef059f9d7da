// Problems with more than 2^31 input elements (tests/gpu/hardening.yaml):
// every offset past the 32-bit range must be computed in 64 bits. Each
// problem runs on its specialized kernel (strict dispatch) and on the generic
// kernel, over one 9.2 GB input; whole output planes are checked against a
// float64 reference: the first, one drawn at random and the last two.
//
// The input is a hash of each element's index, computed on the GPU and again
// on the host for the reference, so no 9 GB copy crosses the bus. Input,
// filter and epilogue values are multiples of 1/16, so every convolution sum
// is exact in fp32 and the bound below only covers the epilogue's rounding.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "harness.h"
#include "hardening.h"

namespace {

using convgen::Activation;
using convgen::Conv2dArgs;
using convgen::Conv2dProblem;
using convgen::DepthwiseArgs;
using convgen::DepthwiseProblem;
using convgen::Dispatch;
using convgen::Epilogue;
using convgen::Status;

// 8 x 256 x 1024 x 1100 floats: the largest input of the problems below.
constexpr long long kInputElements = 8LL * 256 * 1024 * 1100;
constexpr long long kOutputElements = kInputElements;  // the largest output too
static_assert(kInputElements > (1LL << 31), "the test is about offsets past 2^31");

// A multiple of 1/16 in [-1, 1], from the element's index (splitmix64).
__host__ __device__ inline float input_value(unsigned long long i) {
  unsigned long long z = i + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<float>(static_cast<int>(z % 33) - 16) / 16.0f;
}

__global__ void fill_input(float* x, long long count) {
  for (long long i = blockIdx.x * 1LL * blockDim.x + threadIdx.x; i < count; i += 1LL * gridDim.x * blockDim.x) {
    x[i] = input_value(static_cast<unsigned long long>(i));
  }
}

std::vector<float> sixteenths(size_t count, std::mt19937_64& rng, int lo, int hi) {
  std::uniform_int_distribution<int> dist(lo, hi);
  std::vector<float> v(count);
  for (float& x : v) x = static_cast<float>(dist(rng)) / 16.0f;
  return v;
}

float* device_copy(const std::vector<float>& host) {
  float* d = nullptr;
  if (cudaMalloc(&d, host.size() * sizeof(float)) != cudaSuccess) return nullptr;
  cudaMemcpy(d, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice);
  return d;
}

// The epilogue and activation on one output's exact sum and its magnitude.
void finish(Epilogue e, Activation act, double a, double b, double* acc, double* mag) {
  if (e == Epilogue::kBias) {
    *acc += a;
    *mag += std::fabs(a);
  } else if (e == Epilogue::kScaleShift) {
    *acc = *acc * a + b;
    *mag = *mag * std::fabs(a) + std::fabs(b);
  }
  if (act == Activation::kRelu) *acc = std::max(*acc, 0.0);
  if (act == Activation::kRelu6) *acc = std::min(std::max(*acc, 0.0), 6.0);
}

// Everything a problem's check needs besides the input: its output shape, a
// reference for one output element, and its two runs.
struct HugeCase {
  std::string name;
  int n, out_c, out_h, out_w;
  std::function<void(int n, int co, int y, int x, double* value, double* magnitude)> reference;
  std::function<Status(float* output)> specialized, generic;
  int terms;  // products in one output's sum
  bool whole_planes;  // check every element of a sampled plane, else sampled pixels of it
};

class HugeTensors : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string why;
    if (!convgen::testing::gpu_available(&why)) {
      skip_reason_ = "no GPU: " + why;
      return;
    }
    size_t free_bytes = 0, total_bytes = 0;
    cudaMemGetInfo(&free_bytes, &total_bytes);
    const double need = (kInputElements + kOutputElements) * 4.0 + (1 << 30);
    if (free_bytes < need) {
      skip_reason_ = "needs " + std::to_string(need / 1e9) + " GB of GPU memory; " +
                     std::to_string(free_bytes / 1e9) + " GB free";
      return;
    }
    if (cudaMalloc(&input_, kInputElements * sizeof(float)) != cudaSuccess ||
        cudaMalloc(&output_, kOutputElements * sizeof(float)) != cudaSuccess) {
      skip_reason_ = "cudaMalloc of the 9.2 GB tensors failed";
      return;
    }
    fill_input<<<4096, 256>>>(input_, kInputElements);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  }
  static void TearDownTestSuite() {
    cudaFree(input_);
    cudaFree(output_);
  }
  void SetUp() override {
    if (!skip_reason_.empty()) GTEST_SKIP() << skip_reason_;
  }

  // Poisons the output, runs, and checks the sampled planes.
  static void check(const HugeCase& c, const std::function<Status(float*)>& run, const char* which,
                    std::mt19937_64& rng) {
    const long long plane = 1LL * c.out_h * c.out_w;
    const long long planes = 1LL * c.n * c.out_c;
    ASSERT_EQ(cudaMemset(output_, 0xff, planes * plane * sizeof(float)), cudaSuccess);  // NaN
    const Status status = run(output_);
    ASSERT_TRUE(status.ok()) << c.name << " (" << which << "): " << status.message;
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << c.name << " (" << which << ")";

    std::vector<long long> sampled = {0, std::uniform_int_distribution<long long>(1, planes - 3)(rng), planes - 2,
                                      planes - 1};
    std::vector<float> got(plane);
    double worst = 0;
    for (long long index : sampled) {
      const int n = static_cast<int>(index / c.out_c), co = static_cast<int>(index % c.out_c);
      ASSERT_EQ(cudaMemcpy(got.data(), output_ + index * plane, plane * sizeof(float), cudaMemcpyDeviceToHost),
                cudaSuccess);
      std::vector<long long> pixels;
      if (c.whole_planes) {
        for (long long p = 0; p < plane; ++p) pixels.push_back(p);
      } else {
        for (long long p = 0; p < std::min<long long>(64, plane); ++p) pixels.push_back(p);
        for (long long p = std::max<long long>(0, plane - 64); p < plane; ++p) pixels.push_back(p);
        for (int k = 0; k < 256; ++k) pixels.push_back(std::uniform_int_distribution<long long>(0, plane - 1)(rng));
      }
      int reported = 0;
      long long bad = 0;
      std::ostringstream failures;
      for (long long p : pixels) {
        const int y = static_cast<int>(p / c.out_w), x = static_cast<int>(p % c.out_w);
        double value = 0, magnitude = 0;
        c.reference(n, co, y, x, &value, &magnitude);
        const double bound = (c.terms + 4) * std::ldexp(1.0, -23) * magnitude + 1e-30;
        const double err = std::fabs(got[p] - value);
        if (!(err <= bound)) {  // NaN (never written) fails too
          if (reported++ < 5) {
            failures << "  output[n=" << n << ", c=" << co << ", y=" << y << ", x=" << x << "] = " << got[p]
                     << ", expected " << value << "\n";
          }
          ++bad;
        } else {
          worst = std::max(worst, err / std::max(magnitude, 1e-30));
        }
      }
      EXPECT_EQ(bad, 0) << c.name << " (" << which << "), plane " << index << " of " << planes << ":\n"
                        << failures.str();
    }
    std::printf("  %-58s %-11s planes 0, %lld, %lld, %lld of %lld: worst |err|/sum|terms| %.2e\n", c.name.c_str(),
                which, sampled[1], sampled[2], sampled[3], planes, worst);
  }

  static void run_case(const HugeCase& c) {
    std::mt19937_64 rng(convgen::testing::test_seed());
    check(c, c.specialized, "specialized", rng);
    check(c, c.generic, "generic", rng);
  }

  static DepthwiseProblem depthwise(int n, int c, int h, int w, int k, Epilogue e, Activation act) {
    DepthwiseProblem p;
    p.n = n, p.c = c, p.h = h, p.w = w, p.kh = p.kw = k;
    p.pad_top = p.pad_bottom = p.pad_left = p.pad_right = (k - 1) / 2;
    p.epilogue = e;
    p.activation = act;
    return p;
  }

  // One problem of either operator: `summed` input channels from
  // first_channel(co) on make output channel co (filter [out_c, summed, kh, kw]).
  template <class Problem, class Args>
  static void run_problem(const Problem& p, int out_c, int summed, int (*first_channel)(const Problem&, int co),
                          Status (*call)(const Problem&, const Args&, cudaStream_t, Dispatch),
                          Status (*generic)(const Problem&, const Args&, cudaStream_t), bool whole_planes) {
    ASSERT_LE(1LL * p.n * p.c * p.h * p.w, kInputElements);
    ASSERT_LE(1LL * p.n * out_c * p.out_h() * p.out_w(), kOutputElements);
    const convgen::KernelChoice choice = convgen::hardening::find(p);
    ASSERT_TRUE(choice.specialized) << choice.reason;
    std::mt19937_64 rng(convgen::testing::test_seed());
    const std::vector<float> filter = sixteenths(static_cast<size_t>(out_c) * summed * p.kh * p.kw, rng, -16, 16);
    const std::vector<float> epi_a = sixteenths(out_c, rng, -32, 32);
    const std::vector<float> epi_b = sixteenths(out_c, rng, -16, 48);
    float* d_filter = device_copy(filter);
    float* d_a = device_copy(epi_a);
    float* d_b = device_copy(epi_b);
    Args args;
    args.input = input_;
    args.filter = d_filter;
    if (p.epilogue == Epilogue::kBias) args.bias = d_a;
    if (p.epilogue == Epilogue::kScaleShift) args.scale = d_a, args.shift = d_b;
    HugeCase c;
    c.name = choice.kernel;
    c.n = p.n, c.out_c = out_c, c.out_h = p.out_h(), c.out_w = p.out_w();
    c.terms = summed * p.kh * p.kw;
    c.whole_planes = whole_planes;
    c.reference = [&](int n, int co, int y, int x, double* value, double* magnitude) {
      double acc = 0, mag = 0;
      for (int j = 0; j < summed; ++j) {
        const unsigned long long base = (1ULL * n * p.c + first_channel(p, co) + j) * p.h * p.w;
        for (int ky = 0; ky < p.kh; ++ky) {
          const int iy = y * p.stride_h - p.pad_top + ky * p.dilation_h;
          if (iy < 0 || iy >= p.h) continue;
          for (int kx = 0; kx < p.kw; ++kx) {
            const int ix = x * p.stride_w - p.pad_left + kx * p.dilation_w;
            if (ix < 0 || ix >= p.w) continue;
            const double term = static_cast<double>(input_value(base + 1ULL * iy * p.w + ix)) *
                                filter[((static_cast<size_t>(co) * summed + j) * p.kh + ky) * p.kw + kx];
            acc += term;
            mag += std::fabs(term);
          }
        }
      }
      finish(p.epilogue, p.activation, epi_a[co], epi_b[co], &acc, &mag);
      *value = acc;
      *magnitude = mag;
    };
    c.specialized = [&](float* out) {
      Args a = args;
      a.output = out;
      return call(p, a, nullptr, Dispatch::kStrict);
    };
    c.generic = [&](float* out) {
      Args a = args;
      a.output = out;
      return generic(p, a, nullptr);
    };
    run_case(c);
    cudaFree(d_filter);
    cudaFree(d_a);
    cudaFree(d_b);
  }

  // Whole planes: kh * kw products an element.
  static void run_depthwise(const DepthwiseProblem& p) {
    run_problem<DepthwiseProblem, DepthwiseArgs>(
        p, p.out_channels(), 1, [](const DepthwiseProblem& q, int co) { return co / q.multiplier; },
        &convgen::hardening::depthwise_conv2d, &convgen::generic_depthwise_conv2d, true);
  }

  // Sampled pixels of each plane: c * kh * kw products an element.
  static void run_conv2d(const Conv2dProblem& p) {
    run_problem<Conv2dProblem, Conv2dArgs>(
        p, p.c_out, p.c, [](const Conv2dProblem&, int) { return 0; }, &convgen::hardening::conv2d,
        &convgen::generic_conv2d, false);
  }

  static Conv2dProblem conv2d(int c_out, int k, Epilogue e, Activation act) {
    Conv2dProblem p;
    p.n = 8, p.c = 256, p.h = 1024, p.w = 1100, p.c_out = c_out, p.kh = p.kw = k;
    p.pad_top = p.pad_bottom = p.pad_left = p.pad_right = (k - 1) / 2;
    p.epilogue = e;
    p.activation = act;
    return p;
  }

  static inline float* input_ = nullptr;
  static inline float* output_ = nullptr;
  static inline std::string skip_reason_;
};

TEST_F(HugeTensors, DepthwiseTiles3x3) {
  run_depthwise(depthwise(8, 256, 1024, 1100, 3, Epilogue::kScaleShift, Activation::kRelu));
}

TEST_F(HugeTensors, DepthwiseWindow7x7) {
  run_depthwise(depthwise(8, 256, 1024, 1100, 7, Epilogue::kBias, Activation::kNone));
}

TEST_F(HugeTensors, DepthwisePlanesRuntimeBatch) {
  run_depthwise(depthwise(43000, 1024, 7, 7, 3, Epilogue::kNone, Activation::kNone));
}

TEST_F(HugeTensors, DepthwiseRowsRuntimeBatch) {
  run_depthwise(depthwise(11000, 256, 28, 28, 3, Epilogue::kNone, Activation::kNone));
}

TEST_F(HugeTensors, DenseGemm1x1) { run_conv2d(conv2d(256, 1, Epilogue::kBias, Activation::kNone)); }

TEST_F(HugeTensors, DenseWinograd3x3) { run_conv2d(conv2d(16, 3, Epilogue::kNone, Activation::kRelu6)); }

TEST_F(HugeTensors, DenseDirect5x5) { run_conv2d(conv2d(16, 5, Epilogue::kScaleShift, Activation::kNone)); }

}  // namespace
