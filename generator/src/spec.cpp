// Spec parsing and validation: YAML text -> Spec, or an InputError that lists
// every mistake with its file:line:col, what is wrong and what is allowed.
#include "convgen/gen/spec.hpp"

#include "convgen/gen/operator.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <utility>

#include "schedule_reader.hpp"
#include "yaml_reader.hpp"

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

InputError::InputError(std::vector<Diagnostic> diagnostics)
    : std::runtime_error(join_diagnostics(diagnostics)), diagnostics_(std::move(diagnostics)) {}

bool is_c_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; });
}

namespace {

// Words a library name cannot be: the keywords of C (C23) and C++ (C++20),
// and the namespaces the C++ standard reserves. The generated header opens
// `namespace convgen::<library>` and the kernels `convgen_<library>`: a
// keyword or `std` there fails in nvcc, far from the spec.
const std::set<std::string> kReservedWords = {
    "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch",
    "char", "char16_t", "char32_t", "char8_t", "class", "co_await", "co_return", "co_yield", "compl", "concept",
    "const", "const_cast", "consteval", "constexpr", "constinit", "continue", "decltype", "default", "delete",
    "do", "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for",
    "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
    "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register", "reinterpret_cast",
    "requires", "restrict", "return", "short", "signed", "sizeof", "static", "static_assert", "static_cast",
    "struct", "switch", "template", "this", "thread_local", "throw", "true", "try", "typedef", "typeid",
    "typename", "typeof", "typeof_unqual", "union", "unsigned", "using", "virtual", "void", "volatile",
    "wchar_t", "while", "xor", "xor_eq", "std", "posix"};

// Limits of what the generated kernels support: the `generated` column of
// the limits table (convgen/limits.h), which also says why. Each is stated
// in the error a user sees when a spec goes past it.
constexpr int kMaxExtent = static_cast<int>(kExtentLimit.generated);
constexpr int kMaxFilter = static_cast<int>(kFilterLimit.generated);
constexpr int kMaxStride = static_cast<int>(kStrideLimit.generated);
constexpr int kMaxDilation = static_cast<int>(kDilationLimit.generated);
constexpr long long kMaxPlane = kPlaneLimit.generated;  // elements of one channel plane, 32-bit indexing inside a kernel
constexpr long long kMaxTensor = kTensorElementsLimit.generated;  // the runtime refuses larger ones
// Limits on the spec file itself, so that no input (a generated file gone
// wrong, or a hostile one) can make convgen use unbounded time or memory:
// a spec is a short list a person writes.
// yaml-cpp keeps up to ~250 bytes per byte of input (a flow list of 0s), so
// 1 MiB (some 10,000 workloads) bounds memory to ~250 MB and time to ~0.5 s.
constexpr std::uintmax_t kMaxSpecBytes = 1u << 20;
constexpr size_t kMaxLibraryName = 64;  // a C identifier that names files and a namespace

// The names of the reference's rows (top_level_keys(), below).
const std::vector<std::string> kTopKeys = [] {
  std::vector<std::string> keys;
  for (const SpecKey& k : top_level_keys()) keys.push_back(k.key);
  return keys;
}();
// The words a workload's keys take.
const std::vector<std::string> kDtypes = [] {
  std::vector<std::string> words;
  for (const DataTypeRow& r : kDataTypeTable) words.push_back(r.word);
  return words;
}();
const std::vector<std::string> kLayouts = [] {
  std::vector<std::string> words;
  for (const LayoutRow& r : kLayoutTable) words.push_back(r.word);
  return words;
}();
const std::vector<std::string> kMaths = [] {
  std::vector<std::string> words;
  for (const MathRow& r : kMathTable) words.push_back(r.word);
  return words;
}();
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
constexpr int kMaxPadding = static_cast<int>(kPaddingLimit.generated);
// The keys a workload of `op` may set, in the order messages list them: the
// keys every operator takes (shared_workload_keys(), below), each followed
// by the operator's own keys that name it (WorkloadKey::after).
std::vector<std::string> workload_keys(const Operator& op) {
  std::vector<std::string> keys;
  for (const SpecKey& shared : shared_workload_keys()) {
    keys.push_back(shared.key);
    for (const WorkloadKey& k : op.workload_keys) {
      if (k.after == shared.key) keys.push_back(k.key);
    }
  }
  return keys;
}

// Keys any operator's workload may set, for messages about `defaults`.
const std::vector<std::string>& all_workload_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> all;
    for (const Operator* op : operators()) {
      for (const std::string& key : workload_keys(*op)) {
        if (std::find(all.begin(), all.end(), key) == all.end()) all.push_back(key);
      }
    }
    return all;
  }();
  return keys;
}

