// Rendering: KernelPlan -> mustache data -> source text.
#include "convgen/gen/render.hpp"

#include <kainjow/mustache.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace convgen::gen {

namespace ms = kainjow::mustache;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw TemplateError("cannot read template " + path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// A mustache context that remembers every name it could not resolve, so that
// a typo in a template is an error instead of an empty string in a kernel.
class StrictContext : public ms::context<std::string> {
 public:
  using ms::context<std::string>::context;
  const ms::data* get(const std::string& name) const override {
    const ms::data* found = ms::context<std::string>::get(name);
    if (found == nullptr) missing_.insert(name);
    return found;
  }
  const std::set<std::string>& missing() const { return missing_; }

 private:
  mutable std::set<std::string> missing_;
};

// 1-based line of the first tag naming `name` in `text`, 0 if not found.
int line_of_tag(const std::string& text, const std::string& name) {
  // Any tag kind ({{x}}, {{{x}}}, {{#x}}, {{^x}}, {{&x}}), spaces allowed.
  const std::regex tag("\\{\\{[{#^&/]?\\s*" + std::regex_replace(name, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)") +
                       "\\s*\\}");
  std::smatch match;
  if (!std::regex_search(text, match, tag)) return 0;
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + match.position(0), '\n'));
}

// Marks a template's blank lines while rendering (see join_section_tag_lines).
constexpr char kBlankLine = '\x01';

// A line holding only a section tag ({{#x}}, {{^x}}, {{/x}}) must vanish from
// the output whatever the section's value. The mustache library leaves a
// blank line where two such lines meet, so join each one to the next line
// before rendering: the tag then takes up no line of its own. Blank lines
// carry a marker, removed after rendering, so that a tag joined to one does
// not become a line of its own again.
std::string join_section_tag_lines(const std::string& text) {
  static const std::regex section_tag_line(R"(^[ \t]*(\{\{[#^/][^}]*\}\})[ \t]*$)");
  std::string joined;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::smatch match;
    if (std::regex_match(line, match, section_tag_line)) {
      joined += match[1].str();
    } else {
      joined += (line.empty() ? std::string(1, kBlankLine) : line) + "\n";
    }
  }
  return joined;
}

std::string render_strict(const std::string& template_text, const std::string& template_path, const ms::data& data) {
  ms::mustache tmpl(join_section_tag_lines(template_text));
  if (!tmpl.is_valid()) throw TemplateError(template_path + ": " + tmpl.error_message());
  // Sources are not HTML: print values as they are.
  tmpl.set_custom_escape([](const std::string& s) { return s; });
  StrictContext context(&data);
  std::string text = tmpl.render(context);
  text.erase(std::remove(text.begin(), text.end(), kBlankLine), text.end());
  if (!tmpl.is_valid()) throw TemplateError(template_path + ": " + tmpl.error_message());
  if (!context.missing().empty()) {
    std::string message;
    for (const std::string& name : context.missing()) {
      message += template_path + ":" + std::to_string(line_of_tag(template_text, name)) +
                 ": error: undefined placeholder '" + name + "'\n";
    }
    throw TemplateError(message);
  }
  return text;
}

std::string fixed(double value, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
  return buffer;
}

std::string spec_location(const Workload& wl) { return wl.where.file + ":" + std::to_string(wl.where.line); }

std::string epilogue_description(const Workload& wl) {
  std::string affine = wl.epilogue == Epilogue::kBias         ? "+ bias[co]"
                       : wl.epilogue == Epilogue::kScaleShift ? "* scale[co] + shift[co]"
                                                              : "";
  std::string act = wl.activation == Activation::kRelu    ? "relu"
                    : wl.activation == Activation::kRelu6 ? "relu6"
                                                          : "";
  const std::string relu6_note = wl.activation == Activation::kRelu6 ? ", relu6(x) = min(max(x, 0), 6)" : "";
  if (affine.empty() && act.empty()) return "none";
  if (act.empty()) return "conv " + affine;
  if (affine.empty()) return act + "(conv)" + relu6_note;
  return act + "(conv " + affine + ")" + relu6_note;
}

