// The benchmark driver: everything convgen_bench_depthwise and
// convgen_bench_dense do alike, written once over an operator's traits.
//
// Per CSV row it measures
//   - the convgen kernel for the row (with its fused epilogue), hot and cold;
//   - the same convolution without epilogue through convgen, hot;
//   - for an operator with a residual input (Op::kHasResidual), the row's
//     epilogue with a residual add fused, through convgen, hot;
//   - cuDNN's fastest algorithm for the convolution alone, in the row's dtype
//     and layout (float32: FMA, no TF32; float16 / bfloat16: tensor cores
//     allowed; float accumulation in each), hot and cold, and checks
//     convgen's outputs against it (the epilogue applied on the host with
//     convgen/epilogue.h's math, in double);
//   - a device-to-device copy of as many bytes as the row moves (in its
//     dtype), cold;
//   - when the program was built with a tuning database, the row's kernel of
//     the same spec built with the database applied, hot and cold on the same
//     buffers, its schedule beside the default one, and its output checked
//     as the default's is and against the default kernel's output;
// and reports each against the floor set by the copy bandwidth measured at
// start-up (and, for an operator that counts FLOPs, the roofline with the
// fp32 peak it measures).
//
// An operator is a struct of traits (bench_depthwise.cu, bench_dense.cu):
//   Problem, Args, Options (CommonOptions + its own), kProgram, kAbout,
//   kFooter, kTableLegend, kHasResidual;
//   kLibrary, kTuned: its library and the tuned one (a Library each);
//   kCsvColumns: the CSV header names it reads ("suite", "pad" and
//     "epilogue" are text, the rest positive integers);
//   kJsonColumns: its result keys, in order; kTunedJsonExtras: its own keys
//     among the tuned library's (bench_output.h);
//   kRowColumns: the table columns that name a row ({header, key}), then
//     kTableColumns: the rest; kTunedTableExtras: its own tuned columns;
//   problem(row), out_channels(p),
//   input_count(p), filter_count(p), output_count(p),
//   filter_from_cudnn(p, values): the filter in convgen's memory order, from
//     the values in cuDNN's,
//   flop_count(p) (NaN: not counted), cudnn_shape(p), row_label(p),
//   make_args(p, operands, output), add_options(app, options), measure_peak(stopwatch, options),
//   measure_tensor_peak(stopwatch, options).
#pragma once

#include "bench_output.h"
#include "bench_row.h"

#include <cudnn.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace bench_driver {

template <class Library, class Problem, class Args>
Launch launch(const Library& library, const Problem& problem, const Args& args) {
  return [run = library.run, problem, args](cudaStream_t stream) {
    CONVGEN_CHECK(run(problem, args, stream, convgen::Dispatch::kAllowGeneric));
  };
}

// A call's scratch memory: the dense kernels that compute through one
// (winograd_nonfused) take it from Conv2dArgs; depthwise kernels take none.
inline void give_workspace(convgen::Conv2dArgs& args, const DeviceBuffer& workspace) {
  args.workspace = workspace.data();
  args.workspace_bytes = workspace.bytes();
}
inline void give_workspace(convgen::DepthwiseArgs&, const DeviceBuffer&) {}

// The outputs of one run on poisoned buffers, downloaded.
struct Outputs {
  std::vector<float> fused, plain, residual, cudnn;
};

// Compares the outputs with cuDNN's: the plain convolution directly, the
// fused kernels after the epilogue (and residual) is applied to cuDNN's
// output on the host.
template <class Op>
void check_against_cudnn(RowResult<Op>& row, const Operands& ops, const Outputs& out,
                         const std::vector<float>& fused_reference) {
  row.check_limit = relative_error_limit(row.cudnn_algo, row.problem.dtype, row.bench.math);
  const double fused_limit = fused_error_limit(row.check_limit, row.problem.activation);
  row.max_rel_err = max_relative_error(out.plain, out.cudnn);
  row.fused_max_rel_err = max_relative_error(out.fused, fused_reference);
  row.check_ok = error_ok(row.max_rel_err, row.check_limit) && error_ok(row.fused_max_rel_err, fused_limit);
  std::string residual_text;
  if constexpr (Op::kHasResidual) {
    const auto residual_reference = reference_epilogue<Op>(out.cudnn, with_residual(row.problem), ops);
    row.residual_max_rel_err = max_relative_error(out.residual, residual_reference);
    row.check_ok = row.check_ok && error_ok(row.residual_max_rel_err, fused_limit);
    char text[64];
    std::snprintf(text, sizeof text, ", %.3g with residual", row.residual_max_rel_err);
    residual_text = text;
  }
  if (!row.check_ok) {
    std::fprintf(stderr,
                 "warning: %s: convgen differs from cuDNN (%s): max relative error %.3g without epilogue, %.3g "
                 "with%s (limit %.0e, %.0e after the activation)\n",
                 row.where().c_str(), row.cudnn_algo.c_str(), row.max_rel_err, row.fused_max_rel_err,
                 residual_text.c_str(), row.check_limit, fused_limit);
  }
}

