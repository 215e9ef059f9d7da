#include "convgen/gen/listing.hpp"

#include "convgen/limits.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <functional>
#include <utility>
#include <vector>

namespace convgen::gen {

namespace {

// printf into a string.
std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  va_list again;
  va_copy(again, args);
  const int size = std::vsnprintf(nullptr, 0, fmt, args);
  va_end(args);
  std::string text(static_cast<size_t>(std::max(size, 0)) + 1, '\0');
  std::vsnprintf(text.data(), text.size(), fmt, again);
  va_end(again);
  text.pop_back();
  return text;
}

// "spec", "default", "tuned" or "unverified".
const char* origin_word(ScheduleOrigin o) {
  switch (o) {
    case ScheduleOrigin::kSpec:
      return "spec";
    case ScheduleOrigin::kTuned:
      return "tuned";
    case ScheduleOrigin::kUnverified:
      return "unverified";
    case ScheduleOrigin::kDefault:
      break;
  }
  return "default";
}

double tuned_speedup(const KernelPlan& p) { return p.tuned_us > 0 ? p.default_us / p.tuned_us : 0.0; }

// The origin column of the table: "spec", "default", "tuned 1.23x" or
// "unverified" (no times: nothing measured an edited entry).
std::string origin_cell(const KernelPlan& p) {
  if (p.origin != ScheduleOrigin::kTuned) return origin_word(p.origin);
  return format("tuned %.2fx", tuned_speedup(p));
}

// The workload keys of any operator that have a value to list, each once,
// in the order of operators() and their declarations.
std::vector<const WorkloadKey*> listed_operator_keys() {
  std::vector<const WorkloadKey*> keys;
  for (const Operator* op : operators()) {
    for (const WorkloadKey& k : op->workload_keys) {
      const bool seen = std::any_of(keys.begin(), keys.end(), [&](const WorkloadKey* s) { return s->key == k.key; });
      if (k.get != nullptr && !seen) keys.push_back(&k);
    }
  }
  return keys;
}

// ---------------------------------------------------------------------------
// JSON.

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
  j["min_arch"] = p.min_arch;
  j["max_arch"] = p.max_arch;
  // The workspace a call needs: workspace_fixed + workspace_per_image x batch bytes.
  j["workspace_fixed"] = p.workspace_fixed;
  j["workspace_per_image"] = p.workspace_per_image;
  for (const Knob& k : s.algorithm->op->common_knobs) j[k.key] = knob_json(k, s);
  // The numbers the algorithm derives (group_lanes, tiles_y, ...).
  for (const auto& [name, value] : p.values) {
    if (const auto* n = std::get_if<long long>(&value)) j[name] = *n;
  }
  return j;
}

nlohmann::json kernel_json(const KernelPlan& p) {
  nlohmann::json origin{{"source", origin_word(p.origin)}};
  if (p.origin == ScheduleOrigin::kUnverified) origin["gpu"] = p.tuned_gpu;
  if (p.origin == ScheduleOrigin::kTuned) {
    origin["gpu"] = p.tuned_gpu;
    origin["tuned_us"] = p.tuned_us;
    origin["default_us"] = p.default_us;
    origin["speedup"] = tuned_speedup(p);
  }
  const Workload& wl = p.workload;
  nlohmann::json j = {
      {"name", p.name},
      {"spec", wl.where.file + ":" + std::to_string(wl.where.line)},
      {"n", wl.n == 0 ? nlohmann::json("runtime") : nlohmann::json(wl.n)},
      {"c", wl.c}, {"h", wl.h}, {"w", wl.w}, {"kh", wl.kh}, {"kw", wl.kw},
      {"stride", {wl.stride_h, wl.stride_w}},
      {"padding", {wl.pad_top, wl.pad_bottom, wl.pad_left, wl.pad_right}},
      {"dilation", {wl.dilation_h, wl.dilation_w}},
      {"op", wl.op->name},
      {"epilogue", to_string(wl.epilogue)},
      {"activation", to_string(wl.activation)},
      {"dtype", to_string(wl.dtype)},
      {"math", to_string(wl.math)},
      {"layout", to_string(wl.layout)},
      {"out_h", p.out_h}, {"out_w", p.out_w},
      {"schedule", schedule_json(p)},
      {"origin", origin},
      {"bytes_read", p.bytes_read},
      {"bytes_written", p.bytes_written},
      {"floor_us", p.floor_us},
      {"flops", p.flops},
      {"compute_floor_us", p.compute_floor_us},
  };
  for (const WorkloadKey* k : listed_operator_keys()) {
    j[k->key] = k->is_flag ? nlohmann::json(k->get(wl) != 0) : nlohmann::json(k->get(wl));
  }
  return j;
}

