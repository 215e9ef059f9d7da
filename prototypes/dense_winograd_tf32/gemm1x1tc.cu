// gemm1x1tc.cu — 1x1 conv2d as a GEMM on the tensor cores with 3xTF32 (fp32-accurate):
// each fp32 operand x = big + small (big = tf32(x), small = tf32(x - big)) and
// a*b ~= a_small*b_big + a_big*b_small + a_big*b_big, three mma.sync.m16n8k8.tf32 per
// fragment pair, fp32 accumulation; the dropped a_small*b_small is ~2^-22 relative.
// Derived from gemm1x1v2.cu (same loaders, ring, split-K cluster, staged epilogue); only
// the tile math differs: warps WM x WN, each a (BM/WM) x (BN/WN) tile of 16x8 mma tiles.
// (gemm1x1v2.cu header follows)
// gemm1x1v2.cu — second prototype of convgen's dense 1x1 (pointwise) conv2d kernel, fp32, NCHW.
// Changes from gemm1x1_v1.cu (the first 1x1 GEMM prototype, now the `gemm` algorithm): kStages-deep cp.async ring (3: one barrier per K step),
// dynamic shared memory, optional split-K over a thread-block cluster of kSplitK blocks
// (each block one K slice; partial tiles summed through distributed shared memory), and
// the epilogue applied after staging the tile in shared memory (coalesced 16-byte stores).
//
// A 1x1 convolution with stride 1 and no padding is, for each image, the GEMM
//   out[c_out][hw] = sum_c W[c_out][c] * X[c][hw]          (M = C_OUT, K = C, N = H*W)
// We flatten the batch into N: pixel p = n*HW + hw, so small images (7x7) still
// give full tiles. The column p of X starts at input + n*C*HW + hw and walks the
// channels with stride HW.
//
// Block tile BM x BN, K in steps of BK through double-buffered shared memory
// (cp.async, zero-filled outside the problem). Each thread owns VM x VN groups of
// 4x4 outputs; the groups are spaced BM/VM rows and BN/VN columns apart (TVM's
// virtual threads) so that the 16-byte shared-memory reads of a warp fall on
// consecutive addresses (no bank conflicts), and the fused epilogue is applied in
// registers before one (vector) store per 4 outputs.
//
// Every constant below comes from a -D macro in the prototype; convgen will print
// the numbers instead.

#include <cuda_runtime.h>
#include <cooperative_groups.h>

#define CG_PASTE2(a, b) a##b
#define CG_PASTE(a, b) CG_PASTE2(a, b)
#define CG_KERNEL CG_PASTE(CG_NAME, _kernel)
#define CG_LAUNCH CG_PASTE(launch_, CG_NAME)

