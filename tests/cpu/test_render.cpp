// Stage 3: plans -> source text through the mustache templates, strictly.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <thread>

#include "convgen/gen/plan.hpp"
#include "convgen/gen/render.hpp"
#include "test_util.h"

namespace convgen_test {
namespace {

LibraryPlan shipped(const std::string& spec_name) {
  return plan_library({parse_spec_file(std::string(CONVGEN_SOURCE_DIR) + "/specs/" + spec_name)}, "");
}

const KernelPlan& kernel_named(const LibraryPlan& lib, const std::string& name) {
  for (const KernelPlan& p : lib.kernels) {
    if (p.name == name) return p;
  }
  throw std::runtime_error("no kernel " + name);
}

// A kernel of each algorithm in the seeds library.
const char* const kSeedTilesKernel = "dw_f32_nchw_n1_c256_h96_w96_k3x3_s1_p1_m1";
const char* const kSeedRowsKernel = "dw_f32_nchw_n1_c256_h21_w21_k3x3_s1_p1_m1";

// A copy of the shipped templates (and their partials) in a temporary directory, to break on purpose.
class TemplateCopy {
 public:
  TemplateCopy() { fs::copy(CONVGEN_TEMPLATE_DIR, tmp_.path(), fs::copy_options::recursive); }
  std::string dir() const { return tmp_.str(); }
  std::string path(const std::string& name) const { return (tmp_ / name).string(); }
  // Inserts `line` so that it becomes line number `at` (1-based) of the template.
  void insert_line(const std::string& name, int at, const std::string& line) {
    std::vector<std::string> lines = split_lines(read_file(tmp_ / name));
    lines.insert(lines.begin() + (at - 1), line);
    std::string text;
    for (const std::string& l : lines) text += l + "\n";
    write_file(tmp_ / name, text);
  }
  void replace(const std::string& name, const std::string& from, const std::string& to) {
    std::string text = read_file(tmp_ / name);
    const size_t at = text.find(from);
    if (at == std::string::npos) throw std::runtime_error("'" + from + "' not in " + name);
    write_file(tmp_ / name, text.replace(at, from.size(), to));
  }

