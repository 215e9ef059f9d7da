// What the benchmark driver (bench_driver.h) calls, whatever the operator:
// error checks, device buffers, the stopwatch (hot timing by CUDA graph
// replays, cold timing with L2 flushed), the copy ceiling, the cuDNN
// convolution convgen is compared against, the benchmark-CSV reader and the
// JSON / CSV / table writers. Built once as the static library
// convgen_bench_common (bench_common.cu).
#pragma once

#include <convgen/convgen.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace bench_common {

using Json = nlohmann::ordered_json;  // ordered: rows keep the column order we write

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr size_t kL2FlushBytes = size_t{256} << 20;    // far larger than any L2 (H100: 50 MB)
constexpr size_t kCopyCeilingBytes = size_t{1} << 30;  // 1 GiB device-to-device copy
constexpr int kCopyCeilingTrials = 10;
constexpr size_t kMaxCudnnWorkspaceBytes = size_t{2} << 30;
constexpr double kMaxRelativeError = 1e-4;

// ---------------------------------------------------------------------------
// Errors: every CUDA, cuDNN and convgen call goes through one of these; a
// failure names the call site and the error, and ends the program.

[[noreturn]] void fail(const char* file, int line, const std::string& what);
void check_cuda(cudaError_t error, const char* call, const char* file, int line);
void check_cudnn(cudnnStatus_t status, const char* call, const char* file, int line);
void check_convgen(const convgen::Status& status, const char* call, const char* file, int line);

#define CUDA_CHECK(call) ::bench_common::check_cuda((call), #call, __FILE__, __LINE__)
#define CUDNN_CHECK(call) ::bench_common::check_cudnn((call), #call, __FILE__, __LINE__)
#define CONVGEN_CHECK(call) ::bench_common::check_convgen((call), #call, __FILE__, __LINE__)

// ---------------------------------------------------------------------------
// Command line: the options every benchmark has.

struct CommonOptions {
  std::vector<std::string> suites;  // empty: every suite
  std::string kernel_filter;        // empty: every kernel
  std::string json_path;
  std::string csv_out_path;
  int hot_launches = 100;
  int hot_replays = 10;
  int trials = 30;
  bool no_cudnn = false;
  uint64_t seed = 2024;
  std::string flush = "memset";  // how cold runs empty L2: memset (leaves it dirty) or read (leaves it clean)
};

// Adds --suite, --filter, --json, --csv-out, --hot-launches, --hot-replays,
// --trials, --seed, --no-cudnn and --flush, in that order.
void add_common_options(CLI::App& app, CommonOptions& options);

// Parses the command line; --help and errors end the program as CLI11 does.
void parse_or_exit(CLI::App& app, int argc, char** argv);

// ---------------------------------------------------------------------------
// Benchmark CSV.

// The CSV's epilogue word names an epilogue and an activation: the
// epilogue's spec word, the activation's, or both joined by '_' ("bias_relu",
// "scale_shift_hardswish"); "none" is neither. The words are those of
// convgen/epilogue.h's tables, so the CSV accepts every epilogue and
// activation a spec does.
struct EpilogueWord {
  convgen::Epilogue epilogue = convgen::Epilogue::kNone;
  convgen::Activation activation = convgen::Activation::kNone;
};
std::optional<EpilogueWord> parse_epilogue_word(const std::string& word);

// The CSV's dtype and layout words are the spec's, from convgen/dtype.h's tables.
std::optional<convgen::DataType> parse_dtype_word(const std::string& word);
std::optional<convgen::Layout> parse_layout_word(const std::string& word);
std::optional<convgen::Math> parse_math_word(const std::string& word);

// Reports a problem with the CSV itself; line 0 means the file as a whole.
[[noreturn]] void fail_csv(const std::string& path, int line, const std::string& what);

std::vector<std::string> split_csv_line(const std::string& line);
int parse_positive(const std::string& text, const char* column, const std::string& path, int line);

// Reads a benchmark CSV whose header names at least `columns`; calls
// `row(line_number, fields)` for every data line, fields in the order of
// `columns`, then those of `optional` ("" where the header lacks one). Blank
// lines and lines starting with '#' are skipped.
void for_each_csv_row(const std::string& path, const std::vector<std::string>& columns,
                      const std::function<void(int, const std::vector<std::string>&)>& row,
                      const std::vector<std::string>& optional = {});

bool wanted_suite(const std::string& suite, const CommonOptions& options);

