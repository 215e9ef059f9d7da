// The error corpora (tests/bad_specs, tests/bad_tuning): every file has one
// mistake (a few have several), and starts with the diagnostics it must
// produce:
//
//   # expect: <file>:<line>:<col>: error: <text>
//
// one line per diagnostic, in the order the generator reports them. <file> is
// the file's own name; line and column must match exactly; the message must
// contain <text>, where " ... " stands for any text in between (a path that
// depends on where the checkout lies, say). Below the expectations, a file
// may state how it is run:
//
//   # tuning-gpu: <name>   (tests/bad_tuning: passed as --tuning-gpu)
//   # archs: <list>        (tests/bad_specs: the GPUs planned for, as --archs;
//                           default: convgen's list)
//   # exit: <status>       (the CLI's exit status; default 1, invalid input)
//
// A comment line starting with "# KNOWN GENERATOR BUG" below those explains
// a failure that is the generator's, not the test's.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <regex>
#include <string>
#include <vector>

#include "test_util.h"

namespace convgen_test {

struct Expectation {
  std::string file;
  int line = 0, column = 0;
  std::vector<std::string> parts;  // the message contains these, in this order
  std::string text;                // as written, for messages
};

struct CorpusFile {
  fs::path path;
  std::vector<Expectation> expected;
  std::string tuning_gpu;    // "# tuning-gpu:", if any
  std::string archs;         // "# archs:", if any
  int exit_code = 1;         // "# exit:", else invalid input
  std::string known_bug;     // the "# KNOWN GENERATOR BUG" note, if any
  std::string format_error;  // a malformed expectation line
};

inline std::vector<std::string> split_parts(const std::string& text) {
  std::vector<std::string> parts;
  size_t from = 0;
  for (size_t at; (at = text.find(" ... ", from)) != std::string::npos; from = at + 5) {
    parts.push_back(text.substr(from, at - from));
  }
  parts.push_back(text.substr(from));
  return parts;
}

inline CorpusFile load_corpus_file(const fs::path& path) {
  static const std::regex kExpect(R"(^# expect: ([^:]+):([0-9]+):([0-9]+): error: (.+)$)");
  static const std::regex kExit(R"(^# exit: ([0-9]+)$)");
  const std::string kTuningGpu = "# tuning-gpu: ";
  const std::string kArchs = "# archs: ";
  CorpusFile f;
  f.path = path;
  for (const std::string& line : split_lines(read_file(path))) {
    std::smatch m;
    if (line.rfind("# expect:", 0) == 0) {
      if (!std::regex_match(line, m, kExpect)) {
        f.format_error = "malformed expectation: " + line;
        continue;
      }
      f.expected.push_back({m[1], std::stoi(m[2]), std::stoi(m[3]), split_parts(m[4]), m[4]});
    } else if (line.rfind(kTuningGpu, 0) == 0) {
      f.tuning_gpu = line.substr(kTuningGpu.size());
    } else if (line.rfind(kArchs, 0) == 0) {
      f.archs = line.substr(kArchs.size());
    } else if (std::regex_match(line, m, kExit)) {
      f.exit_code = std::stoi(m[1]);
    } else {
      if (line.rfind("# KNOWN GENERATOR BUG", 0) == 0) f.known_bug = line.substr(2);
      break;
    }
  }
  return f;
}

// The .yaml files of a corpus directory, sorted.
inline std::vector<fs::path> corpus_paths(const std::string& dir) {
  std::vector<fs::path> paths;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.path().extension() == ".yaml") paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

// Whether `message` contains the parts in order.
inline bool contains_in_order(const std::string& message, const std::vector<std::string>& parts) {
  size_t at = 0;
  for (const std::string& part : parts) {
    const size_t found = message.find(part, at);
    if (found == std::string::npos) return false;
    at = found + part.size();
  }
  return true;
}

inline std::string describe(const std::vector<Diagnostic>& diagnostics) {
  std::string text;
  for (const Diagnostic& d : diagnostics) text += "    " + d.str() + "\n";
  return text.empty() ? "    (none)\n" : text;
}

// Every file of the corpus states its diagnostics, about itself; enough of
// them report several at once.
inline void check_corpus_is_well_formed(const std::vector<fs::path>& paths, size_t min_files) {
  EXPECT_GE(paths.size(), min_files);
  int with_several = 0;
  for (const fs::path& path : paths) {
    const CorpusFile f = load_corpus_file(path);
    EXPECT_EQ(f.format_error, "") << path;
    ASSERT_FALSE(f.expected.empty()) << path << ": the first line must be '# expect: ...'";
    for (const Expectation& e : f.expected) {
      EXPECT_EQ(e.file, path.filename().string()) << path << ": an expectation names another file";
    }
    if (f.expected.size() >= 2) ++with_several;
  }
  EXPECT_GE(with_several, 2) << "the corpus needs files that report several errors at once";
}

// The library's diagnostics for a corpus file are exactly those it states:
// its path (as given), line and column, and the message.
inline void check_library_diagnostics(const CorpusFile& file, const std::vector<Diagnostic>& got) {
  ASSERT_EQ(got.size(), file.expected.size()) << "diagnostics reported:\n" << describe(got);
  for (size_t i = 0; i < got.size(); ++i) {
    const Expectation& e = file.expected[i];
    const Diagnostic& d = got[i];
    SCOPED_TRACE("expected #" + std::to_string(i + 1) + ": " + e.file + ":" + std::to_string(e.line) + ":" +
                 std::to_string(e.column) + ": error: " + e.text + "\n  got: " + d.str());
    const std::string expected_at = file.path.string() + ":" + std::to_string(e.line) + ":" + std::to_string(e.column);
    EXPECT_EQ(d.where.file + ":" + std::to_string(d.where.line) + ":" + std::to_string(d.where.column), expected_at);
    EXPECT_TRUE(contains_in_order(d.message, e.parts));
    // What a person reads: "file:line:col: error: message".
    if (d.where.line == e.line && d.where.column == e.column) {
      EXPECT_EQ(d.str(), expected_at + ": error: " + d.message);
    }
  }
}

// The CLI's stderr (run from the corpus directory, so that it names the
// file as the expectations do) holds exactly the stated errors, in order.
inline void check_cli_diagnostics(const CorpusFile& file, const std::string& err) {
  std::vector<std::string> error_lines;
  for (const std::string& line : split_lines(err)) {
    if (line.find(": error: ") != std::string::npos) error_lines.push_back(line);
  }
  ASSERT_EQ(error_lines.size(), file.expected.size()) << "stderr:\n" << err;
  for (size_t i = 0; i < error_lines.size(); ++i) {
    const Expectation& e = file.expected[i];
    const std::string prefix = e.file + ":" + std::to_string(e.line) + ":" + std::to_string(e.column) + ": error: ";
    EXPECT_TRUE(error_lines[i].rfind(prefix, 0) == 0)
        << "expected a line starting with '" << prefix << "'\n  got: '" << error_lines[i] << "'";
    EXPECT_TRUE(contains_in_order(error_lines[i], e.parts))
        << "expected '" << e.text << "'\n  got: '" << error_lines[i] << "'";
  }
}

// A test name from a file name: its stem, with '_' for anything else than
// letters and digits.
inline std::string corpus_test_name(const ::testing::TestParamInfo<fs::path>& info) {
  std::string name = info.param.stem().string();
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

}  // namespace convgen_test