// Checks the tuned kernel's output (from the same run on poisoned buffers):
// against cuDNN + the epilogue as the default's is, when cuDNN ran
// (`fused_reference` not null; row.check_limit set), and always against the
// default kernel's.
template <class Op>
void check_tuned(RowResult<Op>& row, const std::vector<float>& tuned_out, const std::vector<float>& default_out,
                 const std::vector<float>* fused_reference) {
  const double fused_limit = fused_error_limit(row.check_limit, row.problem.activation);
  row.tuned_vs_default_max_rel_err = max_relative_error(tuned_out, default_out);
  const double tuned_limit = tuned_error_limit(row.problem.dtype);
  row.tuned_check_ok = error_ok(row.tuned_vs_default_max_rel_err, tuned_limit);
  if (fused_reference) {
    row.tuned_max_rel_err = max_relative_error(tuned_out, *fused_reference);
    row.tuned_check_ok = row.tuned_check_ok && error_ok(row.tuned_max_rel_err, fused_limit);
  }
  if (!row.tuned_check_ok) {
    std::fprintf(stderr,
                 "ERROR: %s: the TUNED kernel %s (%s) computes a different result: max relative error %.3g "
                 "against the default kernel (limit %.0e), %.3g against cuDNN + epilogue (limit %.0e)\n",
                 row.where().c_str(), row.tuned_choice.kernel.c_str(), row.tuned_schedule.c_str(),
                 row.tuned_vs_default_max_rel_err, tuned_limit, row.tuned_max_rel_err, fused_limit);
  }
}

