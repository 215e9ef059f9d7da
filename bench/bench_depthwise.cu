// convgen_bench_depthwise: times the convgen kernels of bench/depthwise_bench.yaml
// beside cuDNN, on the same GPU in the same run, for every row of a benchmark CSV.
//
// Per row it measures
//   - the convgen kernel for the row (with its fused epilogue), hot and cold;
//   - the same convolution without epilogue through convgen, hot;
//   - cuDNN's fastest fp32 (FMA, no TF32) algorithm for the convolution alone,
//     hot and cold, and checks that its output matches convgen's;
//   - a device-to-device copy of as many bytes as the row moves, cold: what
//     any kernel of that size reaches;
// and reports each against the floor set by the copy bandwidth measured at
// start-up. See --help for the options and the timing method.
#include "bench.h"  // generated from bench/depthwise_bench.yaml: namespace convgen::bench

#include <convgen/convgen.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

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

[[noreturn]] void fail(const char* file, int line, const std::string& what) {
  std::fprintf(stderr, "%s:%d: error: %s\n", file, line, what.c_str());
  std::exit(EXIT_FAILURE);
}

void check_cuda(cudaError_t error, const char* call, const char* file, int line) {
  if (error != cudaSuccess) {
    fail(file, line,
         std::string(call) + " failed: " + cudaGetErrorName(error) + ": " + cudaGetErrorString(error));
  }
}

void check_cudnn(cudnnStatus_t status, const char* call, const char* file, int line) {
  if (status != CUDNN_STATUS_SUCCESS) {
    fail(file, line, std::string(call) + " failed: " + cudnnGetErrorString(status));
  }
}

void check_convgen(const convgen::Status& status, const char* call, const char* file, int line) {
  if (!status.ok()) {
    fail(file, line,
         std::string(call) + " failed: " + convgen::to_string(status.code) + ": " + status.message);
  }
}

#define CUDA_CHECK(call) check_cuda((call), #call, __FILE__, __LINE__)
#define CUDNN_CHECK(call) check_cudnn((call), #call, __FILE__, __LINE__)
#define CONVGEN_CHECK(call) check_convgen((call), #call, __FILE__, __LINE__)

// ---------------------------------------------------------------------------
// Command line.

struct Options {
  std::string csv_path = "bench/depthwise.csv";
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

Options parse_options(int argc, char** argv) {
  Options options;
  CLI::App app{"Times convgen depthwise kernels beside cuDNN for each row of a benchmark CSV.",
               "convgen_bench_depthwise"};
  app.add_option("--csv", options.csv_path, "benchmark CSV (suite,n,c,h,w,kh,kw,stride,pad,mult,epilogue)")
      ->capture_default_str();
  app.add_option("--suite", options.suites, "only rows of this suite (repeatable)");
  app.add_option("--filter", options.kernel_filter, "only rows whose convgen kernel name contains this");
  app.add_option("--json", options.json_path, "write the results as JSON to this file");
  app.add_option("--csv-out", options.csv_out_path, "write the results as CSV to this file");
  app.add_option("--hot-launches", options.hot_launches, "launches captured in one CUDA graph (hot timing)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000000));
  app.add_option("--hot-replays", options.hot_replays, "timed replays of that graph; the median counts")
      ->capture_default_str()
      ->check(CLI::Range(5, 1000000));
  app.add_option("--trials", options.trials, "cold runs (L2 flushed before each); the median counts")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000000));
  app.add_option("--seed", options.seed, "seed of the random inputs")->capture_default_str();
  app.add_flag("--no-cudnn", options.no_cudnn, "time convgen only; skip cuDNN and the cross-check");
  app.add_option("--flush", options.flush,
                 "how cold runs flush L2: 'memset' writes the 256 MiB scratch buffer (L2 left full of dirty\n"
                 "lines, as triton's do_bench does), 'read' reads it (L2 left clean)")
      ->capture_default_str()
      ->check(CLI::IsMember({"memset", "read"}));
  app.footer(
      "Timing: 'hot' = --hot-launches launches captured in one CUDA graph, replayed after a warm-up;\n"
      "median replay time / launches (L2 warm, no launch gaps). 'cold' = a 256 MiB memset flushes L2\n"
      "before every run (--flush read: a read of it), cudaEvents around the kernel alone; median of --trials runs.\n"
      "floor_us = bytes the problem must move (input + filter + output + epilogue parameters) at the\n"
      "copy ceiling (1 GiB device-to-device copy, bytes read + written, measured in the same run);\n"
      "*_frac_ceiling = floor_us / cold time. The cuDNN columns time the convolution alone.\n"
      "copy_cold_us: cudaMemcpyAsync of half the row's bytes (reads + writes = the row's), cold.\n"
      "Environment: CONVGEN_COMMIT is written to the JSON as 'commit'.");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    std::exit(app.exit(error));
  }
  return options;
}

// ---------------------------------------------------------------------------
// Benchmark CSV.

// One row of the CSV, as written there.
struct BenchCase {
  std::string suite;
  int csv_line = 0;
  int n = 0, c = 0, h = 0, w = 0, kh = 0, kw = 0, stride = 0, mult = 0;
  std::string pad;       // "same" or "valid"
  std::string epilogue;  // e.g. "scale_shift_relu6"
};

// CSV epilogue names; "relu"/"relu6" alone mean an activation with no affine step.
struct EpilogueName {
  const char* name;
  convgen::Epilogue epilogue;
  convgen::Activation activation;
};
constexpr EpilogueName kEpilogueNames[] = {
    {"none", convgen::Epilogue::kNone, convgen::Activation::kNone},
    {"bias", convgen::Epilogue::kBias, convgen::Activation::kNone},
    {"scale_shift", convgen::Epilogue::kScaleShift, convgen::Activation::kNone},
    {"bias_relu", convgen::Epilogue::kBias, convgen::Activation::kRelu},
    {"scale_shift_relu", convgen::Epilogue::kScaleShift, convgen::Activation::kRelu},
    {"scale_shift_relu6", convgen::Epilogue::kScaleShift, convgen::Activation::kRelu6},
    {"relu", convgen::Epilogue::kNone, convgen::Activation::kRelu},
    {"relu6", convgen::Epilogue::kNone, convgen::Activation::kRelu6},
};

