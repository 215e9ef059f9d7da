// The tuning database is tamper-evident: a real database
// (specs/seeds.tuning.yaml, 14 entries of the direct, rows, tiles and window
// algorithms, tuned on an H100) corrupted every way a person, a tool or a
// disk could, and read back.
//
//   (a) every single-value edit of every entry: each number of the schedule
//       and the measurements changed (+1, x2, another value), each word
//       replaced by another of its kind (an algorithm, an op, hot/cold, a
//       cache policy), one character of each name, date and hex digest;
//       and the same for the entries of specs/mobilenet_v2.tuning.yaml
//       whose algorithms the seeds lack (gemm, planes);
//   (b) truncation at every line boundary, and at sampled byte offsets;
//   (c) single bit flips at 2,000 random positions;
//   (d) every knob of the entry's operator that its schedule does not hold
//       (another algorithm's, or a common one left out) added to it.
//
// yaml-cpp reads some 1 MB/s here, so each file is read once, with the
// flag; whether the default reader rejects it follows (it does exactly when
// the flag's reading fails or holds an unverified entry), and every Nth
// file is read without the flag too, to check that it does.
//
// Each corrupted file must be
//   - rejected by the reader (a parse error, a checksum that fails, the end
//     record missing or wrong), or
//   - harmless: its entries mean exactly what the original's do
//     (tuning_entry_canonical), e.g. a flip inside a comment;
// and never read as verified entries that differ from the original's. With
// TuningTrust::kAllowUnverified (--allow-unverified-tuning) it is rejected,
// harmless, or read with every changed entry unverified, and planned that
// way: no kernel whose entry changed is ever ScheduleOrigin::kTuned.
// The counts are printed; docs/hardening.md quotes them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "convgen/gen/operator.hpp"
#include "convgen/gen/plan.hpp"
#include "convgen/gen/render.hpp"
#include "convgen/gen/tuning_db.hpp"
#include "test_util.h"