std::string join_files(const std::vector<std::string>& files) {
  std::string text;
  for (size_t i = 0; i < files.size(); ++i) text += (i ? ", " : "") + files[i];
  return text;
}

const char* epilogue_enum(Epilogue e) {
  switch (e) {
    case Epilogue::kNone: return "Epilogue::kNone";
    case Epilogue::kBias: return "Epilogue::kBias";
    case Epilogue::kScaleShift: return "Epilogue::kScaleShift";
  }
  return "?";
}

const char* activation_enum(Activation a) {
  switch (a) {
    case Activation::kNone: return "Activation::kNone";
    case Activation::kRelu: return "Activation::kRelu";
    case Activation::kRelu6: return "Activation::kRelu6";
  }
  return "?";
}

std::string problem_initializer(const Workload& wl) {
  std::string s = "{";
  for (int v : {wl.n, wl.c, wl.h, wl.w, wl.kh, wl.kw, wl.stride_h, wl.stride_w, wl.pad_top, wl.pad_bottom,
                wl.pad_left, wl.pad_right, wl.dilation_h, wl.dilation_w, wl.multiplier}) {
    s += std::to_string(v) + ", ";
  }
  return s + epilogue_enum(wl.epilogue) + ", " + activation_enum(wl.activation) + "}";
}

ms::data bool_data(bool value) { return value ? ms::data::type::bool_true : ms::data::type::bool_false; }

