// convgen_bench_dense: times the dense conv2d kernels of bench/dense_bench.yaml
// beside cuDNN, on the same GPU in the same run, for every row of bench/dense.csv.
//
// Per row it measures
//   - the convgen kernel for the row (with its fused epilogue), hot and cold;
//   - the same convolution without epilogue through convgen, hot;
//   - the row's epilogue with a residual add fused, through convgen, hot;
//   - cuDNN's fastest fp32 (FMA, no TF32) algorithm for the convolution alone,
//     hot and cold, and checks that its output matches convgen's;
//   - a device-to-device copy of as many bytes as the row moves, cold;
//   - when the program was built with a tuning database (CMake:
//     CONVGEN_BENCH_DENSE_TUNING, which defines CONVGEN_BENCH_DENSE_HAS_TUNED),
//     the row's kernel of the same spec built with the database applied
//     (library bench_dense_tuned), hot and cold on the same buffers, its
//     schedule beside the default one, and its output checked as the
//     default's is (against cuDNN + the epilogue) and against the default
//     kernel's output;
// and reports each against the roofline: the larger of the row's bytes at the
// copy ceiling and its FLOPs at the fp32 peak, both measured at start-up (the
// peak by an SGEMM without TF32). See --help for the options.
#include "bench_common.h"
#include "bench_dense.h"  // generated from bench/dense_bench.yaml: namespace convgen::bench_dense
#if defined(CONVGEN_BENCH_DENSE_HAS_TUNED)
#include "bench_dense_tuned.h"  // the same spec, tuning database applied: namespace convgen::bench_dense_tuned
#endif

#include <convgen/convgen.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

namespace {

using namespace bench_common;

void check_cublas(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    fail(file, line, std::string(call) + " failed: " + cublasGetStatusName(status) + ": " +
                         cublasGetStatusString(status));
  }
}
#define CUBLAS_CHECK(call) check_cublas((call), #call, __FILE__, __LINE__)

constexpr int kPeakTrials = 10;

// ---------------------------------------------------------------------------
// Command line.

struct Options : CommonOptions {
  std::string csv_path = "bench/dense.csv";
  std::string sgemm_math = "default";  // cuBLAS math mode of the peak SGEMM: default | pedantic
  int sgemm_size = 8192;
};

Options parse_options(int argc, char** argv) {
  Options options;
  CLI::App app{"Times convgen dense conv2d kernels beside cuDNN for each row of a benchmark CSV.",
               "convgen_bench_dense"};
  app.add_option("--csv", options.csv_path,
                 "benchmark CSV (suite,n,c_in,c_out,h,w,kh,kw,stride,pad,epilogue)")
      ->capture_default_str();
  add_common_options(app, options);
  app.add_option("--sgemm-math", options.sgemm_math,
                 "cuBLAS math mode of the fp32-peak SGEMM: 'default' (CUBLAS_DEFAULT_MATH) or 'pedantic'\n"
                 "(CUBLAS_PEDANTIC_MATH); neither uses TF32")
      ->capture_default_str()
      ->check(CLI::IsMember({"default", "pedantic"}));
  app.add_option("--sgemm-size", options.sgemm_size, "M = N = K of the fp32-peak SGEMM")
      ->capture_default_str()
      ->check(CLI::Range(256, 32768));
  app.footer(
      "Timing: 'hot' = --hot-launches launches captured in one CUDA graph, replayed after a warm-up;\n"
      "median replay time / launches (L2 warm, no launch gaps). 'cold' = a 256 MiB memset flushes L2\n"
      "before every run (--flush read: a read of it), cudaEvents around the kernel alone; median of --trials runs.\n"
      "floor_us = bytes the problem must move (input + filter + output + epilogue parameters) at the\n"
      "copy ceiling (1 GiB device-to-device copy, bytes read + written, measured in the same run).\n"
      "fp32 peak = cublasSgemm of --sgemm-size^3 without TF32 (--sgemm-math), measured in the same run.\n"
      "flops = 2 * N * C_out * OH * OW * C_in * KH * KW; tflops = flops / convgen hot time.\n"
      "roofline_us = max(floor_us, flops / fp32 peak); *_frac_roofline = roofline_us / cold time;\n"
      "*_frac_ceiling = floor_us / cold time. The cuDNN columns time the convolution alone (legacy API,\n"
      "fastest algorithm of cudnnFindConvolutionForwardAlgorithmEx under CUDNN_FMA_MATH); the check accepts a\n"
      "max relative error (to the largest output) of 1e-4, 1e-3 where cuDNN chose a Winograd or FFT algorithm.\n"
      "copy_cold_us: cudaMemcpyAsync of half the row's bytes (reads + writes = the row's), cold.\n"
      "Tuned (when built with CONVGEN_BENCH_DENSE_TUNING): the row's kernel from the same spec built with the\n"
      "tuning database applied, timed the same way on the same buffers; tuned_speedup_hot = convgen hot / tuned\n"
      "hot. Its output must match cuDNN + epilogue as the default's does, and the default kernel's output within a\n"
      "max relative error (to the largest output) of 1e-5; a row that fails either makes the program exit 1.\n"
      "Environment: CONVGEN_COMMIT is written to the JSON as 'commit'.");
  parse_or_exit(app, argc, argv);
  return options;
}

// ---------------------------------------------------------------------------
// Benchmark CSV.

// One row of the CSV, as written there.
struct BenchCase {
  std::string suite;
  int csv_line = 0;
  int n = 0, c_in = 0, c_out = 0, h = 0, w = 0, kh = 0, kw = 0, stride = 0;
  std::string pad;       // "same" or "valid"
  std::string epilogue;  // e.g. "scale_shift_relu6"
};