// ---------------------------------------------------------------------------
// Device memory.

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept { swap(other); }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    swap(other);
    return *this;
  }

  static DeviceBuffer floats(size_t count) { return DeviceBuffer(count * sizeof(float)); }
  static DeviceBuffer elements(size_t count, convgen::DataType dtype) {
    return DeviceBuffer(count * size_t(convgen::element_bytes(dtype)));
  }
  // `values` stored as elements of `dtype` (rounded to nearest, as CUDA's
  // conversions do; float32: as they are).
  static DeviceBuffer upload(const std::vector<float>& values, convgen::DataType dtype = convgen::DataType::kFloat32);

  void* data() const { return data_; }
  float* f32() const { return static_cast<float*>(data_); }
  size_t bytes() const { return bytes_; }

  // The buffer's elements of `dtype`, each converted to float (exactly).
  std::vector<float> download(convgen::DataType dtype = convgen::DataType::kFloat32) const;

 private:
  void swap(DeviceBuffer& other) noexcept;

  void* data_ = nullptr;
  size_t bytes_ = 0;
};

// Uniform in [-1, 1): 24 random bits per value, each exactly representable.
std::vector<float> random_uniform(size_t count, uint64_t seed);

// Each value rounded to the nearest element of `dtype` (CUDA's host
// conversions), as a float: what a buffer uploaded in that dtype holds.
std::vector<float> round_to(std::vector<float> values, convgen::DataType dtype);

// All bits set is a NaN: a kernel that leaves any output unwritten fails the check.
void poison(const DeviceBuffer& buffer, cudaStream_t stream);

// ---------------------------------------------------------------------------
// Timing.

using Launch = std::function<void(cudaStream_t)>;

double median(std::vector<float> values);

// Owns the stream everything runs on, a pair of events and the L2 scratch buffer.
class Stopwatch {
 public:
  explicit Stopwatch(bool flush_by_reading);
  ~Stopwatch();
  Stopwatch(const Stopwatch&) = delete;
  Stopwatch& operator=(const Stopwatch&) = delete;

  cudaStream_t stream() const { return stream_; }

  void synchronize() const;

  // Times `launch` alone, `runs` times, in milliseconds. With flush_l2, a
  // memset (or a read) of the scratch buffer evicts L2 before each run; it is
  // enqueued before the start event, so it is not timed, and it keeps the GPU
  // busy while the launch is queued, so launch latency is not timed either.
  std::vector<float> time_runs_ms(const Launch& launch, int runs, bool flush_l2);

  // Median microseconds per launch with L2 warm and no launch gaps: `launches`
  // launches captured in one CUDA graph, replayed `replays` times after a warm-up.
  double hot_us(const Launch& launch, int launches, int replays);

  // Median microseconds of one launch with L2 flushed before it.
  double cold_us(const Launch& launch, int trials);

 private:
  void flush(int run);

  DeviceBuffer l2_scratch_;
  DeviceBuffer sink_;
  bool flush_by_reading_ = false;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

// Device-to-device copy bandwidth, bytes read + written, in TB/s: the
// ceiling a memory-bound kernel is measured against.
double measure_copy_ceiling_tbps(Stopwatch& stopwatch);

// A cudaMemcpyAsync of half of `bytes_moved` (reads + writes = bytes_moved),
// cold: what any kernel moving that many bytes reaches, launch and ramp included.
double copy_cold_us(Stopwatch& stopwatch, size_t bytes_moved, int trials);

// ---------------------------------------------------------------------------
// cuDNN: one convolution alone (no epilogue), in the problem's dtype and
// layout, accumulating in float: float32 with FMA math (no TF32), float16 and
// bfloat16 with tensor cores allowed.

const char* algo_name(cudnnConvolutionFwdAlgo_t algo);

struct CudnnConvShape {
  int n = 1, c = 1, h = 1, w = 1;  // input
  int k = 1;                       // output channels
  int kh = 1, kw = 1;
  int pad_h = 0, pad_w = 0;  // symmetric, as cuDNN pads
  int stride_h = 1, stride_w = 1;
  int dilation_h = 1, dilation_w = 1;
  int groups = 1;
  int out_h = 1, out_w = 1;  // what the caller expects; checked against cuDNN's
  convgen::DataType dtype = convgen::DataType::kFloat32;  // of every tensor
  convgen::Layout layout = convgen::Layout::kNCHW;        // of every tensor, the filter's too (KRSC for NHWC)
  convgen::Math math = convgen::Math::kFloat32;           // tf32: cuDNN may use TF32 tensor cores
  std::string description;   // named in the error when cuDNN disagrees on the output shape
};

class CudnnConvolution {
 public:
  // Describes the convolution and finds its algorithms by running them on x,
  // w and y (in float32, those that use no tensor cores); runs Find's fastest
  // until use() picks another of candidates().
  CudnnConvolution(cudnnHandle_t handle, cudaStream_t stream, const CudnnConvShape& shape, const void* x,
                   const void* w, void* y);
  ~CudnnConvolution();
  CudnnConvolution(const CudnnConvolution&) = delete;
  CudnnConvolution& operator=(const CudnnConvolution&) = delete;

