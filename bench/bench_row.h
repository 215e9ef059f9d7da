// A benchmark row of bench_driver.h: the CSV row, the operator's problem it
// makes, its operands and the host reference of its epilogue, and the
// record of what was measured for it. Shared by every operator.
#pragma once

#include "bench_common.h"

#include <convgen/convgen.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace bench_driver {

using namespace bench_common;

// One generated library's entry points for an operator, and the tuning
// database it was built with ("" for none). A Library with no functions
// stands for a tuned library the program was built without.
template <class Problem, class Args, class Info>
struct Library {
  convgen::KernelChoice (*find)(const Problem&) = nullptr;
  convgen::Status (*run)(const Problem&, const Args&, cudaStream_t, convgen::Dispatch) = nullptr;
  const std::vector<Info>& (*kernels)() = nullptr;
  const char* tuning_db = "";

  bool linked() const { return find != nullptr; }
};

// ---------------------------------------------------------------------------
// Benchmark CSV.

// One row of the CSV, as written there: the text columns, and the integer
// columns by their header names.
struct BenchCase {
  std::string suite;
  int csv_line = 0;
  std::string pad;       // "same" or "valid"
  std::string epilogue;  // e.g. "scale_shift_relu6"
  EpilogueWord parsed;
  // Columns "dtype" and "layout" (spec words); float32 NCHW where the CSV has neither.
  convgen::DataType dtype = convgen::DataType::kFloat32;
  convgen::Layout layout = convgen::Layout::kNCHW;
  // Column "math" (dense float32 rows: fp32, tf32, 3xtf32); fp32 where the CSV has none.
  convgen::Math math = convgen::Math::kFloat32;
  std::map<std::string, int> numbers;

  int number(const std::string& column) const { return numbers.at(column); }
};

inline std::vector<std::string> concat_columns(std::vector<std::string> first, const std::vector<std::string>& second) {
  first.insert(first.end(), second.begin(), second.end());
  return first;
}

inline bool is_text_column(const std::string& column) {
  return column == "suite" || column == "pad" || column == "epilogue" || column == "dtype" || column == "layout" ||
         column == "math";
}

// Columns every benchmark CSV may have: a row without them is float32 NCHW
// (math fp32).
inline const std::vector<std::string> kStorageColumns = {"dtype", "layout", "math"};

// Reads the benchmark CSV; columns (`columns`, then kStorageColumns where
// present) are found by their header names.
inline std::vector<BenchCase> read_cases(const std::string& path, const std::vector<std::string>& columns) {
  std::vector<BenchCase> cases;
  const std::vector<std::string> all = concat_columns(columns, kStorageColumns);
  for_each_csv_row(
      path, columns,
      [&](int line_number, const std::vector<std::string>& fields) {
        BenchCase row;
        row.csv_line = line_number;
        for (size_t i = 0; i < all.size(); ++i) {
          const std::string& column = all[i];
          if (column == "suite") row.suite = fields[i];
          if (column == "pad") row.pad = fields[i];
          if (column == "epilogue") row.epilogue = fields[i];
          if (column == "dtype" && !fields[i].empty()) {
            const auto dtype = parse_dtype_word(fields[i]);
            if (!dtype) {
              fail_csv(path, line_number, "dtype must be float32, float16 or bfloat16, not '" + fields[i] + "'");
            }
            row.dtype = *dtype;
          }
          if (column == "layout" && !fields[i].empty()) {
            const auto layout = parse_layout_word(fields[i]);
            if (!layout) fail_csv(path, line_number, "layout must be NCHW or NHWC, not '" + fields[i] + "'");
            row.layout = *layout;
          }
          if (column == "math" && !fields[i].empty()) {
            const auto math = parse_math_word(fields[i]);
            if (!math) fail_csv(path, line_number, "math must be fp32, tf32 or 3xtf32, not '" + fields[i] + "'");
            row.math = *math;
          }
          if (!is_text_column(column)) {
            row.numbers[column] = parse_positive(fields[i], column.c_str(), path, line_number);
          }
        }
        if (row.pad != "same" && row.pad != "valid") {
          fail_csv(path, line_number, "pad must be 'same' or 'valid', not '" + row.pad + "'");
        }
        if (row.math != convgen::Math::kFloat32 && row.dtype != convgen::DataType::kFloat32) {
          fail_csv(path, line_number, "math " + std::string(convgen::to_string(row.math)) + " is for float32 rows");
        }
        const auto parsed = parse_epilogue_word(row.epilogue);
        if (!parsed) fail_csv(path, line_number, "unknown epilogue '" + row.epilogue + "'");
        row.parsed = *parsed;
        cases.push_back(row);
      },
      kStorageColumns);
  return cases;
}