 private:
  TempDir tmp_;
};

std::string template_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const TemplateError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a TemplateError";
  return "";
}

TEST(Render, ShippedSpecsRenderCompletely) {
  const Templates t = Templates::load(CONVGEN_TEMPLATE_DIR);
  for (const char* spec : {"seeds.yaml", "mobilenet_v2.yaml"}) {
    SCOPED_TRACE(spec);
    const LibraryPlan lib = shipped(spec);
    const std::vector<OutputFile> files = render_library(t, lib);
    const std::vector<std::string> names = output_names(lib);
    ASSERT_EQ(files.size(), names.size());
    for (size_t i = 0; i < files.size(); ++i) {
      SCOPED_TRACE(files[i].path);
      EXPECT_EQ(files[i].path, names[i]);
      EXPECT_EQ(files[i].text.find("{{"), std::string::npos) << "unresolved placeholder";
      EXPECT_EQ(files[i].text.find("}}"), std::string::npos) << "unresolved placeholder";
      EXPECT_FALSE(files[i].text.empty());
    }
    for (size_t i = 0; i < lib.kernels.size(); ++i) {
      const KernelPlan& k = lib.kernels[i];
      const std::string& text = files[i + 2].text;
      EXPECT_EQ(text.rfind("// " + k.name + "\n", 0), 0u);
      EXPECT_NE(text.find("__global__"), std::string::npos);
      EXPECT_NE(text.find("cudaError_t launch_" + k.name + "("), std::string::npos);
      EXPECT_EQ(text, render_kernel(t, lib, k));
      // Each algorithm's own template.
      const std::string algorithm = k.schedule.algorithm_name();
      EXPECT_EQ(text.find("constexpr int kLanes = ") != std::string::npos, algorithm == "rows");
      EXPECT_EQ(text.find("constexpr int kTileH = ") != std::string::npos,
                algorithm == "tiles" || algorithm == "direct" || algorithm == "staged" || algorithm == "stem");
      EXPECT_EQ(text.find("constexpr int kRowFloats = ") != std::string::npos, algorithm == "stem");
      EXPECT_EQ(text.find("constexpr int kBM = ") != std::string::npos, algorithm == "gemm" || algorithm == "winograd");
      EXPECT_EQ(text.find("constexpr int kTilesPerImage = ") != std::string::npos,
                algorithm == "winograd" || algorithm == "winograd_nonfused");
      EXPECT_EQ(text.find("constexpr int kInStride = ") != std::string::npos, algorithm == "planes");
      // The header says where the schedule came from: a shipped spec is
      // planned without a tuning database, so the spec or the default rule.
      EXPECT_NE(k.origin, ScheduleOrigin::kTuned);
      EXPECT_NE(text.find("// Schedule (" + origin_text(k) + "): " + k.schedule.summary() + "\n"), std::string::npos);
      // The registry declares and lists every kernel, with its schedule, alignment, batch limit,
      // oldest and newest GPU, dynamic shared memory and workspace.
      EXPECT_NE(files[1].text.find("\"" + k.schedule.summary() + "\",\n"), std::string::npos);
      const int shared = k.schedule.algorithm->launch_description(k).dynamic_shared_bytes;
      EXPECT_NE(files[1].text.find("&convgen_" + lib.name + "::launch_" + k.name + ",\n     " +
                                   std::to_string(k.alignment) + ",\n     " + std::to_string(k.max_batch) +
                                   ",\n     " + std::to_string(k.min_arch) + ",\n     " + std::to_string(k.max_arch) +
                                   ",\n     " + std::to_string(shared) + ",\n     " +
                                   std::to_string(k.workspace_fixed) + ",\n     " +
                                   std::to_string(k.workspace_per_image) + "}"),
                std::string::npos);
    }
    EXPECT_NE(files[0].text.find("namespace " + lib.name + " {"), std::string::npos);
  }
}

// The header depends on the library's name, its spec files and the
// operators, never on its kernels: adding a shape rewrites the new kernel's
// file and the registry, and no file that includes the header recompiles
// (tests/flow/add_shape.sh checks the build).
TEST(Render, AddingAShapeLeavesTheHeaderAsItIs) {
  const std::string spec = "library: grows\nworkloads:\n  - {n: 1, c: 32, h: 16, w: 16, filter: 3, padding: same}\n";
  const std::string more = spec + "  - {n: 4, c: 64, h: 8, w: 8, filter: 3, padding: same}\n" +
                           "  - {op: conv2d, n: 1, c: 8, c_out: 16, h: 8, w: 8, filter: 3, padding: same}\n";
  const Templates t = Templates::load(CONVGEN_TEMPLATE_DIR);
  const std::vector<OutputFile> before = render_library(t, plan_library({parse(spec, "grows.yaml")}, ""));
  const std::vector<OutputFile> after = render_library(t, plan_library({parse(more, "grows.yaml")}, ""));
  ASSERT_EQ(before.size() + 2, after.size());
  ASSERT_EQ(before[0].path, "grows.h");
  ASSERT_EQ(after[0].path, "grows.h");
  EXPECT_EQ(before[0].text, after[0].text);
  ASSERT_EQ(after[1].path, "grows_registry.cu");
  EXPECT_NE(before[1].text, after[1].text);
  // A shape added above the others, and a comment line, leave their kernels'
  // sources as they were: a source names its spec, not its line in it.
  const std::string above = "# grown\nlibrary: grows\nworkloads:\n  - {n: 4, c: 64, h: 8, w: 8, filter: 3, padding: same}\n"
                            "  - {n: 1, c: 32, h: 16, w: 16, filter: 3, padding: same}\n";
  const std::vector<OutputFile> moved = render_library(t, plan_library({parse(above, "grows.yaml")}, ""));
  ASSERT_EQ(before.size() + 1, moved.size());
  for (const OutputFile& f : before) {
    if (f.path.rfind("dw_", 0) != 0) continue;
    const auto same = std::find_if(moved.begin(), moved.end(), [&](const OutputFile& m) { return m.path == f.path; });
    ASSERT_NE(same, moved.end()) << f.path;
    EXPECT_EQ(same->text, f.text) << f.path;
  }
}

TEST(Render, KernelCarriesThePlanNumbers) {
  const Templates t = Templates::load(CONVGEN_TEMPLATE_DIR);
  const LibraryPlan lib = shipped("seeds.yaml");
  const KernelPlan& k3 = kernel_named(lib, "dw_f32_nchw_n1_c256_h96_w96_k3x3_s1_p1_m1");
  const std::string text = render_kernel(t, lib, k3);
  for (const std::string& expected : {
           std::string("constexpr int kChannels = 256;"),
           std::string("constexpr int kOutH = 96;"),
           std::string("constexpr int kTileH = 32;"),
           std::string("constexpr int kTileW = 32;"),
           std::string("constexpr int kThreadsY = 8;"),
           std::string("constexpr int kThreadsX = 16;"),
           std::string("constexpr int kVThreadsX = 2;"),
           std::string("constexpr int kRowsPerThread = 4;"),
           std::string("constexpr int kInTileH = 34;"),
           std::string("constexpr int kLoadsPerThread = 10;"),
           std::string("reads 9446400 bytes, writes 9437184 bytes"),
           std::string("floor 6.29 us at the copy bandwidth of 3.00 TB/s"),
           "Generated by convgen from " + k3.workload.where.file + ". Do not edit",
           std::string("__syncthreads();"),
       }) {
    EXPECT_NE(text.find(expected), std::string::npos) << "missing: " << expected;
  }
  // Input and filter from global memory: no staging, no barrier.
  const LibraryPlan strided_lib = plan_library(
      {parse("library: strided\nworkloads:\n  - {n: 1, c: 96, h: 112, w: 112, filter: 3, stride: 2, padding: same, "
             "schedule: {algorithm: tiles}}\n")},
      "");
  const KernelPlan& strided = strided_lib.kernels.at(0);
  ASSERT_FALSE(strided.schedule.at("shared_input"));
  ASSERT_FALSE(strided.schedule.at("shared_filter"));
  const std::string s2 = render_kernel(t, strided_lib, strided);
  EXPECT_EQ(s2.find("kInTileH"), std::string::npos);
  EXPECT_EQ(s2.find("__syncthreads"), std::string::npos);
}

TEST(Render, RowsKernelCarriesThePlanNumbers) {
  const Templates t = Templates::load(CONVGEN_TEMPLATE_DIR);
  const LibraryPlan mnv2 = shipped("mobilenet_v2.yaml");
  const KernelPlan& k = kernel_named(mnv2, "dw_f32_nchw_n64_c32_h112_w112_k3x3_s1_p1_m1_ssrelu6");
  ASSERT_EQ(k.schedule.algorithm_name(), "rows");
  const std::string text = render_kernel(t, mnv2, k);
  for (const std::string& expected : {
           std::string("// Schedule (the default rule): rows: rows_per_thread 4, vector_width 4, threads_per_block 128\n"),
           std::string("constexpr int kChannels = 32;"),
           std::string("constexpr int kOutH = 112;"),
           std::string("constexpr int kOutW = 112;"),
           std::string("constexpr int kThreads = 128;"),
           std::string("constexpr int kLanes = 32;"),
           std::string("constexpr int kRows = 4;"),
           std::string("constexpr int kBands = 28;"),
           std::string("constexpr int kInRows = 6;"),
           std::string("constexpr int kVector = 4;"),
           std::string("constexpr int kOutputs = 4;"),
           std::string("constexpr int kHaloLeft = 1;"),
           std::string("constexpr int kHaloRight = 1;"),
           std::string("using Element = float;"),
           std::string("constexpr bool kVectorStore = true;"),
           std::string("//   Output stores: a lane's 4 outputs of a row in one 16-byte store."),
           std::string("__launch_bounds__(kThreads, 8)"),
       }) {
    EXPECT_NE(text.find(expected), std::string::npos) << "missing: " << expected;
  }
  // No shared memory, no barrier.
  EXPECT_EQ(text.find("__shared__"), std::string::npos);
  EXPECT_EQ(text.find("__syncthreads"), std::string::npos);

  // float2 loads and one output per lane, stored alone.
  const KernelPlan& s2 = kernel_named(mnv2, "dw_f32_nchw_n64_c576_h14_w14_k3x3_s2_p1_m1_ssrelu6");
  ASSERT_EQ(s2.schedule.algorithm_name(), "rows");
  const std::string strided = render_kernel(t, mnv2, s2);
  for (const std::string& expected : {
           std::string("constexpr int kLanes = 8;"),
           std::string("constexpr int kBands = 2;"),
           std::string("constexpr int kInRows = 9;"),
           std::string("constexpr int kVector = 2;"),
           std::string("constexpr int kOutputs = 1;"),
           std::string("constexpr int kHaloLeft = 1;"),
           std::string("constexpr int kHaloRight = 0;"),
           std::string("constexpr bool kVectorStore = false;"),
       }) {
    EXPECT_NE(strided.find(expected), std::string::npos) << "missing: " << expected;
  }
  EXPECT_EQ(strided.find("-byte store."), std::string::npos);
}

// Strictness only covers the sections a rendering enters, and the shipped
// specs never enter some (no shipped kernel stages its filter in shared
// memory, for one). These workloads take every section of the tiles kernel
// template both ways (those whose default is rows pin algorithm: tiles).
// Every section name of a template ({{#name}}) was rendered both true and
// false, by the values `seen` recorded for it.
void expect_every_section_taken_both_ways(const std::string& template_file,
                                          std::map<std::string, std::set<bool>>& seen) {
  const std::string text = read_file(fs::path(CONVGEN_TEMPLATE_DIR) / template_file);
  std::set<std::string> sections;
  for (size_t at = 0; (at = text.find("{{#", at)) != std::string::npos; ++at) {
    sections.insert(text.substr(at + 3, text.find("}}", at) - at - 3));
  }
  EXPECT_FALSE(sections.empty()) << template_file;
  for (const std::string& name : sections) {
    EXPECT_EQ(seen[name], (std::set<bool>{false, true}))
        << template_file << ": section {{#" << name << "}} not rendered both ways";
  }
}

// The epilogue's sections, as a kernel of `wl` takes them.
void record_epilogue_sections(const Workload& wl, std::map<std::string, std::set<bool>>& seen) {
  seen["has_bias"].insert(wl.epilogue == Epilogue::kBias);
  seen["has_scale_shift"].insert(wl.epilogue == Epilogue::kScaleShift);
}

// The kernel renders with every placeholder filled, and loads its input and
// stores its output with the cache hints of its input_cache and output_cache.
void expect_strict_rendering(const Templates& t, const LibraryPlan& lib, const KernelPlan& p) {
  std::string text;
  ASSERT_NO_THROW(text = render_kernel(t, lib, p));
  EXPECT_EQ(text.find("{{"), std::string::npos);
  const auto hint = [](int evict_first) { return evict_first ? "kEvictFirst;" : "kNormal;"; };
  EXPECT_NE(text.find(std::string("kInputCache = convgen::CacheHint::") + hint(p.schedule.at("input_cache"))),
            std::string::npos);
  EXPECT_NE(text.find(std::string("kOutputCache = convgen::CacheHint::") + hint(p.schedule.at("output_cache"))),
            std::string::npos);
}

TEST(Render, EveryBranchOfTheKernelTemplateRendersStrictly) {
  const Spec spec = parse(R"(library: branches
workloads:
  - {n: 1, c: 16, h: 32, w: 32, filter: 5, multiplier: 8, padding: same, epilogue: bias, activation: relu, schedule: {algorithm: tiles}}
  - {n: 2, c: 8, h: 21, w: 21, filter: 3, padding: same, epilogue: scale_shift, activation: relu6, schedule: {algorithm: tiles}}
  - {n: runtime, c: 8, h: 64, w: 64, filter: 1, padding: valid, schedule: {shared_input: true}}
  - {n: 1, c: 8, h: 64, w: 64, filter: 1, padding: valid, schedule: {algorithm: tiles}}
  - {n: 1, c: 8, h: 64, w: 64, filter: 3, stride: 2, padding: same, schedule: {shared_filter: true}}
  - {n: 1, c: 960, h: 7, w: 7, filter: 3, padding: same, schedule: {algorithm: tiles, output_cache: evict_first}}
)");
  const LibraryPlan lib = plan_library({spec}, "");
  const Templates t = Templates::load(CONVGEN_TEMPLATE_DIR);
  std::map<std::string, std::set<bool>> seen;
  for (const KernelPlan& p : lib.kernels) {
    SCOPED_TRACE(p.name);
    const Schedule& s = p.schedule;
    const Workload& wl = p.workload;
    ASSERT_EQ(s.algorithm_name(), "tiles");
    seen["shared_input"].insert(s.at("shared_input"));
    seen["shared_filter"].insert(s.at("shared_filter"));
    seen["needs_sync"].insert(s.at("shared_input") || s.at("shared_filter"));
    if (s.at("shared_input")) seen["ragged_loads"].insert(p.number("in_tile_h") * p.number("in_tile_w") % p.threads != 0);
    seen["ragged"].insert(p.out_h % s.at("tile_h") != 0 || p.out_w % s.at("tile_w") != 0);
    record_epilogue_sections(wl, seen);
    expect_strict_rendering(t, lib, p);
  }
  expect_every_section_taken_both_ways("depthwise_nchw.cu.mustache", seen);
}

// The same for the rows template.
TEST(Render, EveryBranchOfTheRowsTemplateRendersStrictly) {
  const Spec spec = parse(R"(library: rows_branches
workloads:
  - {n: 1, c: 32, h: 112, w: 112, filter: 3, padding: same, epilogue: scale_shift, activation: relu6}
  - {n: 2, c: 16, h: 7, w: 7, filter: 3, padding: same, multiplier: 2, epilogue: bias, activation: relu}
  - {n: runtime, c: 8, h: 28, w: 28, filter: 3, stride: 2, padding: same, schedule: {vector_width: 2}}
  - {n: 1, c: 8, h: 32, w: 32, filter: 3, padding: same, schedule: {input_cache: evict_first, output_cache: evict_first}}
)");
  const LibraryPlan lib = plan_library({spec}, "");
  const Templates t = Templates::load(CONVGEN_TEMPLATE_DIR);
  std::map<std::string, std::set<bool>> seen;
  for (const KernelPlan& p : lib.kernels) {
    SCOPED_TRACE(p.name);
    const Workload& wl = p.workload;
    ASSERT_EQ(p.schedule.algorithm_name(), "rows");
    seen["vector_store"].insert(p.flag("vector_store"));
    seen["ragged_rows"].insert(p.out_h % p.schedule.at("rows_per_thread") != 0);
    record_epilogue_sections(wl, seen);
    // 32 columns of float4 fill all 8 lanes of a group: no idle lane.
    seen["idle_edge_lane"].insert(wl.w != 32);
    expect_strict_rendering(t, lib, p);
  }
  expect_every_section_taken_both_ways("depthwise_nchw_rows.cu.mustache", seen);
}

// The same for the planes template: odd planes are copied with 16-byte
// vectors, even ones (padded to an odd stride in shared memory) with floats.
TEST(Render, EveryBranchOfThePlanesTemplateRendersStrictly) {
  const Spec spec = parse(R"(library: planes_branches
defaults: {schedule: {algorithm: planes}}
workloads:
  - {n: 64, c: 960, h: 7, w: 7, filter: 3, padding: same, epilogue: scale_shift, activation: relu6}
  - {n: 2, c: 16, h: 8, w: 8, filter: 3, stride: 2, padding: same, multiplier: 2, epilogue: bias, activation: relu}
  - {n: 3, c: 5, h: 7, w: 7, filter: 3, padding: same, multiplier: 2, schedule: {algorithm: planes, output_cache: evict_first}}
  - {n: runtime, c: 8, h: 10, w: 10, filter: [3, 5], stride: 2, dilation: [1, 2], padding: same}
)");
  const LibraryPlan lib = plan_library({spec}, "");
  const Templates t = Templates::load(CONVGEN_TEMPLATE_DIR);
  std::map<std::string, std::set<bool>> seen;
  for (const KernelPlan& p : lib.kernels) {
    SCOPED_TRACE(p.name);
    const Workload& wl = p.workload;
    ASSERT_EQ(p.schedule.algorithm_name(), "planes");
    EXPECT_EQ(p.flag("vector_copy_in"), wl.h * wl.w % 2 == 1);
    EXPECT_EQ(p.flag("vector_copy_out"), wl.multiplier * p.out_h * p.out_w % 2 == 1);
    seen["vector_copy_in"].insert(p.flag("vector_copy_in"));
    seen["vector_copy_out"].insert(p.flag("vector_copy_out"));
    record_epilogue_sections(wl, seen);
    expect_strict_rendering(t, lib, p);
  }
  expect_every_section_taken_both_ways("depthwise_nchw_planes.cu.mustache", seen);
}

int count_of(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Every activation, in every algorithm's template: one activate(x) a kernel
// defines and applies once, after the epilogue; the header says which.
TEST(Render, EveryActivationIsOneFunctionOfEveryTemplate) {
  // The math lives once, in convgen/epilogue.h (checked against each
  // definition by bench_row_test); each kernel selects its activation.
  const std::map<std::string, std::string> body = {
      {"none", "return convgen::activate(convgen::Activation::kNone, x); }"},
      {"relu", "return convgen::activate(convgen::Activation::kRelu, x); }"},
      {"relu6", "return convgen::activate(convgen::Activation::kRelu6, x); }"},
      {"silu", "return convgen::activate(convgen::Activation::kSilu, x); }"},
      {"hardswish", "return convgen::activate(convgen::Activation::kHardswish, x); }"},
  };
  const std::vector<std::string> workloads = {
      "{n: 1, c: 8, h: 64, w: 64, filter: 3, padding: same, epilogue: bias, schedule: {algorithm: tiles}}",
      "{n: 1, c: 8, h: 28, w: 28, filter: 3, padding: same, epilogue: bias, schedule: {algorithm: rows}}",
      "{n: 64, c: 960, h: 7, w: 7, filter: 3, padding: same, epilogue: bias, schedule: {algorithm: planes}}",
      "{n: 1, c: 8, h: 64, w: 64, filter: 7, padding: same, epilogue: bias, schedule: {algorithm: window}}",
      "{op: conv2d, n: 1, c: 8, c_out: 16, h: 16, w: 16, filter: 3, padding: same, epilogue: bias}",
      "{op: conv2d, n: 1, c: 8, c_out: 16, h: 16, w: 16, filter: 1, padding: valid, epilogue: bias}",
      "{n: 1, c: 16, h: 16, w: 16, filter: 3, padding: same, epilogue: bias, dtype: float16, layout: NHWC}",
      "{op: conv2d, n: 1, c: 16, c_out: 16, h: 16, w: 16, filter: 3, padding: same, epilogue: bias, dtype: bfloat16, "
      "layout: NHWC}",
  };
  // Before a float16 or bfloat16 rounding, silu takes the GPU's approximate
  // exp and division (convgen::activate_before_half_rounding); the other
  // activations, and every float32 kernel, call convgen::activate.
  const auto expected_body = [&](const KernelPlan& p, const std::string& word) {
    if (p.workload.dtype == DataType::kFloat32 || word != "silu") return body.at(word);
    return std::string("return convgen::activate_before_half_rounding(convgen::Activation::kSilu, x); }");
  };
  std::string yaml = "library: activations\nworkloads:\n";
  for (const auto& [word, unused] : body) {
    for (const std::string& w : workloads) yaml += "  - " + w.substr(0, w.size() - 1) + ", activation: " + word + "}\n";
  }
  const LibraryPlan lib = plan_library({parse(yaml)}, "");
  const Templates t = Templates::load(CONVGEN_TEMPLATE_DIR);
  std::set<std::string> algorithms;
  ASSERT_EQ(lib.kernels.size(), body.size() * workloads.size());
  for (const KernelPlan& p : lib.kernels) {
    SCOPED_TRACE(p.name);
    const std::string word = to_string(p.workload.activation);
    const std::string text = render_kernel(t, lib, p);
    algorithms.insert(p.schedule.algorithm_name());
    EXPECT_NE(text.find("__device__ __forceinline__ float activate(float x) { " + expected_body(p, word) + "\n"),
              std::string::npos);
    // The kernel's own activate(), not the header's function it calls.
    EXPECT_EQ(count_of(text, "activate(") - count_of(text, "convgen::activate("), 2) << "defined once, applied once";
    EXPECT_EQ(p.name.find(word) != std::string::npos, word != "none");
    if (word != "none") {
      EXPECT_NE(text.find("//   epilogue: " + word + "(conv + bias[co])"), std::string::npos);
    }
  }
  EXPECT_EQ(algorithms, (std::set<std::string>{"tiles", "rows", "planes", "window", "direct", "gemm", "staged",
                                               "implicit_gemm"}));
}

TEST(Render, SameSpecTwiceIsByteIdentical) {
  const Templates t1 = Templates::load(CONVGEN_TEMPLATE_DIR);
  const Templates t2 = Templates::load(CONVGEN_TEMPLATE_DIR);
  for (const char* spec : {"seeds.yaml", "mobilenet_v2.yaml"}) {
    const std::vector<OutputFile> a = render_library(t1, shipped(spec));
    const std::vector<OutputFile> b = render_library(t2, shipped(spec));
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].path, b[i].path);
      EXPECT_TRUE(a[i].text == b[i].text) << a[i].path << " differs between two renderings";
    }
  }
}