// ---------------------------------------------------------------------------
// CSV.

// The workload's columns under each shared spec key; an operator's own key
// goes after the shared key it names (WorkloadKey::after).
struct WorkloadColumns {
  std::string key, header;
  std::function<std::string(const Workload&)> cells;
};

std::string pair_cells(int a, int b) { return std::to_string(a) + "," + std::to_string(b); }

const std::vector<WorkloadColumns>& workload_columns() {
  static const std::vector<WorkloadColumns> columns = {
      {"n", "n", [](const Workload& wl) { return wl.n == 0 ? std::string("runtime") : std::to_string(wl.n); }},
      {"c", "c", [](const Workload& wl) { return std::to_string(wl.c); }},
      {"h", "h", [](const Workload& wl) { return std::to_string(wl.h); }},
      {"w", "w", [](const Workload& wl) { return std::to_string(wl.w); }},
      {"filter", "kh,kw", [](const Workload& wl) { return pair_cells(wl.kh, wl.kw); }},
      {"stride", "stride_h,stride_w", [](const Workload& wl) { return pair_cells(wl.stride_h, wl.stride_w); }},
      {"padding", "padding",
       [](const Workload& wl) {
         return "\"" + std::to_string(wl.pad_top) + "," + std::to_string(wl.pad_bottom) + "," +
                std::to_string(wl.pad_left) + "," + std::to_string(wl.pad_right) + "\"";
       }},
      {"dilation", "dilation_h,dilation_w",
       [](const Workload& wl) { return pair_cells(wl.dilation_h, wl.dilation_w); }},
      {"epilogue", "epilogue", [](const Workload& wl) { return std::string(to_string(wl.epilogue)); }},
      {"activation", "activation", [](const Workload& wl) { return std::string(to_string(wl.activation)); }},
      {"dtype", "dtype", [](const Workload& wl) { return std::string(to_string(wl.dtype)); }},
      {"math", "math", [](const Workload& wl) { return std::string(to_string(wl.math)); }},
      {"layout", "layout", [](const Workload& wl) { return std::string(to_string(wl.layout)); }},
  };
  return columns;
}

// The workload's header cells, or one kernel's cells: the shared columns
// with every operator's own keys in their places.
std::string workload_cells(const Workload* wl) {
  const std::vector<const WorkloadKey*> own = listed_operator_keys();
  std::string cells;
  for (const WorkloadColumns& column : workload_columns()) {
    cells += "," + (wl != nullptr ? column.cells(*wl) : column.header);
    for (const WorkloadKey* k : own) {
      if (k->after == column.key) cells += "," + (wl != nullptr ? std::to_string(k->get(*wl)) : k->key);
    }
  }
  return cells;
}

