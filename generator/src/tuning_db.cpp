// The tuning database: its reader (the same located, bounded checks and
// messages as a spec's, yaml_reader.hpp, over the database's own schema)
// beside its writer, the lookup of a kernel's entry, and the fingerprint
// check that decides whether an entry is current.
#include "convgen/gen/tuning_db.hpp"

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <set>
#include <stdexcept>
#include <tuple>

#include "convgen/gen/digest.hpp"
#include "convgen/gen/render.hpp"
#include "convgen/gen/operator.hpp"
#include "convgen/gen/output.hpp"
#include "schedule_reader.hpp"
#include "yaml_reader.hpp"

namespace convgen::gen {

const TuningEntry* TuningDb::find(const std::string& kernel, const std::string& gpu) const {
  for (const TuningEntry& e : entries) {
    if (e.kernel == kernel && e.gpu.name == gpu) return &e;
  }
  return nullptr;
}

std::vector<std::string> TuningDb::gpus() const {
  std::vector<std::string> names;
  for (const TuningEntry& e : entries) {
    if (std::find(names.begin(), names.end(), e.gpu.name) == names.end()) names.push_back(e.gpu.name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

void TuningDb::put(TuningEntry entry) {
  const auto key = [](const TuningEntry& e) { return std::tie(e.kernel, e.gpu.name); };
  const auto it = std::lower_bound(entries.begin(), entries.end(), entry,
                                   [&](const TuningEntry& a, const TuningEntry& b) { return key(a) < key(b); });
  if (it != entries.end() && key(*it) == key(entry)) {
    *it = std::move(entry);
  } else {
    entries.insert(it, std::move(entry));
  }
}

// ---------------------------------------------------------------------------
// Reading.

namespace {

const std::vector<std::string> kTopKeys = {"convgen_tuning", "entries", "end"};
const std::vector<std::string> kEntryKeys = {
    "kernel",     "op",         "gpu",      "sms",  "compute_capability", "schedule",    "objective", "time_us",
    "default_us", "default_schedule", "candidates", "tuning_s", "date", "convgen", "fingerprint", "checksum"};
const std::vector<std::string> kCandidateKeys = {"compiled", "verified", "rejected", "failed"};
const std::vector<std::string> kEndKeys = {"entries"};
const std::vector<std::string> kObjectives = {"hot", "cold"};
// Format 1 had no checksums and no end record: `convgen vouch` reads it.
constexpr int kFormatWithoutChecksums = 1;
constexpr int kMaxEntries = 100000;
// A database holds an entry (~800 bytes) per kernel and GPU: 1 MiB is some
// 1,300 of them, and bounds yaml-cpp's memory as the spec's limit does a spec's.
constexpr std::uintmax_t kMaxBytes = 1u << 20;

const std::string kRetuneOrFlag =
    "tune the kernel again (convgen tune drops the entry and tunes it), restore the file from version control, "
    "or pass --allow-unverified-tuning (CMake: ALLOW_UNVERIFIED_TUNING) to use it marked unverified in a build; "
    "`convgen vouch FILE` re-signs it on your word (what `convgen tune merge`, which signs what it writes, needs)";

std::string too_big(std::uintmax_t bytes) {
  return "the tuning database is " + std::to_string(bytes) + " bytes; one is at most " + std::to_string(kMaxBytes) +
         " bytes (1 MiB): keep one database per spec";
}

using yaml::join;
using yaml::quoted;
using yaml::shown;
using yaml::text_of;

// ---------------------------------------------------------------------------
// Rendering: the values as the file writes them, shared by the writer and
// the checksum.

// A value as YAML writes it: plain when it is a simple word, else quoted.
std::string yaml_string(const std::string& s) {
  const bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
  if (plain && !std::isdigit(static_cast<unsigned char>(s.front()))) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20 && c != '\t') {  // a line break or other control character
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", static_cast<unsigned char>(c));
      out += escaped;
      continue;
    }
    out += c;
  }
  return out + "\"";
}

// Four significant digits at least (times are microseconds and seconds),
// and never 0 for a positive time.
std::string number(double v) {
  char text[64];
  std::snprintf(text, sizeof text, v >= 100 ? "%.1f" : "%.4g", v);
  return text;
}

// The value the reader gets back for `v` as number() writes it: what the
// writer signs, so that the checksum holds for the file's text.
double as_read_back(double v) { return std::strtod(number(v).c_str(), nullptr); }

// The schedule as a flow mapping, in the order of the algorithm's knobs then
// the operator's common ones, then any knob of another algorithm the entry
// holds (which the plan refuses: an edit, which the checksum must cover and
// a rewrite must keep).
std::string schedule_text(const TuningEntry& e) {
  const Algorithm* algorithm = e.op->algorithm(e.schedule.algorithm.value_or(""));
  std::string text = "{algorithm: " + (algorithm != nullptr ? algorithm->name : std::string("?"));
  if (algorithm == nullptr) return text + "}";
  std::vector<const std::vector<Knob>*> knob_lists = {&algorithm->knobs, &e.op->common_knobs};
  for (const Algorithm* other : e.op->algorithms) {
    if (other != algorithm) knob_lists.push_back(&other->knobs);
  }
  // A value is written once, under the first knob that holds it (knobs of
  // different algorithms may share a value under different keys).
  std::set<std::string> written;
  for (const std::vector<Knob>* knobs : knob_lists) {
    for (const Knob& k : *knobs) {
      if (!e.schedule.has(k.values.front()) ||
          std::any_of(k.values.begin(), k.values.end(), [&](const std::string& v) { return written.count(v) > 0; })) {
        continue;
      }
      written.insert(k.values.begin(), k.values.end());
      text += ", " + k.key + ": ";
      if (k.values.size() > 1) {
        text += "[";
        for (size_t i = 0; i < k.values.size(); ++i) {
          text += (i ? ", " : "") + k.word(e.schedule.value(k.values[i]).value_or(0));
        }
        text += "]";
      } else {
        text += k.word(*e.schedule.value(k.values.front()));
      }
    }
  }
  return text + "}";
}

std::string checksum_of(const TuningEntry& e) { return sha256_hex(tuning_entry_canonical(e)); }

// ---------------------------------------------------------------------------
// Reading.

bool is_hex(const std::string& v, size_t digits) {
  return v.size() == digits &&
         std::all_of(v.begin(), v.end(), [](char c) { return std::isdigit(c) || (c >= 'a' && c <= 'f'); });
}

// One entry of the list; false (with diagnostics) when it is not usable.
// An entry whose checksum fails is an error, or with `trust` kept and
// marked unverified.
bool read_entry(yaml::Reader& r, const YAML::Node& item, TuningTrust trust, TuningEntry& e) {
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
                          shown(kernel));
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
  // Format 1 entries name no version (`convgen vouch` reads them): the
  // vouching convgen's own stands in.
  const YAML::Node version = trust == TuningTrust::kVouch ? item["convgen"] : required("convgen");
  if (version) {
    const std::string v = r.text(version, "convgen", "the version of the convgen that tuned it").value_or("");
    if (!v.empty() && (!std::isdigit(static_cast<unsigned char>(v.front())) ||
                       !std::all_of(v.begin(), v.end(), [](char c) { return std::isdigit(c) || c == '.'; }))) {
      r.error(version, "'convgen' must be a version such as " + std::string(kConvgenVersion) + ", got " + quoted(v));
    }
    e.convgen_version = v;
  }
  if (const YAML::Node f = required("fingerprint")) {
    const std::string v = r.text(f, "fingerprint", "16 hex digits").value_or("");
    if (!v.empty() && !is_hex(v, 16)) {
      r.error(f, "'fingerprint' must be 16 lower-case hex digits (as convgen tune writes it), got " + quoted(v));
    }
    e.fingerprint = v;
  }
  const YAML::Node checksum = trust == TuningTrust::kVouch ? item["checksum"] : required("checksum");
  std::string written;
  if (checksum) {
    written = r.text(checksum, "checksum", "64 hex digits").value_or("");
    if (!written.empty() && !is_hex(written, 64)) {
      r.error(checksum, "'checksum' must be 64 lower-case hex digits (the SHA-256 convgen writes), got " +
                            yaml::quoted(written));
    }
  }
  if (r.error_count() != errors_before) return false;
  // The content is well formed: does it still say what convgen signed?
  e.checksum_matches = checksum && written == checksum_of(e);
  if (!e.checksum_matches && trust == TuningTrust::kVerify) {
    r.error(item, "the entry for " + e.kernel + " on '" + e.gpu.name +
                      "' does not match its checksum: it was changed after convgen wrote it, so no measurement "
                      "vouches for its schedule and times; " + kRetuneOrFlag);
    return false;
  }
  return true;
}

// The end record, `end: {entries: N}`: convgen writes it last, so a file
// cut short lacks it, and N must count the list's items.
void read_end(yaml::Reader& r, const YAML::Node& root, const YAML::Node& entries) {
  const std::string restore =
      "restore the file from version control or tune again (`convgen vouch` rewrites it if you vouch for what "
      "is left)";
  const YAML::Node end = root["end"];
  if (!end) {
    r.error(root, "the database has no end record 'end: {entries: N}' after its entries: convgen writes it "
                  "last, so the file was cut short (or the record removed); " + restore);
    return;
  }
  if (!end.IsMap() || !end["entries"]) {
    r.error(end, "'end' must be the end record {entries: N}, N the number of entries, got " + text_of(end));
    return;
  }
  r.check_keys(end, kEndKeys, "in 'end'");
  const std::optional<int> count = r.integer(end["entries"], "entries", 0, kMaxEntries);
  if (count && static_cast<size_t>(*count) != entries.size()) {
    r.error(end["entries"], "the end record counts " + std::to_string(*count) + " entries, but the file holds " +
                                std::to_string(entries.size()) +
                                ": entries were removed or added after convgen wrote it; " + restore);
  }
}

TuningDb read_db(yaml::Reader& r, const YAML::Node& root, TuningTrust trust) {
  TuningDb db;
  db.file = r.file();
  if (!r.top_level(root, kTopKeys, "tuning database")) return db;
  const YAML::Node format = root["convgen_tuning"];
  const std::string current = std::to_string(kTuningFormat);
  const std::string old = std::to_string(kFormatWithoutChecksums);
  if (!format) {
    r.error(root, "missing key 'convgen_tuning': the database format, " + current);
    return db;
  }
  const bool old_format = format.IsScalar() && format.Scalar() == old;
  if (old_format && trust != TuningTrust::kVouch) {
    r.error(format, "this is a tuning database of format 1, whose entries carry no checksum; this convgen reads "
                    "format " + current + ". Tune again, or, if you trust every entry, rewrite it in format " +
                        current + " with `convgen vouch FILE` (you vouch that each entry was measured as it says)");
    return db;
  }
  if (!old_format && (!format.IsScalar() || format.Scalar() != current)) {
    r.error(format, "'convgen_tuning' is the database format, " + current +
                        " (the only one this convgen reads), got " + shown(format));
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
    if (!read_entry(r, item, trust, e)) continue;
    if (const TuningEntry* first = db.find(e.kernel, e.gpu.name)) {
      r.error(item, "a second entry for kernel " + e.kernel + " on GPU '" + e.gpu.name + "'; the first is at " +
                        first->where.str() + " (one entry per kernel and GPU)");
      continue;
    }
    db.put(std::move(e));
  }
  if (trust != TuningTrust::kVouch) read_end(r, root, entries);
  return db;
}

}  // namespace

std::string tuning_entry_canonical(const TuningEntry& e) {
  // One "key=value" line per field. Free text is length-prefixed, so no
  // value can imitate a line break; numbers are hex floats, exact.
  const auto text = [](const std::string& v) { return std::to_string(v.size()) + ":" + v; };
  const auto real = [](double v) {
    char out[64];
    std::snprintf(out, sizeof out, "%a", v);
    return std::string(out);
  };
  std::string c = "convgen tuning entry, format " + std::to_string(kTuningFormat) + "\n";
  c += "kernel=" + text(e.kernel) + "\n";
  c += "op=" + text(e.op != nullptr ? e.op->name : "") + "\n";
  c += "gpu=" + text(e.gpu.name) + "\n";
  c += "sms=" + std::to_string(e.gpu.sms) + "\n";
  c += "compute_capability=" + text(e.gpu.compute_capability) + "\n";
  c += "schedule=" + text(e.op != nullptr ? schedule_text(e) : "") + "\n";
  c += "objective=" + text(e.objective) + "\n";
  c += "time_us=" + real(e.time_us) + "\n";
  c += "default_us=" + real(e.default_us) + "\n";
  c += "default_schedule=" + text(e.default_schedule) + "\n";
  c += "candidates=" + std::to_string(e.compiled) + " " + std::to_string(e.verified) + " " +
       std::to_string(e.rejected) + " " + std::to_string(e.failed) + "\n";
  c += "tuning_s=" + real(e.tuning_s) + "\n";
  c += "date=" + text(e.date) + "\n";
  c += "convgen=" + text(e.convgen_version) + "\n";
  c += "fingerprint=" + text(e.fingerprint) + "\n";
  return c;
}

TuningDb parse_tuning_text(const std::string& text, const std::string& path, TuningTrust trust) {
  if (text.size() > kMaxBytes) throw InputError({Diagnostic{SourceLocation{path, 0, 0}, too_big(text.size())}});
  yaml::Reader reader(path, true);
  const YAML::Node root = yaml::load(text, path, "tuning database", "keep one 'entries' list");
  TuningDb db = read_db(reader, root, trust);
  if (!reader.diagnostics().empty()) throw InputError(std::move(reader.diagnostics()));
  return db;
}

TuningDb parse_tuning_file(const std::string& path, TuningTrust trust) {
  return parse_tuning_text(yaml::read_file(path, kMaxBytes, "tuning database", too_big), path, trust);
}

// ---------------------------------------------------------------------------
// Writing.

std::string tuning_text(const TuningDb& db) {
  std::string t =
      "# convgen tuning database: the schedule `convgen tune` measured fastest for each kernel\n"
      "# on each GPU. Commit it beside the spec; the build applies the entries for its target GPU\n"
      "# (convgen generate --tuning FILE [--tuning-gpu NAME]; CMake: convgen_add_library(... TUNING FILE)).\n"
      "# A schedule written in the spec wins over an entry; an entry whose fingerprint is not the\n"
      "# current generator's is reported and ignored. Times are microseconds.\n"
      "# Each entry's checksum covers its content and the end record counts the entries: an entry\n"
      "# edited by hand, or a file cut short, is rejected (docs/tuning.md).\n"
      "convgen_tuning: " + std::to_string(kTuningFormat) + "\n";
  t += db.entries.empty() ? "entries: []\n" : "entries:\n";
  for (const TuningEntry& entry : db.entries) {
    if (!entry.checksum_matches) {
      throw std::logic_error("the tuning entry for " + entry.kernel + " (" + entry.where.str() +
                             ") is unverified: convgen signs only entries it measured, or that `convgen vouch` "
                             "was asked to vouch for");
    }
    // The values as the file will give them back, which the checksum covers.
    TuningEntry e = entry;
    e.time_us = as_read_back(e.time_us);
    e.default_us = as_read_back(e.default_us);
    e.tuning_s = e.tuning_s > 0 ? as_read_back(e.tuning_s) : 0;
    t += "  - kernel: " + e.kernel + "\n";
    t += "    op: " + e.op->name + "\n";
    t += "    gpu: " + yaml_string(e.gpu.name) + "\n";
    t += "    sms: " + std::to_string(e.gpu.sms) + "\n";
    t += "    compute_capability: " + yaml_string(e.gpu.compute_capability) + "\n";
    t += "    schedule: " + schedule_text(e) + "\n";
    t += "    objective: " + e.objective + "\n";
    t += "    time_us: " + number(e.time_us) + "\n";
    t += "    default_us: " + number(e.default_us) + "\n";
    if (!e.default_schedule.empty()) t += "    default_schedule: " + yaml_string(e.default_schedule) + "\n";
    t += "    candidates: {compiled: " + std::to_string(e.compiled) + ", verified: " + std::to_string(e.verified) +
         ", rejected: " + std::to_string(e.rejected) + ", failed: " + std::to_string(e.failed) + "}\n";
    if (e.tuning_s > 0) t += "    tuning_s: " + number(e.tuning_s) + "\n";
    t += "    date: " + yaml_string(e.date) + "\n";
    t += "    convgen: " + yaml_string(e.convgen_version) + "\n";
    t += "    fingerprint: " + yaml_string(e.fingerprint) + "\n";
    t += "    checksum: \"" + checksum_of(e) + "\"\n";
  }
  // Last, so that a file cut short lacks it.
  t += "end: {entries: " + std::to_string(db.entries.size()) + "}\n";
  return t;
}

namespace {

// The folder and the file name of a database's path, for LockedFolder.
std::pair<std::string, std::string> split_path(const std::string& path) {
  const std::filesystem::path p(path);
  if (!p.has_filename()) throw std::runtime_error("the tuning database path " + path + " names no file");
  return {p.has_parent_path() ? p.parent_path().string() : ".", p.filename().string()};
}

bool same_schedule(const TuningEntry& a, const TuningEntry& b) {
  return a.schedule.algorithm == b.schedule.algorithm && a.schedule.values == b.schedule.values;
}

}  // namespace

namespace {

// Under the lock of the database's folder: `rewrite` gets the file's text
// (none: no file yet) and returns the new text, written by the write
// protocol only when it differs. A link or a folder at the name is an error
// naming it.
void rewrite_locked(const std::string& path, double lock_timeout_s,
                    const std::function<std::string(const std::optional<std::string>&)>& rewrite) {
  const auto [dir, name] = split_path(path);
  const LockedFolder folder(dir, lock_timeout_s, /*create=*/false);
  folder.remove_stale_temps();
  const std::optional<std::string> before = folder.read_regular(name);
  const std::string after = rewrite(before);
  if (before != after) folder.commit({{name, after}});
}

}  // namespace

std::vector<std::string> drop_unverified_entries(TuningDb& db) {
  std::vector<std::string> notes;
  const auto unverified = std::remove_if(db.entries.begin(), db.entries.end(), [&](const TuningEntry& e) {
    if (e.checksum_matches) return false;
    notes.push_back("dropped the entry for " + e.kernel + " on '" + e.gpu.name + "' (" + e.where.str() +
                    "): its checksum fails (changed after convgen wrote it)");
    return true;
  });
  db.entries.erase(unverified, db.entries.end());
  return notes;
}

void write_tuning_file(const std::string& path, const TuningDb& db, double lock_timeout_s) {
  rewrite_locked(path, lock_timeout_s, [&](const std::optional<std::string>&) { return tuning_text(db); });
}

TuningDb update_tuning_file(const std::string& path, TuningTrust trust, const std::function<void(TuningDb&)>& edit,
                            double lock_timeout_s) {
  TuningDb db;
  rewrite_locked(path, lock_timeout_s, [&](const std::optional<std::string>& text) {
    if (!text) throw std::runtime_error("cannot read " + path + ": no such file");
    db = parse_tuning_text(*text, path, trust);
    edit(db);
    return tuning_text(db);
  });
  return db;
}

TuningMerge merge_into_tuning_file(const std::string& path, const std::vector<TuningEntry>& entries,
                                   const std::string& from, double lock_timeout_s, bool drop_unverified,
                                   MergePolicy policy) {
  TuningMerge merge;
  // Read under the lock: another run's entries written since are kept.
  rewrite_locked(path, lock_timeout_s, [&](const std::optional<std::string>& text) {
    if (text) {
      merge.db = parse_tuning_text(*text, path,
                                   drop_unverified ? TuningTrust::kAllowUnverified : TuningTrust::kVerify);
    }
    merge.db.file = path;
    merge.notes = drop_unverified_entries(merge.db);
    for (const TuningEntry& e : entries) {
      const TuningEntry* old = merge.db.find(e.kernel, e.gpu.name);
      const std::string which = e.kernel + " on '" + e.gpu.name + "'" + (from.empty() ? "" : " from " + from);
      if (old != nullptr && policy == MergePolicy::kKeepFaster) {
        char times[120];
        std::snprintf(times, sizeof times, "%g us against %g us", e.time_us, old->time_us);
        if (old->fingerprint != e.fingerprint) {
          ++merge.conflicts;
          merge.notes.push_back(path + ": conflicting fingerprints: the entry for " + which + " has " +
                                e.fingerprint + ", the one held " + old->fingerprint +
                                " (another generator version or template); the new one is put, and a build "
                                "ignores whichever is not its own");
        } else if (old->objective != e.objective) {
          merge.notes.push_back(path + ": the entry for " + which + " was measured " + e.objective +
                                ", the one held " + old->objective + ": not comparable; the new one is put");
        } else if (!(e.time_us < old->time_us)) {
          ++merge.kept;
          merge.notes.push_back(path + ": kept the entry held for " + e.kernel + " on '" + e.gpu.name +
                                "': faster than the one" + (from.empty() ? "" : " from " + from) + " (" + times +
                                ")");
          continue;
        }
      }
      if (old == nullptr) {
        ++merge.added;
      } else {
        ++merge.replaced;
        if (!same_schedule(*old, e)) {
          merge.notes.push_back(path + ": the entry for " + e.kernel + " on '" + e.gpu.name + "'" +
                                (from.empty() ? "" : " from " + from) + " replaces one with another schedule (" +
                                schedule_text(*old) + " -> " + schedule_text(e) + ")");
        }
      }
      merge.db.put(e);
    }
    return tuning_text(merge.db);
  });
  return merge;
}

std::string tuning_fingerprint(const std::string& template_text) {
  // FNV-1a, 64 bits: stable across machines and compilers (std::hash is not).
  std::uint64_t h = 0xcbf29ce484222325ULL;
  const auto mix = [&h](const std::string& s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 0x100000001b3ULL;
    }
    h ^= 0xff;
    h *= 0x100000001b3ULL;
  };
  mix(kConvgenVersion);
  // The code, not the comments: a template's text without its comment lines
  // (`//` first on the line, no section tag in it), blank lines and trailing
  // blanks, so that an edit of its prose, or of a partial's, leaves the
  // entries it timed valid.
  std::istringstream lines(template_text);
  std::string code, line;
  while (std::getline(lines, line)) {
    line.erase(line.find_last_not_of(" \t\r") + 1);
    const size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos) continue;
    // A comment line that opens or closes a section decides which code is
    // rendered: it stays.
    const bool section = line.find("{{#") != std::string::npos || line.find("{{^") != std::string::npos ||
                         line.find("{{/") != std::string::npos;
    if (line.compare(first, 2, "//") == 0 && !section) continue;
    code += line + "\n";
  }
  mix(code);
  char text[17];
  std::snprintf(text, sizeof text, "%016" PRIx64, h);
  return text;
}