// Templates::load parses each template once and every render works on a
// copy of that parse: renders from one Templates, again and from several
// threads at once (as the tuner's compile threads render), give the bytes of
// its first renders.
TEST(Render, OneLoadRendersAgainAndFromThreadsAlike) {
  const LibraryPlan lib = shipped("mobilenet_v2.yaml");
  const Templates shared = Templates::load(CONVGEN_TEMPLATE_DIR);
  const auto render_all = [&](std::vector<std::string>& out) {
    for (const KernelPlan& p : lib.kernels) out.push_back(render_kernel(shared, lib, p));
  };
  std::vector<std::string> first;
  render_all(first);
  constexpr int kThreads = 4;
  std::vector<std::vector<std::string>> again(kThreads + 1);
  render_all(again[0]);
  std::vector<std::thread> threads;
  for (int i = 1; i <= kThreads; ++i) threads.emplace_back(render_all, std::ref(again[i]));
  for (std::thread& t : threads) t.join();
  for (int i = 0; i <= kThreads; ++i) {
    ASSERT_EQ(again[i].size(), first.size());
    for (size_t k = 0; k < first.size(); ++k) {
      EXPECT_TRUE(again[i][k] == first[k]) << lib.kernels[k].name << " differs in render " << i;
    }
  }
}

