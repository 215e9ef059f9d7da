// The bad-spec corpus: every file in tests/bad_specs has one mistake (a few
// have several), and starts with the diagnostics it must produce (the format
// is in corpus_util.h).
//
// Each file is checked twice: through the library (parse_spec_file +
// plan_library must throw InputError with exactly those diagnostics) and
// through the CLI (`convgen generate` must fail, print them on stderr, and
// leave the output directory alone).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "convgen/gen/output.hpp"
#include "convgen/gen/plan.hpp"
#include "convgen/gen/render.hpp"
#include "convgen/gen/spec.hpp"
#include "corpus_util.h"
#include "test_util.h"

namespace convgen_test {
namespace {

std::vector<fs::path> bad_spec_paths() { return corpus_paths(CONVGEN_BAD_SPECS_DIR); }

// What the library reports for a spec file: parse, then plan (for the GPUs
// of its "# archs:" line, if any).
std::vector<Diagnostic> library_diagnostics(const fs::path& path, const std::string& archs, bool* threw) {
  *threw = false;
  try {
    const Spec spec = parse_spec_file(path.string());
    PlanOptions options;
    if (!archs.empty()) options.target = parse_arch_list(archs);
    plan_library({spec}, "", options);
  } catch (const InputError& e) {
    *threw = true;
    return e.diagnostics();
  }
  return {};
}

TEST(BadSpecCorpus, IsLargeAndEveryFileStatesItsDiagnostics) { check_corpus_is_well_formed(bad_spec_paths(), 35); }

class BadSpec : public ::testing::TestWithParam<fs::path> {
 protected:
  void SetUp() override {
    file_ = load_corpus_file(GetParam());
    ASSERT_EQ(file_.format_error, "");
    ASSERT_FALSE(file_.expected.empty()) << GetParam() << " has no '# expect:' line";
  }
  std::string trace() const {
    return file_.known_bug.empty() ? std::string() : "\n*** " + file_.known_bug + " ***";
  }
  CorpusFile file_;
};

TEST_P(BadSpec, LibraryThrowsSpecErrorWithTheExpectedDiagnostics) {
  SCOPED_TRACE(GetParam().string() + trace());
  bool threw = false;
  const std::vector<Diagnostic> got = library_diagnostics(GetParam(), file_.archs, &threw);
  ASSERT_TRUE(threw) << "parse_spec_file + plan_library accepted a bad spec";
  check_library_diagnostics(file_, got);
}

TEST_P(BadSpec, CliFailsPrintsTheDiagnosticsAndWritesNothing) {
  SCOPED_TRACE(GetParam().string() + trace());
  TempDir tmp;
  const fs::path out = tmp / "out";
  // Run from the corpus directory, so that the CLI names the file as the
  // expectations do.
  const std::string command = "cd " + quote(GetParam().parent_path().string()) + " && " + quote(CONVGEN_CLI) +
                              " generate " + quote(GetParam().filename().string()) + " --out " +
                              quote(out.string()) + (file_.archs.empty() ? "" : " --archs " + quote(file_.archs));
  const CommandResult r = run_command(command, tmp.path());
  EXPECT_GE(r.exit_code, 1) << "stderr:\n" << r.err;
  EXPECT_EQ(r.out, "") << "a failed run printed on stdout";
  EXPECT_FALSE(fs::exists(out)) << "a failed run created the output directory";

  check_cli_diagnostics(file_, r.err);
}

INSTANTIATE_TEST_SUITE_P(Corpus, BadSpec, ::testing::ValuesIn(bad_spec_paths()), corpus_test_name);

// A failed run leaves an existing output directory exactly as it was, even
// with --prune.
TEST(BadSpecCli, ExistingOutputDirectoryIsLeftAlone) {
  TempDir tmp;
  const fs::path out = tmp / "out";
  write_file(out / "old_kernel.cu", "// an old kernel\n");
  write_file(out / "bad.h", "// an old header\n");
  const fs::path spec = fs::path(CONVGEN_BAD_SPECS_DIR) / "threads_over_1024.yaml";
  const CommandResult r = run_command(
      quote(CONVGEN_CLI) + " generate " + quote(spec.string()) + " --prune --out " + quote(out.string()), tmp.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(": error: threads 64x32 x channels_per_block 1 = 2048 per block"), std::string::npos) << r.err;
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(out)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"bad.h", "old_kernel.cu"}));
  EXPECT_EQ(read_file(out / "old_kernel.cu"), "// an old kernel\n");
}