// Reads the benchmark CSV; columns are found by their header names.
std::vector<BenchCase> read_cases(const std::string& path) {
  const std::vector<std::string> columns = {"suite", "n",  "c_in",   "c_out", "h",       "w",
                                            "kh",    "kw", "stride", "pad",   "epilogue"};
  std::vector<BenchCase> cases;
  for_each_csv_row(path, columns, [&](int line_number, const std::vector<std::string>& fields) {
    auto number = [&](int i) { return parse_positive(fields[i], columns[i].c_str(), path, line_number); };
    BenchCase row;
    row.suite = fields[0];
    row.csv_line = line_number;
    row.n = number(1);
    row.c_in = number(2);
    row.c_out = number(3);
    row.h = number(4);
    row.w = number(5);
    row.kh = number(6);
    row.kw = number(7);
    row.stride = number(8);
    row.pad = fields[9];
    row.epilogue = fields[10];
    if (row.pad != "same" && row.pad != "valid") {
      fail_csv(path, line_number, "pad must be 'same' or 'valid', not '" + row.pad + "'");
    }
    if (!find_epilogue(row.epilogue)) fail_csv(path, line_number, "unknown epilogue '" + row.epilogue + "'");
    cases.push_back(row);
  });
  return cases;
}

// ---------------------------------------------------------------------------
// Problems.

convgen::Conv2dProblem to_problem(const BenchCase& row) {
  convgen::Conv2dProblem problem;
  problem.n = row.n;
  problem.c = row.c_in;
  problem.c_out = row.c_out;
  problem.h = row.h;
  problem.w = row.w;
  problem.kh = row.kh;
  problem.kw = row.kw;
  problem.stride_h = problem.stride_w = row.stride;
  // "same": (k-1)/2 on every side, as PyTorch's padding=k//2 for odd k.
  const bool same = row.pad == "same";
  problem.pad_top = problem.pad_bottom = same ? (row.kh - 1) / 2 : 0;
  problem.pad_left = problem.pad_right = same ? (row.kw - 1) / 2 : 0;
  const EpilogueName* epilogue = find_epilogue(row.epilogue);
  problem.epilogue = epilogue->epilogue;
  problem.activation = epilogue->activation;
  problem.residual = false;
  return problem;
}

bool has_epilogue(const convgen::Conv2dProblem& problem) {
  return problem.epilogue != convgen::Epilogue::kNone || problem.activation != convgen::Activation::kNone ||
         problem.residual;
}

// The same convolution with nothing after it: what cuDNN computes.
convgen::Conv2dProblem without_epilogue(convgen::Conv2dProblem problem) {
  problem.epilogue = convgen::Epilogue::kNone;
  problem.activation = convgen::Activation::kNone;
  problem.residual = false;
  return problem;
}

// The row's epilogue with a residual tensor added before the activation.
convgen::Conv2dProblem with_residual(convgen::Conv2dProblem problem) {
  problem.residual = true;
  return problem;
}

size_t input_count(const convgen::Conv2dProblem& p) { return size_t(p.n) * p.c * p.h * p.w; }
size_t filter_count(const convgen::Conv2dProblem& p) {
  return size_t(p.c_out) * (p.c / p.groups) * p.kh * p.kw;
}
size_t output_count(const convgen::Conv2dProblem& p) { return size_t(p.n) * p.c_out * p.out_h() * p.out_w(); }
size_t epilogue_param_count(const convgen::Conv2dProblem& p) {
  switch (p.epilogue) {
    case convgen::Epilogue::kBias:
      return size_t(p.c_out);
    case convgen::Epilogue::kScaleShift:
      return 2 * size_t(p.c_out);
    case convgen::Epilogue::kNone:
      break;
  }
  return 0;
}

// Everything the problem must read once and write once (the residual, when
// it has one, is read once more).
size_t bytes_moved(const convgen::Conv2dProblem& p) {
  const size_t residual = p.residual ? output_count(p) : 0;
  return (input_count(p) + filter_count(p) + output_count(p) + epilogue_param_count(p) + residual) *
         sizeof(float);
}

// Multiply-adds of the direct convolution, counted as two FLOPs each.
double flop_count(const convgen::Conv2dProblem& p) {
  return 2.0 * double(output_count(p)) * double(p.c / p.groups) * p.kh * p.kw;
}

// tbps * 1e6 is bytes per microsecond; tflops * 1e6 FLOPs per microsecond.
double floor_us(const convgen::Conv2dProblem& p, double ceiling_tbps) {
  return double(bytes_moved(p)) / (ceiling_tbps * 1e6);
}
double compute_floor_us(const convgen::Conv2dProblem& p, double peak_tflops) {
  return flop_count(p) / (peak_tflops * 1e6);
}

std::string shape_text(const convgen::Conv2dProblem& p) {
  return std::to_string(p.n) + "x" + std::to_string(p.c) + "x" + std::to_string(p.h) + "x" +
         std::to_string(p.w);
}

// ---------------------------------------------------------------------------
// Operands.

// The inputs of one row (its residual variant included), on the device; the
// epilogue parameters and the residual also on the host, for the reference.
struct Operands {
  DeviceBuffer input, filter, bias, scale, shift, residual;
  std::vector<float> host_bias, host_scale, host_shift, host_residual;
};

Operands make_operands(const convgen::Conv2dProblem& problem, uint64_t seed) {
  Operands ops;
  ops.input = DeviceBuffer::upload(random_uniform(input_count(problem), seed));
  ops.filter = DeviceBuffer::upload(random_uniform(filter_count(problem), seed + 1));
  const size_t channels = size_t(problem.c_out);
  if (problem.epilogue == convgen::Epilogue::kBias) {
    ops.host_bias = random_uniform(channels, seed + 2);
    ops.bias = DeviceBuffer::upload(ops.host_bias);
  } else if (problem.epilogue == convgen::Epilogue::kScaleShift) {
    ops.host_scale = random_uniform(channels, seed + 3);
    ops.host_shift = random_uniform(channels, seed + 4);
    ops.scale = DeviceBuffer::upload(ops.host_scale);
    ops.shift = DeviceBuffer::upload(ops.host_shift);
  }
  ops.host_residual = random_uniform(output_count(problem), seed + 5);
  ops.residual = DeviceBuffer::upload(ops.host_residual);
  // The uploads ran on the legacy default stream, which the non-blocking
  // stream the kernels run on does not wait for.
  CUDA_CHECK(cudaDeviceSynchronize());
  return ops;
}