TEST(Render, OutputNamesOrder) {
  const Spec spec = parse(R"(library: order
workloads:
  - {n: 1, c: 96, h: 16, w: 16, filter: 3, padding: same}
  - {n: runtime, c: 8, h: 16, w: 16, filter: 3, padding: same}
  - {n: 1, c: 16, h: 16, w: 16, filter: 3, padding: same}
)");
  const LibraryPlan lib = plan_library({spec}, "");
  EXPECT_EQ(output_names(lib), (std::vector<std::string>{
                                   "order.h",
                                   "order_registry.cu",
                                   "dw_f32_nchw_n1_c16_h16_w16_k3x3_s1_p1_m1.cu",
                                   "dw_f32_nchw_n1_c96_h16_w16_k3x3_s1_p1_m1.cu",
                                   "dw_f32_nchw_nany_c8_h16_w16_k3x3_s1_p1_m1.cu",
                               }));
  const std::vector<OutputFile> files = render_library(Templates::load(CONVGEN_TEMPLATE_DIR), lib);
  std::vector<std::string> paths;
  for (const OutputFile& f : files) paths.push_back(f.path);
  EXPECT_EQ(paths, output_names(lib));
}

// Compile units: the kernels of implicit_gemm_sm90 (and of implicit_gemm)
// of one schedule and data type share a unit (their sources .cuh, the
// unit's file including them in order), at most kCompileUnitKernels a unit,
// units of a group within one kernel of each other; a kernel whose schedule
// no other has stays a .cu of its own, as do kernels of algorithms that
// share no unit (pointwise).
TEST(Render, CompileUnitsGroupKernelsOfOneMainLoop) {
  std::string text = R"(library: units
defaults: {op: conv2d, dtype: float16, layout: NHWC}
workloads:
  - {n: 1, c: 64, c_out: 64, h: 8, w: 8, filter: 3, padding: same, schedule: {algorithm: implicit_gemm_sm90, cta_tile: [64, 64, 64], stages: 4}}
  - {n: 1, c: 64, c_out: 64, h: 8, w: 8, filter: 1, padding: valid, schedule: {algorithm: implicit_gemm_sm90, cta_tile: [64, 128, 64], stages: 4}}
  - {n: 1, c: 64, c_out: 64, h: 8, w: 8, filter: 3, padding: same, dtype: bfloat16, schedule: {algorithm: implicit_gemm_sm90, cta_tile: [64, 64, 64], stages: 4}}
  - {n: 1, c: 64, c_out: 32, h: 8, w: 8, filter: 3, padding: same, schedule: {algorithm: implicit_gemm}}
)";
  // Then 25 of the first schedule: 26 in all, in units of 8, 9 and 9.
  for (int h = 9; h < 34; ++h) {
    text += "  - {n: 1, c: 64, c_out: 64, h: " + std::to_string(h) +
            ", w: 8, filter: 3, padding: same, schedule: {algorithm: implicit_gemm_sm90, cta_tile: [64, 64, 64], "
            "stages: 4}}\n";
  }
  // Then two implicit_gemm kernels of one schedule (a unit of two) and two
  // pointwise kernels of one schedule (no unit).
  text += R"(  - {n: 1, c: 64, c_out: 128, h: 8, w: 8, filter: 3, padding: same, schedule: {algorithm: implicit_gemm, cta_tile: [128, 128, 32], warp_tile: [64, 64], stages: 4}}
  - {n: 1, c: 64, c_out: 128, h: 8, w: 8, filter: 1, padding: valid, schedule: {algorithm: implicit_gemm, cta_tile: [128, 128, 32], warp_tile: [64, 64], stages: 4}}
  - {n: 1, c: 16, c_out: 64, h: 8, w: 8, filter: 1, padding: valid, schedule: {algorithm: pointwise, channel_tile: 32, warps_per_block: 4, tiles_per_warp: 4, stages: 2}}
  - {n: 1, c: 16, c_out: 32, h: 8, w: 8, filter: 1, padding: valid, schedule: {algorithm: pointwise, channel_tile: 32, warps_per_block: 4, tiles_per_warp: 4, stages: 2}}
)";
  PlanOptions options;
  options.target = parse_arch_list("90a");
  const LibraryPlan lib = plan_library({parse(text)}, "", options);
  ASSERT_EQ(lib.kernels.size(), 33u);
  const std::vector<CompileUnit> units = compile_units(lib);
  ASSERT_EQ(units.size(), 4u);
  const std::string sm90 = "implicit_gemm_sm90: cta_tile 64x64x64, 1 warpgroup(s), 4 stages";
  const std::string sm80 = "implicit_gemm: cta_tile 128x128x32, warp_tile 64x64, 4 stages";
  // The groups that share units: the float16 sm_90 kernels of the first
  // schedule (the first and the 25 of 9 to 33 rows) and the two
  // implicit_gemm kernels of one schedule.
  const auto shares = [&](const KernelPlan& p) {
    return p.workload.dtype == DataType::kFloat16 && (p.schedule.summary() == sm90 || p.schedule.summary() == sm80);
  };
  std::map<std::string, std::vector<size_t>> sizes;  // unit sizes by schedule, in order
  std::vector<size_t> grouped;
  for (size_t u = 0; u < units.size(); ++u) {
    EXPECT_EQ(units[u].file, "units_unit_" + std::to_string(u + 1) + ".cu");
    const std::string summary = lib.kernels[units[u].kernels.front()].schedule.summary();
    sizes[summary].push_back(units[u].kernels.size());
    for (size_t k : units[u].kernels) {
      grouped.push_back(k);
      EXPECT_TRUE(shares(lib.kernels[k])) << lib.kernels[k].name;
      EXPECT_EQ(lib.kernels[k].schedule.summary(), summary);
    }
  }
  EXPECT_EQ(sizes[sm90], (std::vector<size_t>{8, 9, 9}));
  EXPECT_EQ(sizes[sm80], (std::vector<size_t>{2}));
  const std::vector<std::string> names = output_names(lib);
  for (size_t k = 0; k < lib.kernels.size(); ++k) {
    const bool in_unit = std::count(grouped.begin(), grouped.end(), k) == 1;
    EXPECT_EQ(names[k + 2], lib.kernels[k].name + (in_unit ? ".cuh" : ".cu"));
    EXPECT_EQ(in_unit, shares(lib.kernels[k])) << lib.kernels[k].name;
  }
  EXPECT_EQ(std::vector<std::string>(names.end() - 4, names.end()),
            (std::vector<std::string>{"units_unit_1.cu", "units_unit_2.cu", "units_unit_3.cu", "units_unit_4.cu"}));
  // A unit's file includes its kernels' sources, in order; each is rendered
  // in its own namespace.
  const std::vector<OutputFile> files = render_library(Templates::load(CONVGEN_TEMPLATE_DIR), lib);
  ASSERT_EQ(files.size(), names.size());
  for (size_t u = 0; u < units.size(); ++u) {
    const std::string& unit = files[files.size() - units.size() + u].text;
    size_t at = 0;
    for (size_t k : units[u].kernels) {
      const size_t found = unit.find("#include \"" + lib.kernels[k].name + ".cuh\"\n", at);
      ASSERT_NE(found, std::string::npos) << lib.kernels[k].name;
      at = found;
      EXPECT_NE(files[k + 2].text.find("namespace " + lib.kernels[k].name + "_detail {"), std::string::npos);
    }
  }
}

