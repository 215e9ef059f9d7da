// convgen_bench_depthwise: times the convgen kernels of bench/depthwise_bench.yaml
// beside cuDNN, on the same GPU in the same run, for every row of a benchmark CSV.
// What it measures and reports is bench_driver.h's; this file holds what is
// depthwise's own: its CSV columns (each row in its dtype and layout), its
// problem, its cuDNN twin (a grouped convolution, one group per input
// channel), its filter order, its libraries and its columns.
//
// With a tuning database (CMake: CONVGEN_BENCH_TUNING, which defines
// CONVGEN_BENCH_HAS_TUNED), the kernel of the same spec built with the
// database applied (library bench_tuned) is timed and checked beside the
// default one.
#include "bench.h"  // generated from bench/depthwise_bench.yaml: namespace convgen::bench
#include "bench_driver.h"
#if defined(CONVGEN_BENCH_HAS_TUNED)
#include "bench_tuned.h"  // the same spec, tuning database applied: namespace convgen::bench_tuned
#endif

namespace {

using namespace bench_driver;

struct DepthwiseBench {
  using Problem = convgen::DepthwiseProblem;
  using Args = convgen::DepthwiseArgs;

  struct Options : CommonOptions {
    std::string csv_path = "bench/depthwise.csv";
  };

  static constexpr const char* kProgram = "convgen_bench_depthwise";
  static constexpr const char* kAbout =
      "Times convgen depthwise kernels beside cuDNN for each row of a benchmark CSV, in the row's dtype and layout.";
  static constexpr const char* kFooter =
      "Timing: 'hot' = --hot-launches launches captured in one CUDA graph, replayed after a warm-up;\n"
      "median replay time / launches (L2 warm, no launch gaps). 'cold' = a 256 MiB memset flushes L2\n"
      "before every run (--flush read: a read of it), cudaEvents around the kernel alone; median of --trials runs.\n"
      "floor_us = bytes the problem must move (input + filter + output + epilogue parameters, elements of the\n"
      "row's dtype) at the copy ceiling (1 GiB device-to-device copy, bytes read + written, measured in the same run);\n"
      "*_frac_ceiling = floor_us / cold time. The cuDNN columns time the convolution alone, in the row's dtype and\n"
      "layout (float accumulation; float32 without tensor cores, float16/bfloat16 with them allowed); the check\n"
      "accepts a max relative error (to the largest output) of 1e-4 (1e-3 where cuDNN chose a Winograd or FFT\n"
      "algorithm; 8 units of roundoff in float16/bfloat16: 3.9e-3, 3.1e-2), grown after the activation by its\n"
      "largest slope; a row that fails it makes the program exit 1.\n"
      "copy_cold_us: cudaMemcpyAsync of half the row's bytes (reads + writes = the row's), cold.\n"
      "Tuned (when built with CONVGEN_BENCH_TUNING): the row's kernel from the same spec built with the tuning\n"
      "database applied, timed the same way on the same buffers; tuned_speedup_hot = convgen hot / tuned hot.\n"
      "Its output must match cuDNN + epilogue as the default's does, and the default kernel's output within\n"
      "a max relative error (to the largest output) of 1e-5 (2 units of roundoff in float16/bfloat16); a row\n"
      "that fails either makes the program exit 1.\n"
      "Environment: CONVGEN_COMMIT is written to the JSON as 'commit'.";
  static constexpr const char* kTableLegend =
      "Times in microseconds. hot: CUDA graph replays, L2 warm; cold: L2 flushed. cg plain: convgen "
      "without epilogue; cuDNN runs the convolution alone.\n"
      "%ceil = floor / cold time; copy %ceil: a copy of the row's bytes, cold; speedup = cuDNN hot / "
      "convgen hot.";
  static constexpr bool kHasResidual = false;

