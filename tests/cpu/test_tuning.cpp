// The tuning database (tuning.hpp): its text form and file, the order of its
// entries, how plan_library applies it (a spec's schedule, then a current
// entry for the target GPU, then the default rule), and the schedule space
// the tuner searches (tune_space.hpp). The malformed databases are in
// tests/bad_tuning (test_bad_tuning.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>

#include "convgen/gen/arch.hpp"
#include "convgen/gen/digest.hpp"
#include "convgen/gen/plan.hpp"
#include "convgen/gen/render.hpp"
#include "convgen/gen/tune_space.hpp"
#include "convgen/gen/tuning_db.hpp"
#include "test_util.h"

namespace convgen_test {
namespace {

// ---------------------------------------------------------------------------
// Helpers.

const char* const kGpu = "Test GPU";
// The template of the depthwise rows algorithm, whose fingerprint the
// entries below carry. (A function: the operator registry is initialized
// in another translation unit.)
std::string rows_template() { return find_operator("depthwise_conv2d")->algorithm("rows")->template_file; }

// One entry as convgen tune writes it (tuning_text's layout), with the
// fields a test varies.
struct EntryText {
  std::string kernel;
  std::string schedule;  // a flow mapping
  std::string gpu = kGpu;
  std::string fingerprint = "0000000000000000";
  std::string time_us = "2.000", default_us = "2.500";
  std::string op = "depthwise_conv2d";
  std::string default_schedule = "rows: rows_per_thread 2, vector_width 4, threads_per_block 128";
};

// The lines that sign `entry` (one entry's text): its convgen version and
// the checksum convgen writes for that content. A test's entry whose content
// is wrong on purpose gets a placeholder: the reader rejects the content
// before it looks at the checksum.
std::string signature(const std::string& entry) {
  const std::string version = std::string("    convgen: \"") + kConvgenVersion + "\"\n";
  std::string checksum(64, '0');
  try {
    const TuningDb one = parse_tuning_text("convgen_tuning: 2\nentries:\n" + entry + version, "entry.yaml",
                                           TuningTrust::kVouch);
    checksum = sha256_hex(tuning_entry_canonical(one.entries.at(0)));
  } catch (const InputError&) {
  }
  return version + "    checksum: \"" + checksum + "\"\n";
}

std::string entry_text(const EntryText& e) {
  const std::string text = "  - kernel: " + e.kernel + "\n" +
         "    op: " + e.op + "\n" +
         "    gpu: \"" + e.gpu + "\"\n" +
         "    sms: 132\n"
         "    compute_capability: \"9.0\"\n"
         "    schedule: " + e.schedule + "\n" +
         "    objective: hot\n"
         "    time_us: " + e.time_us + "\n" +
         "    default_us: " + e.default_us + "\n" +
         "    default_schedule: \"" + e.default_schedule + "\"\n"
         "    candidates: {compiled: 10, verified: 9, rejected: 1, failed: 0}\n"
         "    tuning_s: 6.5\n"
         "    date: 2026-01-31\n"
         "    fingerprint: \"" + e.fingerprint + "\"\n";
  return text + signature(text);
}

// A database as convgen writes it: format 2, the entries, the end record.
std::string db_text(const std::vector<EntryText>& entries) {
  std::string text = "convgen_tuning: 2\nentries:\n";
  for (const EntryText& e : entries) text += entry_text(e);
  return text + "end: {entries: " + std::to_string(entries.size()) + "}\n";
}

// The current fingerprint of every template, as the CLI computes them.
std::map<std::string, std::string> current_fingerprints() {
  return tuning_fingerprints(Templates::load(CONVGEN_TEMPLATE_DIR));
}

std::string current_fingerprint(const std::string& template_file) { return current_fingerprints().at(template_file); }

const KernelPlan& kernel_named(const LibraryPlan& lib, const std::string& name) {
  for (const KernelPlan& p : lib.kernels) {
    if (p.name == name) return p;
  }
  throw std::runtime_error("no kernel " + name);
}

// Every field tuning_text writes, in one comparable line.
std::string describe(const TuningEntry& e) {
  std::string values;
  for (const auto& [name, value] : e.schedule.values) values += " " + name + "=" + std::to_string(value);
  char times[160];
  std::snprintf(times, sizeof times, " %.3f %.3f %d %d %d %d %.1f ", e.time_us, e.default_us, e.compiled, e.verified,
                e.rejected, e.failed, e.tuning_s);
  return e.kernel + " | " + (e.op ? e.op->name : "?") + " | " + e.gpu.name + " | " + std::to_string(e.gpu.sms) +
         " | " + e.gpu.compute_capability + " | " + e.schedule.algorithm.value_or("?") + values + " | " + e.objective +
         times + e.default_schedule + " | " + e.date + " | " + e.fingerprint;
}

std::vector<std::string> describe(const TuningDb& db) {
  std::vector<std::string> out;
  for (const TuningEntry& e : db.entries) out.push_back(describe(e));
  return out;
}

// A database holding one schedule of each algorithm, so that every kind of
// knob (integers, pairs and triples, flags, choices) goes through the writer.
std::string every_algorithm_db() {
  std::string text = "convgen_tuning: 2\nentries:\n";
  const std::vector<std::pair<std::string, std::string>> schedules = {
      {"dw_a_rows", "{algorithm: rows, rows_per_thread: 3, vector_width: 2, threads_per_block: 96, "
                    "input_cache: evict_first}"},
      {"dw_b_tiles", "{algorithm: tiles, block_tile: [16, 32], threads: [4, 32], vthreads: [1, 2], "
                     "shared_input: true, shared_filter: false, channels_per_block: 2, output_cache: evict_first}"},
      {"dw_c_planes", "{algorithm: planes, warps_per_block: 4}"},
      {"dw_d_window", "{algorithm: window, rows_per_thread: 7, columns_per_thread: 2, band_rows: 21, "
                      "bands_per_block: 4, pipelined: true, shared_filter: true}"},
  };
  for (const auto& [kernel, schedule] : schedules) text += entry_text({kernel, schedule});
  const std::vector<std::pair<std::string, std::string>> conv = {
      {"conv_a_direct", "{algorithm: direct, threads: [2, 8, 8], thread_tile: [4, 1, 4], column_groups: 1, ci_step: 8}"},
      {"conv_b_gemm", "{algorithm: gemm, block_tile: [64, 64], k_step: 8, vthreads: [2, 2]}"},
  };
  for (const auto& [kernel, schedule] : conv) {
    EntryText e{kernel, schedule};
    e.op = "conv2d";
    text += entry_text(e);
  }
  return text + "end: {entries: " + std::to_string(schedules.size() + conv.size()) + "}\n";
}

// ---------------------------------------------------------------------------
// The text form and the file.

// What tuning_text writes, parse_tuning_text reads back entry for entry; and
// writing that again gives the same text (a database committed and updated
// by another tune does not churn).
TEST(TuningText, RoundTripsEveryField) {
  const TuningDb db = parse_tuning_text(every_algorithm_db(), "db.yaml");
  ASSERT_EQ(db.entries.size(), 6u);
  const std::string text = tuning_text(db);
  const TuningDb again = parse_tuning_text(text, "again.yaml");
  EXPECT_EQ(describe(again), describe(db));
  EXPECT_EQ(tuning_text(again), text);
  // The knobs are written by their spec words, not their stored indices.
  EXPECT_NE(text.find("input_cache: evict_first"), std::string::npos) << text;
  EXPECT_NE(text.find("shared_input: true, shared_filter: false"), std::string::npos) << text;
  EXPECT_NE(text.find("block_tile: [16, 32]"), std::string::npos) << text;
  // The header says what the file is and how the build uses it.
  EXPECT_EQ(text.rfind("# convgen tuning database", 0), 0u) << text;
  EXPECT_NE(text.find("\nconvgen_tuning: 2\n"), std::string::npos);
}

// Names and texts that YAML would misread written plainly (a colon, a '#',
// quotes, a leading digit) are quoted, and come back as they were.
TEST(TuningText, QuotesWhatYamlWouldMisread) {
  for (const std::string gpu : {"NVIDIA H100 80GB HBM3", "GPU: with a colon", "a # not a comment", "say \"hi\"",
                                "back\\slash", "9.0", "true", "- dash", "[list]", "{map}", "*alias", "&anchor"}) {
    SCOPED_TRACE(gpu);
    TuningDb db = parse_tuning_text(db_text({{"dw_k", "{algorithm: rows, rows_per_thread: 2}"}}), "db.yaml");
    db.entries[0].gpu.name = gpu;
    db.entries[0].default_schedule = gpu;
    const TuningDb again = parse_tuning_text(tuning_text(db), "again.yaml");
    ASSERT_EQ(again.entries.size(), 1u);
    EXPECT_EQ(again.entries[0].gpu.name, gpu);
    EXPECT_EQ(again.entries[0].default_schedule, gpu);
  }
}

// What the parser accepts, tuning_text writes back readably: an entry
// without the optional tuning_s or default_schedule (a database written by
// hand and vouched for, then continued by `convgen tune`), a time under a
// thousandth of a microsecond, a name holding a line break.
TEST(TuningText, RoundTripsWhatTheParserAccepts) {
  const std::string minimal =
      "convgen_tuning: 1\n"
      "entries:\n"
      "  - {kernel: dw_k, op: depthwise_conv2d, gpu: G, sms: 1, compute_capability: \"9.0\",\n"
      "     schedule: {algorithm: rows}, time_us: 2, default_us: 3, date: 2026-01-31, fingerprint: 0123456789abcdef}\n";
  TuningDb db = parse_tuning_text(minimal, "minimal.yaml", TuningTrust::kVouch);
  ASSERT_FALSE(db.entries.at(0).checksum_matches);  // it has none
  db.entries[0].checksum_matches = true;             // vouched for
  EXPECT_NO_THROW(parse_tuning_text(tuning_text(db), "again.yaml")) << tuning_text(db);

  TuningDb odd = parse_tuning_text(db_text({{"dw_k", "{algorithm: rows, rows_per_thread: 2}"}}), "db.yaml");
  odd.entries[0].time_us = 0.0004;
  odd.entries[0].gpu.name = "two\nlines";
  TuningDb again;
  ASSERT_NO_THROW(again = parse_tuning_text(tuning_text(odd), "again.yaml"));
  EXPECT_GT(again.entries.at(0).time_us, 0);
  EXPECT_EQ(again.entries.at(0).gpu.name, "two\nlines");
}

TEST(TuningText, AnEmptyDatabaseIsAnEmptyList) {
  const std::string text = tuning_text(TuningDb{});
  EXPECT_NE(text.find("\nentries: []\n"), std::string::npos) << text;
  EXPECT_TRUE(parse_tuning_text(text, "db.yaml").entries.empty());
}

// The file is written whole or not at all: through a temporary file renamed
// into place, which is gone afterwards.
TEST(TuningFile, WriteIsAtomicAndReadsBack) {
  TempDir tmp;
  const fs::path path = tmp / "tuning.yaml";
  const TuningDb db = parse_tuning_text(every_algorithm_db(), "db.yaml");
  write_tuning_file(path.string(), db);
  EXPECT_EQ(read_file(path), tuning_text(db));
  // An update replaces the whole file.
  TuningDb smaller = db;
  smaller.entries.resize(2);
  write_tuning_file(path.string(), smaller);
  const TuningDb back = parse_tuning_file(path.string());
  EXPECT_EQ(back.file, path.string());
  EXPECT_EQ(describe(back), describe(smaller));
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(tmp.path())) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{kLockFileName, "tuning.yaml"})) << "a temporary file was left behind";
}

