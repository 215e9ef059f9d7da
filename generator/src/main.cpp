// convgen: the command-line tool. Every subcommand runs the same stages
// (parse -> plan -> render -> write) from the core library.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

#include "convgen/gen/listing.hpp"
#include "convgen/gen/operator.hpp"
#include "convgen/gen/output.hpp"
#include "convgen/gen/plan.hpp"
#include "convgen/gen/render.hpp"
#include "convgen/gen/spec.hpp"
#include "convgen/gen/tuning_db.hpp"
// The tuner's options and entry points (declared; built with the tuner
// only, which needs the toolkit's cuda.h and nvrtc.h).
#include "tune/tuner.hpp"

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
  std::string archs;       // the GPUs to build for, as CMake names them; empty: default_archs()
  bool allow_untuned = false;  // a tuning_gpu the database has no entry for: default schedules, not an error
  bool allow_unverified = false;  // entries whose checksum fails: used, marked unverified, not an error
};

// A usage error the option parser cannot see (options that need each
// other): exit 2, as CLI11's own.
struct ArgumentError : std::runtime_error {
  using std::runtime_error::runtime_error;
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
      std::string why = kReadableSpecFile(checked);
      // The spec's wording, said of a database.
      if (const size_t at = why.find("; a spec is a YAML file"); at != std::string::npos) {
        why.replace(at, std::string::npos, "; a tuning database is a YAML file");
      }
      return why.empty() ? "" : "tuning database: " + why;
    },
    "DB");

// An architecture list that parse_arch_list() takes; a bad one is a usage error.
const CLI::Validator kArchList(
    [](std::string& list) -> std::string {
      try {
        parse_arch_list(list);
        return "";
      } catch (const std::invalid_argument& e) {
        return e.what();
      }
    },
    "LIST");

// "13.0" or "13.0.88" as 130: the CUDA version as the architecture table
// counts it; 0 when it is not a version.
int cuda_version_number(const std::string& text) {
  int major = 0, minor = 0;
  if (std::sscanf(text.c_str(), "%d.%d", &major, &minor) < 1 || major <= 0 || minor < 0 || minor > 9) return 0;
  return 10 * major + minor;
}

