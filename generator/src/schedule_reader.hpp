// A `schedule:` mapping, as a spec's workload and a tuning database's entry
// write it: `algorithm` and the operator's knobs, each value checked against
// its knob's range and rules. Internal to the generator.
#pragma once

#include <string>
#include <vector>

#include "convgen/gen/operator.hpp"
#include "yaml_reader.hpp"

namespace convgen::gen {

// The keys a schedule of the operator may set: `algorithm`, the knobs of
// every algorithm, and those of all its algorithms (each key once: a key
// may belong to several algorithms).
std::vector<std::string> schedule_keys(const Operator& op);

// Reads `node` into `s`, reporting every mistake to `reader`. A knob the
// schedule sets without naming its algorithm is checked against the range
// of an owner that serves `workload` (its dtype and layout), where given.
void read_schedule(yaml::Reader& reader, const YAML::Node& node, const Operator& op, ScheduleRequest& s,
                   const Workload* workload = nullptr);

}  // namespace convgen::gen