template <class Op>
RowResult<Op> measure_row(const Selected<Op>& selected, const Machine& machine, cudnnHandle_t cudnn_handle,
                          Stopwatch& stopwatch, const typename Op::Options& options, uint64_t seed) {
  using Problem = typename Op::Problem;
  RowResult<Op> row(selected);
  const Problem plain_problem = without_epilogue<Op>(row.problem);
  row.floor_us = double(bytes_moved<Op>(row.problem)) / (machine.ceiling_tbps * 1e6);  // tbps * 1e6: bytes per us
  row.flops = Op::flop_count(row.problem);
  // Half precision runs on tensor cores: its roofline is their peak. Math
  // tf32 runs on TF32 tensor cores; 3xtf32 makes three products of each.
  const bool float32 = row.problem.dtype == convgen::DataType::kFloat32;
  const GemmPeak& peak = !float32 ? machine.tensor_peak
                         : row.bench.math == convgen::Math::kFloat32 ? machine.peak
                                                                     : machine.tf32_peak;
  const double rate = peak.tflops / convgen::row(row.bench.math).products;
  if (std::isfinite(row.flops)) row.roofline_us = std::max(row.floor_us, row.flops / (rate * 1e6));

  const Operands ops = make_operands<Op>(row.problem, seed);
  const size_t outputs = Op::output_count(row.problem);
  const convgen::DataType dtype = row.problem.dtype;
  const auto output_buffer = [&](bool wanted) {
    return wanted ? DeviceBuffer::elements(outputs, dtype) : DeviceBuffer();
  };
  const DeviceBuffer out = output_buffer(true), plain_out = output_buffer(true);
  const DeviceBuffer residual_out = output_buffer(Op::kHasResidual);
  // One workspace for every call of the row: they run one after another on one stream.
  size_t workspace_bytes = std::max(selected.choice.workspace_bytes, selected.plain_choice.workspace_bytes);
  if (Op::kHasResidual) workspace_bytes = std::max(workspace_bytes, selected.residual_choice.workspace_bytes);
  if (Op::kTuned.linked()) workspace_bytes = std::max(workspace_bytes, selected.tuned_choice.workspace_bytes);
  const DeviceBuffer workspace(workspace_bytes);
  const auto args = [&](const Problem& p, const DeviceBuffer& output) {
    typename Op::Args a = Op::make_args(p, ops, output);
    give_workspace(a, workspace);
    return a;
  };
  const Launch fused = launch(Op::kLibrary, row.problem, args(row.problem, out));
  const Launch plain = launch(Op::kLibrary, plain_problem, args(plain_problem, plain_out));
  Launch residual;
  if constexpr (Op::kHasResidual) {
    const Problem residual_problem = with_residual(row.problem);
    residual = launch(Op::kLibrary, residual_problem, args(residual_problem, residual_out));
  }
  // The tuned kernel reads the same operands and writes its own output.
  const DeviceBuffer tuned_out = output_buffer(Op::kTuned.linked());
  const Launch tuned = Op::kTuned.linked() ? launch(Op::kTuned, row.problem, args(row.problem, tuned_out)) : Launch();

  std::vector<std::pair<const DeviceBuffer*, const Launch*>> runs = {{&out, &fused}, {&plain_out, &plain}};
  if (Op::kHasResidual) runs.push_back({&residual_out, &residual});
  if (Op::kTuned.linked()) runs.push_back({&tuned_out, &tuned});
  const auto run_all = [&](const std::vector<std::pair<const DeviceBuffer*, const Launch*>>& list) {
    for (const auto& run : list) poison(*run.first, stopwatch.stream());
    for (const auto& run : list) (*run.second)(stopwatch.stream());
    stopwatch.synchronize();
  };

  if (cudnn_handle && cudnn_supports(row.problem)) {
    const DeviceBuffer cudnn_out = DeviceBuffer::elements(outputs, dtype);
    CudnnConvolution cudnn(cudnn_handle, stopwatch.stream(), Op::cudnn_shape(row.problem), ops.input.data(),
                           ops.filter_for_cudnn().data(), cudnn_out.data());
    const Launch conv = [&cudnn](cudaStream_t stream) { cudnn.run(stream); };
    // cuDNN's best: of every algorithm Find ran, the one fastest hot.
    row.cudnn_hot_us = std::numeric_limits<double>::infinity();
    cudnnConvolutionFwdAlgo_t fastest = cudnn.candidates().front();
    for (const cudnnConvolutionFwdAlgo_t algo : cudnn.candidates()) {
      cudnn.use(algo);
      const double hot = stopwatch.hot_us(conv, options.hot_launches, options.hot_replays);
      if (hot < row.cudnn_hot_us) row.cudnn_hot_us = hot, fastest = algo;
    }
    cudnn.use(fastest);
    row.cudnn_algo = cudnn.algorithm();

    runs.push_back({&cudnn_out, &conv});
    run_all(runs);
    Outputs host{out.download(dtype), plain_out.download(dtype), residual_out.download(dtype),
                 cudnn_out.download(dtype)};
    const std::vector<float> fused_reference = reference_epilogue<Op>(host.cudnn, row.problem, ops);
    check_against_cudnn(row, ops, host, fused_reference);
    if (Op::kTuned.linked()) check_tuned(row, tuned_out.download(dtype), host.fused, &fused_reference);

    row.cudnn_cold_us = stopwatch.cold_us(conv, options.trials);
  } else if (Op::kTuned.linked()) {
    // No cuDNN output to check against: the tuned kernel against the default one.
    run_all({{&out, &fused}, {&tuned_out, &tuned}});
    check_tuned(row, tuned_out.download(dtype), out.download(dtype), nullptr);
  }

  row.convgen_hot_us = stopwatch.hot_us(fused, options.hot_launches, options.hot_replays);
  row.convgen_cold_us = stopwatch.cold_us(fused, options.trials);
  if (Op::kTuned.linked()) {
    row.tuned_hot_us = stopwatch.hot_us(tuned, options.hot_launches, options.hot_replays);
    row.tuned_cold_us = stopwatch.cold_us(tuned, options.trials);
  }
  row.copy_cold_us = copy_cold_us(stopwatch, bytes_moved<Op>(row.problem), options.trials);
  // Without an epilogue the plain problem is the row's own: measured once.
  row.convgen_noepilogue_hot_us = has_epilogue(row.problem)
                                      ? stopwatch.hot_us(plain, options.hot_launches, options.hot_replays)
                                      : row.convgen_hot_us;
  row.convgen_noepilogue_cold_us =
      has_epilogue(row.problem) ? stopwatch.cold_us(plain, options.trials) : row.convgen_cold_us;
  if (Op::kHasResidual) {
    row.convgen_residual_hot_us = stopwatch.hot_us(residual, options.hot_launches, options.hot_replays);
  }
  return row;
}