// Pointers for `problem`; those it does not use stay null, as the API requires.
convgen::Conv2dArgs make_args(const convgen::Conv2dProblem& problem, const Operands& ops,
                              const DeviceBuffer& output) {
  convgen::Conv2dArgs args;
  args.input = ops.input.f32();
  args.filter = ops.filter.f32();
  args.output = output.f32();
  if (problem.epilogue == convgen::Epilogue::kBias) args.bias = ops.bias.f32();
  if (problem.epilogue == convgen::Epilogue::kScaleShift) {
    args.scale = ops.scale.f32();
    args.shift = ops.shift.f32();
  }
  if (problem.residual) args.residual = ops.residual.f32();
  return args;
}

// ---------------------------------------------------------------------------
// The fp32 peak: an SGEMM without TF32.

// Fills `data` with values in [-1, 1) from a hash of the index: random
// enough that the GEMM does real work (zeros can run faster), and on the
// device, so that 2 x 256 MiB need no host generation and upload.
__global__ void fill_hashed(float* data, size_t count, uint32_t seed) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count; i += size_t{gridDim.x} * blockDim.x) {
    uint32_t x = uint32_t(i) * 0x9e3779b9u ^ seed;
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    data[i] = float(x >> 8) * (2.0f / 16777216.0f) - 1.0f;
  }
}

struct Fp32Peak {
  double tflops = kNaN;
  std::string method;
  int cublas_version = 0;
};

Fp32Peak measure_fp32_peak(Stopwatch& stopwatch, const Options& options) {
  const int size = options.sgemm_size;
  const size_t count = size_t(size) * size;
  const DeviceBuffer a = DeviceBuffer::floats(count), b = DeviceBuffer::floats(count),
                     c = DeviceBuffer::floats(count);
  fill_hashed<<<1024, 256, 0, stopwatch.stream()>>>(a.f32(), count, 1u);
  fill_hashed<<<1024, 256, 0, stopwatch.stream()>>>(b.f32(), count, 2u);
  CUDA_CHECK(cudaGetLastError());

  cublasHandle_t handle = nullptr;
  CUBLAS_CHECK(cublasCreate(&handle));
  CUBLAS_CHECK(cublasSetStream(handle, stopwatch.stream()));
  const bool pedantic = options.sgemm_math == "pedantic";
  // Neither mode uses TF32: that takes CUBLAS_TF32_TENSOR_OP_MATH.
  CUBLAS_CHECK(cublasSetMathMode(handle, pedantic ? CUBLAS_PEDANTIC_MATH : CUBLAS_DEFAULT_MATH));
  Fp32Peak peak;
  CUBLAS_CHECK(cublasGetVersion(handle, &peak.cublas_version));

  const float alpha = 1.0f, beta = 0.0f;
  const Launch sgemm = [&](cudaStream_t) {
    CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, size, size, size, &alpha, a.f32(), size, b.f32(),
                             size, &beta, c.f32(), size));
  };
  stopwatch.time_runs_ms(sgemm, 2, false);  // warm-up: picks the kernel, raises the clocks
  const double ms = median(stopwatch.time_runs_ms(sgemm, kPeakTrials, false));
  CUBLAS_CHECK(cublasDestroy(handle));

  peak.tflops = 2.0 * double(size) * size * size / (ms * 1e-3) / 1e12;
  const std::string n = std::to_string(size);
  peak.method = "cublasSgemm " + n + "x" + n + "x" + n + ", " +
                (pedantic ? "CUBLAS_PEDANTIC_MATH" : "CUBLAS_DEFAULT_MATH") +
                " (fp32 FMA, no TF32), median of " + std::to_string(kPeakTrials) + " runs, L2 warm";
  return peak;
}

// ---------------------------------------------------------------------------
// cuDNN: the convolution alone.

// cuDNN pads each axis symmetrically; a problem padded otherwise has no cuDNN twin.
bool cudnn_supports(const convgen::Conv2dProblem& p) {
  return p.pad_top == p.pad_bottom && p.pad_left == p.pad_right;
}

CudnnConvShape cudnn_shape(const convgen::Conv2dProblem& p) {
  CudnnConvShape s;
  s.n = p.n;
  s.c = p.c;
  s.h = p.h;
  s.w = p.w;
  s.k = p.c_out;
  s.kh = p.kh;
  s.kw = p.kw;
  s.pad_h = p.pad_top;
  s.pad_w = p.pad_left;
  s.stride_h = p.stride_h;
  s.stride_w = p.stride_w;
  s.dilation_h = p.dilation_h;
  s.dilation_w = p.dilation_w;
  s.groups = p.groups;
  s.out_h = p.out_h();
  s.out_w = p.out_w();
  s.description = convgen::describe(p);
  return s;
}

// ---------------------------------------------------------------------------
// The tuned library: the same spec built with a tuning database applied.
// Without it (no CONVGEN_BENCH_DENSE_HAS_TUNED) nothing below is called.

#if defined(CONVGEN_BENCH_DENSE_HAS_TUNED)
constexpr bool kHasTuned = true;
const char* const kTuningDb = CONVGEN_BENCH_DENSE_HAS_TUNED_DB;

convgen::KernelChoice tuned_find(const convgen::Conv2dProblem& problem) {
  return convgen::bench_dense_tuned::find(problem);
}

Launch tuned_launch(const convgen::Conv2dProblem& problem, const convgen::Conv2dArgs& args) {
  return [problem, args](cudaStream_t stream) {
    CONVGEN_CHECK(convgen::bench_dense_tuned::conv2d(problem, args, stream));
  };
}

const std::vector<convgen::Conv2dKernelInfo>& tuned_kernels() { return convgen::bench_dense_tuned::conv2d_kernels(); }
#else
constexpr bool kHasTuned = false;
const char* const kTuningDb = "";

convgen::KernelChoice tuned_find(const convgen::Conv2dProblem&) { return {}; }

