// Spec parsing and validation: YAML text -> Spec, or a SpecError that lists
// every mistake with its file:line:col, what is wrong and what is allowed.
#include "convgen/gen/spec.hpp"

#include "convgen/gen/operator.hpp"
#include "convgen/gen/tuning.hpp"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

namespace convgen::gen {

std::string SourceLocation::str() const {
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

std::string Diagnostic::str() const {
  // A file-level problem (one that cannot be opened) has no line.
  const std::string at = where.line > 0 ? where.str() : where.file;
  return at + ": error: " + message;
}

namespace {
std::string join_diagnostics(const std::vector<Diagnostic>& diagnostics) {
  std::string text;
  for (const auto& d : diagnostics) text += d.str() + "\n";
  return text;
}
}  // namespace

SpecError::SpecError(std::vector<Diagnostic> diagnostics)
    : std::runtime_error(join_diagnostics(diagnostics)), diagnostics_(std::move(diagnostics)) {}

bool is_c_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; });
}

namespace {

// Limits of what the generated kernels support. Each is stated in the error
// a user sees when a spec goes past it.
constexpr int kMaxChannels = 65535;  // one grid.y slot per input channel
constexpr int kMaxExtent = 32768;
constexpr int kMaxFilter = 11;
constexpr int kMaxStride = 8;
constexpr int kMaxDilation = 8;
constexpr int kMaxMultiplier = 8;
constexpr long long kMaxPlane = 1LL << 28;  // elements of one channel plane, 32-bit indexing inside a kernel
constexpr long long kMaxTensor = kMaxTensorElements;  // the runtime refuses larger ones
// Limits on the spec file itself, so that no input (a generated file gone
// wrong, or a hostile one) can make convgen use unbounded time or memory:
// a spec is a short list a person writes.
// yaml-cpp keeps up to ~250 bytes per byte of input (a flow list of 0s), so
// 1 MiB (some 10,000 workloads) bounds memory to ~250 MB and time to ~0.5 s.
constexpr std::uintmax_t kMaxSpecBytes = 1u << 20;
constexpr size_t kMaxLibraryName = 64;  // a C identifier that names files and a namespace
constexpr size_t kMaxErrors = 100;      // diagnostics reported before reading stops
constexpr size_t kMaxShownText = 40;    // characters of a value echoed in a message

const std::vector<std::string> kTopKeys = {"library", "defaults", "workloads"};
// A tuning database: its keys, and one entry's.
const std::vector<std::string> kTuningTopKeys = {"convgen_tuning", "entries"};
const std::vector<std::string> kTuningEntryKeys = {
    "kernel", "op", "gpu", "sms", "compute_capability", "schedule", "objective", "time_us", "default_us",
    "default_schedule", "candidates", "tuning_s", "date", "fingerprint"};
const std::vector<std::string> kTuningCandidateKeys = {"compiled", "verified", "rejected", "failed"};
const std::vector<std::string> kObjectives = {"hot", "cold"};
constexpr int kTuningFormat = 1;
// A database holds an entry (~700 bytes) per kernel and GPU: 1 MiB is some
// 1,500 of them, and bounds yaml-cpp's memory as kMaxSpecBytes does a spec's.
constexpr std::uintmax_t kMaxTuningBytes = 1u << 20;
// The words a workload's keys take.
const std::vector<std::string> kDtypes = {"float32"};
const std::vector<std::string> kLayouts = {"NCHW"};
const std::vector<std::string> kEpilogues = [] {
  std::vector<std::string> words;
  for (const EpilogueRow& r : kEpilogueTable) words.push_back(r.word);
  return words;
}();
const std::vector<std::string> kActivations = [] {
  std::vector<std::string> words;
  for (const ActivationRow& r : kActivationTable) words.push_back(r.word);
  return words;
}();
constexpr const char* kSamePadding = "same";
constexpr const char* kValidPadding = "valid";
const std::vector<std::string> kPaddingWords = {kSamePadding, kValidPadding};
constexpr const char* kRuntimeBatch = "runtime";
constexpr int kMaxPadding = 64;
// Keys any operator's workload may set, for messages about `defaults`.
const std::vector<std::string>& all_workload_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> all;
    for (const Operator* op : operators()) {
      for (const std::string& key : op->workload_keys) {
        if (std::find(all.begin(), all.end(), key) == all.end()) all.push_back(key);
      }
    }
    return all;
  }();
  return keys;
}

// The keys a schedule of the operator may set: `algorithm`, the knobs of
// every algorithm, and those of all its algorithms (each key once: a key
// may belong to several algorithms).
std::vector<std::string> schedule_keys(const Operator& op) {
  std::vector<std::string> keys = {"algorithm"};
  const auto add = [&keys](const std::string& key) {
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
  };
  for (const Knob& k : op.common_knobs) add(k.key);
  for (const Algorithm* a : op.algorithms) {
    for (const Knob& k : a->knobs) add(k.key);
  }
  return keys;
}

// The knob a schedule key names, in any algorithm of the operator; null if none.
const Knob* find_knob(const Operator& op, const std::string& key) {
  for (const Knob& k : op.common_knobs) {
    if (k.key == key) return &k;
  }
  for (const Algorithm* a : op.algorithms) {
    if (const Knob* k = op.knob(*a, key)) return k;
  }
  return nullptr;
}