// The order in which blocks take their tiles (raster, swizzle), in both
// implicit GEMM templates: the grid's own order where it is raster pixels
// in panels of 1, else the panel arithmetic of the schedule's order; a
// persistent (pingpong) block takes its tiles in the same order.
TEST(Render, EveryTileOrderOfBothImplicitGemmsRendersStrictly) {
  const Spec spec = parse(R"(library: orders
defaults: {op: conv2d, dtype: float16, layout: NHWC, n: 2, c: 64, c_out: 1000, w: 12, filter: 3, padding: same}
workloads:
  - {h: 12, schedule: {algorithm: implicit_gemm_sm90}}
  - {h: 13, schedule: {algorithm: implicit_gemm_sm90, raster: channels, swizzle: 2}}
  - {h: 14, schedule: {algorithm: implicit_gemm_sm90, raster: pixels, swizzle: 8}}
  - {h: 15, schedule: {algorithm: implicit_gemm_sm90, raster: channels, swizzle: 1}}
  - {h: 16, schedule: {algorithm: implicit_gemm}}
  - {h: 17, schedule: {algorithm: implicit_gemm, raster: channels, swizzle: 4}}
  - {h: 18, schedule: {algorithm: implicit_gemm, raster: pixels, swizzle: 2}}
  - {h: 19, schedule: {algorithm: implicit_gemm_sm90, pingpong: true}}
  - {h: 20, schedule: {algorithm: implicit_gemm_sm90, pingpong: true, raster: channels, swizzle: 2}}
  - {h: 21, schedule: {algorithm: implicit_gemm_sm90, pingpong: true, raster: pixels, swizzle: 4}}
)");
  PlanOptions options;
  options.target = parse_arch_list("90a");
  const LibraryPlan lib = plan_library({spec}, "", options);
  ASSERT_EQ(lib.kernels.size(), 10u);
  const Templates t = Templates::load(CONVGEN_TEMPLATE_DIR);
  std::map<std::string, std::set<bool>> seen;
  for (const KernelPlan& p : lib.kernels) {
    SCOPED_TRACE(p.name + ": " + p.schedule.summary());
    const int raster = p.schedule.at("raster"), swizzle = p.schedule.at("swizzle");
    const bool identity = raster == 0 && swizzle == 1;
    seen["raster_identity"].insert(identity);
    seen["raster_channels"].insert(raster == 1);
    seen["pixel panels"].insert(raster == 0 && !identity);
    std::string text;
    ASSERT_NO_THROW(text = render_kernel(t, lib, p));
    EXPECT_EQ(text.find("{{"), std::string::npos);
    const bool pingpong = p.schedule.values.count("pingpong") != 0 && p.schedule.at("pingpong") == 1;
    // The order's function is the kernel's only where it takes its tiles
    // through it: a persistent grid, or an order not the grid's own.
    seen["tile_function"].insert(pingpong || !identity);
    EXPECT_EQ(text.find("__device__ __forceinline__ Tile tile_of(") != std::string::npos, pingpong || !identity);
    EXPECT_EQ(text.find("return {launched % tiles_m, launched / tiles_m};") != std::string::npos, identity && pingpong);
    EXPECT_EQ(text.find("constexpr int kSwizzle = " + std::to_string(swizzle) + ";") != std::string::npos, !identity);
    EXPECT_EQ(text.find("// raster channels: panels of kSwizzle pixel tiles") != std::string::npos, raster == 1);
    EXPECT_EQ(text.find("// raster pixels: panels of kSwizzle output-channel tiles") != std::string::npos,
              raster == 0 && !identity);
    // The block's tile is the order's everywhere: x and y are read once,
    // for it; a persistent block's tiles are (by the copying warp and by
    // the multiplying warpgroups, each from x).
    const auto count = [&](const std::string& what) {
      size_t n = 0;
      for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
      return n;
    };
    seen["pingpong"].insert(pingpong);
    if (pingpong) {
      EXPECT_EQ(count("blockIdx.x"), 2u);
      EXPECT_EQ(count("blockIdx.y"), 0u);
      EXPECT_EQ(count("const Tile tile = tile_of(t, tiles_m, kNTiles);"), 2u);
      EXPECT_NE(text.find("const int m0 = tile.m * kCtaM + chunk * kChunkRows;"), std::string::npos);
    } else {
      EXPECT_EQ(count("blockIdx.x"), 1u);
      EXPECT_EQ(count("blockIdx.y"), 1u);
      EXPECT_NE(text.find(identity ? "const Tile tile = {static_cast<int>(blockIdx.x), static_cast<int>(blockIdx.y)};"
                                   : "const Tile tile = tile_of(blockIdx.y * gridDim.x + blockIdx.x, gridDim.x, gridDim.y);"),
                std::string::npos);
      EXPECT_NE(text.find("const int m0 = tile.m * kCtaM;"), std::string::npos);
    }
    if (p.schedule.algorithm_name() == "implicit_gemm_sm90") {
      EXPECT_NE(text.find("make_coord(tile.m, tile.n, _, Int<0>{})"), std::string::npos);
    }
    // The summary names the order where it is not the grid's own.
    EXPECT_EQ(p.schedule.summary().find(", raster ") == std::string::npos, identity);
  }
  EXPECT_EQ(seen["pixel panels"], (std::set<bool>{false, true}));
  EXPECT_EQ(seen["pingpong"], (std::set<bool>{false, true}));
  seen.erase("pingpong");
  expect_every_section_taken_both_ways("partials/tile_raster.mustache", seen);
  // Kernels that differ only in their order share a compile unit, whose
  // summary is the main loop's.
  const std::vector<CompileUnit> units = compile_units(lib);
  ASSERT_EQ(units.size(), 3u);
  for (const CompileUnit& unit : units) {
    SCOPED_TRACE(unit.file);
    EXPECT_GE(unit.kernels.size(), 3u);
    for (size_t k : unit.kernels) {
      EXPECT_EQ(lib.kernels[k].schedule.algorithm, lib.kernels[unit.kernels.front()].schedule.algorithm);
    }
  }
  const std::vector<OutputFile> files = render_library(t, lib);
  for (size_t u = 0; u < units.size(); ++u) {
    const std::string& text = files[files.size() - units.size() + u].text;
    EXPECT_EQ(text.find("raster"), std::string::npos) << text.substr(0, 300);
  }
}