// ---------------------------------------------------------------------------
// Selection of rows.

template <class Op>
std::vector<Selected<Op>> select_rows(const std::vector<BenchCase>& cases, const typename Op::Options& options) {
  std::vector<Selected<Op>> selected;
  for (const BenchCase& bench : cases) {
    if (!wanted_suite(bench.suite, options)) continue;
    Selected<Op> s;
    s.bench = bench;
    s.problem = Op::problem(bench);
    s.choice = Op::kLibrary.find(s.problem);
    if (!s.choice.status.ok()) {
      fail_csv(options.csv_path, bench.csv_line, "invalid problem: " + s.choice.status.message);
    }
    if (s.choice.kernel.find(options.kernel_filter) == std::string::npos) continue;
    s.plain_choice = Op::kLibrary.find(without_epilogue<Op>(s.problem));
    if constexpr (Op::kHasResidual) s.residual_choice = Op::kLibrary.find(with_residual(s.problem));
    if (Op::kTuned.linked()) {
      s.tuned_choice = Op::kTuned.find(s.problem);
      s.schedule = schedule_of(Op::kLibrary.kernels(), s.choice);
      s.tuned_schedule = schedule_of(Op::kTuned.kernels(), s.tuned_choice);
    }
    selected.push_back(s);
  }
  return selected;
}

// Says up front which rows a generic kernel will serve: slow by design, and
// a sign that the library was built from a different spec.
template <class Op>
void warn_about_generic_kernels(const std::vector<Selected<Op>>& selected) {
  for (const Selected<Op>& s : selected) {
    const std::string where = s.bench.suite + " (csv line " + std::to_string(s.bench.csv_line) + ")";
    const auto warn = [&](bool generic, const char* which, const char* library, const convgen::KernelChoice& choice) {
      if (generic) {
        std::fprintf(stderr, "warning: %s%s is served by the GENERIC kernel%s: %s\n", where.c_str(), which, library,
                     choice.reason.c_str());
      }
    };
    warn(!s.choice.specialized, "", "", s.choice);
    warn(has_epilogue(s.problem) && !s.plain_choice.specialized, " without epilogue", "", s.plain_choice);
    warn(Op::kHasResidual && !s.residual_choice.specialized, " with residual", "", s.residual_choice);
    warn(Op::kTuned.linked() && !s.tuned_choice.specialized, "", " in the tuned library", s.tuned_choice);
  }
}

template <class Op>
std::string progress_label(const Selected<Op>& s, size_t index, size_t total) {
  return "[" + std::to_string(index + 1) + "/" + std::to_string(total) + "] " + s.bench.suite + " " +
         Op::row_label(s.problem) + " " + s.bench.epilogue + " " + storage_text(s.problem);
}

template <class Op>
typename Op::Options parse_options(int argc, char** argv) {
  typename Op::Options options;
  CLI::App app{Op::kAbout, Op::kProgram};
  std::string columns;
  for (const std::string& column : Op::kCsvColumns) columns += (columns.empty() ? "" : ",") + column;
  app.add_option("--csv", options.csv_path, "benchmark CSV (" + columns + "; optional: dtype,layout)")
      ->capture_default_str();
  add_common_options(app, options);
  Op::add_options(app, options);
  app.footer(Op::kFooter);
  parse_or_exit(app, argc, argv);
  return options;
}

