#include "spec_input.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "convgen/gen/arch.hpp"
#include "convgen/gen/plan.hpp"
#include "convgen/gen/render.hpp"
#include "convgen/gen/spec.hpp"
#include "convgen/gen/tuning_db.hpp"

namespace convgen::fuzz {

namespace {

using namespace convgen::gen;

constexpr const char* kFile = "fuzz.yaml";
constexpr const char* kTuningFile = "fuzz_tuning.yaml";
// A message names the problem and what is allowed; echoed input is cut short
// (spec.cpp), so no message comes near this.
constexpr size_t kMaxMessage = 2000;

// The spec a fuzzed tuning database applies to: a kernel of each default
// algorithm but planes (tiles and planes are reached by entries that name
// them). The corpus's databases name these kernels:
//   dw_f32_nchw_n1_c8_h8_w8_k3x3_s1_p1_m1          rows
//   dw_f32_nchw_n1_c32_h30_w30_k3x3_s1_p1_m1       rows (w 30: no lane of 4 columns)
//   dw_f32_nchw_nany_c16_h56_w56_k5x5_s2_p2_m1     rows, batch at run time
//   dw_f32_nchw_n2_c4_h16_w32_k7x7_s1_p3_m1        window
//   conv_f32_nchw_n1_c16_co32_h14_w14_k1x1_s1_p0   gemm
//   conv_f32_nchw_n1_c8_co8_h16_w16_k3x3_s1_p1     direct
constexpr const char* kFuzzTuningSpec = R"(library: fuzz
workloads:
  - {n: 1, c: 8, h: 8, w: 8, filter: 3, padding: same}
  - {n: 1, c: 32, h: 30, w: 30, filter: 3, padding: same}
  - {n: runtime, c: 16, h: 56, w: 56, filter: 5, stride: 2, padding: same}
  - {n: 2, c: 4, h: 16, w: 32, filter: 7, padding: same}
  - {op: conv2d, n: 1, c: 16, c_out: 32, h: 14, w: 14, filter: 1, padding: valid}
  - {op: conv2d, n: 1, c: 8, c_out: 8, h: 16, w: 16, filter: 3, padding: same}
)";

[[noreturn]] void broken(const std::string& what) {
  std::fprintf(stderr, "convgen fuzz: broken guarantee: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

const Templates& templates() {
  static const Templates loaded = Templates::load(CONVGEN_FUZZ_TEMPLATE_DIR);
  return loaded;
}

// Every diagnostic names `file`, inside `text`, with a short message.
void check_diagnostics(const std::vector<Diagnostic>& diagnostics, const std::string& text, const char* file) {
  const long long lines = std::count(text.begin(), text.end(), '\n') + 1;
  for (const Diagnostic& d : diagnostics) {
    if (d.where.file != file) broken("a diagnostic names '" + d.where.file + "', not " + file + ": " + d.str());
    if (d.message.empty()) broken("an empty message at " + d.where.str());
    if (d.message.size() > kMaxMessage) {
      broken("a message of " + std::to_string(d.message.size()) + " characters: " + d.message.substr(0, 200));
    }
    if (d.where.line == 0 && d.where.column == 0) continue;  // about the whole file
    if (d.where.line < 1 || d.where.column < 1 || d.where.line > lines + 1) {
      broken("a diagnostic outside the text (" + std::to_string(lines) + " lines): " + d.str());
    }
  }
}

void check_rejection(const InputError& e, const std::string& text, const char* file) {
  if (e.diagnostics().empty()) broken("an InputError with no diagnostic");
  check_diagnostics(e.diagnostics(), text, file);
}

void check_outputs(const LibraryPlan& lib, const std::vector<OutputFile>& files) {
  if (files.size() != output_names(lib).size()) broken("render_library and output_names disagree");
  std::set<std::string> names;
  for (const OutputFile& f : files) {
    if (f.text.empty()) broken("an empty output file " + f.path);
    if (!names.insert(f.path).second) broken("two output files named " + f.path);
  }
}

// The library's GPUs as convgen_add_library builds the default list for a
// library of Hopper's kernels (90 as 90a: implicit_gemm_sm90, its tiles and
// split K), beside the default list itself.
const PlanOptions& sm90a_options() {
  static const PlanOptions options = [] {
    PlanOptions o;
    o.target = parse_arch_list("75-real;80-real;86-real;89-real;90a-real;90-virtual");
    return o;
  }();
  return options;
}

Verdict check_spec_for(const std::string& text, const PlanOptions& options) {
  LibraryPlan lib;
  try {
    const Spec spec = parse_spec_text(text, kFile);
    lib = plan_library({spec}, spec.library.empty() ? "fuzz" : "", options);
  } catch (const InputError& e) {
    check_rejection(e, text, kFile);
    return Verdict::kRejected;
  }
  check_outputs(lib, render_library(templates(), lib));
  return Verdict::kGenerated;
}

}  // namespace

Verdict check_spec_input(const std::string& text) {
  const Verdict verdict = check_spec_for(text, PlanOptions{});
  // With an sm_90a image too, where the spec could reach Hopper's algorithm
  // (it serves NHWC only): the default list's verdict is the one counted.
  if (text.find("NHWC") != std::string::npos) check_spec_for(text, sm90a_options());
  return verdict;
}

Verdict check_tuning_input(const std::string& text) {
  static const Spec spec = parse_spec_text(kFuzzTuningSpec, "fuzz_spec.yaml");
  // Read as --allow-unverified-tuning reads it: a fuzzed entry rarely
  // carries its checksum, and the entries that fail theirs still apply.
  TuningDb db;
  try {
    db = parse_tuning_text(text, kTuningFile, TuningTrust::kAllowUnverified);
  } catch (const InputError& e) {
    check_rejection(e, text, kTuningFile);
    return Verdict::kRejected;
  }

  // What the tuner writes of it (signed, as `convgen vouch` signs), the
  // build reads back as it was, checksums verified.
  {
    TuningDb vouched = db;
    for (TuningEntry& e : vouched.entries) e.checksum_matches = true;
    const std::string written = tuning_text(vouched);
    try {
      const std::string again = tuning_text(parse_tuning_text(written, kTuningFile));
      if (again != written) broken("tuning_text does not read back to itself:\n" + written + "\n---\n" + again);
    } catch (const InputError& e) {
      broken("tuning_text wrote a database that does not parse: " + e.diagnostics().front().str() + "\n" + written);
    }
  }

  // Applied for its first GPU, with the templates' own fingerprints: an
  // entry applies exactly when its fingerprint is current, as tuned when its
  // checksum matches, else as unverified.
  TuningSelection selection;
  selection.db = &db;
  selection.fingerprints = tuning_fingerprints(templates());
  const std::vector<std::string> gpus = db.gpus();
  if (!gpus.empty()) selection.gpu = gpus.front();
  LibraryPlan lib;
  try {
    lib = plan_library({spec}, "", {}, OnInvalidWorkload::kFail, &selection);
  } catch (const InputError& e) {
    check_rejection(e, text, kTuningFile);  // the spec is valid: every error is the database's
    return Verdict::kRejected;
  }
  check_diagnostics(lib.tuning_notes, text, kTuningFile);
  if (lib.kernels.size() != spec.workloads.size()) broken("applying a database changed the kernels");
  for (const KernelPlan& k : lib.kernels) {
    const TuningEntry* entry = selection.gpu.empty() ? nullptr : db.find(k.name, selection.gpu);
    const Algorithm* algorithm =
        entry != nullptr ? k.workload.op->algorithm(entry->schedule.algorithm.value_or("")) : nullptr;
    const bool current = algorithm != nullptr && selection.fingerprints.at(algorithm->template_file) == entry->fingerprint;
    const ScheduleOrigin want = !current                 ? ScheduleOrigin::kDefault
                                : entry->checksum_matches ? ScheduleOrigin::kTuned
                                                          : ScheduleOrigin::kUnverified;
    if (k.origin != want) broken("kernel " + k.name + " has the origin '" + origin_text(k) + "'");
  }
  check_outputs(lib, render_library(templates(), lib));
  return Verdict::kGenerated;
}

Verdicts check_input(const std::string& text) { return {check_spec_input(text), check_tuning_input(text)}; }

}  // namespace convgen::fuzz
