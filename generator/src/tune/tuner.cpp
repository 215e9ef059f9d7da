// `convgen tune`. For each kernel: the schedule space (the core's), a search
// over it, and for each candidate: render (the core's templates, in memory)
// -> compile (NVRTC, in parallel, for the device's own architecture) -> load
// (driver API) -> verify (every output element against a float64 reference
// computed on the GPU, output poisoned first) -> time (hot: CUDA graph
// replays; cold: L2 flushed). The fastest verified candidate becomes the
// kernel's entry in the tuning database, written after each kernel.
#include "tune/tuner.hpp"
#include "tune/embedded_headers.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "convgen/gen/tuning.hpp"
#include "tune/cuda_api.hpp"

namespace convgen::tune {

using namespace convgen::gen;

namespace {

// ---------------------------------------------------------------------------
// Search constants. The search is documented in docs/tuning.md.

// A space of at most this many schedules (before pruning) is enumerated and
// pruned whole; larger ones are explored by random walks from the defaults.
constexpr double kEnumerateLimit = 60000;
// In auto mode, a pruned space of at most this many schedules is tried whole.
constexpr size_t kExhaustiveLimit = 48;
// Schedules drawn at random (from the pruned space, or by walks) before the
// local search starts, and the length of each walk.
constexpr size_t kInitialSamples = 24;
constexpr int kWalkSteps = 4;
// Candidates compiled together (NVRTC runs one per core).
constexpr size_t kBatch = 16;
// Hot timing: graphs of about this many microseconds of launches, replayed
// kHotReplays times; a candidate whose first replays are kEarlyStop times the
// best so far is not timed further.
constexpr double kHotGraphUs = 1000;
constexpr int kHotReplays = 9;
constexpr double kEarlyStop = 1.25;
constexpr int kColdTrials = 9;
// The winner is timed again against the default, alternately, kConfirmRounds
// times each; it replaces the default only when it is kMinGain faster by the
// medians. Schedules within a few percent of each other trade places from run
// to run (and from process to process: L2 hints interact with what else ran),
// so a smaller gain is not one a user would see.
constexpr int kConfirmRounds = 5;
constexpr double kMinGain = 0.03;
// Guard words around the output, checked after every candidate.
constexpr size_t kGuard = 64;
constexpr std::uint32_t kGuardPattern = 0x7fc0dead;

std::atomic<bool> interrupted{false};

extern "C" void on_interrupt(int) {
  if (interrupted.exchange(true)) std::_Exit(130);  // a second Ctrl-C: stop now
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string today() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[16];
  std::strftime(text, sizeof text, "%Y-%m-%d", &tm);
  return text;
}

std::string duration_text(double s) {
  char text[32];
  if (s < 60) {
    std::snprintf(text, sizeof text, "%.0fs", s);
  } else if (s < 3600) {
    std::snprintf(text, sizeof text, "%dm%02ds", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  } else {
    std::snprintf(text, sizeof text, "%dh%02dm", static_cast<int>(s) / 3600, static_cast<int>(s) % 3600 / 60);
  }
  return text;
}

// ---------------------------------------------------------------------------
// Compiling: NVRTC, at most one compilation per core across every worker.

class CompileSlots {
 public:
  explicit CompileSlots(unsigned n) : free_(n) {}
  void acquire() {
    std::unique_lock<std::mutex> lock(m_);
    cv_.wait(lock, [&] { return free_ > 0; });
    --free_;
  }
  void release() {
    {
      std::lock_guard<std::mutex> lock(m_);
      ++free_;
    }
    cv_.notify_one();
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  unsigned free_;
};

struct Compiled {
  bool ok = false;
  std::string log;       // NVRTC's log on failure
  std::string cubin;
  std::string lowered;   // the kernel's mangled name
  double seconds = 0;
};

Compiled compile(const CudaApi& api, const std::string& source, const std::string& name_expression, int arch) {
  const auto start = std::chrono::steady_clock::now();
  Compiled out;
  nvrtcProgram program = nullptr;
  std::vector<const char*> header_names, header_texts;
  for (const EmbeddedHeader& h : embedded_headers()) {
    header_names.push_back(h.name);
    header_texts.push_back(h.text);
  }
  if (api.nvrtcCreateProgram(&program, source.c_str(), "kernel.cu", static_cast<int>(header_texts.size()),
                             header_texts.data(), header_names.data()) != NVRTC_SUCCESS) {
    out.log = "nvrtcCreateProgram failed";
    return out;
  }
  api.nvrtcAddNameExpression(program, name_expression.c_str());
  const std::string arch_option = "--gpu-architecture=sm_" + std::to_string(arch);
  // nvcc's defaults for device code, as the library build compiles it.
  const char* options[] = {arch_option.c_str(), "-std=c++17"};
  const nvrtcResult result = api.nvrtcCompileProgram(program, 2, options);
  size_t log_size = 0;
  api.nvrtcGetProgramLogSize(program, &log_size);
  if (result != NVRTC_SUCCESS) {
    out.log.resize(log_size);
    api.nvrtcGetProgramLog(program, out.log.data());
    while (!out.log.empty() && (out.log.back() == '\0' || out.log.back() == '\n')) out.log.pop_back();
    if (out.log.empty()) out.log = api.nvrtcGetErrorString(result);
  } else {
    size_t size = 0;
    api.nvrtcGetCUBINSize(program, &size);
    out.cubin.resize(size);
    api.nvrtcGetCUBIN(program, out.cubin.data());
    const char* lowered = nullptr;
    if (api.nvrtcGetLoweredName(program, name_expression.c_str(), &lowered) == NVRTC_SUCCESS && lowered) {
      out.lowered = lowered;
      out.ok = true;
    } else {
      out.log = "NVRTC does not know the kernel " + name_expression;
    }
  }
  api.nvrtcDestroyProgram(&program);
  out.seconds = seconds_since(start);
  return out;
}

// The float64 reference: one thread per output element computes the exact
// sum and the sum of its terms' magnitudes (the scale of a float32 sum's
// rounding), then the epilogue, residual and activation as the kernels
// apply them. `multiplier` > 0: depthwise (input channel co / multiplier);
// 0: dense (every input channel).
constexpr const char* kReferenceSource = R"(
#include <convgen/epilogue.h>
extern "C" __global__ void convgen_reference(
    const float* input, const float* filter, const float* ea, const float* eb, const float* residual,
    double* value, double* magnitude, long long outputs, int c, int h, int w, int c_out, int kh, int kw,
    int stride_h, int stride_w, int pad_top, int pad_left, int dilation_h, int dilation_w, int out_h, int out_w,
    int multiplier, int epilogue, int activation) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= outputs) return;
  const int ox = (int)(i % out_w), oy = (int)(i / out_w % out_h), co = (int)(i / ((long long)out_w * out_h) % c_out);
  const long long n = i / ((long long)out_w * out_h * c_out);
  const int ci_begin = multiplier > 0 ? co / multiplier : 0, ci_end = multiplier > 0 ? ci_begin + 1 : c;
  double acc = 0, abs_acc = 0;
  for (int ci = ci_begin; ci < ci_end; ++ci) {
    const float* plane = input + (n * c + ci) * (long long)h * w;
    const float* taps = filter + ((long long)co * (multiplier > 0 ? 1 : c) + (ci - ci_begin)) * kh * kw;
    for (int ky = 0; ky < kh; ++ky) {
      const int y = oy * stride_h - pad_top + ky * dilation_h;
      if (y < 0 || y >= h) continue;
      for (int kx = 0; kx < kw; ++kx) {
        const int x = ox * stride_w - pad_left + kx * dilation_w;
        if (x < 0 || x >= w) continue;
        const double t = (double)plane[y * w + x] * (double)taps[ky * kw + kx];
        acc += t;
        abs_acc += fabs(t);
      }
    }
  }
  const convgen::Epilogue e = (convgen::Epilogue)epilogue;
  const convgen::Activation a = (convgen::Activation)activation;
  const double ea_co = e == convgen::Epilogue::kNone ? 0.0 : ea[co];
  const double eb_co = e == convgen::Epilogue::kScaleShift ? eb[co] : 0.0;
  acc = convgen::apply_epilogue(e, acc, ea_co, eb_co);
  abs_acc = convgen::apply_epilogue(e, abs_acc, fabs(ea_co), fabs(eb_co));
  if (residual) { acc += residual[i]; abs_acc += fabs((double)residual[i]); }
  acc = convgen::activate(a, acc);
  abs_acc = convgen::activation_error_scale(a, abs_acc, acc);
  value[i] = acc;
  magnitude[i] = abs_acc;
}
)";

// ---------------------------------------------------------------------------
// One device: its context, stream, flush buffer and reference kernel.

class DeviceMemory {
 public:
  DeviceMemory() = default;
  DeviceMemory(const CudaApi& api, size_t bytes) : api_(&api), bytes_(bytes) {
    if (bytes > 0) api.check(api.cuMemAlloc(&ptr_, bytes), "cuMemAlloc");
  }
  DeviceMemory(DeviceMemory&& o) noexcept { *this = std::move(o); }
  DeviceMemory& operator=(DeviceMemory&& o) noexcept {
    std::swap(api_, o.api_);
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  ~DeviceMemory() {
    if (ptr_ != 0) api_->cuMemFree(ptr_);
  }
  CUdeviceptr get() const { return ptr_; }
  size_t bytes() const { return bytes_; }

 private:
  const CudaApi* api_ = nullptr;
  CUdeviceptr ptr_ = 0;
  size_t bytes_ = 0;
};

struct Device {
  int ordinal = 0;
  CUdevice device = 0;
  CUcontext context = nullptr;
  CUstream stream = nullptr;
  GpuId id;
  int arch = 0;  // 90 for sm_90
  DeviceMemory flush;  // twice the L2: writing it evicts every line a kernel left
  CUmodule reference_module = nullptr;
  CUfunction reference = nullptr;
};

// ---------------------------------------------------------------------------
// A kernel's candidates and the report.

enum class State { kPending, kCompileFailed, kLaunchFailed, kRejected, kTimed, kStoppedEarly };

const char* state_word(State s) {
  switch (s) {
    case State::kPending: return "not run";
    case State::kCompileFailed: return "compile failed";
    case State::kLaunchFailed: return "launch failed";
    case State::kRejected: return "rejected (wrong output)";
    case State::kTimed: return "timed";
    case State::kStoppedEarly: return "stopped early (slower)";
  }
  return "?";
}

struct Candidate {
  KernelPlan plan;
  bool is_default = false;
  State state = State::kPending;
  double hot_us = 0, cold_us = 0;
  double compile_s = 0;
  std::string note;  // why it failed or was rejected
};

Candidate as_candidate(KernelPlan plan) {
  Candidate c;
  c.plan = std::move(plan);
  return c;
}

struct KernelReport {
  std::string kernel;
  std::string gpu;
  double space_before = 0;
  long long space_after = -1;  // -1: not enumerated (too large)
  std::string search;          // "exhaustive" or "sampled"
  std::string space_detail;    // per algorithm: its size before and after pruning
  std::vector<Candidate> candidates;
  int best = -1, default_index = -1;
  double wall_s = 0;
  bool confirmed = false;  // the best beat the default when timed again against it
};

nlohmann::json report_json(const KernelReport& r) {
  nlohmann::json cands = nlohmann::json::array();
  for (const Candidate& c : r.candidates) {
    cands.push_back({{"schedule", c.plan.schedule.summary()}, {"default", c.is_default}, {"state", state_word(c.state)},
                     {"hot_us", c.hot_us}, {"cold_us", c.cold_us}, {"compile_s", c.compile_s}, {"note", c.note}});
  }
  nlohmann::json j{{"kernel", r.kernel}, {"gpu", r.gpu}, {"space_before_pruning", r.space_before},
                   {"space_after_pruning", r.space_after < 0 ? nlohmann::json(nullptr) : nlohmann::json(r.space_after)},
                   {"space", r.space_detail}, {"search", r.search}, {"confirmed", r.confirmed}, {"wall_s", r.wall_s}, {"candidates", cands}};
  if (r.best >= 0) {
    const Candidate& b = r.candidates[static_cast<size_t>(r.best)];
    const Candidate& d = r.candidates[static_cast<size_t>(r.default_index)];
    j["best"] = {{"schedule", b.plan.schedule.summary()}, {"hot_us", b.hot_us}, {"cold_us", b.cold_us}};
    j["default"] = {{"schedule", d.plan.schedule.summary()}, {"hot_us", d.hot_us}, {"cold_us", d.cold_us}};
  }
  return j;
}

// ---------------------------------------------------------------------------
// Progress on the terminal: one line per kernel, and on a terminal a status
// line redrawn as candidates finish.

class Progress {
 public:
  Progress(size_t total, size_t workers) : total_(total), workers_(workers), tty_(isatty(STDERR_FILENO) != 0) {}