  void run(cudaStream_t stream) const;
  const char* algorithm() const { return algo_name(algo_); }
  // Every algorithm Find ran successfully that may run here, within 4x of
  // Find's fastest, fastest first (at least one). The benchmark times each
  // hot before it keeps one:
  // Find times each algorithm once, and algorithms within its noise swap
  // places from run to run (ResNet's 128-channel 28x28 layer at batch 32:
  // FFT_TILING first at 113 us hot, where WINOGRAD_NONFUSED runs in 90; a
  // best of Find's first three still left seed002's 32-channel row at 9.5 us
  // in one run and 15.3 in the next).
  const std::vector<cudnnConvolutionFwdAlgo_t>& candidates() const { return candidates_; }
  void use(cudnnConvolutionFwdAlgo_t algo) { algo_ = algo; }

 private:
  size_t largest_workspace_bytes() const;
  void choose_algorithm();

  cudnnHandle_t handle_;
  bool tensor_cores_allowed_ = false;
  const void* x_;
  const void* w_;
  void* y_;
  cudnnTensorDescriptor_t x_desc_ = nullptr, y_desc_ = nullptr;
  cudnnFilterDescriptor_t w_desc_ = nullptr;
  cudnnConvolutionDescriptor_t conv_desc_ = nullptr;
  cudnnConvolutionFwdAlgo_t algo_ = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  std::vector<cudnnConvolutionFwdAlgo_t> candidates_;
  DeviceBuffer workspace_;
};

// ---------------------------------------------------------------------------
// Cross-check.

// Largest |got - want| divided by the largest |want|: an error relative to the
// output's scale, so that outputs near zero do not turn rounding noise into
// huge ratios. Any NaN (an output left unwritten, poisoned) gives NaN.
double max_relative_error(const std::vector<float>& got, const std::vector<float>& want);

inline bool error_ok(double error, double limit = kMaxRelativeError) { return error <= limit; }  // false for NaN

// ---------------------------------------------------------------------------
// Output.

std::string iso_date_utc();

// Finite numbers rounded to `decimals`; NaN (not measured) becomes null.
Json number(double value, int decimals);

// Errors are kept unrounded: they are small by design.
Json error_value(double value);

std::string commit_from_environment();

// The start of a results document: gpu, date, commit, copy_ceiling_tbps,
// cudnn_version; the caller adds its own keys, then hot_launches ... rows
// through finish_document.
Json start_document(const std::string& gpu, double ceiling_tbps, const CommonOptions& options);
void finish_document(Json& document, const CommonOptions& options, const Json& rows);

void write_file(const std::string& path, const std::string& text);

std::string csv_field(const Json& value);

// The same columns as the JSON rows, in the same order.
std::string rows_csv(const Json& rows);

std::string fixed(double value, int decimals, const char* suffix = "");

// Prints rows of cells with every column as wide as its widest cell; text
// columns (listed in `left`) align left, numbers right.
void print_table(const std::vector<std::vector<std::string>>& cells, const std::vector<bool>& left);

std::string gpu_name();

// The largest difference between a tuned and the default kernel's outputs,
// relative to the largest output: both compute the same sums, in orders that
// the schedules may change. In a half dtype the float sums may then round to
// neighbouring elements: up to two units of roundoff apart.
constexpr double kMaxTunedRelativeError = 1e-5;
double tuned_error_limit(convgen::DataType dtype);

// The unit roundoff of `dtype`, 2^-(significand bits + 1): float16 2^-11, bfloat16 2^-8.
double unit_roundoff(convgen::DataType dtype);

// The schedule summary of the kernel `choice` names, from its library's list.
template <typename Info>
std::string schedule_of(const std::vector<Info>& kernels, const convgen::KernelChoice& choice) {
  if (!choice.specialized) return "generic";
  for (const Info& k : kernels) {
    if (k.name == choice.kernel) return k.schedule;
  }
  return "?";
}

}  // namespace bench_common
