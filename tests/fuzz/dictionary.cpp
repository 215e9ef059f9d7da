// Writes the spec fuzzer's dictionary (libFuzzer's -dict format) from the
// generator's own vocabulary: every key, algorithm and word, the numbers at
// and around every limit, and YAML's punctuation.
//   fuzz_spec_dictionary > spec.dict
#include <cstdio>
#include <string>

#include "convgen/gen/spec.hpp"

int main(int argc, char** argv) {
  if (argc > 1) {
    std::printf("usage: fuzz_spec_dictionary > spec.dict\n"
                "Prints a libFuzzer dictionary of every spec key, word and limit the generator knows.\n");
    return std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h" ? 0 : 2;
  }
  const convgen::gen::SpecVocabulary v = convgen::gen::spec_vocabulary();
  for (const std::string& w : v.words) std::printf("\"%s\"\n\"%s: \"\n", w.c_str(), w.c_str());
  for (long long n : v.numbers) std::printf("\"%lld\"\n", n);
  for (const char* yaml : {"- ", ": ", "[", "]", "{", "}", ", ", "&a ", "*a", "<<: ", "---", "...", "\\x0a  ",
                           "\\x0a- ", "!!int ", "!!str ", "~", "null", "0x10", "1e3", "-0", "\\x22", "'"}) {
    std::printf("\"%s\"\n", yaml);
  }
  return 0;
}