  void line(const std::string& text) {
    std::lock_guard<std::mutex> lock(m_);
    clear();
    std::fprintf(stderr, "%s\n", text.c_str());
  }
  void status(const std::string& text) {
    if (!tty_) return;
    std::lock_guard<std::mutex> lock(m_);
    clear();
    std::fprintf(stderr, "%s", text.substr(0, 150).c_str());
    shown_ = true;
  }
  // A kernel is done (tuned or kept); its wall time feeds the ETA.
  void kernel_done(double seconds, bool counted) {
    std::lock_guard<std::mutex> lock(m_);
    ++done_;
    if (counted) {
      tuned_seconds_ += seconds;
      ++tuned_;
    }
  }
  // "3/37": the kernels done, of all.
  std::string counts() {
    std::lock_guard<std::mutex> lock(m_);
    return std::to_string(done_) + "/" + std::to_string(total_);
  }
  std::string start() {
    std::lock_guard<std::mutex> lock(m_);
    ++started_;
    return std::to_string(started_) + "/" + std::to_string(total_);
  }
  std::string eta(double budget_s) {
    std::lock_guard<std::mutex> lock(m_);
    const double per_kernel = tuned_ > 0 ? tuned_seconds_ / tuned_ : budget_s;
    return duration_text(per_kernel * static_cast<double>(total_ - done_) / static_cast<double>(workers_));
  }

