// Writes the spec fuzzer's dictionary (libFuzzer's -dict format) from the
// generator's own vocabulary: every key, algorithm and word, the numbers at
// and around every limit, the keys of a tuning database (read off what
// tuning_text writes), and YAML's punctuation.
//   fuzz_spec_dictionary > spec.dict
#include <cstdio>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "convgen/gen/operator.hpp"
#include "convgen/gen/spec.hpp"
#include "convgen/gen/tuning_db.hpp"

namespace {

// Every key a tuning database has, as tuning_text writes one (so the list
// never falls behind the format), and the values of its fixed-form fields.
std::set<std::string> tuning_words() {
  using namespace convgen::gen;
  TuningDb db;
  for (const char* objective : {"hot", "cold"}) {
    TuningEntry e;
    e.kernel = std::string("k_") + objective;
    e.op = operators().front();
    e.gpu = {"G", 1, "9.0"};
    e.schedule.algorithm = e.op->algorithms.front()->name;
    e.objective = objective;
    e.date = "2026-01-31";
    e.fingerprint = tuning_fingerprint("");
    db.put(e);
  }
  std::set<std::string> words = {"hot", "cold", "\"9.0\"", "2026-01-31", tuning_fingerprint("")};
  static const std::regex kKey(R"(([a-z_]+):)");
  std::istringstream text(tuning_text(db));
  for (std::string line; std::getline(text, line);) {
    if (line.rfind("#", 0) == 0) continue;
    for (std::sregex_iterator it(line.begin(), line.end(), kKey), end; it != end; ++it) words.insert((*it)[1]);
  }
  return words;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) {
    std::printf("usage: fuzz_spec_dictionary > spec.dict\n"
                "Prints a libFuzzer dictionary of every spec and tuning-database key, word and limit the\n"
                "generator knows.\n");
    return std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h" ? 0 : 2;
  }
  const convgen::gen::SpecVocabulary v = convgen::gen::spec_vocabulary();
  std::set<std::string> printed;
  const auto word = [&printed](const std::string& w) {
    if (printed.insert(w).second) std::printf("\"%s\"\n\"%s: \"\n", w.c_str(), w.c_str());
  };
  for (const std::string& w : v.words) word(w);
  for (const std::string& w : tuning_words()) {
    std::string escaped;
    for (char c : w) escaped += c == '"' ? std::string("\\x22") : std::string(1, c);
    word(escaped);
  }
  for (long long n : v.numbers) std::printf("\"%lld\"\n", n);
  for (const char* yaml : {"- ", ": ", "[", "]", "{", "}", ", ", "&a ", "*a", "<<: ", "---", "...", "\\x0a  ",
                           "\\x0a- ", "!!int ", "!!str ", "~", "null", "0x10", "1e3", "-0", "\\x22", "'"}) {
    std::printf("\"%s\"\n", yaml);
  }
  return 0;
}