// Several spec files: the diagnostics of all of them, in one run.
TEST(BadSpecCli, ReportsTheErrorsOfEverySpecGiven) {
  TempDir tmp;
  const std::string dir = CONVGEN_BAD_SPECS_DIR;
  const CommandResult r2 = run_command(
      "cd " + quote(dir) + " && " + quote(CONVGEN_CLI) + " check negative_channels.yaml unknown_dtype.yaml --name lib",
      tmp.path());
  EXPECT_EQ(r2.exit_code, 1);
  EXPECT_NE(r2.err.find("negative_channels.yaml:5:8: error: 'c' must be an integer from 1 to 65535, got -3"),
            std::string::npos)
      << r2.err;
  EXPECT_NE(r2.err.find("unknown_dtype.yaml:10:12: error: 'dtype' must be one of float32, float16, bfloat16, got 'float64'"),
            std::string::npos)
      << r2.err;
}

// The CLI's happy path, for contrast: the shipped seeds spec generates exactly
// the files that `convgen outputs` announces, and a second run writes nothing.
TEST(Cli, GenerateWritesTheAnnouncedFilesAndIsIdempotent) {
  TempDir tmp;
  const std::string spec = std::string(CONVGEN_SOURCE_DIR) + "/specs/seeds.yaml";
  const std::string templates = quote(CONVGEN_TEMPLATE_DIR);
  const fs::path out = tmp / "out";
  const CommandResult listed =
      run_command(quote(CONVGEN_CLI) + " outputs " + quote(spec) + " --templates " + templates, tmp.path());
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  std::vector<std::string> announced = split_lines(listed.out);
  const LibraryPlan lib = plan_library({parse_spec_file(spec)}, "");
  std::vector<std::string> expected = output_names(lib);
  expected.push_back(manifest_name(lib.name));
  EXPECT_EQ(announced, expected);
  ASSERT_GT(announced.size(), 2u);

  const std::string generate =
      quote(CONVGEN_CLI) + " generate " + quote(spec) + " --templates " + templates + " --out " + quote(out.string());
  const CommandResult first = run_command(generate, tmp.path());
  ASSERT_EQ(first.exit_code, 0) << first.err;
  std::vector<std::string> written;
  for (const auto& entry : fs::directory_iterator(out)) {
    if (entry.path().filename() != kLockFileName) written.push_back(entry.path().filename().string());
  }
  std::sort(written.begin(), written.end());
  std::sort(announced.begin(), announced.end());
  EXPECT_EQ(written, announced);

  const CommandResult second = run_command(generate, tmp.path());
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_NE(second.out.find("0 file(s) written, " + std::to_string(announced.size()) + " unchanged"),
            std::string::npos)
      << second.out;
}

// Splits a CSV line; a quoted field may hold commas.
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