// The problem's fields every operator's problem has in common, from a row:
// shape, filter, stride, padding ("same": (k-1)/2 on every side, as
// PyTorch's padding=k//2 for odd k), epilogue, activation, dtype and layout.
template <class Problem>
Problem common_problem(const BenchCase& row) {
  Problem p;
  p.n = row.number("n");
  p.h = row.number("h");
  p.w = row.number("w");
  p.kh = row.number("kh");
  p.kw = row.number("kw");
  p.stride_h = p.stride_w = row.number("stride");
  const bool same = row.pad == "same";
  p.pad_top = p.pad_bottom = same ? (p.kh - 1) / 2 : 0;
  p.pad_left = p.pad_right = same ? (p.kw - 1) / 2 : 0;
  p.epilogue = row.parsed.epilogue;
  p.activation = row.parsed.activation;
  p.dtype = row.dtype;
  p.layout = row.layout;
  return p;
}

// "f16 nhwc": the kernel names' parts for the problem's dtype and layout.
template <class Problem>
std::string storage_text(const Problem& p) {
  return std::string(convgen::row(p.dtype).name_part) + " " + convgen::row(p.layout).name_part;
}

template <class Problem>
std::string shape_text(const Problem& p) {
  return std::to_string(p.n) + "x" + std::to_string(p.c) + "x" + std::to_string(p.h) + "x" + std::to_string(p.w);
}

// The cuDNN twin of a problem's convolution (no epilogue); the operator adds
// its output channels and groups.
template <class Problem>
CudnnConvShape common_cudnn_shape(const Problem& p) {
  CudnnConvShape s;
  s.n = p.n;
  s.c = p.c;
  s.h = p.h;
  s.w = p.w;
  s.kh = p.kh;
  s.kw = p.kw;
  s.pad_h = p.pad_top;
  s.pad_w = p.pad_left;
  s.stride_h = p.stride_h;
  s.stride_w = p.stride_w;
  s.dilation_h = p.dilation_h;
  s.dilation_w = p.dilation_w;
  s.out_h = p.out_h();
  s.out_w = p.out_w();
  s.dtype = p.dtype;
  s.layout = p.layout;
  s.description = convgen::describe(p);
  return s;
}

template <class Problem>
bool has_epilogue(const Problem& p) {
  return p.epilogue != convgen::Epilogue::kNone || p.activation != convgen::Activation::kNone;
}

// The same convolution with nothing after it: what cuDNN computes.
template <class Op>
typename Op::Problem without_epilogue(typename Op::Problem p) {
  p.epilogue = convgen::Epilogue::kNone;
  p.activation = convgen::Activation::kNone;
  if constexpr (Op::kHasResidual) p.residual = false;
  return p;
}

// The row's epilogue with a residual tensor added before the activation.
template <class Problem>
Problem with_residual(Problem p) {
  p.residual = true;
  return p;
}

