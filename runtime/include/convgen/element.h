// convgen's kernels read and write their elements through these helpers:
// an element of any data type (convgen/dtype.h) is loaded and converted to
// float, computed on in float, and converted back once, at the store.
//
// This header holds the machinery and float32; the half types' conversions
// are CUDA's own (cuda_fp16.h, cuda_bf16.h), in convgen/element_f16.h and
// convgen/element_bf16.h, which a kernel of that type includes instead.
// Those CUDA headers are large: a float32 kernel that does not include them
// compiles in about two thirds of the time. Conversions go two elements at a
// time through the vector forms (__half2, __nv_bfloat162) where a load holds
// pairs; a load or store moves up to 16 bytes at once, as one unsigned word
// of its size, so that a half kernel's 8 elements cost one instruction as a
// float kernel's 4 do.
#pragma once

#ifndef __CUDACC_RTC__
#include <cuda_runtime.h>  // uint2, uint4, __ldg: nvcc includes it anyway
#endif

#include "convgen/epilogue.h"

namespace convgen {

// The L2 priority of a load or store: normal (loads through the read-only
// cache, __ldg; plain stores) or evict-first (__ldcs / __stcs: data used
// once).
enum class CacheHint { kNormal, kEvictFirst };

namespace element_detail {

// The unsigned word of `Bytes` bytes one load or store moves.
template <int Bytes> struct Word;
template <> struct Word<2> { using type = unsigned short; };
template <> struct Word<4> { using type = unsigned int; };
template <> struct Word<8> { using type = uint2; };
template <> struct Word<16> { using type = uint4; };

template <CacheHint H, class W>
__device__ __forceinline__ W load_word(const W* p) {
  if constexpr (H == CacheHint::kEvictFirst) {
    return __ldcs(p);
  } else {
    return __ldg(p);
  }
}

template <CacheHint H, class W>
__device__ __forceinline__ void store_word(W* p, const W& w) {
  if constexpr (H == CacheHint::kEvictFirst) {
    __stcs(p, w);
  } else {
    *p = w;
  }
}

}  // namespace element_detail

// An element type's conversions, specialized for each: `Pair` (two adjacent
// elements as one value), `to_float`, `from_float` (round to nearest even),
// `to_float2` and `from_floats` (a pair's), and `max_pair` / `min_pair` (a
// pair's elementwise maximum and minimum; of a NaN and a number, the
// number, as fmaxf and fminf). float32 here; the half types in
// convgen/element_f16.h and convgen/element_bf16.h.
template <class T> struct Convert;
template <> struct Convert<float> {
  using Pair = float2;
  static __device__ __forceinline__ float to_float(float x) { return x; }
  static __device__ __forceinline__ float from_float(float x) { return x; }
  static __device__ __forceinline__ float2 to_float2(float2 v) { return v; }
  static __device__ __forceinline__ float2 from_floats(float a, float b) { return make_float2(a, b); }
  static __device__ __forceinline__ float2 max_pair(float2 v, float2 w) {
    return make_float2(fmaxf(v.x, w.x), fmaxf(v.y, w.y));
  }
  static __device__ __forceinline__ float2 min_pair(float2 v, float2 w) {
    return make_float2(fminf(v.x, w.x), fminf(v.y, w.y));
  }
};

// A float as TF32 tensor cores take it (math tf32, and 3xtf32's parts):
// rounded to 10 bits after the point, to nearest with ties away from zero
// (cvt.rna), as the bits of a float whose low 13 bits are zero. sm_80 and
// newer; 0 below, where no tensor-core kernel runs.
__device__ __forceinline__ unsigned tf32_bits(float x) {
  unsigned r = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
#endif
  return r;
}

// One element to float and back.
template <class T> __device__ __forceinline__ float to_float(T x) { return Convert<T>::to_float(x); }
template <class T> __device__ __forceinline__ T from_float(float x) { return Convert<T>::from_float(x); }

// How N adjacent elements of T move: in chunks of up to 16 bytes, each one
// unsigned word, whose elements convert two at a time where they pair up.
// N is a power of two (a word is 2, 4, 8 or 16 bytes).
template <class T, int N>
struct Chunks {
  static_assert(N > 0 && (N & (N - 1)) == 0, "N elements move in whole words: a power of two");
  static constexpr int kBytes = N * static_cast<int>(sizeof(T)) < 16 ? N * static_cast<int>(sizeof(T)) : 16;
  static constexpr int kPerChunk = kBytes / static_cast<int>(sizeof(T));
  static constexpr int kCount = N / kPerChunk;
  static constexpr bool kPairs = kPerChunk % 2 == 0;
  using Word = typename element_detail::Word<kBytes>::type;
  using Convert = convgen::Convert<T>;
};

namespace element_detail {

// N elements of T as floats, chunk by chunk: `load_word(chunk)` reads the
// word of chunk `chunk` (Chunks<T, N>::Word).
template <class T, int N, class LoadWord>
__device__ __forceinline__ void load_chunks(float (&out)[N], LoadWord load_word) {
  using C = Chunks<T, N>;
#pragma unroll
  for (int chunk = 0; chunk < C::kCount; ++chunk) {
    const typename C::Word w = load_word(chunk);
    const T* e = reinterpret_cast<const T*>(&w);
    float* f = out + chunk * C::kPerChunk;
    if constexpr (C::kPairs) {
#pragma unroll
      for (int i = 0; i < C::kPerChunk; i += 2) {
        const float2 two = C::Convert::to_float2(*reinterpret_cast<const typename C::Convert::Pair*>(e + i));
        f[i] = two.x;
        f[i + 1] = two.y;
      }
    } else {
#pragma unroll
      for (int i = 0; i < C::kPerChunk; ++i) f[i] = to_float(e[i]);
    }
  }
}

// A word at a shared-memory address by a volatile load: one the compiler
// neither hoists above earlier code nor merges with others.
template <class W> __device__ __forceinline__ W load_volatile_shared(unsigned address);
template <> __device__ __forceinline__ unsigned short load_volatile_shared<unsigned short>(unsigned address) {
  unsigned short w;
  asm volatile("ld.volatile.shared.u16 %0, [%1];\n" : "=h"(w) : "r"(address));
  return w;
}
template <> __device__ __forceinline__ unsigned int load_volatile_shared<unsigned int>(unsigned address) {
  unsigned int w;
  asm volatile("ld.volatile.shared.u32 %0, [%1];\n" : "=r"(w) : "r"(address));
  return w;
}
template <> __device__ __forceinline__ uint2 load_volatile_shared<uint2>(unsigned address) {
  uint2 w;
  asm volatile("ld.volatile.shared.v2.u32 {%0, %1}, [%2];\n" : "=r"(w.x), "=r"(w.y) : "r"(address));
  return w;
}
template <> __device__ __forceinline__ uint4 load_volatile_shared<uint4>(unsigned address) {
  uint4 w;
  asm volatile("ld.volatile.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(w.x), "=r"(w.y), "=r"(w.z), "=r"(w.w)
               : "r"(address));
  return w;
}

// The 32 bits of a 4-byte value (a float, or a pair of 2-byte elements).
template <class V>
__device__ __forceinline__ unsigned int bits32(const V& v) {
  static_assert(sizeof(V) == 4, "a 32-bit value");
  unsigned int u;
  memcpy(&u, &v, sizeof(u));
  return u;
}

// A word from its 32-bit parts.
__device__ __forceinline__ unsigned int word_of(const unsigned int (&p)[1]) { return p[0]; }
__device__ __forceinline__ uint2 word_of(const unsigned int (&p)[2]) { return make_uint2(p[0], p[1]); }
__device__ __forceinline__ uint4 word_of(const unsigned int (&p)[4]) { return make_uint4(p[0], p[1], p[2], p[3]); }

}  // namespace element_detail

// Loads N adjacent elements from `p` as floats; `p` must be aligned to
// Chunks<T, N>::kBytes (all N elements' bytes, up to 16).
template <class T, int N, CacheHint H = CacheHint::kNormal>
__device__ __forceinline__ void load(const T* p, float (&out)[N]) {
  using C = Chunks<T, N>;
  element_detail::load_chunks<T>(out, [p](int chunk) {
    return element_detail::load_word<H>(reinterpret_cast<const typename C::Word*>(p + chunk * C::kPerChunk));
  });
}

// N adjacent elements as loaded, before conversion: the words of their
// chunks. All zero bits are zeros in every dtype, so Packed{} holds N zeros.
template <class T, int N>
struct Packed {
  typename Chunks<T, N>::Word words[Chunks<T, N>::kCount];
};

// Loads N adjacent elements from `p` without converting them (a kernel that
// issues many loads before it computes keeps them at their own size); the
// alignment is load's.
template <class T, int N, CacheHint H = CacheHint::kNormal>
__device__ __forceinline__ Packed<T, N> load_packed(const T* p) {
  using C = Chunks<T, N>;
  Packed<T, N> packed;
#pragma unroll
  for (int chunk = 0; chunk < C::kCount; ++chunk) {
    packed.words[chunk] = element_detail::load_word<H>(reinterpret_cast<const typename C::Word*>(p + chunk * C::kPerChunk));
  }
  return packed;
}

// The floats of loaded elements.
template <class T, int N>
__device__ __forceinline__ void unpack(const Packed<T, N>& packed, float (&out)[N]) {
  element_detail::load_chunks<T>(out, [&packed](int chunk) { return packed.words[chunk]; });
}

// The same from shared memory a kernel staged its elements in (plain loads;
// the alignment is load's).
template <class T, int N>
__device__ __forceinline__ void load_shared(const T* p, float (&out)[N]) {
  using C = Chunks<T, N>;
  element_detail::load_chunks<T>(
      out, [p](int chunk) { return *reinterpret_cast<const typename C::Word*>(p + chunk * C::kPerChunk); });
}

// The same at a shared-memory address (__cvta_generic_to_shared), with
// volatile loads: for a kernel that reads its window row by row and must
// keep the compiler from hoisting later rows' loads (and running out of
// registers to hold them).
template <class T, int N>
__device__ __forceinline__ void load_shared_volatile(unsigned address, float (&out)[N]) {
  using C = Chunks<T, N>;
  element_detail::load_chunks<T>(out, [address](int chunk) {
    return element_detail::load_volatile_shared<typename C::Word>(address + chunk * C::kBytes);
  });
}

namespace element_detail {

// The words of N floats as N elements of T, each rounded once: `put(chunk,
// word)` stores chunk `chunk`. A word of 4 bytes or more is built from its
// 32-bit parts (a float, or a pair of 2-byte elements).
template <class T, int N, class PutWord>
__device__ __forceinline__ void store_chunks(const float (&in)[N], PutWord put) {
  using C = Chunks<T, N>;
#pragma unroll
  for (int chunk = 0; chunk < C::kCount; ++chunk) {
    const float* f = in + chunk * C::kPerChunk;
    typename C::Word w;
    if constexpr (C::kBytes >= 4) {
      unsigned int parts[C::kBytes / 4];
#pragma unroll
      for (int j = 0; j < C::kBytes / 4; ++j) {
        if constexpr (sizeof(T) == 4) {
          parts[j] = bits32(from_float<T>(f[j]));
        } else {
          parts[j] = bits32(C::Convert::from_floats(f[2 * j], f[2 * j + 1]));
        }
      }
      w = word_of(parts);
    } else {
      const T e = from_float<T>(f[0]);  // one 2-byte element
      memcpy(&w, &e, sizeof(w));
    }
    put(chunk, w);
  }
}

}  // namespace element_detail

// Stores N floats to `p` as N adjacent elements of T, each rounded once;
// the alignment is load's. Where p is a row plus an element offset the
// compiler may not see that alignment and split a word into scalar stores:
// store_vector keeps it whole.
template <class T, int N, CacheHint H = CacheHint::kNormal>
__device__ __forceinline__ void store(T* p, const float (&in)[N]) {
  using C = Chunks<T, N>;
  element_detail::store_chunks<T>(in, [p](int chunk, const typename C::Word& w) {
    element_detail::store_word<H>(reinterpret_cast<typename C::Word*>(p + chunk * C::kPerChunk), w);
  });
}

// The same at `base + N * index`, indexed in whole words from `base` (which
// must be aligned as p is): the compiler then keeps each word's store whole
// (one 16-byte store for 4 floats or 8 2-byte elements).
template <class T, int N, CacheHint H = CacheHint::kNormal>
__device__ __forceinline__ void store_vector(T* base, int index, const float (&in)[N]) {
  using C = Chunks<T, N>;
  element_detail::store_chunks<T>(in, [base, index](int chunk, const typename C::Word& w) {
    element_detail::store_word<H>(reinterpret_cast<typename C::Word*>(base) + (index * C::kCount + chunk), w);
  });
}

// One element, loaded as a float / stored from one.
template <class T, CacheHint H = CacheHint::kNormal>
__device__ __forceinline__ float load_one(const T* p) {
  float v[1];
  load<T, 1, H>(p, v);
  return v[0];
}
template <class T, CacheHint H = CacheHint::kNormal>
__device__ __forceinline__ void store_one(T* p, float value) {
  const float v[1] = {value};
  store<T, 1, H>(p, v);
}
// Activation A, one that clamps_after_half_rounding (relu, relu6), on
// outputs rounded to T two at a time: `store_two` rounds two floats as a
// pair, clamps the pair and stores its elements at p0 and p1, each only
// where its flag says (predicated stores: a branch around the whole would
// cost more than the conversion it skips). The same values as
// store_one(p, activate(A, value)) for each (a zero's sign aside), in fewer
// instructions where T is a half type: one conversion for the two and one
// min or max a bound (HMNMX2), against one conversion and one FMNMX a bound
// for each output. A kernel makes one before its loops: the bounds (those
// of `activate`) are converted to pairs of T once (bfloat16's conversion is
// an asm statement, which the compiler neither folds nor hoists).
template <class T, Activation A>
struct PairClamp {
  static_assert(clamps_after_half_rounding(A), "only a clamp to bounds exact in T commutes with the rounding");
  using C = Convert<T>;
  typename C::Pair low, high;
  __device__ __forceinline__ PairClamp() : low(C::from_floats(0.0f, 0.0f)), high(C::from_floats(6.0f, 6.0f)) {}
  template <CacheHint H = CacheHint::kNormal>
  __device__ __forceinline__ void store_two(T* p0, T* p1, float value0, float value1, bool store0 = true,
                                            bool store1 = true) const {
    typename C::Pair v = C::max_pair(C::from_floats(value0, value1), low);
    if constexpr (A == Activation::kRelu6) v = C::min_pair(v, high);
    using Word = typename element_detail::Word<sizeof(T)>::type;
    Word w[2];
    memcpy(w, &v, sizeof(w));
    if (store0) element_detail::store_word<H>(reinterpret_cast<Word*>(p0), w[0]);
    if (store1) element_detail::store_word<H>(reinterpret_cast<Word*>(p1), w[1]);
  }
};

}  // namespace convgen