// The options of the commands that read specs. `tune` takes those that say
// what to plan, not the tuning database a build applies (it plans without
// one, and writes --db), and plans for the GPUs it times on unless --archs
// names the library's.
enum class SpecCommand { kBuild, kTune };
void add_common(CLI::App* cmd, CommonOptions& o, SpecCommand command = SpecCommand::kBuild) {
  cmd->add_option("specs", o.specs, "Spec files (YAML)")->required()->check(kReadableSpecFile);
  cmd->add_option("--name", o.name, "Library name (C identifier); default: the specs' 'library' key")
      ->check(CLI::Validator(
          [](std::string& name) {
            const std::string why = library_name_problem(name);
            return why.empty() || why.rfind("must", 0) != 0 ? why : "the library name " + why;
          },
          "NAME"));
  cmd->add_option("--templates", o.templates,
                  "Template directory; default: $CONVGEN_TEMPLATES, the installed templates, or the source tree's");
  cmd->add_option("--archs", o.archs,
                  std::string("The GPUs the kernels are built for, as CMake's CUDA_ARCHITECTURES names them "
                              "(e.g. \"75;90\"): schedules fit the tightest, the default rule sizes for the "
                              "newest; default: ") +
                      (command == SpecCommand::kTune ? std::string("those of the GPUs tuned on (--devices)")
                                                     : default_archs()))
      ->check(kArchList);
  cmd->add_option("--copy-bandwidth-tbps", o.copy_bandwidth_tbps,
                  "Copy bandwidth used for the cost floor in kernel headers (TB/s)")
      ->capture_default_str()
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            char* end = nullptr;
            const double v = std::strtod(text.c_str(), &end);
            if (end == text.c_str() || *end != '\0' || !(v > 0) || !std::isfinite(v)) {
              return "must be a positive number of TB/s (the floors divide by it), got '" + text + "'";
            }
            return "";
          },
          "TB/s > 0"));
  cmd->add_flag("--skip-invalid", o.skip_invalid,
                "Leave invalid workloads out (each reported on stderr) instead of failing");
  if (command == SpecCommand::kTune) {
    // Taken (hidden) only to be refused by name: tune_command.
    cmd->add_option("--tuning", o.tuning)->group("");
    cmd->add_option("--tuning-gpu", o.tuning_gpu)->group("");
    cmd->add_flag("--allow-untuned", o.allow_untuned)->group("");
    cmd->add_flag("--allow-unverified-tuning", o.allow_unverified)->group("");
    return;
  }
  cmd->add_option("--tuning", o.tuning,
                  "Tuning database (convgen tune) whose schedules to apply where the spec sets none")
      ->check(kReadableTuningFile);
  cmd->add_option("--tuning-gpu", o.tuning_gpu,
                  "The GPU whose database entries apply, as the database names it; default: its only GPU. "
                  "One the database holds no entry for is an error, unless --allow-untuned");
  cmd->add_flag("--allow-untuned", o.allow_untuned,
                "Where the database holds no entry for --tuning-gpu, build with the default rule's schedules "
                "(a note) instead of failing");
  cmd->add_flag("--allow-unverified-tuning", o.allow_unverified,
                "Use database entries whose checksum fails (changed after convgen wrote them) instead of failing: "
                "each is noted and listed as UNVERIFIED, never as tuned");
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
  // Set but empty is unset, as a shell's `CONVGEN_TEMPLATES= convgen ...` means.
  if (const char* env = std::getenv("CONVGEN_TEMPLATES"); env != nullptr && *env != '\0') return env;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path installed = exe.parent_path().parent_path() / "share" / "convgen" / "templates";
    if (fs::exists(installed / "depthwise_nchw.cu.mustache")) return installed.string();
  }
  return CONVGEN_DEFAULT_TEMPLATE_DIR;
}

