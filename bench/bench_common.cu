// What the convgen benchmarks share; bench_common.h says what each piece is for.
#include "bench_common.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <utility>

namespace bench_common {

// ---------------------------------------------------------------------------
// Errors.

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

// ---------------------------------------------------------------------------
// Command line.

void add_common_options(CLI::App& app, CommonOptions& options) {
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
}

void parse_or_exit(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    std::exit(app.exit(error));
  }
}

// ---------------------------------------------------------------------------
// Benchmark CSV.

std::optional<EpilogueWord> parse_epilogue_word(const std::string& word) {
  for (const auto& e : convgen::kEpilogueTable) {
    for (const auto& a : convgen::kActivationTable) {
      const bool plain_e = e.value == convgen::Epilogue::kNone, plain_a = a.value == convgen::Activation::kNone;
      const std::string spelled = plain_a ? e.word : plain_e ? a.word : std::string(e.word) + "_" + a.word;
      if (word == spelled) return EpilogueWord{e.value, a.value};
    }
  }
  return std::nullopt;
}

std::optional<convgen::DataType> parse_dtype_word(const std::string& word) {
  for (const auto& d : convgen::kDataTypeTable) {
    if (word == d.word) return d.value;
  }
  return std::nullopt;
}

std::optional<convgen::Math> parse_math_word(const std::string& word) {
  for (const auto& m : convgen::kMathTable) {
    if (word == m.word) return m.value;
  }
  return std::nullopt;
}

std::optional<convgen::Layout> parse_layout_word(const std::string& word) {
  for (const auto& l : convgen::kLayoutTable) {
    if (word == l.word) return l.value;
  }
  return std::nullopt;
}

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

void for_each_csv_row(const std::string& path, const std::vector<std::string>& columns,
                      const std::function<void(int, const std::vector<std::string>&)>& row,
                      const std::vector<std::string>& optional) {
  std::ifstream file(path);
  if (!file) fail_csv(path, 0, "cannot open the benchmark CSV (see --csv)");

  std::vector<int> index;  // index[i]: position of columns[i] (then optional[i]) in each line; -1: absent
  size_t header_size = 0;
  std::string line;
  std::vector<std::string> ordered;
  for (int line_number = 1; std::getline(file, line); ++line_number) {
    const auto fields = split_csv_line(line);
    if (fields.empty() || fields[0].empty() || fields[0][0] == '#') continue;
    if (index.empty()) {
      for (const auto& column : columns) {
        const auto found = std::find(fields.begin(), fields.end(), column);
        if (found == fields.end()) fail_csv(path, line_number, "header lacks column '" + column + "'");
        index.push_back(static_cast<int>(found - fields.begin()));
      }
      for (const auto& column : optional) {
        const auto found = std::find(fields.begin(), fields.end(), column);
        index.push_back(found == fields.end() ? -1 : static_cast<int>(found - fields.begin()));
      }
      header_size = fields.size();
      continue;
    }
    if (fields.size() != header_size) {
      fail_csv(path, line_number,
               "expected " + std::to_string(header_size) + " fields, found " + std::to_string(fields.size()));
    }
    ordered.clear();
    for (int i : index) ordered.push_back(i < 0 ? std::string() : fields[i]);
    row(line_number, ordered);
  }
  if (index.empty()) fail_csv(path, 0, "no header line");
}

bool wanted_suite(const std::string& suite, const CommonOptions& options) {
  return options.suites.empty() ||
         std::find(options.suites.begin(), options.suites.end(), suite) != options.suites.end();
}

// ---------------------------------------------------------------------------
// Device memory.

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  if (bytes_ > 0) CUDA_CHECK(cudaMalloc(&data_, bytes_));
}

DeviceBuffer::~DeviceBuffer() {
  if (data_) CUDA_CHECK(cudaFree(data_));
}

