// convgen: the command-line tool. Every subcommand runs the same stages
// (parse -> plan -> render -> write) from the core library.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <unistd.h>

#include "convgen/gen/output.hpp"
#include "convgen/gen/plan.hpp"
#include "convgen/gen/render.hpp"
#include "convgen/gen/spec.hpp"
#include "convgen/gen/tuning.hpp"
#ifdef CONVGEN_HAVE_TUNER
#include "tune/tuner.hpp"
#endif

#ifndef CONVGEN_DEFAULT_TEMPLATE_DIR
#define CONVGEN_DEFAULT_TEMPLATE_DIR "templates"
#endif

namespace fs = std::filesystem;
using namespace convgen::gen;

namespace {

struct CommonOptions {
  std::vector<std::string> specs;
  std::string name;
  std::string templates;
  double copy_bandwidth_tbps = 3.0;
  bool skip_invalid = false;
  std::string tuning;      // a tuning database to apply
  std::string tuning_gpu;  // whose entries; empty: the database's only GPU
};

// A spec path must name a regular file this process may read: a directory,
// a FIFO or a device (which a reader would wait on) is a usage error (exit 2).
const CLI::Validator kReadableSpecFile(
    [](std::string& path) -> std::string {
      std::error_code ec;
      const fs::file_status status = fs::status(path, ec);
      if (!fs::exists(status)) return "no such file: " + path;
      if (!fs::is_regular_file(status)) {
        return path + " is not a regular file (a directory, a FIFO or a device); a spec is a YAML file";
      }
      if (::access(path.c_str(), R_OK) != 0) return "cannot read " + path + ": " + std::strerror(errno);
      return "";
    },
    "SPEC");

const CLI::Validator kReadableTuningFile(
    [](std::string& path) -> std::string {
      std::string checked = path;
      const std::string why = kReadableSpecFile(checked);
      return why.empty() ? "" : "tuning database: " + why;
    },
    "DB");

void add_common(CLI::App* cmd, CommonOptions& o) {
  cmd->add_option("specs", o.specs, "Spec files (YAML)")->required()->check(kReadableSpecFile);
  cmd->add_option("--name", o.name, "Library name (C identifier); default: the specs' 'library' key");
  cmd->add_option("--templates", o.templates,
                  "Template directory; default: $CONVGEN_TEMPLATES, the installed templates, or the source tree's");
  cmd->add_option("--copy-bandwidth-tbps", o.copy_bandwidth_tbps,
                  "Copy bandwidth used for the cost floor in kernel headers (TB/s)")
      ->capture_default_str();
  cmd->add_flag("--skip-invalid", o.skip_invalid,
                "Leave invalid workloads out (each reported on stderr) instead of failing");
  cmd->add_option("--tuning", o.tuning,
                  "Tuning database (convgen tune) whose schedules to apply where the spec sets none")
      ->check(kReadableTuningFile);
  cmd->add_option("--tuning-gpu", o.tuning_gpu,
                  "The GPU whose database entries apply, as the database names it; default: its only GPU");
}

// Paths in messages and kernel headers are relative to the working directory
// when they lie under it, so output does not depend on where a checkout sits.
std::string display_path(const std::string& path) {
  std::error_code ec;
  const fs::path rel = fs::relative(fs::absolute(path), fs::current_path(), ec);
  if (ec || rel.empty() || *rel.begin() == "..") return path;
  return rel.generic_string();
}

std::string template_dir(const CommonOptions& o) {
  if (!o.templates.empty()) return o.templates;
  if (const char* env = std::getenv("CONVGEN_TEMPLATES")) return env;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path installed = exe.parent_path().parent_path() / "share" / "convgen" / "templates";
    if (fs::exists(installed / "depthwise_nchw.cu.mustache")) return installed.string();
  }
  return CONVGEN_DEFAULT_TEMPLATE_DIR;
}

std::string template_dir(const CommonOptions& o);

