// Stage 1 of the generator: a YAML spec file becomes a list of workloads.
//
// Every value keeps the file:line:col it came from, so that later stages can
// report errors against the spec a person wrote.
#pragma once

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "convgen/dtype.h"
#include "convgen/epilogue.h"
#include "convgen/limits.h"

namespace convgen::gen {

struct SourceLocation {
  std::string file;
  int line = 0;    // 1-based
  int column = 0;  // 1-based

  std::string str() const;  // "file:line:col"
};

// One error the user must fix. Several are collected before giving up, so a
// spec with three mistakes is fixed in one round.
struct Diagnostic {
  SourceLocation where;
  std::string message;

  std::string str() const;  // "file:line:col: error: message"
};

// Thrown when an input (a spec, a tuning database, the specs planned
// together) cannot be used; holds every diagnostic found.
class InputError : public std::runtime_error {
 public:
  explicit InputError(std::vector<Diagnostic> diagnostics);
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }

 private:
  std::vector<Diagnostic> diagnostics_;
};

// An InputError that the command's arguments cause, not the files they name
// (a --tuning-gpu that the tuning database does not hold): the CLI's usage
// error, exit 2.
class UsageError : public InputError {
 public:
  using InputError::InputError;
};

// The limits the runtime shares (convgen/limits.h), and the epilogues and
// activations, one table each (convgen/epilogue.h).
using convgen::kMaxBatch;
using convgen::Epilogue;
using convgen::Activation;
using convgen::DataType;
using convgen::Layout;
using convgen::Math;
using convgen::to_string;

// The most channels (c, c_out) a spec states: the limits table's
// `generated` column (convgen/limits.h), which says why.
constexpr int kMaxChannels = static_cast<int>(convgen::kChannelsLimit.generated);

// Letters, digits and '_', not starting with a digit.
bool is_c_identifier(const std::string& s);

// Empty when `name` can name a library (a header, a namespace, symbols):
// a C identifier of at most 64 characters that is neither a C or C++
// keyword nor reserved (std, posix, '_' and a capital letter, '__'
// anywhere); else what is wrong with it and what is allowed, for a message.
std::string library_name_problem(const std::string& name);

struct Operator;  // operator.hpp: what an operator is and which algorithms serve it

// The schedule keys a workload's spec sets, as written. Which keys exist,
// their ranges and what they mean belong to each algorithm (operator.hpp);
// the parser checks every value against its knob's range. Unset knobs are
// filled by the default rule when the workload is planned.
struct ScheduleRequest {
  std::optional<std::string> algorithm;  // `algorithm: <name>`, checked against the operator's algorithms
  SourceLocation algorithm_where;
  // Values by value name: a knob of two values (block_tile: [32, 16]) sets
  // two names (tile_h, tile_w); booleans are 0 or 1, choices the index of
  // the word among the knob's choices.
  std::map<std::string, int> values;
  // The knobs set, by spec key, in the order the spec writes them.
  struct Key {
    std::string key;
    SourceLocation key_where, value_where;
  };
  std::vector<Key> keys;
  SourceLocation where;  // the `schedule:` node, or the workload if none

  bool has(const std::string& value_name) const { return values.count(value_name) != 0; }
  std::optional<int> value(const std::string& value_name) const;
  // Where the spec sets `key`, else where the schedule (or workload) is.
  const SourceLocation& at(const std::string& key) const;
};

// One convolution problem as the spec states it, with defaults applied. The
// same description serves every operator (as cuDNN's one convolution
// descriptor does): a depthwise convolution is the one whose every input
// channel is its own group.
struct Workload {
  const Operator* op = nullptr;  // the operator (`op:`); the parser always sets it
  SourceLocation where;  // the workload's list item
  int n = 1;             // declared batch; 0 means `runtime`
  int c = 0, h = 0, w = 0;
  int kh = 0, kw = 0;
  int stride_h = 1, stride_w = 1;
  int pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
  int dilation_h = 1, dilation_w = 1;
  int multiplier = 1;      // depthwise_conv2d: output channels per input channel
  int c_out = 0;           // conv2d: output channels (0 for depthwise_conv2d: c * multiplier)
  Epilogue epilogue = Epilogue::kNone;
  bool residual = false;   // conv2d: add a tensor shaped like the output before the activation
  Activation activation = Activation::kNone;
  DataType dtype = DataType::kFloat32;  // every tensor's elements; sums are fp32 whatever it is
  Layout layout = Layout::kNCHW;        // the activations' memory order (and so the weights')
  Math math = Math::kFloat32;           // how float32 products are computed (conv2d)
  SourceLocation dtype_where, layout_where, math_where;  // where the spec (or its defaults) sets them
  ScheduleRequest schedule;

  int out_channels() const { return c_out != 0 ? c_out : c * multiplier; }
  int out_h() const { return (h + pad_top + pad_bottom - dilation_h * (kh - 1) - 1) / stride_h + 1; }
  int out_w() const { return (w + pad_left + pad_right - dilation_w * (kw - 1) - 1) / stride_w + 1; }
};

// What to do with a workload that is invalid: fail the whole spec (the
// default: a build must not silently lose a kernel), or leave it out and
// report it (for randomized test draws, where rejections are counted). An
// error outside the workloads, such as an invalid value in `defaults`,
// fails the spec either way.
enum class OnInvalidWorkload { kFail, kSkip };

struct Spec {
  std::string file;
  std::string library;  // may be empty: the caller then names the library
  SourceLocation library_where;
  std::vector<Workload> workloads;
  std::vector<Diagnostic> skipped;  // with OnInvalidWorkload::kSkip: the workloads left out, and why
};

// Parses and validates one spec file. Throws InputError listing every problem
// found (each with file:line:col, what is wrong and what is allowed).
Spec parse_spec_file(const std::string& path, OnInvalidWorkload on_invalid = OnInvalidWorkload::kFail);
// Same, from text; `path` is used in messages only.
Spec parse_spec_text(const std::string& text, const std::string& path,
                     OnInvalidWorkload on_invalid = OnInvalidWorkload::kFail);

// One key the parser reads itself (a top-level key, or a workload key every
// operator shares), as the reference of every key (`convgen keys`,
// docs/spec.md) states it. The rows are made from the limits and words the
// parser checks; each operator's own keys (WorkloadKey) and each
// algorithm's knobs (Knob) are declared in operator.hpp.
struct SpecKey {
  std::string key;
  std::string type;           // how it is written, e.g. "k or [kh, kw]"
  std::string values;         // what it may be, e.g. "each 1..11"
  std::string default_value;  // empty when there is none
  bool required = false;
  std::string meaning;
  int lo = 0, hi = 0;         // the integers it takes (each of a list); both 0 for words and mappings
};
// `library`, `defaults`, `workloads`.
const std::vector<SpecKey>& top_level_keys();
// `op`, `n`, `c`, ... `schedule`, in the order messages list them.
const std::vector<SpecKey>& shared_workload_keys();

// Everything the parser knows by name: every key, algorithm, word and the
// numbers at and around every limit. For tools that write or mutate specs
// (the fuzzer's dictionary, tests/fuzz/).
struct SpecVocabulary {
  std::vector<std::string> words;
  std::vector<long long> numbers;
};
SpecVocabulary spec_vocabulary();

}  // namespace convgen::gen