std::map<std::string, std::string> tuning_fingerprints(const Templates& templates) {
  std::map<std::string, std::string> fingerprints;
  for (const auto& [file, text] : templates.kernels) fingerprints[file] = tuning_fingerprint(text);
  return fingerprints;
}


// ---------------------------------------------------------------------------
// Applying.

std::string stale_entry_note(const TuningEntry& entry, const std::map<std::string, std::string>& fingerprints) {
  const Algorithm* algorithm = entry.op != nullptr ? entry.op->algorithm(entry.schedule.algorithm.value_or("")) : nullptr;
  const auto current = algorithm != nullptr ? fingerprints.find(algorithm->template_file) : fingerprints.end();
  if (current == fingerprints.end()) {
    // Without the current fingerprint no entry can be trusted.
    return "ignored: no fingerprint is known for the template of the entry's algorithm, so it cannot be checked";
  }
  if (current->second != entry.fingerprint) {
    return "ignored: the entry for " + entry.kernel + " has fingerprint " + entry.fingerprint +
           ", but this generator and template " + algorithm->template_file + " give " + current->second +
           " (stale: tune it again)";
  }
  return "";
}

std::string TuningSelection::applied_gpu() const {
  if (db == nullptr || !gpu.empty()) return gpu;
  const std::vector<std::string> gpus = db->gpus();
  return gpus.size() == 1 ? gpus.front() : "";
}