namespace convgen_test {
namespace {

const std::string kGpu = "NVIDIA H100 80GB HBM3";

// Words that have siblings of the same kind in a database: replacing one by
// another keeps the file well formed, so only the checksum can catch it.
const std::vector<std::vector<std::string>> kWordKinds = {
    {"rows", "tiles", "planes", "window", "direct", "gemm"},
    {"conv2d", "depthwise_conv2d"},
    {"hot", "cold"},
    {"true", "false"},
    {"normal", "evict_first", "evict_last", "streaming"},
};

// What a database means: each entry's canonical content, and whether its
// checksum matched.
std::multiset<std::string> meaning(const TuningDb& db) {
  std::multiset<std::string> out;
  for (const TuningEntry& e : db.entries) out.insert(tuning_entry_canonical(e));
  return out;
}

// Other values for one token of a value: a number changed three ways, a
// word swapped for each sibling, a name or digest changed in one character.
std::vector<std::string> alternatives(const std::string& token) {
  std::vector<std::string> out;
  const bool number = std::all_of(token.begin(), token.end(), [](char c) { return std::isdigit(c) || c == '.'; }) &&
                      std::isdigit(static_cast<unsigned char>(token.front()));
  if (number && token.find('.') == std::string::npos) {
    const long long v = std::stoll(token);
    for (long long w : {v + 1, v * 2, v > 1 ? v - 1 : v + 2}) out.push_back(std::to_string(w));
  } else if (number) {
    std::string last = token;  // the last digit changed: the smallest edit of a time
    last.back() = last.back() == '9' ? '0' : static_cast<char>(last.back() + 1);
    char doubled[32], halved[32];
    std::snprintf(doubled, sizeof doubled, "%.4g", 2 * std::stod(token));
    std::snprintf(halved, sizeof halved, "%.4g", std::stod(token) / 2);
    out = {last, doubled, halved};
  } else {
    for (const std::vector<std::string>& kind : kWordKinds) {
      if (std::find(kind.begin(), kind.end(), token) == kind.end()) continue;
      for (const std::string& w : kind) {
        if (w != token) out.push_back(w);
      }
      return out;
    }
    // A name, a date, a digest: one character changed, first and last.
    for (size_t i : {size_t{0}, token.size() - 1}) {
      std::string t = token;
      const char c = t[i];
      t[i] = std::isdigit(static_cast<unsigned char>(c)) ? (c == '9' ? '0' : c + 1)
             : std::isalpha(static_cast<unsigned char>(c)) ? (c == 'a' ? 'b' : c == 'A' ? 'B' : 'a')
                                                            : 'x';
      if (t != token) out.push_back(t);
    }
  }
  out.erase(std::remove(out.begin(), out.end(), token), out.end());
  return out;
}

// Every single-value edit of the entries' lines: each value token (not a
// key, which the reader's key check covers) replaced by each alternative.
// With `algorithms`, only the entries whose schedule names one of them.
std::vector<std::string> single_value_edits(const std::string& text, const std::set<std::string>& algorithms = {}) {
  std::vector<std::string> edits;
  bool in_entries = false;
  bool selected = algorithms.empty();
  size_t line_start = 0;
  while (line_start < text.size()) {
    size_t line_end = text.find('\n', line_start);
    if (line_end == std::string::npos) line_end = text.size();
    const std::string line = text.substr(line_start, line_end - line_start);
    if (line.rfind("entries:", 0) == 0) in_entries = true;
    if (line.rfind("end:", 0) == 0) in_entries = false;
    if (!algorithms.empty() && line.rfind("  - ", 0) == 0) {
      // The entry's schedule line names its algorithm.
      const size_t at = text.find("{algorithm: ", line_start);
      const size_t end = text.find_first_of(",}", at);
      const std::string algorithm = text.substr(at + 12, end - at - 12);
      selected = algorithms.count(algorithm) != 0;
    }
    if (!selected) {
      line_start = line_end + 1;
      continue;
    }
    const size_t colon = line.find(": ");
    if (in_entries && colon != std::string::npos && line.rfind("    ", 0) == 0) {
      // Tokens after the key: runs of [A-Za-z0-9_.-]; one followed by ':' is a key.
      for (size_t i = colon + 2; i < line.size();) {
        const auto word_char = [&](size_t k) {
          const char c = line[k];
          return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
        };
        if (!word_char(i)) {
          ++i;
          continue;
        }
        size_t j = i;
        while (j < line.size() && word_char(j)) ++j;
        const bool key = j < line.size() && line[j] == ':';
        if (!key) {
          for (const std::string& alt : alternatives(line.substr(i, j - i))) {
            edits.push_back(text.substr(0, line_start + i) + alt + text.substr(line_start + j));
          }
        }
        i = j;
      }
    }
    // The first line of an entry ("  - kernel: ...") holds a value too.
    if (in_entries && line.rfind("  - kernel: ", 0) == 0) {
      const size_t at = line_start + 12;
      const std::string name = line.substr(12);
      for (const std::string& alt : alternatives(name)) {
        edits.push_back(text.substr(0, at) + alt + text.substr(at + name.size()));
      }
    }
    line_start = line_end + 1;
  }
  return edits;
}

struct Counts {
  size_t total = 0;
  size_t harmless = 0;         // parsed, same meaning
  size_t rejected = 0;         // an error by default
  size_t flag_rejected = 0;    // with the flag: still an error (malformed, or the end record)
  size_t flag_unverified = 0;  // with the flag: read, every changed entry unverified
  size_t checked_default = 0;  // read without the flag too, and the outcome confirmed
  size_t planned = 0;          // read with the flag, then planned and checked
  std::vector<std::string> failures;
};

// A shipped database with its spec: the original, and what it means.
struct Database {
  std::string file;  // as messages name it
  std::string text;
  Spec spec;
  std::map<std::string, std::string> fingerprints;
  std::multiset<std::string> original_meaning;

  Database(const std::string& db, const std::string& spec_file)
      : file(db),
        text(read_file(std::string(CONVGEN_SOURCE_DIR) + "/specs/" + db)),
        spec(parse_spec_file(std::string(CONVGEN_SOURCE_DIR) + "/specs/" + spec_file)) {
    fingerprints = tuning_fingerprints(Templates::load(CONVGEN_TEMPLATE_DIR));
    original_meaning = meaning(parse_tuning_text(text, file));
  }