TEST(TuningFile, AnUnwritablePlaceThrowsAndLeavesNothing) {
  TempDir tmp;
  const fs::path path = tmp / "no_such_directory" / "tuning.yaml";
  EXPECT_THROW(write_tuning_file(path.string(), TuningDb{}), std::runtime_error);
  EXPECT_FALSE(fs::exists(tmp / "no_such_directory"));
  // A directory where the file should be: the rename fails, the temporary goes.
  fs::create_directories(tmp / "a_directory.yaml");
  EXPECT_THROW(write_tuning_file((tmp / "a_directory.yaml").string(), TuningDb{}), std::runtime_error);
  for (const auto& entry : fs::directory_iterator(tmp.path())) {
    EXPECT_NE(entry.path().filename().string().rfind(kTempPrefix, 0), 0u) << "a temporary file was left behind";
  }
}

// Read-merge-write: each merge keeps what the file holds now (entries
// another run wrote since), and says when an entry's schedule changes.
TEST(TuningFile, MergeKeepsEveryEntryAndNotesAChangedSchedule) {
  TempDir tmp;
  const std::string path = (tmp / "tuning.yaml").string();
  const auto entries = [](const std::vector<EntryText>& e) { return parse_tuning_text(db_text(e), "db.yaml").entries; };
  write_file(tmp / (std::string(kTempPrefix) + "killed"), "convgen_tuning: 1\nentr");  // a killed run's
  TuningMerge merge = merge_into_tuning_file(path, entries({{"dw_a", "{algorithm: rows, rows_per_thread: 2}"}}));
  EXPECT_EQ(merge.added, 1);
  EXPECT_FALSE(fs::exists(tmp / (std::string(kTempPrefix) + "killed")));
  merge = merge_into_tuning_file(path, entries({{"dw_b", "{algorithm: rows, rows_per_thread: 4}"}}), "other.yaml");
  EXPECT_EQ(merge.added, 1);
  EXPECT_EQ(parse_tuning_file(path).entries.size(), 2u);

  // dw_a again, with another schedule: replaced, with a note naming both.
  merge = merge_into_tuning_file(path, entries({{"dw_a", "{algorithm: rows, rows_per_thread: 1}"}}), "new.yaml");
  EXPECT_EQ(merge.added, 0);
  EXPECT_EQ(merge.replaced, 1);
  ASSERT_EQ(merge.notes.size(), 1u);
  EXPECT_NE(merge.notes[0].find("the entry for dw_a on 'Test GPU' from new.yaml replaces one with another schedule"),
            std::string::npos)
      << merge.notes[0];
  const TuningDb back = parse_tuning_file(path);
  ASSERT_EQ(back.entries.size(), 2u);
  EXPECT_EQ(back.find("dw_a", kGpu)->schedule.value("rows_per_thread"), 1);
  // The same schedule again: replaced without a note.
  EXPECT_TRUE(merge_into_tuning_file(path, entries({{"dw_a", "{algorithm: rows, rows_per_thread: 1}"}})).notes.empty());
}

// `convgen tune merge` (kKeepFaster): of two entries for one kernel and GPU
// the faster stays, whichever file it came from; entries for other GPUs
// live side by side; a differing fingerprint or objective is noted and the
// new entry put. Worked by hand: dw_a at 2.0 us held; 3.0 us from slow.yaml
// is left out (kept 1), 1.5 us from fast.yaml replaces it; the same kernel
// on another GPU is added; fingerprint 1111... against 0000... conflicts.
TEST(TuningFile, MergeKeepsTheFasterEntryAndReportsConflicts) {
  TempDir tmp;
  const std::string path = (tmp / "tuning.yaml").string();
  const auto entries = [](const std::vector<EntryText>& e) { return parse_tuning_text(db_text(e), "db.yaml").entries; };
  const auto merge = [&](const std::vector<EntryText>& e, const std::string& from) {
    return merge_into_tuning_file(path, entries(e), from, kDefaultLockTimeoutS, false, MergePolicy::kKeepFaster);
  };
  const std::string rows2 = "{algorithm: rows, rows_per_thread: 2}", rows4 = "{algorithm: rows, rows_per_thread: 4}";
  EXPECT_EQ(merge({{"dw_a", rows2}}, "first.yaml").added, 1);

  EntryText slow{"dw_a", rows4};
  slow.time_us = "3.000";
  TuningMerge m = merge({slow}, "slow.yaml");
  EXPECT_EQ(m.kept, 1);
  EXPECT_EQ(m.replaced, 0);
  ASSERT_EQ(m.notes.size(), 1u);
  EXPECT_NE(m.notes[0].find("kept the entry held for dw_a on 'Test GPU': faster than the one from slow.yaml (3 us "
                            "against 2 us)"),
            std::string::npos)
      << m.notes[0];
  EXPECT_EQ(parse_tuning_file(path).find("dw_a", kGpu)->schedule.value("rows_per_thread"), 2);

  EntryText fast{"dw_a", rows4};
  fast.time_us = "1.500";
  m = merge({fast}, "fast.yaml");
  EXPECT_EQ(m.replaced, 1);
  EXPECT_EQ(m.kept, 0);
  EXPECT_EQ(parse_tuning_file(path).find("dw_a", kGpu)->schedule.value("rows_per_thread"), 4);

  EntryText other_gpu{"dw_a", rows2};
  other_gpu.gpu = "Other GPU";
  other_gpu.time_us = "9.000";
  EXPECT_EQ(merge({other_gpu}, "other.yaml").added, 1);
  TuningDb back = parse_tuning_file(path);
  ASSERT_EQ(back.entries.size(), 2u);
  EXPECT_EQ(back.find("dw_a", "Other GPU")->time_us, 9.0);
  EXPECT_EQ(back.find("dw_a", kGpu)->time_us, 1.5);

  EntryText stale{"dw_a", rows2};
  stale.fingerprint = "1111111111111111";
  stale.time_us = "5.000";
  m = merge({stale}, "stale.yaml");
  EXPECT_EQ(m.conflicts, 1);
  EXPECT_EQ(m.replaced, 1);
  ASSERT_FALSE(m.notes.empty());
  EXPECT_NE(m.notes[0].find("conflicting fingerprints: the entry for dw_a on 'Test GPU' from stale.yaml has "
                            "1111111111111111, the one held 0000000000000000"),
            std::string::npos)
      << m.notes[0];
  EXPECT_EQ(parse_tuning_file(path).find("dw_a", kGpu)->fingerprint, "1111111111111111");
}

// An entry on disk edited by hand: `tune merge` refuses the database;
// `convgen tune` (drop_unverified) drops that entry, keeps the others and
// says so, rather than signing what it did not measure.
TEST(TuningFile, MergeIntoADatabaseWithAnEditedEntry) {
  TempDir tmp;
  const std::string path = (tmp / "tuning.yaml").string();
  std::string text = db_text({{"dw_a", "{algorithm: rows, rows_per_thread: 2}"},
                              {"dw_b", "{algorithm: rows, rows_per_thread: 4}"}});
  const size_t knob = text.find("rows_per_thread: 2");
  ASSERT_NE(knob, std::string::npos);
  text.replace(knob, 18, "rows_per_thread: 1");
  write_file(tmp / "tuning.yaml", text);
  const std::vector<TuningEntry> incoming =
      parse_tuning_text(db_text({{"dw_c", "{algorithm: rows, rows_per_thread: 2}"}}), "db.yaml").entries;

  EXPECT_THROW(merge_into_tuning_file(path, incoming), InputError);
  EXPECT_EQ(read_file(tmp / "tuning.yaml"), text);  // refused: unchanged

  const TuningMerge merge = merge_into_tuning_file(path, incoming, "", kDefaultLockTimeoutS, true);
  ASSERT_EQ(merge.notes.size(), 1u);
  EXPECT_NE(merge.notes[0].find("dropped the entry for dw_a"), std::string::npos) << merge.notes[0];
  const TuningDb back = parse_tuning_file(path);  // verifies every checksum
  ASSERT_EQ(back.entries.size(), 2u);
  EXPECT_NE(back.find("dw_b", kGpu), nullptr);
  EXPECT_NE(back.find("dw_c", kGpu), nullptr);
}

// The database's name is never written through a link.
TEST(TuningFile, ALinkAtTheDatabaseIsRefused) {
  TempDir tmp;
  write_file(tmp / "sentinel", "sentinel\n");
  fs::create_symlink(tmp / "sentinel", tmp / "tuning.yaml");
  EXPECT_THROW(write_tuning_file((tmp / "tuning.yaml").string(), TuningDb{}), std::runtime_error);
  EXPECT_THROW(merge_into_tuning_file((tmp / "tuning.yaml").string(), {}), std::runtime_error);
  EXPECT_EQ(read_file(tmp / "sentinel"), "sentinel\n");
  EXPECT_TRUE(fs::is_symlink(tmp / "tuning.yaml"));
}

