// The bad-tuning-database corpus: every file in tests/bad_tuning is a tuning
// database with one mistake (a few have several), and starts with the
// diagnostics it must produce (the format is in corpus_util.h).
//
// Each database is applied to the shipped seeds spec, whose kernels its
// entries name, twice: through the library (parse_tuning_file, then
// plan_library with the current fingerprints must throw InputError with
// exactly those diagnostics) and through the CLI (`convgen list` and
// `convgen generate` with --tuning must exit 1, or the status the file
// states, print them on stderr with the database's path, print nothing on
// stdout and write nothing). A file may name the GPU to apply
// ("# tuning-gpu:", corpus_util.h).
//
// A database over the 1 MiB limit is made here rather than committed.
#include <gtest/gtest.h>

#include <fstream>

#include "convgen/gen/operator.hpp"
#include "convgen/gen/plan.hpp"
#include "convgen/gen/render.hpp"
#include "convgen/gen/tuning_db.hpp"
#include "corpus_util.h"
#include "test_util.h"

namespace convgen_test {
namespace {

const std::string kSeedsSpec = std::string(CONVGEN_SOURCE_DIR) + "/specs/seeds.yaml";

std::vector<fs::path> bad_tuning_paths() { return corpus_paths(CONVGEN_BAD_TUNING_DIR); }

// What the library reports for a database applied to the seeds spec.
std::vector<Diagnostic> library_diagnostics(const fs::path& path, const std::string& gpu, bool* threw) {
  *threw = false;
  const Spec seeds = parse_spec_file(kSeedsSpec);  // valid: any error below is the database's
  try {
    const TuningDb db = parse_tuning_file(path.string());
    TuningSelection selection;
    selection.db = &db;
    selection.gpu = gpu;
    selection.fingerprints = tuning_fingerprints(Templates::load(CONVGEN_TEMPLATE_DIR));
    plan_library({seeds}, "", {}, OnInvalidWorkload::kFail, &selection);
  } catch (const InputError& e) {
    *threw = true;
    return e.diagnostics();
  }
  return {};
}

TEST(BadTuningCorpus, IsLargeAndEveryFileStatesItsDiagnostics) {
  check_corpus_is_well_formed(bad_tuning_paths(), 35);
}

class BadTuning : public ::testing::TestWithParam<fs::path> {
 protected:
  void SetUp() override {
    file_ = load_corpus_file(GetParam());
    ASSERT_EQ(file_.format_error, "");
    ASSERT_FALSE(file_.expected.empty()) << GetParam() << " has no '# expect:' line";
  }
  std::string trace() const {
    return file_.known_bug.empty() ? std::string() : "\n*** " + file_.known_bug + " ***";
  }
  // Runs convgen `subcommand` on the seeds spec with this database, from the
  // corpus directory (so that the CLI names the database as the
  // expectations do).
  CommandResult convgen(const std::string& subcommand, const TempDir& tmp) const {
    const std::string gpu = file_.tuning_gpu.empty() ? "" : " --tuning-gpu " + quote(file_.tuning_gpu);
    return run_command("cd " + quote(GetParam().parent_path().string()) + " && " + quote(CONVGEN_CLI) + " " +
                           subcommand + " " + quote(kSeedsSpec) + " --tuning " +
                           quote(GetParam().filename().string()) + gpu + " --templates " +
                           quote(CONVGEN_TEMPLATE_DIR),
                       tmp.path());
  }
  CorpusFile file_;
};

TEST_P(BadTuning, LibraryThrowsSpecErrorWithTheExpectedDiagnostics) {
  SCOPED_TRACE(GetParam().string() + trace());
  bool threw = false;
  const std::vector<Diagnostic> got = library_diagnostics(GetParam(), file_.tuning_gpu, &threw);
  ASSERT_TRUE(threw) << "parse_tuning_file + plan_library accepted a bad tuning database";
  check_library_diagnostics(file_, got);
}

TEST_P(BadTuning, ListFailsAndPrintsTheDiagnostics) {
  SCOPED_TRACE(GetParam().string() + trace());
  TempDir tmp;
  const CommandResult r = convgen("list", tmp);
  EXPECT_EQ(r.exit_code, file_.exit_code) << "stderr:\n" << r.err;  // invalid input, unless the file says otherwise
  EXPECT_EQ(r.out, "") << "a failed run printed on stdout";
  check_cli_diagnostics(file_, r.err);
}

TEST_P(BadTuning, GenerateFailsAndWritesNothing) {
  SCOPED_TRACE(GetParam().string() + trace());
  TempDir tmp;
  const fs::path out = tmp / "out";
  const CommandResult r = convgen("generate --out " + quote(out.string()), tmp);
  EXPECT_EQ(r.exit_code, file_.exit_code) << "stderr:\n" << r.err;
  EXPECT_EQ(r.out, "") << "a failed run printed on stdout";
  EXPECT_FALSE(fs::exists(out)) << "a failed run created the output directory";
}

INSTANTIATE_TEST_SUITE_P(Corpus, BadTuning, ::testing::ValuesIn(bad_tuning_paths()), corpus_test_name);

// ---------------------------------------------------------------------------
// The size limit: a database is at most 1 MiB, checked before it is read.

constexpr size_t kLimit = 1u << 20;

// A valid database (one entry, for a seeds kernel, as convgen writes it)
// padded with a comment to `size` bytes.
void write_padded_db(const fs::path& path, size_t size) {
  TuningEntry e;
  e.kernel = "dw_f32_nchw_n1_c256_h21_w21_k3x3_s1_p1_m1";
  e.op = find_operator("depthwise_conv2d");
  e.gpu = {"NVIDIA H100 80GB HBM3", 132, "9.0"};
  e.schedule.algorithm = "rows";
  e.time_us = 1.35;
  e.default_us = 1.4;
  e.date = "2026-11-24";
  e.fingerprint = "0123456789abcdef";
  TuningDb one;
  one.entries.push_back(e);
  const std::string db = tuning_text(one) + "#";
  ASSERT_LT(db.size() + 1, size);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << db << std::string(size - db.size() - 1, '.') << '\n';
  ASSERT_TRUE(out.good());
  out.close();
  ASSERT_EQ(fs::file_size(path), size);
}

TEST(BadTuningSize, OverOneMebibyteIsRefusedBeforeReading) {
  TempDir tmp;
  const fs::path big = tmp / "big.yaml";
  write_padded_db(big, kLimit + 1);
  const std::vector<Diagnostic> errors = spec_errors([&] { parse_tuning_file(big.string()); });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].where.file, big.string());
  EXPECT_EQ(errors[0].where.line, 0);  // about the file, not a line of it
  EXPECT_EQ(errors[0].str(), big.string() + ": error: the tuning database is 1048577 bytes; one is at most "
                                            "1048576 bytes (1 MiB): keep one database per spec");
  // The same through the text entry point.
  const std::vector<Diagnostic> text_errors =
      spec_errors([&] { parse_tuning_text(std::string(kLimit + 1, '#'), "text.yaml"); });
  ASSERT_EQ(text_errors.size(), 1u);
  EXPECT_EQ(text_errors[0].where.line, 0);
  EXPECT_NE(text_errors[0].message.find("1 MiB"), std::string::npos);

  const CommandResult r = run_command("cd " + quote(tmp.str()) + " && " + quote(CONVGEN_CLI) + " list " +
                                          quote(kSeedsSpec) + " --tuning big.yaml",
                                      tmp.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "big.yaml: error: the tuning database is 1048577 bytes; one is at most 1048576 bytes (1 MiB): "
                   "keep one database per spec\n");
}

// At the limit exactly, the database is read.
TEST(BadTuningSize, SixteenMebibytesIsRead) {
  TempDir tmp;
  const fs::path at_limit = tmp / "at_limit.yaml";
  write_padded_db(at_limit, kLimit);
  const TuningDb db = parse_tuning_file(at_limit.string());
  ASSERT_EQ(db.entries.size(), 1u);
  EXPECT_EQ(db.entries[0].gpu.name, "NVIDIA H100 80GB HBM3");
}

}  // namespace
}  // namespace convgen_test
