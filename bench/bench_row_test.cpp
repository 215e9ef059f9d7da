// A host-only check of the benchmark driver's row handling (bench_row.h):
// the CSV accepts every epilogue and activation of convgen/epilogue.h's
// tables, and the reference epilogue is epilogue.h's math (silu and
// hardswish included), with a dense row's residual added before the
// activation. Needs no GPU. Usage: convgen_bench_row_test <scratch CSV path>
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
    }
  }
  expect(!parse_epilogue_word("gelu") && !parse_epilogue_word("none_relu") && !parse_epilogue_word("relu_bias"),
         "words no table has are refused");
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
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <scratch CSV path>\n", argv[0]);
    return EXIT_FAILURE;
  }
  test_csv(argv[1]);
  test_reference();
  if (failures) return EXIT_FAILURE;
  std::printf("bench rows: ok\n");
  return EXIT_SUCCESS;
}