// The first operator a workload of which may set `key`; null for none.
const Operator* operator_taking(const std::string& key) {
  for (const Operator* op : operators()) {
    const std::vector<std::string> keys = workload_keys(*op);
    if (std::find(keys.begin(), keys.end(), key) != keys.end()) return op;
  }
  return nullptr;
}

std::vector<std::string> operator_names() {
  std::vector<std::string> names;
  for (const Operator* op : operators()) names.push_back(op->name);
  return names;
}

// Removes each diagnostic that repeats an earlier one (place and message):
// a value in `defaults` that several workloads find wrong in the same way.
void drop_repeats(std::vector<Diagnostic>& diagnostics) {
  std::set<std::string> seen;
  std::vector<Diagnostic> kept;
  for (Diagnostic& d : diagnostics) {
    if (seen.insert(d.str()).second) kept.push_back(std::move(d));
  }
  diagnostics = std::move(kept);
}

using yaml::join;
using yaml::quoted;
using yaml::text_of;

// Reads one spec's schema over the YAML reading layer.
class SpecReader {
 public:
  SpecReader(const std::string& file, OnInvalidWorkload on_invalid)
      // With kSkip each workload's diagnostics move to Spec::skipped, so only
      // a failing parse can pile them up.
      : r_(file, on_invalid == OnInvalidWorkload::kFail, ", or put the shared ones in 'defaults'"),
        on_invalid_(on_invalid) {}

  Spec read(const YAML::Node& root) {
    Spec spec;
    spec.file = r_.file();
    if (!r_.top_level(root, kTopKeys, "spec")) return spec;
    if (const YAML::Node library = root["library"]) {
      spec.library_where = r_.at(library);
      if (!library.IsScalar()) {
        r_.error(library, "'library' " + library_name_problem(text_of(library)));
      } else if (std::string why = library_name_problem(library.Scalar()); !why.empty()) {
        r_.error(library, "'library' " + why);
      } else {
        spec.library = library.Scalar();
      }
    }
    YAML::Node defaults = root["defaults"];
    if (defaults && !defaults.IsMap()) {
      r_.error(defaults, "'defaults' must be a mapping of workload keys (" + join(all_workload_keys()) + ")");
      defaults = YAML::Node();
    } else if (defaults) {
      r_.check_keys(defaults, all_workload_keys(), "in 'defaults'");
      check_defaults(defaults);
    }
    const YAML::Node workloads = root["workloads"];
    if (!workloads) {
      r_.error(root, "missing key 'workloads': a list of convolution workloads");
      return spec;
    }
    if (!workloads.IsSequence() || workloads.size() == 0) {
      r_.error(workloads, "'workloads' must be a non-empty list of workload mappings");
      return spec;
    }
    for (const YAML::Node& item : workloads) {
      if (r_.stopped()) break;  // too many errors: the rest would take time and say little
      const size_t errors_before = r_.error_count();
      if (!item.IsMap()) {
        r_.error(item, "each workload must be a mapping with the keys " + join(all_workload_keys()));
      } else if (const Operator* op = operator_of(item, defaults)) {
        r_.check_keys(item, workload_keys(*op), "in a workload");
        std::optional<Workload> workload = read_workload(item, defaults, *op);
        if (workload && r_.error_count() == errors_before) spec.workloads.push_back(*workload);
      } else {
        // An unknown operator, reported first: the keys that no operator
        // takes are still worth reporting; the values are not read.
        r_.check_keys(item, all_workload_keys(), "in a workload");
      }
      if (on_invalid_ == OnInvalidWorkload::kSkip) {
        // The workload's own errors become the reason it was left out.
        std::vector<Diagnostic> own = r_.take_errors(errors_before);
        spec.skipped.insert(spec.skipped.end(), own.begin(), own.end());
      }
    }
    drop_repeats(spec.skipped);
    return spec;
  }