 private:
  void clear() {
    if (shown_) std::fprintf(stderr, "\r\033[K");
    shown_ = false;
  }
  std::mutex m_;
  size_t total_, workers_, done_ = 0, tuned_ = 0, started_ = 0;
  double tuned_seconds_ = 0;
  bool tty_, shown_ = false;
};

// ---------------------------------------------------------------------------
// The tuner.

class Tuner {
 public:
  Tuner(const LibraryPlan& lib, const Templates& templates, const TuneOptions& options)
      : api_(CudaApi::get()),
        lib_(lib),
        templates_(templates),
        options_(options),
        slots_(std::max(1u, std::thread::hardware_concurrency())) {
    render_lib_.name = "tune";
    for (const auto& [file, text] : templates.kernels) fingerprints_[file] = tuning_fingerprint(text);
  }

  int run();

 private:
  void open_device(Device& d, int ordinal);
  void worker(Device& d);
  KernelReport tune_kernel(Device& d, const KernelPlan& plan);
  std::vector<Candidate> initial_candidates(const Workload& wl, KernelReport& report, std::mt19937_64& rng);
  void evaluate(Device& d, std::vector<Candidate>& batch, struct Problem& problem, KernelReport& report,
                double& best_us);
  void prepare(Device& d, const KernelPlan& plan, const struct Compiled& compiled, struct Problem& problem,
               struct Loaded& l);
  bool confirm(Device& d, struct Problem& problem, Candidate& def, Candidate& best);
  // A candidate's time by the objective.
  double score(const Candidate& c) const { return options_.objective == "cold" ? c.cold_us : c.hot_us; }

  const CudaApi& api_;
  const LibraryPlan& lib_;
  const Templates& templates_;
  TuneOptions options_;
  CompileSlots slots_;
  LibraryPlan render_lib_;
  std::map<std::string, std::string> fingerprints_;
  PlanOptions plan_options_;

