#include "yaml_reader.hpp"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace convgen::gen::yaml {

std::string join(const std::vector<std::string>& items) {
  std::string text;
  for (size_t i = 0; i < items.size(); ++i) text += (i ? ", " : "") + items[i];
  return text;
}

std::string join_or(const std::vector<std::string>& items) {
  std::string text;
  for (size_t i = 0; i < items.size(); ++i) text += (i == 0 ? "" : i + 1 == items.size() ? " or " : ", ") + items[i];
  return text;
}

std::string quoted(const std::string& text) {
  if (text.size() <= kMaxShownText) return "'" + text + "'";
  return "'" + text.substr(0, kMaxShownText) + "...' (" + std::to_string(text.size()) + " characters)";
}

std::string text_of(const YAML::Node& node) {
  if (node.IsScalar()) return node.Scalar();
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a mapping";
  return "nothing";
}

std::string shown(const YAML::Node& node) { return node.IsScalar() ? quoted(node.Scalar()) : text_of(node); }

namespace {

// Where each YAML document of `text` starts, up to the third. yaml-cpp 0.7's
// LoadAll never returns on some malformed input (a stray ',' outside a flow
// collection): its parser stops advancing and reports the same empty
// document again and again, allocating each time. Counting documents with a
// handler that builds nothing, and stopping at three, bounds that; two
// documents starting at one place mean the parser is stuck there.
class DocumentStarts : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> starts;
  void OnDocumentStart(const YAML::Mark& mark) override { starts.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

std::vector<YAML::Mark> document_starts(const std::string& text) {
  std::istringstream stream(text);
  YAML::Parser parser(stream);
  DocumentStarts handler;
  while (handler.starts.size() < 3 && parser.HandleNextDocument(handler)) {
  }
  return handler.starts;
}

InputError error_at(const std::string& path, const YAML::Mark& mark, std::string message) {
  // yaml-cpp's marks are 0-based, ours are 1-based.
  return InputError({Diagnostic{SourceLocation{path, mark.line + 1, mark.column + 1}, std::move(message)}});
}

}  // namespace

YAML::Node load(const std::string& text, const std::string& path, const std::string& what,
                const std::string& one_document_hint) {
  try {
    const std::vector<YAML::Mark> starts = document_starts(text);
    for (size_t i = 1; i < starts.size(); ++i) {
      if (starts[i].pos != starts[i - 1].pos) continue;
      // The parser is stuck: it would report this empty document forever.
      const std::string found = starts[i].pos < static_cast<int>(text.size())
                                    ? quoted(std::string(1, text[static_cast<size_t>(starts[i].pos)]))
                                    : "the end of the file";
      throw error_at(path, starts[i], "YAML syntax: unexpected " + found + " here");
    }
    if (starts.size() > 1) {
      // A second document would be dropped silently by a reader of the first.
      throw error_at(path, starts[1], "a " + what + " is one YAML document; this file holds more (the second starts "
                                      "here): " + one_document_hint);
    }
    if (!starts.empty()) return YAML::Load(text);
    return YAML::Node();
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp stops a parse nested this deep (its message says "bad file").
    throw error_at(path, e.mark, "YAML nested more than " + std::to_string(e.depth()) + " levels deep here; a " +
                                     what + " nests a few levels (workloads, a workload, its schedule, a list)");
  } catch (const YAML::Exception& e) {
    // YAML indents with spaces only; yaml-cpp's message for a tab there
    // ("illegal block entry", ...) does not say so.
    std::string hint;
    if (e.mark.line >= 0) {
      size_t at = 0;
      for (int line = 0; line < e.mark.line && at != std::string::npos; ++line) {
        at = text.find('\n', at);
        if (at != std::string::npos) ++at;
      }
      if (at != std::string::npos) {
        const std::string line = text.substr(at, text.find('\n', at) - at);
        const size_t indent_end = line.find_first_not_of(" \t");
        if (line.substr(0, indent_end).find('\t') != std::string::npos) {
          hint = " (this line is indented with a tab; YAML indents with spaces only)";
        }
      }
    }
    throw error_at(path, e.mark, "YAML syntax: " + e.msg + hint);
  }
}

std::string read_file(const std::string& path, std::uintmax_t max_bytes, const std::string& what,
                      const std::function<std::string(std::uintmax_t)>& too_big_message) {
  // Opening a FIFO or a device would wait for a writer, or never end.
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw InputError({Diagnostic{SourceLocation{path, 0, 0},
                                std::filesystem::exists(path, ec)
                                    ? "not a regular file (a directory, a FIFO or a device); a " + what +
                                          " is a YAML file"
                                    : "cannot open the " + what + " file: " + (ec ? ec.message() : "no such file")}});
  }
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec && size > max_bytes) throw InputError({Diagnostic{SourceLocation{path, 0, 0}, too_big_message(size)}});
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw InputError({Diagnostic{SourceLocation{path, 0, 0}, "cannot open the " + what + " file: " +
                                                                (errno != 0 ? std::strerror(errno) : "unknown error")}});
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::vector<Diagnostic> Reader::take_errors(size_t first) {
  const auto from = diagnostics_.begin() + static_cast<long>(first);
  std::vector<Diagnostic> taken(from, diagnostics_.end());
  diagnostics_.erase(from, diagnostics_.end());
  return taken;
}