// Every knob value of every algorithm, by value name in the registry's order,
// so that one CSV holds kernels of any operator and algorithm; the common
// knobs of each operator come after the per-algorithm columns.
std::vector<std::pair<const Knob*, std::string>> knob_columns(bool common) {
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
std::string knob_cells(const std::vector<std::pair<const Knob*, std::string>>& columns, const Schedule& s) {
  std::string cells;
  for (const auto& [knob, name] : columns) {
    const auto it = s.values.find(name);
    cells += ",";
    if (it == s.values.end()) continue;
    cells += knob->kind == Knob::Kind::kChoice ? knob->word(it->second) : std::to_string(it->second);
  }
  return cells;
}

std::string knob_header(const std::vector<std::pair<const Knob*, std::string>>& columns) {
  std::string header;
  for (const auto& column : columns) header += "," + column.second;
  return header;
}

// ---------------------------------------------------------------------------
// Knobs.

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

nlohmann::json knob_doc(const Knob& k) {
  return nlohmann::json{{"key", k.key}, {"values", k.values}, {"allowed", knob_values(k)},
                        {"domain_size", k.domain().size()}, {"meaning", k.meaning}};
}

// ---------------------------------------------------------------------------
// The reference of every spec key.

// A markdown table; '|' inside a cell is escaped.
std::string markdown_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  const auto line = [](const std::vector<std::string>& cells) {
    std::string text = "|";
    for (const std::string& cell : cells) {
      std::string escaped;
      for (char ch : cell) escaped += ch == '|' ? std::string("\\|") : std::string(1, ch);
      text += " " + escaped + " |";
    }
    return text + "\n";
  };
  std::string t = line(header) + "|";
  for (size_t i = 0; i < header.size(); ++i) t += "---|";
  t += "\n";
  for (const auto& row : rows) t += line(row);
  return t;
}

std::string code(const std::string& key) { return "`" + key + "`"; }
const char* yes_no(bool b) { return b ? "yes" : "no"; }
constexpr const char* kNoDefault = "(none)";
constexpr const char* kDefaultRule = "the default rule";
constexpr const char* kEveryAlgorithm = "every algorithm";

// The values an operator's own key takes: its range less the values it
// refuses (conv2d's groups: 1), as runs "a..b" or single values.
std::vector<int> accepted_values(const WorkloadKey& k) {
  std::vector<int> values;
  for (int v = k.lo; v <= k.hi; ++v) {
    if (k.refuse == nullptr || k.refuse(v).empty()) values.push_back(v);
  }
  return values;
}

std::string runs(const std::vector<int>& values) {
  std::string text;
  for (size_t i = 0; i < values.size();) {
    size_t j = i;
    while (j + 1 < values.size() && values[j + 1] == values[j] + 1) ++j;
    text += (text.empty() ? "" : ", ") + std::to_string(values[i]) +
            (j > i ? ".." + std::to_string(values[j]) : std::string());
    i = j + 1;
  }
  return text;
}

// An operator's own key's default: the Workload's field as a default
// Workload holds it, or the one value a key that is only checked accepts.
std::string workload_key_default(const WorkloadKey& k) {
  if (k.required) return kNoDefault;
  if (k.get != nullptr) {
    const int v = k.get(Workload{});
    return k.is_flag ? (v != 0 ? "true" : "false") : std::to_string(v);
  }
  const std::vector<int> values = accepted_values(k);
  return values.size() == 1 ? std::to_string(values.front()) : kNoDefault;
}

std::vector<std::string> spec_key_row(const SpecKey& k, std::vector<std::string> between) {
  std::vector<std::string> row = {code(k.key)};
  row.insert(row.end(), between.begin(), between.end());
  row.insert(row.end(), {k.type, k.values, k.default_value.empty() ? kNoDefault : k.default_value,
                         yes_no(k.required), k.meaning});
  return row;
}

std::string knob_type(const Knob& k) {
  switch (k.kind) {
    case Knob::Kind::kBool: return "boolean";
    case Knob::Kind::kChoice: return "word";
    case Knob::Kind::kInt: break;
  }
  // A list knob also takes one integer for every position (the reader's rule).
  return k.values.size() > 1 ? "integer, or " + std::to_string(k.values.size()) + " integers" : "integer";
}

std::vector<std::string> knob_row(const Operator& op, const std::string& read_by, const Knob& k,
                                  const std::string& default_value) {
  return {code(k.key), op.name, read_by, knob_type(k), knob_values(k), default_value, yes_no(false), k.meaning};
}

}  // namespace