// Everything the problem must read once and write once (the residual, when
// it has one, is read once more): the least time any kernel can take is
// these bytes at the copy ceiling.
template <class Op>
size_t bytes_moved(const typename Op::Problem& p) {
  size_t count = Op::input_count(p) + Op::filter_count(p) + Op::output_count(p) +
                 size_t(convgen::row(p.epilogue).params) * Op::out_channels(p);
  if constexpr (Op::kHasResidual) count += p.residual ? Op::output_count(p) : 0;
  return count * size_t(convgen::element_bytes(p.dtype));
}

// cuDNN pads each axis symmetrically; a problem padded otherwise has no cuDNN twin.
template <class Problem>
bool cudnn_supports(const Problem& p) {
  return p.pad_top == p.pad_bottom && p.pad_left == p.pad_right;
}

// ---------------------------------------------------------------------------
// Operands.

// The inputs of one row (its residual variant included), on the device, as
// elements of the problem's dtype; the epilogue parameters and the residual
// also on the host (the values the device holds), for the reference.
// params[k] is the epilogue's k-th per-channel parameter (bias; scale, shift).
// cudnn_filter: the filter as cuDNN reads it, where convgen's lies otherwise
// (depthwise NHWC); empty where both read `filter`.
struct Operands {
  DeviceBuffer input, filter, cudnn_filter, residual;
  std::vector<DeviceBuffer> params;
  std::vector<std::vector<float>> host_params;
  std::vector<float> host_residual;

  const DeviceBuffer& filter_for_cudnn() const { return cudnn_filter.data() ? cudnn_filter : filter; }
};

// A depthwise filter of `channels` (c * multiplier) x `taps` (kh * kw) values
// with channels outermost, as cuDNN holds it in either format (its NHWC
// filter of one input channel per group is K x R x S x 1), laid taps first:
// convgen's NHWC order, [kh, kw, channels].
inline std::vector<float> taps_first(const std::vector<float>& channels_first, size_t channels, size_t taps) {
  std::vector<float> out(channels_first.size());
  for (size_t k = 0; k < channels; ++k) {
    for (size_t t = 0; t < taps; ++t) out[t * channels + k] = channels_first[k * taps + t];
  }
  return out;
}

template <class Op>
Operands make_operands(const typename Op::Problem& problem, uint64_t seed) {
  const convgen::DataType dtype = problem.dtype;
  Operands ops;
  ops.input = DeviceBuffer::upload(random_uniform(Op::input_count(problem), seed), dtype);
  const std::vector<float> filter = random_uniform(Op::filter_count(problem), seed + 1);
  const std::vector<float> convgen_filter = Op::filter_from_cudnn(problem, filter);
  ops.filter = DeviceBuffer::upload(convgen_filter, dtype);
  if (convgen_filter != filter) ops.cudnn_filter = DeviceBuffer::upload(filter, dtype);
  // Seeds seed+2 (bias), seed+3 and seed+4 (scale, shift): the inputs the runs before had.
  const int count = convgen::row(problem.epilogue).params;
  for (int k = 0; k < count; ++k) {
    ops.host_params.push_back(round_to(random_uniform(size_t(Op::out_channels(problem)), seed + 1 + count + k), dtype));
    ops.params.push_back(DeviceBuffer::upload(ops.host_params.back(), dtype));
  }
  if constexpr (Op::kHasResidual) {
    ops.host_residual = round_to(random_uniform(Op::output_count(problem), seed + 5), dtype);
    ops.residual = DeviceBuffer::upload(ops.host_residual, dtype);
  }
  // The uploads ran on the legacy default stream, which the non-blocking
  // stream the kernels run on does not wait for.
  CUDA_CHECK(cudaDeviceSynchronize());
  return ops;
}

// The pointers every operator's Args has, for `epilogue`; those it does not
// use stay null, as the API requires.
template <class Args>
void set_common_args(Args& args, convgen::Epilogue epilogue, const Operands& ops, const DeviceBuffer& output) {
  args.input = ops.input.data();
  args.filter = ops.filter.data();
  args.output = output.data();
  if (epilogue == convgen::Epilogue::kBias) args.bias = ops.params[0].data();
  if (epilogue == convgen::Epilogue::kScaleShift) {
    args.scale = ops.params[0].data();
    args.shift = ops.params[1].data();
  }
}

