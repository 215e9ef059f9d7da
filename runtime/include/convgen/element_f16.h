// convgen/element.h's helpers for float16 elements (__half): CUDA's own
// conversions, two at a time through __half2. A float16 kernel includes
// this header; float32 kernels leave cuda_fp16.h out.
#pragma once

#include <cuda_fp16.h>

#include "convgen/element.h"

namespace convgen {

template <> struct Convert<__half> {
  using Pair = __half2;
  static __device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
  static __device__ __forceinline__ __half from_float(float x) { return __float2half_rn(x); }
  static __device__ __forceinline__ float2 to_float2(__half2 v) { return __half22float2(v); }
  static __device__ __forceinline__ __half2 from_floats(float a, float b) { return __floats2half2_rn(a, b); }
  static __device__ __forceinline__ __half2 max_pair(__half2 v, __half2 w) { return __hmax2(v, w); }
  static __device__ __forceinline__ __half2 min_pair(__half2 v, __half2 w) { return __hmin2(v, w); }
};

}  // namespace convgen