  static inline const std::vector<std::string> kCsvColumns = {"suite",  "n",   "c",    "h",       "w", "kh", "kw",
                                                              "stride", "pad", "mult", "epilogue"};
  static inline const std::vector<const char*> kJsonColumns = {
      "suite", "name", "specialized", "n", "c", "h", "w", "kh", "kw", "stride", "pad", "mult", "epilogue", "dtype", "layout", "out_h",
      "out_w", "floor_us", "convgen_hot_us", "convgen_cold_us", "convgen_noepilogue_hot_us",
      "convgen_noepilogue_cold_us", "noepilogue_name", "noepilogue_specialized", "cudnn_hot_us", "cudnn_cold_us",
      "cudnn_algo", "convgen_frac_ceiling", "cudnn_frac_ceiling", "copy_cold_us", "copy_frac_ceiling",
      "speedup_vs_cudnn", "fused_plain_ratio", "fused_plain_ratio_cold", "max_rel_err", "fused_max_rel_err",
      "check_ok", "dispatch_reason"};
  static inline const std::vector<const char*> kTunedJsonExtras = {"tuned_frac_ceiling"};
  static inline const std::vector<TableColumn> kRowColumns = {
      {"suite", "suite"},
      {"NxCxHxW", "shape"},
      {"k", "filter"},
      {"s", "stride"},
      {"m", "mult"},
      {"epilogue", "epilogue"},
      {"dtype", "dtype"},
      {"layout", "layout"}};
  static inline const std::vector<TableColumn> kTableColumns = {
      {"kernel", "name"},
      {"served by", "served_by"},
      {"floor us", "floor_us"},
      {"cg hot", "convgen_hot_us"},
      {"cg cold", "convgen_cold_us"},
      {"cg plain hot", "convgen_noepilogue_hot_us"},
      {"cudnn hot", "cudnn_hot_us"},
      {"cudnn cold", "cudnn_cold_us"},
      {"cudnn algo", "cudnn_algo"},
      {"cg %ceil", "convgen_frac_ceiling"},
      {"cudnn %ceil", "cudnn_frac_ceiling"},
      {"copy %ceil", "copy_frac_ceiling"},
      {"speedup", "speedup_vs_cudnn"},
      {"check", "check"}};
  static inline const std::vector<TableColumn> kTunedTableExtras = {};

  static Problem problem(const BenchCase& row) {
    Problem p = common_problem<Problem>(row);
    p.c = row.number("c");
    p.multiplier = row.number("mult");
    return p;
  }

  static int out_channels(const Problem& p) { return p.out_channels(); }
  static size_t input_count(const Problem& p) { return size_t(p.n) * p.c * p.h * p.w; }
  static size_t filter_count(const Problem& p) { return size_t(p.out_channels()) * p.kh * p.kw; }
  static size_t output_count(const Problem& p) { return size_t(p.n) * p.out_channels() * p.out_h() * p.out_w(); }
  static double flop_count(const Problem&) { return kNaN; }  // memory-bound: measured against the copy ceiling only

  // cuDNN holds a depthwise filter channels first in either format; convgen's
  // NHWC kernels read it taps first, [kh, kw, c * multiplier].
  static std::vector<float> filter_from_cudnn(const Problem& p, std::vector<float> values) {
    if (p.layout != convgen::Layout::kNHWC) return values;
    return taps_first(values, size_t(p.out_channels()), size_t(p.kh) * p.kw);
  }

  // A grouped convolution with one group per input channel.
  static CudnnConvShape cudnn_shape(const Problem& p) {
    CudnnConvShape s = common_cudnn_shape(p);
    s.k = p.out_channels();
    s.groups = p.c;
    return s;
  }

  static std::string row_label(const Problem& p) {
    return shape_text(p) + " k" + std::to_string(p.kh) + "x" + std::to_string(p.kw) + " s" +
           std::to_string(p.stride_h) + " m" + std::to_string(p.multiplier);
  }

  static Args make_args(const Problem& p, const Operands& ops, const DeviceBuffer& output) {
    Args args;
    set_common_args(args, p.epilogue, ops, output);
    return args;
  }

  static void add_options(CLI::App&, Options&) {}
  static GemmPeak measure_peak(Stopwatch&, const Options&) { return {}; }
  static GemmPeak measure_tensor_peak(Stopwatch&, const Options&) { return {}; }
  static GemmPeak measure_tf32_peak(Stopwatch&, const Options&) { return {}; }

  using Lib = Library<Problem, Args, convgen::DepthwiseKernelInfo>;
  static inline const Lib kLibrary = {convgen::bench::find, convgen::bench::depthwise_conv2d, convgen::bench::depthwise_kernels};
#if defined(CONVGEN_BENCH_HAS_TUNED)
  static inline const Lib kTuned = {convgen::bench_tuned::find, convgen::bench_tuned::depthwise_conv2d,
                                    convgen::bench_tuned::depthwise_kernels, CONVGEN_BENCH_HAS_TUNED_DB};
#else
  static inline const Lib kTuned = {};
#endif
};

}  // namespace

int main(int argc, char** argv) { return bench_driver::run<DepthwiseBench>(argc, argv); }
