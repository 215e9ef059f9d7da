// convgen_bench_dense: times the dense conv2d kernels of bench/dense_bench.yaml
// beside cuDNN, on the same GPU in the same run, for every row of bench/dense.csv.
// What it measures and reports is bench_driver.h's; this file holds what is
// dense's own: its CSV columns, its problem (with a residual input, timed
// fused beside the plain and the row's epilogue), its cuDNN twin, its FLOP
// count and the fp32 peak (an SGEMM without TF32) its roofline uses, its
// libraries and its columns.
//
// With a tuning database (CMake: CONVGEN_BENCH_DENSE_TUNING, which defines
// CONVGEN_BENCH_DENSE_HAS_TUNED), the row's kernel of the same spec built with
// the database applied (library bench_dense_tuned) is timed and checked
// beside the default one.
#include "bench_dense.h"  // generated from bench/dense_bench.yaml: namespace convgen::bench_dense
#include "bench_driver.h"
#if defined(CONVGEN_BENCH_DENSE_HAS_TUNED)
#include "bench_dense_tuned.h"  // the same spec, tuning database applied: namespace convgen::bench_dense_tuned
#endif

#include <cublas_v2.h>

namespace {

using namespace bench_driver;

void check_cublas(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    fail(file, line, std::string(call) + " failed: " + cublasGetStatusName(status) + ": " +
                         cublasGetStatusString(status));
  }
}
#define CUBLAS_CHECK(call) check_cublas((call), #call, __FILE__, __LINE__)

constexpr int kPeakTrials = 10;

// ---------------------------------------------------------------------------
// The peaks the roofline uses: an SGEMM without TF32 (float32 rows) and an
// fp16 GEMM with fp32 sums on tensor cores (float16 and bfloat16 rows).

// Fills `data` with values in [-1, 1) from a hash of the index: random
// enough that the GEMM does real work (zeros can run faster), and on the
// device, so that 2 x 256 MiB need no host generation and upload.
template <class T>
__global__ void fill_hashed(T* data, size_t count, uint32_t seed) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count; i += size_t{gridDim.x} * blockDim.x) {
    uint32_t x = uint32_t(i) * 0x9e3779b9u ^ seed;
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    data[i] = T(float(x >> 8) * (2.0f / 16777216.0f) - 1.0f);
  }
}

// A cuBLAS handle on the stopwatch's stream, for one measurement.
struct CublasHandle {
  cublasHandle_t handle = nullptr;
  explicit CublasHandle(cudaStream_t stream) {
    CUBLAS_CHECK(cublasCreate(&handle));
    CUBLAS_CHECK(cublasSetStream(handle, stream));
  }
  ~CublasHandle() { cublasDestroy(handle); }
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
};

// The rate of `gemm`, one size^3 GEMM on `cublas`: two warm-up runs (they
// pick the kernel and raise the clocks), then the median of kPeakTrials.
// `call` and `math` name them in the method text.
GemmPeak gemm_peak(Stopwatch& stopwatch, const CublasHandle& cublas, int size, const std::function<void()>& gemm,
                   const std::string& call, const std::string& math) {
  GemmPeak peak;
  CUBLAS_CHECK(cublasGetVersion(cublas.handle, &peak.cublas_version));
  const Launch run = [&](cudaStream_t) { gemm(); };
  stopwatch.time_runs_ms(run, 2, false);
  const double ms = median(stopwatch.time_runs_ms(run, kPeakTrials, false));
  peak.tflops = 2.0 * double(size) * size * size / (ms * 1e-3) / 1e12;
  const std::string n = std::to_string(size);
  peak.method = call + " " + n + "x" + n + "x" + n + ", " + math + ", median of " + std::to_string(kPeakTrials) +
                " runs, L2 warm";
  return peak;
}