TEST(TuningFile, ReadingSomethingThatIsNotAFileIsASpecError) {
  TempDir tmp;
  fs::create_directories(tmp / "dir.yaml");
  for (const fs::path& path : {tmp / "dir.yaml", tmp / "missing.yaml"}) {
    const std::vector<Diagnostic> errors = spec_errors([&] { parse_tuning_file(path.string()); });
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].where.file, path.string());
    EXPECT_EQ(errors[0].where.line, 0);  // about the file, not a line of it
    EXPECT_NE(errors[0].message.find("tuning database"), std::string::npos) << errors[0].message;
  }
}

// A fingerprint is 16 hex digits of the generator's version and the
// template's code: the same code gives the same one, any edit of it another;
// comment lines, blank lines and trailing blanks are not code.
TEST(TuningFingerprint, FollowsTheTemplateCode) {
  const std::string code = "int a = {{x}};\n  b(a);  // why\n";
  const std::string a = tuning_fingerprint(code);
  EXPECT_EQ(a.size(), 16u);
  EXPECT_TRUE(std::all_of(a.begin(), a.end(), [](char c) { return std::isdigit(c) || (c >= 'a' && c <= 'f'); })) << a;
  EXPECT_EQ(tuning_fingerprint(code), a);
  EXPECT_EQ(tuning_fingerprint("// a comment, edited\nint a = {{x}};   \n\n    // another\n  b(a);  // why\n"), a);
  EXPECT_NE(tuning_fingerprint("int a = {{y}};\n  b(a);  // why\n"), a);
  EXPECT_NE(tuning_fingerprint("int a = {{x}};\n  b(a);  // why not\n"), a);  // a comment after code is code
  EXPECT_NE(tuning_fingerprint("int a = {{x}};\nb(a);  // why\n"), a);      // indentation too
  // A comment line with a section tag decides what is rendered: it counts.
  const std::string sectioned = "// {{#fast}}the fast path\nint a = {{x}};\n// {{/fast}}\n";
  EXPECT_NE(tuning_fingerprint(sectioned), tuning_fingerprint("// {{^fast}}the fast path\nint a = {{x}};\n// {{/fast}}\n"));
  EXPECT_NE(tuning_fingerprint(""), tuning_fingerprint(std::string(1, '\0')));
  // Every shipped template has its own.
  std::set<std::string> seen;
  for (const auto& [file, fingerprint] : current_fingerprints()) EXPECT_TRUE(seen.insert(fingerprint).second) << file;
}

// ---------------------------------------------------------------------------
// The entries' order.

TuningEntry bare_entry(const std::string& kernel, const std::string& gpu, double time_us) {
  TuningEntry e;
  e.kernel = kernel;
  e.gpu.name = gpu;
  e.time_us = time_us;
  return e;
}

TEST(TuningDb, PutKeepsTheEntriesSortedAndReplacesTheSameKernelAndGpu) {
  TuningDb db;
  db.put(bare_entry("k_b", "GPU 2", 1));
  db.put(bare_entry("k_a", "GPU 2", 2));
  db.put(bare_entry("k_b", "GPU 1", 3));
  db.put(bare_entry("k_c", "GPU 1", 4));
  db.put(bare_entry("k_a", "GPU 1", 5));
  std::vector<std::string> order;
  for (const TuningEntry& e : db.entries) order.push_back(e.kernel + "@" + e.gpu.name);
  EXPECT_EQ(order, (std::vector<std::string>{"k_a@GPU 1", "k_a@GPU 2", "k_b@GPU 1", "k_b@GPU 2", "k_c@GPU 1"}));

  // The same kernel on the same GPU: replaced in place, not added.
  db.put(bare_entry("k_b", "GPU 1", 30));
  ASSERT_EQ(db.entries.size(), 5u);
  EXPECT_EQ(db.entries[2].kernel, "k_b");
  EXPECT_EQ(db.entries[2].time_us, 30);

  ASSERT_NE(db.find("k_b", "GPU 2"), nullptr);
  EXPECT_EQ(db.find("k_b", "GPU 2")->time_us, 1);
  EXPECT_EQ(db.find("k_b", "GPU 3"), nullptr);
  EXPECT_EQ(db.find("k_d", "GPU 1"), nullptr);
  EXPECT_EQ(db.gpus(), (std::vector<std::string>{"GPU 1", "GPU 2"}));
}

// The parser keeps the same order whatever the file's.
TEST(TuningDb, ParsedEntriesAreSorted) {
  const TuningDb db = parse_tuning_text(db_text({{"dw_z", "{algorithm: rows}", "B"},
                                                 {"dw_a", "{algorithm: rows}", "B"},
                                                 {"dw_z", "{algorithm: rows}", "A"}}),
                                        "db.yaml");
  std::vector<std::string> order;
  for (const TuningEntry& e : db.entries) order.push_back(e.kernel + "@" + e.gpu.name);
  EXPECT_EQ(order, (std::vector<std::string>{"dw_a@B", "dw_z@A", "dw_z@B"}));
}

// ---------------------------------------------------------------------------
// plan_library with a database.

// Three workloads: one the database tunes, one whose spec sets a knob (and
// which the database also holds), one the database does not hold. And one
// whose width (30) no lane of 4 columns divides.
const char* const kSpec = R"(library: tuned
workloads:
  - {n: 1, c: 32, h: 56, w: 56, filter: 3, padding: same}
  - {n: 1, c: 64, h: 56, w: 56, filter: 3, padding: same, schedule: {rows_per_thread: 1}}
  - {n: 1, c: 16, h: 8, w: 8, filter: 3, padding: same}
)";
const char* const kTunedKernel = "dw_f32_nchw_n1_c32_h56_w56_k3x3_s1_p1_m1";
const char* const kSpecKernel = "dw_f32_nchw_n1_c64_h56_w56_k3x3_s1_p1_m1";
const char* const kUntunedKernel = "dw_f32_nchw_n1_c16_h8_w8_k3x3_s1_p1_m1";
// Differs from the default rule's for the tuned workload (checked below).
const char* const kTunedSchedule = "{algorithm: rows, rows_per_thread: 1, vector_width: 2, threads_per_block: 256}";

struct Tuned {
  TuningDb db;
  TuningSelection selection;
  LibraryPlan lib;
};

// Plans kSpec (or `spec`) with the database `text` and the current fingerprints.
Tuned plan_with(const std::string& text, const std::string& gpu = "", const std::string& spec = kSpec,
                OnInvalidWorkload on_invalid = OnInvalidWorkload::kFail, bool allow_untuned = false) {
  Tuned t;
  t.db = parse_tuning_text(text, "tuning.yaml");
  t.selection.db = &t.db;
  t.selection.gpu = gpu;
  t.selection.allow_untuned = allow_untuned;
  t.selection.fingerprints = current_fingerprints();
  t.lib = plan_library({parse(spec, "spec.yaml")}, "", {}, on_invalid, &t.selection);
  return t;
}

std::string current_db() {
  const std::string fp = current_fingerprint(rows_template());
  return db_text({{kTunedKernel, kTunedSchedule, kGpu, fp},
                  {kSpecKernel, "{algorithm: rows, rows_per_thread: 4, vector_width: 1, threads_per_block: 64}", kGpu,
                   fp}});
}

TEST(TuningApply, WithoutADatabaseTheOriginIsTheSpecOrTheDefaultRule) {
  const LibraryPlan lib = plan_library({parse(kSpec, "spec.yaml")}, "");
  EXPECT_EQ(kernel_named(lib, kTunedKernel).origin, ScheduleOrigin::kDefault);
  EXPECT_EQ(kernel_named(lib, kSpecKernel).origin, ScheduleOrigin::kSpec);
  EXPECT_EQ(kernel_named(lib, kUntunedKernel).origin, ScheduleOrigin::kDefault);
  EXPECT_EQ(origin_text(kernel_named(lib, kTunedKernel)), "the default rule");
  EXPECT_EQ(origin_text(kernel_named(lib, kSpecKernel)), "set in the spec");
  EXPECT_TRUE(lib.tuning_notes.empty());
}

// A current entry replaces the default rule's schedule; a schedule the spec
// writes wins over the database; a workload the database does not hold keeps
// the default rule's.
TEST(TuningApply, SpecThenCurrentEntryThenDefaultRule) {
  const LibraryPlan plain = plan_library({parse(kSpec, "spec.yaml")}, "");
  const Tuned t = plan_with(current_db());
  EXPECT_TRUE(t.lib.tuning_notes.empty()) << t.lib.tuning_notes.front().str();

  const KernelPlan& tuned = kernel_named(t.lib, kTunedKernel);
  const TuningEntry& entry = *t.db.find(kTunedKernel, kGpu);
  EXPECT_EQ(tuned.origin, ScheduleOrigin::kTuned);
  EXPECT_EQ(tuned.schedule.summary(), "rows: rows_per_thread 1, vector_width 2, threads_per_block 256");
  EXPECT_NE(tuned.schedule, kernel_named(plain, kTunedKernel).schedule) << "the test needs a schedule to change";
  EXPECT_EQ(tuned.tuned_gpu, kGpu);
  EXPECT_EQ(tuned.tuned_us, entry.time_us);
  EXPECT_EQ(tuned.default_us, entry.default_us);
  EXPECT_EQ(tuned.tuned_us, 2.0);
  EXPECT_EQ(tuned.default_us, 2.5);
  EXPECT_EQ(origin_text(tuned), "tuned on Test GPU: 1.25x the speed of the default rule's");
  // The workload is the spec's: where it is and that the spec set no knob.
  EXPECT_EQ(tuned.workload.where.file, "spec.yaml");
  EXPECT_EQ(tuned.workload.where.line, 3);
  EXPECT_TRUE(tuned.workload.schedule.keys.empty());
  EXPECT_FALSE(tuned.workload.schedule.algorithm.has_value());

  const KernelPlan& spec = kernel_named(t.lib, kSpecKernel);
  EXPECT_EQ(spec.origin, ScheduleOrigin::kSpec);
  EXPECT_EQ(spec.schedule, kernel_named(plain, kSpecKernel).schedule);
  EXPECT_EQ(spec.schedule.at("rows_per_thread"), 1);  // the spec's, not the entry's 4
  EXPECT_TRUE(spec.tuned_gpu.empty());

  const KernelPlan& untuned = kernel_named(t.lib, kUntunedKernel);
  EXPECT_EQ(untuned.origin, ScheduleOrigin::kDefault);
  EXPECT_EQ(untuned.schedule, kernel_named(plain, kUntunedKernel).schedule);
}

