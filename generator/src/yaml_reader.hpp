// Located, bounded reading of a YAML input (a spec or a tuning database):
// the file's text within a size cap, one document, then typed values read
// from yaml-cpp nodes with every error collected at its file:line:col and
// saying what is allowed. The two schemas (spec.cpp, tuning_db.cpp) are
// small readers over this layer. Internal to the generator.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "convgen/gen/spec.hpp"

namespace convgen::gen::yaml {

constexpr size_t kMaxErrors = 100;    // diagnostics reported before reading stops
constexpr size_t kMaxShownText = 40;  // characters of a value echoed in a message

// "a, b, c"
std::string join(const std::vector<std::string>& items);
// "a, b or c"
std::string join_or(const std::vector<std::string>& items);
// A value as a message shows it: quoted, and cut short when it is long (a
// message must not echo a megabyte of input).
std::string quoted(const std::string& text);
// A scalar's text, else "a list", "a mapping" or "nothing".
std::string text_of(const YAML::Node& node);
// A value as an error shows what it got: a scalar quoted, else what it is
// ("a list", unquoted).
std::string shown(const YAML::Node& node);

// The file's text, or an InputError: not a regular file, larger than
// `max_bytes` (checked before reading, so a huge file costs no memory), or
// unreadable. `what` names the input in messages ("spec").
std::string read_file(const std::string& path, std::uintmax_t max_bytes, const std::string& what,
                      const std::function<std::string(std::uintmax_t)>& too_big_message);

// The YAML of `text`: one document, or an InputError pointing at the syntax
// error, at a second document (`one_document_hint` says what to do instead),
// or at nesting deeper than yaml-cpp allows.
YAML::Node load(const std::string& text, const std::string& path, const std::string& what,
                const std::string& one_document_hint);

// Reads values out of one file's nodes, collecting diagnostics instead of
// stopping at the first.
class Reader {
 public:
  // `bounded`: stop collecting past kMaxErrors (a reader that moves its
  // diagnostics elsewhere as it goes passes false). `merge_key_hint` ends the
  // message about a YAML merge key, e.g. ", or put the shared ones in 'defaults'".
  Reader(std::string file, bool bounded, std::string merge_key_hint = "")
      : file_(std::move(file)), bounded_(bounded), merge_key_hint_(std::move(merge_key_hint)) {}

  const std::string& file() const { return file_; }
  // True once an error past kMaxErrors was dropped: the rest of the input
  // would take time and say little.
  bool stopped() const { return stopped_; }
  size_t error_count() const { return diagnostics_.size(); }
  // The diagnostics from index `first` on, removed from this reader.
  std::vector<Diagnostic> take_errors(size_t first);
  // Appends to the last diagnostic's message, if `count_before` shows one was added.
  void amend_last(size_t count_before, const std::string& more);
  void replace_last(size_t count_before, std::string message);
  // Every diagnostic; when reading stopped at kMaxErrors, a last one says so.
  std::vector<Diagnostic>& diagnostics();

  void error(const YAML::Node& node, std::string message);
  // An error at a place recorded earlier (a value read from `defaults`, say).
  void error(const SourceLocation& where, std::string message);
  SourceLocation at(const YAML::Node& node) const;

  // Whether the document's root is a mapping (else reported); if so, its
  // keys are checked against `keys`. `what` names the input ("spec").
  bool top_level(const YAML::Node& root, const std::vector<std::string>& keys, const std::string& what);
  // Reports a duplicate key, a merge key, or a key not in `allowed`;
  // `where` ends the message, e.g. "in a workload".
  void check_keys(const YAML::Node& map, const std::vector<std::string>& allowed, const std::string& where);

  // An integer in [lo, hi]; `expected` words what is allowed in the error
  // where that is narrower than the range (default: "an integer from lo to
  // hi").
  std::optional<int> integer(const YAML::Node& node, const std::string& what, int lo, int hi,
                             const std::string& expected = "");
  // An integer, or a list of `count` integers (e.g. filter: 3 or filter: [3, 5]).
  std::optional<std::vector<int>> integers(const YAML::Node& node, const std::string& what, size_t count,
                                           const std::string& names, int lo, int hi);
  std::optional<std::string> word(const YAML::Node& node, const std::string& what,
                                  const std::vector<std::string>& allowed);
  // A non-empty scalar of at most 200 characters.
  std::optional<std::string> text(const YAML::Node& node, const std::string& what, const std::string& meaning);
  // A finite number greater than zero.
  std::optional<double> positive(const YAML::Node& node, const std::string& what);
  std::optional<bool> boolean(const YAML::Node& node, const std::string& what);

 private:
  std::string file_;
  bool bounded_;
  std::string merge_key_hint_;
  std::vector<std::pair<YAML::Node, YAML::Mark>> empty_values_;  // for at(): an empty value's key
  std::vector<Diagnostic> diagnostics_;
  bool stopped_ = false;
};

}  // namespace convgen::gen::yaml