const EpilogueName* find_epilogue(const std::string& name) {
  for (const auto& entry : kEpilogueNames) {
    if (name == entry.name) return &entry;
  }
  return nullptr;
}

// Reports a problem with the CSV itself; line 0 means the file as a whole.
[[noreturn]] void fail_csv(const std::string& path, int line, const std::string& what) {
  const std::string where = line > 0 ? path + ":" + std::to_string(line) : path;
  std::fprintf(stderr, "%s: error: %s\n", where.c_str(), what.c_str());
  std::exit(EXIT_FAILURE);
}

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream stream(line);
  std::string field;
  while (std::getline(stream, field, ',')) {
    const auto first = field.find_first_not_of(" \t\r");
    const auto last = field.find_last_not_of(" \t\r");
    fields.push_back(first == std::string::npos ? "" : field.substr(first, last - first + 1));
  }
  if (!line.empty() && line.back() == ',') fields.push_back("");
  return fields;
}

int parse_positive(const std::string& text, const char* column, const std::string& path, int line) {
  size_t used = 0;
  int value = 0;
  try {
    value = std::stoi(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty() || value <= 0) {
    fail_csv(path, line, std::string(column) + " must be a positive integer, not '" + text + "'");
  }
  return value;
}

// Reads the benchmark CSV; columns are found by their header names.
std::vector<BenchCase> read_cases(const std::string& path) {
  std::ifstream file(path);
  if (!file) fail_csv(path, 0, "cannot open the benchmark CSV (see --csv)");

  const std::vector<std::string> columns = {"suite", "n",      "c",   "h",    "w",       "kh",
                                            "kw",    "stride", "pad", "mult", "epilogue"};
  std::vector<int> index;  // index[i]: position of columns[i] in each line
  size_t header_size = 0;
  std::vector<BenchCase> cases;
  std::string line;
  for (int line_number = 1; std::getline(file, line); ++line_number) {
    const auto fields = split_csv_line(line);
    if (fields.empty() || fields[0].empty() || fields[0][0] == '#') continue;
    if (index.empty()) {
      for (const auto& column : columns) {
        const auto found = std::find(fields.begin(), fields.end(), column);
        if (found == fields.end()) fail_csv(path, line_number, "header lacks column '" + column + "'");
        index.push_back(static_cast<int>(found - fields.begin()));
      }
      header_size = fields.size();
      continue;
    }
    if (fields.size() != header_size) {
      fail_csv(path, line_number,
               "expected " + std::to_string(header_size) + " fields, found " + std::to_string(fields.size()));
    }
    auto field = [&](int i) { return fields[index[i]]; };
    auto number = [&](int i) { return parse_positive(field(i), columns[i].c_str(), path, line_number); };
    BenchCase row;
    row.suite = field(0);
    row.csv_line = line_number;
    row.n = number(1);
    row.c = number(2);
    row.h = number(3);
    row.w = number(4);
    row.kh = number(5);
    row.kw = number(6);
    row.stride = number(7);
    row.pad = field(8);
    row.mult = number(9);
    row.epilogue = field(10);
    if (row.pad != "same" && row.pad != "valid") {
      fail_csv(path, line_number, "pad must be 'same' or 'valid', not '" + row.pad + "'");
    }
    if (!find_epilogue(row.epilogue)) fail_csv(path, line_number, "unknown epilogue '" + row.epilogue + "'");
    cases.push_back(row);
  }
  if (index.empty()) fail_csv(path, 0, "no header line");
  return cases;
}

// ---------------------------------------------------------------------------
// Problems.

convgen::DepthwiseProblem to_problem(const BenchCase& row) {
  convgen::DepthwiseProblem problem;
  problem.n = row.n;
  problem.c = row.c;
  problem.h = row.h;
  problem.w = row.w;
  problem.kh = row.kh;
  problem.kw = row.kw;
  problem.stride_h = problem.stride_w = row.stride;
  // "same": (k-1)/2 on every side, as PyTorch's padding=k//2 for odd k.
  const bool same = row.pad == "same";
  problem.pad_top = problem.pad_bottom = same ? (row.kh - 1) / 2 : 0;
  problem.pad_left = problem.pad_right = same ? (row.kw - 1) / 2 : 0;
  problem.multiplier = row.mult;
  const EpilogueName* epilogue = find_epilogue(row.epilogue);
  problem.epilogue = epilogue->epilogue;
  problem.activation = epilogue->activation;
  return problem;
}

bool has_epilogue(const convgen::DepthwiseProblem& problem) {
  return problem.epilogue != convgen::Epilogue::kNone || problem.activation != convgen::Activation::kNone;
}

// The same convolution with nothing after it: what cuDNN computes.
convgen::DepthwiseProblem without_epilogue(convgen::DepthwiseProblem problem) {
  problem.epilogue = convgen::Epilogue::kNone;
  problem.activation = convgen::Activation::kNone;
  return problem;
}

size_t input_count(const convgen::DepthwiseProblem& p) { return size_t(p.n) * p.c * p.h * p.w; }
size_t filter_count(const convgen::DepthwiseProblem& p) { return size_t(p.out_channels()) * p.kh * p.kw; }
size_t output_count(const convgen::DepthwiseProblem& p) {
  return size_t(p.n) * p.out_channels() * p.out_h() * p.out_w();
}
size_t epilogue_param_count(const convgen::DepthwiseProblem& p) {
  switch (p.epilogue) {
    case convgen::Epilogue::kBias:
      return size_t(p.out_channels());
    case convgen::Epilogue::kScaleShift:
      return 2 * size_t(p.out_channels());
    case convgen::Epilogue::kNone:
      break;
  }
  return 0;
}

// The least time any kernel can take: everything it must read once and write
// once, at the copy ceiling. tbps * 1e6 is bytes per microsecond.
size_t bytes_moved(const convgen::DepthwiseProblem& p) {
  return (input_count(p) + filter_count(p) + output_count(p) + epilogue_param_count(p)) * sizeof(float);
}

double floor_us(const convgen::DepthwiseProblem& p, double ceiling_tbps) {
  return double(bytes_moved(p)) / (ceiling_tbps * 1e6);
}

std::string shape_text(const convgen::DepthwiseProblem& p) {
  return std::to_string(p.n) + "x" + std::to_string(p.c) + "x" + std::to_string(p.h) + "x" +
         std::to_string(p.w);
}

// ---------------------------------------------------------------------------
// Device memory.

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes) : bytes_(bytes) {
    if (bytes_ > 0) CUDA_CHECK(cudaMalloc(&data_, bytes_));
  }
  ~DeviceBuffer() {
    if (data_) CUDA_CHECK(cudaFree(data_));
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept { swap(other); }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    swap(other);
    return *this;
  }

  static DeviceBuffer floats(size_t count) { return DeviceBuffer(count * sizeof(float)); }
  static DeviceBuffer upload(const std::vector<float>& values) {
    DeviceBuffer buffer = floats(values.size());
    if (!values.empty()) {
      CUDA_CHECK(cudaMemcpy(buffer.data_, values.data(), buffer.bytes_, cudaMemcpyHostToDevice));
    }
    return buffer;
  }

  void* data() const { return data_; }
  float* f32() const { return static_cast<float*>(data_); }
  size_t bytes() const { return bytes_; }

  std::vector<float> download() const {
    std::vector<float> values(bytes_ / sizeof(float));
    if (bytes_ > 0) CUDA_CHECK(cudaMemcpy(values.data(), data_, bytes_, cudaMemcpyDeviceToHost));
    return values;
  }

 private:
  void swap(DeviceBuffer& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(bytes_, other.bytes_);
  }

  void* data_ = nullptr;
  size_t bytes_ = 0;
};