std::string join(const std::vector<std::string>& items) {
  std::string text;
  for (size_t i = 0; i < items.size(); ++i) text += (i ? ", " : "") + items[i];
  return text;
}

// "a, b or c"
std::string join_or(const std::vector<std::string>& items) {
  std::string text;
  for (size_t i = 0; i < items.size(); ++i) text += (i == 0 ? "" : i + 1 == items.size() ? " or " : ", ") + items[i];
  return text;
}

// A value as a message shows it: quoted, and cut short when it is long (a
// message must not echo a megabyte of input).
std::string quoted(const std::string& text) {
  if (text.size() <= kMaxShownText) return "'" + text + "'";
  return "'" + text.substr(0, kMaxShownText) + "...' (" + std::to_string(text.size()) + " characters)";
}

// Reads one spec, collecting diagnostics instead of stopping at the first.
class Parser {
 public:
  Parser(std::string file, OnInvalidWorkload on_invalid) : file_(std::move(file)), on_invalid_(on_invalid) {}

  Spec parse(const YAML::Node& root) {
    Spec spec;
    spec.file = file_;
    if (!root.IsMap()) {
      error(root, "a spec must be a mapping with the keys " + join(kTopKeys));
      return spec;
    }
    check_keys(root, kTopKeys, "at the top level of a spec");
    if (const YAML::Node library = root["library"]) {
      spec.library_where = at(library);
      if (!library.IsScalar() || !is_c_identifier(library.Scalar()) || library.Scalar().size() > kMaxLibraryName) {
        error(library, "'library' must be a C identifier (letters, digits, '_'; not starting with a digit) of at most " +
                           std::to_string(kMaxLibraryName) + " characters, got " + quoted(text_of(library)));
      } else {
        spec.library = library.Scalar();
      }
    }
    YAML::Node defaults = root["defaults"];
    if (defaults && !defaults.IsMap()) {
      error(defaults, "'defaults' must be a mapping of workload keys (" + join(all_workload_keys()) + ")");
      defaults = YAML::Node();
    } else if (defaults) {
      check_keys(defaults, all_workload_keys(), "in 'defaults'");
    }
    const YAML::Node workloads = root["workloads"];
    if (!workloads) {
      error(root, "missing key 'workloads': a list of convolution workloads");
      return spec;
    }
    if (!workloads.IsSequence() || workloads.size() == 0) {
      error(workloads, "'workloads' must be a non-empty list of workload mappings");
      return spec;
    }
    for (const YAML::Node& item : workloads) {
      if (stopped_) break;  // too many errors: the rest would take time and say little
      const size_t errors_before = diagnostics_.size();
      if (!item.IsMap()) {
        error(item, "each workload must be a mapping with the keys " + join(all_workload_keys()));
      } else {
        const Operator& op = operator_of(item, defaults);
        check_keys(item, op.workload_keys, "in a workload");
        std::optional<Workload> workload = parse_workload(item, defaults, op);
        if (workload && diagnostics_.size() == errors_before) spec.workloads.push_back(*workload);
      }
      if (on_invalid_ == OnInvalidWorkload::kSkip) {
        // The workload's own errors become the reason it was left out.
        const auto first = diagnostics_.begin() + static_cast<long>(errors_before);
        spec.skipped.insert(spec.skipped.end(), first, diagnostics_.end());
        diagnostics_.erase(first, diagnostics_.end());
      }
    }
    return spec;
  }