Launch tuned_launch(const convgen::Conv2dProblem&, const convgen::Conv2dArgs&) {
  return [](cudaStream_t) { fail(__FILE__, __LINE__, "no tuned library was linked"); };
}

const std::vector<convgen::Conv2dKernelInfo>& tuned_kernels() {
  static const std::vector<convgen::Conv2dKernelInfo> none;
  return none;
}
#endif


// ---------------------------------------------------------------------------
// Cross-check.

// cuDNN's Winograd and FFT algorithms compute through transforms that round
// differently from a direct sum (errors grow with the tile); they get a looser
// limit than the direct and GEMM algorithms, which sum products as convgen does.
double relative_error_limit(const std::string& cudnn_algo) {
  const bool transformed = cudnn_algo.rfind("WINOGRAD", 0) == 0 || cudnn_algo.rfind("FFT", 0) == 0;
  return transformed ? 10 * kMaxRelativeError : kMaxRelativeError;
}

// `conv` (cuDNN's output) with the problem's epilogue (and residual) applied on the host.
std::vector<float> apply_epilogue(std::vector<float> conv, const convgen::Conv2dProblem& p, const Operands& ops) {
  const size_t plane = size_t(p.out_h()) * p.out_w();
  for (size_t i = 0; i < conv.size(); ++i) {
    const size_t channel = (i / plane) % size_t(p.c_out);
    float value = apply_affine(conv[i], p.epilogue, channel, ops.host_bias, ops.host_scale, ops.host_shift);
    if (p.residual) value += ops.host_residual[i];
    conv[i] = apply_activation(value, p.activation);
  }
  return conv;
}

// ---------------------------------------------------------------------------
// One benchmark row.

// A row selected for the run, with the kernels that will serve it.
struct Selected {
  BenchCase bench;
  convgen::Conv2dProblem problem;
  convgen::KernelChoice choice;           // for the row
  convgen::KernelChoice plain_choice;     // for the row without epilogue
  convgen::KernelChoice residual_choice;  // for the row with a residual add
  // With the tuned library: its kernel for the row, and both kernels' schedules.
  convgen::KernelChoice tuned_choice;
  std::string schedule, tuned_schedule;
};

// A selected row and what was measured for it; NaN: not measured.
struct RowResult : Selected {
  explicit RowResult(const Selected& selected) : Selected(selected) {}

  double floor_us = kNaN, roofline_us = kNaN, flops = kNaN;
  double convgen_hot_us = kNaN, convgen_cold_us = kNaN, convgen_noepilogue_hot_us = kNaN;
  double convgen_residual_hot_us = kNaN;
  double cudnn_hot_us = kNaN, cudnn_cold_us = kNaN;
  double copy_cold_us = kNaN;
  std::string cudnn_algo;              // empty: cuDNN not run
  double max_rel_err = kNaN;           // convgen without epilogue vs cuDNN
  double fused_max_rel_err = kNaN;     // the row's kernel vs cuDNN + the epilogue on the host
  double residual_max_rel_err = kNaN;  // the residual kernel vs cuDNN + epilogue + residual on the host
  double check_limit = kNaN;           // the largest relative error the check accepts
  bool check_ok = true;                // false: a cross-check failed

  // The tuned library's kernel for the row (measured only when it is linked).
  double tuned_hot_us = kNaN, tuned_cold_us = kNaN;
  double tuned_max_rel_err = kNaN;             // vs cuDNN + the epilogue on the host, as fused_max_rel_err
  double tuned_vs_default_max_rel_err = kNaN;  // vs the default kernel's output
  bool tuned_check_ok = true;                  // false: a check of the tuned output failed

  bool cudnn_ran() const { return !cudnn_algo.empty(); }
  double tflops() const { return flops / (convgen_hot_us * 1e6); }
  double cudnn_tflops() const { return flops / (cudnn_hot_us * 1e6); }
  double convgen_frac_ceiling() const { return floor_us / convgen_cold_us; }
  double cudnn_frac_ceiling() const { return floor_us / cudnn_cold_us; }
  double convgen_frac_roofline() const { return roofline_us / convgen_cold_us; }
  double cudnn_frac_roofline() const { return roofline_us / cudnn_cold_us; }
  double copy_frac_ceiling() const { return floor_us / copy_cold_us; }
  double speedup_vs_cudnn() const { return cudnn_hot_us / convgen_hot_us; }
  double fused_plain_ratio() const { return convgen_hot_us / convgen_noepilogue_hot_us; }
  double residual_plain_ratio() const { return convgen_residual_hot_us / convgen_noepilogue_hot_us; }
  double tuned_tflops() const { return flops / (tuned_hot_us * 1e6); }
  double tuned_frac_roofline() const { return roofline_us / tuned_cold_us; }
  double tuned_speedup_hot() const { return convgen_hot_us / tuned_hot_us; }
  double tuned_speedup_cold() const { return convgen_cold_us / tuned_cold_us; }
  bool tuned_changed() const { return tuned_schedule != schedule; }
};

Launch convgen_launch(const convgen::Conv2dProblem& problem, const convgen::Conv2dArgs& args) {
  return [problem, args](cudaStream_t stream) { CONVGEN_CHECK(convgen::bench_dense::conv2d(problem, args, stream)); };
}

// Compares the outputs of one run on poisoned buffers with cuDNN's: the plain
// convolution directly, the fused kernels after the epilogue (and residual)
// are applied to cuDNN's output on the host.
void check_against_cudnn(RowResult& row, const Operands& ops, const std::vector<float>& fused_out,
                         const std::vector<float>& plain_out, const std::vector<float>& residual_out,
                         const std::vector<float>& cudnn_out, const std::vector<float>& fused_reference) {
  row.max_rel_err = max_relative_error(plain_out, cudnn_out);
  row.fused_max_rel_err = max_relative_error(fused_out, fused_reference);
  row.residual_max_rel_err =
      max_relative_error(residual_out, apply_epilogue(cudnn_out, with_residual(row.problem), ops));
  row.check_limit = relative_error_limit(row.cudnn_algo);
  row.check_ok = error_ok(row.max_rel_err, row.check_limit) && error_ok(row.fused_max_rel_err, row.check_limit) &&
                 error_ok(row.residual_max_rel_err, row.check_limit);
  if (!row.check_ok) {
    std::fprintf(stderr,
                 "warning: %s (csv line %d): convgen differs from cuDNN (%s): max relative error %.3g without "
                 "epilogue, %.3g with, %.3g with residual (limit %.0e)\n",
                 row.bench.suite.c_str(), row.bench.csv_line, row.cudnn_algo.c_str(), row.max_rel_err,
                 row.fused_max_rel_err, row.residual_max_rel_err, row.check_limit);
  }
}