namespace {
// Host copies of values as elements of a dtype, and back: CUDA's own
// conversions (round to nearest even), so the bytes are what a PyTorch
// tensor of that dtype would hold.
template <class Element, class Convert>
std::vector<Element> converted(const std::vector<float>& values, Convert convert) {
  std::vector<Element> out(values.size());
  std::transform(values.begin(), values.end(), out.begin(), convert);
  return out;
}

template <class Element, class Convert>
std::vector<float> widened(const void* data, size_t bytes, Convert convert) {
  std::vector<Element> elements(bytes / sizeof(Element));
  if (bytes > 0) CUDA_CHECK(cudaMemcpy(elements.data(), data, bytes, cudaMemcpyDeviceToHost));
  std::vector<float> out(elements.size());
  std::transform(elements.begin(), elements.end(), out.begin(), convert);
  return out;
}

template <class Element>
void copy_up(void* destination, const std::vector<Element>& elements) {
  if (!elements.empty()) {
    CUDA_CHECK(cudaMemcpy(destination, elements.data(), elements.size() * sizeof(Element), cudaMemcpyHostToDevice));
  }
}

__half to_half(float v) { return __float2half_rn(v); }
__nv_bfloat16 to_bfloat16(float v) { return __float2bfloat16_rn(v); }
float from_half(__half v) { return __half2float(v); }
float from_bfloat16(__nv_bfloat16 v) { return __bfloat162float(v); }
}  // namespace

DeviceBuffer DeviceBuffer::upload(const std::vector<float>& values, convgen::DataType dtype) {
  DeviceBuffer buffer = elements(values.size(), dtype);
  switch (dtype) {
    case convgen::DataType::kFloat32:
      copy_up(buffer.data_, values);
      break;
    case convgen::DataType::kFloat16:
      copy_up(buffer.data_, converted<__half>(values, to_half));
      break;
    case convgen::DataType::kBFloat16:
      copy_up(buffer.data_, converted<__nv_bfloat16>(values, to_bfloat16));
      break;
  }
  return buffer;
}

std::vector<float> DeviceBuffer::download(convgen::DataType dtype) const {
  switch (dtype) {
    case convgen::DataType::kFloat16:
      return widened<__half>(data_, bytes_, from_half);
    case convgen::DataType::kBFloat16:
      return widened<__nv_bfloat16>(data_, bytes_, from_bfloat16);
    case convgen::DataType::kFloat32:
      break;
  }
  return widened<float>(data_, bytes_, [](float v) { return v; });
}

void DeviceBuffer::swap(DeviceBuffer& other) noexcept {
  std::swap(data_, other.data_);
  std::swap(bytes_, other.bytes_);
}

std::vector<float> random_uniform(size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<float> values(count);
  for (float& value : values) value = float(rng() >> 40) * (2.0f / 16777216.0f) - 1.0f;
  return values;
}

std::vector<float> round_to(std::vector<float> values, convgen::DataType dtype) {
  for (float& v : values) {
    if (dtype == convgen::DataType::kFloat16) v = from_half(to_half(v));
    if (dtype == convgen::DataType::kBFloat16) v = from_bfloat16(to_bfloat16(v));
  }
  return values;
}

// All bits set is a NaN in every dtype (float32, float16 and bfloat16 alike).
void poison(const DeviceBuffer& buffer, cudaStream_t stream) {
  CUDA_CHECK(cudaMemsetAsync(buffer.data(), 0xFF, buffer.bytes(), stream));
}

// ---------------------------------------------------------------------------
// Timing.

double median(std::vector<float> values) {
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : 0.5 * (double(values[mid - 1]) + values[mid]);
}

namespace {
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
}  // namespace

Stopwatch::Stopwatch(bool flush_by_reading)
    : l2_scratch_(kL2FlushBytes), sink_(sizeof(unsigned)), flush_by_reading_(flush_by_reading) {
  // Non-blocking: graph capture must not interact with the legacy default stream.
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  CUDA_CHECK(cudaEventCreate(&start_));
  CUDA_CHECK(cudaEventCreate(&stop_));
  CUDA_CHECK(cudaMemsetAsync(l2_scratch_.data(), 0, l2_scratch_.bytes(), stream_));
}