namespace {

// ---- Problem constants -------------------------------------------------------
constexpr int kChannels = CG_C;          // input channels (GEMM K)
constexpr int kOutChannels = CG_C_OUT;   // output channels (GEMM M)
constexpr int kInH = CG_H, kInW = CG_W;
constexpr int kKH = 1, kKW = 1, kStrideH = 1, kStrideW = 1, kPadTop = 0, kPadLeft = 0;
constexpr int kDilationH = 1, kDilationW = 1;
constexpr int kOutH = kInH, kOutW = kInW;
static_assert(kKH == 1 && kKW == 1 && kStrideH == 1 && kStrideW == 1 && kPadTop == 0 &&
              kPadLeft == 0 && kDilationH == 1 && kDilationW == 1, "the GEMM path is 1x1, stride 1, no padding");
constexpr int kPixels = kOutH * kOutW;   // HW of one image
constexpr int kEpilogue = CG_EPI;        // 0 none, 1 +bias[co], 2 *scale[co]+shift[co]
constexpr bool kResidual = CG_RES != 0;  // + residual[n,co,oy,ox] after the affine
constexpr int kActivation = CG_ACT;      // 0 none, 1 relu, 2 relu6

// ---- Schedule constants ------------------------------------------------------
constexpr int kBM = CG_BM;   // output channels per block
constexpr int kBN = CG_BN;   // pixels per block
constexpr int kBK = CG_BK;   // input channels per shared-memory stage
constexpr int kWM = CG_WM;   // warps along M
constexpr int kWN = CG_WN;   // warps along N
constexpr int kSplitK = CG_SPLITK;  // blocks of a cluster sharing one output tile, each a K slice
constexpr int kStages = 3;          // cp.async ring depth (3: one barrier per K step)

// ---- Derived -----------------------------------------------------------------
constexpr int kThreads = 32 * kWM * kWN;
constexpr int kWTM = kBM / kWM, kWTN = kBN / kWN;  // warp tile
constexpr int kMT = kWTM / 16, kNT = kWTN / 8;     // mma tiles per warp
static_assert(kWTM % 16 == 0 && kWTN % 8 == 0 && kBK % 8 == 0, "mma tiling");
constexpr int kMBlocks = (kOutChannels + kBM - 1) / kBM;
constexpr int kKSteps = (kChannels + kBK - 1) / kBK;           // K steps of the whole problem
constexpr int kKStepsPerSlice = (kKSteps + kSplitK - 1) / kSplitK;  // K steps of one cluster rank
// X columns can be read 4 at a time when every group of 4 pixels lies inside one
// image and is 16-byte aligned: HW % 4 == 0.
constexpr int kXVec = (kPixels % 4 == 0) ? 4 : 1;
constexpr int kXCols = kBN / kXVec;                 // loads per tile row
constexpr int kXRowsPerPass = kThreads / kXCols;    // tile rows loaded per pass
constexpr int kXPasses = (kBK + kXRowsPerPass - 1) / kXRowsPerPass;
constexpr int kWLoads = (kBM * kBK + kThreads - 1) / kThreads;
// Weights are stored transposed, [k][m]; 4 floats of padding per row put the
// 8 k-rows that one warp's loads touch on different banks.
constexpr int kAPitch = kBM + 8;  // fragment reads (k=t, m=g): banks 8t+g, conflict-free
constexpr int kBPitch = kBN + 8;
// Registers a thread needs: accumulators, two fragments, and ~64 for the copy
// addresses, indices and the epilogue. The occupancy hint in __launch_bounds__
// keeps the compiler's register cap (65536 / (threads * blocks)) at or above it.
constexpr int kRegsWanted = 4 * kMT * kNT + 8 * kMT + 4 * kNT + 64;
#ifdef CG_MIN_BLOCKS
constexpr int kMinBlocksPerSM = CG_MIN_BLOCKS;
#else
constexpr int kMinBlocksPerSM = (65536 / (kThreads * kRegsWanted)) > 0 ? (65536 / (kThreads * kRegsWanted)) : 1;
#endif

static_assert(kThreads % kXCols == 0, "a thread loads X from one fixed column");
static_assert(kThreads <= 1024, "too many threads");
constexpr int kStageFloats = kBK * kAPitch + kBK * kBPitch;
constexpr int kRedFloats = kBM * kBN;  // the staged output tile
constexpr int kSmemBytes = 4 * (kStages * kStageFloats > kRedFloats ? kStages * kStageFloats : kRedFloats);
constexpr int kRedVec = kBM * kBN / 4;         // float4s of the tile
constexpr int kRedPerRank = kRedVec / kSplitK;  // reduced and stored by each cluster rank
static_assert(kRedPerRank * kSplitK == kRedVec, "tile splits evenly over the cluster");
static_assert(kSmemBytes <= 227 * 1024, "shared memory");
static_assert(kSplitK >= 1 && kSplitK <= 8, "portable cluster size");

__device__ __forceinline__ void cp_async4(float* smem, const float* gmem, bool valid) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  // src-size 0 writes zeros: the padding of ragged M/N/K costs no branch.
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(gmem), "r"(valid ? 4 : 0));
}
__device__ __forceinline__ void cp_async16(float* smem, const float* gmem, bool valid) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

__device__ __forceinline__ void split_tf32(float v, unsigned& big, unsigned& small) {
  // big: v rounded to tf32 (add half an ulp of the 10-bit mantissa, clear the 13 low
  // bits); small: the exact remainder, its own 13 low bits cleared (error <= 2^-21 |v|).
  // Integer ops instead of cvt.rna.tf32.f32, which sm_90 emulates with ~10 instructions.
  big = (__float_as_uint(v) + 0x1000u) & 0xffffe000u;
  small = __float_as_uint(v - __uint_as_float(big)) & 0xffffe000u;
}
__device__ __forceinline__ void mma_tf32(float* c, const unsigned* a, const unsigned* b) {
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

__device__ __forceinline__ float epilogue(float acc, float a, float b, float r) {
  float v = acc;
  if (kEpilogue == 1) v += a;
  if (kEpilogue == 2) v = fmaf(v, a, b);
  if (kResidual) v += r;
  if (kActivation == 1) v = fmaxf(v, 0.0f);
  if (kActivation == 2) v = fminf(fmaxf(v, 0.0f), 6.0f);
  return v;
}

}  // namespace

#if CG_SPLITK > 1
#define CG_CLUSTER __cluster_dims__(CG_SPLITK, 1, 1)
#else
#define CG_CLUSTER
#endif