// Checks the tuned kernel's output (from the same run on poisoned buffers):
// against cuDNN + the epilogue as the default's is, when cuDNN ran
// (`fused_reference` not null; row.check_limit set), and always against the
// default kernel's.
void check_tuned(RowResult& row, const std::vector<float>& tuned_out, const std::vector<float>& default_out,
                 const std::vector<float>* fused_reference) {
  row.tuned_vs_default_max_rel_err = max_relative_error(tuned_out, default_out);
  row.tuned_check_ok = error_ok(row.tuned_vs_default_max_rel_err, kMaxTunedRelativeError);
  if (fused_reference) {
    row.tuned_max_rel_err = max_relative_error(tuned_out, *fused_reference);
    row.tuned_check_ok = row.tuned_check_ok && error_ok(row.tuned_max_rel_err, row.check_limit);
  }
  if (!row.tuned_check_ok) {
    std::fprintf(stderr,
                 "ERROR: %s (csv line %d): the TUNED kernel %s (%s) computes a different result: max relative "
                 "error %.3g against the default kernel (limit %.0e), %.3g against cuDNN + epilogue (limit %.0e)\n",
                 row.bench.suite.c_str(), row.bench.csv_line, row.tuned_choice.kernel.c_str(),
                 row.tuned_schedule.c_str(), row.tuned_vs_default_max_rel_err, kMaxTunedRelativeError,
                 row.tuned_max_rel_err, row.check_limit);
  }
}

RowResult measure_row(const Selected& selected, double ceiling_tbps, double peak_tflops,
                      cudnnHandle_t cudnn_handle, Stopwatch& stopwatch, const Options& options, uint64_t seed) {
  RowResult row(selected);
  const convgen::Conv2dProblem plain_problem = without_epilogue(row.problem);
  const convgen::Conv2dProblem residual_problem = with_residual(row.problem);
  row.floor_us = floor_us(row.problem, ceiling_tbps);
  row.flops = flop_count(row.problem);
  row.roofline_us = std::max(row.floor_us, compute_floor_us(row.problem, peak_tflops));

  const Operands ops = make_operands(row.problem, seed);
  const size_t outputs = output_count(row.problem);
  const DeviceBuffer out = DeviceBuffer::floats(outputs), plain_out = DeviceBuffer::floats(outputs),
                     residual_out = DeviceBuffer::floats(outputs);
  const Launch fused = convgen_launch(row.problem, make_args(row.problem, ops, out));
  const Launch plain = convgen_launch(plain_problem, make_args(plain_problem, ops, plain_out));
  const Launch residual = convgen_launch(residual_problem, make_args(residual_problem, ops, residual_out));
  // The tuned kernel reads the same operands and writes its own output.
  const DeviceBuffer tuned_out = kHasTuned ? DeviceBuffer::floats(outputs) : DeviceBuffer();
  const Launch tuned = kHasTuned ? tuned_launch(row.problem, make_args(row.problem, ops, tuned_out)) : Launch();

  if (cudnn_handle && cudnn_supports(row.problem)) {
    const DeviceBuffer cudnn_out = DeviceBuffer::floats(outputs);
    const CudnnConvolution cudnn(cudnn_handle, stopwatch.stream(), cudnn_shape(row.problem), ops.input.f32(),
                                 ops.filter.f32(), cudnn_out.f32());
    const Launch conv = [&cudnn](cudaStream_t stream) { cudnn.run(stream); };
    row.cudnn_algo = cudnn.algorithm();

    for (const DeviceBuffer* buffer : {&out, &plain_out, &residual_out, &cudnn_out}) {
      poison(*buffer, stopwatch.stream());
    }
    if (kHasTuned) poison(tuned_out, stopwatch.stream());
    for (const Launch* launch : {&fused, &plain, &residual, &conv}) (*launch)(stopwatch.stream());
    if (kHasTuned) tuned(stopwatch.stream());
    stopwatch.synchronize();
    const std::vector<float> cudnn_host = cudnn_out.download();
    const std::vector<float> fused_reference = apply_epilogue(cudnn_host, row.problem, ops);
    const std::vector<float> fused_host = out.download();
    check_against_cudnn(row, ops, fused_host, plain_out.download(), residual_out.download(), cudnn_host,
                        fused_reference);
    if (kHasTuned) check_tuned(row, tuned_out.download(), fused_host, &fused_reference);

    row.cudnn_hot_us = stopwatch.hot_us(conv, options.hot_launches, options.hot_replays);
    row.cudnn_cold_us = stopwatch.cold_us(conv, options.trials);
  } else if (kHasTuned) {
    // No cuDNN output to check against: the tuned kernel against the default one.
    for (const DeviceBuffer* buffer : {&out, &tuned_out}) poison(*buffer, stopwatch.stream());
    for (const Launch* launch : {&fused, &tuned}) (*launch)(stopwatch.stream());
    stopwatch.synchronize();
    check_tuned(row, tuned_out.download(), out.download(), nullptr);
  }

  row.convgen_hot_us = stopwatch.hot_us(fused, options.hot_launches, options.hot_replays);
  row.convgen_cold_us = stopwatch.cold_us(fused, options.trials);
  if (kHasTuned) {
    row.tuned_hot_us = stopwatch.hot_us(tuned, options.hot_launches, options.hot_replays);
    row.tuned_cold_us = stopwatch.cold_us(tuned, options.trials);
  }
  row.copy_cold_us = copy_cold_us(stopwatch, bytes_moved(row.problem), options.trials);
  // Without an epilogue the plain problem is the row's own: measured once.
  row.convgen_noepilogue_hot_us = has_epilogue(row.problem)
                                      ? stopwatch.hot_us(plain, options.hot_launches, options.hot_replays)
                                      : row.convgen_hot_us;
  row.convgen_residual_hot_us = stopwatch.hot_us(residual, options.hot_launches, options.hot_replays);
  return row;
}