// Uniform in [-1, 1): 24 random bits per value, each exactly representable.
std::vector<float> random_uniform(size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<float> values(count);
  for (float& value : values) value = float(rng() >> 40) * (2.0f / 16777216.0f) - 1.0f;
  return values;
}

// The inputs of one problem, on the device; the epilogue parameters also on
// the host, for the reference epilogue.
struct Operands {
  DeviceBuffer input, filter, bias, scale, shift;
  std::vector<float> host_bias, host_scale, host_shift;
};

Operands make_operands(const convgen::DepthwiseProblem& problem, uint64_t seed) {
  Operands ops;
  ops.input = DeviceBuffer::upload(random_uniform(input_count(problem), seed));
  ops.filter = DeviceBuffer::upload(random_uniform(filter_count(problem), seed + 1));
  const size_t channels = size_t(problem.out_channels());
  if (problem.epilogue == convgen::Epilogue::kBias) {
    ops.host_bias = random_uniform(channels, seed + 2);
    ops.bias = DeviceBuffer::upload(ops.host_bias);
  } else if (problem.epilogue == convgen::Epilogue::kScaleShift) {
    ops.host_scale = random_uniform(channels, seed + 3);
    ops.host_shift = random_uniform(channels, seed + 4);
    ops.scale = DeviceBuffer::upload(ops.host_scale);
    ops.shift = DeviceBuffer::upload(ops.host_shift);
  }
  // The uploads ran on the legacy default stream, which the non-blocking
  // stream the kernels run on does not wait for.
  CUDA_CHECK(cudaDeviceSynchronize());
  return ops;
}

// Pointers for `problem`; those its epilogue does not use stay null, as the API requires.
convgen::DepthwiseArgs make_args(const convgen::DepthwiseProblem& problem, const Operands& ops,
                                 const DeviceBuffer& output) {
  convgen::DepthwiseArgs args;
  args.input = ops.input.f32();
  args.filter = ops.filter.f32();
  args.output = output.f32();
  if (problem.epilogue == convgen::Epilogue::kBias) args.bias = ops.bias.f32();
  if (problem.epilogue == convgen::Epilogue::kScaleShift) {
    args.scale = ops.scale.f32();
    args.shift = ops.shift.f32();
  }
  return args;
}

// All bits set is a NaN: a kernel that leaves any output unwritten fails the check.
void poison(const DeviceBuffer& buffer, cudaStream_t stream) {
  CUDA_CHECK(cudaMemsetAsync(buffer.data(), 0xFF, buffer.bytes(), stream));
}

// ---------------------------------------------------------------------------
// Timing.

using Launch = std::function<void(cudaStream_t)>;

double median(std::vector<float> values) {
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : 0.5 * (double(values[mid - 1]) + values[mid]);
}

// Reads every word of `data`, so that L2 ends up holding clean lines of it.
// The sum is stored only in a case that never happens, which keeps the loads.
__global__ void read_every_word(const uint4* data, size_t count, unsigned* sink) {
  unsigned sum = 0;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count; i += size_t{gridDim.x} * blockDim.x) {
    const uint4 v = data[i];
    sum += v.x ^ v.y ^ v.z ^ v.w;
  }
  if (sum == 0x9e3779b9u) *sink = sum;
}