Stopwatch::~Stopwatch() {
  CUDA_CHECK(cudaEventDestroy(stop_));
  CUDA_CHECK(cudaEventDestroy(start_));
  CUDA_CHECK(cudaStreamDestroy(stream_));
}

void Stopwatch::synchronize() const { CUDA_CHECK(cudaStreamSynchronize(stream_)); }

std::vector<float> Stopwatch::time_runs_ms(const Launch& launch, int runs, bool flush_l2) {
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

double Stopwatch::hot_us(const Launch& launch, int launches, int replays) {
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

double Stopwatch::cold_us(const Launch& launch, int trials) {
  launch(stream_);  // warm-up, as for hot_us
  synchronize();
  return median(time_runs_ms(launch, trials, true)) * 1000.0;
}

// Writing the scratch buffer leaves L2 full of dirty lines, whose write-back
// the timed kernel then pays for as it allocates lines of its own; reading
// it leaves L2 clean.
void Stopwatch::flush(int run) {
  if (flush_by_reading_) {
    const size_t words = l2_scratch_.bytes() / sizeof(uint4);
    read_every_word<<<1024, 512, 0, stream_>>>(static_cast<const uint4*>(l2_scratch_.data()), words,
                                               static_cast<unsigned*>(sink_.data()));
    CUDA_CHECK(cudaGetLastError());
  } else {
    CUDA_CHECK(cudaMemsetAsync(l2_scratch_.data(), run & 0xFF, l2_scratch_.bytes(), stream_));
  }
}

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

double copy_cold_us(Stopwatch& stopwatch, size_t bytes_moved, int trials) {
  const size_t half = bytes_moved / 2;
  const DeviceBuffer from(half), to(half);
  const Launch copy = [&](cudaStream_t stream) {
    CUDA_CHECK(cudaMemcpyAsync(to.data(), from.data(), half, cudaMemcpyDeviceToDevice, stream));
  };
  return stopwatch.cold_us(copy, trials);
}

// ---------------------------------------------------------------------------
// cuDNN.

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

namespace {
cudnnDataType_t cudnn_data_type(convgen::DataType dtype) {
  switch (dtype) {
    case convgen::DataType::kFloat16:
      return CUDNN_DATA_HALF;
    case convgen::DataType::kBFloat16:
      return CUDNN_DATA_BFLOAT16;
    case convgen::DataType::kFloat32:
      break;
  }
  return CUDNN_DATA_FLOAT;
}
}  // namespace

CudnnConvolution::CudnnConvolution(cudnnHandle_t handle, cudaStream_t stream, const CudnnConvShape& s,
                                   const void* x, const void* w, void* y)
    : handle_(handle),
      tensor_cores_allowed_(s.dtype != convgen::DataType::kFloat32 || s.math == convgen::Math::kTF32),
      x_(x),
      w_(w),
      y_(y) {
  CUDNN_CHECK(cudnnSetStream(handle_, stream));  // the algorithm search runs on it
  CUDNN_CHECK(cudnnCreateTensorDescriptor(&x_desc_));
  CUDNN_CHECK(cudnnCreateTensorDescriptor(&y_desc_));
  CUDNN_CHECK(cudnnCreateFilterDescriptor(&w_desc_));
  CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&conv_desc_));

  // Dimensions are given as N, C, H, W whatever the format; the format says
  // how they lie in memory (NHWC: channels innermost; the filter KRSC).
  const cudnnTensorFormat_t format =
      s.layout == convgen::Layout::kNHWC ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
  const cudnnDataType_t data_type = cudnn_data_type(s.dtype);
  CUDNN_CHECK(cudnnSetTensor4dDescriptor(x_desc_, format, data_type, s.n, s.c, s.h, s.w));
  CUDNN_CHECK(cudnnSetFilter4dDescriptor(w_desc_, data_type, format, s.k, s.c / s.groups, s.kh, s.kw));
  // Accumulation in float for every dtype, as convgen's kernels accumulate.
  CUDNN_CHECK(cudnnSetConvolution2dDescriptor(conv_desc_, s.pad_h, s.pad_w, s.stride_h, s.stride_w,
                                              s.dilation_h, s.dilation_w, CUDNN_CROSS_CORRELATION,
                                              CUDNN_DATA_FLOAT));
  if (s.groups != 1) CUDNN_CHECK(cudnnSetConvolutionGroupCount(conv_desc_, s.groups));
  // float32: FMA only, since with the default math type cuDNN may run fp32 on
  // TF32 tensor cores; with math tf32, tensor-op math (TF32 for float32, as
  // PyTorch's allow_tf32 gives it). 3xtf32 has no cuDNN twin: it is
  // compared with fp32 FMA, the accuracy it keeps. float16 and bfloat16 are
  // what tensor cores take as they are: the fastest algorithm may use them.
  CUDNN_CHECK(cudnnSetConvolutionMathType(conv_desc_, tensor_cores_allowed_ ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH));

  int out_n = 0, out_c = 0, out_h = 0, out_w = 0;
  CUDNN_CHECK(
      cudnnGetConvolution2dForwardOutputDim(conv_desc_, x_desc_, w_desc_, &out_n, &out_c, &out_h, &out_w));
  if (out_n != s.n || out_c != s.k || out_h != s.out_h || out_w != s.out_w) {
    fail(__FILE__, __LINE__, "cuDNN's output shape differs from convgen's for " + s.description);
  }
  CUDNN_CHECK(cudnnSetTensor4dDescriptor(y_desc_, format, data_type, out_n, out_c, out_h, out_w));

  workspace_ = DeviceBuffer(largest_workspace_bytes());
  choose_algorithm();
}