__global__ void CG_CLUSTER __launch_bounds__(kThreads, kMinBlocksPerSM)
CG_KERNEL(const float* __restrict__ input, const float* __restrict__ filter,
          const float* __restrict__ epilogue_a, const float* __restrict__ epilogue_b,
          const float* __restrict__ residual, float* __restrict__ output, int batch) {
  extern __shared__ __align__(16) float smem[];
  // stage s: weights [k][kAPitch] then pixels [k][kBN]
  auto w_s = [&](int buf, int k) { return smem + buf * kStageFloats + k * kAPitch; };
  auto x_s = [&](int buf, int k) { return smem + buf * kStageFloats + kBK * kAPitch + k * kBPitch; };

  const int tid = threadIdx.x;
  // Cluster ranks (K slices) are consecutive blocks; then output-channel blocks, then pixels.
  const int rank = kSplitK > 1 ? static_cast<int>(blockIdx.x % kSplitK) : 0;
  const int tile = blockIdx.x / kSplitK;
  const int m0 = (tile % kMBlocks) * kBM;
  const long long p0 = static_cast<long long>(tile / kMBlocks) * kBN;
  const long long num_pixels = static_cast<long long>(batch) * kPixels;
  const int step0 = rank * kKStepsPerSlice;
  const int nsteps = (kKSteps - step0) < kKStepsPerSlice ? (kKSteps - step0) : kKStepsPerSlice;

  const int x_col = (tid % kXCols) * kXVec;
  const int x_row = tid / kXCols;
  const long long x_p = p0 + x_col;
  const bool x_valid = x_p < num_pixels;
  const float* x_src = input;
  if (x_valid) {
    const long long n = x_p / kPixels;
    x_src = input + n * kChannels * kPixels + (x_p - n * kPixels);
  }

  auto load_stage = [&](int step, int buf) {
    const int k0 = step * kBK;
#pragma unroll
    for (int q = 0; q < kXPasses; ++q) {
      const int k = x_row + q * kXRowsPerPass;
      if (kBK % kXRowsPerPass != 0 && k >= kBK) break;
      const bool valid = x_valid && (kChannels % kBK == 0 || k0 + k < kChannels);
      const float* src = valid ? x_src + static_cast<long long>(k0 + k) * kPixels : input;
      if (kXVec == 4) cp_async16(x_s(buf, k) + x_col, src, valid);
      else cp_async4(x_s(buf, k) + x_col, src, valid);
    }
#pragma unroll
    for (int j = 0; j < kWLoads; ++j) {
      const int i = tid + j * kThreads;
      if ((kBM * kBK) % kThreads != 0 && i >= kBM * kBK) break;
      const int k = i % kBK, m = i / kBK;
      const bool valid = (kOutChannels % kBM == 0 || m0 + m < kOutChannels) &&
                         (kChannels % kBK == 0 || k0 + k < kChannels);
      cp_async4(w_s(buf, k) + m, valid ? filter + (m0 + m) * kChannels + k0 + k : filter, valid);
    }
  };

  const int warp = tid / 32, lane = tid % 32;
  const int g = lane / 4, t = lane % 4;
  const int wm0 = (warp / kWN) * kWTM, wn0 = (warp % kWN) * kWTN;
  float acc[kMT][kNT][4];
#pragma unroll
  for (int i = 0; i < kMT; ++i)
#pragma unroll
    for (int j = 0; j < kNT; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.0f;

  // Ring of kStages buffers; one commit group per step (empty past the end), so
  // wait_group<kStages-2> always means "this step's stage has landed".
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < nsteps) load_stage(step0 + s, s);
    cp_async_commit();
  }
#pragma unroll 1
  for (int it = 0; it < nsteps; ++it) {
    const int buf = it % kStages;
    cp_async_wait<kStages - 2>();
    __syncthreads();  // stage `it` visible to all; stage it-1's buffer free for refill
    if (it + kStages - 1 < nsteps) load_stage(step0 + it + kStages - 1, (it + kStages - 1) % kStages);
    cp_async_commit();
#pragma unroll
    for (int kk = 0; kk < kBK; kk += 8) {
      unsigned ab[kMT][4], as[kMT][4], bb[kNT][2], bs[kNT][2];
#pragma unroll
      for (int i = 0; i < kMT; ++i)
#pragma unroll
        for (int r = 0; r < 4; ++r)
          split_tf32(w_s(buf, kk + t + (r >> 1) * 4)[wm0 + i * 16 + g + (r & 1) * 8], ab[i][r], as[i][r]);
#pragma unroll
      for (int j = 0; j < kNT; ++j)
#pragma unroll
        for (int r = 0; r < 2; ++r) split_tf32(x_s(buf, kk + t + r * 4)[wn0 + j * 8 + g], bb[j][r], bs[j][r]);
#pragma unroll
      for (int i = 0; i < kMT; ++i)
#pragma unroll
        for (int j = 0; j < kNT; ++j) {
          mma_tf32(acc[i][j], as[i], bb[j]);
          mma_tf32(acc[i][j], ab[i], bs[j]);
          mma_tf32(acc[i][j], ab[i], bb[j]);
        }
    }
  }
  cp_async_wait<0>();
  __syncthreads();  // every thread done with the ring: reuse it for the tile

  // Stage the (partial) tile [m][p] in shared memory.
