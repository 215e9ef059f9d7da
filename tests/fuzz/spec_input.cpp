#include "spec_input.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "convgen/gen/plan.hpp"
#include "convgen/gen/render.hpp"
#include "convgen/gen/spec.hpp"

namespace convgen::fuzz {

namespace {

using namespace convgen::gen;

constexpr const char* kFile = "fuzz.yaml";
// A message names the problem and what is allowed; echoed input is cut short
// (spec.cpp), so no message comes near this.
constexpr size_t kMaxMessage = 2000;

[[noreturn]] void broken(const std::string& what) {
  std::fprintf(stderr, "convgen fuzz: broken guarantee: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

const Templates& templates() {
  static const Templates loaded = Templates::load(CONVGEN_FUZZ_TEMPLATE_DIR);
  return loaded;
}

void check_rejection(const SpecError& e, const std::string& text) {
  if (e.diagnostics().empty()) broken("a SpecError with no diagnostic");
  const long long lines = std::count(text.begin(), text.end(), '\n') + 1;
  for (const Diagnostic& d : e.diagnostics()) {
    if (d.where.file != kFile) broken("a diagnostic names '" + d.where.file + "', not the spec: " + d.str());
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

void check_outputs(const LibraryPlan& lib, const std::vector<OutputFile>& files) {
  if (files.size() != output_names(lib).size()) broken("render_library and output_names disagree");
  std::set<std::string> names;
  for (const OutputFile& f : files) {
    if (f.text.empty()) broken("an empty output file " + f.path);
    if (!names.insert(f.path).second) broken("two output files named " + f.path);
  }
}

}  // namespace

Verdict check_spec_input(const std::string& text) {
  LibraryPlan lib;
  try {
    const Spec spec = parse_spec_text(text, kFile);
    lib = plan_library({spec}, spec.library.empty() ? "fuzz" : "");
  } catch (const SpecError& e) {
    check_rejection(e, text);
    return Verdict::kRejected;
  }
  check_outputs(lib, render_library(templates(), lib));
  return Verdict::kGenerated;
}

}  // namespace convgen::fuzz