// A note on stderr for the architectures of a list that convgen's table
// does not hold (their limits are not known: schedules fit the table's).
void report_unknown_archs(const ArchTarget& target) {
  if (target.unknown.empty()) return;
  std::string unknown;
  for (int sm : target.unknown) unknown += (unknown.empty() ? "sm_" : ", sm_") + std::to_string(sm);
  std::fprintf(stderr, "convgen: note: %s: not in convgen's table of GPUs (`convgen archs`); the schedules fit "
                       "the tightest GPU of the table\n", unknown.c_str());
}

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
  if (!o.archs.empty()) options.target = parse_arch_list(o.archs);  // checked by kArchList
  report_unknown_archs(options.target);
  TuningDb db;
  TuningSelection tuning;
  if (!o.tuning.empty()) {
    db = parse_tuning_file(display_path(o.tuning),
                           o.allow_unverified ? TuningTrust::kAllowUnverified : TuningTrust::kVerify);
    tuning.db = &db;
    tuning.gpu = o.tuning_gpu;
    tuning.allow_untuned = o.allow_untuned;
    tuning.fingerprints = tuning_fingerprints(Templates::load(template_dir(o)));
  } else if (!o.tuning_gpu.empty()) {
    throw ArgumentError("--tuning-gpu names the GPU of a tuning database: give the database with --tuning");
  } else if (o.allow_untuned) {
    throw ArgumentError("--allow-untuned accepts a tuning database without entries for --tuning-gpu: give the "
                        "database with --tuning");
  } else if (o.allow_unverified) {
    throw ArgumentError("--allow-unverified-tuning accepts tuning entries whose checksum fails: give the "
                        "database with --tuning");
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

// ---------------------------------------------------------------------------
// The subcommands: each adds its options to the app, and runs once parsed.

using TuneOptions = convgen::tune::TuneOptions;

// Every subcommand's options; each subcommand reads its own.
struct Options {
  CommonOptions common;
  std::string out_dir;  // generate
  bool prune = false, quiet = false;
  double lock_timeout_s = kDefaultLockTimeoutS;  // generate, tune, tune merge
  std::string format = "table";        // list
  std::string kernel;                  // show
  bool arch_images = false;            // outputs
  std::string knobs_format = "table";  // knobs
  std::string archs_check, archs_format = "table", cuda_version;  // archs
  bool archs_default = false;
  std::string tune_db, tune_devices = "0";
  std::string merge_into;                 // tune merge
  std::vector<std::string> merge_from;
  TuneOptions tune;
  std::string vouch_db;  // vouch
};

// A library of no kernel (every workload skipped by --skip-invalid) builds,
// and every call runs the generic kernel: said plainly, since the skipped
// workloads' own messages may scroll by (a random draw of a few shapes can
// legitimately come out so).
void warn_if_no_kernel(const LibraryPlan& lib) {
  if (!lib.kernels.empty()) return;
  std::fprintf(stderr, "%s:1:1: warning: every workload is invalid (each skipped above): library %s has no kernel, "
                       "and every call will run the generic kernel\n",
               lib.spec_files.empty() ? "<no spec>" : lib.spec_files.front().c_str(), lib.name.c_str());
}

int generate_command(const Options& o) {
  const LibraryPlan lib = load(o.common);
  warn_if_no_kernel(lib);
  const Templates templates = Templates::load(template_dir(o.common));
  // Render everything in memory first: a template error leaves the
  // output directory as it was.
  const std::vector<OutputFile> files = render_library(templates, lib, render_options(o.common));
  WriteOptions write;
  write.manifest = manifest_name(lib.name);
  write.prune = o.prune;
  write.lock_timeout_s = o.lock_timeout_s;
  const WriteReport report = write_outputs(o.out_dir, files, write);
  for (const std::string& w : report.warnings) std::fprintf(stderr, "convgen: warning: %s\n", w.c_str());
  for (const std::string& n : report.notes) std::fprintf(stderr, "convgen: note: %s\n", n.c_str());
  if (o.quiet) return 0;
  for (const std::string& f : report.stale_temps) {
    std::printf("removed   %s/%s (a temporary file an interrupted run left)\n", o.out_dir.c_str(), f.c_str());
  }
  for (const std::string& f : report.written) std::printf("wrote     %s/%s\n", o.out_dir.c_str(), f.c_str());
  for (const std::string& f : report.removed) std::printf("removed   %s/%s\n", o.out_dir.c_str(), f.c_str());
  std::printf("convgen: library %s: %zu kernels; %zu file(s) written, %zu unchanged%s\n", lib.name.c_str(),
              lib.kernels.size(), report.written.size(), report.unchanged.size(),
              report.removed.empty() ? "" : (", " + std::to_string(report.removed.size()) + " removed").c_str());
  return 0;
}

int list_command(const Options& o) {
  const LibraryPlan lib = load(o.common);
  const std::string text = o.format == "json" ? kernels_json(lib) : o.format == "csv" ? kernels_csv(lib)
                                                                                      : kernels_table(lib);
  std::fputs(text.c_str(), stdout);
  return 0;
}

int show_command(const Options& o) {
  const LibraryPlan lib = load(o.common);
  const Templates templates = Templates::load(template_dir(o.common));
  std::fputs(render_kernel(templates, lib, pick_kernel(lib, o.kernel), render_options(o.common)).c_str(), stdout);
  return 0;
}

int outputs_command(const Options& o) {
  const LibraryPlan lib = load(o.common);
  warn_if_no_kernel(lib);
  if (o.arch_images) {
    // The arch-specific images the kernels need: sm_90a where one runs on
    // sm_90 alone (implicit_gemm_sm90's wgmma and TMA).
    for (const KernelPlan& k : lib.kernels) {
      if (k.max_arch == 90) {
        std::printf("90a\n");
        break;
      }
    }
    return 0;
  }
  for (const std::string& name : output_names(lib)) std::printf("%s\n", name.c_str());
  std::printf("%s\n", manifest_name(lib.name).c_str());
  return 0;
}

int check_command(const Options& o) {
  const LibraryPlan lib = load(o.common);
  // Rendered in memory, nothing written: a template that generate could not
  // read or expand fails here too.
  render_library(Templates::load(template_dir(o.common)), lib, render_options(o.common));
  std::printf("convgen: %zu spec file(s) valid; library %s has %zu kernels\n", lib.spec_files.size(),
              lib.name.c_str(), lib.kernels.size());
  return 0;
}

int archs_command(const Options& o) {
  if (o.archs_default) {
    std::printf("%s\n", default_archs());
    return 0;
  }
  if (!o.archs_check.empty()) {
    try {
      const ArchTarget target = parse_arch_list(o.archs_check, cuda_version_number(o.cuda_version));
      report_unknown_archs(target);
      std::printf("%s\n", target.list().c_str());
    } catch (const std::invalid_argument& e) {
      std::fprintf(stderr, "convgen: error: %s\n", e.what());
      return 1;
    }
    return 0;
  }
  std::fputs((o.archs_format == "json" ? archs_json() : archs_table()).c_str(), stdout);
  return 0;
}

int knobs_command(const Options& o) {
  std::fputs((o.knobs_format == "json" ? knobs_json() : knobs_table()).c_str(), stdout);
  return 0;
}

int keys_command(const Options&) {
  std::fputs(keys_markdown().c_str(), stdout);
  return 0;
}

int limits_command(const Options&) {
  std::fputs(limits_markdown().c_str(), stdout);
  return 0;
}

// `tune merge INTO FROM...`: no GPU, only the database's read-merge-write.
int tune_merge_command(const Options& o) {
  std::vector<std::pair<std::string, TuningDb>> sources;
  for (const std::string& from : o.merge_from) sources.emplace_back(from, parse_tuning_file(display_path(from)));
  int added = 0, replaced = 0, kept = 0, conflicts = 0;
  size_t held = 0;
  for (const auto& [from, db] : sources) {
    const TuningMerge merge = merge_into_tuning_file(o.merge_into, db.entries, from, o.lock_timeout_s,
                                                     /*drop_unverified=*/false, MergePolicy::kKeepFaster);
    for (const std::string& note : merge.notes) std::fprintf(stderr, "convgen: note: %s\n", note.c_str());
    added += merge.added;
    replaced += merge.replaced;
    kept += merge.kept;
    conflicts += merge.conflicts;
    held = merge.db.entries.size();
  }
  if (!o.quiet) {
    std::printf("convgen tune merge: %zu file(s) into %s: %d entries added, %d replaced by faster ones, %d slower "
                "left out, %d conflicting fingerprint(s); it holds %zu\n",
                sources.size(), o.merge_into.c_str(), added, replaced, kept, conflicts, held);
  }
  return 0;
}

// Re-signs a tuning database on the user's word: format 1 files, entries
// edited by hand, an end record that no longer counts the entries. Nothing
// is measured: the person running it vouches for every entry.
int vouch_command(const Options& o) {
  const std::string path = display_path(o.vouch_db);
  size_t vouched = 0;
  // Read, signed and written under the folder's lock: a tune run's entry
  // written meanwhile is not lost.
  const TuningDb db = update_tuning_file(path, TuningTrust::kVouch, [&](TuningDb& read) {
    for (TuningEntry& e : read.entries) {
      if (e.checksum_matches) continue;
      std::fprintf(stderr, "%s: note: vouched for the entry for %s on '%s': it had no matching checksum\n",
                   e.where.str().c_str(), e.kernel.c_str(), e.gpu.name.c_str());
      e.checksum_matches = true;
      ++vouched;
    }
  });
  std::printf("convgen: wrote %s in format %d: %zu entries, %zu of them signed on your word\n", path.c_str(),
              kTuningFormat, db.entries.size(), vouched);
  return 0;
}

// --devices' list (e.g. "0,1"), for tune and tune gpus; anything else is a usage error.
[[maybe_unused]] std::vector<int> device_list(const std::string& text) {  // unused without the tuner
  std::vector<int> devices;
  std::stringstream list(text);
  for (std::string item; std::getline(list, item, ',');) {
    try {
      size_t used = 0;
      devices.push_back(std::stoi(item, &used));
      if (used != item.size()) throw std::invalid_argument(item);
    } catch (const std::exception&) {
      throw ArgumentError("--devices: '" + text + "' is not a list of device numbers such as 0,1");
    }
  }
  return devices;
}

int tune_command(const Options& o) {
  if (o.common.specs.empty()) throw ArgumentError("tune: give the spec files (or `convgen tune merge INTO FROM...`)");
  if (o.tune_db.empty()) throw ArgumentError("tune: --db is required");
  // The kernels as planned without a database: tuning searches their spaces.
  if (!o.common.tuning.empty() || !o.common.tuning_gpu.empty() || o.common.allow_untuned || o.common.allow_unverified) {
    throw ArgumentError("tune plans its kernels without a tuning database: --tuning, --tuning-gpu, --allow-untuned "
                        "and --allow-unverified-tuning are a build's options (generate, list, show, check); --db "
                        "names the database tune writes and continues");
  }
  CommonOptions plain = o.common;
  const Templates templates = Templates::load(template_dir(o.common));
#ifdef CONVGEN_HAVE_TUNER
  TuneOptions options = o.tune;
  options.db_path = o.tune_db;
  options.lock_timeout_s = o.lock_timeout_s;
  options.devices = device_list(o.tune_devices);
  // The kernels are planned for the GPUs they are timed on, unless --archs
  // names the library's list: a schedule is measured as the build makes it.
  if (plain.archs.empty()) plain.archs = convgen::tune::device_archs(options.devices);  // a fake GPU's too
  const LibraryPlan lib = load(plain);
  return convgen::tune::run_tune(lib, templates, options);
#else
  (void)plain;
  (void)templates;
  std::fprintf(stderr, "convgen: error: this convgen was built without the CUDA toolkit's headers (cuda.h, "
                       "nvrtc.h), so it cannot tune; rebuild it where the toolkit is installed\n");
  return 1;
#endif
}

void add_lock_timeout(CLI::App* cmd, Options& o) {
  cmd->add_option("--lock-timeout", o.lock_timeout_s,
                  "Seconds to wait for another convgen run that writes the same folder before failing")
      ->check(CLI::Range(0.0, 86400.0))
      ->capture_default_str();
}

CLI::App* add_generate(CLI::App& app, Options& o) {
  auto* cmd = app.add_subcommand("generate", "Write the library's header, registry and one .cu per kernel");
  add_common(cmd, o.common);
  cmd->add_option("-o,--out", o.out_dir, "Output directory")->required();
  cmd->add_flag("--prune", o.prune,
                "Remove the files that this library's previous manifest (<library>.manifest in the output "
                "directory) lists and the specs no longer make, where their content is still what convgen "
                "wrote (an edited one is kept, with a warning); no other file is ever removed");
  add_lock_timeout(cmd, o);
  cmd->add_flag("-q,--quiet", o.quiet, "Print nothing on success");
  cmd->footer("Files are written all or nothing: each to a temporary file (.convgen-tmp-*) that is renamed over "
              "its target once every one is whole; an unchanged file is not rewritten. One run at a time writes "
              "a folder: the others wait for the lock file .convgen.lock in it.");
  return cmd;
}

CLI::App* add_list(CLI::App& app, Options& o) {
  auto* cmd = app.add_subcommand("list", "List the kernels the specs make, with their schedules and costs");
  add_common(cmd, o.common);
  cmd->add_option("--format", o.format, "table, csv or json")
      ->check(CLI::IsMember({"table", "csv", "json"}))
      ->capture_default_str();
  return cmd;
}

CLI::App* add_show(CLI::App& app, Options& o) {
  auto* cmd = app.add_subcommand("show", "Print the CUDA source of one kernel");
  add_common(cmd, o.common);
  cmd->add_option("--kernel,-k", o.kernel, "Kernel name, or a part of it that matches one kernel")->required();
  return cmd;
}

CLI::App* add_outputs(CLI::App& app, Options& o) {
  auto* cmd = app.add_subcommand("outputs", "Print the names of the files `generate` writes, one per line");
  add_common(cmd, o.common);
  cmd->add_flag("--arch-images", o.arch_images,
                "Print instead the arch-specific images the kernels need (90a: sm_90's wgmma and TMA), one per line");
  return cmd;
}

CLI::App* add_check(CLI::App& app, Options& o) {
  auto* cmd = app.add_subcommand("check", "Validate the specs, plan and render every kernel (in memory); write nothing");
  add_common(cmd, o.common);
  return cmd;
}

CLI::App* add_knobs(CLI::App& app, Options& o) {
  auto* cmd = app.add_subcommand("knobs", "List every operator's algorithms and schedule knobs, with their values");
  cmd->add_option("--format", o.knobs_format, "table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  return cmd;
}

CLI::App* add_archs(CLI::App& app, Options& o) {
  auto* cmd = app.add_subcommand("archs", "List the GPU architectures convgen builds for, with the facts its "
                                          "schedules fit, or check a list of them");
  auto* check = cmd->add_option("--check", o.archs_check,
                                "Check a CMake architecture list (e.g. \"75;80-real;90\") and print it back; exit 1 "
                                "naming what is wrong")
                    ->check(CLI::Validator(
                        [](std::string& v) { return v.empty() ? std::string("an empty list names no GPU") : ""; },
                        "LIST"));
  cmd->add_option("--cuda-version", o.cuda_version, "With --check: the CUDA toolkit that compiles, e.g. 13.0")
      ->check(CLI::Validator(
          [](std::string& v) { return cuda_version_number(v) > 0 ? "" : "'" + v + "' is not a version such as 13.0"; },
          "VERSION"))
      ->needs(check);
  cmd->add_flag("--default", o.archs_default, "Print the list used when nothing names one")->excludes(check);
  cmd->add_option("--format", o.archs_format, "table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  return cmd;
}

CLI::App* add_keys(CLI::App& app, Options&) {
  auto* cmd = app.add_subcommand("keys", "Print the reference of every spec key as markdown (docs/spec.md holds it)");
  cmd->footer("Each key's operator, the algorithm that reads it, its type, values and default, and whether it is "
              "required, from the declarations the parser reads.");
  return cmd;
}

CLI::App* add_limits(CLI::App& app, Options&) {
  auto* cmd = app.add_subcommand(
      "limits", "Print the table of size limits as markdown: the runtime's and a spec's (docs/hardening.md holds it)");
  cmd->footer("Every field of a problem and every size derived from it (formed in 64 bits), the bound validate() "
              "and the generic kernels keep, the bound a spec's workload keeps for the generated kernels, and why; "
              "from convgen/limits.h.");
  return cmd;
}

CLI::App* add_vouch(CLI::App& app, Options& o) {
  auto* cmd = app.add_subcommand("vouch", "Rewrite a tuning database in the current format, signing every entry "
                                          "on your word (you vouch that each was measured as it says)");
  cmd->add_option("db", o.vouch_db, "The tuning database (format 1, or with entries edited by hand)")
      ->required()
      ->check(kReadableTuningFile);
  cmd->footer("For a database of format 1, whose entries carry no checksum, or one you edited on purpose. Nothing "
              "is measured: entries whose checksum failed are listed, then signed as convgen tune signs what it "
              "measured, and the end record counts the entries again. Review the file (or its diff) first.");
  return cmd;
}

// Every algorithm's name, from the operators' lists (--algorithm's check).
std::vector<std::string> algorithm_names() {
  std::vector<std::string> names;
  for (const Operator* op : operators()) {
    for (const Algorithm* a : op->algorithms) {
      if (std::find(names.begin(), names.end(), a->name) == names.end()) names.push_back(a->name);
    }
  }
  return names;
}

CLI::App* add_tune(CLI::App& app, Options& o) {
  auto* cmd = app.add_subcommand(
      "tune", "Search each kernel's schedules on this machine's GPU and record the fastest in a tuning database");
  add_common(cmd, o.common, SpecCommand::kTune);
  cmd->add_option("--db", o.tune_db, "The tuning database to write (created, or updated and continued)")->required();
  cmd->add_option("--kernels", o.tune.kernels, "Tune only the kernels whose name contains this");
  cmd->add_option("--kernel", o.tune.kernel_names,
                  "Tune only the kernel of exactly this name (repeat it for several; one the specs do not make is "
                  "an error)");
  cmd->add_option("--budget-s", o.tune.budget_s, "Seconds of search per kernel (a sampled search)")
      ->check(CLI::Range(1.0, 86400.0))
      ->capture_default_str();
  cmd->add_option("--devices", o.tune_devices, "GPUs to tune on, e.g. 0,1: one worker each, kernels split")
      ->capture_default_str();
  cmd->add_flag("--retune", o.tune.retune, "Tune again kernels the database already holds for this GPU");
  cmd->add_option("--objective", o.tune.objective, "Rank by hot (CUDA graph replays) or cold (L2 flushed)")
      ->check(CLI::IsMember({"hot", "cold"}))
      ->capture_default_str();
  cmd->add_option("--search", o.tune.search,
                  "auto: every schedule when few fit, else sampling and local search within the budget; "
                  "exhaustive: every schedule that fits, no budget")
      ->check(CLI::IsMember({"auto", "exhaustive"}))
      ->capture_default_str();
  cmd->add_option("--algorithm", o.tune.algorithm,
                  "Search only this algorithm's schedules (the default rule's schedule is always timed)")
      ->check(CLI::IsMember(algorithm_names()));
  cmd->add_option("--seed", o.tune.seed, "Seed of the search's random draws")->capture_default_str();
  cmd->add_option("--report", o.tune.report_json, "Write every candidate of every kernel to this JSON file");
  cmd->add_option("--cutlass-include", o.tune.cutlass_include,
                  "CUTLASS's include folder (holds cutlass/cutlass.h), for the algorithms on CUTLASS's main loops, "
                  "which nvcc builds; default: $CONVGEN_CUTLASS_INCLUDE_DIR, else the one convgen's build was "
                  "configured with, else the nvidia-cutlass Python package's");
  add_lock_timeout(cmd, o);
  // For tests: the Nth candidate (not the default) is launched wrong and must be rejected.
  cmd->add_option("--break-candidate", o.tune.break_candidate)->group("");
  // `tune merge` needs neither specs nor --db: they are checked when tuning.
  cmd->get_option("specs")->required(false);
  cmd->get_option("--db")->required(false);
  return cmd;
}

// `tune gpus`: the GPUs --devices names, as a tuning database names them.
int tune_gpus_command(const Options& o) {
#ifdef CONVGEN_HAVE_TUNER
  const std::vector<int> devices = device_list(o.tune_devices);
  const std::vector<GpuId> ids = convgen::tune::device_ids(devices);
  nlohmann::json j = nlohmann::json::array();
  for (size_t i = 0; i < ids.size(); ++i) {
    j.push_back({{"device", devices[i]}, {"name", ids[i].name}, {"sms", ids[i].sms},
                 {"compute_capability", ids[i].compute_capability}});
  }
  std::printf("%s\n", j.dump(1).c_str());
  return 0;
#else
  (void)o;
  std::fprintf(stderr, "convgen: error: this convgen was built without the CUDA toolkit's headers, so it cannot "
                       "query GPUs\n");
  return 1;
#endif
}

CLI::App* add_tune_gpus(CLI::App* tune, Options& o) {
  auto* cmd = tune->add_subcommand("gpus", "Print the GPUs that --devices names, as a tuning database names them (JSON)");
  cmd->add_option("--devices", o.tune_devices, "GPUs, e.g. 0,1")->capture_default_str();
  cmd->footer("A cluster driver (tools/tune_cluster.py) asks each worker which GPU kind it tunes on this way.");
  return cmd;
}

CLI::App* add_tune_merge(CLI::App* tune, Options& o) {
  auto* cmd = tune->add_subcommand("merge", "Merge the entries of tuning databases into one (no GPU needed)");
  cmd->add_option("into", o.merge_into, "The database to write (created if missing; its folder must exist)")
      ->required();
  cmd->add_option("from", o.merge_from, "Databases whose entries to add")->required()->check(kReadableTuningFile);
  add_lock_timeout(cmd, o);
  cmd->add_flag("-q,--quiet", o.quiet, "Print nothing on success");
  cmd->footer("Entries for different GPUs live side by side. Of two entries for the same kernel and GPU the "
              "faster stays (a note names the one left out), where both were measured alike: the same "
              "fingerprint (generator version and template) and objective. Where the fingerprints differ a note "
              "reports the conflict and the later entry is put (the files are merged in the order given; a "
              "build ignores an entry whose fingerprint is not its own). INTO is read, merged and written under "
              "the lock of its folder, so concurrent merges and `convgen tune` runs lose no entry.");
  return cmd;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"convgen: generates specialized CUDA convolution kernels (depthwise_conv2d, conv2d) from YAML specs"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("convgen ") + kConvgenVersion);

  Options o;
  const std::vector<std::pair<CLI::App*, int (*)(const Options&)>> commands = {
      {add_generate(app, o), &generate_command}, {add_list(app, o), &list_command},
      {add_show(app, o), &show_command},         {add_outputs(app, o), &outputs_command},
      {add_check(app, o), &check_command},       {add_knobs(app, o), &knobs_command},
      {add_archs(app, o), &archs_command},       {add_keys(app, o), &keys_command},
      {add_limits(app, o), &limits_command},     {add_vouch(app, o), &vouch_command},
      {add_tune(app, o), &tune_command},  // last: `tune merge` hangs under it
  };
  CLI::App* const tune_merge = add_tune_merge(commands.back().first, o);
  CLI::App* const tune_gpus = add_tune_gpus(commands.back().first, o);
  app.footer(
      "Exit status: 0 success; 1 invalid input (a spec that does not validate, a template or I/O error, a "
      "lock wait that timed out; nothing is written); 2 usage error (an unknown option, a missing argument, a "
      "spec path that is not a readable file, a --tuning-gpu that the tuning database holds no entry for).");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every other parse error is a usage error.
    return app.exit(e) == 0 ? 0 : 2;
  }
  // A file-size limit (RLIMIT_FSIZE) must fail a write with EFBIG and a
  // message, not kill the run with SIGXFSZ before it can clean up.
  std::signal(SIGXFSZ, SIG_IGN);
  try {
    if (*tune_merge) return tune_merge_command(o);
    if (*tune_gpus) return tune_gpus_command(o);
    for (const auto& [cmd, run] : commands) {
      if (*cmd) return run(o);
    }
  } catch (const UsageError& e) {
    std::fputs(e.what(), stderr);
    return 2;
  } catch (const InputError& e) {
    std::fputs(e.what(), stderr);
    return 1;
  } catch (const ArgumentError& e) {
    std::fprintf(stderr, "convgen: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "convgen: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
