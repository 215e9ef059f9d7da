// convgen/element.h's helpers for bfloat16 elements (__nv_bfloat16): CUDA's
// own conversions, two at a time through __nv_bfloat162. A bfloat16 kernel
// includes this header; float32 kernels leave cuda_bf16.h out.
#pragma once

#include <cuda_bf16.h>

#include "convgen/element.h"

namespace convgen {

template <> struct Convert<__nv_bfloat16> {
  using Pair = __nv_bfloat162;
  static __device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
  static __device__ __forceinline__ __nv_bfloat16 from_float(float x) { return __float2bfloat16_rn(x); }
  static __device__ __forceinline__ float2 to_float2(__nv_bfloat162 v) { return __bfloat1622float2(v); }
  static __device__ __forceinline__ __nv_bfloat162 from_floats(float a, float b) {
    return __floats2bfloat162_rn(a, b);
  }
  static __device__ __forceinline__ __nv_bfloat162 max_pair(__nv_bfloat162 v, __nv_bfloat162 w) {
    return __hmax2(v, w);
  }
  static __device__ __forceinline__ __nv_bfloat162 min_pair(__nv_bfloat162 v, __nv_bfloat162 w) {
    return __hmin2(v, w);
  }
};

}  // namespace convgen