// Which GPU's entries apply is the command's choice: a choice the database
// cannot serve is a usage error, at the database's first line.
void TuningSelection::begin_planning(std::vector<Diagnostic>& notes) const {
  stale_ = 0;
  if (db == nullptr) return;
  const std::vector<std::string> gpus = db->gpus();
  std::string names;
  for (const std::string& g : gpus) names += (names.empty() ? "'" : ", '") + g + "'";
  const SourceLocation top{db->file, 1, 1};
  if (gpu.empty() && gpus.size() > 1) {
    throw UsageError({{top, "the tuning database holds entries for several GPUs (" + names +
                                "); name the target with --tuning-gpu (CMake: TUNING_GPU)"}});
  }
  if (gpu.empty() || std::find(gpus.begin(), gpus.end(), gpu) != gpus.end()) return;
  const std::string holds = gpus.empty() ? "which holds no entry" : "whose entries are for " + names;
  if (!allow_untuned) {
    throw UsageError({{top, "--tuning-gpu '" + gpu + "' (CMake: TUNING_GPU) matches no entry of the tuning database, " +
                                holds + "; " + (gpus.empty() ? "" : "name one of those GPUs, or ") +
                                "pass --allow-untuned (CMake: ALLOW_UNTUNED) to build with the default rule's "
                                "schedules"}});
  }
  notes.push_back({top, "no entry is for GPU '" + gpu + "' (the tuning database, " + holds +
                            "); with --allow-untuned every kernel keeps the default rule's schedule"});
}