#pragma unroll
  for (int i = 0; i < kMT; ++i)
#pragma unroll
    for (int j = 0; j < kNT; ++j) {
      float* d = smem + (wm0 + i * 16 + g) * kBN + wn0 + j * 8 + 2 * t;
      *reinterpret_cast<float2*>(d) = make_float2(acc[i][j][0], acc[i][j][1]);
      *reinterpret_cast<float2*>(d + 8 * kBN) = make_float2(acc[i][j][2], acc[i][j][3]);
    }
  namespace cg = cooperative_groups;
  if (kSplitK > 1) cg::this_cluster().sync();
  else __syncthreads();

  // This rank sums its share of the tile over the cluster, applies the epilogue, stores.
#pragma unroll 1
  for (int v = tid; v < kRedPerRank; v += kThreads) {
    const int idx = rank * kRedPerRank + v;
    const int ml = idx / (kBN / 4), c4 = idx % (kBN / 4);
    float4 s = *reinterpret_cast<const float4*>(smem + ml * kBN + c4 * 4);
    if (kSplitK > 1) {
      cg::cluster_group cl = cg::this_cluster();
#pragma unroll
      for (int z = 0; z < kSplitK; ++z) {
        if (z == rank) continue;
        const float4 o = *reinterpret_cast<const float4*>(cl.map_shared_rank(smem, z) + ml * kBN + c4 * 4);
        s.x += o.x; s.y += o.y; s.z += o.z; s.w += o.w;
      }
    }
    const int m = m0 + ml;
    if (kOutChannels % kBM != 0 && m >= kOutChannels) continue;
    const float ea = kEpilogue != 0 ? __ldg(epilogue_a + m) : 0.0f;
    const float eb = kEpilogue == 2 ? __ldg(epilogue_b + m) : 0.0f;
    const long long p = p0 + c4 * 4;
    if (kXVec == 4) {
      if (p >= num_pixels) continue;
      const long long n = p / kPixels;
      const long long off = (n * kOutChannels + m) * kPixels + (p - n * kPixels);
      float4 r = make_float4(0.f, 0.f, 0.f, 0.f);
      if (kResidual) r = __ldg(reinterpret_cast<const float4*>(residual + off));
      *reinterpret_cast<float4*>(output + off) =
          make_float4(epilogue(s.x, ea, eb, r.x), epilogue(s.y, ea, eb, r.y), epilogue(s.z, ea, eb, r.z),
                      epilogue(s.w, ea, eb, r.w));
    } else {
      const float sv[4] = {s.x, s.y, s.z, s.w};
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        if (p + j >= num_pixels) continue;
        const long long n = (p + j) / kPixels;
        const long long off = (n * kOutChannels + m) * kPixels + (p + j - n * kPixels);
        output[off] = epilogue(sv[j], ea, eb, kResidual ? __ldg(residual + off) : 0.0f);
      }
    }
  }
  if (kSplitK > 1) cg::this_cluster().sync();  // keep this block's tile alive for the others' reads
}

cudaError_t CG_LAUNCH(const float* input, const float* filter, const float* epilogue_a,
                      const float* epilogue_b, const float* residual, float* output, int batch,
                      cudaStream_t stream) {
  static bool configured = false;
  if (!configured) {
    const cudaError_t e = cudaFuncSetAttribute(CG_KERNEL, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
    if (e != cudaSuccess) return e;
    configured = true;
  }
  const long long pixel_blocks = (static_cast<long long>(batch) * kPixels + kBN - 1) / kBN;
  const dim3 grid(static_cast<unsigned>(pixel_blocks * kMBlocks * kSplitK));
  CG_KERNEL<<<grid, kThreads, kSmemBytes, stream>>>(input, filter, epilogue_a, epilogue_b, residual, output, batch);
  return cudaGetLastError();
}