// Owns the stream everything runs on, a pair of events and the L2 scratch buffer.
class Stopwatch {
 public:
  explicit Stopwatch(bool flush_by_reading)
      : l2_scratch_(kL2FlushBytes), sink_(sizeof(unsigned)), flush_by_reading_(flush_by_reading) {
    // Non-blocking: graph capture must not interact with the legacy default stream.
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreate(&start_));
    CUDA_CHECK(cudaEventCreate(&stop_));
    CUDA_CHECK(cudaMemsetAsync(l2_scratch_.data(), 0, l2_scratch_.bytes(), stream_));
  }
  ~Stopwatch() {
    CUDA_CHECK(cudaEventDestroy(stop_));
    CUDA_CHECK(cudaEventDestroy(start_));
    CUDA_CHECK(cudaStreamDestroy(stream_));
  }
  Stopwatch(const Stopwatch&) = delete;
  Stopwatch& operator=(const Stopwatch&) = delete;

  cudaStream_t stream() const { return stream_; }

  void synchronize() const { CUDA_CHECK(cudaStreamSynchronize(stream_)); }

  // Times `launch` alone, `runs` times, in milliseconds. With flush_l2, a
  // memset (or a read) of the scratch buffer evicts L2 before each run; it is
  // enqueued before the start event, so it is not timed, and it keeps the GPU
  // busy while the launch is queued, so launch latency is not timed either.
  std::vector<float> time_runs_ms(const Launch& launch, int runs, bool flush_l2) {
    std::vector<float> times;
    for (int run = 0; run < runs; ++run) {
      if (flush_l2) flush(run);
      CUDA_CHECK(cudaEventRecord(start_, stream_));
      launch(stream_);
      CUDA_CHECK(cudaEventRecord(stop_, stream_));
      CUDA_CHECK(cudaEventSynchronize(stop_));
      float ms = 0.0f;
      CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
      times.push_back(ms);
    }
    return times;
  }

  // Median microseconds per launch with L2 warm and no launch gaps: `launches`
  // launches captured in one CUDA graph, replayed `replays` times after a warm-up.
  double hot_us(const Launch& launch, int launches, int replays) {
    launch(stream_);  // first calls may load modules or pick plans: keep that out of the graph
    synchronize();

    cudaGraph_t graph = nullptr;
    // Relaxed: a library may legitimately make calls such as cudaMalloc while
    // we capture; they run instead of failing the capture.
    CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeRelaxed));
    for (int i = 0; i < launches; ++i) launch(stream_);
    CUDA_CHECK(cudaStreamEndCapture(stream_, &graph));
    cudaGraphExec_t exec = nullptr;
    CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));

    const Launch replay = [exec](cudaStream_t stream) { CUDA_CHECK(cudaGraphLaunch(exec, stream)); };
    time_runs_ms(replay, 1, false);  // warm-up replay: uploads the graph
    const double ms = median(time_runs_ms(replay, replays, false));

    CUDA_CHECK(cudaGraphExecDestroy(exec));
    CUDA_CHECK(cudaGraphDestroy(graph));
    return ms * 1000.0 / launches;
  }

  // Median microseconds of one launch with L2 flushed before it.
  double cold_us(const Launch& launch, int trials) {
    launch(stream_);  // warm-up, as for hot_us
    synchronize();
    return median(time_runs_ms(launch, trials, true)) * 1000.0;
  }

 private:
  // Writing the scratch buffer leaves L2 full of dirty lines, whose write-back
  // the timed kernel then pays for as it allocates lines of its own; reading
  // it leaves L2 clean.
  void flush(int run) {
    if (flush_by_reading_) {
      const size_t words = l2_scratch_.bytes() / sizeof(uint4);
      read_every_word<<<1024, 512, 0, stream_>>>(static_cast<const uint4*>(l2_scratch_.data()), words,
                                                 static_cast<unsigned*>(sink_.data()));
      CUDA_CHECK(cudaGetLastError());
    } else {
      CUDA_CHECK(cudaMemsetAsync(l2_scratch_.data(), run & 0xFF, l2_scratch_.bytes(), stream_));
    }
  }

  DeviceBuffer l2_scratch_;
  DeviceBuffer sink_;
  bool flush_by_reading_ = false;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

// Device-to-device copy bandwidth, bytes read + written, in TB/s: the
// ceiling a memory-bound kernel is measured against.
double measure_copy_ceiling_tbps(Stopwatch& stopwatch) {
  DeviceBuffer source(kCopyCeilingBytes), destination(kCopyCeilingBytes);
  CUDA_CHECK(cudaMemsetAsync(source.data(), 1, source.bytes(), stopwatch.stream()));
  const Launch copy = [&](cudaStream_t stream) {
    CUDA_CHECK(
        cudaMemcpyAsync(destination.data(), source.data(), source.bytes(), cudaMemcpyDeviceToDevice, stream));
  };
  stopwatch.time_runs_ms(copy, 1, false);  // warm-up
  const double ms = median(stopwatch.time_runs_ms(copy, kCopyCeilingTrials, false));
  return 2.0 * double(kCopyCeilingBytes) / (ms * 1e-3) / 1e12;
}

// ---------------------------------------------------------------------------
// cuDNN: the convolution alone, grouped with one group per input channel.

const char* algo_name(cudnnConvolutionFwdAlgo_t algo) {
  switch (algo) {
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM:
      return "IMPLICIT_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM:
      return "IMPLICIT_PRECOMP_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_GEMM:
      return "GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_DIRECT:
      return "DIRECT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT:
      return "FFT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING:
      return "FFT_TILING";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD:
      return "WINOGRAD";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED:
      return "WINOGRAD_NONFUSED";
    case CUDNN_CONVOLUTION_FWD_ALGO_COUNT:
      break;
  }
  return "unknown";
}

// cuDNN pads each axis symmetrically; a problem padded otherwise has no cuDNN twin.
bool cudnn_supports(const convgen::DepthwiseProblem& p) {
  return p.pad_top == p.pad_bottom && p.pad_left == p.pad_right;
}