LibraryPlan load(const CommonOptions& o) {
  std::vector<Spec> specs;
  std::vector<Diagnostic> errors;
  const OnInvalidWorkload on_invalid = o.skip_invalid ? OnInvalidWorkload::kSkip : OnInvalidWorkload::kFail;
  for (const std::string& path : o.specs) {
    try {
      specs.push_back(parse_spec_file(display_path(path), on_invalid));
    } catch (const InputError& e) {
      errors.insert(errors.end(), e.diagnostics().begin(), e.diagnostics().end());
    }
  }
  if (!errors.empty()) throw InputError(std::move(errors));
  PlanOptions options;
  options.copy_bandwidth_tbps = o.copy_bandwidth_tbps;
  TuningDb db;
  TuningSelection tuning;
  if (!o.tuning.empty()) {
    db = parse_tuning_file(display_path(o.tuning));
    tuning.db = &db;
    tuning.gpu = o.tuning_gpu;
    const Templates templates = Templates::load(template_dir(o));
    for (const auto& [file, text] : templates.kernels) tuning.fingerprints[file] = tuning_fingerprint(text);
  } else if (!o.tuning_gpu.empty()) {
    throw std::runtime_error("--tuning-gpu names the GPU of a tuning database: give the database with --tuning");
  }
  LibraryPlan lib = plan_library(specs, o.name, options, on_invalid, o.tuning.empty() ? nullptr : &tuning);
  for (const Diagnostic& d : lib.tuning_notes) std::fprintf(stderr, "%s: note: %s\n", d.where.str().c_str(), d.message.c_str());
  for (const Diagnostic& d : lib.skipped) std::fprintf(stderr, "skipped: %s\n", d.str().c_str());
  if (!lib.skipped.empty()) {
    std::fprintf(stderr, "convgen: skipped %zu invalid workload diagnostic(s); %zu kernels remain\n",
                 lib.skipped.size(), lib.kernels.size());
  }
  return lib;
}

RenderOptions render_options(const CommonOptions& o) {
  RenderOptions r;
  r.copy_bandwidth_tbps = o.copy_bandwidth_tbps;
  return r;
}

std::string padding_text(const Workload& wl) {
  return std::to_string(wl.pad_top) + "," + std::to_string(wl.pad_bottom) + "," + std::to_string(wl.pad_left) +
         "," + std::to_string(wl.pad_right);
}

// A knob's value as JSON: a number, true/false, a word, or a pair.
nlohmann::json knob_json(const Knob& k, const Schedule& s) {
  if (k.values.size() > 1) {
    nlohmann::json list = nlohmann::json::array();
    for (const std::string& name : k.values) list.push_back(s.at(name));
    return list;
  }
  const int v = s.at(k.values.front());
  if (k.kind == Knob::Kind::kBool) return v != 0;
  if (k.kind == Knob::Kind::kChoice) return k.word(v);
  return v;
}

nlohmann::json schedule_json(const KernelPlan& p) {
  const Schedule& s = p.schedule;
  nlohmann::json j = {{"algorithm", s.algorithm_name()}};
  for (const Knob& k : s.algorithm->knobs) j[k.key] = knob_json(k, s);
  j["block_threads"] = p.block_threads;
  j["smem_bytes"] = p.smem_bytes;
  j["alignment"] = p.alignment;
  j["max_batch"] = p.max_batch;
  for (const Knob& k : s.algorithm->op->common_knobs) j[k.key] = knob_json(k, s);
  // The numbers the algorithm derives (group_lanes, tiles_y, ...).
  for (const auto& [name, value] : p.values) {
    if (const auto* n = std::get_if<long long>(&value)) j[name] = *n;
  }
  return j;
}

// "spec", "default" or "tuned".
const char* origin_word(ScheduleOrigin o) {
  return o == ScheduleOrigin::kSpec ? "spec" : o == ScheduleOrigin::kTuned ? "tuned" : "default";
}

double tuned_speedup(const KernelPlan& p) { return p.tuned_us > 0 ? p.default_us / p.tuned_us : 0.0; }

// The origin column of the table: "spec", "default" or "tuned 1.23x".
std::string origin_cell(const KernelPlan& p) {
  if (p.origin != ScheduleOrigin::kTuned) return origin_word(p.origin);
  char text[32];
  std::snprintf(text, sizeof text, "tuned %.2fx", tuned_speedup(p));
  return text;
}