// The residual read before the products: by implicit_gemm_sm90's
// persistent (pingpong) warpgroups in NHWC, each tile's before its
// products; every other implicit GEMM kernel reads it in its epilogue, and
// a kernel without a residual has none of it.
TEST(Render, PingpongKernelsReadTheResidualAhead) {
  const Spec spec = parse(R"(library: ahead
defaults: {op: conv2d, dtype: float16, layout: NHWC, n: 2, c: 64, c_out: 96, h: 12, w: 12, filter: 3, padding: same}
workloads:
  - {h: 12, residual: true, schedule: {algorithm: implicit_gemm_sm90, pingpong: true, cta_tile: [128, 64, 64]}}
  - {h: 13, residual: true, dtype: bfloat16, schedule: {algorithm: implicit_gemm_sm90, pingpong: true, cta_tile: [128, 128, 64]}}
  - {h: 14, residual: false, schedule: {algorithm: implicit_gemm_sm90, pingpong: true}}
  - {h: 15, residual: true, schedule: {algorithm: implicit_gemm_sm90, pingpong: false}}
  - {h: 16, residual: true, schedule: {algorithm: implicit_gemm}}
  - {h: 17, residual: true, dtype: float32, layout: NCHW, math: tf32, schedule: {algorithm: implicit_gemm_sm90_nchw, pingpong: true}}
)");
  PlanOptions options;
  options.target = parse_arch_list("90a");
  const LibraryPlan lib = plan_library({spec}, "", options);
  ASSERT_EQ(lib.kernels.size(), 6u);
  const Templates t = Templates::load(CONVGEN_TEMPLATE_DIR);
  const std::vector<bool> ahead = {true, true, false, false, false, false};
  for (size_t k = 0; k < lib.kernels.size(); ++k) {
    const KernelPlan& p = lib.kernels[k];
    SCOPED_TRACE(p.name + ": " + p.schedule.summary());
    std::string text;
    ASSERT_NO_THROW(text = render_kernel(t, lib, p));
    EXPECT_EQ(text.find("{{"), std::string::npos);
    const size_t declared = text.find("convgen::Packed<Element, kOutVec> residual_ahead[");
    EXPECT_EQ(declared != std::string::npos, ahead[k]);
    if (!ahead[k]) continue;
    // Loaded after the tile is known, before its first product; taken in
    // the epilogue.
    const size_t tile = text.find("const Tile tile = tile_of(t, tiles_m, kNTiles);");
    const size_t products = text.find("cute::gemm(tiled_mma");
    ASSERT_NE(tile, std::string::npos);
    ASSERT_NE(products, std::string::npos);
    EXPECT_LT(tile, declared);
    EXPECT_LT(declared, products);
    EXPECT_NE(text.find("residual_ahead[ahead_chunk][col_step]", products), std::string::npos);
  }
}