// The entry of another generator or template is reported and ignored.
TEST(TuningApply, AStaleFingerprintIsNotedAndIgnored) {
  const std::string stale = "0123456789abcdef";
  ASSERT_NE(stale, current_fingerprint(rows_template()));
  const std::string text = db_text({{kTunedKernel, kTunedSchedule, kGpu, stale}});
  const Tuned t = plan_with(text);
  const LibraryPlan plain = plan_library({parse(kSpec, "spec.yaml")}, "");
  const KernelPlan& k = kernel_named(t.lib, kTunedKernel);
  EXPECT_EQ(k.origin, ScheduleOrigin::kDefault);
  EXPECT_EQ(k.schedule, kernel_named(plain, kTunedKernel).schedule);
  ASSERT_EQ(t.lib.tuning_notes.size(), 1u);
  const Diagnostic& note = t.lib.tuning_notes[0];
  EXPECT_EQ(note.where.str(), t.db.entries[0].where.str());  // the entry, in the database
  EXPECT_EQ(note.where.str(), "tuning.yaml:3:5");
  EXPECT_NE(note.message.find("stale"), std::string::npos) << note.message;
  EXPECT_NE(note.message.find(kTunedKernel), std::string::npos) << note.message;
  EXPECT_NE(note.message.find(stale), std::string::npos) << note.message;
  EXPECT_NE(note.message.find(current_fingerprint(rows_template())), std::string::npos) << note.message;
  EXPECT_NE(note.message.find(rows_template()), std::string::npos) << note.message;
}

// The entries of several GPUs: the build must say which GPU it targets.
TEST(TuningApply, SeveralGpusNeedOneNamed) {
  const std::string fp = current_fingerprint(rows_template());
  const std::string text = db_text({{kTunedKernel, kTunedSchedule, "GPU A", fp},
                                    {kTunedKernel, "{algorithm: rows, rows_per_thread: 2, vector_width: 2}", "GPU B",
                                     fp}});
  const std::vector<Diagnostic> errors = spec_errors([&] { plan_with(text); });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].where.str(), "tuning.yaml:1:1");
  EXPECT_NE(errors[0].message.find("--tuning-gpu"), std::string::npos) << errors[0].message;
  EXPECT_NE(errors[0].message.find("'GPU A', 'GPU B'"), std::string::npos) << errors[0].message;
  EXPECT_THROW(plan_with(text), UsageError);  // the arguments' fault: the CLI's exit 2

  // Named, each GPU gets its own entry.
  const Tuned a = plan_with(text, "GPU A");
  EXPECT_EQ(kernel_named(a.lib, kTunedKernel).schedule.at("threads_per_block"), 256);
  EXPECT_EQ(kernel_named(a.lib, kTunedKernel).tuned_gpu, "GPU A");
  const Tuned b = plan_with(text, "GPU B");
  EXPECT_EQ(kernel_named(b.lib, kTunedKernel).schedule.at("rows_per_thread"), 2);
  EXPECT_EQ(kernel_named(b.lib, kTunedKernel).schedule.at("vector_width"), 2);
  EXPECT_EQ(kernel_named(b.lib, kTunedKernel).tuned_gpu, "GPU B");
}

// A GPU the database has no entry for is a usage error naming the GPUs it
// holds: a misspelt name must not silently build untuned kernels.
TEST(TuningApply, AGpuWithoutEntriesIsAnError) {
  const std::vector<Diagnostic> errors = spec_errors([&] { plan_with(current_db(), "Another GPU"); });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].str(), "tuning.yaml:1:1: error: --tuning-gpu 'Another GPU' (CMake: TUNING_GPU) matches no "
                             "entry of the tuning database, whose entries are for 'Test GPU'; name one of those GPUs, "
                             "or pass --allow-untuned (CMake: ALLOW_UNTUNED) to build with the default rule's "
                             "schedules");
  EXPECT_THROW(plan_with(current_db(), "Another GPU"), UsageError);
}

// With allow_untuned (--allow-untuned) it is a note, and every kernel keeps
// its default schedule (a build for a new GPU still works).
TEST(TuningApply, AGpuWithoutEntriesKeepsTheDefaultsWhereUntunedIsAllowed) {
  const Tuned t = plan_with(current_db(), "Another GPU", kSpec, OnInvalidWorkload::kFail, /*allow_untuned=*/true);
  const LibraryPlan plain = plan_library({parse(kSpec, "spec.yaml")}, "");
  ASSERT_EQ(t.lib.kernels.size(), plain.kernels.size());
  for (size_t i = 0; i < t.lib.kernels.size(); ++i) {
    EXPECT_NE(t.lib.kernels[i].origin, ScheduleOrigin::kTuned) << t.lib.kernels[i].name;
    EXPECT_EQ(t.lib.kernels[i].schedule, plain.kernels[i].schedule) << t.lib.kernels[i].name;
  }
  ASSERT_EQ(t.lib.tuning_notes.size(), 1u);
  EXPECT_EQ(t.lib.tuning_notes[0].where.str(), "tuning.yaml:1:1");
  EXPECT_NE(t.lib.tuning_notes[0].message.find("'Another GPU'"), std::string::npos) << t.lib.tuning_notes[0].message;
  EXPECT_NE(t.lib.tuning_notes[0].message.find("'Test GPU'"), std::string::npos) << t.lib.tuning_notes[0].message;
  // A GPU the database holds is applied as ever.
  const Tuned held = plan_with(current_db(), kGpu, kSpec, OnInvalidWorkload::kFail, /*allow_untuned=*/true);
  EXPECT_EQ(kernel_named(held.lib, kTunedKernel).origin, ScheduleOrigin::kTuned);
  EXPECT_TRUE(held.lib.tuning_notes.empty());
}

// A measured entry whose schedule does not fit its workload in this build
// (tuned for a looser GPU list than the build's, or by a generator with
// other limits) is a note at the entry, with the plan's own message, and the
// kernel keeps the default rule's schedule. An unverified one (edited, used
// on the user's word) is an error there.
TEST(TuningApply, AnEntryThatDoesNotFitIsANoteAtTheEntry) {
  const std::string spec = "library: t\nworkloads:\n  - {n: 1, c: 32, h: 30, w: 30, filter: 3, padding: same}\n";
  const char* const kernel = "dw_f32_nchw_n1_c32_h30_w30_k3x3_s1_p1_m1";
  const std::string text =
      "# a comment line, so that the entry is not on the first lines\n" +
      db_text({{kernel, "{algorithm: rows, rows_per_thread: 2, vector_width: 4, threads_per_block: 128}", kGpu,
                current_fingerprint(rows_template())}});
  const Tuned t = plan_with(text, "", spec);
  EXPECT_EQ(kernel_named(t.lib, kernel).origin, ScheduleOrigin::kDefault);
  ASSERT_EQ(t.lib.tuning_notes.size(), 1u);
  const Diagnostic& note = t.lib.tuning_notes[0];
  EXPECT_EQ(note.where.str(), "tuning.yaml:4:5");  // the entry's first key
  EXPECT_NE(note.message.find("ignored: the tuned schedule of " + std::string(kernel) + " does not fit"),
            std::string::npos)
      << note.message;
  EXPECT_NE(note.message.find("spec.yaml:3:5"), std::string::npos) << note.message;  // the workload
  EXPECT_NE(note.message.find("vector_width 4 does not divide the input width 30"), std::string::npos) << note.message;

  std::string edited = text;
  edited.replace(edited.find("threads_per_block: 128}"), 23, "threads_per_block: 64}");
  Tuned u;
  u.db = parse_tuning_text(edited, "tuning.yaml", TuningTrust::kAllowUnverified);
  u.selection.db = &u.db;
  u.selection.fingerprints = current_fingerprints();
  const std::vector<Diagnostic> errors =
      spec_errors([&] { plan_library({parse(spec, "spec.yaml")}, "", {}, OnInvalidWorkload::kFail, &u.selection); });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].where.str(), "tuning.yaml:4:5");
  EXPECT_NE(errors[0].message.find("does not fit"), std::string::npos) << errors[0].message;
}

// The entry's `op` must be its kernel's: a depthwise kernel's entry naming a
// conv2d schedule must not apply.
TEST(TuningApply, AnEntryOfAnotherOperatorsAlgorithmDoesNotApply) {
  EntryText e{kTunedKernel, "{algorithm: gemm, block_tile: [64, 64]}", kGpu, "0000000000000000"};
  e.op = "conv2d";
  std::vector<Diagnostic> errors = spec_errors([&] { plan_with(db_text({e})); });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].where.str(), "tuning.yaml:3:5");
  EXPECT_NE(errors[0].message.find("names op 'conv2d', but that kernel is a depthwise_conv2d"), std::string::npos)
      << errors[0].message;
}

// The kernel's header says where its schedule came from.
TEST(TuningApply, TheKernelHeaderNamesTheGpuAndTheSpeedup) {
  const Tuned t = plan_with(current_db());
  const Templates templates = Templates::load(CONVGEN_TEMPLATE_DIR);
  const std::string tuned = render_kernel(templates, t.lib, kernel_named(t.lib, kTunedKernel));
  EXPECT_NE(tuned.find("// Schedule (tuned on Test GPU: 1.25x the speed of the default rule's): rows: rows_per_thread "
                       "1, vector_width 2, threads_per_block 256\n"),
            std::string::npos)
      << tuned.substr(0, 1200);
  const std::string spec = render_kernel(templates, t.lib, kernel_named(t.lib, kSpecKernel));
  EXPECT_NE(spec.find("// Schedule (set in the spec): rows: "), std::string::npos) << spec.substr(0, 1200);
  const std::string untuned = render_kernel(templates, t.lib, kernel_named(t.lib, kUntunedKernel));
  EXPECT_NE(untuned.find("// Schedule (the default rule): rows: "), std::string::npos) << untuned.substr(0, 1200);
  // The tuner compiles a kernel alone with NVRTC: the launcher and host
  // headers are left out there.
  EXPECT_NE(tuned.find("#ifndef __CUDACC_RTC__"), std::string::npos);
  EXPECT_LT(tuned.find("#ifndef __CUDACC_RTC__"), tuned.find("#include <cuda_runtime.h>"));
}