CudnnConvolution::~CudnnConvolution() {
  CUDNN_CHECK(cudnnDestroyConvolutionDescriptor(conv_desc_));
  CUDNN_CHECK(cudnnDestroyFilterDescriptor(w_desc_));
  CUDNN_CHECK(cudnnDestroyTensorDescriptor(y_desc_));
  CUDNN_CHECK(cudnnDestroyTensorDescriptor(x_desc_));
}

void CudnnConvolution::run(cudaStream_t stream) const {
  const float alpha = 1.0f, beta = 0.0f;  // float for every dtype but double
  CUDNN_CHECK(cudnnSetStream(handle_, stream));
  CUDNN_CHECK(cudnnConvolutionForward(handle_, &alpha, x_desc_, x_, w_desc_, w_, conv_desc_, algo_,
                                      workspace_.data(), workspace_.bytes(), &beta, y_desc_, y_));
}

// The workspace of the hungriest algorithm that fits under the cap, so that
// the search below may try every algorithm that is reasonable to run.
size_t CudnnConvolution::largest_workspace_bytes() const {
  size_t largest = 0;
  for (int i = 0; i < CUDNN_CONVOLUTION_FWD_ALGO_COUNT; ++i) {
    size_t bytes = 0;
    // Not checked as an error: cuDNN answers "not supported" for algorithms
    // that cannot run this convolution, and those are simply skipped.
    const cudnnStatus_t status = cudnnGetConvolutionForwardWorkspaceSize(
        handle_, x_desc_, w_desc_, conv_desc_, y_desc_, cudnnConvolutionFwdAlgo_t(i), &bytes);
    if (status == CUDNN_STATUS_SUCCESS && bytes <= kMaxCudnnWorkspaceBytes) largest = std::max(largest, bytes);
  }
  return largest;
}