  std::vector<Diagnostic>& diagnostics() {
    drop_repeats(r_.diagnostics());
    return r_.diagnostics();
  }

 private:
  // The operator a workload names, else the first; null for an unknown name,
  // reported here at the workload's own `op` (an unknown one in `defaults`
  // was reported once, by check_defaults), listing the known operators.
  const Operator* operator_of(const YAML::Node& item, const YAML::Node& defaults) {
    const YAML::Node op = lookup(item, defaults, "op");
    if (!op) return operators().front();
    if (op.IsScalar()) {
      if (const Operator* found = find_operator(op.Scalar())) return found;
    }
    if (item["op"]) r_.word(op, "op", operator_names());
    return nullptr;
  }

  // Checks each value that `defaults` sets once, at its own line, and keeps
  // the keys of those that are invalid: a workload inheriting one is invalid
  // without a message of its own. What depends on a workload's other keys
  // (a padding against its filter, a schedule against its operator) is
  // checked with each workload; the same message twice is shown once.
  void check_defaults(const YAML::Node& defaults) {
    Workload scratch;
    for (const auto& entry : defaults) {
      if (!entry.first.IsScalar()) continue;  // reported by check_keys
      const std::string key = entry.first.Scalar();
      const Operator* op = operator_taking(key);
      if (op == nullptr || key == "schedule") continue;  // an unknown key is reported by check_keys
      const size_t before = r_.error_count();
      if (key == "op") {
        r_.word(entry.second, "op", operator_names());
      } else if (key == "padding") {
        read_padding(entry.second, scratch, /*check_window=*/false);
      } else {
        read_value(key, entry.second, *op, scratch);
      }
      if (r_.error_count() != before) invalid_defaults_.insert(key);
    }
  }

  // A key's node from the workload, else from the defaults; empty if neither.
  static YAML::Node lookup(const YAML::Node& workload, const YAML::Node& defaults, const std::string& key) {
    if (const YAML::Node node = workload[key]) return node;
    if (defaults) {
      if (const YAML::Node node = defaults[key]) return node;
    }
    return YAML::Node(YAML::NodeType::Undefined);
  }

  // Returns the workload only if every key of it was valid.
  std::optional<Workload> read_workload(const YAML::Node& item, const YAML::Node& defaults, const Operator& op) {
    const size_t errors_before = r_.error_count();
    Workload wl;
    wl.op = &op;
    wl.where = r_.at(item);
    // Keys the operator does not take are reported by check_keys; one set in
    // `defaults` for workloads of another operator is not inherited. An
    // invalid default was reported at its own line: the workload inherits
    // nothing for that key, and is left out without a message of its own.
    const std::vector<std::string> keys = workload_keys(op);
    bool inherits_invalid_default = false;
    auto get = [&](const std::string& key) {
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) return YAML::Node(YAML::NodeType::Undefined);
      if (!item[key] && invalid_defaults_.count(key)) {
        inherits_invalid_default = true;
        return YAML::Node(YAML::NodeType::Undefined);
      }
      return lookup(item, defaults, key);
    };

