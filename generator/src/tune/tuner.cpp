// `convgen tune`. For each kernel: the schedule space (the core's), a search
// over it, and for each candidate: render (the core's templates, in memory)
// -> compile (NVRTC, in parallel, for the device's own architecture; nvcc
// for kernels on CUTLASS's headers) -> load (driver API; dlopen) -> verify
// (every output element against a float64 reference computed on the GPU,
// output poisoned first) -> time (hot: CUDA graph replays; cold: L2 flushed). The fastest verified candidate becomes the
// kernel's entry in the tuning database, written after each kernel.
//
// This unit orchestrates: the kernels to tune, one worker per device, the
// database writes and the progress lines. The jobs are units of their own:
// the space (tune/space.cpp, in the core), the search (search.*), NVRTC
// and nvcc (builder.*), the device, verification and timing (runner.*), the
// terminal (progress.*) and the report (report.*).
#include "tune/tuner.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "convgen/gen/tuning_db.hpp"
#include "tune/builder.hpp"
#include "tune/cuda_api.hpp"
#include "tune/progress.hpp"
#include "tune/report.hpp"
#include "tune/runner.hpp"
#include "tune/search.hpp"

namespace convgen::tune {

using namespace convgen::gen;

namespace {

// Candidates compiled together (NVRTC runs one per core).
constexpr size_t kBatch = 16;

std::atomic<bool> interrupted{false};

extern "C" void on_interrupt(int) {
  if (interrupted.exchange(true)) std::_Exit(130);  // a second Ctrl-C: stop now
}

std::string today() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[16];
  std::strftime(text, sizeof text, "%Y-%m-%d", &tm);
  return text;
}

// The database a run continues: its entries are kept, except those whose
// checksum fails (changed after convgen wrote them), which are dropped and
// listed, never signed anew.
TuningDb continued_database(const std::string& path, std::vector<std::string>& dropped) {
  TuningDb db;
  if (std::filesystem::exists(path)) {
    db = parse_tuning_file(path, TuningTrust::kAllowUnverified);
    dropped = drop_unverified_entries(db);
  }
  db.file = path;
  return db;
}

// Whether an entry's schedule plans for the kernel's workload on this run's
// GPU list: one tuned for a looser list (or by a generator with other
// limits) is tuned again, as a build for this list would not apply it.
bool fits(const TuningEntry& e, const KernelPlan& p, const LibraryPlan& lib) {
  PlanOptions options;
  options.target = lib.target;
  return plan_with_schedule(p.workload, e.schedule, options).has_value();
}

// The kernels a run tunes on `gpu`, in the library's order: those the
// options select, less those the database holds for that GPU with the
// current fingerprint and a schedule that fits this run's GPU list (unless
// --retune) and those `cannot_tune` gives a reason for; `kept` says why
// each other is not.
std::vector<const KernelPlan*> kernels_to_tune(const LibraryPlan& lib, const TuningDb& db, const std::string& gpu,
                                               const TuneOptions& options,
                                               const std::map<std::string, std::string>& fingerprints,
                                               const std::function<std::string(const KernelPlan&)>& cannot_tune,
                                               std::vector<std::string>& kept) {
  std::vector<const KernelPlan*> queue;
  for (const KernelPlan& p : lib.kernels) {
    if (!options.kernels.empty() && p.name.find(options.kernels) == std::string::npos) continue;
    if (!options.kernel_names.empty() &&
        std::find(options.kernel_names.begin(), options.kernel_names.end(), p.name) == options.kernel_names.end()) {
      continue;
    }
    if (p.origin == ScheduleOrigin::kSpec) {
      kept.push_back(p.name + ": the spec sets its schedule");
      continue;
    }
    if (const std::string why = cannot_tune ? cannot_tune(p) : ""; !why.empty()) {
      kept.push_back(p.name + ": " + why + "; it keeps its schedule");
      continue;
    }
    const TuningEntry* e = db.find(p.name, gpu);
    if (e != nullptr && !options.retune && stale_entry_note(*e, fingerprints).empty() && fits(*e, p, lib)) {
      kept.push_back(p.name + ": in the database (--retune tunes it again)");
      continue;
    }
    queue.push_back(&p);
  }
  return queue;
}

// Kernel names the options ask for by name that the specs do not make: an
// error, so that a cluster task for a renamed kernel fails loudly.
std::vector<std::string> unknown_kernel_names(const LibraryPlan& lib, const TuneOptions& options) {
  std::vector<std::string> unknown;
  for (const std::string& name : options.kernel_names) {
    const bool known = std::any_of(lib.kernels.begin(), lib.kernels.end(),
                                   [&](const KernelPlan& p) { return p.name == name; });
    if (!known) unknown.push_back(name);
  }
  return unknown;
}

// Why a file that tune writes (the database, the report) could not be
// written where `option` puts it, or "": checked before any kernel is
// tuned, not after the first one's minutes.
std::string unwritable_file(const std::string& path, const std::string& option) {
  namespace fs = std::filesystem;
  const fs::path folder = fs::path(path).parent_path().empty() ? fs::path(".") : fs::path(path).parent_path();
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) return option + " " + path + ": the folder " + folder.string() + " does not exist";
  if (fs::is_directory(path, ec)) return option + " " + path + " is a folder; give a file";
  return "";
}

