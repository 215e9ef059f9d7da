// convgen's epilogues and activations: the one table of each, and their math.
//
// Everything that names or computes an epilogue or an activation reads it
// from here: the spec parser (its words), kernel names (their name parts),
// the runtime (its enums and messages), the generic kernels and the generated
// kernels (the math, through `activate`), the GPU tests' and the tuner's
// float64 references and the benchmark's check (the same math in double).
// Adding an activation is one row below and one case in `activate`.
//
// The header needs no CUDA header and compiles under nvcc, NVRTC and a plain
// C++ compiler (where the math runs on the host).
#pragma once

#if !defined(__CUDACC_RTC__)
#include <cmath>

#include "convgen/dtype.h"  // is_enumerator, for the host's tables below
#endif

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define CONVGEN_EPILOGUE_FN __host__ __device__ __forceinline__
#else
#define CONVGEN_EPILOGUE_FN inline
#endif

// The epilogues: what is applied to the convolution's sum per output channel
// before the activation. Columns: enumerator, spec word, the kernel name's
// part, parameters read per output channel, what it computes.
#define CONVGEN_EPILOGUE_TABLE(X)                                     \
  X(kNone, "none", "", 0, "")                                         \
  X(kBias, "bias", "bias", 1, " + bias[co]")                          \
  X(kScaleShift, "scale_shift", "ss", 2, " * scale[co] + shift[co]")

// The activations, applied last (after a dense convolution's residual), as
// PyTorch defines them. Columns: enumerator, spec word (also the kernel
// name's part), definition for kernel headers, how much a float32 rounding of
// the input can grow through it (its largest slope), whether its float32
// evaluation adds rounding of its own (exp, a division).
#define CONVGEN_ACTIVATION_TABLE(X)                                                      \
  X(kNone, "none", "none", 1.0, false)                                                   \
  X(kRelu, "relu", "relu(x) = max(x, 0)", 1.0, false)                                    \
  X(kRelu6, "relu6", "relu6(x) = min(max(x, 0), 6)", 1.0, false)                         \
  X(kSilu, "silu", "silu(x) = x * sigmoid(x) = x / (1 + e^-x)", 1.5, true)               \
  X(kHardswish, "hardswish", "hardswish(x) = x * relu6(x + 3) / 6", 1.5, true)