  std::mutex queue_mutex_;
  std::deque<const KernelPlan*> queue_;
  std::mutex db_mutex_;
  TuningDb db_;
  std::vector<KernelReport> reports_;
  std::unique_ptr<Progress> progress_;
  std::atomic<int> failures_{0};
  std::atomic<int> candidate_counter_{0};
};

void Tuner::open_device(Device& d, int ordinal) {
  d.ordinal = ordinal;
  api_.check(api_.cuDeviceGet(&d.device, ordinal), ("device " + std::to_string(ordinal)).c_str());
  char name[256] = {};
  api_.check(api_.cuDeviceGetName(name, sizeof name, d.device), "cuDeviceGetName");
  int major = 0, minor = 0, sms = 0, l2 = 0;
  api_.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d.device);
  api_.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d.device);
  api_.cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d.device);
  api_.cuDeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, d.device);
  d.id = GpuId{name, sms, std::to_string(major) + "." + std::to_string(minor)};
  d.arch = major * 10 + minor;
  api_.check(api_.cuDevicePrimaryCtxRetain(&d.context, d.device), "cuDevicePrimaryCtxRetain");
  api_.check(api_.cuCtxSetCurrent(d.context), "cuCtxSetCurrent");
  api_.check(api_.cuStreamCreate(&d.stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  d.flush = DeviceMemory(api_, 2 * static_cast<size_t>(std::max(l2, 1 << 20)));
  const Compiled ref = compile(api_, kReferenceSource, "convgen_reference", d.arch);
  if (!ref.ok) throw CudaError("the reference kernel does not compile:\n" + ref.log);
  api_.check(api_.cuModuleLoadData(&d.reference_module, ref.cubin.data()), "loading the reference kernel");
  api_.check(api_.cuModuleGetFunction(&d.reference, d.reference_module, ref.lowered.c_str()), "the reference kernel");
}

// The problem's buffers, filled with fresh random values, and the reference.
struct Problem {
  const CudaApi* api = nullptr;
  int batch = 1;
  size_t out_count = 0;
  DeviceMemory input, filter, ea, eb, residual, output;  // output: kGuard words each side
  std::vector<double> reference, magnitude;
  double terms = 0;  // the bound's number of terms: (terms + 2) * 2^-23 * magnitude

  CUdeviceptr out() const { return output.get() + kGuard * sizeof(float); }
};

std::vector<float> random_floats(size_t n, std::mt19937_64& rng, float lo, float hi, bool sixteenths) {
  std::vector<float> v(n);
  if (sixteenths) {
    // Multiples of 1/16 in [-1, 1]: a dense sum of up to 2^16 products is exact in fp32.
    std::uniform_int_distribution<int> dist(-16, 16);
    for (float& x : v) x = static_cast<float>(dist(rng)) / 16.0f;
  } else {
    std::uniform_real_distribution<float> dist(lo, hi);
    for (float& x : v) x = dist(rng);
  }
  return v;
}

Problem make_problem(const CudaApi& api, Device& d, const KernelPlan& plan) {
  const Workload& wl = plan.workload;
  Problem p;
  p.api = &api;
  p.batch = wl.n == 0 ? 1 : wl.n;  // a runtime batch is tuned at 1
  const bool dense = wl.op->takes_residual;
  std::mt19937_64 rng(std::random_device{}());
  const size_t in_count = static_cast<size_t>(p.batch) * wl.c * wl.h * wl.w;
  const size_t filter_count = static_cast<size_t>(wl.out_channels()) * (dense ? wl.c : 1) * wl.kh * wl.kw;
  p.out_count = static_cast<size_t>(p.batch) * wl.out_channels() * wl.out_h() * wl.out_w();
  const auto upload = [&](const std::vector<float>& host) {
    DeviceMemory m(api, std::max<size_t>(host.size(), 1) * sizeof(float));
    if (!host.empty()) api.check(api.cuMemcpyHtoD(m.get(), host.data(), host.size() * sizeof(float)), "cuMemcpyHtoD");
    return m;
  };
  p.input = upload(random_floats(in_count, rng, -1, 1, dense));
  p.filter = upload(random_floats(filter_count, rng, -1, 1, dense));
  // Scales straddle zero so that relu and relu6 both clip and pass values.
  p.ea = upload(random_floats(static_cast<size_t>(wl.out_channels()), rng, -2, 2, false));
  p.eb = upload(random_floats(static_cast<size_t>(wl.out_channels()), rng, -1, 3, false));
  if (wl.residual) p.residual = upload(random_floats(p.out_count, rng, -1, 1, false));
  p.output = DeviceMemory(api, (p.out_count + 2 * kGuard) * sizeof(float));
  p.terms = dense ? std::sqrt(static_cast<double>(wl.c) * wl.kh * wl.kw) + 2 : wl.kh * wl.kw;

  // The reference, into scratch buffers.
  DeviceMemory value(api, p.out_count * sizeof(double)), magnitude(api, p.out_count * sizeof(double));
  CUdeviceptr in = p.input.get(), filter = p.filter.get(), ea = p.ea.get(), eb = p.eb.get();
  CUdeviceptr residual = wl.residual ? p.residual.get() : 0, v = value.get(), m = magnitude.get();
  long long outputs = static_cast<long long>(p.out_count);
  int c = wl.c, h = wl.h, w = wl.w, c_out = wl.out_channels(), kh = wl.kh, kw = wl.kw, sh = wl.stride_h,
      sw = wl.stride_w, pt = wl.pad_top, pl = wl.pad_left, dh = wl.dilation_h, dw = wl.dilation_w, oh = wl.out_h(),
      ow = wl.out_w(), multiplier = dense ? 0 : wl.multiplier, epilogue = static_cast<int>(wl.epilogue),
      activation = static_cast<int>(wl.activation);
  void* args[] = {&in, &filter, &ea, &eb, &residual, &v, &m, &outputs, &c, &h, &w, &c_out, &kh, &kw, &sh,
                  &sw, &pt, &pl, &dh, &dw, &oh, &ow, &multiplier, &epilogue, &activation};
  const unsigned blocks = static_cast<unsigned>((p.out_count + 255) / 256);
  api.check(api.cuLaunchKernel(d.reference, blocks, 1, 1, 256, 1, 1, 0, d.stream, args, nullptr), "the reference");
  api.check(api.cuStreamSynchronize(d.stream), "the reference");
  p.reference.resize(p.out_count);
  p.magnitude.resize(p.out_count);
  api.check(api.cuMemcpyDtoH(p.reference.data(), v, p.out_count * sizeof(double)), "cuMemcpyDtoH");
  api.check(api.cuMemcpyDtoH(p.magnitude.data(), m, p.out_count * sizeof(double)), "cuMemcpyDtoH");
  return p;
}

// A loaded candidate and its launch.
struct Loaded {
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  LaunchShape shape;
  std::vector<void*> args;
  CUdeviceptr in, filter, ea, eb, residual, out;
  int count = 0;
};

void launch(const CudaApi& api, Loaded& l, CUstream stream) {
  api.check(api.cuLaunchKernel(l.function, l.shape.grid[0], l.shape.grid[1], l.shape.grid[2], l.shape.block[0],
                               l.shape.block[1], l.shape.block[2], 0, stream, l.args.data(), nullptr),
            "cuLaunchKernel");
}

float elapsed_ms(const CudaApi& api, CUevent a, CUevent b) {
  float ms = 0;
  api.check(api.cuEventElapsedTime(&ms, a, b), "cuEventElapsedTime");
  return ms;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Hot: `launches` launches in one CUDA graph, replayed; microseconds per launch.
// Returns the median, or stops after 3 replays when those are all kEarlyStop
// times `best_us` (sets `stopped`).
double time_hot(const CudaApi& api, Device& d, Loaded& l, double best_us, bool& stopped) {
  CUevent start, stop;
  api.check(api.cuEventCreate(&start, CU_EVENT_DEFAULT), "cuEventCreate");
  api.check(api.cuEventCreate(&stop, CU_EVENT_DEFAULT), "cuEventCreate");
  // One launch, timed alone, sizes the graph.
  launch(api, l, d.stream);
  api.check(api.cuEventRecord(start, d.stream), "cuEventRecord");
  launch(api, l, d.stream);
  api.check(api.cuEventRecord(stop, d.stream), "cuEventRecord");
  api.check(api.cuEventSynchronize(stop), "the candidate");
  const double single_us = std::max(1.0, 1000.0 * elapsed_ms(api, start, stop));
  const int launches = std::clamp(static_cast<int>(kHotGraphUs / single_us), 4, 100);

  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
  api.check(api.cuStreamBeginCapture(d.stream, CU_STREAM_CAPTURE_MODE_RELAXED), "cuStreamBeginCapture");
  for (int i = 0; i < launches; ++i) launch(api, l, d.stream);
  api.check(api.cuStreamEndCapture(d.stream, &graph), "cuStreamEndCapture");
  api.check(api.cuGraphInstantiateWithFlags(&exec, graph, 0), "cuGraphInstantiate");
  api.check(api.cuGraphLaunch(exec, d.stream), "cuGraphLaunch");  // uploads the graph
  std::vector<double> per_launch;
  stopped = false;
  for (int r = 0; r < kHotReplays; ++r) {
    api.check(api.cuEventRecord(start, d.stream), "cuEventRecord");
    api.check(api.cuGraphLaunch(exec, d.stream), "cuGraphLaunch");
    api.check(api.cuEventRecord(stop, d.stream), "cuEventRecord");
    api.check(api.cuEventSynchronize(stop), "the candidate");
    per_launch.push_back(1000.0 * elapsed_ms(api, start, stop) / launches);
    if (r == 2 && best_us > 0 && *std::min_element(per_launch.begin(), per_launch.end()) > kEarlyStop * best_us) {
      stopped = true;
      break;
    }
  }
  api.cuGraphExecDestroy(exec);
  api.cuGraphDestroy(graph);
  api.cuEventDestroy(start);
  api.cuEventDestroy(stop);
  return median(per_launch);
}

// Cold: each launch after the flush buffer is written (L2 holds none of the
// kernel's data); the median microseconds.
double time_cold(const CudaApi& api, Device& d, Loaded& l) {
  CUevent start, stop;
  api.check(api.cuEventCreate(&start, CU_EVENT_DEFAULT), "cuEventCreate");
  api.check(api.cuEventCreate(&stop, CU_EVENT_DEFAULT), "cuEventCreate");
  std::vector<double> us;
  for (int t = 0; t < kColdTrials; ++t) {
    api.check(api.cuMemsetD8Async(d.flush.get(), static_cast<unsigned char>(t), d.flush.bytes(), d.stream), "flush");
    api.check(api.cuEventRecord(start, d.stream), "cuEventRecord");
    launch(api, l, d.stream);
    api.check(api.cuEventRecord(stop, d.stream), "cuEventRecord");
    api.check(api.cuEventSynchronize(stop), "the candidate");
    us.push_back(1000.0 * elapsed_ms(api, start, stop));
  }
  api.cuEventDestroy(start);
  api.cuEventDestroy(stop);
  return median(us);
}

// Poisons the output (NaN, guards), runs the candidate once and compares
// every element with the reference; "" when all are within the bound.
std::string verify(const CudaApi& api, Device& d, Loaded& l, Problem& p) {
  const size_t total = p.out_count + 2 * kGuard;
  api.check(api.cuMemsetD8(p.output.get(), 0xff, total * sizeof(float)), "poisoning the output");
  std::vector<std::uint32_t> guard(kGuard, kGuardPattern);
  api.check(api.cuMemcpyHtoD(p.output.get(), guard.data(), kGuard * 4), "guard");
  api.check(api.cuMemcpyHtoD(p.output.get() + (kGuard + p.out_count) * 4, guard.data(), kGuard * 4), "guard");
  launch(api, l, d.stream);
  api.check(api.cuStreamSynchronize(d.stream), "the candidate");
  std::vector<float> got(total);
  api.check(api.cuMemcpyDtoH(got.data(), p.output.get(), total * sizeof(float)), "cuMemcpyDtoH");
  for (size_t g = 0; g < kGuard; ++g) {
    std::uint32_t before, after;
    std::memcpy(&before, &got[g], 4);
    std::memcpy(&after, &got[kGuard + p.out_count + g], 4);
    if (before != kGuardPattern || after != kGuardPattern) return "wrote outside the output";
  }
  const double unit = (p.terms + 2) * std::ldexp(1.0, -23);
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < p.out_count; ++i) {
    const double err = std::fabs(static_cast<double>(got[kGuard + i]) - p.reference[i]);
    if (!(err <= unit * p.magnitude[i] + 1e-30)) {  // NaN fails too
      if (bad++ == 0) first = i;
    }
  }
  if (bad == 0) return "";
  char text[200];
  std::snprintf(text, sizeof text, "%zu of %zu outputs wrong; output[%zu] = %g, expected %g", bad, p.out_count, first,
                static_cast<double>(got[kGuard + first]), p.reference[first]);
  return text;
}

void Tuner::prepare(Device& d, const KernelPlan& plan, const Compiled& compiled, Problem& problem, Loaded& l) {
  api_.check(api_.cuModuleLoadData(&l.module, compiled.cubin.data()), "loading the candidate");
  api_.check(api_.cuModuleGetFunction(&l.function, l.module, compiled.lowered.c_str()), "the candidate");
  l.shape = plan.schedule.algorithm->launch(plan, problem.batch);
  if (l.shape.grid_capped_by_residency) {
    int per_sm = 0;
    api_.check(api_.cuOccupancyMaxActiveBlocksPerMultiprocessor(
                   &per_sm, l.function, static_cast<int>(l.shape.block[0] * l.shape.block[1] * l.shape.block[2]), 0),
               "cuOccupancyMaxActiveBlocksPerMultiprocessor");
    const unsigned resident = static_cast<unsigned>(std::max(1, per_sm * d.id.sms));
    l.shape.grid[0] = std::min(l.shape.grid[0], resident);
  }
  l.in = problem.input.get();
  l.filter = problem.filter.get();
  l.ea = problem.ea.get();
  l.eb = problem.eb.get();
  l.residual = problem.residual.get();
  l.out = problem.out();
  l.count = static_cast<int>(l.shape.count);
  l.args = {&l.in, &l.filter, &l.ea, &l.eb};
  if (plan.workload.op->takes_residual) l.args.push_back(&l.residual);
  l.args.push_back(&l.out);
  if (l.shape.has_count) l.args.push_back(&l.count);
}

bool Tuner::confirm(Device& d, Problem& problem, Candidate& def, Candidate& best) {
  Compiled compiled[2];
  std::thread other([&] { compiled[1] = compile(api_, render_kernel(templates_, render_lib_, best.plan),
                                                "convgen_tune::" + best.plan.name, d.arch); });
  compiled[0] = compile(api_, render_kernel(templates_, render_lib_, def.plan), "convgen_tune::" + def.plan.name, d.arch);
  other.join();
  if (!compiled[0].ok || !compiled[1].ok) return false;
  Loaded l[2];
  std::vector<double> times[2];
  bool ok = true;
  try {
    for (int i = 0; i < 2; ++i) {
      prepare(d, i == 0 ? def.plan : best.plan, compiled[i], problem, l[i]);
      ok = ok && verify(api_, d, l[i], problem).empty();
    }
    // Alternating, so that drift of the clock or of the machine falls on both.
    for (int round = 0; ok && round < kConfirmRounds; ++round) {
      for (int i = 0; i < 2; ++i) {
        bool stopped = false;
        times[i].push_back(options_.objective == "cold" ? time_cold(api_, d, l[i]) : time_hot(api_, d, l[i], 0, stopped));
      }
    }
  } catch (const CudaError&) {
    ok = false;
  }
  for (Loaded& x : l) {
    if (x.module != nullptr) api_.cuModuleUnload(x.module);
  }
  if (!ok) return false;
  double& def_time = options_.objective == "cold" ? def.cold_us : def.hot_us;
  double& best_time = options_.objective == "cold" ? best.cold_us : best.hot_us;
  def_time = median(times[0]);
  best_time = median(times[1]);
  return score(best) < (1.0 - kMinGain) * score(def);
}

void Tuner::evaluate(Device& d, std::vector<Candidate>& batch, Problem& problem, KernelReport& report,
                     double& best_us) {
  // Compile every candidate of the batch at once, one per free core.
  std::vector<Compiled> compiled(batch.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < batch.size(); ++i) {
    threads.emplace_back([&, i] {
      const std::string source = render_kernel(templates_, render_lib_, batch[i].plan);
      slots_.acquire();
      compiled[i] = compile(api_, source, "convgen_tune::" + batch[i].plan.name, d.arch);
      slots_.release();
    });
  }
  for (std::thread& t : threads) t.join();

  for (size_t i = 0; i < batch.size() && !interrupted; ++i) {
    Candidate& c = batch[i];
    c.compile_s = compiled[i].seconds;
    if (!compiled[i].ok) {
      c.state = State::kCompileFailed;
      c.note = compiled[i].log.substr(0, 400);
      progress_->line("  compile failed: " + c.plan.schedule.summary() + "\n    " + c.note);
      continue;
    }
    Loaded l;
    try {
      prepare(d, c.plan, compiled[i], problem, l);
      // The test hook: this candidate is launched short of its work, so its
      // output is wrong and verification must reject it.
      const bool broken = !c.is_default && options_.break_candidate > 0 &&
                          ++candidate_counter_ == options_.break_candidate;
      if (broken) {
        // One work item fewer (a persistent kernel's blocks would cover a
        // missing block), else one block fewer: some outputs stay NaN.
        if (l.shape.has_count) {
          --l.count;
        } else if (l.shape.grid[0] > 1) {
          --l.shape.grid[0];
        } else if (l.shape.grid[1] > 1) {
          --l.shape.grid[1];
        } else {
          l.shape.grid[2] = std::max(1u, l.shape.grid[2]) - 1;
        }
      }
      std::string wrong;
      if (l.shape.grid[0] * l.shape.grid[1] * l.shape.grid[2] == 0) {
        // Nothing to launch: the output stays poisoned.
        const size_t total = problem.out_count + 2 * kGuard;
        api_.check(api_.cuMemsetD8(problem.output.get(), 0xff, total * sizeof(float)), "poisoning the output");
        wrong = "no block launched";
      } else {
        wrong = verify(api_, d, l, problem);
      }
      if (!wrong.empty()) {
        c.state = State::kRejected;
        c.note = wrong;
        progress_->line("  rejected: " + c.plan.schedule.summary() + ": " + wrong);
      } else {
        bool stopped = false;
        c.hot_us = time_hot(api_, d, l, options_.objective == "hot" ? best_us : 0, stopped);
        c.state = stopped ? State::kStoppedEarly : State::kTimed;
        // Cold times: every candidate's when ranking by them, else the
        // default's and each new best's (so the winner's is known).
        const bool new_best_hot = !stopped && (best_us <= 0 || c.hot_us < best_us);
        if (!stopped && (options_.objective == "cold" || c.is_default || new_best_hot)) c.cold_us = time_cold(api_, d, l);
        if (!stopped && (best_us <= 0 || score(c) < best_us)) best_us = score(c);
      }
    } catch (const CudaError& e) {
      c.state = State::kLaunchFailed;
      c.note = e.what();
      progress_->line("  launch failed: " + c.plan.schedule.summary() + ": " + c.note);
      // A fault poisons the context: nothing more can run on this device.
      if (std::string(e.what()).find("illegal") != std::string::npos) throw;
    }
    if (l.module != nullptr) api_.cuModuleUnload(l.module);
    report.candidates.push_back(c);
  }
}

// Every algorithm's own default (the default rule's schedule first), then
// the rest of the pruned space when it is small, else random samples of it.
std::vector<Candidate> Tuner::initial_candidates(const Workload& wl, KernelReport& report, std::mt19937_64& rng) {
  std::vector<Candidate> out;
  const auto seen = [&](const KernelPlan& p) {
    return std::any_of(out.begin(), out.end(), [&](const Candidate& c) { return c.plan.schedule == p.schedule; });
  };
  Candidate def;
  def.plan = plan_kernel(wl, plan_options_);
  def.is_default = true;
  out.push_back(def);

  std::vector<KernelPlan> pruned;
  bool enumerated = true;
  std::vector<KernelPlan> algorithm_defaults;
  for (const AlgorithmSpace& space : schedule_space(wl)) {
    if (!options_.algorithm.empty() && space.algorithm->name != options_.algorithm) continue;
    report.space_before += space.size;
    KernelPlan own;
    if (try_plan(wl, *space.algorithm, {}, plan_options_, own)) algorithm_defaults.push_back(own);
    const size_t before = pruned.size();
    char line[200];
    if (enumerate_schedules(wl, space, kEnumerateLimit, plan_options_, pruned)) {
      std::snprintf(line, sizeof line, "%s %.3g -> %zu fit", space.algorithm->name.c_str(), space.size,
                    pruned.size() - before);
    } else {
      enumerated = false;
      std::snprintf(line, sizeof line, "%s %.3g (not enumerated%s)", space.algorithm->name.c_str(), space.size,
                    own.schedule.algorithm != nullptr ? "" : "; its default does not fit");
    }
    report.space_detail += (report.space_detail.empty() ? "" : "; ") + std::string(line);
  }
  report.space_after = enumerated ? static_cast<long long>(pruned.size()) : -1;
  for (const KernelPlan& p : algorithm_defaults) {
    if (!seen(p)) out.push_back(as_candidate(p));
  }
  const bool exhaustive = options_.search == "exhaustive" ? enumerated : enumerated && pruned.size() <= kExhaustiveLimit;
  if (options_.search == "exhaustive" && !enumerated) {
    progress_->line("  the space is too large to enumerate (over " + std::to_string(static_cast<long long>(kEnumerateLimit)) +
                    " schedules for an algorithm): searching instead");
  }
  report.search = exhaustive ? "exhaustive" : "sampled";
  if (exhaustive) {
    for (const KernelPlan& p : pruned) {
      if (!seen(p)) out.push_back(as_candidate(p));
    }
    return out;
  }
  // Samples: uniform over the enumerated part, random walks from each
  // algorithm's default for the rest.
  std::shuffle(pruned.begin(), pruned.end(), rng);
  size_t drawn = 0;
  for (size_t i = 0; i < pruned.size() && drawn < kInitialSamples / 2; ++i) {
    if (!seen(pruned[i])) {
      out.push_back(as_candidate(pruned[i]));
      ++drawn;
    }
  }
  for (int attempt = 0; drawn < kInitialSamples && attempt < 4 * static_cast<int>(kInitialSamples) &&
                        !algorithm_defaults.empty();
       ++attempt) {
    const KernelPlan& from = algorithm_defaults[static_cast<size_t>(attempt) % algorithm_defaults.size()];
    KernelPlan p = random_walk(from, kWalkSteps, rng, plan_options_);
    if (!seen(p)) {
      out.push_back(as_candidate(p));
      ++drawn;
    }
  }
  return out;
}

KernelReport Tuner::tune_kernel(Device& d, const KernelPlan& plan) {
  const auto start = std::chrono::steady_clock::now();
  KernelReport report;
  report.kernel = plan.name;
  report.gpu = d.id.name;
  Workload wl = plan.workload;
  wl.schedule = ScheduleRequest{};
  wl.schedule.where = plan.workload.where;
  std::mt19937_64 rng(options_.seed ^ std::hash<std::string>{}(plan.name));

  std::vector<Candidate> pending = initial_candidates(wl, report, rng);
  progress_->line("  space before -> after pruning: " + report.space_detail + "; search: " + report.search);

  Problem problem = make_problem(api_, d, plan);
  double best_us = 0;
  const bool exhaustive = report.search == "exhaustive";
  const auto key = [](const KernelPlan& p) {
    std::string k = p.schedule.algorithm_name();
    for (const auto& [name, value] : p.schedule.values) k += " " + name + "=" + std::to_string(value);
    return k;
  };
  std::set<std::string> tried;
  std::vector<size_t> expanded;  // candidates whose neighbours were queued
  while (!interrupted) {
    if (pending.empty()) {
      if (exhaustive) break;
      // Local search: the neighbours of the best timed candidate not yet expanded.
      int best = -1;
      for (size_t i = 0; i < report.candidates.size(); ++i) {
        const Candidate& c = report.candidates[i];
        if (c.state != State::kTimed) continue;
        if (std::find(expanded.begin(), expanded.end(), i) != expanded.end()) continue;
        if (best < 0 || score(c) < score(report.candidates[static_cast<size_t>(best)])) best = static_cast<int>(i);
      }
      if (best < 0) break;
      // Expand only candidates within kEarlyStop of the best overall.
      if (score(report.candidates[static_cast<size_t>(best)]) > kEarlyStop * best_us) break;
      expanded.push_back(static_cast<size_t>(best));
      for (KernelPlan& n : neighbour_schedules(report.candidates[static_cast<size_t>(best)].plan, plan_options_)) {
        if (!tried.count(key(n))) pending.push_back(as_candidate(std::move(n)));
      }
      continue;
    }
    if (!exhaustive && seconds_since(start) > options_.budget_s) break;
    std::vector<Candidate> batch;
    while (!pending.empty() && batch.size() < kBatch) {
      Candidate c = std::move(pending.front());
      pending.erase(pending.begin());
      if (tried.insert(key(c.plan)).second) batch.push_back(std::move(c));
    }
    if (batch.empty()) continue;
    evaluate(d, batch, problem, report, best_us);

    // The status line.
    int compiled = 0, verified = 0, rejected = 0;
    for (const Candidate& c : report.candidates) {
      compiled += c.state != State::kCompileFailed;
      verified += c.state == State::kTimed || c.state == State::kStoppedEarly;
      rejected += c.state == State::kRejected;
    }
    const double default_us = score(report.candidates.front());
    char status[200];
    std::snprintf(status, sizeof status,
                  "  %s done | compiled %d, verified %d, rejected %d | best %.2f us (%.2fx the default) | %s | ETA %s",
                  progress_->counts().c_str(), compiled, verified, rejected, best_us,
                  best_us > 0 ? default_us / best_us : 0.0, duration_text(seconds_since(start)).c_str(),
                  progress_->eta(options_.budget_s).c_str());
    progress_->status(status);
  }

  // The best verified candidate, by the objective; the default is always timed.
  for (size_t i = 0; i < report.candidates.size(); ++i) {
    const Candidate& c = report.candidates[i];
    if (c.is_default) report.default_index = static_cast<int>(i);
    if (c.state != State::kTimed) continue;
    if (report.best < 0 || score(c) < score(report.candidates[static_cast<size_t>(report.best)])) {
      report.best = static_cast<int>(i);
    }
  }
  if (report.best >= 0 && report.default_index >= 0 && report.best != report.default_index && !interrupted) {
    Candidate& best = report.candidates[static_cast<size_t>(report.best)];
    Candidate& def = report.candidates[static_cast<size_t>(report.default_index)];
    const double searched = score(best);
    if (confirm(d, problem, def, best)) {
      report.confirmed = true;
    } else {
      char line[300];
      std::snprintf(line, sizeof line,
                    "  kept the default: the best (%.2f us in the search) timed again at %.2f us against the "
                    "default's %.2f us, not %.0f%% faster",
                    searched, score(best), score(def), 100 * kMinGain);
      progress_->line(line);
      report.best = report.default_index;
    }
  }
  report.wall_s = seconds_since(start);
  return report;
}


void Tuner::worker(Device& d) {
  try {
    api_.check(api_.cuCtxSetCurrent(d.context), "cuCtxSetCurrent");
  } catch (const CudaError& e) {
    progress_->line(std::string("convgen tune: error: ") + e.what());
    ++failures_;
    return;
  }
  while (!interrupted) {
    const KernelPlan* plan = nullptr;
    {
      std::lock_guard<std::mutex> lock(queue_mutex_);
      if (queue_.empty()) return;
      plan = queue_.front();
      queue_.pop_front();
    }
    progress_->line("[" + progress_->start() + "] " + plan->name + " on " + d.id.name + " (device " +
                    std::to_string(d.ordinal) + ")");
    KernelReport report;
    try {
      report = tune_kernel(d, *plan);
    } catch (const std::exception& e) {
      progress_->line("  error: " + std::string(e.what()) + "; the kernel keeps its previous entry, if any");
      ++failures_;
      progress_->kernel_done(0, false);
      if (dynamic_cast<const CudaError*>(&e) != nullptr && std::string(e.what()).find("illegal") != std::string::npos) {
        return;  // this device's context is lost
      }
      continue;
    }
    if (interrupted) break;  // a kernel cut short is not recorded
    std::lock_guard<std::mutex> lock(db_mutex_);
    if (report.best < 0 || report.default_index < 0 ||
        report.candidates[static_cast<size_t>(report.default_index)].state != State::kTimed) {
      const std::string why = report.default_index >= 0
                                  ? report.candidates[static_cast<size_t>(report.default_index)].note
                                  : std::string("not run");
      progress_->line("  error: the default schedule did not pass (" + why + "); nothing recorded");
      ++failures_;
    } else {
      const Candidate& best = report.candidates[static_cast<size_t>(report.best)];
      const Candidate& def = report.candidates[static_cast<size_t>(report.default_index)];
      TuningEntry e;
      e.kernel = plan->name;
      e.op = plan->workload.op;
      e.gpu = d.id;
      e.schedule.algorithm = best.plan.schedule.algorithm_name();
      e.schedule.values = best.plan.schedule.values;
      e.objective = options_.objective;
      e.time_us = score(best);
      e.default_us = score(def);
      e.default_schedule = def.plan.schedule.summary();
      for (const Candidate& c : report.candidates) {
        e.compiled += c.state != State::kCompileFailed;
        e.failed += c.state == State::kCompileFailed || c.state == State::kLaunchFailed;
        e.verified += c.state == State::kTimed || c.state == State::kStoppedEarly;
        e.rejected += c.state == State::kRejected;
      }
      e.tuning_s = report.wall_s;
      e.date = today();
      e.fingerprint = fingerprints_.at(best.plan.schedule.algorithm->template_file);
      char line[400];
      std::snprintf(line, sizeof line,
                    "  best%s: %s\n        %.2f us hot, %.2f us cold; default %.2f us hot (%.2fx); %d compiled, "
                    "%d verified, %d rejected, %d failed; %.1f s",
                    // With several workers their lines interleave: say whose.
                    options_.devices.size() > 1 ? (" for " + plan->name).c_str() : "",
                    best.plan.schedule.summary().c_str(), best.hot_us, best.cold_us, def.hot_us,
                    def.hot_us / best.hot_us, e.compiled, e.verified, e.rejected, e.failed, report.wall_s);
      progress_->line(line);
      db_.put(std::move(e));
      try {
        write_tuning_file(options_.db_path, db_);
      } catch (const std::exception& ex) {
        progress_->line(std::string("convgen tune: error: ") + ex.what());
        ++failures_;
        interrupted = true;
      }
    }
    reports_.push_back(std::move(report));
    progress_->kernel_done(reports_.back().wall_s, true);
  }
}

int Tuner::run() {
  // The devices first: a machine without a GPU fails here, before any work.
  int count = 0;
  api_.check(api_.cuDeviceGetCount(&count), "cuDeviceGetCount");
  std::vector<Device> devices(options_.devices.size());
  for (size_t i = 0; i < devices.size(); ++i) {
    const int ordinal = options_.devices[i];
    if (ordinal < 0 || ordinal >= count) {
      throw CudaError("--devices: no device " + std::to_string(ordinal) + " (this machine has " +
                      std::to_string(count) + ": 0.." + std::to_string(count - 1) + ")");
    }
    open_device(devices[i], ordinal);
  }

  // The database so far: its entries are kept, and kernels it holds for a
  // device's GPU with the current fingerprint are not tuned again.
  if (std::filesystem::exists(options_.db_path)) db_ = parse_tuning_file(options_.db_path);
  db_.file = options_.db_path;
  std::vector<std::string> kept;
  for (const KernelPlan& p : lib_.kernels) {
    if (!options_.kernels.empty() && p.name.find(options_.kernels) == std::string::npos) continue;
    if (p.origin == ScheduleOrigin::kSpec) {
      kept.push_back(p.name + ": the spec sets its schedule");
      continue;
    }
    const TuningEntry* e = db_.find(p.name, devices.front().id.name);
    if (e != nullptr && !options_.retune) {
      if (stale_entry_note(*e, fingerprints_).empty()) {
        kept.push_back(p.name + ": in the database (--retune tunes it again)");
        continue;
      }
    }
    queue_.push_back(&p);
  }
  progress_ = std::make_unique<Progress>(queue_.size(), devices.size());
  for (const std::string& k : kept) progress_->line("kept " + k);
  char budget[32];
  std::snprintf(budget, sizeof budget, "%g", options_.budget_s);
  progress_->line("convgen tune: " + std::to_string(queue_.size()) + " kernel(s) to tune on " +
                  std::to_string(devices.size()) + " device(s), " + budget +
                  " s of search each (search " + options_.search + ", objective " + options_.objective +
                  "); database " + options_.db_path);

  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
  std::vector<std::thread> workers;
  for (Device& d : devices) workers.emplace_back([this, &d] { worker(d); });
  for (std::thread& t : workers) t.join();
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);

  if (!options_.report_json.empty()) {
    nlohmann::json j = nlohmann::json::array();
    for (const KernelReport& r : reports_) j.push_back(report_json(r));
    std::ofstream(options_.report_json) << j.dump(1) << "\n";
  }
  for (Device& d : devices) {
    api_.cuModuleUnload(d.reference_module);
    api_.cuStreamDestroy(d.stream);
    d.flush = DeviceMemory();
    api_.cuDevicePrimaryCtxRelease(d.device);
  }
  if (interrupted) {
    std::fprintf(stderr, "convgen tune: interrupted; %zu kernel(s) finished are in %s; run the same command to go on\n",
                 reports_.size(), options_.db_path.c_str());
    return 130;
  }
  std::fprintf(stderr, "convgen tune: %zu kernel(s) tuned, %zu kept, %d error(s); database %s\n", reports_.size(),
               kept.size(), failures_.load(), options_.db_path.c_str());
  return failures_ > 0 ? 1 : 0;
}

}  // namespace

int run_tune(const LibraryPlan& lib, const Templates& templates, const TuneOptions& options) {
  try {
    Tuner tuner(lib, templates, options);
    return tuner.run();
  } catch (const InputError& e) {
    std::fputs(e.what(), stderr);
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "convgen tune: error: %s\n", e.what());
    return 1;
  }
}

}  // namespace convgen::tune
