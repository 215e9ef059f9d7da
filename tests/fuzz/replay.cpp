// Replays inputs through the fuzzer's checks (as a spec and as a tuning
// database) without libFuzzer: the ctest test fuzz_corpus_replay runs the
// committed corpus this way on every build.
//   fuzz_spec_replay FILE_OR_DIR...
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "spec_input.hpp"

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
    std::printf("usage: fuzz_spec_replay FILE_OR_DIR...\n"
                "Runs every file (directories: every file in them, sorted) through the spec fuzzer's checks,\n"
                "as a spec (parse, validate, plan and render in memory) and as a tuning database (parse, write\n"
                "and read back, apply to a fixed spec and render). Exits 0 when every input keeps its\n"
                "guarantees; a broken one aborts with the reason and the input's name.\n");
    return argc < 2 ? 2 : 0;
  }
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; ++i) {
    const fs::path arg = argv[i];
    if (fs::is_directory(arg)) {
      std::vector<fs::path> in_dir;
      for (const auto& entry : fs::directory_iterator(arg)) {
        if (entry.is_regular_file()) in_dir.push_back(entry.path());
      }
      std::sort(in_dir.begin(), in_dir.end());
      inputs.insert(inputs.end(), in_dir.begin(), in_dir.end());
    } else if (fs::is_regular_file(arg)) {
      inputs.push_back(arg);
    } else {
      std::fprintf(stderr, "fuzz_spec_replay: %s is neither a file nor a directory\n", argv[i]);
      return 2;
    }
  }
  int generated = 0, applied = 0;
  for (const fs::path& path : inputs) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    std::fprintf(stderr, "%s\n", path.c_str());  // the input to blame if a check aborts
    const convgen::fuzz::Verdicts v = convgen::fuzz::check_input(text.str());
    if (v.spec == convgen::fuzz::Verdict::kGenerated) ++generated;
    if (v.tuning == convgen::fuzz::Verdict::kGenerated) ++applied;
  }
  std::printf("replayed %zu inputs: as specs, %d generated a library and %zu were rejected with their diagnostics; "
              "as tuning databases, %d were applied and %zu rejected\n",
              inputs.size(), generated, inputs.size() - generated, applied, inputs.size() - applied);
  return 0;
}