// Runs every algorithm on the real buffers and keeps the fastest that
// succeeded (in float32: without tensor cores) as candidates, fastest first.
void CudnnConvolution::choose_algorithm() {
  cudnnConvolutionFwdAlgoPerf_t results[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int returned = 0;
  CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithmEx(handle_, x_desc_, x_, w_desc_, w_, conv_desc_, y_desc_, y_,
                                                     CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, results,
                                                     workspace_.data(), workspace_.bytes()));
  // Results come sorted by time, fastest first. Those Find timed at more than
  // kFindSlack times its fastest are left out: Find's noise swaps algorithms
  // within 1.6x of each other (bench_common.h), while timing a far slower one
  // hot, over a thousand calls, can take minutes (an FFT algorithm kept the
  // 256-group 21x21 depthwise row over 280 s on an H200).
  constexpr float kFindSlack = 4.0f;
  float fastest_ms = -1.0f;
  for (int i = 0; i < returned; ++i) {
    const auto& result = results[i];
    const bool tensor_cores =
        result.mathType == CUDNN_TENSOR_OP_MATH || result.mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
    if (result.status == CUDNN_STATUS_SUCCESS && (tensor_cores_allowed_ || !tensor_cores) &&
        result.memory <= workspace_.bytes()) {
      // (Find may list an algorithm once for each math type it tried.)
      if (std::find(candidates_.begin(), candidates_.end(), result.algo) != candidates_.end()) continue;
      if (fastest_ms < 0.0f) fastest_ms = result.time;
      if (result.time > kFindSlack * fastest_ms) break;
      candidates_.push_back(result.algo);
    }
  }
  if (!candidates_.empty()) {
    algo_ = candidates_.front();
    return;
  }
  fail(__FILE__, __LINE__,
       std::string("cuDNN found no ") + (tensor_cores_allowed_ ? "" : "fp32 FMA ") + "algorithm for this convolution");
}

// ---------------------------------------------------------------------------
// Cross-check.

double max_relative_error(const std::vector<float>& got, const std::vector<float>& want) {
  double largest_difference = 0.0, largest_magnitude = 0.0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(got[i]) || std::isnan(want[i])) return kNaN;
    largest_difference = std::max(largest_difference, std::fabs(double(got[i]) - want[i]));
    largest_magnitude = std::max(largest_magnitude, std::fabs(double(want[i])));
  }
  return largest_magnitude > 0.0 ? largest_difference / largest_magnitude : largest_difference;
}

double unit_roundoff(convgen::DataType dtype) { return std::ldexp(1.0, -(convgen::row(dtype).fraction_bits + 1)); }

double tuned_error_limit(convgen::DataType dtype) {
  return dtype == convgen::DataType::kFloat32 ? kMaxTunedRelativeError : 2 * unit_roundoff(dtype);
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

Json number(double value, int decimals) {
  if (!std::isfinite(value)) return nullptr;
  const double scale = std::pow(10.0, decimals);
  return std::round(value * scale) / scale;
}

Json error_value(double value) { return std::isfinite(value) ? Json(value) : Json(nullptr); }

std::string commit_from_environment() {
  const char* commit = std::getenv("CONVGEN_COMMIT");
  return commit && *commit ? commit : "unknown";
}

Json start_document(const std::string& gpu, double ceiling_tbps, const CommonOptions& options) {
  Json document;
  document["gpu"] = gpu;
  document["date"] = iso_date_utc();
  document["commit"] = commit_from_environment();
  document["copy_ceiling_tbps"] = number(ceiling_tbps, 4);
  document["cudnn_version"] = options.no_cudnn ? Json(nullptr) : Json(cudnnGetVersion());
  return document;
}

void finish_document(Json& document, const CommonOptions& options, const Json& rows) {
  document["hot_launches"] = options.hot_launches;
  document["hot_replays"] = options.hot_replays;
  document["trials"] = options.trials;
  document["cold_flush"] = options.flush;
  document["rows"] = rows;
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

std::string fixed(double value, int decimals, const char* suffix) {
  if (!std::isfinite(value)) return "-";
  char text[64];
  std::snprintf(text, sizeof text, "%.*f%s", decimals, value, suffix);
  return text;
}

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

std::string gpu_name() {
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp properties{};
  CUDA_CHECK(cudaGetDeviceProperties(&properties, device));
  return properties.name;
}

}  // namespace bench_common