// ---------------------------------------------------------------------------
// Selection of rows.

std::vector<Selected> select_rows(const std::vector<BenchCase>& cases, const Options& options) {
  std::vector<Selected> selected;
  for (const BenchCase& bench : cases) {
    if (!wanted_suite(bench.suite, options)) continue;
    const convgen::Conv2dProblem problem = to_problem(bench);
    const convgen::KernelChoice choice = convgen::bench_dense::find(problem);
    if (!choice.status.ok()) {
      fail_csv(options.csv_path, bench.csv_line, "invalid problem: " + choice.status.message);
    }
    if (choice.kernel.find(options.kernel_filter) == std::string::npos) continue;
    Selected s{bench,
               problem,
               choice,
               convgen::bench_dense::find(without_epilogue(problem)),
               convgen::bench_dense::find(with_residual(problem)),
               {},
               {},
               {}};
    if (kHasTuned) {
      s.tuned_choice = tuned_find(problem);
      s.schedule = schedule_of(convgen::bench_dense::conv2d_kernels(), s.choice);
      s.tuned_schedule = schedule_of(tuned_kernels(), s.tuned_choice);
    }
    selected.push_back(s);
  }
  return selected;
}

// Says up front which rows a generic kernel will serve: slow by design, and
// a sign that the library was built from a different spec.
void warn_about_generic_kernels(const std::vector<Selected>& selected) {
  for (const Selected& s : selected) {
    const std::string where = s.bench.suite + " (csv line " + std::to_string(s.bench.csv_line) + ")";
    if (!s.choice.specialized) {
      std::fprintf(stderr, "warning: %s is served by the GENERIC kernel: %s\n", where.c_str(),
                   s.choice.reason.c_str());
    }
    if (has_epilogue(s.problem) && !s.plain_choice.specialized) {
      std::fprintf(stderr, "warning: %s without epilogue is served by the GENERIC kernel: %s\n", where.c_str(),
                   s.plain_choice.reason.c_str());
    }
    if (!s.residual_choice.specialized) {
      std::fprintf(stderr, "warning: %s with residual is served by the GENERIC kernel: %s\n", where.c_str(),
                   s.residual_choice.reason.c_str());
    }
    if (kHasTuned && !s.tuned_choice.specialized) {
      std::fprintf(stderr, "warning: %s is served by the GENERIC kernel in the tuned library: %s\n", where.c_str(),
                   s.tuned_choice.reason.c_str());
    }
  }
}

// ---------------------------------------------------------------------------
// Output.

Json row_json(const RowResult& r) {
  const convgen::Conv2dProblem& p = r.problem;
  Json row;
  row["suite"] = r.bench.suite;
  row["name"] = r.choice.kernel;
  row["specialized"] = r.choice.specialized;
  row["n"] = p.n;
  row["c"] = p.c;
  row["c_out"] = p.c_out;
  row["h"] = p.h;
  row["w"] = p.w;
  row["kh"] = p.kh;
  row["kw"] = p.kw;
  row["stride"] = r.bench.stride;
  row["pad"] = r.bench.pad;
  row["epilogue"] = r.bench.epilogue;
  row["out_h"] = p.out_h();
  row["out_w"] = p.out_w();
  row["flops"] = r.flops;
  row["floor_us"] = number(r.floor_us, 3);
  row["roofline_us"] = number(r.roofline_us, 3);
  row["convgen_hot_us"] = number(r.convgen_hot_us, 3);
  row["convgen_cold_us"] = number(r.convgen_cold_us, 3);
  row["convgen_noepilogue_hot_us"] = number(r.convgen_noepilogue_hot_us, 3);
  row["noepilogue_name"] = r.plain_choice.kernel;
  row["noepilogue_specialized"] = r.plain_choice.specialized;
  row["convgen_residual_hot_us"] = number(r.convgen_residual_hot_us, 3);
  row["residual_name"] = r.residual_choice.kernel;
  row["residual_specialized"] = r.residual_choice.specialized;
  row["cudnn_hot_us"] = number(r.cudnn_hot_us, 3);
  row["cudnn_cold_us"] = number(r.cudnn_cold_us, 3);
  row["cudnn_algo"] = r.cudnn_ran() ? Json(r.cudnn_algo) : Json(nullptr);
  row["tflops"] = number(r.tflops(), 3);
  row["cudnn_tflops"] = number(r.cudnn_tflops(), 3);
  row["convgen_frac_ceiling"] = number(r.convgen_frac_ceiling(), 4);
  row["cudnn_frac_ceiling"] = number(r.cudnn_frac_ceiling(), 4);
  row["convgen_frac_roofline"] = number(r.convgen_frac_roofline(), 4);
  row["cudnn_frac_roofline"] = number(r.cudnn_frac_roofline(), 4);
  row["copy_cold_us"] = number(r.copy_cold_us, 3);
  row["copy_frac_ceiling"] = number(r.copy_frac_ceiling(), 4);
  row["speedup_vs_cudnn"] = number(r.speedup_vs_cudnn(), 3);
  row["fused_plain_ratio"] = number(r.fused_plain_ratio(), 3);
  row["residual_plain_ratio"] = number(r.residual_plain_ratio(), 3);
  row["max_rel_err"] = error_value(r.max_rel_err);
  row["fused_max_rel_err"] = error_value(r.fused_max_rel_err);
  row["residual_max_rel_err"] = error_value(r.residual_max_rel_err);
  row["check_limit"] = error_value(r.check_limit);
  row["check_ok"] = r.cudnn_ran() ? Json(r.check_ok) : Json(nullptr);
  row["dispatch_reason"] = r.choice.reason;
  if (kHasTuned) {
    row["default_schedule"] = r.schedule;
    row["tuned_name"] = r.tuned_choice.kernel;
    row["tuned_specialized"] = r.tuned_choice.specialized;
    row["tuned_schedule"] = r.tuned_schedule;
    row["tuned_changed"] = r.tuned_changed();  // false: the database had no entry for the kernel
    row["tuned_hot_us"] = number(r.tuned_hot_us, 3);
    row["tuned_cold_us"] = number(r.tuned_cold_us, 3);
    row["tuned_tflops"] = number(r.tuned_tflops(), 3);
    row["tuned_frac_roofline"] = number(r.tuned_frac_roofline(), 4);
    row["tuned_speedup_hot"] = number(r.tuned_speedup_hot(), 3);
    row["tuned_speedup_cold"] = number(r.tuned_speedup_cold(), 3);
    row["tuned_max_rel_err"] = error_value(r.tuned_max_rel_err);
    row["tuned_vs_default_max_rel_err"] = error_value(r.tuned_vs_default_max_rel_err);
    row["tuned_check_ok"] = r.tuned_check_ok;
  }
  return row;
}