  // Reads a corrupted `text` as the build would and counts what happened;
  // a corruption read as verified changes is a failure. `sample`: also
  // read it without the flag, and plan it with the flag.
  void check(const std::string& corrupted, const std::string& what, bool sample, Counts& c) const {
    ++c.total;
    const auto fail = [&](const std::string& why) {
      if (c.failures.size() < 20) c.failures.push_back(what + ": " + why);
    };
    TuningDb db;
    bool flag_rejects = false;
    try {
      db = parse_tuning_text(corrupted, file, TuningTrust::kAllowUnverified);
    } catch (const InputError&) {
      flag_rejects = true;
    }
    const bool unverified = std::any_of(db.entries.begin(), db.entries.end(),
                                        [](const TuningEntry& e) { return !e.checksum_matches; });
    const bool rejects = flag_rejects || unverified;  // what the default reader must do
    if (sample) {
      ++c.checked_default;
      bool threw = false;
      try {
        parse_tuning_text(corrupted, file);
      } catch (const InputError&) {
        threw = true;
      }
      if (threw != rejects) fail(threw ? "rejected without the flag, though all is verified" : "read without the flag");
    }
    if (!rejects) {
      if (meaning(db) == original_meaning) {
        ++c.harmless;
      } else {
        fail("read without an error, and its entries differ from the original's");
      }
      return;
    }
    ++c.rejected;
    if (flag_rejects) {
      ++c.flag_rejected;
      return;
    }
    ++c.flag_unverified;
    for (const TuningEntry& e : db.entries) {
      if (e.checksum_matches && original_meaning.count(tuning_entry_canonical(e)) == 0) {
        fail("with the flag, the changed entry for " + e.kernel + " reads as verified");
      }
    }
    if (sample) plan(db, fail, c);
  }

