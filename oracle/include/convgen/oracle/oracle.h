// The verification oracle the tuner and the GPU tests share: fresh random
// operands, the output buffer's poison and guard words, and the check of
// every output element against the float64 reference (reference.cuh) with
// one bound, reporting the first mismatches.
//
// The bound, per element: |got - ref| <= E * (1 + u) + u * |ref| + t, with
// E = (terms + 2) * 2^-23 * S, where S is the float64 sum of the magnitudes
// of every term that forms the output (|x*w| over the taps, scaled by
// |scale|, plus |bias| or |shift| and |residual|), widened by the
// activation's slope. Rounding in an fp32 sum of `terms` products cannot
// exceed E; a wrong index or a missed tap exceeds it at once, since operands
// are random. terms: the products of a sum, or with exact sums
// (ReferenceProblem::exact_sums) sqrt(products) + 2, which leaves room for
// kernels that transform their operands (a product of exact values is then
// rounded) while one missed product of about 0.25 still exceeds it. With
// math tf32 or 3xtf32 (convgen/dtype.h) a product counts as `products`
// (3 for 3xtf32) in terms, and where the operands are not exact in TF32
// (uniform ones, or any through Winograd's transforms) E grows by
// 2^-product_bits * S: 2^-10 for tf32, 2^-20 for 3xtf32.
// u is the unit roundoff of the output's one rounding to its dtype (0 for
// float32, which the sum already rounds to; 2^-11 for float16, 2^-8 for
// bfloat16) and t half the dtype's smallest subnormal spacing (2^-25 for
// float16; 1e-30 otherwise). The operands are drawn already rounded to the
// dtype, so the reference sees exactly what the kernel reads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "convgen/oracle/problem.h"

namespace convgen::oracle {

// The geometry, epilogue and activation of a problem that names them as the
// runtime's problems and the generator's workloads do, at batch `n` with
// `c_out` output channels (one group, uniform operands, no residual: the
// caller says what differs).
template <class Problem>
ReferenceProblem convolution_geometry(const Problem& p, int n, int c_out) {
  ReferenceProblem r;
  r.n = n;
  r.c = p.c;
  r.h = p.h;
  r.w = p.w;
  r.c_out = c_out;
  r.out_h = p.out_h();
  r.out_w = p.out_w();
  r.kh = p.kh;
  r.kw = p.kw;
  r.stride_h = p.stride_h;
  r.stride_w = p.stride_w;
  r.pad_top = p.pad_top;
  r.pad_left = p.pad_left;
  r.dilation_h = p.dilation_h;
  r.dilation_w = p.dilation_w;
  r.epilogue = p.epilogue;
  r.activation = p.activation;
  r.dtype = p.dtype;
  r.layout = p.layout;
  return r;
}

long long input_count(const ReferenceProblem& p);
long long filter_count(const ReferenceProblem& p);
long long output_count(const ReferenceProblem& p);
double bound_terms(const ReferenceProblem& p);

// The operands, drawn from `seed`: input and filter (multiples of 1/16 with
// exact sums, else uniform in [-1, 1]); per output channel the epilogue's
// first parameter (bias or scale) in [-2, 2] and second (shift) in [-1, 3],
// straddling zero so that relu and relu6 both clip and pass values; the
// residual in [-1, 1] when the problem has one (else empty). Every value is
// rounded to the problem's dtype; tensors are logical (NCHW, OIHW), the
// order the reference reads.
struct Operands {
  std::vector<float> input, filter, epilogue_a, epilogue_b, residual;
};
Operands make_operands(const ReferenceProblem& p, std::uint64_t seed);

// The tensors of a call, for their memory order.
enum class Tensor { kInput, kFilter, kPerChannel, kResidual, kOutput };
// The bytes a kernel reads for one tensor of logical values: in the
// problem's layout (convgen/convgen.h: DepthwiseArgs, Conv2dArgs) and dtype.
std::vector<unsigned char> stored(const ReferenceProblem& p, Tensor t, const std::vector<float>& logical);
// Bytes per element of the problem's dtype.
int element_size(const ReferenceProblem& p);

// The reference kernel: its name and launch (one thread per output element).
inline constexpr const char* kReferenceKernel = "convgen_reference";
inline constexpr unsigned kReferenceBlock = 256;
unsigned reference_blocks(const ReferenceProblem& p);

// The reference's result: per output element its value and S, the sum of
// its terms' magnitudes (the scale of rounding error).
struct Reference {
  std::vector<double> value, magnitude;
};

// The output buffer a kernel writes into: kGuardWords guard elements, then
// the outputs poisoned with NaN (all-ones bytes, so an element the kernel
// never writes fails), then kGuardWords guard elements that catch writes
// past its ends. A guard element holds a NaN no kernel computes.
inline constexpr std::size_t kGuardWords = 1024;
// The buffer's contents before the launch: guards, poison, guards, in
// elements of the problem's dtype.
std::vector<unsigned char> poisoned_output(const ReferenceProblem& p);

struct Mismatch {
  long long index = 0;  // in the logical output, NCHW
  double got = 0, expected = 0, bound = 0;
};

struct Comparison {
  long long elements = 0;
  long long wrong = 0;        // outside the bound, NaN, or never written
  long long guard_word = -1;  // the first guard word overwritten, on either side; -1: none
  std::vector<Mismatch> first;  // the first kReportedMismatches wrong elements
  double max_rel_error = 0;   // max |got - ref| / S over the finite elements (float16: those with S >= 2^-14)
  bool passed() const { return wrong == 0 && guard_word < 0; }
};
inline constexpr std::size_t kReportedMismatches = 5;

// Checks the buffer as the kernel left it (guards and outputs, as
// poisoned_output laid it out, in the problem's dtype and layout) against
// the reference.
Comparison compare(const ReferenceProblem& p, const std::vector<unsigned char>& buffer, const Reference& reference);

// What went wrong, with at most `mismatches` wrong elements by position:
// "wrote outside the output (guard word 3); 12 of 4096 outputs wrong;
// output[n=0, c=1, y=2, x=3] = nan, expected 0.5 (bound 1e-06)", one more
// line per further mismatch. Empty when the comparison passed.
std::string describe(const Comparison& c, const ReferenceProblem& p, std::size_t mismatches);

}  // namespace convgen::oracle
