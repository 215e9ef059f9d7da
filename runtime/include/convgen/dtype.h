// convgen's data types and memory layouts: the one table of each.
//
// Everything that names a data type or a layout reads it from here: the
// spec parser (its words), kernel names (their name parts), the runtime
// (its enums, element sizes and messages), the generated kernels (the CUDA
// type of an element) and the float64 references (the rounding of each
// type). Accumulation is always fp32, whatever the data type: a half kernel
// converts what it loads to float and rounds once, at the store.
//
// The header needs no CUDA header and compiles under nvcc, NVRTC and a plain
// C++ compiler.
#pragma once

// The data types of a problem's tensors (input, filter, epilogue
// parameters, residual, output: all the same). Columns: enumerator, spec
// word, the kernel name's part, bytes per element, the CUDA type the
// kernels use, the header of its conversions a kernel includes, and the
// bits of its significand after the point (its unit roundoff is
// 2^-(bits + 1)).
#define CONVGEN_DTYPE_TABLE(X)                                                       \
  X(kFloat32, "float32", "f32", 4, "float", "convgen/element.h", 23)                \
  X(kFloat16, "float16", "f16", 2, "__half", "convgen/element_f16.h", 10)           \
  X(kBFloat16, "bfloat16", "bf16", 2, "__nv_bfloat16", "convgen/element_bf16.h", 7)

// How a dense convolution multiplies float32 operands (the caller's
// permission, as PyTorch's allow_tf32 is: a kernel is made for one mode and
// the generic kernel, in fp32, serves them all). Float16 and bfloat16
// products are exact in fp32: their problems take kFloat32. Columns:
// enumerator, spec word, the kernel name's part (none for fp32), b such
// that each product is within 2^-b of the exact one, relatively (0: an fp32
// FMA, whose rounding the sum's bound covers; tf32 rounds both operands to
// 10 bits after the point, 2^-11 each; 3xtf32 splits each operand into a
// tf32 part and a tf32 remainder, 2^-22 each, and drops the product of the
// remainders, 2^-22), and how many products the kernel adds for one (3 for
// 3xtf32).
#define CONVGEN_MATH_TABLE(X)                                 \
  X(kFloat32, "fp32", "", 0, 1)                               \
  X(kTF32, "tf32", "tf32", 10, 1)                             \
  X(k3xTF32, "3xtf32", "3xtf32", 20, 3)

// The memory layouts of the activations (input, residual, output). Columns:
// enumerator, spec word, the kernel name's part, and how the weights lie in
// memory with it (as PyTorch holds them: contiguous, or channels_last).
#define CONVGEN_LAYOUT_TABLE(X)                                                                        \
  X(kNCHW, "NCHW", "nchw", "OIHW (dense), [c * multiplier, 1, kh, kw] (depthwise)")                   \
  X(kNHWC, "NHWC", "nhwc", "O x kh x kw x I (dense, channels_last), kh x kw x (c * multiplier) (depthwise)")

namespace convgen {

#define CONVGEN_ENUMERATOR(enumerator, ...) enumerator,
enum class DataType { CONVGEN_DTYPE_TABLE(CONVGEN_ENUMERATOR) };
enum class Layout { CONVGEN_LAYOUT_TABLE(CONVGEN_ENUMERATOR) };
enum class Math { CONVGEN_MATH_TABLE(CONVGEN_ENUMERATOR) };
#undef CONVGEN_ENUMERATOR

#if !defined(__CUDACC_RTC__)
// One row of each table, for the host: words, names, sizes, messages.
struct DataTypeRow {
  DataType value;
  const char* enumerator;  // "kFloat16"
  const char* word;        // the spec's word, "float16"
  const char* name_part;   // in kernel names, "f16"
  int bytes;               // per element
  const char* cuda_type;   // the element type of the kernels, "__half"
  const char* header;      // its conversions, as a kernel includes them: "convgen/element_f16.h"
  int fraction_bits;       // significand bits after the point: 23, 10, 7
};
struct LayoutRow {
  Layout value;
  const char* enumerator;  // "kNHWC"
  const char* word;        // the spec's word, "NHWC"
  const char* name_part;   // in kernel names, "nhwc"
  const char* weights;     // how the filter lies in memory with this layout
};

struct MathRow {
  Math value;
  const char* enumerator;  // "kTF32"
  const char* word;        // the spec's word, "tf32"
  const char* name_part;   // in kernel names, "tf32" ("" for fp32)
  int product_bits;        // each product within 2^-product_bits of the exact one; 0: fp32's FMA
  int products;            // tensor-core products added for one product of the sum
};

#define CONVGEN_DTYPE_ROW(enumerator, word, name_part, bytes, cuda_type, header, fraction_bits) \
  DataTypeRow{DataType::enumerator, #enumerator, word, name_part, bytes, cuda_type, header, fraction_bits},
#define CONVGEN_LAYOUT_ROW(enumerator, word, name_part, weights) \
  LayoutRow{Layout::enumerator, #enumerator, word, name_part, weights},
inline constexpr DataTypeRow kDataTypeTable[] = {CONVGEN_DTYPE_TABLE(CONVGEN_DTYPE_ROW)};
inline constexpr LayoutRow kLayoutTable[] = {CONVGEN_LAYOUT_TABLE(CONVGEN_LAYOUT_ROW)};
#define CONVGEN_MATH_ROW(enumerator, word, name_part, product_bits, products) \
  MathRow{Math::enumerator, #enumerator, word, name_part, product_bits, products},
inline constexpr MathRow kMathTable[] = {CONVGEN_MATH_TABLE(CONVGEN_MATH_ROW)};
#undef CONVGEN_MATH_ROW
#undef CONVGEN_DTYPE_ROW
#undef CONVGEN_LAYOUT_ROW

// Whether a value is one of its enum's enumerators: a row of its table (a
// value cast from an integer may be none, and row() must not be given it).
template <class Enum, class Row, int N>
constexpr bool is_enumerator(Enum value, const Row (&)[N]) {
  return static_cast<int>(value) >= 0 && static_cast<int>(value) < N;
}

// Rows are in enumerator order: row() takes an enumerator; to_string()
// takes any value ("not an enumerator" for one that names no row).
inline constexpr const DataTypeRow& row(DataType t) { return kDataTypeTable[static_cast<int>(t)]; }
inline constexpr const LayoutRow& row(Layout l) { return kLayoutTable[static_cast<int>(l)]; }
inline const char* to_string(DataType t) { return is_enumerator(t, kDataTypeTable) ? row(t).word : "not an enumerator"; }
inline const char* to_string(Layout l) { return is_enumerator(l, kLayoutTable) ? row(l).word : "not an enumerator"; }
inline constexpr const MathRow& row(Math m) { return kMathTable[static_cast<int>(m)]; }
inline const char* to_string(Math m) { return is_enumerator(m, kMathTable) ? row(m).word : "not an enumerator"; }
inline constexpr int element_bytes(DataType t) { return row(t).bytes; }
#endif

}  // namespace convgen