// `convgen list` shows each kernel's algorithm with its own knobs: in CSV,
// the other algorithm's columns are empty; in JSON, "schedule" holds them.
TEST(Cli, ListShowsEachKernelsAlgorithm) {
  TempDir tmp;
  write_file(tmp / "two.yaml", R"(library: two
workloads:
  - {n: 64, c: 32, h: 112, w: 112, filter: 3, padding: same}
  - {n: runtime, c: 32, h: 112, w: 112, filter: 3, stride: 2, padding: same, schedule: {algorithm: tiles}}
)");
  const std::string list = "cd " + quote(tmp.str()) + " && " + quote(CONVGEN_CLI) + " list two.yaml";

  const CommandResult csv = run_command(list + " --format csv", tmp.path());
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  const std::vector<std::string> lines = split_lines(csv.out);
  ASSERT_EQ(lines.size(), 3u) << csv.out;
  const std::vector<std::string> header = csv_fields(lines[0]);
  std::map<std::string, std::string> rows, tiles;
  for (const auto& [line, row] : {std::pair{lines[1], &rows}, std::pair{lines[2], &tiles}}) {
    const std::vector<std::string> fields = csv_fields(line);
    ASSERT_EQ(fields.size(), header.size()) << line;
    for (size_t i = 0; i < header.size(); ++i) (*row)[header[i]] = fields[i];
  }
  EXPECT_EQ(rows["name"], "dw_f32_nchw_n64_c32_h112_w112_k3x3_s1_p1_m1");
  EXPECT_EQ(rows["algorithm"], "rows");
  EXPECT_EQ(rows["rows_per_thread"], "4");
  EXPECT_EQ(rows["vector_width"], "4");
  EXPECT_EQ(rows["threads_per_block"], "128");
  EXPECT_EQ(rows["alignment"], "16");
  EXPECT_EQ(rows["smem_bytes"], "0");
  for (const char* column : {"tile_h", "tile_w", "threads_y", "threads_x", "vthreads_y", "vthreads_x", "shared_input",
                             "shared_filter", "channels_per_block"}) {
    EXPECT_EQ(rows.at(column), "") << column;
  }
  EXPECT_EQ(tiles["name"], "dw_f32_nchw_nany_c32_h112_w112_k3x3_s2_p1_m1");
  EXPECT_EQ(tiles["algorithm"], "tiles");
  EXPECT_EQ(tiles["tile_h"], "32");
  EXPECT_EQ(tiles["threads_x"], "32");
  EXPECT_EQ(tiles["shared_input"], "0");
  EXPECT_EQ(tiles["alignment"], "4");
  for (const char* column : {"rows_per_thread", "vector_width", "threads_per_block"}) {
    EXPECT_EQ(tiles.at(column), "") << column;
  }

  const CommandResult json = run_command(list + " --format json", tmp.path());
  ASSERT_EQ(json.exit_code, 0) << json.err;
  // Keys are printed sorted, one per line.
  for (const char* expected : {R"("algorithm": "rows",)", R"("alignment": 16,)", R"("group_lanes": 32,)",
                               R"("bands": 28,)", R"("vector_width": 4)", R"("algorithm": "tiles",)",
                               R"("alignment": 4,)", R"("channels_per_block": 1,)"}) {
    EXPECT_NE(json.out.find(expected), std::string::npos) << "missing " << expected << " in\n" << json.out;
  }

  const CommandResult table = run_command(list, tmp.path());
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("rows: rows_per_thread 4, vector_width 4, threads_per_block 128"), std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("tiles: block_tile 32x32, threads 8x32, vthreads 1x1, input from global memory"),
            std::string::npos)
      << table.out;
}

// `convgen list` shows each kernel's dtype and layout, in CSV columns and
// JSON keys, matching its name's parts. The spec asks for every dtype x
// layout of both operators; those no algorithm serves yet are left out
// (--skip-invalid), and exactly the others are listed.
// Every fallback visible: list's table ends with the kernels some GPUs of
// the library do not run, grouped by those GPUs, named where few.
TEST(Cli, ListNamesTheGpusWhereCallsRunTheGenericKernel) {
  TempDir tmp;
  write_file(tmp / "mixed.yaml",
             "library: mixed\n"
             "defaults: {op: conv2d, dtype: float16, layout: NHWC, n: 8, padding: same}\n"
             "workloads:\n"
             "  - {c: 64, c_out: 64, h: 28, w: 28, filter: 3}\n"
             "  - {c: 256, c_out: 256, h: 7, w: 7, filter: 3, schedule: {algorithm: implicit_gemm, split_k: 2}}\n"
             "  - {op: depthwise_conv2d, dtype: float32, layout: NCHW, c: 32, h: 28, w: 28, filter: 3}\n");
  const std::string list = "cd " + quote(tmp.str()) + " && " + quote(CONVGEN_CLI) + " list mixed.yaml --archs ";
  const CommandResult mixed = run_command(list + "'75;80;90'", tmp.path());
  ASSERT_EQ(mixed.exit_code, 0) << mixed.err;
  EXPECT_NE(mixed.out.find("\n1 kernel(s) run on sm_80 and newer: on sm_75 their calls run the generic kernel:\n"
                           "  conv_f16_nhwc_n8_c64_co64_h28_w28_k3x3_s1_p1\n"),
            std::string::npos)
      << mixed.out;
  EXPECT_NE(mixed.out.find("\n1 kernel(s) run on sm_90 and newer: on sm_75, sm_80 their calls run the generic "
                           "kernel:\n  conv_f16_nhwc_n8_c256_co256_h7_w7_k3x3_s1_p1\n"),
            std::string::npos)
      << mixed.out;
  EXPECT_EQ(mixed.out.find("dw_f32_nchw_n8_c32_h28_w28_k3x3_s1_p1_m1\n"), std::string::npos) << mixed.out;
  // A library of GPUs that run them all says nothing more.
  const CommandResult h100 = run_command(list + "90", tmp.path());
  ASSERT_EQ(h100.exit_code, 0) << h100.err;
  EXPECT_EQ(h100.out.find("generic kernel"), std::string::npos) << h100.out;
}