class CudnnDepthwise {
 public:
  // Describes the convolution of `problem` (its epilogue is ignored) and picks
  // the fastest fp32 algorithm by running them on x, w and y.
  CudnnDepthwise(cudnnHandle_t handle, cudaStream_t stream, const convgen::DepthwiseProblem& p,
                 const float* x, const float* w, float* y)
      : handle_(handle), x_(x), w_(w), y_(y) {
    CUDNN_CHECK(cudnnSetStream(handle_, stream));  // the algorithm search runs on it
    CUDNN_CHECK(cudnnCreateTensorDescriptor(&x_desc_));
    CUDNN_CHECK(cudnnCreateTensorDescriptor(&y_desc_));
    CUDNN_CHECK(cudnnCreateFilterDescriptor(&w_desc_));
    CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&conv_desc_));

    CUDNN_CHECK(cudnnSetTensor4dDescriptor(x_desc_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, p.n, p.c, p.h, p.w));
    CUDNN_CHECK(cudnnSetFilter4dDescriptor(w_desc_, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, p.out_channels(), 1,
                                           p.kh, p.kw));
    CUDNN_CHECK(cudnnSetConvolution2dDescriptor(conv_desc_, p.pad_top, p.pad_left, p.stride_h, p.stride_w,
                                                p.dilation_h, p.dilation_w, CUDNN_CROSS_CORRELATION,
                                                CUDNN_DATA_FLOAT));
    CUDNN_CHECK(cudnnSetConvolutionGroupCount(conv_desc_, p.c));
    // FMA only: with the default math type cuDNN may run fp32 on TF32 tensor cores.
    CUDNN_CHECK(cudnnSetConvolutionMathType(conv_desc_, CUDNN_FMA_MATH));

    int out_n = 0, out_c = 0, out_h = 0, out_w = 0;
    CUDNN_CHECK(
        cudnnGetConvolution2dForwardOutputDim(conv_desc_, x_desc_, w_desc_, &out_n, &out_c, &out_h, &out_w));
    if (out_n != p.n || out_c != p.out_channels() || out_h != p.out_h() || out_w != p.out_w()) {
      fail(__FILE__, __LINE__, "cuDNN's output shape differs from convgen's for " + convgen::describe(p));
    }
    CUDNN_CHECK(
        cudnnSetTensor4dDescriptor(y_desc_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, out_n, out_c, out_h, out_w));

    workspace_ = DeviceBuffer(largest_workspace_bytes());
    choose_algorithm();
  }

  ~CudnnDepthwise() {
    CUDNN_CHECK(cudnnDestroyConvolutionDescriptor(conv_desc_));
    CUDNN_CHECK(cudnnDestroyFilterDescriptor(w_desc_));
    CUDNN_CHECK(cudnnDestroyTensorDescriptor(y_desc_));
    CUDNN_CHECK(cudnnDestroyTensorDescriptor(x_desc_));
  }
  CudnnDepthwise(const CudnnDepthwise&) = delete;
  CudnnDepthwise& operator=(const CudnnDepthwise&) = delete;

  void run(cudaStream_t stream) const {
    const float alpha = 1.0f, beta = 0.0f;
    CUDNN_CHECK(cudnnSetStream(handle_, stream));
    CUDNN_CHECK(cudnnConvolutionForward(handle_, &alpha, x_desc_, x_, w_desc_, w_, conv_desc_, algo_,
                                        workspace_.data(), workspace_.bytes(), &beta, y_desc_, y_));
  }

  const char* algorithm() const { return algo_name(algo_); }

 private:
  // The workspace of the hungriest algorithm that fits under the cap, so that
  // the search below may try every algorithm that is reasonable to run.
  size_t largest_workspace_bytes() const {
    size_t largest = 0;
    for (int i = 0; i < CUDNN_CONVOLUTION_FWD_ALGO_COUNT; ++i) {
      size_t bytes = 0;
      // Not checked as an error: cuDNN answers "not supported" for algorithms
      // that cannot run this convolution, and those are simply skipped.
      const cudnnStatus_t status = cudnnGetConvolutionForwardWorkspaceSize(
          handle_, x_desc_, w_desc_, conv_desc_, y_desc_, cudnnConvolutionFwdAlgo_t(i), &bytes);
      if (status == CUDNN_STATUS_SUCCESS && bytes <= kMaxCudnnWorkspaceBytes)
        largest = std::max(largest, bytes);
    }
    return largest;
  }

  // Runs every algorithm on the real buffers and keeps the fastest that
  // succeeded without tensor cores.
  void choose_algorithm() {
    cudnnConvolutionFwdAlgoPerf_t results[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int returned = 0;
    CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithmEx(handle_, x_desc_, x_, w_desc_, w_, conv_desc_, y_desc_,
                                                       y_, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned,
                                                       results, workspace_.data(), workspace_.bytes()));
    // Results come sorted by time, fastest first.
    for (int i = 0; i < returned; ++i) {
      const auto& result = results[i];
      const bool tensor_cores =
          result.mathType == CUDNN_TENSOR_OP_MATH || result.mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
      if (result.status == CUDNN_STATUS_SUCCESS && !tensor_cores && result.memory <= workspace_.bytes()) {
        algo_ = result.algo;
        return;
      }
    }
    fail(__FILE__, __LINE__, "cuDNN found no fp32 FMA algorithm for this convolution");
  }

  cudnnHandle_t handle_;
  const float* x_;
  const float* w_;
  float* y_;
  cudnnTensorDescriptor_t x_desc_ = nullptr, y_desc_ = nullptr;
  cudnnFilterDescriptor_t w_desc_ = nullptr;
  cudnnConvolutionDescriptor_t conv_desc_ = nullptr;
  cudnnConvolutionFwdAlgo_t algo_ = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  DeviceBuffer workspace_;
};

// ---------------------------------------------------------------------------
// Cross-check.

// Largest |got - want| divided by the largest |want|: an error relative to the
// output's scale, so that outputs near zero do not turn rounding noise into
// huge ratios. Any NaN (an output left unwritten, poisoned) gives NaN.
double max_relative_error(const std::vector<float>& got, const std::vector<float>& want) {
  double largest_difference = 0.0, largest_magnitude = 0.0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(got[i]) || std::isnan(want[i])) return kNaN;
    largest_difference = std::max(largest_difference, std::fabs(double(got[i]) - want[i]));
    largest_magnitude = std::max(largest_magnitude, std::fabs(double(want[i])));
  }
  return largest_magnitude > 0.0 ? largest_difference / largest_magnitude : largest_difference;
}

// `conv` (cuDNN's output) with the problem's epilogue applied on the host.
std::vector<float> apply_epilogue(std::vector<float> conv, const convgen::DepthwiseProblem& p,
                                  const Operands& ops) {
  const size_t plane = size_t(p.out_h()) * p.out_w();
  for (size_t i = 0; i < conv.size(); ++i) {
    const size_t channel = (i / plane) % size_t(p.out_channels());
    float value = conv[i];
    if (p.epilogue == convgen::Epilogue::kBias) value += ops.host_bias[channel];
    if (p.epilogue == convgen::Epilogue::kScaleShift) {
      value = value * ops.host_scale[channel] + ops.host_shift[channel];
    }
    if (p.activation != convgen::Activation::kNone) value = std::max(value, 0.0f);
    if (p.activation == convgen::Activation::kRelu6) value = std::min(value, 6.0f);
    conv[i] = value;
  }
  return conv;
}