// ---------------------------------------------------------------------------
// The CLI: --tuning, --tuning-gpu, the origin in `list` and `show`.

class TuningCli : public ::testing::Test {
 protected:
  void SetUp() override {
    write_file(tmp_ / "spec.yaml", kSpec);
    write_file(tmp_ / "tuning.yaml", current_db());
  }
  CommandResult convgen(const std::string& args) {
    return run_command("cd " + quote(tmp_.str()) + " && " + quote(CONVGEN_CLI) + " " + args + " --templates " +
                           quote(CONVGEN_TEMPLATE_DIR),
                       tmp_.path());
  }
  TempDir tmp_;
};

std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (char ch : line) {
    if (ch == '"') {
      quoted = !quoted;
    } else if (ch == ',' && !quoted) {
      fields.emplace_back();
    } else {
      fields.back() += ch;
    }
  }
  return fields;
}

TEST_F(TuningCli, ListShowsEachKernelsOrigin) {
  const CommandResult csv = convgen("list spec.yaml --tuning tuning.yaml --format csv");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(csv.err, "");
  const std::vector<std::string> lines = split_lines(csv.out);
  ASSERT_EQ(lines.size(), 4u) << csv.out;
  const std::vector<std::string> header = csv_fields(lines[0]);
  ASSERT_GE(header.size(), 3u);
  // The last three columns.
  EXPECT_EQ(std::vector<std::string>(header.end() - 3, header.end()),
            (std::vector<std::string>{"origin", "tuned_gpu", "tuned_speedup"}));
  std::map<std::string, std::map<std::string, std::string>> rows;
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::vector<std::string> fields = csv_fields(lines[i]);
    ASSERT_EQ(fields.size(), header.size()) << lines[i];
    for (size_t j = 0; j < header.size(); ++j) rows[fields[0]][header[j]] = fields[j];
  }
  EXPECT_EQ(rows[kTunedKernel]["origin"], "tuned");
  EXPECT_EQ(rows[kTunedKernel]["tuned_gpu"], "Test GPU");
  EXPECT_EQ(rows[kTunedKernel]["tuned_speedup"], "1.250");
  EXPECT_EQ(rows[kTunedKernel]["threads_per_block"], "256");
  EXPECT_EQ(rows[kSpecKernel]["origin"], "spec");
  EXPECT_EQ(rows[kSpecKernel]["tuned_gpu"], "");
  EXPECT_EQ(rows[kUntunedKernel]["origin"], "default");
  EXPECT_EQ(rows[kUntunedKernel]["tuned_speedup"], "");

  const CommandResult json = convgen("list spec.yaml --tuning tuning.yaml --format json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  for (const char* expected : {R"("source": "tuned")", R"("gpu": "Test GPU")", R"("speedup": 1.25)",
                               R"("tuned_us": 2.0)", R"("default_us": 2.5)", R"("source": "spec")",
                               R"("source": "default")"}) {
    EXPECT_NE(json.out.find(expected), std::string::npos) << "missing " << expected << " in\n" << json.out;
  }

  const CommandResult table = convgen("list spec.yaml --tuning tuning.yaml");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("tuned schedules: measured on Test GPU"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("tuned 1.25x"), std::string::npos) << table.out;

  // Without the database: no tuned row, no tuned columns filled.
  const CommandResult plain = convgen("list spec.yaml --format csv");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.out.find(",tuned,"), std::string::npos) << plain.out;
}

TEST_F(TuningCli, ShowAndGeneratePrintTheTunedHeader) {
  const CommandResult show = convgen("show spec.yaml --tuning tuning.yaml -k c32_h56");
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find("// Schedule (tuned on Test GPU: 1.25x the speed of the default rule's): rows: "),
            std::string::npos)
      << show.out.substr(0, 1200);
  const CommandResult generate = convgen("generate spec.yaml --tuning tuning.yaml -q --out out");
  ASSERT_EQ(generate.exit_code, 0) << generate.err;
  EXPECT_EQ(read_file(tmp_ / "out" / (std::string(kTunedKernel) + ".cu")), show.out);
}

// Past a few stale entries, the rest are counted in one note: a database
// tuned before the templates changed does not bury a build's output.
TEST(TuningApply, ManyStaleEntriesAreCountedInOneNote) {
  std::string spec = "library: t\nworkloads:\n";
  std::vector<EntryText> entries;
  for (int c = 8; c <= 64; c += 8) {
    spec += "  - {n: 1, c: " + std::to_string(c) + ", h: 16, w: 16, filter: 3, padding: same}\n";
    entries.push_back({"dw_f32_nchw_n1_c" + std::to_string(c) + "_h16_w16_k3x3_s1_p1_m1", kTunedSchedule, kGpu,
                       "0123456789abcdef"});
  }
  const Tuned t = plan_with(db_text(entries), "", spec);
  ASSERT_EQ(t.lib.tuning_notes.size(), 6u);
  for (size_t i = 0; i < 5; ++i) EXPECT_NE(t.lib.tuning_notes[i].message.find("(stale: tune it again)"), std::string::npos);
  EXPECT_EQ(t.lib.tuning_notes[5].where.str(), "tuning.yaml:1:1");
  EXPECT_NE(t.lib.tuning_notes[5].message.find("3 more of the tuning database's entries are stale"), std::string::npos)
      << t.lib.tuning_notes[5].message;
  EXPECT_NE(t.lib.tuning_notes[5].message.find("(8 in all)"), std::string::npos) << t.lib.tuning_notes[5].message;
  // A second planning with the same selection counts afresh.
  Tuned again;
  again.db = t.db;
  again.selection = t.selection;
  again.selection.db = &again.db;
  again.lib = plan_library({parse(spec, "spec.yaml")}, "", {}, OnInvalidWorkload::kFail, &again.selection);
  EXPECT_EQ(again.lib.tuning_notes.size(), 6u);
}

TEST_F(TuningCli, AStaleEntryIsANoteOnStderrAndTheRunSucceeds) {
  write_file(tmp_ / "stale.yaml", db_text({{kTunedKernel, kTunedSchedule, kGpu, "0123456789abcdef"}}));
  const CommandResult r = convgen("list spec.yaml --tuning stale.yaml --format csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("stale.yaml:3:5: note: ignored: the entry for " + std::string(kTunedKernel)), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("(stale: tune it again)"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find(",tuned,"), std::string::npos) << r.out;
}

// ---------------------------------------------------------------------------
// Tamper evidence: an entry changed after convgen wrote it.

// The current database with the tuned kernel's schedule edited by hand:
// rows_per_thread 1 -> 4, a schedule no GPU measured.
std::string edited_db() {
  std::string text = current_db();
  const std::string from = "rows_per_thread: 1, vector_width: 2", to = "rows_per_thread: 4, vector_width: 2";
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos);
  return text.replace(at, from.size(), to);
}

TEST(TuningChecksum, WhatConvgenWritesVerifiesAndLayoutDoesNotMatter) {
  const TuningDb db = parse_tuning_text(current_db(), "tuning.yaml");
  for (const TuningEntry& e : db.entries) EXPECT_TRUE(e.checksum_matches) << e.kernel;
  // Comments, quoting, key order, trailing zeros and flow style change no
  // value: the entry still verifies.
  std::string text = tuning_text(db);
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"    time_us: 2\n", "    # measured twice\n    time_us: 2.000\n"},
           {"gpu: \"Test GPU\"", "gpu: Test GPU"},
           {"candidates: {compiled: 10, verified: 9, rejected: 1, failed: 0}",
            "candidates:\n      failed: 0\n      compiled: 10\n      verified: 9\n      rejected: 1"}}) {
    const size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from << " in\n" << text;
    text.replace(at, from.size(), to);
  }
  const TuningDb again = parse_tuning_text(text, "again.yaml");
  ASSERT_EQ(again.entries.size(), db.entries.size());
  for (size_t i = 0; i < db.entries.size(); ++i) {
    EXPECT_EQ(tuning_entry_canonical(again.entries[i]), tuning_entry_canonical(db.entries[i]));
  }
}

TEST(TuningChecksum, AnEditedEntryIsAnErrorAtItsLineOrUnverifiedWhenAllowed) {
  const std::vector<Diagnostic> errors = spec_errors([] { parse_tuning_text(edited_db(), "tuning.yaml"); });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].str(),
            "tuning.yaml:3:5: error: the entry for " + std::string(kTunedKernel) +
                " on 'Test GPU' does not match its checksum: it was changed after convgen wrote it, so no "
                "measurement vouches for its schedule and times; tune the kernel again (convgen tune drops the entry "
                "and tunes it), restore the file from version control, or pass --allow-unverified-tuning (CMake: "
                "ALLOW_UNVERIFIED_TUNING) to use it marked unverified in a build; `convgen vouch FILE` re-signs it "
                "on your word (what `convgen tune merge`, which signs what it writes, needs)");

  Tuned t;
  t.db = parse_tuning_text(edited_db(), "tuning.yaml", TuningTrust::kAllowUnverified);
  ASSERT_FALSE(t.db.find(kTunedKernel, kGpu)->checksum_matches);
  ASSERT_TRUE(t.db.find(kSpecKernel, kGpu)->checksum_matches);
  t.selection.db = &t.db;
  t.selection.fingerprints = current_fingerprints();
  t.lib = plan_library({parse(kSpec, "spec.yaml")}, "", {}, OnInvalidWorkload::kFail, &t.selection);
  const KernelPlan& k = kernel_named(t.lib, kTunedKernel);
  EXPECT_EQ(k.origin, ScheduleOrigin::kUnverified);
  EXPECT_EQ(k.schedule.at("rows_per_thread"), 4);  // used, as asked
  EXPECT_EQ(k.tuned_us, 0);                        // but with no times: nothing measured it
  EXPECT_EQ(origin_text(k), "UNVERIFIED tuning entry for Test GPU: changed after convgen wrote it, no measurement "
                            "vouches for it");
  ASSERT_EQ(t.lib.tuning_notes.size(), 1u);
  EXPECT_EQ(t.lib.tuning_notes[0].where.str(), "tuning.yaml:3:5");
  EXPECT_NE(t.lib.tuning_notes[0].message.find("UNVERIFIED"), std::string::npos);

  // The writer signs only what it can vouch for.
  EXPECT_THROW(tuning_text(t.db), std::logic_error);
}