// A float32 SGEMM's rate in a cuBLAS math mode: CUBLAS_DEFAULT_MATH or
// CUBLAS_PEDANTIC_MATH (fp32 FMA, no TF32: the roofline of float32 rows), or
// CUBLAS_TF32_TENSOR_OP_MATH (TF32 tensor cores: that of math tf32 rows).
GemmPeak measure_sgemm_peak(Stopwatch& stopwatch, cublasMath_t math, const std::string& math_text, int size) {
  const size_t count = size_t(size) * size;
  const DeviceBuffer a = DeviceBuffer::floats(count), b = DeviceBuffer::floats(count),
                     c = DeviceBuffer::floats(count);
  fill_hashed<<<1024, 256, 0, stopwatch.stream()>>>(a.f32(), count, 1u);
  fill_hashed<<<1024, 256, 0, stopwatch.stream()>>>(b.f32(), count, 2u);
  CUDA_CHECK(cudaGetLastError());
  const CublasHandle cublas(stopwatch.stream());
  CUBLAS_CHECK(cublasSetMathMode(cublas.handle, math));
  const float alpha = 1.0f, beta = 0.0f;
  return gemm_peak(
      stopwatch, cublas, size,
      [&] {
        CUBLAS_CHECK(cublasSgemm(cublas.handle, CUBLAS_OP_N, CUBLAS_OP_N, size, size, size, &alpha, a.f32(), size,
                                 b.f32(), size, &beta, c.f32(), size));
      },
      "cublasSgemm", math_text);
}

GemmPeak measure_fp32_peak(Stopwatch& stopwatch, const std::string& sgemm_math, int size) {
  const bool pedantic = sgemm_math == "pedantic";
  return measure_sgemm_peak(stopwatch, pedantic ? CUBLAS_PEDANTIC_MATH : CUBLAS_DEFAULT_MATH,
                            std::string(pedantic ? "CUBLAS_PEDANTIC_MATH" : "CUBLAS_DEFAULT_MATH") +
                                " (fp32 FMA, no TF32)",
                            size);
}