bool error_ok(double error) { return error <= kMaxRelativeError; }  // false for NaN too

// ---------------------------------------------------------------------------
// One benchmark row.

// A row selected for the run, with the kernels that will serve it.
struct Selected {
  BenchCase bench;
  convgen::DepthwiseProblem problem;
  convgen::KernelChoice choice;        // for the row
  convgen::KernelChoice plain_choice;  // for the row without epilogue
};

// A selected row and what was measured for it; NaN: not measured.
struct RowResult : Selected {
  explicit RowResult(const Selected& selected) : Selected(selected) {}

  double floor_us = kNaN;
  double convgen_hot_us = kNaN, convgen_cold_us = kNaN, convgen_noepilogue_hot_us = kNaN;
  double cudnn_hot_us = kNaN, cudnn_cold_us = kNaN;
  // A device-to-device copy that reads and writes as many bytes as the row,
  // cold: what any kernel of this size reaches, launch and ramp included.
  double copy_cold_us = kNaN;
  std::string cudnn_algo;           // empty: cuDNN not run
  double max_rel_err = kNaN;        // convgen without epilogue vs cuDNN
  double fused_max_rel_err = kNaN;  // the row's kernel vs cuDNN + the epilogue on the host
  bool check_ok = true;             // false: a cross-check failed

  bool cudnn_ran() const { return !cudnn_algo.empty(); }
  double convgen_frac_ceiling() const { return floor_us / convgen_cold_us; }
  double cudnn_frac_ceiling() const { return floor_us / cudnn_cold_us; }
  double copy_frac_ceiling() const { return floor_us / copy_cold_us; }
  double speedup_vs_cudnn() const { return cudnn_hot_us / convgen_hot_us; }
};

Launch convgen_launch(const convgen::DepthwiseProblem& problem, const convgen::DepthwiseArgs& args) {
  return [problem, args](cudaStream_t stream) {
    CONVGEN_CHECK(convgen::bench::depthwise_conv2d(problem, args, stream));
  };
}

// Compares the outputs of one run on poisoned buffers with cuDNN's: the plain
// convolution directly, the fused kernel after the epilogue is applied to
// cuDNN's output on the host.
void check_against_cudnn(RowResult& row, const Operands& ops, const std::vector<float>& fused_out,
                         const std::vector<float>& plain_out, const std::vector<float>& cudnn_out) {
  row.max_rel_err = max_relative_error(plain_out, cudnn_out);
  row.fused_max_rel_err = max_relative_error(fused_out, apply_epilogue(cudnn_out, row.problem, ops));
  row.check_ok = error_ok(row.max_rel_err) && error_ok(row.fused_max_rel_err);
  if (!row.check_ok) {
    std::fprintf(stderr,
                 "warning: %s (csv line %d): convgen differs from cuDNN: max relative error %.3g without "
                 "epilogue, %.3g with (limit %.0e)\n",
                 row.bench.suite.c_str(), row.bench.csv_line, row.max_rel_err, row.fused_max_rel_err,
                 kMaxRelativeError);
  }
}

RowResult measure_row(const Selected& selected, double ceiling_tbps, cudnnHandle_t cudnn_handle,
                      Stopwatch& stopwatch, const Options& options, uint64_t seed) {
  RowResult row(selected);
  const convgen::DepthwiseProblem plain_problem = without_epilogue(row.problem);
  row.floor_us = floor_us(row.problem, ceiling_tbps);

  const Operands ops = make_operands(row.problem, seed);
  const size_t outputs = output_count(row.problem);
  const DeviceBuffer out = DeviceBuffer::floats(outputs), plain_out = DeviceBuffer::floats(outputs);
  const Launch fused = convgen_launch(row.problem, make_args(row.problem, ops, out));
  const Launch plain = convgen_launch(plain_problem, make_args(plain_problem, ops, plain_out));

  if (cudnn_handle && cudnn_supports(row.problem)) {
    const DeviceBuffer cudnn_out = DeviceBuffer::floats(outputs);
    const CudnnDepthwise cudnn(cudnn_handle, stopwatch.stream(), row.problem, ops.input.f32(),
                               ops.filter.f32(), cudnn_out.f32());
    const Launch conv = [&cudnn](cudaStream_t stream) { cudnn.run(stream); };
    row.cudnn_algo = cudnn.algorithm();

    for (const DeviceBuffer* buffer : {&out, &plain_out, &cudnn_out}) poison(*buffer, stopwatch.stream());
    for (const Launch* launch : {&fused, &plain, &conv}) (*launch)(stopwatch.stream());
    stopwatch.synchronize();
    check_against_cudnn(row, ops, out.download(), plain_out.download(), cudnn_out.download());

    row.cudnn_hot_us = stopwatch.hot_us(conv, options.hot_launches, options.hot_replays);
    row.cudnn_cold_us = stopwatch.cold_us(conv, options.trials);
  }

  row.convgen_hot_us = stopwatch.hot_us(fused, options.hot_launches, options.hot_replays);
  row.convgen_cold_us = stopwatch.cold_us(fused, options.trials);
  {
    const size_t half = bytes_moved(row.problem) / 2;
    const DeviceBuffer from(half), to(half);
    const Launch copy = [&](cudaStream_t stream) {
      CUDA_CHECK(cudaMemcpyAsync(to.data(), from.data(), half, cudaMemcpyDeviceToDevice, stream));
    };
    row.copy_cold_us = stopwatch.cold_us(copy, options.trials);
  }
  // Without an epilogue the plain problem is the row's own: measured once.
  row.convgen_noepilogue_hot_us = has_epilogue(row.problem)
                                      ? stopwatch.hot_us(plain, options.hot_launches, options.hot_replays)
                                      : row.convgen_hot_us;
  return row;
}

// ---------------------------------------------------------------------------
// Selection of rows.

bool wanted_suite(const std::string& suite, const Options& options) {
  return options.suites.empty() ||
         std::find(options.suites.begin(), options.suites.end(), suite) != options.suites.end();
}