std::string keys_markdown() {
  std::string t = "### Top level\n\n";
  std::vector<std::vector<std::string>> rows;
  for (const SpecKey& k : top_level_keys()) rows.push_back(spec_key_row(k, {}));
  t += markdown_table({"key", "type", "values", "default", "required", "meaning"}, rows);

  // Each shared key, then the operators' own keys that follow it.
  t += "\n### A workload (and `defaults`)\n\n";
  rows.clear();
  for (const SpecKey& shared : shared_workload_keys()) {
    rows.push_back(spec_key_row(shared, {"every operator", kEveryAlgorithm}));
    for (const Operator* op : operators()) {
      for (const WorkloadKey& k : op->workload_keys) {
        if (k.after != shared.key) continue;
        rows.push_back({code(k.key), op->name, kEveryAlgorithm, k.is_flag ? "boolean" : "integer",
                        k.is_flag ? "true | false" : runs(accepted_values(k)), workload_key_default(k),
                        yes_no(k.required), k.meaning});
      }
    }
  }
  t += markdown_table({"key", "operator", "read by", "type", "values", "default", "required", "meaning"}, rows);

  t += "\n### A workload's `schedule`\n\n";
  rows.clear();
  for (const Operator* op : operators()) {
    std::string names;
    for (const Algorithm* a : op->algorithms) names += (names.empty() ? "" : " | ") + a->name;
    rows.push_back({code("algorithm"), op->name, kEveryAlgorithm, "word", names, kDefaultRule, yes_no(false),
                    "the algorithm; a schedule that sets knobs without it gets the one that has them all"});
    for (const Knob& k : op->common_knobs) rows.push_back(knob_row(*op, kEveryAlgorithm, k, k.word(k.default_value)));
    for (const Algorithm* a : op->algorithms) {
      for (const Knob& k : a->knobs) rows.push_back(knob_row(*op, a->name, k, kDefaultRule));
    }
  }
  t += markdown_table({"key", "operator", "read by", "type", "values", "default", "required", "meaning"}, rows);
  return t;
}

namespace {

// The library's GPUs that do not run a kernel (min_arch and max_arch): there
// the runtime gives its calls to the generic kernel.
std::vector<int> gpus_without(const LibraryPlan& lib, const KernelPlan& p) {
  std::vector<int> without;
  for (const ArchFacts& f : lib.target.facts) {
    if (f.sm < p.min_arch || (p.max_arch != 0 && f.sm > p.max_arch)) without.push_back(f.sm);
  }
  return without;
}

// Every fallback visible: the kernels that some GPUs of the library leave to
// the generic kernel, grouped by those GPUs (named where a group is small).
std::string generic_kernel_lines(const LibraryPlan& lib) {
  constexpr size_t kNamed = 3;
  std::vector<std::pair<std::vector<int>, std::vector<const KernelPlan*>>> groups;
  for (const KernelPlan& p : lib.kernels) {
    const std::vector<int> without = gpus_without(lib, p);
    if (without.empty()) continue;
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) {
      return g.first == without && g.second.front()->gpus_it_runs_on() == p.gpus_it_runs_on();
    });
    if (it == groups.end()) it = groups.insert(groups.end(), {without, {}});
    it->second.push_back(&p);
  }
  std::string t;
  for (const auto& [without, kernels] : groups) {
    std::string gpus;
    for (int sm : without) gpus += (gpus.empty() ? "sm_" : ", sm_") + std::to_string(sm);
    t += format("\n%zu kernel(s) run on %s: on %s their calls run the generic kernel%s", kernels.size(),
                kernels.front()->gpus_it_runs_on().c_str(), gpus.c_str(), kernels.size() <= kNamed ? ":" : "");
    if (kernels.size() <= kNamed) {
      for (const KernelPlan* p : kernels) t += "\n  " + p->name;
    }
    t += "\n";
  }
  return t;
}

}  // namespace