    for (const std::string& key : keys) {
      // The operator is known already; padding needs the filter size and
      // dilation, and the schedule the whole workload: they come after.
      if (key == "op" || key == "padding" || key == "schedule") continue;
      if (const YAML::Node node = get(key)) {
        read_value(key, node, op, wl);
      } else if (!invalid_defaults_.count(key)) {
        if (std::optional<std::string> meaning = required_meaning(op, key)) {
          r_.error(item, "missing key '" + key + "' (" + *meaning + ") in a workload");
        }
      }
    }
    if (r_.error_count() != errors_before || inherits_invalid_default) return std::nullopt;

    if (const YAML::Node padding = get("padding")) {
      read_padding(padding, wl, /*check_window=*/true);
    } else if (!inherits_invalid_default) {
      r_.error(item, "missing key 'padding' in a workload; allowed: same, valid, p, [ph, pw] or [top, bottom, left, right]");
    }
    // A math set in `defaults` is a permission, as PyTorch's allow_tf32 is
    // for a whole model: it applies where it can. A half-precision workload,
    // or one of an operator with no tensor-core kernels (depthwise), keeps
    // fp32, exact, which every math allows. Set on the workload itself it
    // must fit. (Before the schedule, whose knobs are read with the range of an
    // algorithm that serves the workload, its math included.)
    if (wl.math != Math::kFloat32 && !item["math"] && !math_applies(op, wl)) wl.math = Math::kFloat32;
    if (YAML::Node schedule = get("schedule")) {
      const size_t before = r_.error_count();
      read_schedule(r_, schedule, op, wl.schedule, &wl);
      // A schedule in `defaults` is read for each workload (its knobs are its
      // operator's): say for which operator's, since the line is the
      // defaults' (the same message for several workloads is shown once).
      if (!item["schedule"]) {
        for (Diagnostic& d : r_.take_errors(before)) {
          r_.error(d.where, d.message + " (in the schedule `defaults` gives every " + op.name + " workload)");
        }
      }
    } else {
      wl.schedule.where = wl.where;
    }
    if (r_.error_count() != errors_before || inherits_invalid_default) return std::nullopt;