std::vector<Selected> select_rows(const std::vector<BenchCase>& cases, const Options& options) {
  std::vector<Selected> selected;
  for (const BenchCase& bench : cases) {
    if (!wanted_suite(bench.suite, options)) continue;
    const convgen::DepthwiseProblem problem = to_problem(bench);
    const convgen::KernelChoice choice = convgen::bench::find(problem);
    if (!choice.status.ok()) {
      fail_csv(options.csv_path, bench.csv_line, "invalid problem: " + choice.status.message);
    }
    if (choice.kernel.find(options.kernel_filter) == std::string::npos) continue;
    selected.push_back({bench, problem, choice, convgen::bench::find(without_epilogue(problem))});
  }
  return selected;
}

// Says up front which rows a generic kernel will serve: slow by design, and
// a sign that the library was built from a different spec.
void warn_about_generic_kernels(const std::vector<Selected>& selected) {
  for (const Selected& s : selected) {
    if (!s.choice.specialized) {
      std::fprintf(stderr, "warning: %s (csv line %d) is served by the GENERIC kernel: %s\n",
                   s.bench.suite.c_str(), s.bench.csv_line, s.choice.reason.c_str());
    }
    if (has_epilogue(s.problem) && !s.plain_choice.specialized) {
      std::fprintf(stderr, "warning: %s (csv line %d) without epilogue is served by the GENERIC kernel: %s\n",
                   s.bench.suite.c_str(), s.bench.csv_line, s.plain_choice.reason.c_str());
    }
  }
}

// ---------------------------------------------------------------------------
// Output.

std::string iso_date_utc() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[16];
  std::strftime(text, sizeof text, "%Y-%m-%d", &utc);
  return text;
}

// Finite numbers rounded to `decimals`; NaN (not measured) becomes null.
Json number(double value, int decimals) {
  if (!std::isfinite(value)) return nullptr;
  const double scale = std::pow(10.0, decimals);
  return std::round(value * scale) / scale;
}

// Errors are kept unrounded: they are small by design.
Json error_value(double value) { return std::isfinite(value) ? Json(value) : Json(nullptr); }

Json row_json(const RowResult& r) {
  const convgen::DepthwiseProblem& p = r.problem;
  Json row;
  row["suite"] = r.bench.suite;
  row["name"] = r.choice.kernel;
  row["specialized"] = r.choice.specialized;
  row["n"] = p.n;
  row["c"] = p.c;
  row["h"] = p.h;
  row["w"] = p.w;
  row["kh"] = p.kh;
  row["kw"] = p.kw;
  row["stride"] = r.bench.stride;
  row["pad"] = r.bench.pad;
  row["mult"] = p.multiplier;
  row["epilogue"] = r.bench.epilogue;
  row["out_h"] = p.out_h();
  row["out_w"] = p.out_w();
  row["floor_us"] = number(r.floor_us, 3);
  row["convgen_hot_us"] = number(r.convgen_hot_us, 3);
  row["convgen_cold_us"] = number(r.convgen_cold_us, 3);
  row["convgen_noepilogue_hot_us"] = number(r.convgen_noepilogue_hot_us, 3);
  row["noepilogue_name"] = r.plain_choice.kernel;
  row["noepilogue_specialized"] = r.plain_choice.specialized;
  row["cudnn_hot_us"] = number(r.cudnn_hot_us, 3);
  row["cudnn_cold_us"] = number(r.cudnn_cold_us, 3);
  row["cudnn_algo"] = r.cudnn_ran() ? Json(r.cudnn_algo) : Json(nullptr);
  row["convgen_frac_ceiling"] = number(r.convgen_frac_ceiling(), 4);
  row["cudnn_frac_ceiling"] = number(r.cudnn_frac_ceiling(), 4);
  row["copy_cold_us"] = number(r.copy_cold_us, 3);
  row["copy_frac_ceiling"] = number(r.copy_frac_ceiling(), 4);
  row["speedup_vs_cudnn"] = number(r.speedup_vs_cudnn(), 3);
  row["max_rel_err"] = error_value(r.max_rel_err);
  row["fused_max_rel_err"] = error_value(r.fused_max_rel_err);
  row["check_ok"] = r.cudnn_ran() ? Json(r.check_ok) : Json(nullptr);
  row["dispatch_reason"] = r.choice.reason;
  return row;
}

std::string commit_from_environment() {
  const char* commit = std::getenv("CONVGEN_COMMIT");
  return commit && *commit ? commit : "unknown";
}

// The whole run: where and how it was measured, then the rows.
Json results_document(const std::string& gpu, double ceiling_tbps, const Options& options, const Json& rows) {
  Json document;
  document["gpu"] = gpu;
  document["date"] = iso_date_utc();
  document["commit"] = commit_from_environment();
  document["copy_ceiling_tbps"] = number(ceiling_tbps, 4);
  document["cudnn_version"] = options.no_cudnn ? Json(nullptr) : Json(cudnnGetVersion());
  document["hot_launches"] = options.hot_launches;
  document["hot_replays"] = options.hot_replays;
  document["trials"] = options.trials;
  document["cold_flush"] = options.flush;
  document["rows"] = rows;
  return document;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream file(path);
  file << text;
  file.close();
  if (!file) {
    std::fprintf(stderr, "error: cannot write %s\n", path.c_str());
    std::exit(EXIT_FAILURE);
  }
  std::fprintf(stderr, "wrote %s\n", path.c_str());
}

std::string csv_field(const Json& value) {
  if (value.is_null()) return "";
  if (!value.is_string()) return value.dump();
  const std::string text = value.get<std::string>();
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char ch : text) quoted += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return quoted + "\"";
}

// The same columns as the JSON rows, in the same order.
std::string rows_csv(const Json& rows) {
  std::string text;
  if (rows.empty()) return text;
  std::string separator;
  for (const auto& item : rows.front().items()) text += std::exchange(separator, ",") + item.key();
  text += "\n";
  for (const auto& row : rows) {
    separator.clear();
    for (const auto& item : row.items()) text += std::exchange(separator, ",") + csv_field(item.value());
    text += "\n";
  }
  return text;
}