nlohmann::json kernel_json(const KernelPlan& p) {
  nlohmann::json origin{{"source", origin_word(p.origin)}};
  if (p.origin == ScheduleOrigin::kTuned) {
    origin["gpu"] = p.tuned_gpu;
    origin["tuned_us"] = p.tuned_us;
    origin["default_us"] = p.default_us;
    origin["speedup"] = tuned_speedup(p);
  }
  const Workload& wl = p.workload;
  return {
      {"name", p.name},
      {"spec", wl.where.file + ":" + std::to_string(wl.where.line)},
      {"n", wl.n == 0 ? nlohmann::json("runtime") : nlohmann::json(wl.n)},
      {"c", wl.c}, {"h", wl.h}, {"w", wl.w}, {"kh", wl.kh}, {"kw", wl.kw},
      {"stride", {wl.stride_h, wl.stride_w}},
      {"padding", {wl.pad_top, wl.pad_bottom, wl.pad_left, wl.pad_right}},
      {"dilation", {wl.dilation_h, wl.dilation_w}},
      {"op", wl.op->name},
      {"multiplier", wl.multiplier},
      {"c_out", wl.out_channels()},
      {"residual", wl.residual},
      {"epilogue", to_string(wl.epilogue)},
      {"activation", to_string(wl.activation)},
      {"out_h", p.out_h}, {"out_w", p.out_w},
      {"schedule", schedule_json(p)},
      {"origin", origin},
      {"bytes_read", p.bytes_read},
      {"bytes_written", p.bytes_written},
      {"floor_us", p.floor_us},
      {"flops", p.flops},
      {"compute_floor_us", p.compute_floor_us},
  };
}

void print_table(const LibraryPlan& lib) {
  std::printf("library %s: %zu kernels from %zu spec file(s)\n\n", lib.name.c_str(), lib.kernels.size(),
              lib.spec_files.size());
  // The floor: the longer of moving the bytes at the copy bandwidth and
  // doing the arithmetic at the fp32 peak.
  // The origin: where the schedule came from (the spec, a tuning database's
  // entry, with its speedup over the default rule, or the default rule).
  std::string tuned_on;
  for (const KernelPlan& p : lib.kernels) {
    if (p.origin == ScheduleOrigin::kTuned) tuned_on = p.tuned_gpu;
  }
  if (!tuned_on.empty()) std::printf("tuned schedules: measured on %s\n\n", tuned_on.c_str());
  std::printf("%-58s %9s  %-74s  %-11s  %s\n", "kernel", "floor_us", "schedule", "origin", "spec");
  for (const KernelPlan& p : lib.kernels) {
    std::printf("%-58s %9.2f  %-74s  %-11s  %s:%d\n", p.name.c_str(), std::max(p.floor_us, p.compute_floor_us),
                p.schedule.summary().c_str(), origin_cell(p).c_str(),
                p.workload.where.file.c_str(), p.workload.where.line);
  }
}

// Every knob value of every algorithm, by value name in the registry's order,
// so that one CSV holds kernels of any operator and algorithm; the common
// knobs of each operator come after the per-algorithm columns.
std::vector<std::pair<const Knob*, std::string>> csv_columns(bool common) {
  std::vector<std::pair<const Knob*, std::string>> columns;
  auto add = [&](const Knob& k) {
    for (const std::string& name : k.values) {
      const bool seen = std::any_of(columns.begin(), columns.end(), [&](const auto& c) { return c.second == name; });
      if (!seen) columns.emplace_back(&k, name);
    }
  };
  for (const Operator* op : operators()) {
    if (common) {
      for (const Knob& k : op->common_knobs) add(k);
    } else {
      for (const Algorithm* a : op->algorithms) {
        for (const Knob& k : a->knobs) add(k);
      }
    }
  }
  return columns;
}

// The CSV cells of `columns` for one schedule; empty where its algorithm has no such value.
std::string csv_cells(const std::vector<std::pair<const Knob*, std::string>>& columns, const Schedule& s) {
  std::string cells;
  for (const auto& [knob, name] : columns) {
    const auto it = s.values.find(name);
    cells += ",";
    if (it == s.values.end()) continue;
    cells += knob->kind == Knob::Kind::kChoice ? knob->word(it->second) : std::to_string(it->second);
  }
  return cells;
}

std::string csv_header(const std::vector<std::pair<const Knob*, std::string>>& columns) {
  std::string header;
  for (const auto& column : columns) header += "," + column.second;
  return header;
}

