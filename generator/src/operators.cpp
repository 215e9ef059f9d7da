// The one list of operators, and what the core knows of any operator:
// knobs, schedules and the lookups the stages share.
#include "convgen/gen/operator.hpp"

#include <algorithm>
#include <stdexcept>

#include "ops/conv2d.hpp"
#include "ops/depthwise.hpp"

namespace convgen::gen {

const std::vector<const Operator*>& operators() {
  static const std::vector<const Operator*> list = {&depthwise::kOperator, &conv2d::kOperator};
  return list;
}

const Operator* find_operator(const std::string& name) {
  for (const Operator* op : operators()) {
    if (op->name == name) return op;
  }
  return nullptr;
}

unsigned GridExtent::at(int batch) const {
  if (per_image == 0) return static_cast<unsigned>(blocks);
  return static_cast<unsigned>((static_cast<long long>(batch) * per_image + per_block - 1) / per_block * blocks);
}

bool Algorithm::serves(const Workload& wl) const {
  const bool math = wl.dtype != DataType::kFloat32
                        ? wl.math == Math::kFloat32
                        : std::find(float32_maths.begin(), float32_maths.end(), wl.math) != float32_maths.end();
  return std::find(dtypes.begin(), dtypes.end(), wl.dtype) != dtypes.end() &&
         std::find(layouts.begin(), layouts.end(), wl.layout) != layouts.end() && math;
}

LaunchShape Algorithm::launch(const KernelPlan& plan, int batch) const {
  const LaunchDescription d = launch_description(plan);
  LaunchShape l;
  for (int i = 0; i < 3; ++i) {
    l.grid[i] = d.grid[i].at(batch);
    l.block[i] = static_cast<unsigned>(d.block[i]);
  }
  l.has_count = d.count_per_image != 0;
  l.count = static_cast<long long>(batch) * d.count_per_image;
  l.grid_capped_by_residency = d.grid_capped_by_residency;
  l.dynamic_shared_bytes = d.dynamic_shared_bytes;
  return l;
}


std::optional<int> ScheduleRequest::value(const std::string& value_name) const {
  const auto it = values.find(value_name);
  if (it == values.end()) return std::nullopt;
  return it->second;
}

const SourceLocation& ScheduleRequest::at(const std::string& key) const {
  for (const Key& k : keys) {
    if (k.key == key) return k.value_where;
  }
  return where;
}

Knob Knob::integer(std::string key, int lo, int hi, std::string meaning) {
  Knob k;
  k.values = {key};
  k.key = std::move(key);
  k.lo = lo;
  k.hi = hi;
  k.meaning = std::move(meaning);
  return k;
}

Knob Knob::tuple(std::string key, std::vector<std::string> values, int lo, int hi, std::string names,
                 std::string meaning) {
  Knob k = integer(std::move(key), lo, hi, std::move(meaning));
  k.values = std::move(values);
  k.list_names = std::move(names);
  return k;
}

Knob Knob::flag(std::string key, std::string meaning) {
  Knob k = integer(std::move(key), 0, 1, std::move(meaning));
  k.kind = Kind::kBool;
  return k;
}

Knob Knob::choice(std::string key, std::vector<std::string> words, std::string meaning) {
  Knob k = integer(std::move(key), 0, static_cast<int>(words.size()) - 1, std::move(meaning));
  k.kind = Kind::kChoice;
  k.choices = std::move(words);
  return k;
}

std::vector<int> Knob::domain() const {
  std::vector<int> out;
  for (int v = lo; v <= hi; ++v) {
    if (v % multiple_of != 0) continue;
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), v) == allowed.end()) continue;
    out.push_back(v);
  }
  return out;
}

std::vector<int> Knob::space() const {
  if (!searched) return {default_value};
  const std::vector<int> all = domain();
  if (all.size() <= kWholeSpace) return all;
  const auto is_round = [](int v) {
    for (int odd : {1, 3, 7}) {
      if (v % odd == 0 && ((v / odd) & (v / odd - 1)) == 0) return true;
    }
    return false;
  };
  std::vector<int> out;
  for (size_t i = 0; i < all.size(); ++i) {
    if (i == 0 || i + 1 == all.size() || is_round(all[i])) out.push_back(all[i]);
  }
  return out;
}

std::string Knob::word(int value) const {
  if (kind == Kind::kBool) return value ? "true" : "false";
  if (kind == Kind::kChoice) return choices.at(static_cast<size_t>(value));
  return std::to_string(value);
}

int Schedule::at(const std::string& value_name) const {
  const auto it = values.find(value_name);
  if (it == values.end()) {
    throw std::out_of_range("schedule of algorithm '" + algorithm_name() + "' has no value '" + value_name + "'");
  }
  return it->second;
}

const std::string& Schedule::algorithm_name() const {
  static const std::string none = "(none)";
  return algorithm != nullptr ? algorithm->name : none;
}

// "<algorithm>: <its knobs>", then the operator's common knobs where they
// differ from their defaults.
std::string Schedule::summary() const {
  std::string text = algorithm_name() + ": " + algorithm->describe(*this);
  for (const Knob& k : algorithm->op->common_knobs) {
    const int v = at(k.values.front());
    if (v != k.default_value) text += ", " + k.key + " " + k.word(v);
  }
  return text;
}

const Algorithm* Operator::algorithm(const std::string& wanted) const {
  for (const Algorithm* a : algorithms) {
    if (a->name == wanted) return a;
  }
  return nullptr;
}

const Knob* Operator::knob(const Algorithm& a, const std::string& key) const {
  for (const std::vector<Knob>* list : {&a.knobs, &common_knobs}) {
    for (const Knob& k : *list) {
      if (k.key == key) return &k;
    }
  }
  return nullptr;
}

}  // namespace convgen::gen