// An entry for `kernel` on `gpu` with schedule `best` (the objective, the
// date and the fingerprint of its algorithm's template): the caller adds
// the times and the candidates' counts.
TuningEntry entry_for(const KernelPlan& kernel, const Schedule& best, const GpuId& gpu, const TuneOptions& options,
                      const std::map<std::string, std::string>& fingerprints) {
  TuningEntry e;
  e.kernel = kernel.name;
  e.op = kernel.workload.op;
  e.gpu = gpu;
  e.schedule.algorithm = best.algorithm_name();
  e.schedule.values = best.values;
  e.objective = options.objective;
  e.date = today();
  e.fingerprint = fingerprints.at(best.algorithm->template_file);
  return e;
}

// ---------------------------------------------------------------------------
// The tuner.

class Tuner {
 public:
  Tuner(const LibraryPlan& lib, const Templates& templates, const TuneOptions& options)
      : api_(CudaApi::get()), lib_(lib), options_(options), builder_(api_, templates, options.cutlass_include) {
    plan_options_.target = lib.target;  // candidates are planned for the GPUs the library is
    fingerprints_ = tuning_fingerprints(templates);
  }

  int run();

 private:
  void worker(Device& d);
  KernelReport tune_kernel(Device& d, const KernelPlan& plan);
  void evaluate(Device& d, std::vector<Candidate>& batch, Problem& problem, KernelReport& report,
                const SearchOptions& search_options, double& best_us, double& bar_us);
  // A candidate's time by the objective.
  double score(const Candidate& c) const { return tune::score(c, options_.objective); }
  // "" when this machine can tune `p` on a GPU of `arch`: the kernel runs
  // there, and its compiler is here. Else why not.
  std::string why_not_here(const KernelPlan& p, int arch) const {
    if ((p.min_arch != 0 && arch < p.min_arch) || (p.max_arch != 0 && arch > p.max_arch)) {
      return "it runs on " + p.gpus_it_runs_on() + " only, and this GPU is sm_" + std::to_string(arch);
    }
    if (const std::string why = builder_.cannot_build(*p.schedule.algorithm); !why.empty()) {
      return "its algorithm (" + p.schedule.algorithm_name() + ") is built with nvcc, and " + why;
    }
    return "";
  }

  const CudaApi& api_;
  const LibraryPlan& lib_;
  TuneOptions options_;
  Builder builder_;
  std::map<std::string, std::string> fingerprints_;
  PlanOptions plan_options_;

  std::mutex queue_mutex_;
  std::deque<const KernelPlan*> queue_;
  std::mutex db_mutex_;
  TuningDb db_;
  std::vector<KernelReport> reports_;
  std::unique_ptr<Progress> progress_;
  std::atomic<int> failures_{0};
};

// best_us: the best time so far of any candidate; bar_us: of those the
// search ranks (tune::ranked), which the runner's early stop measures
// against.
void Tuner::evaluate(Device& d, std::vector<Candidate>& batch, Problem& problem, KernelReport& report,
                     const SearchOptions& search_options, double& best_us, double& bar_us) {
  // Compile every candidate of the batch at once, one per free core.
  std::vector<const KernelPlan*> plans;
  for (const Candidate& c : batch) plans.push_back(&c.plan);
  const std::vector<Compiled> compiled = builder_.build_all(plans, d.arch);

  for (size_t i = 0; i < batch.size() && !interrupted; ++i) {
    Candidate& c = batch[i];
    c.compile_s = compiled[i].seconds;
    if (!compiled[i].ok) {
      c.state = State::kCompileFailed;
      c.note = compiled[i].log.substr(0, 400);
      progress_->line("  compile failed: " + c.plan.schedule.summary() + "\n    " + c.note);
      report.candidates.push_back(c);
      continue;
    }
    MeasureOptions measure_options;
    measure_options.objective = options_.objective;
    measure_options.best_us = bar_us;
    // The test hook: this candidate is launched short of its work, so its
    // output is wrong and verification must reject it.
    measure_options.break_it = [&] {
      if (c.is_default || options_.break_candidate <= 0) return false;
      const long long before = std::count_if(report.candidates.begin(), report.candidates.end(),
                                             [](const Candidate& x) { return !x.is_default; });
      return before + 1 == options_.break_candidate;
    };
    const bool context_alive = measure(api_, d, problem, compiled[i], c, measure_options);
    if (c.state == State::kRejected) progress_->line("  rejected: " + c.plan.schedule.summary() + ": " + c.note);
    if (c.state == State::kLaunchFailed) {
      progress_->line("  launch failed: " + c.plan.schedule.summary() + ": " + c.note);
      if (!context_alive) throw CudaError(c.note);
    }
    if (c.state == State::kTimed && (best_us <= 0 || score(c) < best_us)) best_us = score(c);
    if (c.state == State::kTimed && ranked(search_options, c) && (bar_us <= 0 || score(c) < bar_us)) {
      bar_us = score(c);
    }
    report.candidates.push_back(c);
  }
}