TEST(Cli, ListShowsEachKernelsDtypeAndLayout) {
  using convgen::DataTypeRow;
  using convgen::kDataTypeTable;
  using convgen::kLayoutTable;
  using convgen::LayoutRow;
  TempDir tmp;
  std::string spec = "library: storages\nworkloads:\n";
  std::set<std::string> served;  // the names the list must show
  for (const char* op : {"depthwise_conv2d", "conv2d"}) {
    for (const DataTypeRow& d : kDataTypeTable) {
      for (const LayoutRow& l : kLayoutTable) {
        const std::string text = std::string("{op: ") + op + (std::string(op) == "conv2d" ? ", c_out: 16" : "") +
                                 ", n: 1, c: 32, h: 28, w: 28, filter: 3, padding: same, dtype: " + d.word +
                                 ", layout: " + l.word + "}";
        spec += "  - " + text + "\n";
        const Workload wl = workload(text);
        for (const Algorithm* a : wl.op->algorithms) {
          if (a->serves(wl)) {
            served.insert(kernel_name(wl));
            break;
          }
        }
      }
    }
  }
  ASSERT_FALSE(served.empty());
  write_file(tmp / "storages.yaml", spec);
  const std::string list =
      "cd " + quote(tmp.str()) + " && " + quote(CONVGEN_CLI) + " list storages.yaml --skip-invalid";

  const CommandResult csv = run_command(list + " --format csv", tmp.path());
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  const std::vector<std::string> lines = split_lines(csv.out);
  ASSERT_GE(lines.size(), 2u) << csv.out;
  const std::vector<std::string> header = csv_fields(lines[0]);
  std::set<std::string> listed;
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::vector<std::string> fields = csv_fields(lines[i]);
    ASSERT_EQ(fields.size(), header.size()) << lines[i];
    std::map<std::string, std::string> row;
    for (size_t j = 0; j < header.size(); ++j) row[header[j]] = fields[j];
    const std::string& name = row["name"];
    listed.insert(name);
    const DataTypeRow* dtype = nullptr;
    const LayoutRow* layout = nullptr;
    for (const DataTypeRow& d : kDataTypeTable) {
      if (row["dtype"] == d.word) dtype = &d;
    }
    for (const LayoutRow& l : kLayoutTable) {
      if (row["layout"] == l.word) layout = &l;
    }
    ASSERT_NE(dtype, nullptr) << name << ": dtype column '" << row["dtype"] << "'";
    ASSERT_NE(layout, nullptr) << name << ": layout column '" << row["layout"] << "'";
    const std::string parts = std::string("_") + dtype->name_part + "_" + layout->name_part + "_";
    EXPECT_NE(name.find(parts), std::string::npos) << name << " listed as " << dtype->word << " " << layout->word;
  }
  EXPECT_EQ(listed, served);

  const CommandResult json = run_command(list + " --format json", tmp.path());
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json doc = nlohmann::json::parse(json.out);
  std::set<std::string> in_json;
  for (const nlohmann::json& k : doc.at("kernels")) {
    const std::string name = k.at("name");
    in_json.insert(name);
    const std::string dtype = k.at("dtype"), layout = k.at("layout");
    for (const DataTypeRow& d : kDataTypeTable) {
      if (dtype == d.word) {
        EXPECT_NE(name.find(std::string("_") + d.name_part + "_"), std::string::npos) << name;
      }
    }
    for (const LayoutRow& l : kLayoutTable) {
      if (layout == l.word) {
        EXPECT_NE(name.find(std::string("_") + l.name_part + "_"), std::string::npos) << name;
      }
    }
  }
  EXPECT_EQ(in_json, served);
}

}  // namespace
}  // namespace convgen_test