  // A tuning database (tuning.hpp): the same checks, messages and limits as a spec.
  TuningDb parse_tuning(const YAML::Node& root) {
    file_is_spec_ = false;
    TuningDb db;
    db.file = file_;
    if (!root.IsMap()) {
      error(root, "a tuning database must be a mapping with the keys " + join(kTuningTopKeys));
      return db;
    }
    check_keys(root, kTuningTopKeys, "at the top level of a tuning database");
    const YAML::Node format = root["convgen_tuning"];
    if (!format) {
      error(root, "missing key 'convgen_tuning': the database format, " + std::to_string(kTuningFormat));
    } else if (!format.IsScalar() || format.Scalar() != std::to_string(kTuningFormat)) {
      error(format, "'convgen_tuning' is the database format, " + std::to_string(kTuningFormat) +
                        " (the only one this convgen reads), got " + quoted(text_of(format)));
      return db;
    }
    const YAML::Node entries = root["entries"];
    if (!entries) {
      error(root, "missing key 'entries': a list of tuned kernels (may be [])");
      return db;
    }
    if (!entries.IsSequence()) {
      error(entries, "'entries' must be a list of tuned kernels, got " + text_of(entries));
      return db;
    }
    for (const YAML::Node& item : entries) {
      if (stopped_) break;
      const size_t errors_before = diagnostics_.size();
      if (!item.IsMap()) {
        error(item, "each entry must be a mapping with the keys " + join(kTuningEntryKeys));
        continue;
      }
      check_keys(item, kTuningEntryKeys, "in a tuning entry");
      TuningEntry e;
      e.where = at(item);
      const auto required = [&](const char* key) {
        const YAML::Node node = item[key];
        if (!node) error(item, std::string("missing key '") + key + "' in a tuning entry");
        return node;
      };
      if (const YAML::Node kernel = required("kernel")) {
        if (kernel.IsScalar() && is_c_identifier(kernel.Scalar()) && kernel.Scalar().size() <= 200) {
          e.kernel = kernel.Scalar();
        } else {
          error(kernel, "'kernel' must be a kernel name (a C identifier, as `convgen list` prints), got " +
                            quoted(text_of(kernel)));
        }
      }
      if (const YAML::Node op = required("op")) {
        std::vector<std::string> names;
        for (const Operator* known : operators()) names.push_back(known->name);
        if (auto v = word(op, "op", names)) e.op = find_operator(*v);
      }
      if (const YAML::Node gpu = required("gpu")) e.gpu.name = text(gpu, "gpu", "the GPU's name").value_or("");
      if (const YAML::Node sms = required("sms")) e.gpu.sms = integer(sms, "sms", 1, 100000).value_or(0);
      if (const YAML::Node cc = required("compute_capability")) {
        const std::string v = text(cc, "compute_capability", "major.minor, e.g. \"9.0\"").value_or("");
        const size_t dot = v.find('.');
        if (!v.empty() && (dot == std::string::npos || dot == 0 || dot + 1 == v.size() ||
                           !std::all_of(v.begin(), v.end(), [](char c) { return std::isdigit(c) || c == '.'; }))) {
          error(cc, "'compute_capability' must be major.minor, e.g. \"9.0\", got " + quoted(v));
        }
        e.gpu.compute_capability = v;
      }
      if (const YAML::Node schedule = required("schedule"); schedule && e.op != nullptr) {
        parse_schedule(schedule, *e.op, e.schedule);
        if (schedule.IsMap() && !schedule["algorithm"]) {
          error(schedule, "a tuned schedule names its 'algorithm'");
        }
      }
      if (const YAML::Node objective = item["objective"]) {
        if (auto v = word(objective, "objective", kObjectives)) e.objective = *v;
      }
      if (const YAML::Node t = required("time_us")) e.time_us = positive(t, "time_us").value_or(0);
      if (const YAML::Node t = required("default_us")) e.default_us = positive(t, "default_us").value_or(0);
      if (const YAML::Node d = item["default_schedule"]) {
        e.default_schedule = text(d, "default_schedule", "the default rule's schedule in words").value_or("");
      }
      if (const YAML::Node c = item["candidates"]) {
        if (!c.IsMap()) {
          error(c, "'candidates' must be a mapping with the keys " + join(kTuningCandidateKeys));
        } else {
          check_keys(c, kTuningCandidateKeys, "in 'candidates'");
          int* counts[] = {&e.compiled, &e.verified, &e.rejected, &e.failed};
          for (size_t i = 0; i < kTuningCandidateKeys.size(); ++i) {
            if (const YAML::Node n = c[kTuningCandidateKeys[i]]) {
              *counts[i] = integer(n, kTuningCandidateKeys[i], 0, 100000000).value_or(0);
            }
          }
        }
      }
      if (const YAML::Node t = item["tuning_s"]) e.tuning_s = positive(t, "tuning_s").value_or(0);
      if (const YAML::Node d = required("date")) {
        const std::string v = text(d, "date", "YYYY-MM-DD").value_or("");
        const bool ok = v.size() == 10 && v[4] == '-' && v[7] == '-' &&
                        std::all_of(v.begin(), v.end(), [](char c) { return std::isdigit(c) || c == '-'; });
        if (!v.empty() && !ok) error(d, "'date' must be YYYY-MM-DD, got " + quoted(v));
        e.date = v;
      }
      if (const YAML::Node f = required("fingerprint")) {
        const std::string v = text(f, "fingerprint", "16 hex digits").value_or("");
        if (!v.empty() && (v.size() != 16 || !std::all_of(v.begin(), v.end(), [](char c) {
                             return std::isdigit(c) || (c >= 'a' && c <= 'f');
                           }))) {
          error(f, "'fingerprint' must be 16 lower-case hex digits (as convgen tune writes it), got " + quoted(v));
        }
        e.fingerprint = v;
      }
      if (diagnostics_.size() != errors_before) continue;
      if (const TuningEntry* first = db.find(e.kernel, e.gpu.name)) {
        error(item, "a second entry for kernel " + e.kernel + " on GPU '" + e.gpu.name + "'; the first is at " +
                        first->where.str() + " (one entry per kernel and GPU)");
        continue;
      }
      db.put(std::move(e));
    }
    return db;
  }

  // Every diagnostic; when reading stopped at kMaxErrors, a last one says so.
  std::vector<Diagnostic>& diagnostics() {
    if (stopped_ && (diagnostics_.empty() || diagnostics_.back().where.line != 0)) {
      diagnostics_.push_back({SourceLocation{file_, 0, 0}, "too many errors: stopped reading after the first " +
                                                            std::to_string(kMaxErrors) + "; fix these and run again"});
    }
    return diagnostics_;
  }

  void error(const YAML::Node& node, std::string message) {
    // With kSkip each workload's diagnostics move to Spec::skipped, so only
    // a failing parse can pile them up.
    if (on_invalid_ == OnInvalidWorkload::kFail && diagnostics_.size() >= kMaxErrors) {
      stopped_ = true;
      return;
    }
    diagnostics_.push_back({at(node), std::move(message)});
  }
  SourceLocation at(const YAML::Node& node) const {
    // yaml-cpp places an empty value at the token after it: point at its key.
    if (node.IsNull()) {
      for (const auto& [value, key_mark] : empty_values_) {
        if (value.is(node)) return {file_, key_mark.line + 1, key_mark.column + 1};
      }
    }
    const YAML::Mark mark = node.Mark();
    if (mark.is_null() || mark.line < 0) return {file_, 1, 1};  // an empty document
    return {file_, mark.line + 1, mark.column + 1};
  }