    check_output_size(item, wl);
    if (wl.math != Math::kFloat32 && wl.dtype != DataType::kFloat32) {
      r_.error(wl.math_where, "math " + std::string(to_string(wl.math)) + " rounds float32 operands for tensor "
               "cores; this workload is " + to_string(wl.dtype) + ", whose products are exact in fp32: leave math "
               "at fp32 (or drop it)");
    }
    if (r_.error_count() != errors_before) return std::nullopt;
    return wl;
  }

  // Whether a workload's products can be computed in its math other than
  // exactly: float32, and an algorithm of its operator made for that math.
  static bool math_applies(const Operator& op, const Workload& wl) {
    if (wl.dtype != DataType::kFloat32) return false;
    return std::any_of(op.algorithms.begin(), op.algorithms.end(), [&](const Algorithm* a) {
      return a->float32_maths != std::vector<Math>{Math::kFloat32} &&
             std::find(a->float32_maths.begin(), a->float32_maths.end(), wl.math) != a->float32_maths.end();
    });
  }

  // What a missing `key` means, if a workload of `op` must set it.
  static std::optional<std::string> required_meaning(const Operator& op, const std::string& key) {
    for (const SpecKey& k : shared_workload_keys()) {
      if (k.key == key && k.required) return k.meaning;
    }
    for (const WorkloadKey& k : op.workload_keys) {
      if (k.key == key && k.required) return k.meaning;
    }
    return std::nullopt;
  }

  // One value of a workload (or of `defaults`) other than op, padding and
  // schedule, into `wl`; an invalid one is reported at its node.
  void read_value(const std::string& key, const YAML::Node& node, const Operator& op, Workload& wl) {
    if (key == "dtype") {
      if (auto v = r_.word(node, "dtype", kDtypes)) {
        wl.dtype = kDataTypeTable[std::find(kDtypes.begin(), kDtypes.end(), *v) - kDtypes.begin()].value;
        wl.dtype_where = r_.at(node);
      }
    } else if (key == "layout") {
      if (auto v = r_.word(node, "layout", kLayouts)) {
        wl.layout = kLayoutTable[std::find(kLayouts.begin(), kLayouts.end(), *v) - kLayouts.begin()].value;
        wl.layout_where = r_.at(node);
      }
    } else if (key == "math") {
      if (auto v = r_.word(node, "math", kMaths)) {
        wl.math = kMathTable[std::find(kMaths.begin(), kMaths.end(), *v) - kMaths.begin()].value;
        wl.math_where = r_.at(node);
      }
    } else if (key == "n") {
      if (node.IsScalar() && node.Scalar() == kRuntimeBatch) {
        wl.n = 0;
      } else if (const size_t before = r_.error_count(); auto v = r_.integer(node, "n", 1, kMaxBatch)) {
        wl.n = *v;
      } else {
        r_.amend_last(before, " (or 'runtime')");
      }
    } else if (key == "c") {
      wl.c = r_.integer(node, "c", 1, kMaxChannels).value_or(0);
    } else if (key == "h") {
      wl.h = r_.integer(node, "h", 1, kMaxExtent).value_or(0);
    } else if (key == "w") {
      wl.w = r_.integer(node, "w", 1, kMaxExtent).value_or(0);
    } else if (key == "filter") {
      if (auto v = r_.integers(node, "filter", 2, "[kh, kw]", 1, kMaxFilter)) std::tie(wl.kh, wl.kw) = std::pair((*v)[0], (*v)[1]);
    } else if (key == "stride") {
      if (auto v = r_.integers(node, "stride", 2, "[stride_h, stride_w]", 1, kMaxStride))
        std::tie(wl.stride_h, wl.stride_w) = std::pair((*v)[0], (*v)[1]);
    } else if (key == "dilation") {
      if (auto v = r_.integers(node, "dilation", 2, "[dilation_h, dilation_w]", 1, kMaxDilation))
        std::tie(wl.dilation_h, wl.dilation_w) = std::pair((*v)[0], (*v)[1]);
    } else if (key == "epilogue") {
      if (auto v = r_.word(node, "epilogue", kEpilogues))
        wl.epilogue = kEpilogueTable[std::find(kEpilogues.begin(), kEpilogues.end(), *v) - kEpilogues.begin()].value;
    } else if (key == "activation") {
      if (auto v = r_.word(node, "activation", kActivations)) {
        wl.activation = kActivationTable[std::find(kActivations.begin(), kActivations.end(), *v) - kActivations.begin()].value;
      }
    } else {
      for (const WorkloadKey& k : op.workload_keys) {
        if (k.key == key) read_operator_key(node, k, wl);
      }
    }
  }

  // One of the operator's own keys (operator.hpp), into its Workload field.
  void read_operator_key(const YAML::Node& node, const WorkloadKey& k, Workload& wl) {
    std::optional<int> v;
    if (k.is_flag) {
      if (auto b = r_.boolean(node, k.key)) v = *b ? 1 : 0;
    } else {
      v = r_.integer(node, k.key, k.lo, k.hi);
    }
    if (!v) return;
    if (k.refuse != nullptr) {
      if (std::string why = k.refuse(*v); !why.empty()) {
        r_.error(node, std::move(why));
        return;
      }
    }
    if (k.set != nullptr) k.set(wl, *v);
  }

  // `same`: (k-1)*d/2 on top/left, the rest on bottom/right, so the output is
  // ceil(input / stride); for odd k that is PyTorch's padding=k//2.
  // `check_window`: check the sides against the filter window (a padding in
  // `defaults` is checked against each workload's filter).
  void read_padding(const YAML::Node& node, Workload& wl, bool check_window) {
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
    const std::string allowed = "same, valid, an integer p, [ph, pw] or [top, bottom, left, right] (each from 0 to " +
                                std::to_string(kMaxPadding) + ")";
    std::vector<int> pads;
    if (node.IsScalar()) {
      const size_t before = r_.error_count();
      auto v = r_.integer(node, "padding", 0, kMaxPadding);
      if (!v) {
        r_.replace_last(before, "'padding' must be " + allowed + ", got " + quoted(node.Scalar()));
        return;
      }
      pads = {*v, *v, *v, *v};
    } else if (node.IsSequence() && (node.size() == 2 || node.size() == 4)) {
      for (const YAML::Node& p : node) {
        auto v = r_.integer(p, "padding", 0, kMaxPadding);
        if (!v) return;
        pads.push_back(*v);
      }
      if (pads.size() == 2) pads = {pads[0], pads[0], pads[1], pads[1]};
    } else {
      r_.error(node, "'padding' must be " + allowed + ", got " + text_of(node));
      return;
    }
    wl.pad_top = pads[0];
    wl.pad_bottom = pads[1];
    wl.pad_left = pads[2];
    wl.pad_right = pads[3];
    // A pad wider than the filter window makes rows or columns of pure zeros:
    // almost surely a typo, and PyTorch refuses it too.
    if (check_window &&
        (std::max(wl.pad_top, wl.pad_bottom) > window_h || std::max(wl.pad_left, wl.pad_right) > window_w)) {
      r_.error(node, "padding [" + std::to_string(wl.pad_top) + ", " + std::to_string(wl.pad_bottom) + ", " +
                      std::to_string(wl.pad_left) + ", " + std::to_string(wl.pad_right) +
                      "] is wider than the filter window (dilation*(k-1) = " + std::to_string(window_h) + " rows, " +
                      std::to_string(window_w) + " columns); each side must be at most that");
    }
  }

  void check_output_size(const YAML::Node& item, const Workload& wl) {
    const auto explain = [](const char* axis, int in, int pad_a, int pad_b, int d, int k, int s) {
      const long long out = output_extent(in, pad_a, pad_b, k, s, d);  // rounded down, as the runtime does
      return std::string("output ") + axis + " would be (" + std::to_string(in) + " + " + std::to_string(pad_a) +
             " + " + std::to_string(pad_b) + " - " + std::to_string(d) + "*(" + std::to_string(k) + "-1) - 1) / " +
             std::to_string(s) + " + 1 = " + std::to_string(out) +
             "; the dilated filter must fit inside the padded input";
    };
    const int window_h = wl.dilation_h * (wl.kh - 1) + 1;
    const int window_w = wl.dilation_w * (wl.kw - 1) + 1;
    if (wl.h + wl.pad_top + wl.pad_bottom < window_h) {
      r_.error(item, explain("height", wl.h, wl.pad_top, wl.pad_bottom, wl.dilation_h, wl.kh, wl.stride_h));
    }
    if (wl.w + wl.pad_left + wl.pad_right < window_w) {
      r_.error(item, explain("width", wl.w, wl.pad_left, wl.pad_right, wl.dilation_w, wl.kw, wl.stride_w));
    }
    if (static_cast<long long>(wl.h) * wl.w > kMaxPlane) {
      r_.error(item, "an input plane of " + std::to_string(wl.h) + "x" + std::to_string(wl.w) + " exceeds the " +
                      std::to_string(kMaxPlane) + " elements a kernel indexes with 32-bit offsets");
    } else if (static_cast<long long>(wl.out_h()) * wl.out_w() > kMaxPlane) {
      // Padding makes the output plane larger than the input's.
      r_.error(item, "an output plane of " + std::to_string(wl.out_h()) + "x" + std::to_string(wl.out_w()) +
                      " exceeds the " + std::to_string(kMaxPlane) +
                      " elements a kernel indexes with 32-bit offsets");
    }
    if (wl.n > 0) {
      const long long in = static_cast<long long>(wl.n) * wl.c * wl.h * wl.w;
      const long long out = static_cast<long long>(wl.n) * wl.out_channels() * wl.out_h() * wl.out_w();
      if (std::max(in, out) > kMaxTensor) {
        r_.error(item, "at n = " + std::to_string(wl.n) + " the " + (in >= out ? "input" : "output") + " holds " +
                        std::to_string(std::max(in, out)) + " elements; a tensor holds at most " +
                        std::to_string(kMaxTensor) + " (2^40), the runtime's limit");
      }
    }
  }

  yaml::Reader r_;
  OnInvalidWorkload on_invalid_;
  std::set<std::string> invalid_defaults_;  // keys of `defaults` whose value was reported invalid
};

