// The reference of every spec key (`convgen keys`, docs/spec.md) against
// the parser: the rows of the keys the parser reads itself (SpecKey) must
// say what it does, since the parser's checks are written apart from them.
#include <gtest/gtest.h>

#include <map>

#include "convgen/gen/listing.hpp"
#include "convgen/gen/operator.hpp"
#include "convgen/gen/spec.hpp"
#include "test_util.h"

namespace convgen_test {
namespace {

using Keys = std::map<std::string, std::string>;

std::string flow_mapping(const Keys& keys) {
  std::string text;
  for (const auto& [key, value] : keys) text += (text.empty() ? "{" : ", ") + key + ": " + value;
  return text + "}";
}

// Whether a one-workload spec parses; else the messages of its errors.
std::string parse_errors(const Keys& workload) {
  try {
    parse("library: t\nworkloads:\n  - " + flow_mapping(workload) + "\n");
    return "";
  } catch (const InputError& e) {
    return e.what();
  }
}

// A workload with room for every key's range: an 11x11 filter dilated 8
// times reaches 80 rows and columns, wider than the widest padding.
const Keys kRoomy = {{"n", "1"}, {"c", "1"}, {"h", "128"}, {"w", "128"}, {"filter", "3"}, {"padding", "same"}};

TEST(Keys, SharedWorkloadKeysAreRequiredExactlyWhenTheReferenceSaysSo) {
  ASSERT_EQ(parse_errors(kRoomy), "");
  for (const SpecKey& k : shared_workload_keys()) {
    SCOPED_TRACE(k.key);
    Keys without = kRoomy;
    if (without.erase(k.key) == 0) {
      EXPECT_FALSE(k.required) << "the reference requires '" << k.key << "', yet a workload without it parses";
      continue;
    }
    const std::string errors = parse_errors(without);
    if (k.required) {
      EXPECT_NE(errors.find("missing key '" + k.key + "'"), std::string::npos) << errors;
    } else {
      EXPECT_EQ(errors, "");
    }
  }
}

TEST(Keys, SharedWorkloadKeysTakeTheReferencesRangeAndNoMore) {
  int checked = 0;
  for (const SpecKey& k : shared_workload_keys()) {
    if (k.lo == 0 && k.hi == 0) continue;  // words and mappings
    SCOPED_TRACE(k.key);
    ++checked;
    Keys keys = kRoomy;
    if (k.key == "padding") {
      keys["filter"] = "11";
      keys["dilation"] = "8";
    }
    for (int v : {k.lo, k.hi}) {
      keys[k.key] = std::to_string(v);
      EXPECT_EQ(parse_errors(keys), "") << k.key << ": " << v;
    }
    for (int v : {k.lo - 1, k.hi + 1}) {
      keys[k.key] = std::to_string(v);
      EXPECT_NE(parse_errors(keys).find("'" + k.key + "' must be"), std::string::npos) << k.key << ": " << v;
    }
  }
  EXPECT_GE(checked, 8);  // n, c, h, w, filter, stride, padding, dilation
}

TEST(Keys, TopLevelKeysAreRequiredExactlyWhenTheReferenceSaysSo) {
  const Keys parts = {{"library", "library: t\n"},
                      {"defaults", "defaults: {stride: 1}\n"},
                      {"workloads", "workloads:\n  - " + flow_mapping(kRoomy) + "\n"}};
  ASSERT_EQ(top_level_keys().size(), parts.size());
  for (const SpecKey& k : top_level_keys()) {
    SCOPED_TRACE(k.key);
    ASSERT_EQ(parts.count(k.key), 1u);
    std::string text;
    for (const auto& [key, part] : parts) {
      if (key != k.key) text += part;
    }
    std::string errors;
    try {
      parse(text);
    } catch (const InputError& e) {
      errors = e.what();
    }
    if (k.required) {
      EXPECT_NE(errors.find("missing key '" + k.key + "'"), std::string::npos) << errors;
    } else {
      EXPECT_EQ(errors, "");
    }
  }
}

// Every key a spec may set has a row: each operator's keys and every knob
// of every algorithm, under its algorithm.
TEST(Keys, TheReferenceHasARowForEveryKeyAndKnob) {
  const std::string reference = keys_markdown();
  const auto has_row = [&](const std::string& key, const std::string& op, const std::string& read_by) {
    return reference.find("| `" + key + "` | " + op + " | " + read_by + " |") != std::string::npos;
  };
  for (const SpecKey& k : shared_workload_keys()) {
    EXPECT_TRUE(has_row(k.key, "every operator", "every algorithm")) << k.key;
  }
  for (const Operator* op : operators()) {
    for (const WorkloadKey& k : op->workload_keys) EXPECT_TRUE(has_row(k.key, op->name, "every algorithm")) << k.key;
    for (const Knob& k : op->common_knobs) EXPECT_TRUE(has_row(k.key, op->name, "every algorithm")) << k.key;
    for (const Algorithm* a : op->algorithms) {
      for (const Knob& k : a->knobs) EXPECT_TRUE(has_row(k.key, op->name, a->name)) << a->name << " " << k.key;
    }
  }
  // conv2d's groups: the range it declares, less the values it refuses.
  EXPECT_NE(reference.find("| `groups` | conv2d | every algorithm | integer | 1 | 1 | no |"), std::string::npos);
}

}  // namespace
}  // namespace convgen_test