 private:
  static std::string text_of(const YAML::Node& node) {
    if (node.IsScalar()) return node.Scalar();
    if (node.IsSequence()) return "a list";
    if (node.IsMap()) return "a mapping";
    return "nothing";
  }

  void check_keys(const YAML::Node& map, const std::vector<std::string>& allowed, const std::string& where) {
    std::vector<std::pair<std::string, SourceLocation>> seen;
    for (const auto& entry : map) {
      if (entry.second.IsNull()) empty_values_.emplace_back(entry.second, entry.first.Mark());
      const std::string key = entry.first.Scalar();
      // yaml-cpp keeps both entries of a duplicated key and looks up the first.
      const auto first = std::find_if(seen.begin(), seen.end(), [&](const auto& s) { return s.first == key; });
      if (first != seen.end()) {
        error(entry.first, "duplicate key " + quoted(key) + " " + where + "; it is already set at " + first->second.str());
        continue;
      }
      seen.emplace_back(key, at(entry.first));
      if (key == "<<") {
        // yaml-cpp reads a merge key as an ordinary key.
        error(entry.first, "YAML merge keys ('<<: *anchor') are not supported " + where + "; write the keys out" +
                               (file_is_spec_ ? ", or put the shared ones in 'defaults'" : ""));
      } else if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        error(entry.first, "unknown key " + quoted(key) + " " + where + "; allowed keys: " + join(allowed));
      }
    }
  }

  // The operator a workload names (an unknown name is reported when the
  // workload is parsed; its keys are checked as the first operator's).
  static const Operator& operator_of(const YAML::Node& item, const YAML::Node& defaults) {
    const YAML::Node op = lookup(item, defaults, "op");
    const Operator* found = op && op.IsScalar() ? find_operator(op.Scalar()) : nullptr;
    return found != nullptr ? *found : *operators().front();
  }

  // A key's node from the workload, else from the defaults; empty if neither.
  static YAML::Node lookup(const YAML::Node& workload, const YAML::Node& defaults, const char* key) {
    if (const YAML::Node node = workload[key]) return node;
    if (defaults) {
      if (const YAML::Node node = defaults[key]) return node;
    }
    return YAML::Node(YAML::NodeType::Undefined);
  }

  std::optional<int> integer(const YAML::Node& node, const std::string& what, int lo, int hi) {
    const std::string range = "an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
    if (!node.IsScalar()) {
      error(node, "'" + what + "' must be " + range + ", got " + text_of(node));
      return std::nullopt;
    }
    const std::string& s = node.Scalar();
    long long value = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (ec != std::errc() || end != s.data() + s.size()) {
      error(node, "'" + what + "' must be " + range + ", got " + quoted(s));
      return std::nullopt;
    }
    if (value < lo || value > hi) {
      error(node, "'" + what + "' must be " + range + ", got " + s);
      return std::nullopt;
    }
    return static_cast<int>(value);
  }

  // An integer, or a list of `count` integers (e.g. filter: 3 or filter: [3, 5]).
  std::optional<std::vector<int>> integers(const YAML::Node& node, const std::string& what, size_t count,
                                           const std::string& names, int lo, int hi) {
    if (node.IsScalar()) {
      auto v = integer(node, what, lo, hi);
      if (!v) return std::nullopt;
      return std::vector<int>(count, *v);
    }
    if (!node.IsSequence() || node.size() != count) {
      error(node, "'" + what + "' must be an integer or a list of " + std::to_string(count) + " integers " +
                      names + ", got " + (node.IsSequence() ? "a list of " + std::to_string(node.size()) : text_of(node)));
      return std::nullopt;
    }
    std::vector<int> values;
    for (size_t i = 0; i < count; ++i) {
      auto v = integer(node[i], what, lo, hi);
      if (!v) return std::nullopt;
      values.push_back(*v);
    }
    return values;
  }

  std::optional<std::string> word(const YAML::Node& node, const std::string& what,
                                  const std::vector<std::string>& allowed) {
    if (node.IsScalar() && std::find(allowed.begin(), allowed.end(), node.Scalar()) != allowed.end()) {
      return node.Scalar();
    }
    error(node, "'" + what + "' must be one of " + join(allowed) + ", got " + quoted(text_of(node)));
    return std::nullopt;
  }

  // A non-empty scalar of at most 200 characters.
  std::optional<std::string> text(const YAML::Node& node, const std::string& what, const std::string& meaning) {
    if (node.IsScalar() && !node.Scalar().empty() && node.Scalar().size() <= 200) return node.Scalar();
    error(node, "'" + what + "' must be " + meaning + " (at most 200 characters), got " + quoted(text_of(node)));
    return std::nullopt;
  }

  // A finite number greater than zero.
  std::optional<double> positive(const YAML::Node& node, const std::string& what) {
    if (node.IsScalar()) {
      const std::string& s = node.Scalar();
      char* end = nullptr;
      errno = 0;
      const double v = std::strtod(s.c_str(), &end);
      if (!s.empty() && end == s.c_str() + s.size() && errno == 0 && std::isfinite(v) && v > 0) return v;
    }
    error(node, "'" + what + "' must be a number greater than 0, got " + quoted(text_of(node)));
    return std::nullopt;
  }

  std::optional<bool> boolean(const YAML::Node& node, const std::string& what) {
    if (node.IsScalar()) {
      const std::string& s = node.Scalar();
      if (s == "true") return true;
      if (s == "false") return false;
    }
    error(node, "'" + what + "' must be true or false, got " + quoted(text_of(node)));
    return std::nullopt;
  }


  // Returns the workload only if every key of it was valid.
  std::optional<Workload> parse_workload(const YAML::Node& item, const YAML::Node& defaults, const Operator& op) {
    const size_t errors_before = diagnostics_.size();
    Workload wl;
    wl.op = &op;
    wl.where = at(item);
    // Keys the operator does not take are reported by check_keys; one set in
    // `defaults` for workloads of another operator is not inherited.
    auto get = [&](const char* key) {
      const bool takes = std::find(op.workload_keys.begin(), op.workload_keys.end(), key) != op.workload_keys.end();
      return takes ? lookup(item, defaults, key) : YAML::Node(YAML::NodeType::Undefined);
    };
    auto required = [&](const char* key, const char* meaning) {
      YAML::Node node = get(key);
      if (!node) error(item, std::string("missing key '") + key + "' (" + meaning + ") in a workload");
      return node;
    };

    if (YAML::Node op_node = get("op")) {
      std::vector<std::string> names;
      for (const Operator* known : operators()) names.push_back(known->name);
      word(op_node, "op", names);
    }
    if (YAML::Node dtype = get("dtype")) word(dtype, "dtype", kDtypes);
    if (YAML::Node layout = get("layout")) word(layout, "layout", kLayouts);

    if (YAML::Node n = required("n", "batch size, or 'runtime'")) {
      if (n.IsScalar() && n.Scalar() == kRuntimeBatch) {
        wl.n = 0;
      } else if (const size_t before = diagnostics_.size(); auto v = integer(n, "n", 1, kMaxBatch)) {
        wl.n = *v;
      } else if (diagnostics_.size() > before) {  // not when past kMaxErrors
        diagnostics_.back().message += " (or 'runtime')";
      }
    }
    if (YAML::Node c = required("c", "input channels")) wl.c = integer(c, "c", 1, kMaxChannels).value_or(0);
    if (YAML::Node h = required("h", "input height")) wl.h = integer(h, "h", 1, kMaxExtent).value_or(0);
    if (YAML::Node w = required("w", "input width")) wl.w = integer(w, "w", 1, kMaxExtent).value_or(0);
    if (YAML::Node filter = required("filter", "filter size, k or [kh, kw]")) {
      if (auto v = integers(filter, "filter", 2, "[kh, kw]", 1, kMaxFilter)) std::tie(wl.kh, wl.kw) = std::pair((*v)[0], (*v)[1]);
    }
    if (YAML::Node stride = get("stride")) {
      if (auto v = integers(stride, "stride", 2, "[stride_h, stride_w]", 1, kMaxStride))
        std::tie(wl.stride_h, wl.stride_w) = std::pair((*v)[0], (*v)[1]);
    }
    if (YAML::Node dilation = get("dilation")) {
      if (auto v = integers(dilation, "dilation", 2, "[dilation_h, dilation_w]", 1, kMaxDilation))
        std::tie(wl.dilation_h, wl.dilation_w) = std::pair((*v)[0], (*v)[1]);
    }
    if (YAML::Node multiplier = get("multiplier"))
      wl.multiplier = integer(multiplier, "multiplier", 1, kMaxMultiplier).value_or(1);
    if (std::find(op.workload_keys.begin(), op.workload_keys.end(), "c_out") != op.workload_keys.end()) {
      if (YAML::Node c_out = required("c_out", "output channels")) wl.c_out = integer(c_out, "c_out", 1, kMaxChannels).value_or(0);
    }
    if (YAML::Node groups = get("groups")) {
      if (auto v = integer(groups, "groups", 1, kMaxChannels); v && *v != 1) {
        error(groups, "'groups' must be 1 (dense convolution), got " + std::to_string(*v) +
                          "; for groups = c use op: depthwise_conv2d; other grouped convolutions are not supported");
      }
    }
    if (YAML::Node residual = get("residual")) wl.residual = boolean(residual, "residual").value_or(false);
    if (YAML::Node epilogue = get("epilogue")) {
      if (auto v = word(epilogue, "epilogue", kEpilogues))
        wl.epilogue = kEpilogueTable[std::find(kEpilogues.begin(), kEpilogues.end(), *v) - kEpilogues.begin()].value;
    }
    if (YAML::Node activation = get("activation")) {
      if (auto v = word(activation, "activation", kActivations)) {
        wl.activation = kActivationTable[std::find(kActivations.begin(), kActivations.end(), *v) - kActivations.begin()].value;
      }
    }
    if (diagnostics_.size() != errors_before) return std::nullopt;

    // Padding needs the filter size and dilation, so it comes after them.
    const YAML::Node padding = get("padding");
    if (!padding) {
      error(item, "missing key 'padding' in a workload; allowed: same, valid, p, [ph, pw] or [top, bottom, left, right]");
    } else {
      parse_padding(padding, wl);
    }
    if (YAML::Node schedule = get("schedule")) {
      parse_schedule(schedule, op, wl.schedule);
    } else {
      wl.schedule.where = wl.where;
    }
    if (diagnostics_.size() != errors_before) return std::nullopt;

    check_output_size(item, wl);
    if (diagnostics_.size() != errors_before) return std::nullopt;
    return wl;
  }

  // `same`: (k-1)*d/2 on top/left, the rest on bottom/right, so the output is
  // ceil(input / stride); for odd k that is PyTorch's padding=k//2.
  void parse_padding(const YAML::Node& node, Workload& wl) {
    const int window_h = wl.dilation_h * (wl.kh - 1);
    const int window_w = wl.dilation_w * (wl.kw - 1);
    if (node.IsScalar() && node.Scalar() == kSamePadding) {
      wl.pad_top = window_h / 2;
      wl.pad_bottom = window_h - wl.pad_top;
      wl.pad_left = window_w / 2;
      wl.pad_right = window_w - wl.pad_left;
      return;
    }
    if (node.IsScalar() && node.Scalar() == kValidPadding) return;
    const std::string allowed = "same, valid, an integer p, [ph, pw] or [top, bottom, left, right]";
    std::vector<int> pads;
    if (node.IsScalar()) {
      const size_t before = diagnostics_.size();
      auto v = integer(node, "padding", 0, kMaxPadding);
      if (!v) {
        if (diagnostics_.size() > before) {  // not when past kMaxErrors
          diagnostics_.back().message = "'padding' must be " + allowed + ", got " + quoted(node.Scalar());
        }
        return;
      }
      pads = {*v, *v, *v, *v};
    } else if (node.IsSequence() && (node.size() == 2 || node.size() == 4)) {
      for (const YAML::Node& p : node) {
        auto v = integer(p, "padding", 0, kMaxPadding);
        if (!v) return;
        pads.push_back(*v);
      }
      if (pads.size() == 2) pads = {pads[0], pads[0], pads[1], pads[1]};
    } else {
      error(node, "'padding' must be " + allowed + ", got " + text_of(node));
      return;
    }
    wl.pad_top = pads[0];
    wl.pad_bottom = pads[1];
    wl.pad_left = pads[2];
    wl.pad_right = pads[3];
    // A pad wider than the filter window makes rows or columns of pure zeros:
    // almost surely a typo, and PyTorch refuses it too.
    if (std::max(wl.pad_top, wl.pad_bottom) > window_h || std::max(wl.pad_left, wl.pad_right) > window_w) {
      error(node, "padding [" + std::to_string(wl.pad_top) + ", " + std::to_string(wl.pad_bottom) + ", " +
                      std::to_string(wl.pad_left) + ", " + std::to_string(wl.pad_right) +
                      "] is wider than the filter window (dilation*(k-1) = " + std::to_string(window_h) + " rows, " +
                      std::to_string(window_w) + " columns); each side must be at most that");
    }
  }

  void parse_schedule(const YAML::Node& node, const Operator& op, ScheduleRequest& s) {
    s.where = at(node);
    const std::vector<std::string> keys = schedule_keys(op);
    if (!node.IsMap()) {
      error(node, "'schedule' must be a mapping with the keys " + join(keys));
      return;
    }
    check_keys(node, keys, "in 'schedule'");
    for (const auto& entry : node) {
      const std::string key = entry.first.Scalar();
      const YAML::Node& value = entry.second;
      if (key == "algorithm") {
        s.algorithm_where = at(value);
        const std::string name = value.IsScalar() ? value.Scalar() : text_of(value);
        if (op.algorithm(name) != nullptr) {
          s.algorithm = name;
        } else {
          std::vector<std::string> names;
          for (const Algorithm* a : op.algorithms) names.push_back("'" + a->name + "'");
          error(value, "'algorithm' must be " + join_or(names) + ", got " + quoted(name));
        }
        continue;
      }
      const Knob* knob = find_knob(op, key);
      if (knob == nullptr) continue;  // reported by check_keys
      s.keys.push_back({key, at(entry.first), at(value)});
      parse_knob(value, *knob, s);
    }
  }

  // One knob's value(s), checked against the knob's range and rules.
  void parse_knob(const YAML::Node& node, const Knob& knob, ScheduleRequest& s) {
    switch (knob.kind) {
      case Knob::Kind::kBool:
        if (auto v = boolean(node, knob.key)) s.values[knob.key] = *v;
        return;
      case Knob::Kind::kChoice:
        if (auto v = word(node, knob.key, knob.choices)) {
          s.values[knob.key] =
              static_cast<int>(std::find(knob.choices.begin(), knob.choices.end(), *v) - knob.choices.begin());
        }
        return;
      case Knob::Kind::kInt:
        break;
    }
    if (knob.values.size() > 1) {
      if (auto v = integers(node, knob.key, knob.values.size(), knob.list_names, knob.lo, knob.hi)) {
        for (size_t i = 0; i < v->size(); ++i) s.values[knob.values[i]] = (*v)[i];
      }
      return;
    }
    const std::optional<int> v = integer(node, knob.key, knob.lo, knob.hi);
    if (!v) return;
    if (!knob.allowed.empty() && std::find(knob.allowed.begin(), knob.allowed.end(), *v) == knob.allowed.end()) {
      std::vector<std::string> allowed;
      for (int a : knob.allowed) allowed.push_back(std::to_string(a));
      error(node, "'" + knob.key + "' must be " + join_or(allowed) + " " + knob.rule_note + ", got " +
                      std::to_string(*v));
    } else if (*v % knob.multiple_of != 0) {
      error(node, "'" + knob.key + "' must be a multiple of " + std::to_string(knob.multiple_of) + " " +
                      knob.rule_note + ", got " + std::to_string(*v));
    } else {
      s.values[knob.key] = *v;
    }
  }

  void check_output_size(const YAML::Node& item, const Workload& wl) {
    const auto explain = [](const char* axis, int in, int pad_a, int pad_b, int d, int k, int s) {
      // Rounded down (C++ division rounds a negative span toward zero).
      const int span = in + pad_a + pad_b - d * (k - 1) - 1;
      const int out = (span >= 0 ? span / s : -((-span + s - 1) / s)) + 1;
      return std::string("output ") + axis + " would be (" + std::to_string(in) + " + " + std::to_string(pad_a) +
             " + " + std::to_string(pad_b) + " - " + std::to_string(d) + "*(" + std::to_string(k) + "-1) - 1) / " +
             std::to_string(s) + " + 1 = " + std::to_string(out) +
             "; the dilated filter must fit inside the padded input";
    };
    const int window_h = wl.dilation_h * (wl.kh - 1) + 1;
    const int window_w = wl.dilation_w * (wl.kw - 1) + 1;
    if (wl.h + wl.pad_top + wl.pad_bottom < window_h) {
      error(item, explain("height", wl.h, wl.pad_top, wl.pad_bottom, wl.dilation_h, wl.kh, wl.stride_h));
    }
    if (wl.w + wl.pad_left + wl.pad_right < window_w) {
      error(item, explain("width", wl.w, wl.pad_left, wl.pad_right, wl.dilation_w, wl.kw, wl.stride_w));
    }
    if (static_cast<long long>(wl.h) * wl.w > kMaxPlane) {
      error(item, "an input plane of " + std::to_string(wl.h) + "x" + std::to_string(wl.w) + " exceeds the " +
                      std::to_string(kMaxPlane) + " elements a kernel indexes with 32-bit offsets");
    }
    if (wl.n > 0) {
      const long long in = static_cast<long long>(wl.n) * wl.c * wl.h * wl.w;
      const long long out = static_cast<long long>(wl.n) * wl.out_channels() * wl.out_h() * wl.out_w();
      if (std::max(in, out) > kMaxTensor) {
        error(item, "at n = " + std::to_string(wl.n) + " the " + (in >= out ? "input" : "output") + " holds " +
                        std::to_string(std::max(in, out)) + " elements; a tensor holds at most " +
                        std::to_string(kMaxTensor) + " (2^40), the runtime's limit");
      }
    }
    if (static_cast<long long>(wl.c) * wl.multiplier > kMaxChannels * 8LL) {
      error(item, "c * multiplier must be at most " + std::to_string(kMaxChannels * 8LL));
    }
  }

  std::string file_;
  std::vector<std::pair<YAML::Node, YAML::Mark>> empty_values_;  // for at(): an empty value's key
  OnInvalidWorkload on_invalid_;
  std::vector<Diagnostic> diagnostics_;
  bool stopped_ = false;  // an error past kMaxErrors stops reading workloads
  bool file_is_spec_ = true;  // else a tuning database: some remedies differ
};