std::string too_big(std::uintmax_t bytes) {
  return "the spec is " + std::to_string(bytes) + " bytes; a spec is at most " + std::to_string(kMaxSpecBytes) +
         " bytes (1 MiB): split the workloads over several spec files";
}

std::string range(long long lo, long long hi) { return std::to_string(lo) + ".." + std::to_string(hi); }
// "a | b | c", as the reference writes the words a key takes.
std::string one_of(const std::vector<std::string>& words) {
  std::string text;
  for (const std::string& w : words) text += (text.empty() ? "" : " | ") + w;
  return text;
}

}  // namespace

const std::vector<SpecKey>& top_level_keys() {
  static const std::vector<SpecKey> keys = {
      {"library", "C identifier",
       "letters, digits and '_', not starting with a digit; at most " + std::to_string(kMaxLibraryName) +
           " characters; not a C or C++ keyword, std, or reserved ('_' and a capital letter, '__')",
       "", false,
       "the library: header <library>.h, namespace convgen::<library>; convgen_add_library's NAME (--name) "
       "overrides it, and names a library whose specs set none"},
      {"defaults", "mapping", "any workload keys", "", false,
       "keys every workload inherits unless it sets them"},
      {"workloads", "list", "workload mappings, at least one", "", true, "one kernel each"},
  };
  return keys;
}