std::optional<LookedUpSchedule> TuningSelection::find(const Workload& wl, const std::string& kernel,
                                                      std::vector<Diagnostic>& notes) const {
  const std::string target = applied_gpu();
  if (target.empty()) return std::nullopt;
  const TuningEntry* entry = db->find(kernel, target);
  if (entry == nullptr) return std::nullopt;
  if (entry->op != wl.op) {
    throw InputError({{entry->where, "the entry for " + entry->kernel + " names op '" +
                                        (entry->op != nullptr ? entry->op->name : std::string("?")) +
                                        "', but that kernel is a " + wl.op->name + " (" + wl.where.str() + ")"}});
  }
  if (std::string note = stale_entry_note(*entry, fingerprints); !note.empty()) {
    if (stale_ < kStaleListed) notes.push_back({entry->where, std::move(note)});
    ++stale_;
    return std::nullopt;
  }
  LookedUpSchedule s;
  s.schedule = entry->schedule;
  s.where = entry->where;
  s.tuned_gpu = target;
  if (!entry->checksum_matches) {
    // Only the reader's TuningTrust::kAllowUnverified keeps such an entry.
    // Its times are not shown: nothing says the schedule was ever measured.
    s.origin = ScheduleOrigin::kUnverified;
    notes.push_back({entry->where, "the entry for " + entry->kernel +
                                       " does not match its checksum (changed after convgen wrote it); its schedule "
                                       "is used UNVERIFIED, as --allow-unverified-tuning asks"});
    return s;
  }
  s.origin = ScheduleOrigin::kTuned;
  s.tuned_us = entry->time_us;
  s.default_us = entry->default_us;
  return s;
}