namespace convgen {

#define CONVGEN_ENUMERATOR(enumerator, ...) enumerator,
enum class Epilogue { CONVGEN_EPILOGUE_TABLE(CONVGEN_ENUMERATOR) };
enum class Activation { CONVGEN_ACTIVATION_TABLE(CONVGEN_ENUMERATOR) };
#undef CONVGEN_ENUMERATOR

// The math, for float in the kernels and double in the references. The
// overloads keep float math in float (fmaxf, expf: the instructions the
// kernels have always used) and double math exact.
namespace epilogue_math {
CONVGEN_EPILOGUE_FN float max(float a, float b) { return fmaxf(a, b); }
CONVGEN_EPILOGUE_FN float min(float a, float b) { return fminf(a, b); }
CONVGEN_EPILOGUE_FN float exp(float x) { return expf(x); }
CONVGEN_EPILOGUE_FN double max(double a, double b) { return fmax(a, b); }
CONVGEN_EPILOGUE_FN double min(double a, double b) { return fmin(a, b); }
CONVGEN_EPILOGUE_FN double exp(double x) { return ::exp(x); }
}  // namespace epilogue_math

// The activation, as every kernel and reference computes it.
template <class T>
CONVGEN_EPILOGUE_FN T activate(Activation a, T x) {
  namespace m = epilogue_math;
  switch (a) {
    case Activation::kNone: return x;
    case Activation::kRelu: return m::max(x, T(0));
    case Activation::kRelu6: return m::min(m::max(x, T(0)), T(6));
    // x / (1 + e^-x): for x below -88, e^-x is inf in float and the quotient
    // the right limit, -0.
    case Activation::kSilu: return x / (T(1) + m::exp(-x));
    case Activation::kHardswish: return x * m::min(m::max(x + T(3), T(0)), T(6)) * (T(1) / T(6));
  }
  return x;
}

// Whether a kernel whose output is float16 or bfloat16 evaluates activation
// `a` with the GPU's approximate exp and division (__expf and __fdividef:
// within 2^-16 of the value, 32 times finer than float16's rounding that
// follows; tests/gpu/test_half_activation.cu checks it on every float16):
// silu, whose exact float32 evaluation took more time than all the rest of
// a thin 1x1 layer's work (docs/performance.md, "Silu before a half
// rounding"). The generator names activate_before_half_rounding in such
// kernels; every other kernel calls `activate`.
CONVGEN_EPILOGUE_FN constexpr bool approximate_before_half_rounding(Activation a) { return a == Activation::kSilu; }

// Whether activation `a` gives the same value applied after the rounding to
// float16 or bfloat16 as before it: relu and relu6 clamp to bounds both types
// hold exactly (0 and 6), and rounding to nearest is monotone, so a value
// clamped and then rounded equals it rounded and then clamped (a zero's sign
// aside; NaN becomes 0 either way). A kernel that rounds two outputs as a
// pair can then clamp both at once (convgen::PairClamp: one
// instruction a bound for the two, against one an output in float32).
CONVGEN_EPILOGUE_FN constexpr bool clamps_after_half_rounding(Activation a) {
  return a == Activation::kRelu || a == Activation::kRelu6;
}

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
// `activate`, for a value rounded to float16 or bfloat16 next. For x below
// -88, 1 + e^-x is inf and the quotient -0, as in `activate`.
__device__ __forceinline__ float activate_before_half_rounding(Activation a, float x) {
  if (approximate_before_half_rounding(a)) return __fdividef(x, 1.0f + __expf(-x));
  return activate(a, x);
}
#endif

// The epilogue's affine part: none, + a (bias), or * a + b (scale, shift).
template <class T>
CONVGEN_EPILOGUE_FN T apply_epilogue(Epilogue e, T x, T a, T b) {
  switch (e) {
    case Epilogue::kNone: return x;
    case Epilogue::kBias: return x + a;
    case Epilogue::kScaleShift: return x * a + b;
  }
  return x;
}

// How far a float32 result may be from the exact one after the activation,
// in units of the float32 rounding: from `magnitude`, the bound before it
// (the sum of the terms' magnitudes), and `value`, the exact result. The
// references of the GPU tests and the tuner check every output against it.
template <class T>
CONVGEN_EPILOGUE_FN T activation_error_scale(Activation a, T magnitude, T value) {
  switch (a) {
#define CONVGEN_ERROR_CASE(enumerator, word, definition, max_slope, rounds) \
  case Activation::enumerator:                                             \
    return T(max_slope) * magnitude + (rounds ? T(4) * (value < T(0) ? -value : value) : T(0));
    CONVGEN_ACTIVATION_TABLE(CONVGEN_ERROR_CASE)
#undef CONVGEN_ERROR_CASE
  }
  return magnitude;
}

#if !defined(__CUDACC_RTC__)
// One row of each table, for the host: words, names, messages, listings.
struct EpilogueRow {
  Epilogue value;
  const char* enumerator;  // "kScaleShift"
  const char* word;        // the spec's word, "scale_shift"
  const char* name_part;   // in kernel names, "ss"
  int params;              // values read per output channel
  const char* affine;      // what it adds to "conv", " * scale[co] + shift[co]"
};
struct ActivationRow {
  Activation value;
  const char* enumerator;  // "kRelu6"
  const char* word;        // the spec's word and the kernel name's part, "relu6"
  const char* definition;  // "relu6(x) = min(max(x, 0), 6)"
  double max_slope;        // the most an input's rounding grows through it
  bool rounds;             // its float evaluation adds a few ulp of its own
};

#define CONVGEN_EPILOGUE_ROW(enumerator, word, name_part, params, affine) \
  EpilogueRow{Epilogue::enumerator, #enumerator, word, name_part, params, affine},
#define CONVGEN_ACTIVATION_ROW(enumerator, word, definition, max_slope, rounds) \
  ActivationRow{Activation::enumerator, #enumerator, word, definition, max_slope, rounds},
inline constexpr EpilogueRow kEpilogueTable[] = {CONVGEN_EPILOGUE_TABLE(CONVGEN_EPILOGUE_ROW)};
inline constexpr ActivationRow kActivationTable[] = {CONVGEN_ACTIVATION_TABLE(CONVGEN_ACTIVATION_ROW)};
#undef CONVGEN_EPILOGUE_ROW
#undef CONVGEN_ACTIVATION_ROW

// Rows are in enumerator order: row() takes an enumerator; to_string() any
// value (is_enumerator, dtype.h).
inline const EpilogueRow& row(Epilogue e) { return kEpilogueTable[static_cast<int>(e)]; }
inline const ActivationRow& row(Activation a) { return kActivationTable[static_cast<int>(a)]; }
inline const char* to_string(Epilogue e) { return is_enumerator(e, kEpilogueTable) ? row(e).word : "not an enumerator"; }
inline const char* to_string(Activation a) {
  return is_enumerator(a, kActivationTable) ? row(a).word : "not an enumerator";
}

#endif

}  // namespace convgen