const std::vector<SpecKey>& shared_workload_keys() {
  static const std::vector<SpecKey> keys = [] {
    const Workload unset;
    std::vector<std::string> ops;
    for (const Operator* op : operators()) ops.push_back(op->name);
    std::string epilogues;
    for (const EpilogueRow& r : kEpilogueTable) {
      if (r.params > 0) epilogues += std::string(epilogues.empty() ? "" : ", ") + r.word + ": sum" + r.affine;
    }
    return std::vector<SpecKey>{
        {"op", "word", one_of(ops), operators().front()->name, false,
         "the operator; each takes these keys and its own"},
        {"n", "integer or runtime", range(1, kMaxBatch) + " | " + kRuntimeBatch, "", true,
         "the batch the kernel is made for (its cost, the default rule); kernels take the batch at launch, so "
         "any batch runs",
         1, kMaxBatch},
        {"c", "integer", range(1, kMaxChannels), "", true, "input channels", 1, kMaxChannels},
        {"h", "integer", range(1, kMaxExtent), "", true, "input height", 1, kMaxExtent},
        {"w", "integer", range(1, kMaxExtent), "", true, "input width", 1, kMaxExtent},
        {"filter", "k or [kh, kw]", "each " + range(1, kMaxFilter), "", true, "filter height and width", 1,
         kMaxFilter},
        {"stride", "s or [sh, sw]", "each " + range(1, kMaxStride), std::to_string(unset.stride_h), false,
         "stride", 1, kMaxStride},
        {"padding", "word, p, [ph, pw] or [top, bottom, left, right]",
         one_of(kPaddingWords) + ", or each " + range(0, kMaxPadding) +
             " and at most the dilated filter's reach d*(k-1)",
         "", true,
         "zeros around the input, never materialized; same: d*(k-1)/2 (rounded down) on top and left, the rest "
         "on bottom and right, so that the output is ceil(input / stride)",
         0, kMaxPadding},
        {"dilation", "d or [dh, dw]", "each " + range(1, kMaxDilation), std::to_string(unset.dilation_h), false,
         "dilation", 1, kMaxDilation},
        {"epilogue", "word", one_of(kEpilogues), to_string(unset.epilogue), false,
         "applied to each output channel's sum: " + epilogues},
        {"activation", "word", one_of(kActivations), to_string(unset.activation), false,
         "applied last (after a residual add), as PyTorch defines it"},
        {"dtype", "word", one_of(kDtypes), kDtypes.front(), false,
         "every tensor's element type (input, filter, epilogue parameters, residual, output); sums and the "
         "epilogue are fp32, rounded once at the store"},
        {"math", "word", one_of(kMaths), kMaths.front(), false,
         "how float32 products are computed: fp32, FMA in fp32; tf32, on tensor cores with the operands rounded "
         "to TF32 (10 bits after the point, as PyTorch's allow_tf32); 3xtf32, on tensor cores with each operand "
         "split into two TF32 parts, three products each (fp32 accuracy). Float16 and bfloat16 take fp32. Set in "
         "defaults it is a permission: it applies to the float32 conv2d workloads, and the others keep fp32"},
        {"layout", "word", one_of(kLayouts), kLayouts.front(), false,
         "the activations' memory order; the weights follow as PyTorch holds them: NCHW: OIHW; NHWC: "
         "channels_last O x kh x kw x I (dense), kh x kw x (c x multiplier) (depthwise)"},
        {"schedule", "mapping", "the schedule keys of the operator", "the default rule", false,
         "how the kernel computes; every knob it leaves out gets the default rule's value"},
    };
  }();
  return keys;
}

