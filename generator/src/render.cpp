// Rendering: KernelPlan -> mustache data -> source text.
#include "convgen/gen/render.hpp"

#include <kainjow/mustache.hpp>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>

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

// A template with its partials expanded, and where each of its lines came from.
struct ExpandedTemplate {
  std::string text;
  std::vector<std::string> origins;  // "<path>:<line>" per line of text
};

// Appends `text` (read from `path`) to `out`, each line holding only
// {{> name}} replaced by partials/name.mustache, expanded in turn.
void expand_partials(const std::string& dir, const std::string& path, const std::string& text, int depth,
                     ExpandedTemplate& out) {
  static const std::regex partial_line(R"(^([ \t]*)\{\{>\s*([A-Za-z0-9_]+)\s*\}\}[ \t]*$)");
  std::istringstream lines(text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    const std::string where = path + ":" + std::to_string(number);
    std::smatch match;
    if (std::regex_match(line, match, partial_line)) {
      if (depth >= 8) throw TemplateError(where + ": error: partials nested more than 8 deep (a cycle?)");
      const std::string indent = match[1].str();
      const std::string partial = dir + "/partials/" + match[2].str() + ".mustache";
      ExpandedTemplate inner;
      expand_partials(dir, partial, read_file(partial), depth + 1, inner);
      std::istringstream inner_lines(inner.text);
      std::string inner_line;
      for (size_t i = 0; std::getline(inner_lines, inner_line); ++i) {
        out.text += (inner_line.empty() ? "" : indent) + inner_line + "\n";
        out.origins.push_back(inner.origins[i]);
      }
      continue;
    }
    if (line.find("{{>") != std::string::npos) {
      throw TemplateError(where + ": error: a partial ({{> name}}) must stand alone on its line");
    }
    out.text += line + "\n";
    out.origins.push_back(where);
  }
  // A template's last line keeps its lack of a newline.
  if (depth == 0 && !text.empty() && text.back() != '\n' && !out.text.empty()) out.text.pop_back();
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

}  // namespace

// A template's text (its section-tag lines joined, see
// join_section_tag_lines) parsed for rendering.
struct ParsedTemplate {
  explicit ParsedTemplate(const std::string& text) : tmpl(join_section_tag_lines(text)) {
    // Sources are not HTML: print values as they are.
    tmpl.set_custom_escape([](const std::string& s) { return s; });
  }
  ms::mustache tmpl;
};

