// convgen_bench_depthwise: times the convgen kernels of bench/depthwise_bench.yaml
// beside cuDNN, on the same GPU in the same run, for every row of a benchmark CSV.
//
// Per row it measures
//   - the convgen kernel for the row (with its fused epilogue), hot and cold;
//   - the same convolution without epilogue through convgen, hot;
//   - cuDNN's fastest fp32 (FMA, no TF32) algorithm for the convolution alone,
//     hot and cold, and checks that its output matches convgen's;
//   - a device-to-device copy of as many bytes as the row moves, cold: what
//     any kernel of that size reaches;
//   - when the program was built with a tuning database (CMake:
//     CONVGEN_BENCH_TUNING, which defines CONVGEN_BENCH_HAS_TUNED), the
//     kernel of the same spec built with the database applied (library
//     bench_tuned), hot and cold on the same buffers, its schedule beside the
//     default one, and its output checked as the default's is (against cuDNN
//     + the epilogue) and against the default kernel's output;
// and reports each against the floor set by the copy bandwidth measured at
// start-up. See --help for the options and the timing method.
#include "bench.h"  // generated from bench/depthwise_bench.yaml: namespace convgen::bench
#include "bench_common.h"
#if defined(CONVGEN_BENCH_HAS_TUNED)
#include "bench_tuned.h"  // the same spec, tuning database applied: namespace convgen::bench_tuned
#endif

#include <convgen/convgen.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

