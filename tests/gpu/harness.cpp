#include "harness.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
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

// Random multiples of 1/16 in [-1, 1].
std::vector<float> sixteenths(size_t count, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> dist(-16, 16);
  std::vector<float> v(count);
  for (float& x : v) x = static_cast<float>(dist(rng)) / 16.0f;
  return v;
}

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

// Runs one_plane(i) for every i in [0, planes) on up to 16 threads.
template <class F>
void parallel_for(long long planes, const F& one_plane) {
  const int workers = static_cast<int>(std::max(1u, std::min(16u, std::thread::hardware_concurrency())));
  std::vector<std::thread> pool;
  for (int t = 0; t < workers; ++t) {
    pool.emplace_back([&, t] {
      for (long long i = t; i < planes; i += workers) one_plane(i);
    });
  }
  for (auto& th : pool) th.join();
}

// The epilogue, the residual (when present) and the activation, in the order
// the kernels apply them, on one output's sum and its magnitude.
void finish(Epilogue epilogue, Activation activation, double a, double b, const float* residual, double* acc,
            double* abs_acc) {
  *acc = apply_epilogue(epilogue, *acc, a, b);
  *abs_acc = apply_epilogue(epilogue, *abs_acc, std::fabs(a), std::fabs(b));
  if (residual != nullptr) {
    *acc += *residual;
    *abs_acc += std::fabs(*residual);
  }
  *acc = activate(activation, *acc);
  *abs_acc = activation_error_scale(activation, *abs_acc, *acc);
}

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
        finish(p.epilogue, p.activation, epi_a[co], epi_b[co], nullptr, &acc, &abs_acc);
        out[oy * ow + ox] = acc;
        mag[oy * ow + ox] = abs_acc;
      }
    }
  };
  parallel_for(static_cast<long long>(p.n) * oc, one_plane);
  return ref;
}

// The first output index o in [0, out) whose input position o*stride + offset
// is at least 0, and the first past the last whose position is below extent.
void valid_range(int out, int stride, int offset, int extent, int* begin, int* end) {
  int b = 0;
  while (b < out && b * stride + offset < 0) ++b;
  int e = out;
  while (e > b && (e - 1) * stride + offset >= extent) --e;
  *begin = b;
  *end = e;
}

// float64 reference of a dense convolution, parallel over output planes; each
// plane accumulates tap by tap over whole rows, so the inner loop is contiguous.
Reference reference(const Conv2dProblem& p, const std::vector<float>& input, const std::vector<float>& filter,
                    const std::vector<float>& epi_a, const std::vector<float>& epi_b,
                    const std::vector<float>& residual) {
  const int oh = p.out_h(), ow = p.out_w(), oc = p.c_out;
  const size_t plane = static_cast<size_t>(oh) * ow;
  Reference ref;
  ref.value.assign(static_cast<size_t>(p.n) * oc * plane, 0.0);
  ref.magnitude.assign(ref.value.size(), 0.0);
  auto one_plane = [&](long long index) {
    const int n = static_cast<int>(index / oc);
    const int co = static_cast<int>(index % oc);
    double* out = ref.value.data() + static_cast<size_t>(index) * plane;
    double* mag = ref.magnitude.data() + static_cast<size_t>(index) * plane;
    for (int ci = 0; ci < p.c; ++ci) {
      const float* in = input.data() + (static_cast<size_t>(n) * p.c + ci) * p.h * p.w;
      const float* taps = filter.data() + (static_cast<size_t>(co) * p.c + ci) * p.kh * p.kw;
      for (int ky = 0; ky < p.kh; ++ky) {
        int oy_begin, oy_end;
        valid_range(oh, p.stride_h, ky * p.dilation_h - p.pad_top, p.h, &oy_begin, &oy_end);
        for (int kx = 0; kx < p.kw; ++kx) {
          int ox_begin, ox_end;
          valid_range(ow, p.stride_w, kx * p.dilation_w - p.pad_left, p.w, &ox_begin, &ox_end);
          const double tap = taps[ky * p.kw + kx];
          for (int oy = oy_begin; oy < oy_end; ++oy) {
            const long long y = oy * p.stride_h - p.pad_top + ky * p.dilation_h;
            const long long x0 = kx * p.dilation_w - p.pad_left;  // column of output 0, may be negative
            double* acc = out + static_cast<size_t>(oy) * ow;
            double* abs_acc = mag + static_cast<size_t>(oy) * ow;
            for (int ox = ox_begin; ox < ox_end; ++ox) {
              const double term = in[y * p.w + x0 + static_cast<long long>(ox) * p.stride_w] * tap;
              acc[ox] += term;
              abs_acc[ox] += std::fabs(term);
            }
          }
        }
      }
    }
    const float* res = p.residual ? residual.data() + static_cast<size_t>(index) * plane : nullptr;
    for (size_t i = 0; i < plane; ++i) {
      finish(p.epilogue, p.activation, epi_a[co], epi_b[co], res ? res + i : nullptr, &out[i], &mag[i]);
    }
  };
  parallel_for(static_cast<long long>(p.n) * oc, one_plane);
  return ref;
}

