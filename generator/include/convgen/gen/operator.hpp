// What an operator is to the core, and the one list of operators.
//
// An operator (depthwise_conv2d, ...) is a family of kernels served by one
// or more algorithms. Each algorithm is one unit (generator/src/ops/): its
// knobs and their ranges, the check that a schedule fits a workload, the
// default rule's choice of its knobs, the numbers it derives for its
// template, and the template itself. The core (parse, plan, render, the
// CLI) knows nothing of any one operator: it iterates operators() and each
// operator's algorithms.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "convgen/gen/spec.hpp"
#include "convgen/oracle/problem.h"

namespace convgen::gen {

struct KernelPlan;
struct PlanOptions;

// One schedule key of an algorithm (or of every algorithm of an operator).
struct Knob {
  enum class Kind { kInt, kBool, kChoice };
  std::string key;                  // the spec key, e.g. "block_tile"
  std::vector<std::string> values;  // value names: {"tile_h", "tile_w"} for a list, else {key}
  Kind kind = Kind::kInt;
  int lo = 0, hi = 0;               // kInt: the range
  std::vector<int> allowed;         // kInt: when not empty, the only values in the range allowed
  int multiple_of = 1;              // kInt: values must be multiples of this
  std::string rule_note;            // why `allowed` or `multiple_of`, e.g. "(whole warps)"
  std::string list_names;           // a list's names in messages, e.g. "[blocking_h, blocking_w]"
  std::vector<std::string> choices;  // kChoice: the words; the value is the word's index
  int default_value = 0;            // a knob of every algorithm: the value a summary leaves unsaid
  // Changes only its kernel's own code, not the main loop that a compile
  // unit's kernels share: kernels that differ only in such knobs (at
  // default_value in the unit's summary) share a unit.
  bool per_kernel = false;
  // false: the tuner keeps default_value and only a spec sets another. For
  // a knob whose values trade accuracy for speed, which timing cannot weigh.
  bool searched = true;
  std::string meaning;              // one line: what the knob does

  // Knobs of each kind, with one value name unless said.
  static Knob integer(std::string key, int lo, int hi, std::string meaning);
  static Knob tuple(std::string key, std::vector<std::string> values, int lo, int hi, std::string names,
                    std::string meaning);
  static Knob flag(std::string key, std::string meaning);
  static Knob choice(std::string key, std::vector<std::string> words, std::string meaning);

  // Every value the knob may take, in order.
  std::vector<int> domain() const;
  // The values the tuner tries, in order: the whole domain when it has at
  // most kWholeSpace values, else those of the form 2^i, 3*2^i or 7*2^i (the
  // sizes CNN planes and channel counts split into) and the range's ends.
  // A knob that is not `searched` tries default_value alone.
  static constexpr size_t kWholeSpace = 16;
  std::vector<int> space() const;
  // The spec's word for a value: the number, true/false, or the choice.
  std::string word(int value) const;
};

// One spec key of a workload that is an operator's own (depthwise_conv2d's
// multiplier, conv2d's c_out), declared as knobs are: the parser reads it
// and the listings print it from this declaration alone. The keys every
// operator shares (n, c, filter, ...) are the spec's (spec.cpp).
struct WorkloadKey {
  std::string key;        // the spec key, e.g. "c_out"
  std::string after;      // the shared key it follows in messages and listings, e.g. "c"
  bool is_flag = false;   // true/false (0 or 1); else an integer from lo to hi
  int lo = 0, hi = 0;
  bool required = false;  // else the Workload keeps its default
  std::string meaning;    // names a missing required key, e.g. "output channels"
  // Where the value lives in Workload: `set` by the parser, `get` by the
  // listings (a column for every kernel: another operator's workload
  // shows the field's default). Both null for a key that is only checked.
  void (*set)(Workload& wl, int value) = nullptr;
  int (*get)(const Workload& wl) = nullptr;
  // A value in range the operator still refuses: the whole message; else "".
  std::string (*refuse)(int value) = nullptr;
};

// A complete schedule: every knob of its algorithm (and of its operator) has
// a value, by value name.
struct Algorithm;
struct Schedule {
  const Algorithm* algorithm = nullptr;
  std::map<std::string, int> values;