void print_csv(const LibraryPlan& lib) {
  // One row per kernel; the knobs of the other algorithms are empty.
  const auto knobs = csv_columns(false);
  const auto common = csv_columns(true);
  std::printf("name,op,spec,n,c,c_out,h,w,kh,kw,stride_h,stride_w,padding,dilation_h,dilation_w,multiplier,epilogue,"
              "residual,activation,algorithm%s,smem_bytes,alignment,max_batch%s,bytes_read,bytes_written,floor_us,flops,"
              "compute_floor_us,origin,tuned_gpu,tuned_speedup\n",
              csv_header(knobs).c_str(), csv_header(common).c_str());
  for (const KernelPlan& p : lib.kernels) {
    const Workload& wl = p.workload;
    const Schedule& s = p.schedule;
    std::printf("%s,%s,%s:%d,%s,%d,%d,%d,%d,%d,%d,%d,%d,\"%s\",%d,%d,%d,%s,%d,%s,%s%s,%d,%d,%d%s,%lld,%lld,%.3f,%lld,"
                "%.3f,%s,\"%s\",%.3f\n",
                p.name.c_str(), wl.op->name.c_str(), wl.where.file.c_str(), wl.where.line,
                wl.n == 0 ? "runtime" : std::to_string(wl.n).c_str(), wl.c, wl.out_channels(), wl.h, wl.w, wl.kh,
                wl.kw, wl.stride_h, wl.stride_w, padding_text(wl).c_str(), wl.dilation_h, wl.dilation_w,
                wl.multiplier, to_string(wl.epilogue), wl.residual ? 1 : 0, to_string(wl.activation),
                s.algorithm_name().c_str(), csv_cells(knobs, s).c_str(), p.smem_bytes, p.alignment, p.max_batch,
                csv_cells(common, s).c_str(), p.bytes_read, p.bytes_written, p.floor_us, p.flops,
                p.compute_floor_us, origin_word(p.origin), p.tuned_gpu.c_str(), tuned_speedup(p));
  }
}

// The values a knob takes, as the spec writes them: "1..16", "1, 2, 4",
// "32..1024, multiples of 32", "true | false", "normal | evict_first".
std::string knob_values(const Knob& k) {
  if (k.kind == Knob::Kind::kBool || k.kind == Knob::Kind::kChoice) {
    std::string words;
    for (int v = k.lo; v <= k.hi; ++v) words += (words.empty() ? "" : " | ") + k.word(v);
    return words;
  }
  if (!k.allowed.empty()) {
    std::string values;
    for (int v : k.domain()) values += (values.empty() ? "" : ", ") + std::to_string(v);
    return values;
  }
  std::string range = std::to_string(k.lo) + ".." + std::to_string(k.hi);
  if (k.multiple_of > 1) range += ", multiples of " + std::to_string(k.multiple_of);
  return k.values.size() > 1 ? k.list_names + " each " + range : range;
}

// Every operator, its algorithms and their knobs: the schedule vocabulary,
// from the one list the parser and planner use.
void print_knobs(bool json) {
  nlohmann::json doc = nlohmann::json::array();
  for (const Operator* op : operators()) {
    auto knob_json_doc = [](const Knob& k) {
      return nlohmann::json{{"key", k.key}, {"values", k.values}, {"allowed", knob_values(k)},
                            {"domain_size", k.domain().size()}, {"meaning", k.meaning}};
    };
    nlohmann::json o{{"op", op->name}, {"common_knobs", nlohmann::json::array()}, {"algorithms", nlohmann::json::array()}};
    for (const Knob& k : op->common_knobs) o["common_knobs"].push_back(knob_json_doc(k));
    for (const Algorithm* a : op->algorithms) {
      nlohmann::json aj{{"algorithm", a->name}, {"template", a->template_file}, {"knobs", nlohmann::json::array()}};
      for (const Knob& k : a->knobs) aj["knobs"].push_back(knob_json_doc(k));
      o["algorithms"].push_back(aj);
    }
    doc.push_back(o);
    if (json) continue;
    std::printf("op: %s\n", op->name.c_str());
    for (const Knob& k : op->common_knobs) {
      std::printf("  (every algorithm) %-18s %-44s %s\n", k.key.c_str(), knob_values(k).c_str(), k.meaning.c_str());
    }
    for (const Algorithm* a : op->algorithms) {
      std::printf("  algorithm: %s\n", a->name.c_str());
      for (const Knob& k : a->knobs) {
        std::printf("    %-20s %-44s %s\n", k.key.c_str(), knob_values(k).c_str(), k.meaning.c_str());
      }
    }
  }
  if (json) std::printf("%s\n", doc.dump(2).c_str());
}