TEST(StrictTemplates, UndefinedPlaceholderInTheKernelTemplate) {
  TemplateCopy copy;
  copy.insert_line("depthwise_nchw.cu.mustache", 3, "// {{no_such_thing}}");
  const Templates t = Templates::load(copy.dir());
  const LibraryPlan lib = shipped("seeds.yaml");
  const std::string expected =
      copy.path("depthwise_nchw.cu.mustache") + ":3: error: undefined placeholder 'no_such_thing'";
  EXPECT_NE(template_error([&] { render_kernel(t, lib, kernel_named(lib, kSeedTilesKernel)); }).find(expected), std::string::npos)
      << expected;
  EXPECT_NE(template_error([&] { render_library(t, lib); }).find(expected), std::string::npos) << expected;
}

// A rows kernel renders the rows template; the tiles template is not read for it, nor the rows template for a
// tiles kernel.
TEST(StrictTemplates, UndefinedPlaceholderInTheRowsTemplate) {
  TemplateCopy copy;
  copy.insert_line("depthwise_nchw_rows.cu.mustache", 3, "// {{no_such_thing}}");
  const Templates t = Templates::load(copy.dir());
  const LibraryPlan lib = shipped("seeds.yaml");
  const KernelPlan& rows = kernel_named(lib, kSeedRowsKernel);
  ASSERT_EQ(rows.schedule.algorithm_name(), "rows");
  const std::string expected =
      copy.path("depthwise_nchw_rows.cu.mustache") + ":3: error: undefined placeholder 'no_such_thing'";
  EXPECT_NE(template_error([&] { render_kernel(t, lib, rows); }).find(expected), std::string::npos) << expected;
  EXPECT_NE(template_error([&] { render_library(t, lib); }).find(expected), std::string::npos) << expected;
  EXPECT_NO_THROW(render_kernel(t, lib, kernel_named(lib, kSeedTilesKernel)));

  TemplateCopy tiles_broken;
  tiles_broken.insert_line("depthwise_nchw.cu.mustache", 3, "// {{no_such_thing}}");
  EXPECT_NO_THROW(render_kernel(Templates::load(tiles_broken.dir()), lib, rows));
}