namespace convgen_test {
namespace {

// `convgen knobs` lists every operator's algorithms and knobs from the one
// list the parser uses, with the values each knob takes.
TEST(Cli, KnobsListsEveryAlgorithmAndItsValues) {
  TempDir tmp;
  const CommandResult table = run_command(quote(CONVGEN_CLI) + " knobs", tmp.path());
  ASSERT_EQ(table.exit_code, 0) << table.err;
  for (const Operator* op : operators()) {
    EXPECT_NE(table.out.find("op: " + op->name + "\n"), std::string::npos) << op->name;
    for (const Algorithm* a : op->algorithms) {
      EXPECT_NE(table.out.find("  algorithm: " + a->name + "\n"), std::string::npos) << a->name;
      for (const Knob& k : a->knobs) EXPECT_NE(table.out.find("    " + k.key + " "), std::string::npos) << k.key;
    }
  }
  EXPECT_NE(table.out.find("1, 2, 4"), std::string::npos);  // vector_width: its allowed values
  EXPECT_NE(table.out.find("32..1024, multiples of 32"), std::string::npos);  // threads_per_block
  EXPECT_NE(table.out.find("normal | evict_first"), std::string::npos);
  const CommandResult json = run_command(quote(CONVGEN_CLI) + " knobs --format json", tmp.path());
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.out.find(R"("algorithm": "gemm")"), std::string::npos);
  EXPECT_NE(json.out.find(R"("domain_size": 3)"), std::string::npos);  // vector_width
}

}  // namespace
}  // namespace convgen_test