namespace {

using namespace bench_common;

// ---------------------------------------------------------------------------
// Command line.

struct Options : CommonOptions {
  std::string csv_path = "bench/depthwise.csv";
};

Options parse_options(int argc, char** argv) {
  Options options;
  CLI::App app{"Times convgen depthwise kernels beside cuDNN for each row of a benchmark CSV.",
               "convgen_bench_depthwise"};
  app.add_option("--csv", options.csv_path, "benchmark CSV (suite,n,c,h,w,kh,kw,stride,pad,mult,epilogue)")
      ->capture_default_str();
  add_common_options(app, options);
  app.footer(
      "Timing: 'hot' = --hot-launches launches captured in one CUDA graph, replayed after a warm-up;\n"
      "median replay time / launches (L2 warm, no launch gaps). 'cold' = a 256 MiB memset flushes L2\n"
      "before every run (--flush read: a read of it), cudaEvents around the kernel alone; median of --trials runs.\n"
      "floor_us = bytes the problem must move (input + filter + output + epilogue parameters) at the\n"
      "copy ceiling (1 GiB device-to-device copy, bytes read + written, measured in the same run);\n"
      "*_frac_ceiling = floor_us / cold time. The cuDNN columns time the convolution alone.\n"
      "copy_cold_us: cudaMemcpyAsync of half the row's bytes (reads + writes = the row's), cold.\n"
      "Tuned (when built with CONVGEN_BENCH_TUNING): the row's kernel from the same spec built with the tuning\n"
      "database applied, timed the same way on the same buffers; tuned_speedup_hot = convgen hot / tuned hot.\n"
      "Its output must match cuDNN + epilogue as the default's does, and the default kernel's output within\n"
      "a max relative error (to the largest output) of 1e-5; a row that fails either makes the program exit 1.\n"
      "Environment: CONVGEN_COMMIT is written to the JSON as 'commit'.");
  parse_or_exit(app, argc, argv);
  return options;
}

// ---------------------------------------------------------------------------
// Benchmark CSV.

// One row of the CSV, as written there.
struct BenchCase {
  std::string suite;
  int csv_line = 0;
  int n = 0, c = 0, h = 0, w = 0, kh = 0, kw = 0, stride = 0, mult = 0;
  std::string pad;       // "same" or "valid"
  std::string epilogue;  // e.g. "scale_shift_relu6"
};

// Reads the benchmark CSV; columns are found by their header names.
std::vector<BenchCase> read_cases(const std::string& path) {
  const std::vector<std::string> columns = {"suite", "n",      "c",   "h",    "w",       "kh",
                                            "kw",    "stride", "pad", "mult", "epilogue"};
  std::vector<BenchCase> cases;
  for_each_csv_row(path, columns, [&](int line_number, const std::vector<std::string>& fields) {
    auto number = [&](int i) { return parse_positive(fields[i], columns[i].c_str(), path, line_number); };
    BenchCase row;
    row.suite = fields[0];
    row.csv_line = line_number;
    row.n = number(1);
    row.c = number(2);
    row.h = number(3);
    row.w = number(4);
    row.kh = number(5);
    row.kw = number(6);
    row.stride = number(7);
    row.pad = fields[8];
    row.mult = number(9);
    row.epilogue = fields[10];
    if (row.pad != "same" && row.pad != "valid") {
      fail_csv(path, line_number, "pad must be 'same' or 'valid', not '" + row.pad + "'");
    }
    if (!find_epilogue(row.epilogue)) fail_csv(path, line_number, "unknown epilogue '" + row.epilogue + "'");
    cases.push_back(row);
  });
  return cases;
}

// ---------------------------------------------------------------------------
// Problems.

convgen::DepthwiseProblem to_problem(const BenchCase& row) {
  convgen::DepthwiseProblem problem;
  problem.n = row.n;
  problem.c = row.c;
  problem.h = row.h;
  problem.w = row.w;
  problem.kh = row.kh;
  problem.kw = row.kw;
  problem.stride_h = problem.stride_w = row.stride;
  // "same": (k-1)/2 on every side, as PyTorch's padding=k//2 for odd k.
  const bool same = row.pad == "same";
  problem.pad_top = problem.pad_bottom = same ? (row.kh - 1) / 2 : 0;
  problem.pad_left = problem.pad_right = same ? (row.kw - 1) / 2 : 0;
  problem.multiplier = row.mult;
  const EpilogueName* epilogue = find_epilogue(row.epilogue);
  problem.epilogue = epilogue->epilogue;
  problem.activation = epilogue->activation;
  return problem;
}

bool has_epilogue(const convgen::DepthwiseProblem& problem) {
  return problem.epilogue != convgen::Epilogue::kNone || problem.activation != convgen::Activation::kNone;
}

// The same convolution with nothing after it: what cuDNN computes.
convgen::DepthwiseProblem without_epilogue(convgen::DepthwiseProblem problem) {
  problem.epilogue = convgen::Epilogue::kNone;
  problem.activation = convgen::Activation::kNone;
  return problem;
}

size_t input_count(const convgen::DepthwiseProblem& p) { return size_t(p.n) * p.c * p.h * p.w; }
size_t filter_count(const convgen::DepthwiseProblem& p) { return size_t(p.out_channels()) * p.kh * p.kw; }
size_t output_count(const convgen::DepthwiseProblem& p) {
  return size_t(p.n) * p.out_channels() * p.out_h() * p.out_w();
}
size_t epilogue_param_count(const convgen::DepthwiseProblem& p) {
  switch (p.epilogue) {
    case convgen::Epilogue::kBias:
      return size_t(p.out_channels());
    case convgen::Epilogue::kScaleShift:
      return 2 * size_t(p.out_channels());
    case convgen::Epilogue::kNone:
      break;
  }
  return 0;
}

// The least time any kernel can take: everything it must read once and write
// once, at the copy ceiling. tbps * 1e6 is bytes per microsecond.
size_t bytes_moved(const convgen::DepthwiseProblem& p) {
  return (input_count(p) + filter_count(p) + output_count(p) + epilogue_param_count(p)) * sizeof(float);
}

double floor_us(const convgen::DepthwiseProblem& p, double ceiling_tbps) {
  return double(bytes_moved(p)) / (ceiling_tbps * 1e6);
}

std::string shape_text(const convgen::DepthwiseProblem& p) {
  return std::to_string(p.n) + "x" + std::to_string(p.c) + "x" + std::to_string(p.h) + "x" +
         std::to_string(p.w);
}

// ---------------------------------------------------------------------------
// Operands.

// The inputs of one problem, on the device; the epilogue parameters also on
// the host, for the reference epilogue.
struct Operands {
  DeviceBuffer input, filter, bias, scale, shift;
  std::vector<float> host_bias, host_scale, host_shift;
};

Operands make_operands(const convgen::DepthwiseProblem& problem, uint64_t seed) {
  Operands ops;
  ops.input = DeviceBuffer::upload(random_uniform(input_count(problem), seed));
  ops.filter = DeviceBuffer::upload(random_uniform(filter_count(problem), seed + 1));
  const size_t channels = size_t(problem.out_channels());
  if (problem.epilogue == convgen::Epilogue::kBias) {
    ops.host_bias = random_uniform(channels, seed + 2);
    ops.bias = DeviceBuffer::upload(ops.host_bias);
  } else if (problem.epilogue == convgen::Epilogue::kScaleShift) {
    ops.host_scale = random_uniform(channels, seed + 3);
    ops.host_shift = random_uniform(channels, seed + 4);
    ops.scale = DeviceBuffer::upload(ops.host_scale);
    ops.shift = DeviceBuffer::upload(ops.host_shift);
  }
  // The uploads ran on the legacy default stream, which the non-blocking
  // stream the kernels run on does not wait for.
  CUDA_CHECK(cudaDeviceSynchronize());
  return ops;
}

// Pointers for `problem`; those its epilogue does not use stay null, as the API requires.
convgen::DepthwiseArgs make_args(const convgen::DepthwiseProblem& problem, const Operands& ops,
                                 const DeviceBuffer& output) {
  convgen::DepthwiseArgs args;
  args.input = ops.input.f32();
  args.filter = ops.filter.f32();
  args.output = output.f32();
  if (problem.epilogue == convgen::Epilogue::kBias) args.bias = ops.bias.f32();
  if (problem.epilogue == convgen::Epilogue::kScaleShift) {
    args.scale = ops.scale.f32();
    args.shift = ops.shift.f32();
  }
  return args;
}

// ---------------------------------------------------------------------------
// cuDNN: the convolution alone, grouped with one group per input channel.

// cuDNN pads each axis symmetrically; a problem padded otherwise has no cuDNN twin.
bool cudnn_supports(const convgen::DepthwiseProblem& p) {
  return p.pad_top == p.pad_bottom && p.pad_left == p.pad_right;
}

CudnnConvShape cudnn_shape(const convgen::DepthwiseProblem& p) {
  CudnnConvShape s;
  s.n = p.n;
  s.c = p.c;
  s.h = p.h;
  s.w = p.w;
  s.k = p.out_channels();
  s.kh = p.kh;
  s.kw = p.kw;
  s.pad_h = p.pad_top;
  s.pad_w = p.pad_left;
  s.stride_h = p.stride_h;
  s.stride_w = p.stride_w;
  s.dilation_h = p.dilation_h;
  s.dilation_w = p.dilation_w;
  s.groups = p.c;
  s.out_h = p.out_h();
  s.out_w = p.out_w();
  s.description = convgen::describe(p);
  return s;
}

// ---------------------------------------------------------------------------
// The tuned library: the same spec built with a tuning database applied.
// Without it (no CONVGEN_BENCH_HAS_TUNED) nothing below is called.

#if defined(CONVGEN_BENCH_HAS_TUNED)
constexpr bool kHasTuned = true;
const char* const kTuningDb = CONVGEN_BENCH_HAS_TUNED_DB;

convgen::KernelChoice tuned_find(const convgen::DepthwiseProblem& problem) {
  return convgen::bench_tuned::find(problem);
}

Launch tuned_launch(const convgen::DepthwiseProblem& problem, const convgen::DepthwiseArgs& args) {
  return [problem, args](cudaStream_t stream) {
    CONVGEN_CHECK(convgen::bench_tuned::depthwise_conv2d(problem, args, stream));
  };
}

const std::vector<convgen::DepthwiseKernelInfo>& tuned_kernels() { return convgen::bench_tuned::depthwise_kernels(); }
#else
constexpr bool kHasTuned = false;
const char* const kTuningDb = "";

convgen::KernelChoice tuned_find(const convgen::DepthwiseProblem&) { return {}; }

Launch tuned_launch(const convgen::DepthwiseProblem&, const convgen::DepthwiseArgs&) {
  return [](cudaStream_t) { fail(__FILE__, __LINE__, "no tuned library was linked"); };
}

const std::vector<convgen::DepthwiseKernelInfo>& tuned_kernels() {
  static const std::vector<convgen::DepthwiseKernelInfo> none;
  return none;
}
#endif


// ---------------------------------------------------------------------------
// Cross-check.

// `conv` (cuDNN's output) with the problem's epilogue applied on the host.
std::vector<float> apply_epilogue(std::vector<float> conv, const convgen::DepthwiseProblem& p,
                                  const Operands& ops) {
  const size_t plane = size_t(p.out_h()) * p.out_w();
  for (size_t i = 0; i < conv.size(); ++i) {
    const size_t channel = (i / plane) % size_t(p.out_channels());
    const float value = apply_affine(conv[i], p.epilogue, channel, ops.host_bias, ops.host_scale, ops.host_shift);
    conv[i] = apply_activation(value, p.activation);
  }
  return conv;
}

// ---------------------------------------------------------------------------
// One benchmark row.

// A row selected for the run, with the kernels that will serve it.
struct Selected {
  BenchCase bench;
  convgen::DepthwiseProblem problem;
  convgen::KernelChoice choice;        // for the row
  convgen::KernelChoice plain_choice;  // for the row without epilogue
  // With the tuned library: its kernel for the row, and both kernels' schedules.
  convgen::KernelChoice tuned_choice;
  std::string schedule, tuned_schedule;
};

// A selected row and what was measured for it; NaN: not measured.
struct RowResult : Selected {
  explicit RowResult(const Selected& selected) : Selected(selected) {}