// The whole run: where and how it was measured, then the rows.
Json results_document(const std::string& gpu, double ceiling_tbps, const Fp32Peak& peak, const Options& options,
                      const Json& rows) {
  Json document = start_document(gpu, ceiling_tbps, options);
  document["fp32_peak_tflops"] = number(peak.tflops, 3);
  document["fp32_peak_method"] = peak.method;
  document["cublas_version"] = peak.cublas_version;
  if (kHasTuned) document["tuning_db"] = kTuningDb;
  finish_document(document, options, rows);
  return document;
}

// Which kind of kernel served the row; GENERIC stands out on purpose.
std::string served_by(const RowResult& r) {
  std::string text = r.choice.specialized ? "specialized" : "GENERIC";
  if (r.choice.specialized && !r.plain_choice.specialized) text += " (plain: GENERIC)";
  if (r.choice.specialized && !r.residual_choice.specialized) text += " (residual: GENERIC)";
  return text;
}

void print_results(const std::vector<RowResult>& rows, double ceiling_tbps, const Fp32Peak& peak,
                   const std::string& gpu) {
  std::vector<std::vector<std::string>> cells = {
      {"suite", "NxCxHxW", "c_out", "k", "s", "epilogue", "served by", "roofline us", "cg hot", "cg cold",
       "cg plain hot", "cg resid hot", "cudnn hot", "cudnn cold", "cudnn algo", "cg TFLOP/s", "cudnn TFLOP/s",
       "cg %roof", "cudnn %roof", "fused/plain", "speedup", "check"}};
  const std::vector<bool> left = {true,  true,  false, true,  false, true,  true,  false, false, false, false,
                                  false, false, false, true,  false, false, false, false, false, false, true};
  for (const RowResult& r : rows) {
    const convgen::Conv2dProblem& p = r.problem;
    cells.push_back({r.bench.suite, shape_text(p), std::to_string(p.c_out),
                     std::to_string(p.kh) + "x" + std::to_string(p.kw), std::to_string(r.bench.stride),
                     r.bench.epilogue, served_by(r), fixed(r.roofline_us, 2), fixed(r.convgen_hot_us, 2),
                     fixed(r.convgen_cold_us, 2), fixed(r.convgen_noepilogue_hot_us, 2),
                     fixed(r.convgen_residual_hot_us, 2), fixed(r.cudnn_hot_us, 2), fixed(r.cudnn_cold_us, 2),
                     r.cudnn_ran() ? r.cudnn_algo : "-", fixed(r.tflops(), 2), fixed(r.cudnn_tflops(), 2),
                     fixed(100.0 * r.convgen_frac_roofline(), 1), fixed(100.0 * r.cudnn_frac_roofline(), 1),
                     fixed(r.fused_plain_ratio(), 3), fixed(r.speedup_vs_cudnn(), 2, "x"),
                     r.cudnn_ran() ? (r.check_ok ? "ok" : "MISMATCH") : "-"});
  }
  std::cout << "GPU: " << gpu << "; copy ceiling " << fixed(ceiling_tbps, 2) << " TB/s; fp32 peak "
            << fixed(peak.tflops, 2) << " TFLOP/s (" << peak.method << ")\n"
            << "Times in microseconds. hot: CUDA graph replays, L2 warm; cold: L2 flushed. cg plain: convgen "
               "without epilogue; cg resid: the epilogue plus a residual add; cuDNN runs the convolution alone.\n"
            << "roofline = max(bytes / copy ceiling, FLOPs / fp32 peak); %roof = roofline / cold time; "
               "TFLOP/s from hot times; speedup = cuDNN hot / convgen hot.\n\n";
  print_table(cells, left);

  const auto generic =
      std::count_if(rows.begin(), rows.end(), [](const RowResult& r) { return !r.choice.specialized; });
  const auto mismatched =
      std::count_if(rows.begin(), rows.end(), [](const RowResult& r) { return !r.check_ok; });
  if (generic)
    std::cout << "\n" << generic << " row(s) served by the GENERIC kernel (no specialized kernel).\n";
  if (mismatched) std::cout << "\n" << mismatched << " row(s) where convgen and cuDNN disagree (MISMATCH).\n";
}