TEST(TuningChecksum, EntriesThatMatchNoKernelAreListedInANote) {
  const std::string fp = current_fingerprint(rows_template());
  const std::string text = db_text({{kTunedKernel, kTunedSchedule, kGpu, fp},
                                    {"dw_f32_nchw_n1_c32_h57_w56_k3x3_s1_p1_m1", kTunedSchedule, kGpu, fp},
                                    {"dw_removed", kTunedSchedule, "Other GPU", fp}});
  const Tuned t = plan_with(text, kGpu);
  ASSERT_EQ(t.lib.tuning_notes.size(), 1u) << t.lib.tuning_notes[0].str();
  EXPECT_EQ(t.lib.tuning_notes[0].where.str(), "tuning.yaml:19:5");  // the first of them
  EXPECT_EQ(t.lib.tuning_notes[0].message,
            "2 of the tuning database's 3 entries match no kernel of the specs and are not used (a workload "
            "changed or removed since tuning, or a database for other specs): "
            "dw_f32_nchw_n1_c32_h57_w56_k3x3_s1_p1_m1 (line 19), dw_removed (line 35)");
  EXPECT_EQ(kernel_named(t.lib, kTunedKernel).origin, ScheduleOrigin::kTuned);
}

TEST_F(TuningCli, AnEditedEntryFailsTheRunUnlessAllowedThenItIsListedUnverified) {
  write_file(tmp_ / "edited.yaml", edited_db());
  const CommandResult refused = convgen("list spec.yaml --tuning edited.yaml");
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_EQ(refused.out, "");
  EXPECT_NE(refused.err.find("edited.yaml:3:5: error: the entry for " + std::string(kTunedKernel) +
                             " on 'Test GPU' does not match its checksum"),
            std::string::npos)
      << refused.err;

  const CommandResult csv = convgen("list spec.yaml --tuning edited.yaml --allow-unverified-tuning --format csv");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_NE(csv.err.find("edited.yaml:3:5: note: the entry for " + std::string(kTunedKernel) +
                         " does not match its checksum"),
            std::string::npos)
      << csv.err;
  EXPECT_NE(csv.out.find(",unverified,\"Test GPU\",\n"), std::string::npos) << csv.out;
  EXPECT_EQ(csv.out.find(",tuned,"), std::string::npos) << "the spec's other kernel has its own schedule\n" << csv.out;

  const CommandResult table = convgen("list spec.yaml --tuning edited.yaml --allow-unverified-tuning");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("UNVERIFIED schedules: 1,"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("rows: rows_per_thread 4, vector_width 2, threads_per_block 256"), std::string::npos);
  EXPECT_EQ(table.out.find("tuned 1."), std::string::npos) << table.out;

  const CommandResult show = convgen("show spec.yaml --tuning edited.yaml --allow-unverified-tuning -k c32_h56");
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find("// Schedule (UNVERIFIED tuning entry for Test GPU: "), std::string::npos)
      << show.out.substr(0, 1200);

  const CommandResult alone = convgen("list spec.yaml --allow-unverified-tuning");
  EXPECT_EQ(alone.exit_code, 2);
  EXPECT_NE(alone.err.find("give the database with --tuning"), std::string::npos) << alone.err;
}

// `convgen vouch` signs what a person vouches for: an edited entry, a
// database of format 1. Nothing else makes an edit verify.
TEST_F(TuningCli, VouchSignsEditedEntriesAndFormatOne) {
  const auto vouch = [&](const std::string& file) {
    return run_command("cd " + quote(tmp_.str()) + " && " + quote(CONVGEN_CLI) + " vouch " + file, tmp_.path());
  };
  write_file(tmp_ / "edited.yaml", edited_db());
  const CommandResult signed_edit = vouch("edited.yaml");
  ASSERT_EQ(signed_edit.exit_code, 0) << signed_edit.err;
  EXPECT_EQ(signed_edit.out, "convgen: wrote edited.yaml in format 2: 2 entries, 1 of them signed on your word\n");
  EXPECT_NE(signed_edit.err.find("edited.yaml:3:5: note: vouched for the entry for " + std::string(kTunedKernel)),
            std::string::npos)
      << signed_edit.err;
  const CommandResult listed = convgen("list spec.yaml --tuning edited.yaml");
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_NE(listed.out.find("rows: rows_per_thread 4, vector_width 2, threads_per_block 256"), std::string::npos);

  // Format 1: no checksums, no end record. Refused, saying how to upgrade.
  std::string v1;
  std::istringstream lines(current_db());
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("    checksum:", 0) == 0 || line.rfind("    convgen:", 0) == 0 || line.rfind("end:", 0) == 0) {
      continue;
    }
    v1 += (line == "convgen_tuning: 2" ? "convgen_tuning: 1" : line) + "\n";
  }
  write_file(tmp_ / "v1.yaml", v1);
  const CommandResult old = convgen("list spec.yaml --tuning v1.yaml");
  EXPECT_EQ(old.exit_code, 1);
  EXPECT_NE(old.err.find("v1.yaml:1:17: error: this is a tuning database of format 1"), std::string::npos) << old.err;
  EXPECT_NE(old.err.find("`convgen vouch FILE`"), std::string::npos) << old.err;
  const CommandResult upgraded = vouch("v1.yaml");
  ASSERT_EQ(upgraded.exit_code, 0) << upgraded.err;
  EXPECT_EQ(upgraded.out, "convgen: wrote v1.yaml in format 2: 2 entries, 2 of them signed on your word\n");
  const CommandResult now = convgen("list spec.yaml --tuning v1.yaml");
  ASSERT_EQ(now.exit_code, 0) << now.err;
  EXPECT_NE(now.out.find("tuned 1.25x"), std::string::npos) << now.out;
}

TEST_F(TuningCli, GpuSelectionErrorsAndUsage) {
  const std::string fp = current_fingerprint(rows_template());
  write_file(tmp_ / "two.yaml", db_text({{kTunedKernel, kTunedSchedule, "GPU A", fp},
                                         {kTunedKernel, kTunedSchedule, "GPU B", fp}}));
  const CommandResult two = convgen("list spec.yaml --tuning two.yaml");
  EXPECT_EQ(two.exit_code, 2);
  EXPECT_EQ(two.out, "");
  EXPECT_NE(two.err.find("two.yaml:1:1: error: the tuning database holds entries for several GPUs"), std::string::npos)
      << two.err;
  EXPECT_NE(two.err.find("--tuning-gpu"), std::string::npos) << two.err;
  const CommandResult named = convgen("list spec.yaml --tuning two.yaml --tuning-gpu 'GPU B' --format csv");
  EXPECT_EQ(named.exit_code, 0) << named.err;
  EXPECT_NE(named.out.find("\"GPU B\""), std::string::npos) << named.out;
  // A GPU the database holds nothing for: a usage error naming those it
  // holds, unless --allow-untuned, where it is a note and the run goes on.
  const CommandResult unmatched = convgen("list spec.yaml --tuning two.yaml --tuning-gpu 'GPU C'");
  EXPECT_EQ(unmatched.exit_code, 2);
  EXPECT_EQ(unmatched.out, "");
  EXPECT_EQ(unmatched.err, "two.yaml:1:1: error: --tuning-gpu 'GPU C' (CMake: TUNING_GPU) matches no entry of the "
                           "tuning database, whose entries are for 'GPU A', 'GPU B'; name one of those GPUs, or pass "
                           "--allow-untuned (CMake: ALLOW_UNTUNED) to build with the default rule's schedules\n");
  const CommandResult untuned =
      convgen("list spec.yaml --tuning two.yaml --tuning-gpu 'GPU C' --allow-untuned --format csv");
  EXPECT_EQ(untuned.exit_code, 0) << untuned.err;
  EXPECT_NE(untuned.err.find("two.yaml:1:1: note: no entry is for GPU 'GPU C'"), std::string::npos) << untuned.err;
  EXPECT_EQ(untuned.out.find(",tuned,"), std::string::npos) << untuned.out;
  // --tuning-gpu or --allow-untuned alone names the GPU of no database.
  const CommandResult alone = convgen("list spec.yaml --tuning-gpu 'GPU B'");
  EXPECT_EQ(alone.exit_code, 2);
  EXPECT_NE(alone.err.find("give the database with --tuning"), std::string::npos) << alone.err;
  const CommandResult allow_alone = convgen("list spec.yaml --allow-untuned");
  EXPECT_EQ(allow_alone.exit_code, 2);
  EXPECT_NE(allow_alone.err.find("give the database with --tuning"), std::string::npos) << allow_alone.err;
  // A database path that is no file is a usage error, as a spec's is.
  const CommandResult missing = convgen("list spec.yaml --tuning no_such.yaml");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("tuning database: no such file"), std::string::npos) << missing.err;
}