void Reader::amend_last(size_t count_before, const std::string& more) {
  if (diagnostics_.size() > count_before) diagnostics_.back().message += more;  // not when past kMaxErrors
}

void Reader::replace_last(size_t count_before, std::string message) {
  if (diagnostics_.size() > count_before) diagnostics_.back().message = std::move(message);
}

std::vector<Diagnostic>& Reader::diagnostics() {
  if (stopped_ && (diagnostics_.empty() || diagnostics_.back().where.line != 0)) {
    diagnostics_.push_back({SourceLocation{file_, 0, 0}, "too many errors: stopped reading after the first " +
                                                          std::to_string(kMaxErrors) + "; fix these and run again"});
  }
  return diagnostics_;
}

void Reader::error(const YAML::Node& node, std::string message) { error(at(node), std::move(message)); }

void Reader::error(const SourceLocation& where, std::string message) {
  if (bounded_ && diagnostics_.size() >= kMaxErrors) {
    stopped_ = true;
    return;
  }
  diagnostics_.push_back({where, std::move(message)});
}

SourceLocation Reader::at(const YAML::Node& node) const {
  // yaml-cpp places an empty value at the token after it: point at its key.
  if (node.IsNull()) {
    for (const auto& [value, key_mark] : empty_values_) {
      if (value.is(node)) return {file_, key_mark.line + 1, key_mark.column + 1};
    }
  }
  const YAML::Mark mark = node.Mark();
  if (mark.is_null() || mark.line < 0) return {file_, 1, 1};  // an empty document
  return {file_, mark.line + 1, mark.column + 1};
}

bool Reader::top_level(const YAML::Node& root, const std::vector<std::string>& keys, const std::string& what) {
  if (!root.IsMap()) {
    error(root, "a " + what + " must be a mapping with the keys " + join(keys));
    return false;
  }
  check_keys(root, keys, "at the top level of a " + what);
  return true;
}

void Reader::check_keys(const YAML::Node& map, const std::vector<std::string>& allowed, const std::string& where) {
  std::vector<std::pair<std::string, SourceLocation>> seen;
  for (const auto& entry : map) {
    if (entry.second.IsNull()) empty_values_.emplace_back(entry.second, entry.first.Mark());
    const std::string key = entry.first.Scalar();
    // yaml-cpp keeps both entries of a duplicated key and looks up the first.
    const auto first = std::find_if(seen.begin(), seen.end(), [&](const auto& s) { return s.first == key; });
    if (first != seen.end()) {
      error(entry.first, "duplicate key " + quoted(key) + " " + where + "; it is already set at " + first->second.str());
      continue;
    }
    seen.emplace_back(key, at(entry.first));
    if (key == "<<") {
      // yaml-cpp reads a merge key as an ordinary key.
      error(entry.first, "YAML merge keys ('<<: *anchor') are not supported " + where + "; write the keys out" +
                             merge_key_hint_);
    } else if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      error(entry.first, "unknown key " + quoted(key) + " " + where + "; allowed keys: " + join(allowed));
    }
  }
}