// Where each YAML document of `text` starts, up to the third. yaml-cpp 0.7's
// LoadAll never returns on some malformed input (a stray ',' outside a flow
// collection): its parser stops advancing and reports the same empty
// document again and again, allocating each time. Counting documents with a
// handler that builds nothing, and stopping at three, bounds that; two
// documents starting at one place mean the parser is stuck there.
class DocumentStarts : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> starts;
  void OnDocumentStart(const YAML::Mark& mark) override { starts.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

std::vector<YAML::Mark> document_starts(const std::string& text) {
  std::istringstream stream(text);
  YAML::Parser parser(stream);
  DocumentStarts handler;
  while (handler.starts.size() < 3 && parser.HandleNextDocument(handler)) {
  }
  return handler.starts;
}

std::string too_big(std::uintmax_t bytes) {
  return "the spec is " + std::to_string(bytes) + " bytes; a spec is at most " + std::to_string(kMaxSpecBytes) +
         " bytes (1 MiB): split the workloads over several spec files";
}

// The YAML of a spec or a tuning database, `what` in messages: one document,
// or a SpecError pointing at the syntax error.
YAML::Node load_yaml(const std::string& text, const std::string& path, const std::string& what) {
  try {
    const std::vector<YAML::Mark> starts = document_starts(text);
    for (size_t i = 1; i < starts.size(); ++i) {
      if (starts[i].pos != starts[i - 1].pos) continue;
      // The parser is stuck: it would report this empty document forever.
      const std::string found = starts[i].pos < static_cast<int>(text.size())
                                    ? quoted(std::string(1, text[static_cast<size_t>(starts[i].pos)]))
                                    : "the end of the file";
      throw SpecError({Diagnostic{SourceLocation{path, starts[i].line + 1, starts[i].column + 1},
                                  "YAML syntax: unexpected " + found + " here"}});
    }
    if (starts.size() > 1) {
      // A second document would be dropped silently by a reader of the first.
      throw SpecError({Diagnostic{SourceLocation{path, starts[1].line + 1, starts[1].column + 1},
                                  "a " + what + " is one YAML document; this file holds more (the second starts "
                                  "here): " + (what == "spec" ? "put every workload under one 'workloads' list, or "
                                                                "use several spec files"
                                                              : "keep one 'entries' list")}});
    }
    if (!starts.empty()) return YAML::Load(text);
    return YAML::Node();
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp stops a parse nested this deep (its message says "bad file").
    throw SpecError({Diagnostic{SourceLocation{path, e.mark.line + 1, e.mark.column + 1},
                                "YAML nested more than " + std::to_string(e.depth()) + " levels deep here; a " + what +
                                    " nests a few levels (workloads, a workload, its schedule, a list)"}});
  } catch (const YAML::Exception& e) {
    // yaml-cpp's marks are 0-based, ours are 1-based.
    throw SpecError({Diagnostic{SourceLocation{path, e.mark.line + 1, e.mark.column + 1}, "YAML syntax: " + e.msg}});
  }
}

// The file's text, or a SpecError: not a regular file, larger than
// `max_bytes` (checked before reading, so a huge file costs no memory), or
// unreadable.
std::string read_input(const std::string& path, std::uintmax_t max_bytes, const std::string& what,
                       const std::function<std::string(std::uintmax_t)>& too_big_message) {
  // Opening a FIFO or a device would wait for a writer, or never end.
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw SpecError({Diagnostic{SourceLocation{path, 0, 0},
                                std::filesystem::exists(path, ec)
                                    ? "not a regular file (a directory, a FIFO or a device); a " + what +
                                          " is a YAML file"
                                    : "cannot open the " + what + " file: " + (ec ? ec.message() : "no such file")}});
  }
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec && size > max_bytes) throw SpecError({Diagnostic{SourceLocation{path, 0, 0}, too_big_message(size)}});
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw SpecError({Diagnostic{SourceLocation{path, 0, 0}, "cannot open the " + what + " file: " +
                                                                (errno != 0 ? std::strerror(errno) : "unknown error")}});
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::string tuning_too_big(std::uintmax_t bytes) {
  return "the tuning database is " + std::to_string(bytes) + " bytes; one is at most " +
         std::to_string(kMaxTuningBytes) + " bytes (1 MiB): keep one database per spec";
}

}  // namespace