// `convgen tune` takes no option of a build's database (it plans without
// one and writes --db), and checks what it writes and what --kernels picks
// before it tunes anything (a fake GPU: no GPU needed).
TEST_F(TuningCli, TuneRefusesBuildOptionsAndChecksItsFilesFirst) {
  const auto tune = [&](const std::string& args) {
    return run_command("cd " + quote(tmp_.str()) + " && CONVGEN_TUNE_FAKE_GPU='GPU A' " + quote(CONVGEN_CLI) +
                           " tune spec.yaml --templates " + quote(CONVGEN_TEMPLATE_DIR) + " " + args,
                       tmp_.path());
  };
  for (const char* option : {"--tuning tuning.yaml", "--tuning-gpu 'GPU A'", "--allow-untuned",
                             "--allow-unverified-tuning"}) {
    const CommandResult r = tune(std::string("--db out.yaml ") + option);
    EXPECT_EQ(r.exit_code, 2) << option;
    EXPECT_NE(r.err.find("tune plans its kernels without a tuning database"), std::string::npos) << r.err;
  }
  const CommandResult help = run_command(quote(CONVGEN_CLI) + " tune --help", tmp_.path());
  EXPECT_EQ(help.out.find("--tuning"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("those of the GPUs tuned on"), std::string::npos) << help.out;
  const CommandResult probe = tune("--db out.yaml --kernels no_such_kernel");
  if (probe.err.find("cannot tune") != std::string::npos) GTEST_SKIP() << "convgen was built without the tuner";
  EXPECT_EQ(probe.exit_code, 1);
  EXPECT_NE(probe.err.find("--kernels 'no_such_kernel' is in the name of no kernel"), std::string::npos) << probe.err;
  const CommandResult no_folder = tune("--db no_such_folder/out.yaml");
  EXPECT_EQ(no_folder.exit_code, 1);
  EXPECT_NE(no_folder.err.find("--db no_such_folder/out.yaml: the folder no_such_folder does not exist"),
            std::string::npos)
      << no_folder.err;
  const CommandResult no_report = tune("--db out.yaml --report no_such_folder/r.json");
  EXPECT_EQ(no_report.exit_code, 1);
  EXPECT_NE(no_report.err.find("--report no_such_folder/r.json: the folder"), std::string::npos) << no_report.err;
  // None of them tuned or wrote anything.
  EXPECT_FALSE(fs::exists(tmp_.path() / "out.yaml"));
}

// The version in `--version` is the one every fingerprint carries.
TEST(TuningCliVersion, VersionIsTheFingerprintsVersion) {
  TempDir tmp;
  const CommandResult r = run_command(quote(CONVGEN_CLI) + " --version", tmp.path());
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, std::string("convgen ") + kConvgenVersion + "\n");
  EXPECT_EQ(std::string(kConvgenVersion), "0.2.0");
}

// ---------------------------------------------------------------------------
// The schedule space.

// threads_per_block is 32..1024 in whole warps: 32 values, more than the
// tuner tries in full (Knob::kWholeSpace = 16), so its space is the round
// ones (2^i, 3*2^i, 7*2^i) and the range's ends.
TEST(ScheduleSpace, KnobSpacesOfTheRowsAndTilesAlgorithms) {
  const Operator& dw = *find_operator("depthwise_conv2d");
  const Algorithm& rows = *dw.algorithm("rows");
  const Knob& threads = *dw.knob(rows, "threads_per_block");
  EXPECT_EQ(threads.domain().size(), 32u);
  EXPECT_EQ(threads.space(), (std::vector<int>{32, 64, 96, 128, 192, 224, 256, 384, 448, 512, 768, 896, 1024}));
  // A domain of at most 16 values is tried whole.
  EXPECT_EQ(dw.knob(rows, "vector_width")->space(), (std::vector<int>{1, 2, 4, 8}));
  std::vector<int> one_to_16(16);
  for (int i = 0; i < 16; ++i) one_to_16[i] = i + 1;
  EXPECT_EQ(dw.knob(rows, "rows_per_thread")->space(), one_to_16);
  EXPECT_EQ(dw.knob(rows, "input_cache")->space(), (std::vector<int>{0, 1}));
  // block_tile's values are 1..256: 256 values, of which these are round.
  const Algorithm& tiles = *dw.algorithm("tiles");
  EXPECT_EQ(dw.knob(tiles, "block_tile")->space(),
            (std::vector<int>{1, 2, 3, 4, 6, 7, 8, 12, 14, 16, 24, 28, 32, 48, 56, 64, 96, 112, 128, 192, 224, 256}));
  EXPECT_EQ(dw.knob(tiles, "shared_input")->space(), (std::vector<int>{0, 1}));
  // conv2d direct's ci_step is 1..64: 64 values, of which these are round.
  const Operator& conv = *find_operator("conv2d");
  const Knob& ci_step = *conv.knob(*conv.algorithm("direct"), "ci_step");
  EXPECT_EQ(ci_step.space(), (std::vector<int>{1, 2, 3, 4, 6, 7, 8, 12, 14, 16, 24, 28, 32, 48, 56, 64}));
  // A knob the tuner leaves alone tries its default only: winograd_nonfused's
  // products stays fma (TF32 would round the transformed operands).
  const Knob& products = *conv.knob(*conv.algorithm("winograd_nonfused"), "products");
  EXPECT_FALSE(products.searched);
  EXPECT_EQ(products.space(), (std::vector<int>{0}));
  EXPECT_EQ(conv.knob(*conv.algorithm("gemm"), "products")->space(), (std::vector<int>{0, 1}));
  // Every other space is part of the knob's domain, in order, with its ends.
  for (const Operator* op : operators()) {
    for (const Algorithm* a : op->algorithms) {
      for (const std::vector<Knob>* knobs : {&a->knobs, &op->common_knobs}) {
        for (const Knob& k : *knobs) {
          if (!k.searched) continue;
          SCOPED_TRACE(a->name + "." + k.key);
          const std::vector<int> domain = k.domain(), space = k.space();
          ASSERT_FALSE(space.empty());
          EXPECT_TRUE(std::is_sorted(space.begin(), space.end()));
          EXPECT_TRUE(std::includes(domain.begin(), domain.end(), space.begin(), space.end()));
          EXPECT_EQ(space.front(), domain.front());
          EXPECT_EQ(space.back(), domain.back());
          if (domain.size() <= Knob::kWholeSpace) {
            EXPECT_EQ(space, domain);
          }
        }
      }
    }
  }
}

// One space per algorithm of the workload's operator; its size is the
// product of its knobs' space sizes (a knob of two values counts twice).
TEST(ScheduleSpace, SizesAreProductsOfTheKnobSpaces) {
  for (const char* mapping : {"{n: 1, c: 32, h: 56, w: 56, filter: 3, padding: same}",
                              "{op: conv2d, n: 1, c: 32, c_out: 64, h: 28, w: 28, filter: 1, padding: valid}"}) {
    SCOPED_TRACE(mapping);
    const Workload wl = workload(mapping);
    const Operator& op = *wl.op;
    const std::vector<AlgorithmSpace> spaces = schedule_space(wl);
    // Every algorithm that serves the workload, in order.
    std::vector<const Algorithm*> serving;
    for (const Algorithm* a : op.algorithms) {
      if (a->serves(wl)) serving.push_back(a);
    }
    ASSERT_EQ(spaces.size(), serving.size());
    for (size_t i = 0; i < spaces.size(); ++i) {
      const AlgorithmSpace& s = spaces[i];
      EXPECT_EQ(s.algorithm, serving[i]);
      std::vector<const Knob*> knobs;
      double size = 1;
      for (const std::vector<Knob>* list : {&s.algorithm->knobs, &op.common_knobs}) {
        for (const Knob& k : *list) {
          knobs.push_back(&k);
          for (size_t v = 0; v < k.values.size(); ++v) size *= static_cast<double>(k.space().size());
        }
      }
      EXPECT_EQ(s.knobs, knobs) << s.algorithm->name;
      EXPECT_EQ(s.size, size) << s.algorithm->name;
    }
  }
  // Worked out for rows: rows_per_thread 16 x vector_width 4 x threads_per_block 13
  // x input_cache 2 x output_cache 2.
  const std::vector<AlgorithmSpace> dw = schedule_space(workload("{n: 1, c: 8, h: 8, w: 8, filter: 3, padding: same}"));
  const auto rows = std::find_if(dw.begin(), dw.end(), [](const AlgorithmSpace& s) { return s.algorithm->name == "rows"; });
  ASSERT_NE(rows, dw.end());
  EXPECT_EQ(rows->size, 16.0 * 4 * 13 * 2 * 2);
}

const AlgorithmSpace& space_of(const std::vector<AlgorithmSpace>& spaces, const std::string& algorithm) {
  for (const AlgorithmSpace& s : spaces) {
    if (s.algorithm->name == algorithm) return s;
  }
  throw std::runtime_error("no space for " + algorithm);
}

// The tensor-core algorithms, whose kernels nvcc builds for the tuner (on
// CUTLASS's main loops), are in the spaces of the workloads they serve, and
// only there: a float16 NHWC workload's space holds implicit_gemm and, for
// a library built for sm_90a, implicit_gemm_sm90, each with its default
// among the schedules that fit; a float32 NCHW workload's holds neither.
TEST(ScheduleSpace, TheTensorCoreAlgorithmsAreSearchedWhereTheyServe) {
  const Workload half = workload(
      "{op: conv2d, n: 8, c: 64, c_out: 64, h: 28, w: 28, filter: 3, padding: same, dtype: float16, layout: NHWC}");
  PlanOptions sm90a;
  sm90a.target = parse_arch_list("90a");
  const std::vector<AlgorithmSpace> spaces = schedule_space(half);
  std::vector<std::string> names;
  for (const AlgorithmSpace& s : spaces) {
    names.push_back(s.algorithm->name);
    EXPECT_TRUE(s.algorithm->serves(half)) << s.algorithm->name;
  }
  for (const char* name : {"implicit_gemm", "implicit_gemm_sm90"}) {
    SCOPED_TRACE(name);
    ASSERT_NE(std::find(names.begin(), names.end(), name), names.end());
    const AlgorithmSpace& space = space_of(spaces, name);
    EXPECT_EQ(space.algorithm->tune_compiler, TuneCompiler::kNvcc);
    KernelPlan own;
    ASSERT_TRUE(try_plan(half, *space.algorithm, {}, sm90a, own));
    const KernelPlan again = plan_kernel(with_schedule(half, *space.algorithm, own.schedule.values), sm90a);
    EXPECT_EQ(again.schedule, own.schedule);
    // Its neighbours fit, and move the tile, the stages or the split.
    EXPECT_FALSE(neighbour_schedules(own, sm90a).empty());
  }
  EXPECT_EQ(std::find(names.begin(), names.end(), "direct"), names.end()) << "direct serves float32 NCHW only";

  // A default taken in turns (pingpong: 392 tiles, 2.97 an SM) plans again
  // to itself from its values, as a tuning database entry is applied; its
  // neighbours fit too.
  const Workload turns = workload(
      "{op: conv2d, n: 64, c: 128, c_out: 128, h: 28, w: 28, filter: 3, padding: same, dtype: float16, layout: NHWC}");
  const AlgorithmSpace& sm90 = space_of(schedule_space(turns), "implicit_gemm_sm90");
  KernelPlan own;
  ASSERT_TRUE(try_plan(turns, *sm90.algorithm, {}, sm90a, own));
  ASSERT_EQ(own.schedule.at("pingpong"), 1);
  EXPECT_EQ(plan_kernel(with_schedule(turns, *sm90.algorithm, own.schedule.values), sm90a).schedule, own.schedule);
  EXPECT_FALSE(neighbour_schedules(own, sm90a).empty());

  // float32 NCHW: every algorithm compiles with NVRTC but winograd_nonfused,
  // whose GEMM is CUTLASS's.
  const Workload single = workload("{op: conv2d, n: 8, c: 64, c_out: 64, h: 28, w: 28, filter: 3, padding: same}");
  for (const AlgorithmSpace& s : schedule_space(single)) {
    EXPECT_EQ(s.algorithm->tune_compiler,
              s.algorithm->name == "winograd_nonfused" ? TuneCompiler::kNvcc : TuneCompiler::kNvrtc)
        << s.algorithm->name;
    // Its candidates alone are checked against F(4x4)'s bound; the
    // workload's reference is the products' (tight for every other one).
    EXPECT_EQ(s.algorithm->winograd_f4_bound, s.algorithm->name == "winograd_nonfused") << s.algorithm->name;
  }
  EXPECT_FALSE(single.op->reference_problem(single, 8).winograd_f4);
}

