#include "schedule_reader.hpp"

#include <algorithm>

namespace convgen::gen {

std::vector<std::string> schedule_keys(const Operator& op) {
  std::vector<std::string> keys = {"algorithm"};
  const auto add = [&keys](const std::string& key) {
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
  };
  for (const Knob& k : op.common_knobs) add(k.key);
  for (const Algorithm* a : op.algorithms) {
    for (const Knob& k : a->knobs) add(k.key);
  }
  return keys;
}

namespace {

// The knob a schedule key names, in any algorithm of the operator; null if
// none. Of several owners, the first that serves `workload` (where given):
// its range is the one the schedule can be planned with.
const Knob* find_knob(const Operator& op, const std::string& key, const Workload* workload) {
  for (const Knob& k : op.common_knobs) {
    if (k.key == key) return &k;
  }
  const Knob* first = nullptr;
  for (const Algorithm* a : op.algorithms) {
    const Knob* k = op.knob(*a, key);
    if (k == nullptr) continue;
    if (workload != nullptr && a->serves(*workload)) return k;
    if (first == nullptr) first = k;
  }
  return first;
}

// One knob's value(s), checked against the knob's range and rules.
void read_knob(yaml::Reader& reader, const YAML::Node& node, const Knob& knob, ScheduleRequest& s) {
  switch (knob.kind) {
    case Knob::Kind::kBool:
      if (auto v = reader.boolean(node, knob.key)) s.values[knob.key] = *v;
      return;
    case Knob::Kind::kChoice:
      if (auto v = reader.word(node, knob.key, knob.choices)) {
        s.values[knob.key] =
            static_cast<int>(std::find(knob.choices.begin(), knob.choices.end(), *v) - knob.choices.begin());
      }
      return;
    case Knob::Kind::kInt:
      break;
  }
  if (knob.values.size() > 1) {
    if (auto v = reader.integers(node, knob.key, knob.values.size(), knob.list_names, knob.lo, knob.hi)) {
      for (size_t i = 0; i < v->size(); ++i) s.values[knob.values[i]] = (*v)[i];
    }
    return;
  }
  const std::string why = knob.rule_note.empty() ? "" : " " + knob.rule_note;
  std::string allowed_text;  // a knob of a few values names them, out of range too
  if (!knob.allowed.empty()) {
    std::vector<std::string> allowed;
    for (int a : knob.allowed) allowed.push_back(std::to_string(a));
    allowed_text = yaml::join_or(allowed) + why;
  }
  const std::optional<int> v = reader.integer(node, knob.key, knob.lo, knob.hi, allowed_text);
  if (!v) return;
  if (!knob.allowed.empty() && std::find(knob.allowed.begin(), knob.allowed.end(), *v) == knob.allowed.end()) {
    reader.error(node, "'" + knob.key + "' must be " + allowed_text + ", got " + std::to_string(*v));
  } else if (*v % knob.multiple_of != 0) {
    reader.error(node, "'" + knob.key + "' must be a multiple of " + std::to_string(knob.multiple_of) + why +
                           ", got " + std::to_string(*v));
  } else {
    s.values[knob.key] = *v;
  }
}

}  // namespace

void read_schedule(yaml::Reader& reader, const YAML::Node& node, const Operator& op, ScheduleRequest& s,
                   const Workload* workload) {
  s.where = reader.at(node);
  const std::vector<std::string> keys = schedule_keys(op);
  if (!node.IsMap()) {
    reader.error(node, "'schedule' must be a mapping with the keys " + yaml::join(keys));
    return;
  }
  reader.check_keys(node, keys, "in 'schedule'");
  // The algorithm first, wherever the mapping puts it: a key several
  // algorithms own is read with the range of the one the spec names, else
  // of one that serves the workload (rows_per_thread is 1..16 for rows,
  // 1..32 for channels, the NHWC one).
  const Algorithm* named = nullptr;
  if (const YAML::Node value = node["algorithm"]) {
    s.algorithm_where = reader.at(value);
    const std::string name = value.IsScalar() ? value.Scalar() : yaml::text_of(value);
    if ((named = op.algorithm(name)) != nullptr) {
      s.algorithm = name;
    } else {
      std::vector<std::string> names;
      for (const Algorithm* a : op.algorithms) names.push_back("'" + a->name + "'");
      reader.error(value, "'algorithm' must be " + yaml::join_or(names) + ", got " + yaml::shown(value));
    }
  }
  for (const auto& entry : node) {
    const std::string key = entry.first.Scalar();
    const YAML::Node& value = entry.second;
    if (key == "algorithm") continue;
    const Knob* knob = named != nullptr ? op.knob(*named, key) : nullptr;
    if (knob == nullptr) knob = find_knob(op, key, workload);
    if (knob == nullptr) continue;  // reported by check_keys
    s.keys.push_back({key, reader.at(entry.first), reader.at(value)});
    read_knob(reader, value, *knob, s);
  }
}

}  // namespace convgen::gen
