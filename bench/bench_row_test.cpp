// A host-only check of the benchmark driver's row handling (bench_row.h):
// the CSV accepts every epilogue and activation of convgen/epilogue.h's
// tables and every dtype and layout of convgen/dtype.h's (a CSV without
// those columns is float32 NCHW), the reference epilogue is epilogue.h's
// math (silu and hardswish included) with a dense row's residual added
// before the activation and the channel found in either layout, a
// depthwise filter is laid taps first for NHWC, and values round to the
// half dtypes as their buffers hold them. Needs no GPU.
// Usage: convgen_bench_row_test <scratch CSV path>
#include "bench_row.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>

namespace {

using namespace bench_driver;

struct DepthwiseOp {
  using Problem = convgen::DepthwiseProblem;
  static constexpr bool kHasResidual = false;
  static int out_channels(const Problem& p) { return p.out_channels(); }
};

struct DenseOp {
  using Problem = convgen::Conv2dProblem;
  static constexpr bool kHasResidual = true;
  static int out_channels(const Problem& p) { return p.c_out; }
};

int failures = 0;

void expect(bool ok, const std::string& what) {
  if (!ok) {
    std::fprintf(stderr, "FAILED: %s\n", what.c_str());
    ++failures;
  }
}

// Every word the CSV may hold: each epilogue, each activation, each pair.
std::vector<std::string> every_word() {
  std::vector<std::string> words;
  for (const auto& e : convgen::kEpilogueTable) {
    for (const auto& a : convgen::kActivationTable) {
      const bool plain_e = e.value == convgen::Epilogue::kNone, plain_a = a.value == convgen::Activation::kNone;
      words.push_back(plain_a ? e.word : plain_e ? a.word : std::string(e.word) + "_" + a.word);
    }
  }
  return words;
}

void test_csv(const std::string& path) {
  const std::vector<std::string> columns = {"suite", "n", "c", "h", "w", "kh", "kw", "stride", "pad", "mult",
                                            "epilogue"};
  const std::vector<std::string> words = every_word();
  {
    std::ofstream csv(path);
    csv << "# every epilogue word\nsuite,n,c,h,w,kh,kw,stride,pad,mult,epilogue\n";
    for (const std::string& word : words) csv << "t,2,4,9,8,3,5,2,valid,3," << word << "\n";
  }
  const std::vector<BenchCase> cases = read_cases(path, columns);
  expect(cases.size() == words.size(), "one case per CSV row");
  size_t i = 0;
  for (const auto& e : convgen::kEpilogueTable) {
    for (const auto& a : convgen::kActivationTable) {
      const BenchCase& row = cases.at(i++);
      const auto p = common_problem<convgen::DepthwiseProblem>(row);
      expect(p.epilogue == e.value && p.activation == a.value, "epilogue word '" + row.epilogue + "'");
      expect(p.n == 2 && p.h == 9 && p.w == 8 && p.kh == 3 && p.kw == 5 && p.stride_h == 2 && p.pad_top == 0,
             "shape of '" + row.epilogue + "'");
      expect(row.number("mult") == 3 && row.csv_line == int(i) + 2, "columns by name of '" + row.epilogue + "'");
      expect(p.dtype == convgen::DataType::kFloat32 && p.layout == convgen::Layout::kNCHW,
             "a CSV without dtype and layout columns is float32 NCHW");
    }
  }
  expect(!parse_epilogue_word("gelu") && !parse_epilogue_word("none_relu") && !parse_epilogue_word("relu_bias"),
         "words no table has are refused");
}

// Every dtype x layout pair of the tables, in columns placed before the
// required ones (found by name).
void test_storage_csv(const std::string& path) {
  const std::vector<std::string> columns = {"suite", "n", "c", "h", "w", "kh", "kw", "stride", "pad", "mult",
                                            "epilogue"};
  {
    std::ofstream csv(path);
    csv << "layout,suite,n,c,h,w,kh,kw,stride,pad,mult,epilogue,dtype\n";
    for (const auto& d : convgen::kDataTypeTable) {
      for (const auto& l : convgen::kLayoutTable) csv << l.word << ",t,1,8,4,4,3,3,1,same,1,bias," << d.word << "\n";
    }
  }
  const std::vector<BenchCase> cases = read_cases(path, columns);
  size_t i = 0;
  for (const auto& d : convgen::kDataTypeTable) {
    for (const auto& l : convgen::kLayoutTable) {
      const auto p = common_problem<convgen::DepthwiseProblem>(cases.at(i++));
      expect(p.dtype == d.value && p.layout == l.value, std::string("dtype and layout of ") + d.word + " " + l.word);
      expect(storage_text(p) == std::string(d.name_part) + " " + l.name_part, "storage text of " + storage_text(p));
    }
  }
  expect(cases.size() == i, "one case per dtype x layout");
  expect(!parse_dtype_word("half") && !parse_dtype_word("fp16") && !parse_layout_word("nhwc"),
         "words no table has are refused");
}

// cuDNN's depthwise filter (channels first) laid taps first for convgen's NHWC kernels.
void test_taps_first() {
  const std::vector<float> channels_first = {10, 11, 12, 20, 21, 22};  // 2 channels x 3 taps
  expect(taps_first(channels_first, 2, 3) == std::vector<float>({10, 20, 11, 21, 12, 22}), "filter taps first");
  expect(taps_first(channels_first, 6, 1) == channels_first, "a 1x1 filter is the same in both orders");
}

// Values as a half buffer holds them, and the limits that follow from them.
void test_rounding() {
  const float one_plus = 1.0f + std::ldexp(1.0f, -13);  // below half an ulp of 1 in float16 and bfloat16
  const float fp16_step = 1.0f + std::ldexp(1.0f, -10);  // one float16 ulp above 1: not a bfloat16 value
  expect(round_to({one_plus}, convgen::DataType::kFloat32)[0] == one_plus, "float32 keeps its values");
  expect(round_to({one_plus, fp16_step}, convgen::DataType::kFloat16) == std::vector<float>({1.0f, fp16_step}),
         "float16 rounds to nearest");
  expect(round_to({fp16_step}, convgen::DataType::kBFloat16)[0] == 1.0f, "bfloat16 rounds to nearest");
  expect(unit_roundoff(convgen::DataType::kFloat16) == std::ldexp(1.0, -11) &&
             unit_roundoff(convgen::DataType::kBFloat16) == std::ldexp(1.0, -8),
         "unit roundoff of the half dtypes");
  expect(relative_error_limit("IMPLICIT_GEMM", convgen::DataType::kFloat32) == kMaxRelativeError &&
             relative_error_limit("WINOGRAD", convgen::DataType::kFloat32) == 10 * kMaxRelativeError,
         "float32 limits as before");
  expect(relative_error_limit("IMPLICIT_GEMM", convgen::DataType::kFloat16) == 8 * std::ldexp(1.0, -11),
         "float16 limit: 8 units of roundoff");
  expect(tuned_error_limit(convgen::DataType::kFloat32) == kMaxTunedRelativeError &&
             tuned_error_limit(convgen::DataType::kBFloat16) == 2 * std::ldexp(1.0, -8),
         "tuned limits");
}

// The reference of two channels of a 1x1 output, against the activation
// written out here from its definition in the table.
void test_reference() {
  convgen::DepthwiseProblem p;
  p.c = 2;
  p.h = p.w = p.kh = p.kw = 1;
  p.epilogue = convgen::Epilogue::kScaleShift;
  Operands ops;
  ops.host_params = {{2.0f, -1.0f}, {0.5f, 0.25f}};  // scale, shift per channel
  const double sums[] = {1.0 * 2 + 0.5, 3.0 * -1 + 0.25};
  for (const auto& a : convgen::kActivationTable) {
    p.activation = a.value;
    const std::vector<float> out = reference_epilogue<DepthwiseOp>({1.0f, 3.0f}, p, ops);
    for (int c = 0; c < 2; ++c) {
      const double x = sums[c];
      double want = x;
      if (a.value == convgen::Activation::kRelu) want = std::fmax(x, 0);
      if (a.value == convgen::Activation::kRelu6) want = std::fmin(std::fmax(x, 0), 6);
      if (a.value == convgen::Activation::kSilu) want = x / (1 + std::exp(-x));
      if (a.value == convgen::Activation::kHardswish) want = x * std::fmin(std::fmax(x + 3, 0), 6) / 6;
      expect(std::fabs(out[c] - want) < 1e-6, std::string("reference of ") + a.word);
    }
    expect(fused_error_limit(1e-4, a.value) >= 1e-4, std::string("limit after ") + a.word);
  }

  convgen::Conv2dProblem d;
  d.c_out = 2;
  d.h = d.w = d.kh = d.kw = 1;
  d.epilogue = convgen::Epilogue::kBias;
  d.activation = convgen::Activation::kRelu;
  d.residual = true;
  Operands dense_ops;
  dense_ops.host_params = {{1.0f, -10.0f}};
  dense_ops.host_residual = {0.5f, 2.0f};
  const std::vector<float> out = reference_epilogue<DenseOp>({1.0f, 3.0f}, d, dense_ops);
  expect(out[0] == 2.5f && out[1] == 0.0f, "dense reference: relu(conv + bias + residual)");

  // Two channels of a 1x2 output: NCHW holds c0 c0 c1 c1, NHWC c0 c1 c0 c1.
  convgen::DepthwiseProblem b;
  b.c = 2;
  b.h = 1;
  b.w = 2;
  b.kh = b.kw = 1;
  b.epilogue = convgen::Epilogue::kBias;
  Operands bias_ops;
  bias_ops.host_params = {{100.0f, 200.0f}};
  expect(reference_epilogue<DepthwiseOp>({1, 2, 3, 4}, b, bias_ops) == std::vector<float>({101, 102, 203, 204}),
         "NCHW reference: channel of each plane");
  b.layout = convgen::Layout::kNHWC;
  expect(reference_epilogue<DepthwiseOp>({1, 2, 3, 4}, b, bias_ops) == std::vector<float>({101, 202, 103, 204}),
         "NHWC reference: channel innermost");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <scratch CSV path>\n", argv[0]);
    return EXIT_FAILURE;
  }
  test_csv(argv[1]);
  test_storage_csv(argv[1]);
  test_taps_first();
  test_rounding();
  test_reference();
  if (failures) return EXIT_FAILURE;
  std::printf("bench rows: ok\n");
  return EXIT_SUCCESS;
}