ms::data kernel_data(const LibraryPlan& lib, const KernelPlan& p, const RenderOptions& options) {
  const Workload& wl = p.workload;
  const Schedule& s = p.schedule;
  ms::data d;
  auto set = [&d](const std::string& key, const std::string& value) { d.set(key, value); };
  auto set_int = [&d](const std::string& key, long long value) { d.set(key, std::to_string(value)); };
  auto set_bool = [&d](const std::string& key, bool value) { d.set(key, bool_data(value)); };

  set("name", p.name);
  set("library", lib.name);
  set("spec_location", spec_location(wl));
  set("batch_note", wl.n == 0 ? "  (N given at launch)" : "  (N given at launch; the spec declares N = " +
                                                             std::to_string(wl.n) + ")");
  set_int("c", wl.c);
  set_int("h", wl.h);
  set_int("w", wl.w);
  set_int("kh", wl.kh);
  set_int("kw", wl.kw);
  set_int("stride_h", wl.stride_h);
  set_int("stride_w", wl.stride_w);
  set_int("dilation_h", wl.dilation_h);
  set_int("dilation_w", wl.dilation_w);
  set_int("pad_top", wl.pad_top);
  set_int("pad_bottom", wl.pad_bottom);
  set_int("pad_left", wl.pad_left);
  set_int("pad_right", wl.pad_right);
  set_int("multiplier", wl.multiplier);
  set_int("out_channels", p.out_channels);
  set_int("out_h", p.out_h);
  set_int("out_w", p.out_w);
  set("epilogue_description", epilogue_description(wl));
  set_bool("has_bias", wl.epilogue == Epilogue::kBias);
  set_bool("has_scale_shift", wl.epilogue == Epilogue::kScaleShift);
  set_bool("relu", wl.activation == Activation::kRelu);
  set_bool("relu6", wl.activation == Activation::kRelu6);
  set("problem_initializer", problem_initializer(wl));

  set("schedule_summary", s.summary());
  const bool input_evict_first = s.input_cache == CachePolicy::kEvictFirst;
  set("input_load", input_evict_first ? "__ldcs" : "__ldg");
  set("input_cache_description", input_evict_first
                                     ? "__ldcs: evict first in L1 and L2 (read once, so its lines are reused first)"
                                     : "__ldg: the read-only cache, normal L2 priority");
  set_bool("output_evict_first", s.output_cache == CachePolicy::kEvictFirst);
  set("output_cache_description", s.output_cache == CachePolicy::kEvictFirst
                                      ? "__stcs: evict first (written once, so its lines are reused first)"
                                      : "plain stores, normal L2 priority");
  set_int("alignment", p.alignment);
  if (s.algorithm == Algorithm::kRows) {
    static const char* const kVectorTypes[] = {"", "float", "float2", "", "float4"};
    set_int("threads_per_block", s.threads_per_block);
    set_int("rows_per_thread", s.rows_per_thread);
    set_int("vector_width", s.vector_width);
    set_int("vector_width_bytes", 4 * s.vector_width);
    set("input_vector_type", kVectorTypes[s.vector_width]);
    set_int("group_lanes", p.group_lanes);
    // Some lane of the group reads no input: its zeros serve as the padding.
    set_bool("idle_edge_lane", (wl.w + s.vector_width - 1) / s.vector_width < p.group_lanes);
    set_int("groups_per_block", s.threads_per_block / p.group_lanes);
    set_int("bands", p.bands);
    set_int("in_rows", p.in_rows);
    set_int("outputs_per_lane", p.outputs_per_lane);
    set_int("halo_left", p.halo_left);
    set_int("halo_right", p.halo_right);
    set_bool("vector_store", p.vector_store);
    set("output_vector_type", p.vector_store ? kVectorTypes[p.outputs_per_lane] : "");
    set("make_output_vector", p.outputs_per_lane == 4   ? "make_float4(result[0], result[1], result[2], result[3])"
                              : p.outputs_per_lane == 2 ? "make_float2(result[0], result[1])"
                                                        : "");
    set_int("min_blocks", p.min_blocks);
    set_bool("ragged_rows", p.out_h % s.rows_per_thread != 0);
  } else if (s.algorithm == Algorithm::kPlanes) {
    set_int("warps_per_block", s.warps_per_block);
    set_int("threads_per_block", 32 * s.warps_per_block);
    set_int("planes_per_block", 32 * s.warps_per_block);
    set_int("in_stride", p.in_stride);
    set_int("out_stride", p.out_stride);
    set_bool("vector_copy_in", p.vector_copy_in);
    set_bool("vector_copy_out", p.vector_copy_out);
    const int in_plane = wl.h * wl.w;
    const int out_planes = wl.multiplier * p.out_h * p.out_w;
    set_int("in_copies_per_lane", p.vector_copy_in ? (in_plane + 3) / 4 : in_plane);
    set_int("out_copies_per_lane", p.vector_copy_out ? (out_planes + 3) / 4 : out_planes);
    set("copy_in_description", p.vector_copy_in ? "16-byte loads" : "4-byte loads (the planes are padded to an odd stride)");
    set("copy_out_description", p.vector_copy_out ? "16-byte stores" : "4-byte stores (the planes are padded to an odd stride)");
    set_int("smem_bytes", p.smem_bytes);
  } else {
    set_int("tile_h", s.tile_h);
    set_int("tile_w", s.tile_w);
    set_int("threads_y", s.threads_y);
    set_int("threads_x", s.threads_x);
    set_int("vthreads_y", s.vthreads_y);
    set_int("vthreads_x", s.vthreads_x);
    set_bool("shared_input", s.shared_input);
    set_bool("shared_filter", s.shared_filter);
    set_bool("needs_sync", s.shared_input || s.shared_filter);
    set_int("rows_per_thread", p.rows_per_thread);
    set_int("cols_per_thread", p.cols_per_thread);
    set_int("block_threads", p.block_threads);
    set_int("channels_per_block", s.channels_per_block);
    set_int("channel_blocks", wl.c / s.channels_per_block);
    set_int("tiles_y", p.tiles_y);
    set_int("tiles_x", p.tiles_x);
    set_int("grid_x", static_cast<long long>(p.tiles_y) * p.tiles_x);
    set_int("in_tile_h", p.in_tile_h);
    set_int("in_tile_w", p.in_tile_w);
    set_int("loads_per_thread", p.loads_per_thread);
    set_bool("ragged_loads", p.in_tile_h * p.in_tile_w % p.threads != 0);
    // Output bounds checks are emitted only where the tiles overhang the output.
    set_bool("ragged", p.out_h % s.tile_h != 0 || p.out_w % s.tile_w != 0);
    set_int("smem_bytes", p.smem_bytes);
    set("smem_note", s.shared_input ? " (input tile " + std::to_string(p.in_tile_h) + "x" +
                                          std::to_string(p.in_tile_w) + " floats" +
                                          (s.shared_filter ? ", plus the filter)" : ")")
                                    : (s.shared_filter ? " (the filter)" : ""));
  }
  set_int("cost_batch", p.cost_batch);
  set_int("bytes_read", p.bytes_read);
  set_int("bytes_written", p.bytes_written);
  set("floor_us", fixed(p.floor_us, 2));
  set("copy_bandwidth_tbps", fixed(options.copy_bandwidth_tbps, 2));
  return d;
}