void TuningSelection::report_unmatched(const std::set<std::string>& kernels, std::vector<Diagnostic>& notes) const {
  if (db == nullptr) return;
  if (stale_ > kStaleListed) {
    notes.push_back({SourceLocation{db->file, 1, 1},
                     std::to_string(stale_ - kStaleListed) + " more of the tuning database's entries are stale as "
                     "the " + std::to_string(kStaleListed) + " above are, and ignored (" + std::to_string(stale_) +
                     " in all): tune them again (convgen tune; docs/tuning.md)"});
  }
  std::vector<const TuningEntry*> unmatched;
  for (const TuningEntry& e : db->entries) {
    if (kernels.count(e.kernel) == 0) unmatched.push_back(&e);
  }
  if (unmatched.empty()) return;
  // Sorted by line: the order a reader of the file meets them.
  std::sort(unmatched.begin(), unmatched.end(),
            [](const TuningEntry* a, const TuningEntry* b) { return a->where.line < b->where.line; });
  constexpr size_t kListed = 10;
  std::string list;
  for (size_t i = 0; i < unmatched.size() && i < kListed; ++i) {
    list += (i ? ", " : "") + unmatched[i]->kernel + " (line " + std::to_string(unmatched[i]->where.line) + ")";
  }
  if (unmatched.size() > kListed) list += " and " + std::to_string(unmatched.size() - kListed) + " more";
  notes.push_back({unmatched.front()->where,
                   std::to_string(unmatched.size()) + " of the tuning database's " +
                       std::to_string(db->entries.size()) + " entries match no kernel of the specs and are not "
                       "used (a workload changed or removed since tuning, or a database for other specs): " + list});
}

}  // namespace convgen::gen