// A kernel by exact name, or by a substring that matches exactly one name.
const KernelPlan& pick_kernel(const LibraryPlan& lib, const std::string& wanted) {
  std::vector<const KernelPlan*> matches;
  for (const KernelPlan& p : lib.kernels) {
    if (p.name == wanted) return p;
    if (p.name.find(wanted) != std::string::npos) matches.push_back(&p);
  }
  if (matches.size() == 1) return *matches.front();
  std::string message = matches.empty() ? "no kernel matches '" + wanted + "'; kernels:\n"
                                        : "'" + wanted + "' matches several kernels:\n";
  for (const KernelPlan& p : lib.kernels) {
    if (matches.empty() || p.name.find(wanted) != std::string::npos) message += "  " + p.name + "\n";
  }
  throw std::runtime_error(message);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"convgen: generates specialized CUDA convolution kernels (depthwise_conv2d, conv2d) from YAML specs"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("convgen ") + kConvgenVersion);

  CommonOptions common;
  std::string out_dir;
  bool prune = false;
  bool quiet = false;
  auto* generate = app.add_subcommand("generate", "Write the library's header, registry and one .cu per kernel");
  add_common(generate, common);
  generate->add_option("-o,--out", out_dir, "Output directory")->required();
  generate->add_flag("--prune", prune, "Remove .cu/.h files in the output directory that the specs no longer make");
  generate->add_flag("-q,--quiet", quiet, "Print nothing on success");

  std::string format = "table";
  auto* list = app.add_subcommand("list", "List the kernels the specs make, with their schedules and costs");
  add_common(list, common);
  list->add_option("--format", format, "table, csv or json")
      ->check(CLI::IsMember({"table", "csv", "json"}))
      ->capture_default_str();

  std::string kernel;
  auto* show = app.add_subcommand("show", "Print the CUDA source of one kernel");
  add_common(show, common);
  show->add_option("--kernel,-k", kernel, "Kernel name, or a part of it that matches one kernel")->required();

  auto* outputs = app.add_subcommand("outputs", "Print the names of the files `generate` writes, one per line");
  add_common(outputs, common);

  auto* check = app.add_subcommand("check", "Validate the specs and plan every kernel; write nothing");
  add_common(check, common);

  std::string knobs_format = "table";
  auto* knobs = app.add_subcommand("knobs", "List every operator's algorithms and schedule knobs, with their values");
  knobs->add_option("--format", knobs_format, "table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();

  std::string tune_db, tune_devices = "0";
#ifdef CONVGEN_HAVE_TUNER
  convgen::tune::TuneOptions tune_options;
#else
  struct { std::string kernels, objective = "hot", search = "auto", algorithm, report_json; double budget_s = 20; bool retune = false;
           unsigned long long seed = 1; int break_candidate = 0; } tune_options;
#endif
  auto* tune = app.add_subcommand(
      "tune", "Search each kernel's schedules on this machine's GPU and record the fastest in a tuning database");
  add_common(tune, common);
  tune->add_option("--db", tune_db, "The tuning database to write (created, or updated and continued)")->required();
  tune->add_option("--kernels", tune_options.kernels, "Tune only the kernels whose name contains this");
  tune->add_option("--budget-s", tune_options.budget_s, "Seconds of search per kernel (a sampled search)")
      ->check(CLI::Range(1.0, 86400.0))
      ->capture_default_str();
  tune->add_option("--devices", tune_devices, "GPUs to tune on, e.g. 0,1: one worker each, kernels split")
      ->capture_default_str();
  tune->add_flag("--retune", tune_options.retune, "Tune again kernels the database already holds for this GPU");
  tune->add_option("--objective", tune_options.objective, "Rank by hot (CUDA graph replays) or cold (L2 flushed)")
      ->check(CLI::IsMember({"hot", "cold"}))
      ->capture_default_str();
  tune->add_option("--search", tune_options.search,
                   "auto: every schedule when few fit, else sampling and local search within the budget; "
                   "exhaustive: every schedule that fits, no budget")
      ->check(CLI::IsMember({"auto", "exhaustive"}))
      ->capture_default_str();
  tune->add_option("--algorithm", tune_options.algorithm,
                   "Search only this algorithm's schedules (the default rule's schedule is always timed)");
  tune->add_option("--seed", tune_options.seed, "Seed of the search's random draws")->capture_default_str();
  tune->add_option("--report", tune_options.report_json, "Write every candidate of every kernel to this JSON file");
  // For tests: the Nth candidate (not the default) is launched wrong and must be rejected.
  tune->add_option("--break-candidate", tune_options.break_candidate)->group("");

  app.footer(
      "Exit status: 0 success; 1 invalid input (a spec that does not validate, a template or I/O error; "
      "nothing is written); 2 usage error (an unknown option, a missing argument, a spec path that is not a "
      "readable file).");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every other parse error is a usage error.
    return app.exit(e) == 0 ? 0 : 2;
  }

  if (*knobs) {
    print_knobs(knobs_format == "json");
    return 0;
  }

  try {
    if (*tune) {
      // The kernels as planned without a database: tuning searches their spaces.
      CommonOptions plain = common;
      plain.tuning.clear();
      plain.tuning_gpu.clear();
      const LibraryPlan lib = load(plain);
      const Templates templates = Templates::load(template_dir(common));
#ifdef CONVGEN_HAVE_TUNER
      tune_options.db_path = tune_db;
      tune_options.devices.clear();
      std::stringstream list(tune_devices);
      for (std::string item; std::getline(list, item, ',');) {
        try {
          size_t used = 0;
          tune_options.devices.push_back(std::stoi(item, &used));
          if (used != item.size()) throw std::invalid_argument(item);
        } catch (const std::exception&) {
          std::fprintf(stderr, "--devices: '%s' is not a list of device numbers such as 0,1\n", tune_devices.c_str());
          return 2;
        }
      }
      return convgen::tune::run_tune(lib, templates, tune_options);
#else
      (void)lib;
      std::fprintf(stderr, "convgen: error: this convgen was built without the CUDA toolkit's headers (cuda.h, "
                           "nvrtc.h), so it cannot tune; rebuild it where the toolkit is installed\n");
      return 1;
#endif
    }
    const LibraryPlan lib = load(common);
    if (*generate) {
      const Templates templates = Templates::load(template_dir(common));
      // Render everything in memory first: a template error leaves the
      // output directory as it was.
      const std::vector<OutputFile> files = render_library(templates, lib, render_options(common));
      const WriteReport report = write_outputs(out_dir, files, prune);
      if (!quiet) {
        for (const std::string& f : report.written) std::printf("wrote     %s/%s\n", out_dir.c_str(), f.c_str());
        for (const std::string& f : report.removed) std::printf("removed   %s/%s\n", out_dir.c_str(), f.c_str());
        std::printf("convgen: library %s: %zu kernels; %zu file(s) written, %zu unchanged%s\n", lib.name.c_str(),
                    lib.kernels.size(), report.written.size(), report.unchanged.size(),
                    report.removed.empty() ? "" : (", " + std::to_string(report.removed.size()) + " removed").c_str());
      }
    } else if (*list) {
      if (format == "json") {
        nlohmann::json doc{{"library", lib.name}, {"specs", lib.spec_files}, {"kernels", nlohmann::json::array()}};
        for (const KernelPlan& p : lib.kernels) doc["kernels"].push_back(kernel_json(p));
        std::printf("%s\n", doc.dump(2).c_str());
      } else if (format == "csv") {
        print_csv(lib);
      } else {
        print_table(lib);
      }
    } else if (*show) {
      const Templates templates = Templates::load(template_dir(common));
      std::fputs(render_kernel(templates, lib, pick_kernel(lib, kernel), render_options(common)).c_str(), stdout);
    } else if (*outputs) {
      for (const std::string& name : output_names(lib)) std::printf("%s\n", name.c_str());
    } else if (*check) {
      std::printf("convgen: %zu spec file(s) valid; library %s has %zu kernels\n", lib.spec_files.size(),
                  lib.name.c_str(), lib.kernels.size());
    }
  } catch (const InputError& e) {
    std::fputs(e.what(), stderr);
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "convgen: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