  int at(const std::string& value_name) const;  // throws std::out_of_range naming the value
  const std::string& algorithm_name() const;
  bool operator==(const Schedule& o) const { return algorithm == o.algorithm && values == o.values; }
  bool operator!=(const Schedule& o) const { return !(*this == o); }
  // One line, e.g. "rows: rows_per_thread 4, vector_width 4, threads_per_block 128".
  std::string summary() const;
};

// A value a kernel template prints: a number, a flag (a mustache section)
// or a piece of text.
using TemplateValue = std::variant<long long, bool, std::string>;
using TemplateValues = std::map<std::string, TemplateValue>;

// One dimension of a kernel's grid: `blocks` blocks, times
// ceil(batch * per_image / per_block) where the work grows with the batch
// (per_image units of work per image, per_block of them per block).
struct GridExtent {
  long long blocks = 1;
  long long per_image = 0;  // 0: the same for every batch
  long long per_block = 1;
  unsigned at(int batch) const;
};

// How a kernel is launched, stated once by its algorithm: the host launcher
// of its template is rendered from it, and the tuner launches the kernels it
// compiles itself through Algorithm::launch(), derived from it.
struct LaunchDescription {
  GridExtent grid[3];
  int block[3] = {1, 1, 1};
  // The kernel's last argument after its pointers: none (0), else the int
  // batch x count_per_image (the images, or the planes, thread groups or
  // tiles it numbers: `count_of` says which).
  long long count_per_image = 0;
  std::string count_of;
  // grid[0] is at most the blocks resident on the device at once
  // (persistent kernels: the launcher asks the occupancy API).
  bool grid_capped_by_residency = false;
  // Bytes of dynamic shared memory a block takes (0: its shared memory is
  // static); the launcher first opts the kernel in to them (needed past 48 KiB).
  int dynamic_shared_bytes = 0;
};

// One launch of a kernel for one batch, as its launcher makes it.
struct LaunchShape {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  bool has_count = false;  // the kernel takes `count` after its pointers
  long long count = 0;
  bool grid_capped_by_residency = false;
  int dynamic_shared_bytes = 0;
};

// How `convgen tune` builds an algorithm's candidates. kNvrtc: the kernel
// alone, with NVRTC and convgen's own headers, loaded as a cubin and
// launched as the algorithm's LaunchDescription says. kNvcc: a kernel on
// CUTLASS's headers, which NVRTC does not compile, and whose host launcher
// makes CUTLASS's launch parameters (the TMA descriptors): nvcc builds the
// kernel with that launcher as a shared object, which the tuner loads and
// calls.
enum class TuneCompiler { kNvrtc, kNvcc };

// One algorithm of one operator.
struct Algorithm {
  std::string name;                // the spec's `algorithm:` word
  const Operator* op = nullptr;
  std::vector<Knob> knobs;         // its own knobs (the operator adds its common ones)
  // Under templates/: the kernel and its loop nest; the pieces every kernel
  // shares (header comment, includes, constants, activation, the host
  // launcher) come from templates/partials/.
  std::string template_file;
  // Fills unset knobs, checks that the schedule fits (throwing InputError at
  // the spec key to blame) and derives the plan's numbers: the common ones
  // of KernelPlan and the template's own in KernelPlan::values.
  void (*plan)(const Workload& wl, const PlanOptions& options, KernelPlan& plan) = nullptr;
  // The knob part of the one-line summary, e.g. "rows_per_thread 4, ...".
  std::string (*describe)(const Schedule& s) = nullptr;
  // How its kernels are launched.
  LaunchDescription (*launch_description)(const KernelPlan& plan) = nullptr;
  // The data types and layouts its template serves. A workload may name it
  // only where it serves both; the default rule picks among those that do.
  std::vector<DataType> dtypes = {DataType::kFloat32};
  std::vector<Layout> layouts = {Layout::kNCHW};
  // How `convgen tune` compiles its candidates (tune/builder.hpp).
  TuneCompiler tune_compiler = TuneCompiler::kNvrtc;
  // The shapes its knobs claim, where not all (gemm's: 1x1 at stride 1, no
  // padding, though it runs any shape it is named for); null: all. Knobs
  // that several algorithms own choose the one that claims the workload's
  // shape; an algorithm's plan names the shapes it refuses.
  bool (*shapes)(const Workload& wl) = nullptr;
  // How it multiplies float32 operands (a float32 workload's `math`, which
  // it must serve too); float16 and bfloat16 workloads take math fp32.
  std::vector<Math> float32_maths = {Math::kFloat32};
  // Whether its kernels of one schedule and data type compile as one unit
  // (render.hpp, compile_units): where most of a kernel's compile time is
  // headers and the instantiation of a main loop that the schedule, not the
  // shape, determines (CUTLASS's).
  bool shares_compile_units = false;
  // Whether its sums pass through Winograd F(4x4, 3x3)'s transforms, which
  // round even exact operands: `convgen tune` checks its candidates against
  // the oracle's F(4x4) bound (oracle::ReferenceProblem::winograd_f4), every
  // other candidate of the workload against the products' bound.
  bool winograd_f4_bound = false;