namespace {

// Renders `file` of `t` (`template_text`: its expanded text) with `data`.
std::string render_strict(const Templates& t, const std::string& file, const std::string& template_text,
                          const ms::data& data) {
  const std::string template_path = t.dir + "/" + file;
  const std::vector<std::string>& origins = t.line_origins.at(file);
  // A copy: rendering goes through the parse's non-const members, and the
  // tuner renders from several threads at once.
  ms::mustache tmpl = t.parsed.at(file)->tmpl;
  if (!tmpl.is_valid()) throw TemplateError(template_path + ": " + tmpl.error_message());
  StrictContext context(&data);
  std::string text = tmpl.render(context);
  text.erase(std::remove(text.begin(), text.end(), kBlankLine), text.end());
  if (!tmpl.is_valid()) throw TemplateError(template_path + ": " + tmpl.error_message());
  if (!context.missing().empty()) {
    std::string message;
    for (const std::string& name : context.missing()) {
      const int line = line_of_tag(template_text, name);
      const std::string where = line > 0 && line <= static_cast<int>(origins.size()) ? origins[line - 1]
                                                                                     : template_path + ":0";
      message += where + ": error: undefined placeholder '" + name + "'\n";
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


std::string epilogue_description(const Workload& wl) {
  std::string affine = row(wl.epilogue).affine;
  // The residual has the output's layout.
  if (wl.residual) affine += wl.layout == Layout::kNHWC ? " + residual[n, oy, ox, co]" : " + residual[n, co, oy, ox]";
  if (affine.empty() && wl.activation == Activation::kNone) return "none";
  if (wl.activation == Activation::kNone) return "conv" + affine;
  const std::string note = wl.activation == Activation::kRelu ? "" : std::string(", ") + row(wl.activation).definition;
  return to_string(wl.activation) + ("(conv" + affine + ")") + note;
}

std::string join_files(const std::vector<std::string>& files) {
  std::string text;
  for (size_t i = 0; i < files.size(); ++i) text += (i ? ", " : "") + files[i];
  return text;
}

std::string lower_case(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// The C++ expression of one grid extent in the host launcher, from `batch`
// (or `count`, the kernel's count, where it counts the same units).
std::string extent_expression(const GridExtent& e, const LaunchDescription& d) {
  const auto num = [](long long v) { return std::to_string(v); };
  if (e.per_image == 0) return num(e.blocks);
  if (e.per_image == 1 && e.per_block == 1 && e.blocks == 1) return "batch";
  std::string units = e.per_image == d.count_per_image && d.count_per_image != 1 ? "count"
                      : e.per_image == 1 ? "static_cast<long long>(batch)"
                                         : "static_cast<long long>(batch) * " + num(e.per_image);
  if (e.per_block != 1) units = "(" + units + " + " + num(e.per_block - 1) + ") / " + num(e.per_block);
  if (e.blocks != 1) units += " * " + num(e.blocks);
  return "static_cast<unsigned>(" + units + ")";
}

// The host launcher's values (partials/launcher.mustache), from the
// algorithm's launch description.
void launch_values(const KernelPlan& p, TemplateValues& v) {
  const LaunchDescription d = p.schedule.algorithm->launch_description(p);
  const std::string per_image = std::to_string(d.count_per_image);
  v["launch_grid"] = extent_expression(d.grid[0], d) + ", " + extent_expression(d.grid[1], d) + ", " +
                     extent_expression(d.grid[2], d);
  v["launch_block"] = std::to_string(d.block[0]) + ", " + std::to_string(d.block[1]) + ", " + std::to_string(d.block[2]);
  // A count of more than one unit per image is computed, and must fit an int.
  v["launch_counts"] = d.count_per_image > 1;
  v["launch_count"] = "static_cast<long long>(batch) * " + per_image;
  v["launch_count_of"] = d.count_of;
  v["launch_count_argument"] = std::string(d.count_per_image == 0   ? ""
                                           : d.count_per_image == 1 ? ", batch"
                                                                    : ", static_cast<int>(count)");
  v["launch_capped_by_residency"] = d.grid_capped_by_residency;
  v["launch_dynamic_shared"] = d.dynamic_shared_bytes > 0;
  v["launch_shared_bytes"] = static_cast<long long>(d.dynamic_shared_bytes);
  // Both keep a per-device fact the first call finds.
  v["launch_uses_atomics"] = d.grid_capped_by_residency || d.dynamic_shared_bytes > 0;
  v["takes_residual"] = p.workload.op->takes_residual;
}

ms::data bool_data(bool value) { return value ? ms::data::type::bool_true : ms::data::type::bool_false; }

// Every value a kernel template may print: the workload's, the schedule's
// knobs, the algorithm's derived numbers and the operator's own.
ms::data kernel_data(const LibraryPlan& lib, const KernelPlan& p, const RenderOptions& options) {
  const Workload& wl = p.workload;
  TemplateValues v;
  v["name"] = p.name;
  v["library"] = lib.name;
  // The spec's file, not the workload's line in it: a line added above the
  // workload must leave this kernel's source, and so its object, unchanged
  // (the registry and `convgen list` give the line).
  v["spec_file"] = wl.where.file;
  v["spec_location"] = wl.where.file + ":" + std::to_string(wl.where.line);  // the registry's, rewritten anyway
  v["batch_note"] = std::string(wl.n == 0 ? "  (N given at launch)"
                                          : "  (N given at launch; the spec declares N = " + std::to_string(wl.n) + ")");
  for (const auto& [key, value] : {std::pair<const char*, int>{"c", wl.c}, {"h", wl.h}, {"w", wl.w}, {"kh", wl.kh},
                                   {"kw", wl.kw}, {"stride_h", wl.stride_h}, {"stride_w", wl.stride_w},
                                   {"dilation_h", wl.dilation_h}, {"dilation_w", wl.dilation_w},
                                   {"pad_top", wl.pad_top}, {"pad_bottom", wl.pad_bottom}, {"pad_left", wl.pad_left},
                                   {"pad_right", wl.pad_right}, {"out_channels", p.out_channels},
                                   {"out_h", p.out_h}, {"out_w", p.out_w}}) {
    v[key] = static_cast<long long>(value);
  }
  v["epilogue_description"] = epilogue_description(wl);
  v["dtype"] = std::string(to_string(wl.dtype));
  // The math the workload allows, where it is not fp32: what the kernel may
  // do (the schedule says what it does: tensor cores, or fp32 FMA).
  v["math_note"] = std::string(wl.math == Math::kTF32     ? ", math tf32 (operands may be rounded to TF32)"
                               : wl.math == Math::k3xTF32 ? ", math 3xtf32 (fp32 accuracy, tensor cores allowed)"
                                                          : "");
  v["layout"] = std::string(to_string(wl.layout));
  v["element_type"] = std::string(row(wl.dtype).cuda_type);
  v["element_header"] = std::string(row(wl.dtype).header);
  v["element_bytes"] = static_cast<long long>(convgen::element_bytes(wl.dtype));
  v["half"] = wl.dtype != DataType::kFloat32;
  v["has_bias"] = wl.epilogue == Epilogue::kBias;
  v["has_scale_shift"] = wl.epilogue == Epilogue::kScaleShift;
  v["activation_enumerator"] = std::string(row(wl.activation).enumerator);
  v["activation_definition"] = std::string(row(wl.activation).definition);
  v["activation_approximate"] =
      wl.dtype != DataType::kFloat32 && approximate_before_half_rounding(wl.activation);
  v["schedule_summary"] = p.schedule.summary();
  v["schedule_origin"] = origin_text(p);
  v["alignment"] = static_cast<long long>(p.alignment);
  v["max_batch"] = static_cast<long long>(p.max_batch);
  v["min_arch"] = static_cast<long long>(p.min_arch);
  v["max_arch"] = static_cast<long long>(p.max_arch);
  v["workspace_fixed"] = p.workspace_fixed;
  v["workspace_per_image"] = p.workspace_per_image;
  v["smem_bytes"] = static_cast<long long>(p.smem_bytes);
  v["block_threads"] = static_cast<long long>(p.block_threads);
  // The knobs, by value name: flags as sections, the others as numbers.
  const Operator& op = *wl.op;
  for (const std::vector<Knob>* knobs : {&p.schedule.algorithm->knobs, &op.common_knobs}) {
    for (const Knob& k : *knobs) {
      for (const std::string& name : k.values) {
        const int value = p.schedule.at(name);
        if (k.kind == Knob::Kind::kBool) {
          v[name] = value != 0;
        } else {
          v[name] = static_cast<long long>(value);
        }
      }
    }
  }
  for (const auto& [key, value] : p.values) v[key] = value;
  op.template_values(p, v);
  launch_values(p, v);
  v["cost_batch"] = static_cast<long long>(p.cost_batch);
  v["bytes_read"] = p.bytes_read;
  v["bytes_written"] = p.bytes_written;
  v["floor_us"] = fixed(p.floor_us, 2);
  v["flops"] = p.flops;
  v["counts_flops"] = p.flops > 0;
  v["compute_floor_us"] = fixed(p.compute_floor_us, 2);
  v["compute_peak"] = p.compute_peak;
  v["copy_bandwidth_tbps"] = fixed(options.copy_bandwidth_tbps, 2);

  ms::data d;
  for (const auto& [key, value] : v) {
    if (const auto* n = std::get_if<long long>(&value)) {
      d.set(key, std::to_string(*n));
    } else if (const auto* b = std::get_if<bool>(&value)) {
      d.set(key, bool_data(*b));
    } else {
      d.set(key, std::get<std::string>(value));
    }
  }
  return d;
}

// The library's header and registry: every operator's call, table and
// kernels (an operator without kernels still answers, with its generic
// kernel).
ms::data library_data(const LibraryPlan& lib, const RenderOptions& options) {
  ms::data d;
  d.set("library", lib.name);
  d.set("spec_files", join_files(lib.spec_files));
  d.set("archs", lib.target.list());
  ms::data operators{ms::data::type::list};
  for (const Operator* op : gen::operators()) {
    const RuntimeApi& api = op->runtime;
    ms::data o;
    o.set("op", op->name);
    o.set("description", api.description);
    o.set("table", api.type_prefix);
    o.set("problem", api.type_prefix + "Problem");
    o.set("args", api.type_prefix + "Args");
    o.set("kernel_info", api.type_prefix + "KernelInfo");
    o.set("kernels_function", lower_case(api.type_prefix) + "_kernels");
    // Aligns the header's continuation line under the first parameter.
    o.set("function_indent", std::string(op->name.size() + 8, ' '));
    ms::data kernels{ms::data::type::list};
    size_t count = 0;
    for (const KernelPlan& plan : lib.kernels) {
      if (plan.workload.op != op) continue;
      kernels.push_back(kernel_data(lib, plan, options));
      ++count;
    }
    o.set("kernels", kernels);
    o.set("kernel_count", std::to_string(count));
    o.set("has_kernels", bool_data(count > 0));
    o.set("entries", count > 0 ? "k" + api.type_prefix + "Entries" : std::string("nullptr"));
    operators.push_back(o);
  }
  d.set("operators", operators);
  return d;
}

}  // namespace

Templates Templates::load(const std::string& dir) {
  Templates t;
  t.dir = dir;
  const auto load_one = [&](const std::string& file) {
    ExpandedTemplate e;
    expand_partials(dir, dir + "/" + file, read_file(dir + "/" + file), 0, e);
    t.line_origins[file] = std::move(e.origins);
    t.parsed[file] = std::make_shared<const ParsedTemplate>(e.text);
    return std::move(e.text);
  };
  for (const Operator* op : operators()) {
    for (const Algorithm* a : op->algorithms) {
      if (!t.kernels.count(a->template_file)) t.kernels[a->template_file] = load_one(a->template_file);
    }
  }
  t.registry = load_one("registry.cu.mustache");
  t.header = load_one("library.h.mustache");
  t.compile_unit = load_one("compile_unit.cu.mustache");
  return t;
}

namespace {

// The schedule that the kernels of a compile unit share: the kernel's, its
// per-kernel knobs at their defaults.
Schedule unit_schedule(const Schedule& s) {
  Schedule shared = s;
  for (const Knob& k : s.algorithm->knobs) {
    if (!k.per_kernel) continue;
    for (const std::string& value : k.values) shared.values[value] = k.default_value;
  }
  return shared;
}

}  // namespace

std::vector<CompileUnit> compile_units(const LibraryPlan& lib) {
  // The kernels of each (algorithm, data type, math, schedule but for its
  // per-kernel knobs), in order of first appearance; a group of one stays a
  // kernel file of its own.
  std::vector<std::vector<size_t>> groups;
  std::map<std::tuple<const Algorithm*, DataType, Math, std::map<std::string, int>>, size_t> group_of;
  for (size_t i = 0; i < lib.kernels.size(); ++i) {
    const KernelPlan& plan = lib.kernels[i];
    if (!plan.schedule.algorithm->shares_compile_units) continue;
    const auto key = std::make_tuple(plan.schedule.algorithm, plan.workload.dtype, plan.workload.math,
                                     unit_schedule(plan.schedule).values);
    const auto [it, added] = group_of.emplace(key, groups.size());
    if (added) groups.emplace_back();
    groups[it->second].push_back(i);
  }
  std::vector<CompileUnit> units;
  for (const std::vector<size_t>& group : groups) {
    if (group.size() < 2) continue;
    // As many units as the cap asks for, their sizes within one of each other.
    const size_t count = (group.size() + kCompileUnitKernels - 1) / kCompileUnitKernels;
    for (size_t u = 0; u < count; ++u) {
      CompileUnit unit;
      unit.file = lib.name + "_unit_" + std::to_string(units.size() + 1) + ".cu";
      for (size_t k = group.size() * u / count; k < group.size() * (u + 1) / count; ++k) {
        unit.kernels.push_back(group[k]);
      }
      units.push_back(std::move(unit));
    }
  }
  return units;
}

namespace {

// output_names, for the units compile_units(lib) gives.
std::vector<std::string> output_names(const LibraryPlan& lib, const std::vector<CompileUnit>& units) {
  std::vector<bool> in_unit(lib.kernels.size(), false);
  for (const CompileUnit& unit : units) {
    for (size_t k : unit.kernels) in_unit[k] = true;
  }
  std::vector<std::string> names = {lib.name + ".h", lib.name + "_registry.cu"};
  for (size_t k = 0; k < lib.kernels.size(); ++k) names.push_back(lib.kernels[k].name + (in_unit[k] ? ".cuh" : ".cu"));
  for (const CompileUnit& unit : units) names.push_back(unit.file);
  return names;
}

}  // namespace

std::vector<std::string> output_names(const LibraryPlan& lib) { return output_names(lib, compile_units(lib)); }

std::string render_kernel(const Templates& t, const LibraryPlan& lib, const KernelPlan& plan,
                          const RenderOptions& options) {
  const std::string& file = plan.schedule.algorithm->template_file;
  return render_strict(t, file, t.kernels.at(file), kernel_data(lib, plan, options));
}

std::vector<OutputFile> render_library(const Templates& t, const LibraryPlan& lib, const RenderOptions& options) {
  const std::vector<CompileUnit> units = compile_units(lib);
  const std::vector<std::string> names = output_names(lib, units);
  const ms::data data = library_data(lib, options);
  std::vector<OutputFile> files;
  for (const auto& [text, file] : {std::pair<const std::string&, const char*>{t.header, "library.h.mustache"},
                                   {t.registry, "registry.cu.mustache"}}) {
    files.push_back({names[files.size()], render_strict(t, file, text, data)});
  }
  for (size_t i = 0; i < lib.kernels.size(); ++i) {
    files.push_back({names[i + 2], render_kernel(t, lib, lib.kernels[i], options)});
  }
  for (const CompileUnit& unit : units) {
    const KernelPlan& first = lib.kernels[unit.kernels.front()];
    ms::data d;
    d.set("library", lib.name);
    d.set("count", std::to_string(unit.kernels.size()));
    d.set("schedule_summary", unit_schedule(first.schedule).summary());
    d.set("dtype", std::string(to_string(first.workload.dtype)));
    ms::data kernels{ms::data::type::list};
    for (size_t k : unit.kernels) {
      ms::data kernel;
      kernel.set("file", names[k + 2]);
      kernels.push_back(kernel);
    }
    d.set("kernels", kernels);
    files.push_back({unit.file, render_strict(t, "compile_unit.cu.mustache", t.compile_unit, d)});
  }
  return files;
}

}  // namespace convgen::gen
