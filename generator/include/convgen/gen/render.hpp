// Stage 3 of the generator: plans become source text, by rendering the
// mustache templates in templates/. Rendering is strict: a placeholder the
// data does not define is an error naming the template file and line.
#pragma once

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "convgen/gen/plan.hpp"

namespace convgen::gen {

class TemplateError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ParsedTemplate;  // a template parsed for rendering (render.cpp)

// The template files, read once from a directory. A template may use the
// pieces in partials/: a line holding only {{> name}} stands for the text of
// partials/name.mustache (indented as the tag is). Each template is kept
// with its partials expanded: that is the text rendered, and an algorithm's
// tuning fingerprint (tuning_fingerprint) is computed from it, so that a
// change to a partial makes the databases tuned before it stale.
struct Templates {
  std::string dir;
  std::map<std::string, std::string> kernels;  // by file name: each algorithm's template (Algorithm::template_file)
  std::string registry;      // registry.cu.mustache
  std::string header;        // library.h.mustache
  std::string compile_unit;  // compile_unit.cu.mustache
  // Where each line of an expanded template came from ("<path>:<line>"),
  // by file name, for the errors of strict rendering.
  std::map<std::string, std::vector<std::string>> line_origins;
  // Each of them parsed once, by file name: parsing took most of the time
  // of a render, which then works on a copy of the parse.
  std::map<std::string, std::shared_ptr<const ParsedTemplate>> parsed;

  static Templates load(const std::string& dir);
};

struct RenderOptions {
  double copy_bandwidth_tbps = 3.0;
};

// One output file: its name relative to the output directory, and its text.
struct OutputFile {
  std::string path;
  std::string text;
};

// Kernels compiled as one unit: those of an algorithm that
// shares_compile_units, with the same schedule, data type and math (so that
// the compiler reads CUTLASS's headers once and makes their main loop's
// instantiation once), at most
// kCompileUnitKernels a unit so that units still build side by side. A
// unit's kernel sources are headers, <kernel>.cuh, which its file
// <library>_unit_<n>.cu includes; every other kernel is <kernel>.cu, built
// alone.
constexpr int kCompileUnitKernels = 12;
struct CompileUnit {
  std::string file;                 // <library>_unit_<n>.cu
  std::vector<size_t> kernels;      // indices into LibraryPlan::kernels, in order
};
std::vector<CompileUnit> compile_units(const LibraryPlan& lib);

// The file names a library produces, in a fixed order: the header, the
// registry, one kernel file per plan (<kernel>.cu, or <kernel>.cuh in a
// compile unit), then the compile units' files. Known without rendering,
// so the build can ask for them at configure time: it compiles the .cu
// files.
std::vector<std::string> output_names(const LibraryPlan& lib);

std::string render_kernel(const Templates& t, const LibraryPlan& lib, const KernelPlan& plan,
                          const RenderOptions& options = {});
// Every file of a library, in the order of output_names().
std::vector<OutputFile> render_library(const Templates& t, const LibraryPlan& lib, const RenderOptions& options = {});

}  // namespace convgen::gen