// ---------------------------------------------------------------------------
// The reference: the epilogue on the host, and the error it may differ by.

// cuDNN's Winograd and FFT algorithms compute through transforms that round
// differently from a direct sum (errors grow with the tile); they get a looser
// limit than the direct and GEMM algorithms, which sum products as convgen does.
// In float16 and bfloat16 both sums (in float) are rounded once to the dtype,
// and the reference epilogue runs on cuDNN's rounded output: a few units of
// roundoff u of the largest output apart (8u: 3.9e-3 in float16, 3.1e-2 in
// bfloat16; a missed tap of a 3x3 filter moves an output by far more).
// Math tf32 rounds each operand to 10 bits after the point, as cuDNN's TF32
// does (perhaps by another rounding): the limit of float16, whose operands
// keep as many bits.
inline double relative_error_limit(const std::string& cudnn_algo, convgen::DataType dtype,
                                   convgen::Math math = convgen::Math::kFloat32) {
  const bool transformed = cudnn_algo.rfind("WINOGRAD", 0) == 0 || cudnn_algo.rfind("FFT", 0) == 0;
  const double limit = transformed ? 10 * kMaxRelativeError : kMaxRelativeError;
  if (math == convgen::Math::kTF32) return std::max(limit, 8 * unit_roundoff(convgen::DataType::kFloat16));
  return dtype == convgen::DataType::kFloat32 ? limit : std::max(limit, 8 * unit_roundoff(dtype));
}

// The limit for an output after `activation`: the convolution's error grows
// through it by at most its largest slope (the activation's own float32
// rounding is a few ulp, far below the limit).
inline double fused_error_limit(double limit, convgen::Activation activation) {
  return limit * convgen::activation_error_scale(activation, 1.0, 0.0);
}

// `conv` (cuDNN's output, in the problem's layout) with the problem's
// epilogue (and residual) applied on the host, in double, by convgen/epilogue.h.
template <class Op>
std::vector<float> reference_epilogue(std::vector<float> conv, const typename Op::Problem& p, const Operands& ops) {
  const size_t plane = size_t(p.out_h()) * p.out_w();
  const size_t channels = size_t(Op::out_channels(p));
  const bool channels_last = p.layout == convgen::Layout::kNHWC;
  for (size_t i = 0; i < conv.size(); ++i) {
    const size_t channel = channels_last ? i % channels : (i / plane) % channels;
    const auto param = [&](size_t k) { return k < ops.host_params.size() ? double(ops.host_params[k][channel]) : 0.0; };
    double value = convgen::apply_epilogue<double>(p.epilogue, conv[i], param(0), param(1));
    if constexpr (Op::kHasResidual) {
      if (p.residual) value += ops.host_residual[i];
    }
    conv[i] = float(convgen::activate<double>(p.activation, value));
  }
  return conv;
}

// ---------------------------------------------------------------------------
// One benchmark row.

// A row selected for the run, with the kernels that will serve it.
template <class Op>
struct Selected {
  BenchCase bench;
  typename Op::Problem problem;
  convgen::KernelChoice choice;           // for the row
  convgen::KernelChoice plain_choice;     // for the row without epilogue
  convgen::KernelChoice residual_choice;  // for the row with a residual add (Op::kHasResidual)
  // With the tuned library: its kernel for the row, and both kernels' schedules.
  convgen::KernelChoice tuned_choice;
  std::string schedule, tuned_schedule;
};

// A selected row and what was measured for it; NaN: not measured.
template <class Op>
struct RowResult : Selected<Op> {
  explicit RowResult(const Selected<Op>& selected) : Selected<Op>(selected) {}