GemmPeak measure_tensor_peak(Stopwatch& stopwatch, int size) {
  const size_t count = size_t(size) * size;
  const DeviceBuffer a = DeviceBuffer::elements(count, convgen::DataType::kFloat16),
                     b = DeviceBuffer::elements(count, convgen::DataType::kFloat16),
                     c = DeviceBuffer::elements(count, convgen::DataType::kFloat16);
  fill_hashed<<<1024, 256, 0, stopwatch.stream()>>>(static_cast<__half*>(a.data()), count, 3u);
  fill_hashed<<<1024, 256, 0, stopwatch.stream()>>>(static_cast<__half*>(b.data()), count, 4u);
  CUDA_CHECK(cudaGetLastError());
  const CublasHandle cublas(stopwatch.stream());
  const float alpha = 1.0f, beta = 0.0f;
  return gemm_peak(
      stopwatch, cublas, size,
      [&] {
        CUBLAS_CHECK(cublasGemmEx(cublas.handle, CUBLAS_OP_N, CUBLAS_OP_N, size, size, size, &alpha, a.data(),
                                  CUDA_R_16F, size, b.data(), CUDA_R_16F, size, &beta, c.data(), CUDA_R_16F, size,
                                  CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
      },
      "cublasGemmEx", "fp16 in and out, CUBLAS_COMPUTE_32F (tensor cores)");
}

// ---------------------------------------------------------------------------
// The operator.

struct DenseBench {
  using Problem = convgen::Conv2dProblem;
  using Args = convgen::Conv2dArgs;

  struct Options : CommonOptions {
    std::string csv_path = "bench/dense.csv";
    std::string sgemm_math = "default";  // cuBLAS math mode of the peak SGEMM: default | pedantic
    int sgemm_size = 8192;
  };

  static constexpr const char* kProgram = "convgen_bench_dense";
  static constexpr const char* kAbout =
      "Times convgen dense conv2d kernels beside cuDNN for each row of a benchmark CSV.";
  static constexpr const char* kFooter =
      "Timing: 'hot' = --hot-launches launches captured in one CUDA graph, replayed after a warm-up;\n"
      "median replay time / launches (L2 warm, no launch gaps). 'cold' = a 256 MiB memset flushes L2\n"
      "before every run (--flush read: a read of it), cudaEvents around the kernel alone; median of --trials runs.\n"
      "floor_us = bytes the problem must move (input + filter + output + epilogue parameters) at the\n"
      "copy ceiling (1 GiB device-to-device copy, bytes read + written, measured in the same run).\n"
      "fp32 peak = cublasSgemm of --sgemm-size^3 without TF32 (--sgemm-math), measured in the same run.\n"
      "flops = 2 * N * C_out * OH * OW * C_in * KH * KW; tflops = flops / convgen hot time.\n"
      "tensor-core peak = cublasGemmEx of --sgemm-size^3 in fp16 with fp32 sums, measured in the same run.\n"
      "TF32 peak = cublasSgemm of --sgemm-size^3 with CUBLAS_TF32_TENSOR_OP_MATH, measured in the same run.\n"
      "roofline_us = max(floor_us, flops / peak), the fp32 peak for float32 rows, the tensor-core peak for\n"
      "float16 and bfloat16 rows, the TF32 peak for math tf32 rows (a third of it for 3xtf32: three products\n"
      "a term); *_frac_roofline = roofline_us / cold time;\n"
      "*_frac_ceiling = floor_us / cold time. The cuDNN columns time the convolution alone (legacy API,\n"
      "of the algorithms cudnnFindConvolutionForwardAlgorithmEx runs within 4x of its fastest, the one fastest\n"
      "hot, under CUDNN_FMA_MATH; CUDNN_TENSOR_OP_MATH,\n"
      "TF32, for math tf32 rows; 3xtf32 rows against FMA, the accuracy they keep); the check accepts a\n"
      "max relative error (to the largest output) of 1e-4, 1e-3 where cuDNN chose a Winograd or FFT algorithm,\n"
      "3.9e-3 for math tf32 (as float16), grown after the activation by its largest slope.\n"
      "copy_cold_us: cudaMemcpyAsync of half the row's bytes (reads + writes = the row's), cold.\n"
      "Tuned (when built with CONVGEN_BENCH_DENSE_TUNING): the row's kernel from the same spec built with the\n"
      "tuning database applied, timed the same way on the same buffers; tuned_speedup_hot = convgen hot / tuned\n"
      "hot. Its output must match cuDNN + epilogue as the default's does, and the default kernel's output within a\n"
      "max relative error (to the largest output) of 1e-5; a row that fails either makes the program exit 1.\n"
      "Environment: CONVGEN_COMMIT is written to the JSON as 'commit'.";
  static constexpr const char* kTableLegend =
      "Times in microseconds. hot: CUDA graph replays, L2 warm; cold: L2 flushed. cg plain: convgen "
      "without epilogue; cg resid: the epilogue plus a residual add; cuDNN runs the convolution alone.\n"
      "roofline = max(bytes / copy ceiling, FLOPs / peak: fp32 FMA for float32, tensor cores for float16 and bfloat16); "
      "%roof = roofline / cold time; "
      "TFLOP/s from hot times; speedup = cuDNN hot / convgen hot.";
  static constexpr bool kHasResidual = true;

  static inline const std::vector<std::string> kCsvColumns = {"suite", "n",  "c_in",   "c_out", "h",       "w",
                                                              "kh",    "kw", "stride", "pad",   "epilogue"};
  static inline const std::vector<const char*> kJsonColumns = {
      "suite", "name", "specialized", "n", "c", "c_out", "h", "w", "kh", "kw", "stride", "pad", "epilogue",
      "dtype", "layout", "math", "out_h", "out_w", "flops", "floor_us", "roofline_us", "convgen_hot_us", "convgen_cold_us",
      "convgen_noepilogue_hot_us", "convgen_noepilogue_cold_us", "noepilogue_name", "noepilogue_specialized",
      "convgen_residual_hot_us", "residual_name", "residual_specialized", "cudnn_hot_us", "cudnn_cold_us",
      "cudnn_algo", "tflops", "cudnn_tflops", "convgen_frac_ceiling", "cudnn_frac_ceiling", "convgen_frac_roofline",
      "cudnn_frac_roofline", "copy_cold_us", "copy_frac_ceiling", "speedup_vs_cudnn", "fused_plain_ratio",
      "fused_plain_ratio_cold", "residual_plain_ratio", "max_rel_err", "fused_max_rel_err", "residual_max_rel_err",
      "check_limit", "check_ok", "dispatch_reason"};
  static inline const std::vector<const char*> kTunedJsonExtras = {"tuned_tflops", "tuned_frac_roofline"};
  static inline const std::vector<TableColumn> kRowColumns = {
      {"suite", "suite"},
      {"NxCxHxW", "shape"},
      {"c_out", "c_out"},
      {"k", "filter"},
      {"s", "stride"},
      {"epilogue", "epilogue"},
      {"dtype", "dtype"},
      {"layout", "layout"},
      {"math", "math"}};
  static inline const std::vector<TableColumn> kTableColumns = {
      {"served by", "served_by"},
      {"roofline us", "roofline_us"},
      {"cg hot", "convgen_hot_us"},
      {"cg cold", "convgen_cold_us"},
      {"cg plain hot", "convgen_noepilogue_hot_us"},
      {"cg resid hot", "convgen_residual_hot_us"},
      {"cudnn hot", "cudnn_hot_us"},
      {"cudnn cold", "cudnn_cold_us"},
      {"cudnn algo", "cudnn_algo"},
      {"cg TFLOP/s", "tflops"},
      {"cudnn TFLOP/s", "cudnn_tflops"},
      {"cg %roof", "convgen_frac_roofline"},
      {"cudnn %roof", "cudnn_frac_roofline"},
      {"fused/plain", "fused_plain_ratio"},
      {"speedup", "speedup_vs_cudnn"},
      {"check", "check"}};
  static inline const std::vector<TableColumn> kTunedTableExtras = {{"tuned TFLOP/s", "tuned_tflops"}};

  static Problem problem(const BenchCase& row) {
    Problem p = common_problem<Problem>(row);
    p.c = row.number("c_in");
    p.c_out = row.number("c_out");
    p.residual = false;
    p.math = row.math;
    return p;
  }

  static int out_channels(const Problem& p) { return p.c_out; }
  static size_t input_count(const Problem& p) { return size_t(p.n) * p.c * p.h * p.w; }
  static size_t filter_count(const Problem& p) { return size_t(p.c_out) * (p.c / p.groups) * p.kh * p.kw; }
  static size_t output_count(const Problem& p) { return size_t(p.n) * p.c_out * p.out_h() * p.out_w(); }
  // cuDNN and convgen read a dense filter alike: OIHW, or O x kh x kw x I (KRSC) with NHWC.
  static std::vector<float> filter_from_cudnn(const Problem&, std::vector<float> values) { return values; }
  // Multiply-adds of the direct convolution, counted as two FLOPs each.
  static double flop_count(const Problem& p) {
    return 2.0 * double(output_count(p)) * double(p.c / p.groups) * p.kh * p.kw;
  }

  static CudnnConvShape cudnn_shape(const Problem& p) {
    CudnnConvShape s = common_cudnn_shape(p);
    s.k = p.c_out;
    s.groups = p.groups;
    s.math = p.math;
    return s;
  }

  static std::string row_label(const Problem& p) {
    return shape_text(p) + " -> " + std::to_string(p.c_out) + " k" + std::to_string(p.kh) + "x" +
           std::to_string(p.kw) + " s" + std::to_string(p.stride_h);
  }

  static Args make_args(const Problem& p, const Operands& ops, const DeviceBuffer& output) {
    Args args;
    set_common_args(args, p.epilogue, ops, output);
    if (p.residual) args.residual = ops.residual.data();
    return args;
  }

  static void add_options(CLI::App& app, Options& options) {
    app.add_option("--sgemm-math", options.sgemm_math,
                   "cuBLAS math mode of the fp32-peak SGEMM: 'default' (CUBLAS_DEFAULT_MATH) or 'pedantic'\n"
                   "(CUBLAS_PEDANTIC_MATH); neither uses TF32")
        ->capture_default_str()
        ->check(CLI::IsMember({"default", "pedantic"}));
    app.add_option("--sgemm-size", options.sgemm_size, "M = N = K of the fp32-peak SGEMM")
        ->capture_default_str()
        ->check(CLI::Range(256, 32768));
  }
  static GemmPeak measure_peak(Stopwatch& stopwatch, const Options& options) {
    return measure_fp32_peak(stopwatch, options.sgemm_math, options.sgemm_size);
  }
  static GemmPeak measure_tensor_peak(Stopwatch& stopwatch, const Options& options) {
    return ::measure_tensor_peak(stopwatch, options.sgemm_size);
  }
  static GemmPeak measure_tf32_peak(Stopwatch& stopwatch, const Options& options) {
    return measure_sgemm_peak(stopwatch, CUBLAS_TF32_TENSOR_OP_MATH,
                              "CUBLAS_TF32_TENSOR_OP_MATH (float32 on TF32 tensor cores)", options.sgemm_size);
  }

  using Lib = Library<Problem, Args, convgen::Conv2dKernelInfo>;
  static inline const Lib kLibrary = {convgen::bench_dense::find, convgen::bench_dense::conv2d,
                                      convgen::bench_dense::conv2d_kernels};
#if defined(CONVGEN_BENCH_DENSE_HAS_TUNED)
  static inline const Lib kTuned = {convgen::bench_dense_tuned::find, convgen::bench_dense_tuned::conv2d,
                                    convgen::bench_dense_tuned::conv2d_kernels, CONVGEN_BENCH_DENSE_HAS_TUNED_DB};
#else
  static inline const Lib kTuned = {};
#endif
};

}  // namespace

int main(int argc, char** argv) { return bench_driver::run<DenseBench>(argc, argv); }