KernelReport Tuner::tune_kernel(Device& d, const KernelPlan& plan) {
  const auto start = std::chrono::steady_clock::now();
  KernelReport report;
  report.kernel = plan.name;
  report.gpu = d.id.name;
  Workload wl = plan.workload;
  wl.schedule = ScheduleRequest{};
  wl.schedule.where = plan.workload.where;
  SearchOptions search_options;
  search_options.mode = options_.search;
  search_options.algorithm = options_.algorithm;
  search_options.objective = options_.objective;
  search_options.plan_options = plan_options_;
  search_options.usable = [this, &d](const KernelPlan& p) { return why_not_here(p, d.arch).empty(); };
  const std::unique_ptr<Search> search =
      make_search(wl, search_options, options_.seed ^ std::hash<std::string>{}(plan.name));
  report.space = search->space();
  if (!report.space.note.empty()) progress_->line(report.space.note);
  progress_->line("  space before -> after pruning: " + report.space.detail + "; search: " + report.space.search);

  Problem problem = make_problem(api_, d, plan);
  double best_us = 0, bar_us = 0;
  while (!interrupted) {
    if (!search->exhaustive() && seconds_since(start) > options_.budget_s) break;
    std::vector<Candidate> batch = search->next_batch(kBatch);
    if (batch.empty()) break;
    const size_t measured_from = report.candidates.size();
    evaluate(d, batch, problem, report, search_options, best_us, bar_us);
    // The default is in the first batch (an interrupted batch may have
    // recorded no candidate, not even the default).
    if (report.default_index < 0) {
      const auto def = std::find_if(report.candidates.begin(), report.candidates.end(),
                                    [](const Candidate& c) { return c.is_default; });
      if (def != report.candidates.end()) report.default_index = static_cast<int>(def - report.candidates.begin());
    }
    if (interrupted) break;
    search->update(std::vector<Candidate>(report.candidates.begin() + static_cast<std::ptrdiff_t>(measured_from),
                                          report.candidates.end()));
    // Where the default did not pass (a broken toolchain fails every
    // candidate alike), nothing can be recorded: stop here rather than
    // spend the budget (the worker says why).
    if (!report.default_passed()) break;

    // The status line.
    int compiled = 0, verified = 0, rejected = 0;
    for (const Candidate& c : report.candidates) {
      compiled += c.state != State::kCompileFailed;
      verified += c.state == State::kTimed || c.state == State::kStoppedEarly;
      rejected += c.state == State::kRejected;
    }
    const double default_us = score(report.candidates[static_cast<size_t>(report.default_index)]);
    char status[200];
    std::snprintf(status, sizeof status,
                  "  %s done | compiled %d, verified %d, rejected %d | best %.2f us (%.2fx the default) | %s | ETA %s",
                  progress_->counts().c_str(), compiled, verified, rejected, best_us,
                  best_us > 0 ? default_us / best_us : 0.0, duration_text(seconds_since(start)).c_str(),
                  progress_->eta(options_.budget_s).c_str());
    progress_->status(status);
  }

  // The best verified candidate, by the objective.
  for (size_t i = 0; i < report.candidates.size(); ++i) {
    const Candidate& c = report.candidates[i];
    if (c.state != State::kTimed) continue;
    if (report.best < 0 || score(c) < score(report.candidates[static_cast<size_t>(report.best)])) {
      report.best = static_cast<int>(i);
    }
  }
  // Against a default that did not pass there is nothing to confirm: the
  // worker reports the kernel's error.
  if (report.best >= 0 && report.default_passed() && report.best != report.default_index && !interrupted) {
    Candidate& best = report.candidates[static_cast<size_t>(report.best)];
    Candidate& def = report.candidates[static_cast<size_t>(report.default_index)];
    const double searched = score(best);
    if (confirm(api_, builder_, d, problem, def, best, options_.objective)) {
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
    if (report.best < 0 || !report.default_passed()) {
      const std::string why = report.default_index >= 0
                                  ? report.candidates[static_cast<size_t>(report.default_index)].note
                                  : std::string("not run");
      progress_->line("  error: the default schedule did not pass (" + why + "); nothing recorded");
      ++failures_;
    } else {
      const Candidate& best = report.candidates[static_cast<size_t>(report.best)];
      const Candidate& def = report.candidates[static_cast<size_t>(report.default_index)];
      TuningEntry e = entry_for(*plan, best.plan.schedule, d.id, options_, fingerprints_);
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
      char line[400];
      std::snprintf(line, sizeof line,
                    "  best%s: %s\n        %.2f us hot, %.2f us cold; default %.2f us hot (%.2fx); %d compiled, "
                    "%d verified, %d rejected, %d failed; %.1f s",
                    // With several workers their lines interleave: say whose.
                    options_.devices.size() > 1 ? (" for " + plan->name).c_str() : "",
                    best.plan.schedule.summary().c_str(), best.hot_us, best.cold_us, def.hot_us,
                    def.hot_us / best.hot_us, e.compiled, e.verified, e.rejected, e.failed, report.wall_s);
      progress_->line(line);
      db_.put(e);
      try {
        // Read-merge-write under the folder's lock: entries that another
        // tune run wrote since this one started are kept.
        const TuningMerge merge = merge_into_tuning_file(options_.db_path, {e}, "", options_.lock_timeout_s,
                                                          /*drop_unverified=*/true);
        for (const std::string& note : merge.notes) progress_->line("convgen tune: note: " + note);
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
    open_device(api_, devices[i], ordinal);
    // A kernel's candidates are planned and built for one architecture.
    if (devices[i].arch != devices.front().arch) {
      throw CudaError("--devices: device " + std::to_string(ordinal) + " is sm_" + std::to_string(devices[i].arch) +
                      " and device " + std::to_string(devices.front().ordinal) + " sm_" +
                      std::to_string(devices.front().arch) + ": tune GPUs of one architecture in a run");
    }
  }

  // The database so far: its entries are kept, and kernels it holds for a
  // device's GPU with the current fingerprint are not tuned again. An entry
  // whose checksum fails was changed after convgen wrote it: it is dropped
  // (and its kernel tuned again when this run tunes it), never signed anew.
  std::vector<std::string> kept, dropped;
  db_ = continued_database(options_.db_path, dropped);
  const int arch = devices.front().arch;
  const auto cannot_tune = [&](const KernelPlan& p) { return why_not_here(p, arch); };
  for (const KernelPlan* p :
       kernels_to_tune(lib_, db_, devices.front().id.name, options_, fingerprints_, cannot_tune, kept)) {
    queue_.push_back(p);
  }
  progress_ = std::make_unique<Progress>(queue_.size(), devices.size());
  for (const std::string& d : dropped) progress_->line(d);
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
    std::ofstream report(options_.report_json);
    report << j.dump(1) << "\n";
    report.close();
    if (!report) {
      progress_->line("convgen tune: error: could not write the report " + options_.report_json);
      ++failures_;
    }
  }
  for (Device& d : devices) close_device(api_, d);
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

std::vector<GpuId> device_ids(const std::vector<int>& devices) {
  if (!fake_gpu().empty()) return std::vector<GpuId>(devices.size(), GpuId{fake_gpu(), 1, "7.5"});
  const CudaApi& api = CudaApi::get();
  std::vector<GpuId> ids;
  for (int ordinal : devices) {
    CUdevice device = 0;
    api.check(api.cuDeviceGet(&device, ordinal), ("device " + std::to_string(ordinal)).c_str());
    char name[256] = {};
    api.check(api.cuDeviceGetName(name, sizeof name, device), "cuDeviceGetName");
    int major = 0, minor = 0, sms = 0;
    api.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
    api.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
    api.cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device);
    ids.push_back({name, sms, std::to_string(major) + "." + std::to_string(minor)});
  }
  return ids;
}

std::string device_archs(const std::vector<int>& devices) {
  std::string list;
  for (const GpuId& id : device_ids(devices)) {
    const size_t dot = id.compute_capability.find('.');
    std::string arch = id.compute_capability.substr(0, dot) + id.compute_capability.substr(dot + 1);
    // sm_90 runs sm_90a code, and a library's build makes its sm_90 image
    // sm_90a (cmake/Convgen.cmake): plan as it does.
    if (arch == "90") arch = "90a";
    list += (list.empty() ? "" : ",") + arch;
  }
  return list;
}

std::string fake_gpu() {
  const char* name = std::getenv("CONVGEN_TUNE_FAKE_GPU");
  return name != nullptr ? name : "";
}

int run_fake_tune(const LibraryPlan& lib, const Templates& templates, const TuneOptions& options) {
  const std::map<std::string, std::string> fingerprints = tuning_fingerprints(templates);
  const char* seconds_text = std::getenv("CONVGEN_TUNE_FAKE_SECONDS");
  const double seconds = seconds_text != nullptr ? std::atof(seconds_text) : 0.0;
  const GpuId gpu{fake_gpu(), 1, "7.5"};
  std::vector<std::string> kept, dropped;
  const TuningDb db = continued_database(options.db_path, dropped);
  const std::vector<const KernelPlan*> queue = kernels_to_tune(lib, db, gpu.name, options, fingerprints, nullptr, kept);
  for (const std::string& d : dropped) std::fprintf(stderr, "%s\n", d.c_str());
  for (const std::string& k : kept) std::fprintf(stderr, "kept %s\n", k.c_str());
  std::fprintf(stderr, "convgen tune: %zu kernel(s) to tune on the fake GPU '%s' (CONVGEN_TUNE_FAKE_GPU; nothing is "
               "measured); database %s\n", queue.size(), gpu.name.c_str(), options.db_path.c_str());
  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
  int tuned = 0;
  for (const KernelPlan* p : queue) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (!interrupted && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (interrupted) break;  // a kernel cut short is not recorded
    TuningEntry e = entry_for(*p, p->schedule, gpu, options, fingerprints);
    // 1.0 to 100.9 us, from the names (FNV-1a: the same on every machine).
    const std::string drawn = tuning_fingerprint(p->name + "@" + gpu.name);
    e.time_us = 1.0 + static_cast<double>(std::stoull(drawn.substr(0, 8), nullptr, 16) % 1000) / 10.0;
    e.default_us = e.time_us;
    e.default_schedule = p->schedule.summary();
    e.compiled = e.verified = 1;
    e.tuning_s = seconds;
    const TuningMerge merge = merge_into_tuning_file(options.db_path, {e}, "", options.lock_timeout_s,
                                                      /*drop_unverified=*/true);
    for (const std::string& note : merge.notes) std::fprintf(stderr, "convgen tune: note: %s\n", note.c_str());
    std::fprintf(stderr, "  %s: %.1f us (fake)\n", p->name.c_str(), e.time_us);
    ++tuned;
  }
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  if (interrupted) {
    std::fprintf(stderr, "convgen tune: interrupted; %d kernel(s) finished are in %s\n", tuned, options.db_path.c_str());
    return 130;
  }
  std::fprintf(stderr, "convgen tune: %d kernel(s) tuned, %zu kept, 0 error(s); database %s\n", tuned, kept.size(),
               options.db_path.c_str());
  return 0;
}

int run_tune(const LibraryPlan& lib, const Templates& templates, const TuneOptions& options) {
  try {
    if (const std::vector<std::string> unknown = unknown_kernel_names(lib, options); !unknown.empty()) {
      std::string list;
      for (const std::string& name : unknown) list += (list.empty() ? "" : ", ") + name;
      std::fprintf(stderr, "convgen tune: error: --kernel names no kernel of these specs: %s (convgen list shows "
                   "them)\n", list.c_str());
      return 1;
    }
    if (!options.kernels.empty() && std::none_of(lib.kernels.begin(), lib.kernels.end(), [&](const KernelPlan& p) {
          return p.name.find(options.kernels) != std::string::npos;
        })) {
      std::fprintf(stderr, "convgen tune: error: --kernels '%s' is in the name of no kernel of these specs (convgen "
                   "list shows them)\n", options.kernels.c_str());
      return 1;
    }
    for (const auto& [path, option] : {std::pair{options.db_path, std::string("--db")},
                                       std::pair{options.report_json, std::string("--report")}}) {
      if (path.empty()) continue;
      if (const std::string why = unwritable_file(path, option); !why.empty()) {
        std::fprintf(stderr, "convgen tune: error: %s\n", why.c_str());
        return 1;
      }
    }
    if (!fake_gpu().empty()) return run_fake_tune(lib, templates, options);
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