// Every schedule enumerate_schedules gives plans as it says; it gives every
// one of the space that plans (counted here independently), the default
// rule's among them.
TEST(ScheduleSpace, EnumerateGivesExactlyTheSchedulesThatFit) {
  const Workload wl = workload("{n: 1, c: 16, h: 8, w: 8, filter: 3, padding: same}");
  const std::vector<AlgorithmSpace> spaces = schedule_space(wl);
  const AlgorithmSpace& rows = space_of(spaces, "rows");
  const Schedule def = default_schedule(wl);
  ASSERT_EQ(def.algorithm, rows.algorithm) << "the test needs a workload whose default is rows";

  std::vector<KernelPlan> plans;
  ASSERT_TRUE(enumerate_schedules(wl, rows, rows.size, {}, plans));
  ASSERT_FALSE(plans.empty());
  std::set<std::map<std::string, int>> seen;
  for (const KernelPlan& p : plans) {
    SCOPED_TRACE(p.schedule.summary());
    EXPECT_EQ(p.schedule.algorithm, rows.algorithm);
    EXPECT_TRUE(seen.insert(p.schedule.values).second) << "listed twice";
    // It plans again to the same schedule, and keeps the spec's (empty) request.
    const KernelPlan again = plan_kernel(with_schedule(wl, *rows.algorithm, p.schedule.values));
    EXPECT_EQ(again.schedule, p.schedule);
    EXPECT_TRUE(p.workload.schedule.keys.empty());
    EXPECT_EQ(p.name, kernel_name(wl));
  }
  EXPECT_TRUE(seen.count(def.values)) << "the default rule's schedule is missing: " << def.summary();

  // Independently: every combination of the knobs' spaces, planned one by one.
  size_t fit = 0, tried = 0;
  const std::vector<int> rpt = rows.algorithm->knobs[0].space();
  for (int r : rpt) {
    for (int v : find_operator("depthwise_conv2d")->knob(*rows.algorithm, "vector_width")->space()) {
      for (int t : find_operator("depthwise_conv2d")->knob(*rows.algorithm, "threads_per_block")->space()) {
        for (int in : {0, 1}) {
          for (int out : {0, 1}) {
            ++tried;
            const std::map<std::string, int> values = {{"rows_per_thread", r}, {"vector_width", v},
                                                       {"threads_per_block", t}, {"input_cache", in},
                                                       {"output_cache", out}};
            try {
              plan_kernel(with_schedule(wl, *rows.algorithm, values));
              ++fit;
              EXPECT_TRUE(seen.count(values)) << "enumerate_schedules left out a schedule that fits";
            } catch (const InputError&) {
              EXPECT_FALSE(seen.count(values)) << "enumerate_schedules gave a schedule that does not fit";
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(static_cast<double>(tried), rows.size);
  EXPECT_EQ(plans.size(), fit);
  EXPECT_LT(fit, tried) << "on an 8x8 plane some schedules (16 rows per lane) must not fit";

  // Over the limit: nothing, and false.
  std::vector<KernelPlan> none;
  EXPECT_FALSE(enumerate_schedules(wl, rows, rows.size - 1, {}, none));
  EXPECT_TRUE(none.empty());
}

// The schedules one step away: each differs from where it started, fits,
// and moves one knob (or, for a knob of several values, its values) to the
// next value of its space.
TEST(ScheduleSpace, NeighboursDifferFitAndAreOneStepAway) {
  for (const char* mapping : {"{n: 1, c: 32, h: 56, w: 56, filter: 3, padding: same}",
                              "{n: 1, c: 32, h: 56, w: 56, filter: 3, padding: same, schedule: {algorithm: tiles}}",
                              "{op: conv2d, n: 1, c: 32, c_out: 64, h: 28, w: 28, filter: 1, padding: valid}"}) {
    SCOPED_TRACE(mapping);
    const Workload wl = workload(mapping);
    const KernelPlan from = plan_kernel(wl);
    const std::vector<KernelPlan> next = neighbour_schedules(from, {});
    ASSERT_FALSE(next.empty());
    const Operator& op = *wl.op;
    std::set<std::map<std::string, int>> seen;
    for (const KernelPlan& p : next) {
      SCOPED_TRACE(p.schedule.summary());
      EXPECT_EQ(p.schedule.algorithm, from.schedule.algorithm);
      EXPECT_NE(p.schedule.values, from.schedule.values);
      EXPECT_TRUE(seen.insert(p.schedule.values).second) << "listed twice";
      EXPECT_NO_THROW(plan_kernel(with_schedule(wl, *p.schedule.algorithm, p.schedule.values)));
      // The values that changed belong to one knob, and each moved to a neighbour in its space.
      std::set<const Knob*> moved;
      for (const auto& [name, value] : p.schedule.values) {
        const int was = from.schedule.at(name);
        if (value == was) continue;
        const Knob* knob = nullptr;
        for (const std::vector<Knob>* list : {&p.schedule.algorithm->knobs, &op.common_knobs}) {
          for (const Knob& k : *list) {
            if (std::find(k.values.begin(), k.values.end(), name) != k.values.end()) knob = &k;
          }
        }
        ASSERT_NE(knob, nullptr) << name;
        moved.insert(knob);
        // One step along the space from the value (or, off the space, the nearest one).
        const std::vector<int> space = knob->space();
        size_t i = 0;
        for (size_t j = 0; j < space.size(); ++j) {
          if (std::abs(space[j] - was) < std::abs(space[i] - was)) i = j;
        }
        const bool one_step = (i > 0 && value == space[i - 1]) || (i + 1 < space.size() && value == space[i + 1]);
        EXPECT_TRUE(one_step) << name << " moved from " << was << " to " << value << ", not one step of its space";
      }
      EXPECT_EQ(moved.size(), 1u);
    }
  }
  // Worked out: the rows default of 56x56 (threads_per_block 128) has
  // neighbours at 96 and 192 threads, all else equal.
  const KernelPlan from = plan("{n: 1, c: 32, h: 56, w: 56, filter: 3, padding: same}");
  ASSERT_EQ(from.schedule.at("threads_per_block"), 128);
  std::set<int> threads;
  for (const KernelPlan& p : neighbour_schedules(from, {})) {
    std::map<std::string, int> rest = p.schedule.values;
    rest["threads_per_block"] = 128;
    if (rest == from.schedule.values) threads.insert(p.schedule.at("threads_per_block"));
  }
  EXPECT_EQ(threads, (std::set<int>{96, 192}));
}

// A random walk stays in the space of schedules that fit, and the same seed
// walks the same way.
TEST(ScheduleSpace, RandomWalkFitsAndIsReproducible) {
  const Workload wl = workload("{n: 1, c: 32, h: 56, w: 56, filter: 3, padding: same, schedule: {algorithm: tiles}}");
  const KernelPlan from = plan_kernel(wl);
  std::mt19937_64 a(42), b(42);
  const KernelPlan wa = random_walk(from, 6, a, {});
  const KernelPlan wb = random_walk(from, 6, b, {});
  EXPECT_EQ(wa.schedule, wb.schedule);
  EXPECT_EQ(wa.schedule.algorithm, from.schedule.algorithm);
  EXPECT_NO_THROW(plan_kernel(with_schedule(wl, *wa.schedule.algorithm, wa.schedule.values)));
  EXPECT_EQ(random_walk(from, 0, a, {}).schedule, from.schedule);
}

// try_plan: a schedule that fits gives its plan; one that does not leaves
// the plan as it was and says false.
TEST(ScheduleSpace, TryPlanLeavesThePlanAloneWhenTheScheduleDoesNotFit) {
  const Workload wl = workload("{n: 1, c: 32, h: 30, w: 30, filter: 3, padding: same}");
  const Algorithm& rows = *find_operator("depthwise_conv2d")->algorithm("rows");
  KernelPlan p;
  p.name = "untouched";
  EXPECT_FALSE(try_plan(wl, rows, {{"rows_per_thread", 2}, {"vector_width", 4}, {"threads_per_block", 128},
                                   {"input_cache", 0}, {"output_cache", 0}},
                        {}, p));
  EXPECT_EQ(p.name, "untouched");
  EXPECT_TRUE(try_plan(wl, rows, {{"rows_per_thread", 2}, {"vector_width", 2}, {"threads_per_block", 128},
                                  {"input_cache", 0}, {"output_cache", 0}},
                       {}, p));
  EXPECT_EQ(p.name, kernel_name(wl));
  EXPECT_EQ(p.schedule.at("vector_width"), 2);
}

}  // namespace
}  // namespace convgen_test
