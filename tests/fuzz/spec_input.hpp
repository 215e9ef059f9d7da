// The checks the spec fuzzer and its corpus replay run on an input: the
// generator's stages in memory, with the guarantees every input must keep.
// Every input is checked twice: as a spec (parse -> validate -> plan ->
// render), and as a tuning database applied to a fixed spec (parse -> write
// and read back -> apply -> render).
#pragma once

#include <string>

namespace convgen::fuzz {

enum class Verdict { kRejected, kGenerated };

// Runs the stages on `text` as if it were the spec file "fuzz.yaml", for
// the default GPUs and, where the text names NHWC, again with sm_90 built as
// sm_90a (Hopper's algorithm); the verdict is the default GPUs'.
// Rejected: the spec gets an InputError whose every diagnostic names
// fuzz.yaml:line:col inside the text (or the file alone, for a file-level
// error) with a short, non-empty message. Generated: every file renders,
// non-empty, with a unique name. Anything else (another exception, a crash,
// a broken guarantee) aborts the process with the reason on stderr, which is
// what libFuzzer and the replay report.
Verdict check_spec_input(const std::string& text);

// Runs `text` as the tuning database "fuzz_tuning.yaml" over a fixed spec of
// depthwise and conv2d workloads (kFuzzTuningSpec in spec_input.cpp, whose
// kernels the corpus's databases name). Rejected: an InputError, from the
// parse or from applying it, every diagnostic of which names
// fuzz_tuning.yaml:line:col inside the text (or the file alone), with a
// short, non-empty message. Generated: the database parsed (entries whose
// checksum fails kept, unverified); what tuning_text writes of it, signed,
// reads back to the same text; applied for its first GPU, every kernel with
// a current entry is tuned (unverified where its checksum fails), every
// other keeps the default rule, and the library renders.
// Anything else aborts, as above.
Verdict check_tuning_input(const std::string& text);

struct Verdicts {
  Verdict spec, tuning;
};
// Both checks, on the same text.
Verdicts check_input(const std::string& text);

}  // namespace convgen::fuzz
