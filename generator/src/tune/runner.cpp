#include "tune/runner.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <system_error>
#include <thread>

namespace convgen::tune {

using namespace convgen::gen;

namespace {

// Hot timing: graphs of about this many microseconds of launches, replayed
// kHotReplays times; a candidate whose first replays are kEarlyStop times the
// best so far is not timed further.
constexpr double kHotGraphUs = 1000;
constexpr int kHotReplays = 9;
constexpr int kColdTrials = 9;

}  // namespace

DeviceMemory::DeviceMemory(const CudaApi& api, size_t bytes) : api_(&api), bytes_(bytes) {
  if (bytes > 0) api.check(api.cuMemAlloc(&ptr_, bytes), "cuMemAlloc");
}

DeviceMemory::~DeviceMemory() {
  if (ptr_ != 0) api_->cuMemFree(ptr_);
}

void open_device(const CudaApi& api, Device& d, int ordinal) {
  d.ordinal = ordinal;
  api.check(api.cuDeviceGet(&d.device, ordinal), ("device " + std::to_string(ordinal)).c_str());
  char name[256] = {};
  api.check(api.cuDeviceGetName(name, sizeof name, d.device), "cuDeviceGetName");
  int major = 0, minor = 0, sms = 0, l2 = 0;
  api.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d.device);
  api.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d.device);
  api.cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d.device);
  api.cuDeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, d.device);
  d.id = GpuId{name, sms, std::to_string(major) + "." + std::to_string(minor)};
  d.arch = major * 10 + minor;
  api.check(api.cuDevicePrimaryCtxRetain(&d.context, d.device), "cuDevicePrimaryCtxRetain");
  api.check(api.cuCtxSetCurrent(d.context), "cuCtxSetCurrent");
  api.check(api.cuStreamCreate(&d.stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  d.flush = DeviceMemory(api, 2 * static_cast<size_t>(std::max(l2, 1 << 20)));
  const Compiled ref = compile(api, "#include <convgen/oracle/reference.cuh>\n", oracle::kReferenceKernel, d.arch);
  if (!ref.ok) throw CudaError("the reference kernel does not compile:\n" + ref.log);
  api.check(api.cuModuleLoadData(&d.reference_module, ref.cubin.data()), "loading the reference kernel");
  api.check(api.cuModuleGetFunction(&d.reference, d.reference_module, ref.lowered.c_str()), "the reference kernel");
}

void close_device(const CudaApi& api, Device& d) {
  api.cuModuleUnload(d.reference_module);
  api.cuStreamDestroy(d.stream);
  d.flush = DeviceMemory();
  api.cuDevicePrimaryCtxRelease(d.device);
}

// Copies to the GPU go on the stream the kernels run on, so that a launch
// waits for them: a plain copy from pageable memory returns before it has
// all landed, and the stream does not wait for it (CU_STREAM_NON_BLOCKING):
// the tail of the output's poison once landed after a fast candidate had
// written its last outputs, and failed it. The host data is staged before
// the call returns.
namespace {
void copy_to_gpu(const CudaApi& api, CUstream stream, CUdeviceptr to, const void* from, size_t bytes) {
  if (bytes > 0) api.check(api.cuMemcpyHtoDAsync(to, from, bytes, stream), "cuMemcpyHtoDAsync");
}
}  // namespace

Problem make_problem(const CudaApi& api, Device& d, const KernelPlan& plan) {
  const Workload& wl = plan.workload;
  Problem p;
  p.reference_problem = wl.op->reference_problem(wl, wl.n == 0 ? 1 : wl.n);  // a runtime batch is tuned at 1
  const oracle::ReferenceProblem& rp = p.reference_problem;
  const oracle::Operands operands = oracle::make_operands(rp, std::random_device{}());
  const auto upload_bytes = [&](const std::vector<unsigned char>& host) {
    DeviceMemory m(api, std::max<size_t>(host.size(), 1));
    copy_to_gpu(api, d.stream, m.get(), host.data(), host.size());
    return m;
  };
  // The kernel's operands, in its dtype and layout.
  using oracle::Tensor;
  p.input = upload_bytes(oracle::stored(rp, Tensor::kInput, operands.input));
  p.filter = upload_bytes(oracle::stored(rp, Tensor::kFilter, operands.filter));
  p.ea = upload_bytes(oracle::stored(rp, Tensor::kPerChannel, operands.epilogue_a));
  p.eb = upload_bytes(oracle::stored(rp, Tensor::kPerChannel, operands.epilogue_b));
  if (rp.residual) p.residual = upload_bytes(oracle::stored(rp, Tensor::kResidual, operands.residual));
  const size_t out_count = static_cast<size_t>(oracle::output_count(rp));
  p.output = DeviceMemory(api, oracle::poisoned_output(rp).size());

  // The reference reads float NCHW copies of the same values, from scratch buffers.
  const auto upload = [&](const std::vector<float>& host) {
    DeviceMemory m(api, std::max<size_t>(host.size(), 1) * sizeof(float));
    copy_to_gpu(api, d.stream, m.get(), host.data(), host.size() * sizeof(float));
    return m;
  };
  const DeviceMemory ref_input = upload(operands.input), ref_filter = upload(operands.filter);
  const DeviceMemory ref_ea = upload(operands.epilogue_a), ref_eb = upload(operands.epilogue_b);
  const DeviceMemory ref_residual = rp.residual ? upload(operands.residual) : DeviceMemory();
  DeviceMemory value(api, out_count * sizeof(double)), magnitude(api, out_count * sizeof(double));
  CUdeviceptr in = ref_input.get(), filter = ref_filter.get(), ea = ref_ea.get(), eb = ref_eb.get();
  CUdeviceptr residual = ref_residual.get(), v = value.get(), m = magnitude.get();
  const auto reference_of = [&](oracle::ReferenceProblem problem) {
    void* args[] = {&problem, &in, &filter, &ea, &eb, &residual, &v, &m};
    api.check(api.cuLaunchKernel(d.reference, oracle::reference_blocks(problem), 1, 1, oracle::kReferenceBlock, 1, 1,
                                 0, d.stream, args, nullptr),
              "the reference");
    api.check(api.cuStreamSynchronize(d.stream), "the reference");
    oracle::Reference r;
    r.value.resize(out_count);
    r.magnitude.resize(out_count);
    api.check(api.cuMemcpyDtoH(r.value.data(), v, out_count * sizeof(double)), "cuMemcpyDtoH");
    api.check(api.cuMemcpyDtoH(r.magnitude.data(), m, out_count * sizeof(double)), "cuMemcpyDtoH");
    return r;
  };
  p.reference = reference_of(rp);
  for (const gen::Algorithm* algorithm : wl.op->algorithms) {
    if (algorithm->winograd_f4_bound && algorithm->serves(wl) && algorithm->serves_shape(wl)) {
      p.reference_problem_f4 = rp;
      p.reference_problem_f4.winograd_f4 = true;
      p.reference_f4 = reference_of(p.reference_problem_f4);
      break;
    }
  }
  return p;
}

namespace {

// A loaded candidate and its launch: a cubin's kernel, launched as its
// algorithm's LaunchDescription says, or a shared object's launcher (nvcc's
// builds), called for the problem's batch.
struct Loaded {
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  LaunchShape shape;
  std::vector<void*> args;
  void* library = nullptr;
  SharedObjectLauncher launcher = nullptr;
  int batch = 0;
  CUdeviceptr in, filter, ea, eb, residual, out;
  DeviceMemory workspace;  // the scratch memory a launcher's kernels compute through (none for most)
  int count = 0;
  bool winograd_f4_bound = false;  // its algorithm's: which of the problem's references checks it
};

void launch(const CudaApi& api, Loaded& l, CUstream stream) {
  if (l.launcher != nullptr) {
    const auto pointer = [](CUdeviceptr p) { return reinterpret_cast<void*>(static_cast<uintptr_t>(p)); };
    if (const char* error = l.launcher(pointer(l.in), pointer(l.filter), pointer(l.ea), pointer(l.eb),
                                       pointer(l.residual), pointer(l.out), pointer(l.workspace.get()), l.batch,
                                       stream)) {
      throw CudaError(std::string("the candidate's launcher: ") + error);
    }
    return;
  }
  api.check(api.cuLaunchKernel(l.function, l.shape.grid[0], l.shape.grid[1], l.shape.grid[2], l.shape.block[0],
                               l.shape.block[1], l.shape.block[2],
                               static_cast<unsigned>(l.shape.dynamic_shared_bytes), stream, l.args.data(), nullptr),
            "cuLaunchKernel");
}

// Nothing to launch: an empty grid, or (a launcher's) no image.
bool launches_nothing(const Loaded& l) {
  return l.launcher != nullptr ? l.batch == 0 : l.shape.grid[0] * l.shape.grid[1] * l.shape.grid[2] == 0;
}

void unload(const CudaApi& api, Loaded& l) {
  if (l.module != nullptr) api.cuModuleUnload(l.module);
  if (l.library != nullptr) dlclose(l.library);
  l.module = nullptr;
  l.library = nullptr;
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

// Poisons the output (the oracle's NaN and guard words).
void poison(const CudaApi& api, Device& d, Problem& p) {
  const std::vector<unsigned char> poisoned = oracle::poisoned_output(p.reference_problem);
  copy_to_gpu(api, d.stream, p.output.get(), poisoned.data(), poisoned.size());
}

// Poisons the output, runs the candidate once and has the oracle compare
// every element with the reference; "" when all are within the bound, else
// what is wrong and the first wrong element.
std::string verify(const CudaApi& api, Device& d, Loaded& l, Problem& p) {
  poison(api, d, p);
  launch(api, l, d.stream);
  api.check(api.cuStreamSynchronize(d.stream), "the candidate");
  std::vector<unsigned char> got(p.output.bytes());
  api.check(api.cuMemcpyDtoH(got.data(), p.output.get(), got.size()), "cuMemcpyDtoH");
  const oracle::ReferenceProblem& rp = l.winograd_f4_bound ? p.reference_problem_f4 : p.reference_problem;
  return oracle::describe(oracle::compare(rp, got, l.winograd_f4_bound ? p.reference_f4 : p.reference), rp, 1);
}

void prepare(const CudaApi& api, Device& d, const KernelPlan& plan, const Compiled& compiled, Problem& problem,
             Loaded& l) {
  l.in = problem.input.get();
  l.filter = problem.filter.get();
  l.ea = problem.ea.get();
  l.eb = problem.eb.get();
  l.residual = problem.residual.get();
  l.out = problem.out();
  l.winograd_f4_bound = plan.schedule.algorithm->winograd_f4_bound;
  if (!compiled.shared_object.empty()) {
    l.library = dlopen(compiled.shared_object.c_str(), RTLD_NOW | RTLD_LOCAL);
    // Loaded (or not), the file is not needed again: a run builds hundreds.
    std::error_code ec;
    std::filesystem::remove(compiled.shared_object, ec);
    if (l.library == nullptr) throw CudaError(std::string("loading the candidate: ") + dlerror());
    l.launcher = reinterpret_cast<SharedObjectLauncher>(dlsym(l.library, kSharedObjectLauncher));
    if (l.launcher == nullptr) throw CudaError(std::string("the candidate's launcher: ") + dlerror());
    l.batch = problem.reference_problem.n;
    const long long workspace = plan.workspace_bytes(l.batch);
    if (workspace > 0) l.workspace = DeviceMemory(api, static_cast<size_t>(workspace));
    return;
  }
  api.check(api.cuModuleLoadData(&l.module, compiled.cubin.data()), "loading the candidate");
  api.check(api.cuModuleGetFunction(&l.function, l.module, compiled.lowered.c_str()), "the candidate");
  l.shape = plan.schedule.algorithm->launch(plan, problem.reference_problem.n);
  if (l.shape.dynamic_shared_bytes > 0) {
    api.check(api.cuFuncSetAttribute(l.function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                     l.shape.dynamic_shared_bytes),
              "cuFuncSetAttribute (dynamic shared memory)");
  }
  if (l.shape.grid_capped_by_residency) {
    int per_sm = 0;
    api.check(api.cuOccupancyMaxActiveBlocksPerMultiprocessor(
                   &per_sm, l.function, static_cast<int>(l.shape.block[0] * l.shape.block[1] * l.shape.block[2]), 0),
               "cuOccupancyMaxActiveBlocksPerMultiprocessor");
    const unsigned resident = static_cast<unsigned>(std::max(1, per_sm * d.id.sms));
    l.shape.grid[0] = std::min(l.shape.grid[0], resident);
  }
  l.count = static_cast<int>(l.shape.count);
  l.args = {&l.in, &l.filter, &l.ea, &l.eb};
  if (plan.workload.op->takes_residual) l.args.push_back(&l.residual);
  l.args.push_back(&l.out);
  if (l.shape.has_count) l.args.push_back(&l.count);
}

}  // namespace

bool measure(const CudaApi& api, Device& d, Problem& problem, const Compiled& compiled, Candidate& c,
             const MeasureOptions& options) {
  Loaded l;
  bool context_lost = false;
  try {
    prepare(api, d, c.plan, compiled, problem, l);
    if (options.break_it && options.break_it()) {
      // One work item fewer (a persistent kernel's blocks would cover a
      // missing block), else one block fewer, or (a launcher) one image
      // fewer: some outputs stay NaN.
      if (l.launcher != nullptr) {
        --l.batch;
      } else if (l.shape.has_count) {
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
    if (launches_nothing(l)) {
      // Nothing to launch: the output stays poisoned.
      poison(api, d, problem);
      wrong = "no block launched";
    } else {
      wrong = verify(api, d, l, problem);
    }
    if (!wrong.empty()) {
      c.state = State::kRejected;
      c.note = wrong;
    } else {
      const double best_us = options.best_us;
      bool stopped = false;
      c.hot_us = time_hot(api, d, l, options.objective == "hot" ? best_us : 0, stopped);
      c.state = stopped ? State::kStoppedEarly : State::kTimed;
      // Cold times: every candidate's when ranking by them, else the
      // default's and each new best's (so the winner's is known).
      const bool new_best_hot = !stopped && (best_us <= 0 || c.hot_us < best_us);
      if (!stopped && (options.objective == "cold" || c.is_default || new_best_hot)) c.cold_us = time_cold(api, d, l);
    }
  } catch (const CudaError& e) {
    c.state = State::kLaunchFailed;
    c.note = e.what();
    // A fault poisons the context: nothing more can run on this device.
    context_lost = c.note.find("illegal") != std::string::npos;
  }
  if (!context_lost) unload(api, l);
  return !context_lost;
}

bool confirm(const CudaApi& api, const Builder& builder, Device& d, Problem& problem, Candidate& def,
             Candidate& best, const std::string& objective) {
  Compiled compiled[2];
  std::thread other([&] { compiled[1] = builder.build(best.plan, d.arch); });
  compiled[0] = builder.build(def.plan, d.arch);
  other.join();
  if (!compiled[0].ok || !compiled[1].ok) return false;
  Loaded l[2];
  std::vector<double> times[2];
  bool ok = true;
  try {
    for (int i = 0; i < 2; ++i) {
      prepare(api, d, i == 0 ? def.plan : best.plan, compiled[i], problem, l[i]);
      ok = ok && verify(api, d, l[i], problem).empty();
    }
    // Alternating, so that drift of the clock or of the machine falls on both.
    for (int round = 0; ok && round < kConfirmRounds; ++round) {
      for (int i = 0; i < 2; ++i) {
        bool stopped = false;
        times[i].push_back(objective == "cold" ? time_cold(api, d, l[i]) : time_hot(api, d, l[i], 0, stopped));
      }
    }
  } catch (const CudaError&) {
    ok = false;
  }
  for (Loaded& x : l) unload(api, x);
  if (!ok) return false;
  double& def_time = objective == "cold" ? def.cold_us : def.hot_us;
  double& best_time = objective == "cold" ? best.cold_us : best.hot_us;
  def_time = median(times[0]);
  best_time = median(times[1]);
  return score(best, objective) < (1.0 - kMinGain) * score(def, objective);
}

}  // namespace convgen::tune
