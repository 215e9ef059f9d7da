// The tuning database's reader: the same located, bounded checks and
// messages as a spec's (yaml_reader.hpp), over the database's own schema.
#include <algorithm>
#include <cctype>

#include "convgen/gen/tuning.hpp"
#include "schedule_reader.hpp"
#include "yaml_reader.hpp"

namespace convgen::gen {

namespace {

const std::vector<std::string> kTopKeys = {"convgen_tuning", "entries"};
const std::vector<std::string> kEntryKeys = {
    "kernel", "op", "gpu", "sms", "compute_capability", "schedule", "objective", "time_us", "default_us",
    "default_schedule", "candidates", "tuning_s", "date", "fingerprint"};
const std::vector<std::string> kCandidateKeys = {"compiled", "verified", "rejected", "failed"};
const std::vector<std::string> kObjectives = {"hot", "cold"};
constexpr int kFormat = 1;
// A database holds an entry (~700 bytes) per kernel and GPU: 1 MiB is some
// 1,500 of them, and bounds yaml-cpp's memory as the spec's limit does a spec's.
constexpr std::uintmax_t kMaxBytes = 1u << 20;

std::string too_big(std::uintmax_t bytes) {
  return "the tuning database is " + std::to_string(bytes) + " bytes; one is at most " + std::to_string(kMaxBytes) +
         " bytes (1 MiB): keep one database per spec";
}

using yaml::join;
using yaml::quoted;
using yaml::text_of;

// One entry of the list; false (with diagnostics) when it is not usable.
bool read_entry(yaml::Reader& r, const YAML::Node& item, TuningEntry& e) {
  const size_t errors_before = r.error_count();
  if (!item.IsMap()) {
    r.error(item, "each entry must be a mapping with the keys " + join(kEntryKeys));
    return false;
  }
  r.check_keys(item, kEntryKeys, "in a tuning entry");
  e.where = r.at(item);
  const auto required = [&](const char* key) {
    const YAML::Node node = item[key];
    if (!node) r.error(item, std::string("missing key '") + key + "' in a tuning entry");
    return node;
  };
  if (const YAML::Node kernel = required("kernel")) {
    if (kernel.IsScalar() && is_c_identifier(kernel.Scalar()) && kernel.Scalar().size() <= 200) {
      e.kernel = kernel.Scalar();
    } else {
      r.error(kernel, "'kernel' must be a kernel name (a C identifier, as `convgen list` prints), got " +
                          quoted(text_of(kernel)));
    }
  }
  if (const YAML::Node op = required("op")) {
    std::vector<std::string> names;
    for (const Operator* known : operators()) names.push_back(known->name);
    if (auto v = r.word(op, "op", names)) e.op = find_operator(*v);
  }
  if (const YAML::Node gpu = required("gpu")) e.gpu.name = r.text(gpu, "gpu", "the GPU's name").value_or("");
  if (const YAML::Node sms = required("sms")) e.gpu.sms = r.integer(sms, "sms", 1, 100000).value_or(0);
  if (const YAML::Node cc = required("compute_capability")) {
    const std::string v = r.text(cc, "compute_capability", "major.minor, e.g. \"9.0\"").value_or("");
    const size_t dot = v.find('.');
    if (!v.empty() && (dot == std::string::npos || dot == 0 || dot + 1 == v.size() ||
                       !std::all_of(v.begin(), v.end(), [](char c) { return std::isdigit(c) || c == '.'; }))) {
      r.error(cc, "'compute_capability' must be major.minor, e.g. \"9.0\", got " + quoted(v));
    }
    e.gpu.compute_capability = v;
  }
  if (const YAML::Node schedule = required("schedule"); schedule && e.op != nullptr) {
    read_schedule(r, schedule, *e.op, e.schedule);
    if (schedule.IsMap() && !schedule["algorithm"]) r.error(schedule, "a tuned schedule names its 'algorithm'");
  }
  if (const YAML::Node objective = item["objective"]) {
    if (auto v = r.word(objective, "objective", kObjectives)) e.objective = *v;
  }
  if (const YAML::Node t = required("time_us")) e.time_us = r.positive(t, "time_us").value_or(0);
  if (const YAML::Node t = required("default_us")) e.default_us = r.positive(t, "default_us").value_or(0);
  if (const YAML::Node d = item["default_schedule"]) {
    e.default_schedule = r.text(d, "default_schedule", "the default rule's schedule in words").value_or("");
  }
  if (const YAML::Node c = item["candidates"]) {
    if (!c.IsMap()) {
      r.error(c, "'candidates' must be a mapping with the keys " + join(kCandidateKeys));
    } else {
      r.check_keys(c, kCandidateKeys, "in 'candidates'");
      int* counts[] = {&e.compiled, &e.verified, &e.rejected, &e.failed};
      for (size_t i = 0; i < kCandidateKeys.size(); ++i) {
        if (const YAML::Node n = c[kCandidateKeys[i]]) {
          *counts[i] = r.integer(n, kCandidateKeys[i], 0, 100000000).value_or(0);
        }
      }
    }
  }
  if (const YAML::Node t = item["tuning_s"]) e.tuning_s = r.positive(t, "tuning_s").value_or(0);
  if (const YAML::Node d = required("date")) {
    const std::string v = r.text(d, "date", "YYYY-MM-DD").value_or("");
    const bool ok = v.size() == 10 && v[4] == '-' && v[7] == '-' &&
                    std::all_of(v.begin(), v.end(), [](char c) { return std::isdigit(c) || c == '-'; });
    if (!v.empty() && !ok) r.error(d, "'date' must be YYYY-MM-DD, got " + quoted(v));
    e.date = v;
  }
  if (const YAML::Node f = required("fingerprint")) {
    const std::string v = r.text(f, "fingerprint", "16 hex digits").value_or("");
    if (!v.empty() && (v.size() != 16 || !std::all_of(v.begin(), v.end(), [](char c) {
                         return std::isdigit(c) || (c >= 'a' && c <= 'f');
                       }))) {
      r.error(f, "'fingerprint' must be 16 lower-case hex digits (as convgen tune writes it), got " + quoted(v));
    }
    e.fingerprint = v;
  }
  return r.error_count() == errors_before;
}

TuningDb read_db(yaml::Reader& r, const YAML::Node& root) {
  TuningDb db;
  db.file = r.file();
  if (!root.IsMap()) {
    r.error(root, "a tuning database must be a mapping with the keys " + join(kTopKeys));
    return db;
  }
  r.check_keys(root, kTopKeys, "at the top level of a tuning database");
  const YAML::Node format = root["convgen_tuning"];
  if (!format) {
    r.error(root, "missing key 'convgen_tuning': the database format, " + std::to_string(kFormat));
  } else if (!format.IsScalar() || format.Scalar() != std::to_string(kFormat)) {
    r.error(format, "'convgen_tuning' is the database format, " + std::to_string(kFormat) +
                        " (the only one this convgen reads), got " + quoted(text_of(format)));
    return db;
  }
  const YAML::Node entries = root["entries"];
  if (!entries) {
    r.error(root, "missing key 'entries': a list of tuned kernels (may be [])");
    return db;
  }
  if (!entries.IsSequence()) {
    r.error(entries, "'entries' must be a list of tuned kernels, got " + text_of(entries));
    return db;
  }
  for (const YAML::Node& item : entries) {
    if (r.stopped()) break;
    TuningEntry e;
    if (!read_entry(r, item, e)) continue;
    if (const TuningEntry* first = db.find(e.kernel, e.gpu.name)) {
      r.error(item, "a second entry for kernel " + e.kernel + " on GPU '" + e.gpu.name + "'; the first is at " +
                        first->where.str() + " (one entry per kernel and GPU)");
      continue;
    }
    db.put(std::move(e));
  }
  return db;
}

}  // namespace

TuningDb parse_tuning_text(const std::string& text, const std::string& path) {
  if (text.size() > kMaxBytes) throw SpecError({Diagnostic{SourceLocation{path, 0, 0}, too_big(text.size())}});
  yaml::Reader reader(path, true);
  const YAML::Node root = yaml::load(text, path, "tuning database", "keep one 'entries' list");
  TuningDb db = read_db(reader, root);
  if (!reader.diagnostics().empty()) throw SpecError(std::move(reader.diagnostics()));
  return db;
}

TuningDb parse_tuning_file(const std::string& path) {
  return parse_tuning_text(yaml::read_file(path, kMaxBytes, "tuning database", too_big), path);
}

}  // namespace convgen::gen
