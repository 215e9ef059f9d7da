// The tuning database's writer and lookups (the parser shares the spec's,
// in spec.cpp).
#include "convgen/gen/tuning.hpp"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>

#include "convgen/gen/output.hpp"

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

namespace {

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

// The schedule as a flow mapping, in the order of the algorithm's knobs then
// the operator's common ones.
std::string schedule_text(const TuningEntry& e) {
  const Algorithm* algorithm = e.op->algorithm(e.schedule.algorithm.value_or(""));
  std::string text = "{algorithm: " + (algorithm != nullptr ? algorithm->name : std::string("?"));
  if (algorithm == nullptr) return text + "}";
  for (const std::vector<Knob>* knobs : {&algorithm->knobs, &e.op->common_knobs}) {
    for (const Knob& k : *knobs) {
      if (!e.schedule.has(k.values.front())) continue;
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

}  // namespace

std::string tuning_text(const TuningDb& db) {
  std::string t =
      "# convgen tuning database: the schedule `convgen tune` measured fastest for each kernel\n"
      "# on each GPU. Commit it beside the spec; the build applies the entries for its target GPU\n"
      "# (convgen generate --tuning FILE [--tuning-gpu NAME]; CMake: convgen_add_library(... TUNING FILE)).\n"
      "# A schedule written in the spec wins over an entry; an entry whose fingerprint is not the\n"
      "# current generator's is reported and ignored. Times are microseconds.\n"
      "convgen_tuning: 1\n";
  if (db.entries.empty()) return t + "entries: []\n";
  t += "entries:\n";
  for (const TuningEntry& e : db.entries) {
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
    t += "    fingerprint: " + yaml_string(e.fingerprint) + "\n";
  }
  return t;
}

void write_tuning_file(const std::string& path, const TuningDb& db) {
  const std::string text = tuning_text(db);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) throw std::runtime_error("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw std::runtime_error("cannot rename " + tmp + " to " + path);
  }
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
  mix(template_text);
  char text[17];
  std::snprintf(text, sizeof text, "%016" PRIx64, h);
  return text;
}

}  // namespace convgen::gen