  bool serves(const Workload& wl) const;
  bool serves_shape(const Workload& wl) const { return shapes == nullptr || shapes(wl); }

  // The launch for `batch` images (at most the plan's max_batch).
  LaunchShape launch(const KernelPlan& plan, int batch) const;
};

// How a generated library exposes an operator. The runtime
// (runtime/include/convgen/convgen.h) names an operator's types after one
// prefix, <prefix>Problem, <prefix>Args and <prefix>KernelInfo, and keys its
// registry and launchers by the problem type (OperatorTraits<Problem>); a
// library's call is named as the operator, its list of kernels
// <prefix in lower case>_kernels().
struct RuntimeApi {
  std::string type_prefix;  // e.g. "Depthwise"
  std::string description;  // e.g. "depthwise convolution", for the header's comment
};

struct Operator {
  std::string name;                         // the spec's `op:` word
  std::vector<WorkloadKey> workload_keys;  // its own spec keys, beside those every operator takes
  std::vector<Knob> common_knobs;           // knobs every algorithm of it has
  std::vector<const Algorithm*> algorithms;  // in the order messages list them
  // The algorithm the default rule picks for a workload (spec sets none).
  const Algorithm& (*default_algorithm)(const Workload& wl, const PlanOptions& options) = nullptr;
  // The kernel's one name: file, symbol, registry key, CLI filter, bench row.
  std::string (*kernel_name)(const Workload& wl) = nullptr;
  // The kernel's cost: bytes moved, flops and their floors.
  void (*plan_cost)(const Workload& wl, const PlanOptions& options, KernelPlan& plan) = nullptr;
  // The template values every kernel of the operator prints.
  void (*template_values)(const KernelPlan& plan, TemplateValues& values) = nullptr;
  RuntimeApi runtime;
  bool takes_residual = false;  // its kernels take a residual pointer before the output

  const Algorithm* algorithm(const std::string& name) const;  // null if it has none of that name
  // The knob a spec key names, in `algorithm` or among the common knobs; null if none.
  const Knob* knob(const Algorithm& algorithm, const std::string& key) const;
  // The workload at batch `n` as the float64 reference computes it (the
  // tuner's verification): its operand shapes, grouping and epilogue; the
  // products' bound (an algorithm with winograd_f4_bound sets that flag).
  oracle::ReferenceProblem (*reference_problem)(const Workload& wl, int n) = nullptr;
};

// The one list of operators, in the order messages name them.
const std::vector<const Operator*>& operators();
const Operator* find_operator(const std::string& name);  // null if none

}  // namespace convgen::gen