namespace {

// The value of a whole integer's text, or none.
std::optional<long long> integer_text(const std::string& s) {
  long long value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return value;
}

}  // namespace

std::optional<int> Reader::integer(const YAML::Node& node, const std::string& what, int lo, int hi,
                                   const std::string& expected) {
  const std::string range =
      !expected.empty() ? expected : "an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
  if (!node.IsScalar()) {
    error(node, "'" + what + "' must be " + range + ", got " + text_of(node));
    return std::nullopt;
  }
  const std::string& s = node.Scalar();
  const std::optional<long long> parsed = integer_text(s);
  if (!parsed) {
    error(node, "'" + what + "' must be " + range + ", got " + quoted(s));
    return std::nullopt;
  }
  const long long value = *parsed;
  if (value < lo || value > hi) {
    error(node, "'" + what + "' must be " + range + ", got " + s);
    return std::nullopt;
  }
  return static_cast<int>(value);
}

std::optional<std::vector<int>> Reader::integers(const YAML::Node& node, const std::string& what, size_t count,
                                                 const std::string& names, int lo, int hi) {
  if (node.IsScalar()) {
    // A word that is no number may be meant as the list ("128x128x64"):
    // the error says the list's form too.
    const bool number = integer_text(node.Scalar()).has_value();
    auto v = integer(node, what, lo, hi,
                     number ? "" : "an integer from " + std::to_string(lo) + " to " + std::to_string(hi) + " or a list of " +
                                       std::to_string(count) + " of them " + names);
    if (!v) return std::nullopt;
    return std::vector<int>(count, *v);
  }
  if (!node.IsSequence() || node.size() != count) {
    error(node, "'" + what + "' must be an integer or a list of " + std::to_string(count) + " integers " + names +
                    ", got " + (node.IsSequence() ? "a list of " + std::to_string(node.size()) : text_of(node)));
    return std::nullopt;
  }
  std::vector<int> values;
  for (size_t i = 0; i < count; ++i) {
    auto v = integer(node[i], what, lo, hi);
    if (!v) return std::nullopt;
    values.push_back(*v);
  }
  return values;
}

std::optional<std::string> Reader::word(const YAML::Node& node, const std::string& what,
                                        const std::vector<std::string>& allowed) {
  if (node.IsScalar() && std::find(allowed.begin(), allowed.end(), node.Scalar()) != allowed.end()) {
    return node.Scalar();
  }
  error(node, "'" + what + "' must be one of " + join(allowed) + ", got " + shown(node));
  return std::nullopt;
}

std::optional<std::string> Reader::text(const YAML::Node& node, const std::string& what, const std::string& meaning) {
  if (node.IsScalar() && !node.Scalar().empty() && node.Scalar().size() <= 200) return node.Scalar();
  error(node, "'" + what + "' must be " + meaning + " (at most 200 characters), got " + shown(node));
  return std::nullopt;
}

std::optional<double> Reader::positive(const YAML::Node& node, const std::string& what) {
  if (node.IsScalar()) {
    const std::string& s = node.Scalar();
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(s.c_str(), &end);
    if (!s.empty() && end == s.c_str() + s.size() && errno == 0 && std::isfinite(v) && v > 0) return v;
  }
  error(node, "'" + what + "' must be a number greater than 0, got " + shown(node));
  return std::nullopt;
}

std::optional<bool> Reader::boolean(const YAML::Node& node, const std::string& what) {
  if (node.IsScalar()) {
    const std::string& s = node.Scalar();
    if (s == "true") return true;
    if (s == "false") return false;
  }
  error(node, "'" + what + "' must be true or false, got " + shown(node));
  return std::nullopt;
}

}  // namespace convgen::gen::yaml
