// What `convgen list` and `convgen knobs` print: a library's kernels as a
// table, CSV or JSON, and every operator's algorithms and knobs as a table
// or JSON. Operator-specific columns come from the operators' declarations
// (WorkloadKey, Knob), so a new operator needs no change here.
#pragma once

#include "convgen/gen/arch.hpp"

#include <string>

#include "convgen/gen/plan.hpp"

namespace convgen::gen {

// One line per kernel: name, floor, schedule, its origin and its spec line.
std::string kernels_table(const LibraryPlan& lib);
// One row per kernel with every workload key, knob and cost as a column.
std::string kernels_csv(const LibraryPlan& lib);
// The library and each kernel's workload, schedule, origin and cost.
std::string kernels_json(const LibraryPlan& lib);

// Every operator, its algorithms and their knobs with the values they take.
std::string knobs_table();
std::string knobs_json();

// The architecture table (arch.hpp), the oldest arch and the default list.
std::string archs_table();
std::string archs_json();

// The reference of every spec key (docs/spec.md holds it), as markdown:
// the top-level keys, the workload keys of every operator and each
// operator's schedule keys, each with its type, values, default, whether it
// is required and which algorithm reads it. Made from the declarations the
// parser reads (SpecKey, WorkloadKey, Knob).
std::string keys_markdown();

// The table of size limits (convgen/limits.h) as markdown: each field and
// derived size, the bound validate() and the generic kernels keep, the
// bound a spec keeps, and why (docs/hardening.md holds it).
std::string limits_markdown();

}  // namespace convgen::gen