  // With the flag, a kernel is kTuned only by an unchanged entry, and an
  // unverified entry never makes a kernel kTuned.
  template <typename Fail>
  void plan(const TuningDb& db, const Fail& fail, Counts& c) const {
    ++c.planned;
    TuningSelection selection;
    selection.db = &db;
    selection.gpu = kGpu;
    selection.fingerprints = fingerprints;
    LibraryPlan lib;
    try {
      lib = plan_library({spec}, "", {}, OnInvalidWorkload::kFail, &selection);
    } catch (const InputError&) {
      return;  // e.g. an op edited to the other operator: an error at the entry
    }
    for (const KernelPlan& k : lib.kernels) {
      const TuningEntry* e = db.find(k.name, kGpu);
      if (k.origin != ScheduleOrigin::kTuned) continue;
      if (e == nullptr || !e->checksum_matches || original_meaning.count(tuning_entry_canonical(*e)) == 0) {
        fail("with the flag, " + k.name + " is planned as tuned from a changed entry");
      }
    }
  }
};

void report(const char* kind, const Counts& c) {
  std::printf("%-20s %5zu corrupted files: %5zu rejected, %3zu harmless (same meaning); with "
              "--allow-unverified-tuning %5zu rejected, %5zu read with the changed entries unverified; "
              "%zu read without the flag too, %zu planned\n",
              kind, c.total, c.rejected, c.harmless, c.flag_rejected, c.flag_unverified, c.checked_default,
              c.planned);
  for (const std::string& f : c.failures) ADD_FAILURE() << kind << ": " << f;
  EXPECT_EQ(c.rejected + c.harmless, c.total) << kind;
  EXPECT_EQ(c.flag_rejected + c.flag_unverified, c.rejected) << kind;
}

const Database& seeds() {
  static const Database db("seeds.tuning.yaml", "seeds.yaml");
  return db;
}

// Every Nth file is read without the flag and planned too.
constexpr size_t kSampleEvery = 8;

TEST(TuningCorruption, TheOriginalIsReadAndApplied) {
  const Database& db = seeds();
  ASSERT_EQ(parse_tuning_text(db.text, db.file).entries.size(), 14u);
  Counts c;
  db.check(db.text, "the original", true, c);
  EXPECT_EQ(c.harmless, 1u);
  EXPECT_TRUE(c.failures.empty()) << c.failures.front();
}

TEST(TuningCorruption, EverySingleValueEditIsRejectedOrUnverified) {
  const Database& db = seeds();
  const std::vector<std::string> edits = single_value_edits(db.text);
  ASSERT_GT(edits.size(), 14u * 40) << "the edits should reach every value of every entry";
  Counts c;
  for (size_t i = 0; i < edits.size(); ++i) db.check(edits[i], "edit " + std::to_string(i), i % kSampleEvery == 0, c);
  report("edits (seeds)", c);
  // Every edit changes a value: none is harmless.
  EXPECT_EQ(c.harmless, 0u);

  // The algorithms the seeds lack, from the mobilenet_v2 database.
  const Database mobilenet("mobilenet_v2.tuning.yaml", "mobilenet_v2.yaml");
  std::vector<std::string> more = single_value_edits(mobilenet.text, {"gemm", "planes"});
  // A sample: the 34 entries' edits read alike, and the file is 4x the seeds'.
  std::mt19937 rng(28);
  std::shuffle(more.begin(), more.end(), rng);
  more.resize(std::min<size_t>(more.size(), 120));
  Counts m;
  for (size_t i = 0; i < more.size(); ++i) {
    mobilenet.check(more[i], "edit " + std::to_string(i), i % kSampleEvery == 0, m);
  }
  report("edits (mobilenet_v2)", m);
  EXPECT_EQ(m.harmless, 0u);
}

// A schedule is rendered, and signed, with every knob it holds: a knob
// added to an entry (one of another algorithm, which the plan refuses, or a
// common one) changes what the entry means, and its checksum fails.
TEST(TuningCorruption, EveryAddedKnobIsRejected) {
  const Database& db = seeds();
  std::vector<std::string> edits;
  for (size_t at = db.text.find("    schedule: {algorithm: "); at != std::string::npos;
       at = db.text.find("    schedule: {algorithm: ", at + 1)) {
    const size_t close = db.text.find('}', at);
    const std::string line = db.text.substr(at, close - at);
    const size_t op_at = db.text.rfind("    op: ", at);
    const Operator* op = find_operator(db.text.substr(op_at + 8, db.text.find('\n', op_at) - op_at - 8));
    ASSERT_NE(op, nullptr) << line;
    std::set<std::string> keys;
    std::vector<const Knob*> knobs;
    for (const Algorithm* a : op->algorithms) {
      for (const Knob& k : a->knobs) knobs.push_back(&k);
    }
    for (const Knob& k : op->common_knobs) knobs.push_back(&k);
    for (const Knob* k : knobs) {
      if (line.find(" " + k->key + ": ") != std::string::npos || !keys.insert(k->key).second) continue;
      std::string value = k->word(k->domain().front());
      if (k->values.size() > 1) {
        std::string list;
        for (size_t i = 0; i < k->values.size(); ++i) list += (i ? ", " : "") + value;
        value = "[" + list + "]";
      }
      edits.push_back(db.text.substr(0, close) + ", " + k->key + ": " + value + db.text.substr(close));
    }
  }
  ASSERT_GT(edits.size(), 14u * 5) << "every entry should take several knobs it lacks";
  Counts c;
  for (size_t i = 0; i < edits.size(); ++i) db.check(edits[i], "added knob " + std::to_string(i), i % kSampleEvery == 0, c);
  report("added knobs", c);
  EXPECT_EQ(c.harmless, 0u) << "an added knob left the entry's meaning (and checksum) as it was";
}

TEST(TuningCorruption, EveryTruncationIsRejected) {
  const Database& db = seeds();
  std::vector<size_t> cuts;
  for (size_t i = 0; i < db.text.size(); ++i) {
    if (db.text[i] == '\n') cuts.push_back(i + 1);  // at every line boundary
  }
  cuts.pop_back();  // the whole file
  std::mt19937 rng(28);
  std::uniform_int_distribution<size_t> offset(0, db.text.size() - 2);
  for (int i = 0; i < 500; ++i) cuts.push_back(offset(rng));  // and within lines
  Counts c;
  for (size_t i = 0; i < cuts.size(); ++i) {
    db.check(db.text.substr(0, cuts[i]), "cut at byte " + std::to_string(cuts[i]), i % kSampleEvery == 0, c);
  }
  report("truncations", c);
  // Only cutting the final newline would keep the meaning; every other cut
  // loses the end record, and the flag does not excuse that.
  EXPECT_LE(c.harmless, 1u);
  EXPECT_EQ(c.flag_unverified, 0u) << "a file cut short was read with the flag";
}

TEST(TuningCorruption, EveryBitFlipIsRejectedUnverifiedOrHarmless) {
  const Database& db = seeds();
  std::mt19937 rng(2028);
  std::uniform_int_distribution<size_t> position(0, db.text.size() - 1);
  std::uniform_int_distribution<int> bit(0, 7);
  Counts c;
  for (size_t i = 0; i < 2000; ++i) {
    std::string text = db.text;
    const size_t at = position(rng);
    const int b = bit(rng);
    text[at] = static_cast<char>(text[at] ^ (1 << b));
    db.check(text, "bit " + std::to_string(b) + " of byte " + std::to_string(at), i % kSampleEvery == 0, c);
  }
  report("bit flips", c);
}

}  // namespace
}  // namespace convgen_test
