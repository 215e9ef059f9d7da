// convgen/shared_copy.h: how the kernels stage global memory into shared
// memory, on every GPU convgen builds for.
//
// From sm_80 (Ampere) on, a copy is a cp.async: it bypasses the registers and
// lands while the block computes, and commit_copies()/wait_copies<N>() fence
// groups of them. Below sm_80 there is no cp.async: a copy is a load and a
// store that is complete when issued, so committing and waiting have nothing
// left to do. Either way the kernel's __syncthreads() after wait_copies()
// makes the copies visible to the whole block, and a kernel whose copies are
// correct when they land late is correct when they land at once.
//
// CONVGEN_SYNC_SHARED_COPIES (a test switch) takes the synchronous path on
// any GPU: the code path of a T4 can then be checked on the GPU at hand.
//
// Every copy takes a shared-memory address (shared_address()) or a pointer
// into shared memory, and a global pointer. The zero-filling forms copy `valid ? *src : 0`; src is not read
// when !valid, so it may then point anywhere (kernels pass a safe pointer
// anyway, which cp.async needs). A copy moves bytes, whatever the elements
// they hold (4 bytes: one float or two 2-byte elements; 8 bytes: four 2-byte
// elements); a 2-byte copy (one 2-byte element) has no cp.async form and is a
// load and a store on every GPU.
//
// NVRTC-safe: no includes.
#pragma once

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800 && !defined(CONVGEN_SYNC_SHARED_COPIES)
#define CONVGEN_ASYNC_SHARED_COPIES 1
#endif

namespace convgen {

#ifdef __CUDACC__

// The shared-memory address of a pointer into shared memory.
__device__ __forceinline__ unsigned shared_address(const void* shared) {
  return static_cast<unsigned>(__cvta_generic_to_shared(shared));
}

// An L2 policy for data read once: evict it first. Without cp.async the
// synchronous copies take no hint, and the policy is unused.
__device__ __forceinline__ unsigned long long l2_evict_first_policy() {
#ifdef CONVGEN_ASYNC_SHARED_COPIES
  unsigned long long policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy));
  return policy;
#else
  return 0;
#endif
}

#ifndef CONVGEN_ASYNC_SHARED_COPIES
namespace detail {
__device__ __forceinline__ void store_shared(unsigned dst, float v) {
  asm volatile("st.shared.f32 [%0], %1;\n" ::"r"(dst), "f"(v) : "memory");
}
__device__ __forceinline__ void store_shared(unsigned dst, float2 v) {
  asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(dst), "f"(v.x), "f"(v.y) : "memory");
}
__device__ __forceinline__ void store_shared(unsigned dst, float4 v) {
  asm volatile("st.shared.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"r"(dst), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w)
               : "memory");
}
}  // namespace detail
#endif

// 4 bytes; zero when !valid.
__device__ __forceinline__ void copy_to_shared_4(unsigned dst, const void* src, bool valid) {
#ifdef CONVGEN_ASYNC_SHARED_COPIES
  // src-size 0 writes zeros: padding and ragged edges cost no branch.
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 4 : 0));
#else
  detail::store_shared(dst, valid ? *static_cast<const float*>(src) : 0.0f);
#endif
}

// 4 bytes, always read.
__device__ __forceinline__ void copy_to_shared_4(unsigned dst, const void* src) {
#ifdef CONVGEN_ASYNC_SHARED_COPIES
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(dst), "l"(src));
#else
  detail::store_shared(dst, *static_cast<const float*>(src));
#endif
}

// 4 bytes with an L2 policy (l2_evict_first_policy()); zero when !valid.
__device__ __forceinline__ void copy_to_shared_4(unsigned dst, const void* src, bool valid,
                                                 unsigned long long policy) {
#ifdef CONVGEN_ASYNC_SHARED_COPIES
  asm volatile("cp.async.ca.shared.global.L2::cache_hint [%0], [%1], 4, %2, %3;\n"
               ::"r"(dst), "l"(src), "r"(valid ? 4 : 0), "l"(policy));
#else
  (void)policy;
  detail::store_shared(dst, valid ? *static_cast<const float*>(src) : 0.0f);
#endif
}

// 8 bytes, 8-byte aligned at both ends; zeros when !valid.
__device__ __forceinline__ void copy_to_shared_8(unsigned dst, const void* src, bool valid) {
#ifdef CONVGEN_ASYNC_SHARED_COPIES
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 8 : 0));
#else
  detail::store_shared(dst, valid ? *static_cast<const float2*>(src) : make_float2(0.0f, 0.0f));
#endif
}

