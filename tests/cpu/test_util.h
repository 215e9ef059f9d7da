// Helpers shared by the CPU tests: temporary directories, files from
// strings, specs from strings, running the CLI.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "convgen/gen/plan.hpp"
#include "convgen/gen/spec.hpp"

namespace convgen_test {

namespace fs = std::filesystem;
using namespace convgen::gen;

// A fresh directory under $TMPDIR, removed with everything in it on scope exit.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "convgen_test_XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const fs::path& path() const { return path_; }
  std::string str() const { return path_.string(); }
  fs::path operator/(const std::string& name) const { return path_ / name; }

 private:
  fs::path path_;
};

inline void write_file(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

inline std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

inline std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// A spec from text; "test.yaml" in messages.
inline Spec parse(const std::string& yaml, const std::string& path = "test.yaml") {
  return parse_spec_text(yaml, path);
}

// The one workload of a spec made of `library: t` and the given workload
// text, which is a flow mapping, e.g. "{n: 1, c: 8, h: 16, w: 16, filter: 3, padding: same}".
inline Workload workload(const std::string& flow_mapping) {
  const Spec spec = parse("library: t\nworkloads:\n  - " + flow_mapping + "\n");
  if (spec.workloads.size() != 1) throw std::runtime_error("expected one workload");
  return spec.workloads.front();
}

inline KernelPlan plan(const std::string& flow_mapping, const PlanOptions& options = {}) {
  return plan_kernel(workload(flow_mapping), options);
}

// The diagnostics a call throws with InputError; a test failure if it throws
// nothing.
template <typename F>
std::vector<Diagnostic> spec_errors(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.diagnostics();
  }
  ADD_FAILURE() << "expected an InputError";
  return {};
}

// The schedule keys a spec sets, in its order, separated by spaces.
inline std::string keys_of(const ScheduleRequest& s) {
  std::string text;
  for (const ScheduleRequest::Key& k : s.keys) text += (text.empty() ? "" : " ") + k.key;
  return text;
}

inline std::string quote(const std::string& s) { return "'" + s + "'"; }

struct CommandResult {
  int exit_code = -1;
  std::string out, err;
};

// Runs a shell command line with stdout and stderr captured to files in `scratch`.
inline CommandResult run_command(const std::string& command, const fs::path& scratch) {
  const fs::path out = scratch / "stdout.txt", err = scratch / "stderr.txt";
  const std::string line = command + " >" + quote(out.string()) + " 2>" + quote(err.string());
  const int status = std::system(line.c_str());
  CommandResult r;
  r.exit_code = (status != -1 && WIFEXITED(status)) ? WEXITSTATUS(status) : -1;
  r.out = fs::exists(out) ? read_file(out) : "";
  r.err = fs::exists(err) ? read_file(err) : "";
  return r;
}

}  // namespace convgen_test
