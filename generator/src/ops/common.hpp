// What every operator's unit shares: arithmetic helpers and the pieces of a
// kernel's name and registry entry that describe a convolution's window and
// epilogue. Internal to the generator (generator/src/ops/).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "convgen/gen/spec.hpp"

namespace convgen::gen::ops {

// The most threads a CUDA block may have.
constexpr int kMaxThreads = 1024;

inline int ceil_div(int a, int b) { return (a + b - 1) / b; }
inline long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }
inline int round_up(int v, int to) { return ceil_div(v, to) * to; }
inline int pow2_at_least(int x) {
  int p = 1;
  while (p < x) p *= 2;
  return p;
}
inline std::string num(long long v) { return std::to_string(v); }

// The most images one launch covers when the kernel numbers `units_per_image`
// units (thread groups, planes, tiles, blocks) per image with a 32-bit int.
int batch_limit(long long units_per_image);

// Parameters the epilogue reads per output channel: 0, 1 (bias) or 2 (scale, shift).
int epilogue_params(const Workload& wl);

// "1" when both are equal, else "2x1": strides and dilations in names.
std::string pair_name(int a, int b);
// "1" for equal padding on every side, else "t0b1l1r2".
std::string padding_name(const Workload& wl);

// A kernel's runtime problem for the registry, field by field and by name
// ("p.n = 1; p.c = 8; ..."), so that the runtime may order its fields as it
// likes: the fields every convolution has (batch, input shape, window,
// epilogue, activation) and the operator's own.
using ProblemFields = std::vector<std::pair<std::string, std::string>>;
std::string problem_fields(const Workload& wl, const ProblemFields& own);
// The data type's, math's (where not fp32) and layout's part of a kernel
// name: "f16_nhwc", "f32_tf32_nhwc".
std::string storage_name(const Workload& wl);
// The bytes of one element of the workload's dtype.
int element_bytes(const Workload& wl);
// The epilogue's part of a kernel name: "", "bias" or "ss".
std::string epilogue_name_part(const Workload& wl);

}  // namespace convgen::gen::ops