// 8 bytes with an L2 policy; zeros when !valid.
__device__ __forceinline__ void copy_to_shared_8(unsigned dst, const void* src, bool valid,
                                                 unsigned long long policy) {
#ifdef CONVGEN_ASYNC_SHARED_COPIES
  asm volatile("cp.async.ca.shared.global.L2::cache_hint [%0], [%1], 8, %2, %3;\n"
               ::"r"(dst), "l"(src), "r"(valid ? 8 : 0), "l"(policy));
#else
  (void)policy;
  copy_to_shared_8(dst, src, valid);
#endif
}

// 16 bytes, 16-byte aligned at both ends, bypassing L1; zeros when !valid.
__device__ __forceinline__ void copy_to_shared_16(unsigned dst, const void* src, bool valid) {
#ifdef CONVGEN_ASYNC_SHARED_COPIES
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0));
#else
  detail::store_shared(dst, valid ? *static_cast<const float4*>(src) : make_float4(0.0f, 0.0f, 0.0f, 0.0f));
#endif
}

// 16 bytes with an L2 policy; zeros when !valid.
__device__ __forceinline__ void copy_to_shared_16(unsigned dst, const void* src, bool valid,
                                                  unsigned long long policy) {
#ifdef CONVGEN_ASYNC_SHARED_COPIES
  asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2, %3;\n"
               ::"r"(dst), "l"(src), "r"(valid ? 16 : 0), "l"(policy));
#else
  (void)policy;
  copy_to_shared_16(dst, src, valid);
#endif
}

// 2 bytes; zero when !valid. Without a cp.async of this size, a load and a
// store on every GPU: complete when issued, like the synchronous copies
// above. Unlike the other copies it reads src even when !valid (so src must
// point into the tensor): the load is then no branch, and not a memory
// barrier either, which leaves the compiler free to issue the loads of a run
// of copies together.
__device__ __forceinline__ void copy_to_shared_2(unsigned dst, const void* src, bool valid) {
  const unsigned short loaded = *static_cast<const unsigned short*>(src);
  const unsigned short v = valid ? loaded : static_cast<unsigned short>(0);
  asm volatile("st.shared.u16 [%0], %1;\n" ::"r"(dst), "h"(v));
}

// 2 bytes read once: an evict-first load (the policy's intent, without cp.async).
__device__ __forceinline__ void copy_to_shared_2(unsigned dst, const void* src, bool valid,
                                                 unsigned long long policy) {
  (void)policy;
  const unsigned short loaded = __ldcs(static_cast<const unsigned short*>(src));
  const unsigned short v = valid ? loaded : static_cast<unsigned short>(0);
  asm volatile("st.shared.u16 [%0], %1;\n" ::"r"(dst), "h"(v));
}

// A float computed on the way (e.g. converted from a 2-byte element, which
// a copy cannot do), stored at a shared-memory address: complete when issued.
// Not a memory barrier, as copy_to_shared_2.
__device__ __forceinline__ void store_to_shared(unsigned dst, float v) {
  asm volatile("st.shared.f32 [%0], %1;\n" ::"r"(dst), "f"(v));
}

// The same copies to a pointer into shared memory.
__device__ __forceinline__ void copy_to_shared_4(float* dst, const float* src, bool valid) {
  copy_to_shared_4(shared_address(dst), src, valid);
}
__device__ __forceinline__ void copy_to_shared_16(float* dst, const float* src, bool valid) {
  copy_to_shared_16(shared_address(dst), src, valid);
}

// Closes the group of copies issued since the last commit.
__device__ __forceinline__ void commit_copies() {
#ifdef CONVGEN_ASYNC_SHARED_COPIES
  asm volatile("cp.async.commit_group;\n" ::);
#endif
}

// Waits until at most kPending committed groups are still in flight.
template <int kPending>
__device__ __forceinline__ void wait_copies() {
#ifdef CONVGEN_ASYNC_SHARED_COPIES
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
#endif
}

// wait_copies<kPending>() where the count is known only once a loop is
// unrolled (a group's index): the switch folds to one wait. More than 7
// pending groups waits for all of them, which is always correct.
__device__ __forceinline__ void wait_copies_at_most(int pending) {
  switch (pending) {
    case 1: wait_copies<1>(); break;
    case 2: wait_copies<2>(); break;
    case 3: wait_copies<3>(); break;
    case 4: wait_copies<4>(); break;
    case 5: wait_copies<5>(); break;
    case 6: wait_copies<6>(); break;
    case 7: wait_copies<7>(); break;
    default: wait_copies<0>(); break;
  }
}

#endif  // __CUDACC__

}  // namespace convgen