Spec parse_spec_text(const std::string& text, const std::string& path, OnInvalidWorkload on_invalid) {
  if (text.size() > kMaxSpecBytes) {
    throw SpecError({Diagnostic{SourceLocation{path, 0, 0}, too_big(text.size())}});
  }
  Parser parser(path, on_invalid);
  const YAML::Node root = load_yaml(text, path, "spec");
  Spec spec = parser.parse(root);
  if (!parser.diagnostics().empty()) throw SpecError(std::move(parser.diagnostics()));
  return spec;
}

TuningDb parse_tuning_text(const std::string& text, const std::string& path) {
  if (text.size() > kMaxTuningBytes) throw SpecError({Diagnostic{SourceLocation{path, 0, 0}, tuning_too_big(text.size())}});
  Parser parser(path, OnInvalidWorkload::kFail);
  const YAML::Node root = load_yaml(text, path, "tuning database");
  TuningDb db = parser.parse_tuning(root);
  if (!parser.diagnostics().empty()) throw SpecError(std::move(parser.diagnostics()));
  return db;
}

TuningDb parse_tuning_file(const std::string& path) {
  return parse_tuning_text(read_input(path, kMaxTuningBytes, "tuning database", tuning_too_big), path);
}

SpecVocabulary spec_vocabulary() {
  SpecVocabulary v;
  const auto word = [&v](const std::string& w) {
    if (std::find(v.words.begin(), v.words.end(), w) == v.words.end()) v.words.push_back(w);
  };
  const auto around = [&v](long long limit) {
    for (long long n : {limit - 1, limit, limit + 1}) {
      if (std::find(v.numbers.begin(), v.numbers.end(), n) == v.numbers.end()) v.numbers.push_back(n);
    }
  };
  for (const auto* words : {&kTopKeys, &kDtypes, &kLayouts, &kEpilogues, &kActivations, &kPaddingWords}) {
    for (const std::string& w : *words) word(w);
  }
  word(kRuntimeBatch);
  word("true");
  word("false");
  for (const Operator* op : operators()) {
    word(op->name);
    for (const std::string& key : op->workload_keys) word(key);
    for (const std::string& key : schedule_keys(*op)) word(key);
    for (const Algorithm* a : op->algorithms) {
      word(a->name);
      for (const Knob& k : a->knobs) {
        for (const std::string& c : k.choices) word(c);
        if (k.kind == Knob::Kind::kInt) {
          around(k.lo);
          around(k.hi);
        }
      }
    }
    for (const Knob& k : op->common_knobs) {
      for (const std::string& c : k.choices) word(c);
    }
  }
  for (long long limit : {0LL, static_cast<long long>(kMaxChannels), static_cast<long long>(kMaxExtent),
                          static_cast<long long>(kMaxFilter), static_cast<long long>(kMaxStride),
                          static_cast<long long>(kMaxDilation), static_cast<long long>(kMaxMultiplier),
                          static_cast<long long>(kMaxPadding), static_cast<long long>(kMaxBatch), kMaxPlane, kMaxTensor,
                          static_cast<long long>(kMaxChannels) * kMaxMultiplier, 0x7fffffffLL}) {
    around(limit);
  }
  return v;
}

Spec parse_spec_file(const std::string& path, OnInvalidWorkload on_invalid) {
  return parse_spec_text(read_input(path, kMaxSpecBytes, "spec", too_big), path, on_invalid);
}

}  // namespace convgen::gen