// The whole program: options, rows, measurements, table, JSON and CSV.
template <class Op>
int run(int argc, char** argv) {
  const typename Op::Options options = parse_options<Op>(argc, argv);
  const std::vector<Selected<Op>> selected = select_rows<Op>(read_cases(options.csv_path, Op::kCsvColumns), options);
  if (selected.empty()) {
    std::fprintf(stderr, "error: no rows of %s match the --suite / --filter options\n", options.csv_path.c_str());
    return EXIT_FAILURE;
  }
  warn_about_generic_kernels(selected);

  Machine machine;
  machine.gpu = gpu_name();
  Stopwatch stopwatch(options.flush == "read");
  machine.ceiling_tbps = measure_copy_ceiling_tbps(stopwatch);
  machine.peak = Op::measure_peak(stopwatch, options);
  machine.tensor_peak = Op::measure_tensor_peak(stopwatch, options);
  machine.tf32_peak = Op::measure_tf32_peak(stopwatch, options);
  std::string peak_text;
  if (std::isfinite(machine.peak.tflops)) {
    peak_text = "; fp32 peak " + fixed(machine.peak.tflops, 2) + " TFLOP/s (" + machine.peak.method + ")";
  }
  if (std::isfinite(machine.tensor_peak.tflops)) {
    peak_text += "; tensor-core peak " + fixed(machine.tensor_peak.tflops, 2) + " TFLOP/s (" +
                 machine.tensor_peak.method + ")";
  }
  if (std::isfinite(machine.tf32_peak.tflops)) {
    peak_text += "; TF32 peak " + fixed(machine.tf32_peak.tflops, 2) + " TFLOP/s (" + machine.tf32_peak.method + ")";
  }
  std::fprintf(stderr, "%s: copy ceiling %.2f TB/s%s\n", machine.gpu.c_str(), machine.ceiling_tbps, peak_text.c_str());

  cudnnHandle_t cudnn = nullptr;
  if (!options.no_cudnn) CUDNN_CHECK(cudnnCreate(&cudnn));

  std::vector<RowResult<Op>> results;
  for (size_t i = 0; i < selected.size(); ++i) {
    std::fprintf(stderr, "%s ...\n", progress_label(selected[i], i, selected.size()).c_str());
    results.push_back(measure_row(selected[i], machine, cudnn, stopwatch, options,
                                  options.seed + 101 * selected[i].bench.csv_line));
    const RowResult<Op>& r = results.back();
    const std::string tflops = std::isfinite(r.flops) ? " (" + fixed(r.tflops(), 2) + " TFLOP/s)" : "";
    std::fprintf(stderr, "    convgen %.2f us hot%s, %.2f us cold; cuDNN %s us hot (%s)\n", r.convgen_hot_us,
                 tflops.c_str(), r.convgen_cold_us, fixed(r.cudnn_hot_us, 2).c_str(),
                 r.cudnn_ran() ? r.cudnn_algo.c_str() : "-");
    if (Op::kTuned.linked()) {
      std::fprintf(stderr, "    tuned   %.2f us hot, %.2f us cold (%.3fx hot)%s: %s\n", r.tuned_hot_us,
                   r.tuned_cold_us, r.tuned_speedup_hot(), r.tuned_check_ok ? "" : " TUNED MISMATCH",
                   r.tuned_changed() ? r.tuned_schedule.c_str() : "default schedule");
    }
  }
  if (cudnn) CUDNN_CHECK(cudnnDestroy(cudnn));

  print_results(results, machine);
  if (Op::kTuned.linked()) print_tuned_results(results);

  Json rows = Json::array();
  for (const RowResult<Op>& r : results) rows.push_back(row_json(r));
  if (!options.json_path.empty()) {
    write_file(options.json_path, results_document<Op>(machine, options, rows).dump(2) + "\n");
  }
  if (!options.csv_out_path.empty()) write_file(options.csv_out_path, rows_csv(rows));
  // A row whose output disagrees with cuDNN, or whose tuned kernel's output
  // differs, fails the run (its times are still written).
  const auto all = [&](bool RowResult<Op>::*ok) {
    return std::all_of(results.begin(), results.end(), [ok](const RowResult<Op>& r) { return r.*ok; });
  };
  const bool all_agree = all(&RowResult<Op>::check_ok), tuned_ok = all(&RowResult<Op>::tuned_check_ok);
  if (!all_agree) std::fprintf(stderr, "%s: some rows disagree with cuDNN (MISMATCH above)\n", Op::kProgram);
  if (!tuned_ok) {
    std::fprintf(stderr, "%s: the tuned library computes a different result on some rows (TUNED MISMATCH above)\n",
                 Op::kProgram);
  }
  return all_agree && tuned_ok ? EXIT_SUCCESS : EXIT_FAILURE;
}

}  // namespace bench_driver