TEST(StrictTemplates, UndefinedPlaceholderInTheHeaderAndInARegistrySection) {
  const LibraryPlan lib = shipped("seeds.yaml");
  {
    TemplateCopy copy;
    copy.insert_line("library.h.mustache", 5, "// {{kernel_cuont}}");
    const std::string what = template_error([&] { render_library(Templates::load(copy.dir()), lib); });
    EXPECT_NE(what.find(copy.path("library.h.mustache") + ":5: error: undefined placeholder 'kernel_cuont'"),
              std::string::npos)
        << what;
  }
  {
    // Inside {{#kernels}}: names resolve against each kernel, then the library.
    TemplateCopy copy;
    copy.replace("registry.cu.mustache", "     \"{{name}}\",", "     \"{{name}}\", {{kernel_nmae}}");
    const std::string text = read_file(copy.path("registry.cu.mustache"));
    const int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(
                                                                                  text.find("{{kernel_nmae}}")),
                                                     '\n'));
    ASSERT_GT(line, 10);
    const std::string what = template_error([&] { render_library(Templates::load(copy.dir()), lib); });
    EXPECT_NE(what.find(copy.path("registry.cu.mustache") + ":" + std::to_string(line) +
                        ": error: undefined placeholder 'kernel_nmae'"),
              std::string::npos)
        << what;
  }
}

TEST(StrictTemplates, MalformedTemplateNamesTheFile) {
  TemplateCopy copy;
  copy.replace("depthwise_nchw.cu.mustache", "{{/shared_input}}", "");
  const Templates t = Templates::load(copy.dir());
  const LibraryPlan lib = shipped("seeds.yaml");
  const std::string what = template_error([&] { render_kernel(t, lib, kernel_named(lib, kSeedTilesKernel)); });
  EXPECT_EQ(what.rfind(copy.path("depthwise_nchw.cu.mustache") + ": ", 0), 0u) << what;
}

TEST(StrictTemplates, MissingTemplateFile) {
  for (const char* name : {"depthwise_nchw.cu.mustache", "depthwise_nchw_rows.cu.mustache",
                           "depthwise_nchw_planes.cu.mustache", "registry.cu.mustache", "library.h.mustache"}) {
    SCOPED_TRACE(name);
    TemplateCopy copy;
    fs::remove(copy.path(name));
    const std::string what = template_error([&] { Templates::load(copy.dir()); });
    EXPECT_EQ(what, "cannot read template " + copy.path(name));
  }
}

// Partials (templates/partials/, {{> name}}) render as strictly as the
// templates that use them: an undefined placeholder in one is located in the
// partial's own file and line, a missing partial names its file, and a
// template's text (what its tuning fingerprint is computed from) includes
// the partials it uses.
TEST(StrictTemplates, PartialsAreStrictAndPartOfTheTemplatesText) {
  const LibraryPlan lib = shipped("seeds.yaml");
  {
    TemplateCopy copy;
    copy.insert_line("partials/launcher.mustache", 2, "// {{no_such_thing}}");
    const Templates t = Templates::load(copy.dir());
    EXPECT_NE(t.kernels.at("depthwise_nchw.cu.mustache").find("// {{no_such_thing}}"), std::string::npos);
    const std::string expected =
        copy.path("partials/launcher.mustache") + ":2: error: undefined placeholder 'no_such_thing'";
    EXPECT_NE(template_error([&] { render_kernel(t, lib, kernel_named(lib, kSeedTilesKernel)); }).find(expected),
              std::string::npos)
        << expected;
    EXPECT_NE(template_error([&] { render_kernel(t, lib, kernel_named(lib, kSeedRowsKernel)); }).find(expected),
              std::string::npos)
        << expected;
  }
  {
    TemplateCopy copy;
    fs::remove(copy.path("partials/launcher.mustache"));
    EXPECT_EQ(template_error([&] { Templates::load(copy.dir()); }),
              "cannot read template " + copy.path("partials/launcher.mustache"));
  }
  {
    TemplateCopy copy;
    copy.replace("depthwise_nchw.cu.mustache", "{{> launcher}}", "// {{> launcher}}");
    EXPECT_NE(template_error([&] { Templates::load(copy.dir()); }).find("depthwise_nchw.cu.mustache:"),
              std::string::npos);
  }
}

// Regression: the line of an undefined placeholder was once found by
// searching the template for "{{" + name, so a name that is a prefix of an
// earlier tag ({{nam}} after {{name}} on line 1) is reported on that earlier
// line, and a tag written with spaces ({{ no_such_thing }}, valid mustache)
// gets line 0.
TEST(StrictTemplates, UndefinedPlaceholderLineIsTheTagsOwnLine) {
  const LibraryPlan lib = shipped("seeds.yaml");
  {
    TemplateCopy copy;
    copy.insert_line("depthwise_nchw.cu.mustache", 4, "// {{nam}}");  // line 1 is "// {{name}}"
    const std::string what =
        template_error([&] { render_kernel(Templates::load(copy.dir()), lib, kernel_named(lib, kSeedTilesKernel)); });
    EXPECT_NE(what.find(copy.path("depthwise_nchw.cu.mustache") + ":4: error: undefined placeholder 'nam'"),
              std::string::npos)
        << what;
  }
  {
    TemplateCopy copy;
    copy.insert_line("depthwise_nchw.cu.mustache", 4, "// {{ no_such_thing }}");
    const std::string what =
        template_error([&] { render_kernel(Templates::load(copy.dir()), lib, kernel_named(lib, kSeedTilesKernel)); });
    EXPECT_NE(what.find(copy.path("depthwise_nchw.cu.mustache") + ":4: error: undefined placeholder 'no_such_thing'"),
              std::string::npos)
        << what;
  }
}

// A template error in `convgen generate` leaves the output directory as it was.
TEST(StrictTemplates, CliWritesNothingOnATemplateError) {
  TemplateCopy copy;
  copy.insert_line("depthwise_nchw.cu.mustache", 3, "// {{no_such_thing}}");
  TempDir tmp;
  const fs::path out = tmp / "out";
  const CommandResult r = run_command(quote(CONVGEN_CLI) + " generate " +
                                          quote(std::string(CONVGEN_SOURCE_DIR) + "/specs/seeds.yaml") +
                                          " --templates " + quote(copy.dir()) + " --out " + quote(out.string()),
                                      tmp.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("depthwise_nchw.cu.mustache:3: error: undefined placeholder 'no_such_thing'"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace convgen_test
