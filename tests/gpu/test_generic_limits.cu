// The generic kernels at the largest sizes the limits allow
// (convgen/limits.h, the generic column): 2^24 output channels, a side of
// 2^24 with a dilation of 2^23 and as much padding, a reduction of 2^23
// input channels over a 2^31-element input. Each output tensor is poisoned
// (NaN) before the launch, and a sample of its elements is checked against
// a float64 reference: the first and last 64, those around the 2^31 and 2^32
// indices where 32-bit index arithmetic would wrap, and random ones.
//
// Every tensor is a hash of each element's index, made on the GPU and again
// on the host for the reference, so no tensor crosses the bus. Values are
// multiples of 1/16, so products are multiples of 1/256, and fp32 holds
// every partial sum exactly while it stays below 2^16 in magnitude (24
// bits): then the output must equal the reference exactly. The reference
// follows the kernels' order of summation and says whether it did (the sums
// of 2^23 products of mean zero wander near 1,000); a sum that went past
// it gets the usual bound of (terms + 4) ulps of its magnitude. Each case
// skips on a GPU with less free memory than it needs (the largest, 20 GB).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "convgen/convgen.h"
#include "harness.h"

namespace {

using convgen::Conv2dArgs;
using convgen::Conv2dProblem;
using convgen::DepthwiseArgs;
using convgen::DepthwiseProblem;
using convgen::Epilogue;
using convgen::Status;

// Salts: one hash stream per tensor.
constexpr unsigned long long kInputSalt = 0x1234567ull, kFilterSalt = 0x89abcdefull, kBiasSalt = 0x5151ull;

// A multiple of 1/16 in [-1, 1], from the element's index (splitmix64).
__host__ __device__ inline float hashed_value(unsigned long long i, unsigned long long salt) {
  unsigned long long z = i + salt * 0xD1B54A32D192ED03ull + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<float>(static_cast<int>(z % 33) - 16) / 16.0f;
}

__global__ void fill(float* x, long long count, unsigned long long salt) {
  for (long long i = blockIdx.x * 1LL * blockDim.x + threadIdx.x; i < count; i += 1LL * gridDim.x * blockDim.x) {
    x[i] = hashed_value(static_cast<unsigned long long>(i), salt);
  }
}

// Device memory freed when the case ends.
struct DeviceTensors {
  std::vector<float*> all;
  ~DeviceTensors() {
    for (float* p : all) cudaFree(p);
  }
  float* hashed(long long count, unsigned long long salt) {
    float* p = nullptr;
    if (cudaMalloc(&p, count * sizeof(float)) != cudaSuccess) return nullptr;
    all.push_back(p);
    fill<<<4096, 256>>>(p, count, salt);
    return p;
  }
  float* poisoned(long long count) {
    float* p = nullptr;
    if (cudaMalloc(&p, count * sizeof(float)) != cudaSuccess) return nullptr;
    all.push_back(p);
    cudaMemset(p, 0xff, count * sizeof(float));  // NaN
    return p;
  }
};

// The float64 reference of one output: its value, the sum of its terms'
// magnitudes, and the largest magnitude of a partial sum on the way.
struct Reference {
  double value = 0, magnitude = 0, peak = 0;
};

// One problem's check: its output's size, its reference for one output
// element (by flat index), and its run.
struct LimitCase {
  long long outputs = 0;
  int terms = 0;  // products in one output's sum
  std::function<Reference(long long index)> reference;
  std::function<Status(float* output)> run;
  int edge_samples = 64;    // the first and the last this many
  int random_samples = 256;
};

// The flat output indices checked: the first and last `edge`, those around
// 2^31 and 2^32, and `random` drawn ones.
std::vector<long long> sampled_indices(long long outputs, int edge, int random, std::mt19937_64& rng) {
  std::vector<long long> indices;
  for (long long i = 0; i < std::min<long long>(edge, outputs); ++i) indices.push_back(i);
  for (long long i = std::max<long long>(0, outputs - edge); i < outputs; ++i) indices.push_back(i);
  for (long long boundary : {1LL << 31, 1LL << 32}) {
    for (long long i = boundary - 3; i <= boundary + 3; ++i) {
      if (i >= 0 && i < outputs) indices.push_back(i);
    }
  }
  std::uniform_int_distribution<long long> any(0, outputs - 1);
  for (int k = 0; k < random; ++k) indices.push_back(any(rng));
  std::sort(indices.begin(), indices.end());
  indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
  return indices;
}

class GenericLimits : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!convgen::testing::gpu_available(&why)) GTEST_SKIP() << "no GPU: " << why;
  }

  // Skips unless `bytes` of device memory are free (with 1 GB to spare).
  static bool fits(double bytes, std::string* why) {
    size_t free_bytes = 0, total_bytes = 0;
    cudaMemGetInfo(&free_bytes, &total_bytes);
    if (free_bytes >= bytes + 1e9) return true;
    *why = "needs " + std::to_string(bytes / 1e9) + " GB of GPU memory; " + std::to_string(free_bytes / 1e9) +
           " GB free";
    return false;
  }

  static void check(const std::string& name, const LimitCase& c, float* output) {
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << name << ": filling the tensors";
    const Status status = c.run(output);
    ASSERT_TRUE(status.ok()) << name << ": " << status.message;
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << name;
    std::mt19937_64 rng(convgen::testing::test_seed());
    const std::vector<long long> indices = sampled_indices(c.outputs, c.edge_samples, c.random_samples, rng);
    long long bad = 0, exact = 0;
    double worst = 0;
    std::ostringstream failures;
    for (long long index : indices) {
      float got = 0;
      ASSERT_EQ(cudaMemcpy(&got, output + index, sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
      const Reference r = c.reference(index);
      // Exact below 2^16 (multiples of 1/256 in 24 bits); else rounded.
      const bool must_be_exact = r.peak < 65536.0;
      exact += must_be_exact;
      const double bound = must_be_exact ? 0.0 : (c.terms + 4) * std::ldexp(1.0, -23) * r.magnitude;
      const double err = std::fabs(got - r.value);
      if (!(err <= bound)) {  // NaN (never written) fails too
        if (bad++ < 5) {
          failures << "  output[" << index << "] = " << got << ", expected " << r.value
                   << (must_be_exact ? " exactly" : "") << "\n";
        }
      } else {
        worst = std::max(worst, err / std::max(r.magnitude, 1e-30));
      }
    }
    EXPECT_EQ(bad, 0) << name << ": " << bad << " of " << indices.size() << " sampled outputs wrong:\n"
                      << failures.str();
    std::printf("  %-40s %14lld outputs, %4zu sampled (last %lld), %lld exact: worst |err|/sum|terms| %.2e\n",
                name.c_str(), c.outputs, indices.size(), indices.back(), exact, worst);
  }

  // One problem of either operator with a bias, on the generic kernel:
  // output channel co sums `summed` input channels from first_channel(co),
  // with the filter [out_channels, summed, kh, kw].
  template <class Problem, class Args>
  static void run(const std::string& name, const Problem& p, long long out_channels, long long summed,
                  long long (*first_channel)(const Problem&, long long co),
                  Status (*generic)(const Problem&, const Args&, cudaStream_t), int edge_samples,
                  int random_samples) {
    ASSERT_TRUE(convgen::validate(p).ok()) << convgen::validate(p).message;
    const long long inputs = p.n * 1LL * p.c * p.h * p.w;
    const long long taps = 1LL * p.kh * p.kw;
    const long long filters = out_channels * summed * taps;
    const long long outputs = p.n * out_channels * p.out_h() * p.out_w();
    std::string why;
    if (!fits(4.0 * (inputs + filters + outputs + out_channels), &why)) GTEST_SKIP() << why;
    DeviceTensors t;
    Args a;
    a.input = t.hashed(inputs, kInputSalt);
    a.filter = t.hashed(filters, kFilterSalt);
    a.bias = t.hashed(out_channels, kBiasSalt);
    a.output = t.poisoned(outputs);
    ASSERT_TRUE(a.input && a.filter && a.bias && a.output) << "cudaMalloc failed";
    LimitCase c;
    c.outputs = outputs;
    c.terms = static_cast<int>(summed * taps);
    c.edge_samples = edge_samples;
    c.random_samples = random_samples;
    c.reference = [&](long long index) {
      const long long ox = index % p.out_w(), oy = index / p.out_w() % p.out_h();
      const long long co = index / (p.out_w() * p.out_h()) % out_channels;
      const long long n = index / (p.out_w() * p.out_h() * out_channels);
      // In the kernels' order: input channel, then ky, then kx.
      Reference r;
      for (long long j = 0; j < summed; ++j) {
        const long long ci = first_channel(p, co) + j;
        for (long long ky = 0; ky < p.kh; ++ky) {
          const long long y = oy * p.stride_h - p.pad_top + ky * p.dilation_h;
          if (y < 0 || y >= p.h) continue;
          for (long long kx = 0; kx < p.kw; ++kx) {
            const long long x = ox * p.stride_w - p.pad_left + kx * p.dilation_w;
            if (x < 0 || x >= p.w) continue;
            const double term =
                static_cast<double>(hashed_value(((n * p.c + ci) * p.h + y) * p.w + x, kInputSalt)) *
                hashed_value(((co * summed + j) * p.kh + ky) * p.kw + kx, kFilterSalt);
            r.value += term;
            r.magnitude += std::fabs(term);
            r.peak = std::max(r.peak, std::fabs(r.value));
          }
        }
      }
      const double bias = hashed_value(co, kBiasSalt);
      r.value += bias;
      r.magnitude += std::fabs(bias);
      r.peak = std::max(r.peak, std::fabs(r.value));
      return r;
    };
    c.run = [&](float* out) {
      Args run_args = a;
      run_args.output = out;
      return generic(p, run_args, nullptr);
    };
    check(name, c, static_cast<float*>(a.output));
  }

  // Depthwise: kh * kw products an output.
  static void run_depthwise(const std::string& name, const DepthwiseProblem& p) {
    run<DepthwiseProblem, DepthwiseArgs>(
        name, p, p.out_channels(), 1, [](const DepthwiseProblem& q, long long co) { return co / q.multiplier; },
        &convgen::generic_depthwise_conv2d, 64, 256);
  }

  // Dense: c * kh * kw products an output.
  static void run_conv2d(const std::string& name, const Conv2dProblem& p, int edge_samples, int random_samples) {
    run<Conv2dProblem, Conv2dArgs>(
        name, p, p.c_out, p.c, [](const Conv2dProblem&, long long) { return 0LL; }, &convgen::generic_conv2d,
        edge_samples, random_samples);
  }
};

DepthwiseProblem depthwise(int c, int h, int w, int k) {
  DepthwiseProblem p;
  p.c = c, p.h = h, p.w = w, p.kh = p.kw = k;
  p.pad_top = p.pad_bottom = p.pad_left = p.pad_right = (k - 1) / 2;
  p.epilogue = Epilogue::kBias;
  return p;
}

// 2^24 output channels (the limit) from 2 input channels: 4,848,615,424
// outputs (19.4 GB), flat indices past 2^32.
TEST_F(GenericLimits, DepthwiseAtTheOutputChannelLimit) {
  DepthwiseProblem p = depthwise(2, 17, 17, 3);
  p.multiplier = 1 << 23;
  ASSERT_EQ(p.out_channels(), convgen::kOutChannelsLimit.generic);
  run_depthwise("depthwise 2x17x17, multiplier 2^23", p);
}

// A side of 2^24 (the limit) with a dilation of 2^23 and as much padding on
// each side: the output height is 2^24 too (the output extent's limit), and
// every position oy - pad + ky * dilation spans -2^23 .. 2^24 + 2^23.
TEST_F(GenericLimits, DepthwiseAtTheExtentLimitWithHugeDilation) {
  DepthwiseProblem p = depthwise(2, 1 << 24, 8, 3);
  p.dilation_h = 1 << 23;
  p.pad_top = p.pad_bottom = 1 << 23;
  ASSERT_EQ(p.out_h(), convgen::kOutExtentLimit.generic);
  run_depthwise("depthwise 2x2^24x8, dilation_h 2^23", p);
}

// 2^24 output channels (the limit): 2^18 channel tiles, past grid.y's 65535,
// and 2^32 outputs (17.2 GB).
TEST_F(GenericLimits, DenseAtTheOutputChannelLimit) {
  Conv2dProblem p;
  p.c = 2, p.h = p.w = 16, p.c_out = 1 << 24, p.kh = p.kw = 3;
  p.pad_top = p.pad_bottom = p.pad_left = p.pad_right = 1;
  p.epilogue = Epilogue::kBias;
  run_conv2d("conv2d 2x16x16 -> 2^24 channels, 3x3", p, 64, 256);
}

// A reduction of 2^23 input channels over an input of 2^31 elements (8.6 GB):
// input offsets past 2^31. Few samples: each sums 2^23 products on the host.
TEST_F(GenericLimits, DenseLongReductionPast2To31InputElements) {
  Conv2dProblem p;
  p.c = 1 << 23, p.h = p.w = 16, p.c_out = 64, p.kh = p.kw = 1;
  p.epilogue = Epilogue::kBias;
  run_conv2d("conv2d 2^23x16x16 -> 64, 1x1", p, 4, 8);
}

}  // namespace