std::string cuda_error(cudaError_t e, const char* what) {
  return std::string(what) + ": " + cudaGetErrorString(e);
}

bool upload(const DeviceBuffer& d, const std::vector<float>& host) {
  return cudaMemcpy(d.ptr, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess;
}

// The shape of an output tensor, NCHW, for messages.
struct OutputShape {
  int n, c, h, w;
  size_t count() const { return static_cast<size_t>(n) * c * h * w; }
};

// The part both operators share: poisons the output (NaN) between guard
// words, runs `launch` on it, and checks every element against the reference
// (computed after the launch) with the bound (terms + 2) * 2^-23 * S.
CheckResult launch_and_compare(const OutputShape& shape, double terms, const std::function<Status(float*)>& launch,
                               const std::function<Reference()>& compute_reference) {
  CheckResult result;
  const size_t out_count = shape.count();
  DeviceBuffer d_out(out_count + 2 * kGuard);
  if (!d_out.ptr) {
    result.message = "cudaMalloc failed";
    return result;
  }
  // Poison: all-ones bytes are a NaN, so an element the kernel never writes fails.
  cudaMemset(d_out.ptr + kGuard, 0xff, out_count * sizeof(float));
  std::vector<std::uint32_t> guard(kGuard, kGuardPattern);
  cudaMemcpy(d_out.ptr, guard.data(), kGuard * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(d_out.ptr + kGuard + out_count, guard.data(), kGuard * sizeof(float), cudaMemcpyHostToDevice);

  const Status status = launch(d_out.ptr + kGuard);
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

  const Reference ref = compute_reference();
  const double unit = (terms + 2) * std::ldexp(1.0, -23);
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
  const int ow = shape.w, oh = shape.h;
  for (size_t i = 0; i < out_count; ++i) {
    const double value = got[kGuard + i];
    const double bound = unit * ref.magnitude[i] + 1e-30;
    const double err = std::fabs(value - ref.value[i]);
    if (!(err <= bound)) {  // NaN fails too
      if (reported++ < 5) {
        const size_t plane = static_cast<size_t>(oh) * ow;
        failures << "  output[n=" << i / (plane * shape.c) << ", c=" << (i / plane) % shape.c
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
  std::mt19937_64 rng(seed);
  const size_t in_count = static_cast<size_t>(p.n) * p.c * p.h * p.w;
  const size_t filter_count = static_cast<size_t>(p.out_channels()) * p.kh * p.kw;
  const size_t channels = static_cast<size_t>(p.out_channels());
  const std::vector<float> input = random_vector(in_count, rng, -1.0f, 1.0f);
  const std::vector<float> filter = random_vector(filter_count, rng, -1.0f, 1.0f);
  // Scales straddle zero so that relu and relu6 both clip and pass values.
  const std::vector<float> epi_a = random_vector(channels, rng, -2.0f, 2.0f);
  const std::vector<float> epi_b = random_vector(channels, rng, -1.0f, 3.0f);

  DeviceBuffer d_in(in_count), d_filter(filter_count), d_a(channels), d_b(channels);
  if (!d_in.ptr || !d_filter.ptr || !d_a.ptr || !d_b.ptr) {
    CheckResult result;
    result.message = "cudaMalloc failed";
    return result;
  }
  upload(d_in, input);
  upload(d_filter, filter);
  upload(d_a, epi_a);
  upload(d_b, epi_b);

  auto launch = [&](float* output) {
    DepthwiseArgs args;
    args.input = d_in.ptr;
    args.filter = d_filter.ptr;
    args.output = output;
    if (p.epilogue == Epilogue::kBias) args.bias = d_a.ptr;
    if (p.epilogue == Epilogue::kScaleShift) {
      args.scale = d_a.ptr;
      args.shift = d_b.ptr;
    }
    return run(p, args, nullptr);
  };
  const OutputShape shape{p.n, p.out_channels(), p.out_h(), p.out_w()};
  return launch_and_compare(shape, p.kh * p.kw, launch, [&] { return reference(p, input, filter, epi_a, epi_b); });
}

CheckResult check_problem(const Conv2dProblem& p, const Conv2dRunner& run, std::uint64_t seed) {
  if (p.groups != 1 || p.n < 1 || p.c < 1 || p.c_out < 1 || p.h < 1 || p.w < 1 || p.out_h() < 1 || p.out_w() < 1) {
    CheckResult result;
    result.message = "the harness checks valid dense (groups = 1) problems only: " + describe(p);
    return result;
  }
  std::mt19937_64 rng(seed);
  const size_t in_count = static_cast<size_t>(p.n) * p.c * p.h * p.w;
  const size_t filter_count = static_cast<size_t>(p.c_out) * p.c * p.kh * p.kw;
  const size_t channels = static_cast<size_t>(p.c_out);
  const OutputShape shape{p.n, p.c_out, p.out_h(), p.out_w()};
  // Input and filter are multiples of 1/16 in [-1, 1]: every product is a
  // multiple of 2^-8 and every partial sum of at most 2^16 of them is exact
  // in fp32, in any order. The convolution itself then carries no rounding,
  // and the bound can be tight enough to catch one missed product even when
  // a sum has thousands of them (a bound that grows with c*kh*kw could not).
  const std::vector<float> input = sixteenths(in_count, rng);
  const std::vector<float> filter = sixteenths(filter_count, rng);
  // Scales straddle zero so that relu and relu6 both clip and pass values.
  const std::vector<float> epi_a = random_vector(channels, rng, -2.0f, 2.0f);
  const std::vector<float> epi_b = random_vector(channels, rng, -1.0f, 3.0f);
  const std::vector<float> residual =
      p.residual ? random_vector(shape.count(), rng, -1.0f, 1.0f) : std::vector<float>();

  DeviceBuffer d_in(in_count), d_filter(filter_count), d_a(channels), d_b(channels);
  DeviceBuffer d_res(residual.size());
  if (!d_in.ptr || !d_filter.ptr || !d_a.ptr || !d_b.ptr || (p.residual && !d_res.ptr)) {
    CheckResult result;
    result.message = "cudaMalloc failed";
    return result;
  }
  upload(d_in, input);
  upload(d_filter, filter);
  upload(d_a, epi_a);
  upload(d_b, epi_b);
  if (p.residual) upload(d_res, residual);

  auto launch = [&](float* output) {
    Conv2dArgs args;
    args.input = d_in.ptr;
    args.filter = d_filter.ptr;
    args.output = output;
    if (p.epilogue == Epilogue::kBias) args.bias = d_a.ptr;
    if (p.epilogue == Epilogue::kScaleShift) {
      args.scale = d_a.ptr;
      args.shift = d_b.ptr;
    }
    if (p.residual) args.residual = d_res.ptr;
    return run(p, args, nullptr);
  };
  // The epilogue and residual round a few times; sqrt(c*kh*kw) more units
  // leave room for kernels that transform their operands (a product of
  // exact values is then rounded), while one missed product of about 0.25
  // still exceeds the bound.
  return launch_and_compare(shape, std::sqrt(static_cast<double>(p.c) * p.kh * p.kw) + 2, launch,
                            [&] { return reference(p, input, filter, epi_a, epi_b, residual); });
}

}  // namespace convgen::testing