namespace convgen_test {
namespace {

// Exit status: 0 success, 1 invalid input, 2 usage error (`convgen --help`).
TEST(Cli, ExitStatusSeparatesUsageErrorsFromInvalidInput) {
  TempDir tmp;
  fs::create_directories(tmp / "a_directory");
  write_file(tmp / "good.yaml", "library: good\nworkloads:\n  - {n: 1, c: 8, h: 8, w: 8, filter: 3, padding: same}\n");
  write_file(tmp / "bad.yaml", "library: bad\nworkloads:\n  - {n: 1, c: 8, h: 8, w: 8, filter: 3}\n");
  const std::string cli = "cd " + quote(tmp.str()) + " && " + quote(CONVGEN_CLI);
  EXPECT_EQ(run_command(cli + " check good.yaml", tmp.path()).exit_code, 0);
  EXPECT_EQ(run_command(cli + " check bad.yaml", tmp.path()).exit_code, 1);
  const CommandResult directory = run_command(cli + " check a_directory", tmp.path());
  EXPECT_EQ(directory.exit_code, 2);
  EXPECT_NE(directory.err.find("directory"), std::string::npos) << directory.err;
  EXPECT_EQ(run_command(cli + " check no_such.yaml", tmp.path()).exit_code, 2);
  // A FIFO would block a reader until something writes to it: refused at once.
  ASSERT_EQ(mkfifo((tmp / "fifo.yaml").c_str(), 0600), 0);
  const CommandResult fifo = run_command(cli + " check fifo.yaml", tmp.path());
  EXPECT_EQ(fifo.exit_code, 2);
  EXPECT_NE(fifo.err.find("fifo.yaml is not a regular file"), std::string::npos) << fifo.err;
  EXPECT_EQ(run_command(cli + " check --no-such-option good.yaml", tmp.path()).exit_code, 2);
  EXPECT_EQ(run_command(cli + " check good.yaml --name 9lives", tmp.path()).exit_code, 2);  // an option's value
  const CommandResult db_directory = run_command(cli + " check good.yaml --tuning a_directory", tmp.path());
  EXPECT_EQ(db_directory.exit_code, 2);
  EXPECT_NE(db_directory.err.find("a tuning database is a YAML file"), std::string::npos) << db_directory.err;
  EXPECT_EQ(run_command(cli, tmp.path()).exit_code, 2);  // no subcommand
  const CommandResult help = run_command(cli + " --help", tmp.path());
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("Exit status: 0 success; 1 invalid input"), std::string::npos) << help.out;
}

// Options that would make headers of nonsense are refused, a library of no
// kernel is said plainly, and `check` finds what `generate` would not get past.
TEST(Cli, RefusesWhatWouldGenerateNothingUseful) {
  TempDir tmp;
  write_file(tmp / "good.yaml", "library: good\nworkloads:\n  - {n: 1, c: 8, h: 8, w: 8, filter: 3, padding: same}\n");
  write_file(tmp / "none.yaml", "library: none\nworkloads:\n  - {n: 1, c: 0, h: 8, w: 8, filter: 3, padding: same}\n");
  const std::string cli = "cd " + quote(tmp.str()) + " && " + quote(CONVGEN_CLI);
  // --skip-invalid with every workload invalid: a library of no kernel, said plainly.
  const CommandResult none = run_command(cli + " generate none.yaml --skip-invalid -o out", tmp.path());
  EXPECT_EQ(none.exit_code, 0) << none.err;
  EXPECT_NE(none.err.find("none.yaml:1:1: warning: every workload is invalid"), std::string::npos) << none.err;
  const CommandResult outputs = run_command(cli + " outputs none.yaml --skip-invalid", tmp.path());
  EXPECT_NE(outputs.err.find("library none has no kernel"), std::string::npos) << outputs.err;
  // A copy bandwidth the floors cannot divide by.
  for (const char* tbps : {"0", "-1", "inf", "fast"}) {
    const CommandResult r = run_command(cli + " check good.yaml --copy-bandwidth-tbps " + tbps, tmp.path());
    EXPECT_EQ(r.exit_code, 2) << tbps;
    EXPECT_NE(r.err.find("must be a positive number of TB/s"), std::string::npos) << r.err;
  }
  // A misspelt --algorithm for convgen tune is refused before any search
  // (it searched nothing and timed the default alone), where the tool has
  // the tuner.
  if (run_command(quote(CONVGEN_CLI) + " tune --help", tmp.path()).exit_code == 0) {
    const CommandResult algorithm = run_command(cli + " tune good.yaml --algorithm pointwis", tmp.path());
    EXPECT_EQ(algorithm.exit_code, 2);
    EXPECT_NE(algorithm.err.find("pointwis not in {"), std::string::npos) << algorithm.err;
    EXPECT_NE(algorithm.err.find("pointwise"), std::string::npos) << algorithm.err;
  }
  // Templates that are not there fail check as they would fail generate.
  const CommandResult templates = run_command(cli + " check good.yaml --templates no_such_folder", tmp.path());
  EXPECT_EQ(templates.exit_code, 1);
  EXPECT_NE(templates.err.find("cannot read template no_such_folder/"), std::string::npos) << templates.err;
  // CONVGEN_TEMPLATES set but empty is unset, not the root folder.
  const CommandResult empty = run_command("cd " + quote(tmp.str()) + " && CONVGEN_TEMPLATES= " + quote(CONVGEN_CLI) +
                                              " check good.yaml",
                                          tmp.path());
  EXPECT_EQ(empty.exit_code, 0) << empty.err;
}

// `convgen archs`: an empty list, or options that only go with --check
// given without it (or against it), are usage errors; an architecture the
// table lacks is a note, as --archs gives one.
TEST(Cli, ArchsRefusesOptionsThatWouldBeIgnored) {
  TempDir tmp;
  const std::string cli = quote(CONVGEN_CLI) + " archs";
  EXPECT_EQ(run_command(cli + " --check ''", tmp.path()).exit_code, 2);
  EXPECT_EQ(run_command(cli + " --check 90 --default", tmp.path()).exit_code, 2);
  EXPECT_EQ(run_command(cli + " --cuda-version 13.0", tmp.path()).exit_code, 2);
  const CommandResult unknown = run_command(cli + " --check 91", tmp.path());
  EXPECT_EQ(unknown.exit_code, 0);
  EXPECT_EQ(unknown.out, "91\n");
  EXPECT_NE(unknown.err.find("sm_91: not in convgen's table of GPUs"), std::string::npos) << unknown.err;
  EXPECT_EQ(run_command(cli + " --check '75;90' --cuda-version 13.0", tmp.path()).exit_code, 0);
}

}  // namespace
}  // namespace convgen_test