std::string kernels_table(const LibraryPlan& lib) {
  std::string t = format("library %s: %zu kernels from %zu spec file(s)\n\n", lib.name.c_str(), lib.kernels.size(),
                         lib.spec_files.size());
  // The floor: the longer of moving the bytes at the copy bandwidth and
  // doing the arithmetic at the fp32 peak.
  // The origin: where the schedule came from (the spec, a tuning database's
  // entry, with its speedup over the default rule, or the default rule).
  std::string tuned_on;
  size_t unverified = 0;
  for (const KernelPlan& p : lib.kernels) {
    if (p.origin == ScheduleOrigin::kTuned) tuned_on = p.tuned_gpu;
    if (p.origin == ScheduleOrigin::kUnverified) ++unverified;
  }
  if (!tuned_on.empty()) t += format("tuned schedules: measured on %s\n\n", tuned_on.c_str());
  if (unverified > 0) {
    t += format("UNVERIFIED schedules: %zu, from tuning entries changed after convgen wrote them "
                "(--allow-unverified-tuning); no measurement vouches for them\n\n",
                unverified);
  }
  t += format("%-58s %9s  %-74s  %-11s  %s\n", "kernel", "floor_us", "schedule", "origin", "spec");
  for (const KernelPlan& p : lib.kernels) {
    t += format("%-58s %9.2f  %-74s  %-11s  %s:%d\n", p.name.c_str(), std::max(p.floor_us, p.compute_floor_us),
                p.schedule.summary().c_str(), origin_cell(p).c_str(), p.workload.where.file.c_str(),
                p.workload.where.line);
  }
  return t + generic_kernel_lines(lib);
}

std::string kernels_csv(const LibraryPlan& lib) {
  // One row per kernel; the knobs of the other algorithms are empty.
  const auto knobs = knob_columns(false);
  const auto common = knob_columns(true);
  std::string t = "name,op,spec" + workload_cells(nullptr) + ",algorithm" + knob_header(knobs) +
                  ",smem_bytes,alignment,max_batch" + knob_header(common) +
                  ",bytes_read,bytes_written,floor_us,flops,compute_floor_us,origin,tuned_gpu,tuned_speedup\n";
  for (const KernelPlan& p : lib.kernels) {
    const Workload& wl = p.workload;
    const Schedule& s = p.schedule;
    t += format("%s,%s,%s:%d", p.name.c_str(), wl.op->name.c_str(), wl.where.file.c_str(), wl.where.line) +
         workload_cells(&wl) + "," + s.algorithm_name() + knob_cells(knobs, s) +
         format(",%d,%d,%d", p.smem_bytes, p.alignment, p.max_batch) + knob_cells(common, s) +
         format(",%lld,%lld,%.3f,%lld,%.3f,%s,\"%s\",", p.bytes_read, p.bytes_written, p.floor_us, p.flops,
                p.compute_floor_us, origin_word(p.origin), p.tuned_gpu.c_str()) +
         // Empty where no measurement stands behind a speedup (as JSON leaves it out).
         (p.origin == ScheduleOrigin::kTuned ? format("%.3f", tuned_speedup(p)) : std::string()) + "\n";
  }
  return t;
}

std::string kernels_json(const LibraryPlan& lib) {
  nlohmann::json doc{{"library", lib.name}, {"specs", lib.spec_files}, {"kernels", nlohmann::json::array()}};
  for (const KernelPlan& p : lib.kernels) doc["kernels"].push_back(kernel_json(p));
  return doc.dump(2) + "\n";
}

std::string knobs_table() {
  std::string t;
  for (const Operator* op : operators()) {
    t += format("op: %s\n", op->name.c_str());
    for (const Knob& k : op->common_knobs) {
      t += format("  (every algorithm) %-18s %-44s %s\n", k.key.c_str(), knob_values(k).c_str(), k.meaning.c_str());
    }
    for (const Algorithm* a : op->algorithms) {
      t += format("  algorithm: %s\n", a->name.c_str());
      for (const Knob& k : a->knobs) {
        t += format("    %-20s %-44s %s\n", k.key.c_str(), knob_values(k).c_str(), k.meaning.c_str());
      }
    }
  }
  return t;
}