  double floor_us = kNaN;
  double convgen_hot_us = kNaN, convgen_cold_us = kNaN, convgen_noepilogue_hot_us = kNaN;
  double cudnn_hot_us = kNaN, cudnn_cold_us = kNaN;
  // A device-to-device copy that reads and writes as many bytes as the row,
  // cold: what any kernel of this size reaches, launch and ramp included.
  double copy_cold_us = kNaN;
  std::string cudnn_algo;           // empty: cuDNN not run
  double max_rel_err = kNaN;        // convgen without epilogue vs cuDNN
  double fused_max_rel_err = kNaN;  // the row's kernel vs cuDNN + the epilogue on the host
  bool check_ok = true;             // false: a cross-check failed

  // The tuned library's kernel for the row (measured only when it is linked).
  double tuned_hot_us = kNaN, tuned_cold_us = kNaN;
  double tuned_max_rel_err = kNaN;             // vs cuDNN + the epilogue on the host, as fused_max_rel_err
  double tuned_vs_default_max_rel_err = kNaN;  // vs the default kernel's output
  bool tuned_check_ok = true;                  // false: a check of the tuned output failed

  bool cudnn_ran() const { return !cudnn_algo.empty(); }
  double convgen_frac_ceiling() const { return floor_us / convgen_cold_us; }
  double cudnn_frac_ceiling() const { return floor_us / cudnn_cold_us; }
  double copy_frac_ceiling() const { return floor_us / copy_cold_us; }
  double speedup_vs_cudnn() const { return cudnn_hot_us / convgen_hot_us; }
  double tuned_frac_ceiling() const { return floor_us / tuned_cold_us; }
  double tuned_speedup_hot() const { return convgen_hot_us / tuned_hot_us; }
  double tuned_speedup_cold() const { return convgen_cold_us / tuned_cold_us; }
  bool tuned_changed() const { return tuned_schedule != schedule; }
};

Launch convgen_launch(const convgen::DepthwiseProblem& problem, const convgen::DepthwiseArgs& args) {
  return [problem, args](cudaStream_t stream) {
    CONVGEN_CHECK(convgen::bench::depthwise_conv2d(problem, args, stream));
  };
}

// Compares the outputs of one run on poisoned buffers with cuDNN's: the plain
// convolution directly, the fused kernel against `fused_reference`, cuDNN's
// output with the epilogue applied on the host.
void check_against_cudnn(RowResult& row, const std::vector<float>& fused_out, const std::vector<float>& plain_out,
                         const std::vector<float>& cudnn_out, const std::vector<float>& fused_reference) {
  row.max_rel_err = max_relative_error(plain_out, cudnn_out);
  row.fused_max_rel_err = max_relative_error(fused_out, fused_reference);
  row.check_ok = error_ok(row.max_rel_err) && error_ok(row.fused_max_rel_err);
  if (!row.check_ok) {
    std::fprintf(stderr,
                 "warning: %s (csv line %d): convgen differs from cuDNN: max relative error %.3g without "
                 "epilogue, %.3g with (limit %.0e)\n",
                 row.bench.suite.c_str(), row.bench.csv_line, row.max_rel_err, row.fused_max_rel_err,
                 kMaxRelativeError);
  }
}

// Checks the tuned kernel's output (from the same run on poisoned buffers):
// against cuDNN + the epilogue as the default's is, when cuDNN ran
// (`fused_reference` not null), and always against the default kernel's.
void check_tuned(RowResult& row, const std::vector<float>& tuned_out, const std::vector<float>& default_out,
                 const std::vector<float>* fused_reference) {
  row.tuned_vs_default_max_rel_err = max_relative_error(tuned_out, default_out);
  row.tuned_check_ok = error_ok(row.tuned_vs_default_max_rel_err, kMaxTunedRelativeError);
  if (fused_reference) {
    row.tuned_max_rel_err = max_relative_error(tuned_out, *fused_reference);
    row.tuned_check_ok = row.tuned_check_ok && error_ok(row.tuned_max_rel_err);
  }
  if (!row.tuned_check_ok) {
    std::fprintf(stderr,
                 "ERROR: %s (csv line %d): the TUNED kernel %s (%s) computes a different result: max relative "
                 "error %.3g against the default kernel (limit %.0e), %.3g against cuDNN + epilogue (limit %.0e)\n",
                 row.bench.suite.c_str(), row.bench.csv_line, row.tuned_choice.kernel.c_str(),
                 row.tuned_schedule.c_str(), row.tuned_vs_default_max_rel_err, kMaxTunedRelativeError,
                 row.tuned_max_rel_err, kMaxRelativeError);
  }
}

RowResult measure_row(const Selected& selected, double ceiling_tbps, cudnnHandle_t cudnn_handle,
                      Stopwatch& stopwatch, const Options& options, uint64_t seed) {
  RowResult row(selected);
  const convgen::DepthwiseProblem plain_problem = without_epilogue(row.problem);
  row.floor_us = floor_us(row.problem, ceiling_tbps);

  const Operands ops = make_operands(row.problem, seed);
  const size_t outputs = output_count(row.problem);
  const DeviceBuffer out = DeviceBuffer::floats(outputs), plain_out = DeviceBuffer::floats(outputs);
  const Launch fused = convgen_launch(row.problem, make_args(row.problem, ops, out));
  const Launch plain = convgen_launch(plain_problem, make_args(plain_problem, ops, plain_out));
  // The tuned kernel reads the same operands and writes its own output.
  const DeviceBuffer tuned_out = kHasTuned ? DeviceBuffer::floats(outputs) : DeviceBuffer();
  const Launch tuned = kHasTuned ? tuned_launch(row.problem, make_args(row.problem, ops, tuned_out)) : Launch();

  if (cudnn_handle && cudnn_supports(row.problem)) {
    const DeviceBuffer cudnn_out = DeviceBuffer::floats(outputs);
    const CudnnConvolution cudnn(cudnn_handle, stopwatch.stream(), cudnn_shape(row.problem), ops.input.f32(),
                                 ops.filter.f32(), cudnn_out.f32());
    const Launch conv = [&cudnn](cudaStream_t stream) { cudnn.run(stream); };
    row.cudnn_algo = cudnn.algorithm();

    for (const DeviceBuffer* buffer : {&out, &plain_out, &cudnn_out}) poison(*buffer, stopwatch.stream());
    if (kHasTuned) poison(tuned_out, stopwatch.stream());
    for (const Launch* launch : {&fused, &plain, &conv}) (*launch)(stopwatch.stream());
    if (kHasTuned) tuned(stopwatch.stream());
    stopwatch.synchronize();
    const std::vector<float> cudnn_host = cudnn_out.download();
    const std::vector<float> fused_reference = apply_epilogue(cudnn_host, row.problem, ops);
    const std::vector<float> fused_host = out.download();
    check_against_cudnn(row, fused_host, plain_out.download(), cudnn_host, fused_reference);
    if (kHasTuned) check_tuned(row, tuned_out.download(), fused_host, &fused_reference);

    row.cudnn_hot_us = stopwatch.hot_us(conv, options.hot_launches, options.hot_replays);
    row.cudnn_cold_us = stopwatch.cold_us(conv, options.trials);
  } else if (kHasTuned) {
    // No cuDNN output to check against: the tuned kernel against the default one.
    for (const DeviceBuffer* buffer : {&out, &tuned_out}) poison(*buffer, stopwatch.stream());
    for (const Launch* launch : {&fused, &tuned}) (*launch)(stopwatch.stream());
    stopwatch.synchronize();
    check_tuned(row, tuned_out.download(), out.download(), nullptr);
  }

  row.convgen_hot_us = stopwatch.hot_us(fused, options.hot_launches, options.hot_replays);
  row.convgen_cold_us = stopwatch.cold_us(fused, options.trials);
  if (kHasTuned) {
    row.tuned_hot_us = stopwatch.hot_us(tuned, options.hot_launches, options.hot_replays);
    row.tuned_cold_us = stopwatch.cold_us(tuned, options.trials);
  }
  row.copy_cold_us = copy_cold_us(stopwatch, bytes_moved(row.problem), options.trials);
  // Without an epilogue the plain problem is the row's own: measured once.
  row.convgen_noepilogue_hot_us = has_epilogue(row.problem)
                                      ? stopwatch.hot_us(plain, options.hot_launches, options.hot_replays)
                                      : row.convgen_hot_us;
  return row;
}

// ---------------------------------------------------------------------------
// Selection of rows.

std::vector<Selected> select_rows(const std::vector<BenchCase>& cases, const Options& options) {
  std::vector<Selected> selected;
  for (const BenchCase& bench : cases) {
    if (!wanted_suite(bench.suite, options)) continue;
    const convgen::DepthwiseProblem problem = to_problem(bench);
    const convgen::KernelChoice choice = convgen::bench::find(problem);
    if (!choice.status.ok()) {
      fail_csv(options.csv_path, bench.csv_line, "invalid problem: " + choice.status.message);
    }
    if (choice.kernel.find(options.kernel_filter) == std::string::npos) continue;
    Selected s{bench, problem, choice, convgen::bench::find(without_epilogue(problem)), {}, {}, {}};
    if (kHasTuned) {
      s.tuned_choice = tuned_find(problem);
      s.schedule = schedule_of(convgen::bench::depthwise_kernels(), s.choice);
      s.tuned_schedule = schedule_of(tuned_kernels(), s.tuned_choice);
    }
    selected.push_back(s);
  }
  return selected;
}

// Says up front which rows a generic kernel will serve: slow by design, and
// a sign that the library was built from a different spec.
void warn_about_generic_kernels(const std::vector<Selected>& selected) {
  for (const Selected& s : selected) {
    if (!s.choice.specialized) {
      std::fprintf(stderr, "warning: %s (csv line %d) is served by the GENERIC kernel: %s\n",
                   s.bench.suite.c_str(), s.bench.csv_line, s.choice.reason.c_str());
    }
    if (has_epilogue(s.problem) && !s.plain_choice.specialized) {
      std::fprintf(stderr, "warning: %s (csv line %d) without epilogue is served by the GENERIC kernel: %s\n",
                   s.bench.suite.c_str(), s.bench.csv_line, s.plain_choice.reason.c_str());
    }
    if (kHasTuned && !s.tuned_choice.specialized) {
      std::fprintf(stderr, "warning: %s (csv line %d) is served by the GENERIC kernel in the tuned library: %s\n",
                   s.bench.suite.c_str(), s.bench.csv_line, s.tuned_choice.reason.c_str());
    }
  }
}

// ---------------------------------------------------------------------------
// Output.

Json row_json(const RowResult& r) {
  const convgen::DepthwiseProblem& p = r.problem;
  Json row;
  row["suite"] = r.bench.suite;
  row["name"] = r.choice.kernel;
  row["specialized"] = r.choice.specialized;
  row["n"] = p.n;
  row["c"] = p.c;
  row["h"] = p.h;
  row["w"] = p.w;
  row["kh"] = p.kh;
  row["kw"] = p.kw;
  row["stride"] = r.bench.stride;
  row["pad"] = r.bench.pad;
  row["mult"] = p.multiplier;
  row["epilogue"] = r.bench.epilogue;
  row["out_h"] = p.out_h();
  row["out_w"] = p.out_w();
  row["floor_us"] = number(r.floor_us, 3);
  row["convgen_hot_us"] = number(r.convgen_hot_us, 3);
  row["convgen_cold_us"] = number(r.convgen_cold_us, 3);
  row["convgen_noepilogue_hot_us"] = number(r.convgen_noepilogue_hot_us, 3);
  row["noepilogue_name"] = r.plain_choice.kernel;
  row["noepilogue_specialized"] = r.plain_choice.specialized;
  row["cudnn_hot_us"] = number(r.cudnn_hot_us, 3);
  row["cudnn_cold_us"] = number(r.cudnn_cold_us, 3);
  row["cudnn_algo"] = r.cudnn_ran() ? Json(r.cudnn_algo) : Json(nullptr);
  row["convgen_frac_ceiling"] = number(r.convgen_frac_ceiling(), 4);
  row["cudnn_frac_ceiling"] = number(r.cudnn_frac_ceiling(), 4);
  row["copy_cold_us"] = number(r.copy_cold_us, 3);
  row["copy_frac_ceiling"] = number(r.copy_frac_ceiling(), 4);
  row["speedup_vs_cudnn"] = number(r.speedup_vs_cudnn(), 3);
  row["max_rel_err"] = error_value(r.max_rel_err);
  row["fused_max_rel_err"] = error_value(r.fused_max_rel_err);
  row["check_ok"] = r.cudnn_ran() ? Json(r.check_ok) : Json(nullptr);
  row["dispatch_reason"] = r.choice.reason;
  if (kHasTuned) {
    row["default_schedule"] = r.schedule;
    row["tuned_name"] = r.tuned_choice.kernel;
    row["tuned_specialized"] = r.tuned_choice.specialized;
    row["tuned_schedule"] = r.tuned_schedule;
    row["tuned_changed"] = r.tuned_changed();  // false: the database had no entry for the kernel
    row["tuned_hot_us"] = number(r.tuned_hot_us, 3);
    row["tuned_cold_us"] = number(r.tuned_cold_us, 3);
    row["tuned_frac_ceiling"] = number(r.tuned_frac_ceiling(), 4);
    row["tuned_speedup_hot"] = number(r.tuned_speedup_hot(), 3);
    row["tuned_speedup_cold"] = number(r.tuned_speedup_cold(), 3);
    row["tuned_max_rel_err"] = error_value(r.tuned_max_rel_err);
    row["tuned_vs_default_max_rel_err"] = error_value(r.tuned_vs_default_max_rel_err);
    row["tuned_check_ok"] = r.tuned_check_ok;
  }
  return row;
}

// The whole run: where and how it was measured, then the rows.
Json results_document(const std::string& gpu, double ceiling_tbps, const Options& options, const Json& rows) {
  Json document = start_document(gpu, ceiling_tbps, options);
  if (kHasTuned) document["tuning_db"] = kTuningDb;
  finish_document(document, options, rows);
  return document;
}

// Which kind of kernel served the row; GENERIC stands out on purpose.
std::string served_by(const RowResult& r) {
  std::string text = r.choice.specialized ? "specialized" : "GENERIC";
  if (r.choice.specialized && !r.plain_choice.specialized) text += " (plain: GENERIC)";
  return text;
}

void print_results(const std::vector<RowResult>& rows, double ceiling_tbps, const std::string& gpu) {
  std::vector<std::vector<std::string>> cells = {{"suite", "NxCxHxW", "k", "s", "m", "epilogue", "kernel",
                                                  "served by", "floor us", "cg hot", "cg cold",
                                                  "cg plain hot", "cudnn hot", "cudnn cold", "cudnn algo",
                                                  "cg %ceil", "cudnn %ceil", "copy %ceil", "speedup", "check"}};
  const std::vector<bool> left = {true,  true,  true,  false, false, true,  true,  true,  false, false,
                                  false, false, false, false, true,  false, false, false, false, true};
  for (const RowResult& r : rows) {
    const convgen::DepthwiseProblem& p = r.problem;
    cells.push_back({r.bench.suite, shape_text(p), std::to_string(p.kh) + "x" + std::to_string(p.kw),
                     std::to_string(r.bench.stride), std::to_string(p.multiplier), r.bench.epilogue,
                     r.choice.kernel, served_by(r), fixed(r.floor_us, 2), fixed(r.convgen_hot_us, 2),
                     fixed(r.convgen_cold_us, 2), fixed(r.convgen_noepilogue_hot_us, 2),
                     fixed(r.cudnn_hot_us, 2), fixed(r.cudnn_cold_us, 2), r.cudnn_ran() ? r.cudnn_algo : "-",
                     fixed(100.0 * r.convgen_frac_ceiling(), 1), fixed(100.0 * r.cudnn_frac_ceiling(), 1),
                     fixed(100.0 * r.copy_frac_ceiling(), 1), fixed(r.speedup_vs_cudnn(), 2, "x"),
                     r.cudnn_ran() ? (r.check_ok ? "ok" : "MISMATCH") : "-"});
  }
  std::cout << "GPU: " << gpu << "; copy ceiling " << fixed(ceiling_tbps, 2) << " TB/s\n"
            << "Times in microseconds. hot: CUDA graph replays, L2 warm; cold: L2 flushed. cg plain: convgen "
               "without epilogue; cuDNN runs the convolution alone.\n"
            << "%ceil = floor / cold time; copy %ceil: a copy of the row's bytes, cold; speedup = cuDNN hot / "
               "convgen hot.\n\n";
  print_table(cells, left);

  const auto generic =
      std::count_if(rows.begin(), rows.end(), [](const RowResult& r) { return !r.choice.specialized; });
  const auto mismatched =
      std::count_if(rows.begin(), rows.end(), [](const RowResult& r) { return !r.check_ok; });
  if (generic)
    std::cout << "\n" << generic << " row(s) served by the GENERIC kernel (no specialized kernel).\n";
  if (mismatched) std::cout << "\n" << mismatched << " row(s) where convgen and cuDNN disagree (MISMATCH).\n";
}

// The tuned library beside the default one: times, speedups, the schedule
// where the database changed it, and the check of the tuned output.
void print_tuned_results(const std::vector<RowResult>& rows) {
  std::vector<std::vector<std::string>> cells = {{"suite", "NxCxHxW", "k", "s", "m", "epilogue", "cg hot",
                                                  "tuned hot", "speedup hot", "cg cold", "tuned cold",
                                                  "speedup cold", "tuned check", "tuned schedule"}};
  const std::vector<bool> left = {true,  true,  true,  false, false, true, false,
                                  false, false, false, false, false, true, true};
  double log_sum = 0;
  int measured = 0, slower = 0;
  for (const RowResult& r : rows) {
    const convgen::DepthwiseProblem& p = r.problem;
    cells.push_back({r.bench.suite, shape_text(p), std::to_string(p.kh) + "x" + std::to_string(p.kw),
                     std::to_string(r.bench.stride), std::to_string(p.multiplier), r.bench.epilogue,
                     fixed(r.convgen_hot_us, 2), fixed(r.tuned_hot_us, 2), fixed(r.tuned_speedup_hot(), 3, "x"),
                     fixed(r.convgen_cold_us, 2), fixed(r.tuned_cold_us, 2), fixed(r.tuned_speedup_cold(), 3, "x"),
                     r.tuned_check_ok ? "ok" : "TUNED MISMATCH",
                     r.tuned_changed() ? r.tuned_schedule : "(default) " + r.tuned_schedule});
    const double speedup = r.tuned_speedup_hot();
    if (std::isfinite(speedup) && speedup > 0) {
      log_sum += std::log(speedup);
      ++measured;
      if (speedup < 1 / 1.02) ++slower;
    }
  }
  std::cout << "\nTuned library (tuning database " << kTuningDb << "): the same spec with the database applied.\n"
            << "speedup = convgen (default) time / tuned time; (default): the database left the schedule as it "
               "was.\n\n";
  print_table(cells, left);
  if (measured) {
    std::cout << "\nGeometric-mean hot speedup of the tuned library: " << fixed(std::exp(log_sum / measured), 3, "x")
              << " over " << measured << " row(s); " << slower
              << " row(s) where the tuned kernel is more than 2% slower (hot).\n";
  }
  const auto mismatched =
      std::count_if(rows.begin(), rows.end(), [](const RowResult& r) { return !r.tuned_check_ok; });
  if (mismatched) {
    std::cout << "\n" << mismatched << " row(s) where the TUNED kernel computes a different result (TUNED MISMATCH).\n";
  }
}

std::string progress_label(const Selected& s, size_t index, size_t total) {
  const convgen::DepthwiseProblem& p = s.problem;
  return "[" + std::to_string(index + 1) + "/" + std::to_string(total) + "] " + s.bench.suite + " " +
         shape_text(p) + " k" + std::to_string(p.kh) + "x" + std::to_string(p.kw) + " s" +
         std::to_string(s.bench.stride) + " m" + std::to_string(p.multiplier) + " " + s.bench.epilogue;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse_options(argc, argv);
  const std::vector<Selected> selected = select_rows(read_cases(options.csv_path), options);
  if (selected.empty()) {
    std::fprintf(stderr, "error: no rows of %s match the --suite / --filter options\n",
                 options.csv_path.c_str());
    return EXIT_FAILURE;
  }
  warn_about_generic_kernels(selected);

  const std::string gpu = gpu_name();
  Stopwatch stopwatch(options.flush == "read");
  const double ceiling_tbps = measure_copy_ceiling_tbps(stopwatch);
  std::fprintf(stderr, "%s: copy ceiling %.2f TB/s\n", gpu.c_str(), ceiling_tbps);

  cudnnHandle_t cudnn = nullptr;
  if (!options.no_cudnn) CUDNN_CHECK(cudnnCreate(&cudnn));

  std::vector<RowResult> results;
  for (size_t i = 0; i < selected.size(); ++i) {
    std::fprintf(stderr, "%s ...\n", progress_label(selected[i], i, selected.size()).c_str());
    results.push_back(measure_row(selected[i], ceiling_tbps, cudnn, stopwatch, options,
                                  options.seed + 101 * selected[i].bench.csv_line));
    const RowResult& r = results.back();
    std::fprintf(stderr, "    convgen %.2f us hot, %.2f us cold; cuDNN %s us hot (%s)\n", r.convgen_hot_us,
                 r.convgen_cold_us, fixed(r.cudnn_hot_us, 2).c_str(),
                 r.cudnn_ran() ? r.cudnn_algo.c_str() : "-");
    if (kHasTuned) {
      std::fprintf(stderr, "    tuned   %.2f us hot, %.2f us cold (%.3fx hot)%s: %s\n", r.tuned_hot_us,
                   r.tuned_cold_us, r.tuned_speedup_hot(), r.tuned_check_ok ? "" : " TUNED MISMATCH",
                   r.tuned_changed() ? r.tuned_schedule.c_str() : "default schedule");
    }
  }
  if (cudnn) CUDNN_CHECK(cudnnDestroy(cudnn));

  print_results(results, ceiling_tbps, gpu);
  if (kHasTuned) print_tuned_results(results);

  Json rows = Json::array();
  for (const RowResult& r : results) rows.push_back(row_json(r));
  if (!options.json_path.empty()) {
    write_file(options.json_path, results_document(gpu, ceiling_tbps, options, rows).dump(2) + "\n");
  }
  if (!options.csv_out_path.empty()) write_file(options.csv_out_path, rows_csv(rows));
  // A tuned kernel whose output differs fails the run (its times are still written).
  const bool tuned_ok =
      std::all_of(results.begin(), results.end(), [](const RowResult& r) { return r.tuned_check_ok; });
  if (!tuned_ok) {
    std::fprintf(stderr, "convgen_bench_depthwise: the tuned library computes a different result on some rows "
                         "(TUNED MISMATCH above)\n");
    return EXIT_FAILURE;
  }
  return EXIT_SUCCESS;
}