ms::data library_data(const LibraryPlan& lib, const RenderOptions& options) {
  ms::data d;
  d.set("library", lib.name);
  d.set("spec_files", join_files(lib.spec_files));
  d.set("kernel_count", std::to_string(lib.kernels.size()));
  ms::data kernels{ms::data::type::list};
  for (const KernelPlan& plan : lib.kernels) kernels.push_back(kernel_data(lib, plan, options));
  d.set("kernels", kernels);
  return d;
}

}  // namespace

Templates Templates::load(const std::string& dir) {
  Templates t;
  t.dir = dir;
  t.kernel = read_file(dir + "/depthwise_nchw.cu.mustache");
  t.kernel_rows = read_file(dir + "/depthwise_nchw_rows.cu.mustache");
  t.kernel_planes = read_file(dir + "/depthwise_nchw_planes.cu.mustache");
  t.registry = read_file(dir + "/registry.cu.mustache");
  t.header = read_file(dir + "/library.h.mustache");
  return t;
}

std::vector<std::string> output_names(const LibraryPlan& lib) {
  std::vector<std::string> names = {lib.name + ".h", lib.name + "_registry.cu"};
  for (const KernelPlan& plan : lib.kernels) names.push_back(plan.name + ".cu");
  return names;
}

std::string render_kernel(const Templates& t, const LibraryPlan& lib, const KernelPlan& plan,
                          const RenderOptions& options) {
  if (plan.schedule.algorithm == Algorithm::kRows) {
    return render_strict(t.kernel_rows, t.dir + "/depthwise_nchw_rows.cu.mustache", kernel_data(lib, plan, options));
  }
  if (plan.schedule.algorithm == Algorithm::kPlanes) {
    return render_strict(t.kernel_planes, t.dir + "/depthwise_nchw_planes.cu.mustache",
                         kernel_data(lib, plan, options));
  }
  return render_strict(t.kernel, t.dir + "/depthwise_nchw.cu.mustache", kernel_data(lib, plan, options));
}

std::vector<OutputFile> render_library(const Templates& t, const LibraryPlan& lib, const RenderOptions& options) {
  const std::vector<std::string> names = output_names(lib);
  const ms::data data = library_data(lib, options);
  std::vector<OutputFile> files;
  files.push_back({names[0], render_strict(t.header, t.dir + "/library.h.mustache", data)});
  files.push_back({names[1], render_strict(t.registry, t.dir + "/registry.cu.mustache", data)});
  for (size_t i = 0; i < lib.kernels.size(); ++i) {
    files.push_back({names[i + 2], render_kernel(t, lib, lib.kernels[i], options)});
  }
  return files;
}

}  // namespace convgen::gen