Spec parse_spec_text(const std::string& text, const std::string& path, OnInvalidWorkload on_invalid) {
  if (text.size() > kMaxSpecBytes) {
    throw InputError({Diagnostic{SourceLocation{path, 0, 0}, too_big(text.size())}});
  }
  SpecReader reader(path, on_invalid);
  const YAML::Node root =
      yaml::load(text, path, "spec", "put every workload under one 'workloads' list, or use several spec files");
  Spec spec = reader.read(root);
  if (!reader.diagnostics().empty()) throw InputError(std::move(reader.diagnostics()));
  return spec;
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
  for (const auto* words : {&kTopKeys, &kDtypes, &kMaths, &kLayouts, &kEpilogues, &kActivations, &kPaddingWords}) {
    for (const std::string& w : *words) word(w);
  }
  word(kRuntimeBatch);
  word("true");
  word("false");
  for (const Operator* op : operators()) {
    word(op->name);
    for (const std::string& key : workload_keys(*op)) word(key);
    for (const WorkloadKey& k : op->workload_keys) {
      around(k.lo);
      around(k.hi);
    }
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
                          static_cast<long long>(kMaxDilation), static_cast<long long>(kMaxPadding),
                          static_cast<long long>(kMaxBatch), kMaxPlane, kMaxTensor, 0x7fffffffLL}) {
    around(limit);
  }
  return v;
}

Spec parse_spec_file(const std::string& path, OnInvalidWorkload on_invalid) {
  return parse_spec_text(yaml::read_file(path, kMaxSpecBytes, "spec", too_big), path, on_invalid);
}

std::string library_name_problem(const std::string& name) {
  if (!is_c_identifier(name) || name.size() > kMaxLibraryName) {
    return "must be a C identifier (letters, digits, '_'; not starting with a digit) of at most " +
           std::to_string(kMaxLibraryName) + " characters, got " + quoted(name);
  }
  std::string why;
  if (kReservedWords.count(name) != 0) {
    why = name == "std" || name == "posix" ? "a namespace the C++ standard reserves" : "a C or C++ keyword";
  } else if (name.find("__") != std::string::npos) {
    why = "reserved (C and C++ reserve names with '__')";
  } else if (name[0] == '_' && std::isupper(static_cast<unsigned char>(name[1]))) {
    why = "reserved (C and C++ reserve names of '_' and a capital letter)";
  }
  if (why.empty()) return "";
  return quoted(name) + " is " + why + "; a library name is a C identifier that is neither a C or C++ keyword "
         "nor reserved (std, posix, '_' and a capital letter, '__' anywhere)";
}

}  // namespace convgen::gen