std::string knobs_json() {
  nlohmann::json doc = nlohmann::json::array();
  for (const Operator* op : operators()) {
    nlohmann::json o{{"op", op->name}, {"common_knobs", nlohmann::json::array()}, {"algorithms", nlohmann::json::array()}};
    for (const Knob& k : op->common_knobs) o["common_knobs"].push_back(knob_doc(k));
    for (const Algorithm* a : op->algorithms) {
      nlohmann::json aj{{"algorithm", a->name}, {"template", a->template_file}, {"knobs", nlohmann::json::array()}};
      for (const Knob& k : a->knobs) aj["knobs"].push_back(knob_doc(k));
      o["algorithms"].push_back(aj);
    }
    doc.push_back(o);
  }
  return doc.dump(2) + "\n";
}

namespace {
std::string cuda_range(const ArchFacts& f) {
  const auto text = [](int v) { return format("%d.%d", v / 10, v % 10); };
  return f.last_cuda > 0 ? text(f.first_cuda) + "-" + text(f.last_cuda) : text(f.first_cuda) + "+";
}
}  // namespace

std::string archs_table() {
  std::string t = format("%-6s %-10s %-16s %4s %12s %10s %11s %10s %8s %-9s %s\n", "arch", "family", "GPU", "SMs",
                         "shared/block", "shared/SM", "threads/SM", "blocks/SM", "cp.async", "CUDA", "tensor cores");
  for (const ArchFacts& f : arch_table()) {
    t += format("sm_%-3d %-10s %-16s %4d %9d KiB %6d KiB %11d %10d %8s %-9s %s\n", f.sm, f.family, f.example_gpu,
                f.sm_count, f.shared_per_block / 1024, f.shared_per_sm / 1024, f.threads_per_sm, f.blocks_per_sm,
                f.cp_async ? "yes" : "no", cuda_range(f).c_str(), f.tensor_cores);
  }
  t += format("\nA library's schedules fit the tightest GPU of its list; the default rule sizes for the newest.\n"
              "Oldest: sm_%d. Default list (no ARCHS, no CMAKE_CUDA_ARCHITECTURES, no GPU to detect): %s\n",
              min_arch(), default_archs());
  return t;
}

std::string archs_json() {
  nlohmann::json archs = nlohmann::json::array();
  for (const ArchFacts& f : arch_table()) {
    archs.push_back({{"sm", f.sm},
                     {"family", f.family},
                     {"example_gpu", f.example_gpu},
                     {"sm_count", f.sm_count},
                     {"shared_per_block", f.shared_per_block},
                     {"shared_per_sm", f.shared_per_sm},
                     {"shared_reserved_per_block", f.shared_reserved},
                     {"registers_per_sm", f.registers_per_sm},
                     {"threads_per_sm", f.threads_per_sm},
                     {"blocks_per_sm", f.blocks_per_sm},
                     {"cp_async", f.cp_async},
                     {"tensor_cores", f.tensor_cores},
                     {"cuda", cuda_range(f)}});
  }
  const nlohmann::json doc{{"min_arch", min_arch()}, {"default_archs", default_archs()}, {"archs", archs}};
  return doc.dump(2) + "\n";
}

namespace {

// 16777216 as "2^24 (16,777,216)", 524280 as "524,280".
std::string limit_text(long long v) {
  std::string digits = std::to_string(v);
  for (int at = static_cast<int>(digits.size()) - 3; at > 0; at -= 3) digits.insert(static_cast<size_t>(at), ",");
  if (v >= 1024 && (v & (v - 1)) == 0) {
    int power = 0;
    while ((1LL << power) != v) ++power;
    return "2^" + std::to_string(power) + " (" + digits + ")";
  }
  return digits;
}

}  // namespace

std::string limits_markdown() {
  std::vector<std::vector<std::string>> rows;
  for (const SizeLimit* l : kSizeLimits) {
    rows.push_back({l->quantity, limit_text(l->generic), l->why_generic, limit_text(l->generated), l->why_generated});
  }
  return markdown_table({"size", "validate() and the generic kernels", "why", "a spec (the generated kernels)", "why"},
                        rows);
}

}  // namespace convgen::gen