// The tuned library beside the default one: times, speedups, the schedule
// where the database changed it, and the check of the tuned output.
void print_tuned_results(const std::vector<RowResult>& rows) {
  std::vector<std::vector<std::string>> cells = {{"suite", "NxCxHxW", "c_out", "k", "s", "epilogue", "cg hot",
                                                  "tuned hot", "speedup hot", "cg cold", "tuned cold",
                                                  "speedup cold", "tuned TFLOP/s", "tuned check", "tuned schedule"}};
  const std::vector<bool> left = {true,  true,  false, true,  false, true,  false, false,
                                  false, false, false, false, false, true,  true};
  double log_sum = 0;
  int measured = 0, slower = 0;
  for (const RowResult& r : rows) {
    const convgen::Conv2dProblem& p = r.problem;
    cells.push_back({r.bench.suite, shape_text(p), std::to_string(p.c_out),
                     std::to_string(p.kh) + "x" + std::to_string(p.kw), std::to_string(r.bench.stride),
                     r.bench.epilogue, fixed(r.convgen_hot_us, 2), fixed(r.tuned_hot_us, 2),
                     fixed(r.tuned_speedup_hot(), 3, "x"), fixed(r.convgen_cold_us, 2), fixed(r.tuned_cold_us, 2),
                     fixed(r.tuned_speedup_cold(), 3, "x"), fixed(r.tuned_tflops(), 2),
                     r.tuned_check_ok ? "ok" : "TUNED MISMATCH",
                     r.tuned_changed() ? r.tuned_schedule : "(default) " + r.tuned_schedule});
    const double speedup = r.tuned_speedup_hot();
    if (std::isfinite(speedup) && speedup > 0) {
      log_sum += std::log(speedup);
      ++measured;
      if (speedup < 1 / 1.02) ++slower;
    }
  }
  std::cout << "\nTuned library (tuning database " << kTuningDb << "): the same spec with the database applied.\n"
            << "speedup = convgen (default) time / tuned time; (default): the database left the schedule as it "
               "was.\n\n";
  print_table(cells, left);
  if (measured) {
    std::cout << "\nGeometric-mean hot speedup of the tuned library: " << fixed(std::exp(log_sum / measured), 3, "x")
              << " over " << measured << " row(s); " << slower
              << " row(s) where the tuned kernel is more than 2% slower (hot).\n";
  }
  const auto mismatched =
      std::count_if(rows.begin(), rows.end(), [](const RowResult& r) { return !r.tuned_check_ok; });
  if (mismatched) {
    std::cout << "\n" << mismatched << " row(s) where the TUNED kernel computes a different result (TUNED MISMATCH).\n";
  }
}

std::string progress_label(const Selected& s, size_t index, size_t total) {
  const convgen::Conv2dProblem& p = s.problem;
  return "[" + std::to_string(index + 1) + "/" + std::to_string(total) + "] " + s.bench.suite + " " +
         shape_text(p) + " -> " + std::to_string(p.c_out) + " k" + std::to_string(p.kh) + "x" +
         std::to_string(p.kw) + " s" + std::to_string(s.bench.stride) + " " + s.bench.epilogue;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse_options(argc, argv);
  const std::vector<Selected> selected = select_rows(read_cases(options.csv_path), options);
  if (selected.empty()) {
    std::fprintf(stderr, "error: no rows of %s match the --suite / --filter options\n",
                 options.csv_path.c_str());
    return EXIT_FAILURE;
  }
  warn_about_generic_kernels(selected);

  const std::string gpu = gpu_name();
  Stopwatch stopwatch(options.flush == "read");
  const double ceiling_tbps = measure_copy_ceiling_tbps(stopwatch);
  const Fp32Peak peak = measure_fp32_peak(stopwatch, options);
  std::fprintf(stderr, "%s: copy ceiling %.2f TB/s; fp32 peak %.2f TFLOP/s (%s)\n", gpu.c_str(), ceiling_tbps,
               peak.tflops, peak.method.c_str());

  cudnnHandle_t cudnn = nullptr;
  if (!options.no_cudnn) CUDNN_CHECK(cudnnCreate(&cudnn));

  std::vector<RowResult> results;
  for (size_t i = 0; i < selected.size(); ++i) {
    std::fprintf(stderr, "%s ...\n", progress_label(selected[i], i, selected.size()).c_str());
    results.push_back(measure_row(selected[i], ceiling_tbps, peak.tflops, cudnn, stopwatch, options,
                                  options.seed + 101 * selected[i].bench.csv_line));
    const RowResult& r = results.back();
    std::fprintf(stderr, "    convgen %.2f us hot (%.2f TFLOP/s), %.2f us cold; cuDNN %s us hot (%s)\n",
                 r.convgen_hot_us, r.tflops(), r.convgen_cold_us, fixed(r.cudnn_hot_us, 2).c_str(),
                 r.cudnn_ran() ? r.cudnn_algo.c_str() : "-");
    if (kHasTuned) {
      std::fprintf(stderr, "    tuned   %.2f us hot, %.2f us cold (%.3fx hot)%s: %s\n", r.tuned_hot_us,
                   r.tuned_cold_us, r.tuned_speedup_hot(), r.tuned_check_ok ? "" : " TUNED MISMATCH",
                   r.tuned_changed() ? r.tuned_schedule.c_str() : "default schedule");
    }
  }
  if (cudnn) CUDNN_CHECK(cudnnDestroy(cudnn));

  print_results(results, ceiling_tbps, peak, gpu);
  if (kHasTuned) print_tuned_results(results);

  Json rows = Json::array();
  for (const RowResult& r : results) rows.push_back(row_json(r));
  if (!options.json_path.empty()) {
    write_file(options.json_path, results_document(gpu, ceiling_tbps, peak, options, rows).dump(2) + "\n");
  }
  if (!options.csv_out_path.empty()) write_file(options.csv_out_path, rows_csv(rows));
  // A row whose output disagrees with cuDNN, or whose tuned kernel's output
  // differs, fails the run (its times are still written).
  const bool all_agree = std::all_of(results.begin(), results.end(), [](const RowResult& r) { return r.check_ok; });
  if (!all_agree) std::fprintf(stderr, "convgen_bench_dense: some rows disagree with cuDNN (MISMATCH above)\n");
  const bool tuned_ok =
      std::all_of(results.begin(), results.end(), [](const RowResult& r) { return r.tuned_check_ok; });
  if (!tuned_ok) {
    std::fprintf(stderr, "convgen_bench_dense: the tuned library computes a different result on some rows "
                         "(TUNED MISMATCH above)\n");
  }
  return all_agree && tuned_ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
