#include "harness.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <thread>
#include <vector>

namespace convgen::testing {

namespace {

// Guard words on each side of the output catch writes past its ends.
constexpr size_t kGuard = 1024;
constexpr std::uint32_t kGuardPattern = 0x7fc0dead;  // a quiet NaN no kernel computes

struct DeviceBuffer {
  float* ptr = nullptr;
  explicit DeviceBuffer(size_t count) {
    if (count > 0 && cudaMalloc(&ptr, count * sizeof(float)) != cudaSuccess) ptr = nullptr;
  }
  ~DeviceBuffer() { cudaFree(ptr); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

std::vector<float> random_vector(size_t count, std::mt19937_64& rng, float lo, float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(count);
  for (float& x : v) x = dist(rng);
  return v;
}

struct Reference {
  std::vector<double> value;
  std::vector<double> magnitude;  // sum of |terms|, the scale of rounding error
};

// float64 reference, parallel over output planes.
Reference reference(const DepthwiseProblem& p, const std::vector<float>& input, const std::vector<float>& filter,
                    const std::vector<float>& epi_a, const std::vector<float>& epi_b) {
  const int oh = p.out_h(), ow = p.out_w(), oc = p.out_channels();
  const size_t plane = static_cast<size_t>(oh) * ow;
  Reference ref;
  ref.value.resize(static_cast<size_t>(p.n) * oc * plane);
  ref.magnitude.resize(ref.value.size());
  auto one_plane = [&](long long index) {
    const int n = static_cast<int>(index / oc);
    const int co = static_cast<int>(index % oc);
    const int ci = co / p.multiplier;
    const float* in = input.data() + (static_cast<size_t>(n) * p.c + ci) * p.h * p.w;
    const float* taps = filter.data() + static_cast<size_t>(co) * p.kh * p.kw;
    double* out = ref.value.data() + static_cast<size_t>(index) * plane;
    double* mag = ref.magnitude.data() + static_cast<size_t>(index) * plane;
    for (int oy = 0; oy < oh; ++oy) {
      for (int ox = 0; ox < ow; ++ox) {
        double acc = 0, abs_acc = 0;
        for (int ky = 0; ky < p.kh; ++ky) {
          const int y = oy * p.stride_h - p.pad_top + ky * p.dilation_h;
          if (y < 0 || y >= p.h) continue;
          for (int kx = 0; kx < p.kw; ++kx) {
            const int x = ox * p.stride_w - p.pad_left + kx * p.dilation_w;
            if (x < 0 || x >= p.w) continue;
            const double term = static_cast<double>(in[y * p.w + x]) * taps[ky * p.kw + kx];
            acc += term;
            abs_acc += std::fabs(term);
          }
        }
        if (p.epilogue == Epilogue::kBias) {
          acc += epi_a[co];
          abs_acc += std::fabs(epi_a[co]);
        } else if (p.epilogue == Epilogue::kScaleShift) {
          acc = acc * epi_a[co] + epi_b[co];
          abs_acc = abs_acc * std::fabs(epi_a[co]) + std::fabs(epi_b[co]);
        }
        if (p.activation == Activation::kRelu) acc = std::max(acc, 0.0);
        if (p.activation == Activation::kRelu6) acc = std::min(std::max(acc, 0.0), 6.0);
        out[oy * ow + ox] = acc;
        mag[oy * ow + ox] = abs_acc;
      }
    }
  };
  const long long planes = static_cast<long long>(p.n) * oc;
  const int workers = static_cast<int>(std::max(1u, std::min(16u, std::thread::hardware_concurrency())));
  std::vector<std::thread> pool;
  for (int t = 0; t < workers; ++t) {
    pool.emplace_back([&, t] {
      for (long long i = t; i < planes; i += workers) one_plane(i);
    });
  }
  for (auto& th : pool) th.join();
  return ref;
}

std::string cuda_error(cudaError_t e, const char* what) {
  return std::string(what) + ": " + cudaGetErrorString(e);
}

}  // namespace

std::uint64_t test_seed() {
  if (const char* env = std::getenv("CONVGEN_TEST_SEED")) return std::strtoull(env, nullptr, 10);
  return std::random_device{}();
}

bool gpu_available(std::string* why) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    if (why) *why = e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device found";
    return false;
  }
  return true;
}

CheckResult check_problem(const DepthwiseProblem& p, const Runner& run, std::uint64_t seed) {
  CheckResult result;
  std::mt19937_64 rng(seed);
  const size_t in_count = static_cast<size_t>(p.n) * p.c * p.h * p.w;
  const size_t out_count = static_cast<size_t>(p.n) * p.out_channels() * p.out_h() * p.out_w();
  const size_t filter_count = static_cast<size_t>(p.out_channels()) * p.kh * p.kw;
  const size_t channels = static_cast<size_t>(p.out_channels());
  const std::vector<float> input = random_vector(in_count, rng, -1.0f, 1.0f);
  const std::vector<float> filter = random_vector(filter_count, rng, -1.0f, 1.0f);
  // Scales straddle zero so that relu and relu6 both clip and pass values.
  const std::vector<float> epi_a = random_vector(channels, rng, -2.0f, 2.0f);
  const std::vector<float> epi_b = random_vector(channels, rng, -1.0f, 3.0f);

  DeviceBuffer d_in(in_count), d_filter(filter_count), d_a(channels), d_b(channels);
  DeviceBuffer d_out(out_count + 2 * kGuard);
  if (!d_in.ptr || !d_filter.ptr || !d_a.ptr || !d_b.ptr || !d_out.ptr) {
    result.message = "cudaMalloc failed";
    return result;
  }
  cudaMemcpy(d_in.ptr, input.data(), in_count * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(d_filter.ptr, filter.data(), filter_count * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(d_a.ptr, epi_a.data(), channels * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(d_b.ptr, epi_b.data(), channels * sizeof(float), cudaMemcpyHostToDevice);
  // Poison: all-ones bytes are a NaN, so an element the kernel never writes fails.
  cudaMemset(d_out.ptr + kGuard, 0xff, out_count * sizeof(float));
  std::vector<std::uint32_t> guard(kGuard, kGuardPattern);
  cudaMemcpy(d_out.ptr, guard.data(), kGuard * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(d_out.ptr + kGuard + out_count, guard.data(), kGuard * sizeof(float), cudaMemcpyHostToDevice);

  DepthwiseArgs args;
  args.input = d_in.ptr;
  args.filter = d_filter.ptr;
  args.output = d_out.ptr + kGuard;
  if (p.epilogue == Epilogue::kBias) args.bias = d_a.ptr;
  if (p.epilogue == Epilogue::kScaleShift) {
    args.scale = d_a.ptr;
    args.shift = d_b.ptr;
  }
  const Status status = run(p, args, nullptr);
  if (!status.ok()) {
    result.message = std::string("launch failed: ") + status.message;
    return result;
  }
  if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess) {
    result.message = cuda_error(e, "kernel failed");
    return result;
  }
  std::vector<float> got(out_count + 2 * kGuard);
  cudaMemcpy(got.data(), d_out.ptr, got.size() * sizeof(float), cudaMemcpyDeviceToHost);

  const Reference ref = reference(p, input, filter, epi_a, epi_b);
  const int taps = p.kh * p.kw;
  const double unit = (taps + 2) * std::ldexp(1.0, -23);
  std::ostringstream failures;
  int reported = 0;
  for (size_t g = 0; g < kGuard; ++g) {
    std::uint32_t before, after;
    std::memcpy(&before, &got[g], 4);
    std::memcpy(&after, &got[kGuard + out_count + g], 4);
    if (before != kGuardPattern || after != kGuardPattern) {
      failures << "  wrote outside the output (guard word " << g << ")\n";
      ++result.bad_elements;
      break;
    }
  }
  const int ow = p.out_w(), oh = p.out_h();
  for (size_t i = 0; i < out_count; ++i) {
    const double value = got[kGuard + i];
    const double bound = unit * ref.magnitude[i] + 1e-30;
    const double err = std::fabs(value - ref.value[i]);
    if (!(err <= bound)) {  // NaN fails too
      if (reported++ < 5) {
        const size_t plane = static_cast<size_t>(oh) * ow;
        failures << "  output[n=" << i / (plane * p.out_channels()) << ", c=" << (i / plane) % p.out_channels()
                 << ", y=" << (i % plane) / ow << ", x=" << i % ow << "] = " << value << ", expected "
                 << ref.value[i] << " (bound " << bound << ")\n";
      }
      ++result.bad_elements;
    }
    if (std::isfinite(value)) result.max_rel_error = std::max(result.max_rel_error, err / std::max(ref.magnitude[i], 1e-30));
  }
  result.elements = static_cast<long long>(out_count);
  result.passed = result.bad_elements == 0;
  if (!result.passed) {
    result.message = std::to_string(result.bad_elements) + " of " + std::to_string(out_count) +
                     " elements wrong:\n" + failures.str();
  }
  return result;
}

}  // namespace convgen::testing
