#include "convgen/oracle/oracle.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

namespace convgen::oracle {

long long input_count(const ReferenceProblem& p) { return static_cast<long long>(p.n) * p.c * p.h * p.w; }

long long filter_count(const ReferenceProblem& p) {
  return static_cast<long long>(p.c_out) * (p.c / p.groups) * p.kh * p.kw;
}

long long output_count(const ReferenceProblem& p) {
  return static_cast<long long>(p.n) * p.c_out * p.out_h * p.out_w;
}

double bound_terms(const ReferenceProblem& p) {
  const double products = static_cast<double>(p.c / p.groups) * p.kh * p.kw;
  return p.exact_sums ? std::sqrt(products) + 2 : products;
}

namespace {

std::vector<float> uniform(long long count, std::mt19937_64& rng, float lo, float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(count));
  for (float& x : v) x = dist(rng);
  return v;
}

// Multiples of 1/16 in [-1, 1]: every product is a multiple of 2^-8, and
// every partial sum of at most 2^16 of them is exact in fp32, in any order.
std::vector<float> sixteenths(long long count, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> dist(-16, 16);
  std::vector<float> v(static_cast<size_t>(count));
  for (float& x : v) x = static_cast<float>(dist(rng)) / 16.0f;
  return v;
}

}  // namespace

Operands make_operands(const ReferenceProblem& p, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Operands o;
  o.input = p.exact_sums ? sixteenths(input_count(p), rng) : uniform(input_count(p), rng, -1, 1);
  o.filter = p.exact_sums ? sixteenths(filter_count(p), rng) : uniform(filter_count(p), rng, -1, 1);
  o.epilogue_a = uniform(p.c_out, rng, -2, 2);
  o.epilogue_b = uniform(p.c_out, rng, -1, 3);
  if (p.residual) o.residual = uniform(output_count(p), rng, -1, 1);
  return o;
}

unsigned reference_blocks(const ReferenceProblem& p) {
  return static_cast<unsigned>((output_count(p) + kReferenceBlock - 1) / kReferenceBlock);
}

std::vector<std::uint32_t> poisoned_output(long long outputs) {
  std::vector<std::uint32_t> buffer(static_cast<size_t>(outputs) + 2 * kGuardWords, 0xffffffffu);
  std::fill_n(buffer.begin(), kGuardWords, kGuardPattern);
  std::fill_n(buffer.end() - kGuardWords, kGuardWords, kGuardPattern);
  return buffer;
}

Comparison compare(const ReferenceProblem& p, const std::vector<float>& buffer, const Reference& reference) {
  Comparison c;
  c.elements = output_count(p);
  const size_t count = static_cast<size_t>(c.elements);
  for (size_t g = 0; g < kGuardWords && c.guard_word < 0; ++g) {
    std::uint32_t before, after;
    std::memcpy(&before, &buffer[g], 4);
    std::memcpy(&after, &buffer[kGuardWords + count + g], 4);
    if (before != kGuardPattern || after != kGuardPattern) c.guard_word = static_cast<long long>(g);
  }
  const double unit = (bound_terms(p) + 2) * std::ldexp(1.0, -23);
  for (size_t i = 0; i < count; ++i) {
    const double got = buffer[kGuardWords + i];
    const double bound = unit * reference.magnitude[i] + 1e-30;
    const double err = std::fabs(got - reference.value[i]);
    if (!(err <= bound)) {  // NaN fails too
      if (c.first.size() < kReportedMismatches) c.first.push_back({static_cast<long long>(i), got, reference.value[i], bound});
      ++c.wrong;
    }
    if (std::isfinite(got)) c.max_rel_error = std::max(c.max_rel_error, err / std::max(reference.magnitude[i], 1e-30));
  }
  return c;
}

namespace {

std::string mismatch_text(const Mismatch& m, const ReferenceProblem& p) {
  const long long plane = static_cast<long long>(p.out_h) * p.out_w;
  char text[200];
  std::snprintf(text, sizeof text, "output[n=%lld, c=%lld, y=%lld, x=%lld] = %g, expected %g (bound %g)",
                m.index / (plane * p.c_out), m.index / plane % p.c_out, m.index % plane / p.out_w, m.index % p.out_w,
                m.got, m.expected, m.bound);
  return text;
}

}  // namespace

std::string describe(const Comparison& c, const ReferenceProblem& p, std::size_t mismatches) {
  std::string text;
  if (c.guard_word >= 0) text = "wrote outside the output (guard word " + std::to_string(c.guard_word) + ")";
  if (c.wrong == 0) return text;
  if (!text.empty()) text += "; ";
  text += std::to_string(c.wrong) + " of " + std::to_string(c.elements) + " outputs wrong";
  for (size_t i = 0; i < c.first.size() && i < mismatches; ++i) {
    text += (i == 0 ? "; " : "\n  ") + mismatch_text(c.first[i], p);
  }
  return text;
}

}  // namespace convgen::oracle