  double floor_us = kNaN, roofline_us = kNaN, flops = kNaN;
  double convgen_hot_us = kNaN, convgen_cold_us = kNaN, convgen_noepilogue_hot_us = kNaN;
  // The plain kernel cold too: an epilogue costs instructions, which show hot (L2 warm), and a few
  // parameter loads, which is all a kernel bound by DRAM should pay for it cold.
  double convgen_noepilogue_cold_us = kNaN;
  double convgen_residual_hot_us = kNaN;
  double cudnn_hot_us = kNaN, cudnn_cold_us = kNaN;
  // A device-to-device copy that reads and writes as many bytes as the row,
  // cold: what any kernel of this size reaches, launch and ramp included.
  double copy_cold_us = kNaN;
  std::string cudnn_algo;              // empty: cuDNN not run
  double max_rel_err = kNaN;           // convgen without epilogue vs cuDNN
  double fused_max_rel_err = kNaN;     // the row's kernel vs cuDNN + the epilogue on the host
  double residual_max_rel_err = kNaN;  // the residual kernel vs cuDNN + epilogue + residual on the host
  double check_limit = kNaN;           // the largest relative error the check accepts before the activation
  bool check_ok = true;                // false: a cross-check failed

  // The tuned library's kernel for the row (measured only when it is linked).
  double tuned_hot_us = kNaN, tuned_cold_us = kNaN;
  double tuned_max_rel_err = kNaN;             // vs cuDNN + the epilogue on the host, as fused_max_rel_err
  double tuned_vs_default_max_rel_err = kNaN;  // vs the default kernel's output
  bool tuned_check_ok = true;                  // false: a check of the tuned output failed

  bool cudnn_ran() const { return !cudnn_algo.empty(); }
  double tflops() const { return flops / (convgen_hot_us * 1e6); }
  double cudnn_tflops() const { return flops / (cudnn_hot_us * 1e6); }
  double convgen_frac_ceiling() const { return floor_us / convgen_cold_us; }
  double cudnn_frac_ceiling() const { return floor_us / cudnn_cold_us; }
  double convgen_frac_roofline() const { return roofline_us / convgen_cold_us; }
  double cudnn_frac_roofline() const { return roofline_us / cudnn_cold_us; }
  double copy_frac_ceiling() const { return floor_us / copy_cold_us; }
  double speedup_vs_cudnn() const { return cudnn_hot_us / convgen_hot_us; }
  double fused_plain_ratio() const { return convgen_hot_us / convgen_noepilogue_hot_us; }
  double fused_plain_ratio_cold() const { return convgen_cold_us / convgen_noepilogue_cold_us; }
  double residual_plain_ratio() const { return convgen_residual_hot_us / convgen_noepilogue_hot_us; }
  double tuned_tflops() const { return flops / (tuned_hot_us * 1e6); }
  double tuned_frac_ceiling() const { return floor_us / tuned_cold_us; }
  double tuned_frac_roofline() const { return roofline_us / tuned_cold_us; }
  double tuned_speedup_hot() const { return convgen_hot_us / tuned_hot_us; }
  double tuned_speedup_cold() const { return convgen_cold_us / tuned_cold_us; }
  bool tuned_changed() const { return this->tuned_schedule != this->schedule; }
  std::string where() const {
    return this->bench.suite + " " + storage_text(this->problem) + " (csv line " + std::to_string(this->bench.csv_line) +
           ")";
  }
};

// The fp32 peak an operator that counts FLOPs measures (bench_dense.cu).
struct GemmPeak {
  double tflops = kNaN;  // NaN: not measured
  std::string method;
  int cublas_version = 0;
};

// What the run measured once, at start-up.
struct Machine {
  std::string gpu;
  double ceiling_tbps = kNaN;
  GemmPeak peak;         // fp32 FMA (no TF32): the roofline of float32 rows
  GemmPeak tensor_peak;  // fp16 on tensor cores, fp32 sums: the roofline of float16 and bfloat16 rows
  GemmPeak tf32_peak;    // float32 on TF32 tensor cores: the roofline of math tf32 rows (3xtf32: a third)
};

}  // namespace bench_driver