std::string fixed(double value, int decimals, const char* suffix = "") {
  if (!std::isfinite(value)) return "-";
  char text[64];
  std::snprintf(text, sizeof text, "%.*f%s", decimals, value, suffix);
  return text;
}

// Prints rows of cells with every column as wide as its widest cell; text
// columns (listed in `left`) align left, numbers right.
void print_table(const std::vector<std::vector<std::string>>& cells, const std::vector<bool>& left) {
  std::vector<size_t> width(left.size(), 0);
  for (const auto& row : cells) {
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  for (const auto& row : cells) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      const std::string pad(width[i] - row[i].size(), ' ');
      line += (i ? "  " : "") + (left[i] ? row[i] + pad : pad + row[i]);
    }
    line.erase(line.find_last_not_of(' ') + 1);
    std::cout << line << "\n";
  }
}

// Which kind of kernel served the row; GENERIC stands out on purpose.
std::string served_by(const RowResult& r) {
  std::string text = r.choice.specialized ? "specialized" : "GENERIC";
  if (r.choice.specialized && !r.plain_choice.specialized) text += " (plain: GENERIC)";
  return text;
}

void print_results(const std::vector<RowResult>& rows, double ceiling_tbps, const std::string& gpu) {
  std::vector<std::vector<std::string>> cells = {{"suite", "NxCxHxW", "k", "s", "m", "epilogue", "kernel",
                                                  "served by", "floor us", "cg hot", "cg cold",
                                                  "cg plain hot", "cudnn hot", "cudnn cold", "cudnn algo",
                                                  "cg %ceil", "cudnn %ceil", "copy %ceil", "speedup", "check"}};
  const std::vector<bool> left = {true,  true,  true,  false, false, true,  true,  true,  false, false,
                                  false, false, false, false, true,  false, false, false, false, true};
  for (const RowResult& r : rows) {
    const convgen::DepthwiseProblem& p = r.problem;
    cells.push_back({r.bench.suite, shape_text(p), std::to_string(p.kh) + "x" + std::to_string(p.kw),
                     std::to_string(r.bench.stride), std::to_string(p.multiplier), r.bench.epilogue,
                     r.choice.kernel, served_by(r), fixed(r.floor_us, 2), fixed(r.convgen_hot_us, 2),
                     fixed(r.convgen_cold_us, 2), fixed(r.convgen_noepilogue_hot_us, 2),
                     fixed(r.cudnn_hot_us, 2), fixed(r.cudnn_cold_us, 2), r.cudnn_ran() ? r.cudnn_algo : "-",
                     fixed(100.0 * r.convgen_frac_ceiling(), 1), fixed(100.0 * r.cudnn_frac_ceiling(), 1),
                     fixed(100.0 * r.copy_frac_ceiling(), 1), fixed(r.speedup_vs_cudnn(), 2, "x"),
                     r.cudnn_ran() ? (r.check_ok ? "ok" : "MISMATCH") : "-"});
  }
  std::cout << "GPU: " << gpu << "; copy ceiling " << fixed(ceiling_tbps, 2) << " TB/s\n"
            << "Times in microseconds. hot: CUDA graph replays, L2 warm; cold: L2 flushed. cg plain: convgen "
               "without epilogue; cuDNN runs the convolution alone.\n"
            << "%ceil = floor / cold time; copy %ceil: a copy of the row's bytes, cold; speedup = cuDNN hot / "
               "convgen hot.\n\n";
  print_table(cells, left);

  const auto generic =
      std::count_if(rows.begin(), rows.end(), [](const RowResult& r) { return !r.choice.specialized; });
  const auto mismatched =
      std::count_if(rows.begin(), rows.end(), [](const RowResult& r) { return !r.check_ok; });
  if (generic)
    std::cout << "\n" << generic << " row(s) served by the GENERIC kernel (no specialized kernel).\n";
  if (mismatched) std::cout << "\n" << mismatched << " row(s) where convgen and cuDNN disagree (MISMATCH).\n";
}

std::string gpu_name() {
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp properties{};
  CUDA_CHECK(cudaGetDeviceProperties(&properties, device));
  return properties.name;
}

std::string progress_label(const Selected& s, size_t index, size_t total) {
  const convgen::DepthwiseProblem& p = s.problem;
  return "[" + std::to_string(index + 1) + "/" + std::to_string(total) + "] " + s.bench.suite + " " +
         shape_text(p) + " k" + std::to_string(p.kh) + "x" + std::to_string(p.kw) + " s" +
         std::to_string(s.bench.stride) + " m" + std::to_string(p.multiplier) + " " + s.bench.epilogue;
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
  std::fprintf(stderr, "%s: copy ceiling %.2f TB/s\n", gpu.c_str(), ceiling_tbps);

  cudnnHandle_t cudnn = nullptr;
  if (!options.no_cudnn) CUDNN_CHECK(cudnnCreate(&cudnn));

  std::vector<RowResult> results;
  for (size_t i = 0; i < selected.size(); ++i) {
    std::fprintf(stderr, "%s ...\n", progress_label(selected[i], i, selected.size()).c_str());
    results.push_back(measure_row(selected[i], ceiling_tbps, cudnn, stopwatch, options,
                                  options.seed + 101 * selected[i].bench.csv_line));
    const RowResult& r = results.back();
    std::fprintf(stderr, "    convgen %.2f us hot, %.2f us cold; cuDNN %s us hot (%s)\n", r.convgen_hot_us,
                 r.convgen_cold_us, fixed(r.cudnn_hot_us, 2).c_str(),
                 r.cudnn_ran() ? r.cudnn_algo.c_str() : "-");
  }
  if (cudnn) CUDNN_CHECK(cudnnDestroy(cudnn));

  print_results(results, ceiling_tbps, gpu);

  Json rows = Json::array();
  for (const RowResult& r : results) rows.push_back(row_json(r));
  if (!options.json_path.empty()) {
    write_file(options.json_path, results_document(gpu, ceiling_tbps, options, rows).dump(2) + "\n");
  }
  if (!options.csv_out_path.empty()) write_file(options.csv_out_path, rows_csv(rows));
  return EXIT_SUCCESS;
}
