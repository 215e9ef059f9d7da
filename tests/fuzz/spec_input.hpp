// The one check the spec fuzzer and its corpus replay run on an input: the
// generator's stages in memory (parse -> validate -> plan -> render), with
// the guarantees every input must keep.
#pragma once

#include <string>

namespace convgen::fuzz {

enum class Verdict { kRejected, kGenerated };

// Runs the stages on `text` as if it were the spec file "fuzz.yaml".
// Rejected: the spec gets a SpecError whose every diagnostic names
// fuzz.yaml:line:col inside the text (or the file alone, for a file-level
// error) with a short, non-empty message. Generated: every file renders,
// non-empty, with a unique name. Anything else (another exception, a crash,
// a broken guarantee) aborts the process with the reason on stderr, which is
// what libFuzzer and the replay report.
Verdict check_spec_input(const std::string& text);

}  // namespace convgen::fuzz
