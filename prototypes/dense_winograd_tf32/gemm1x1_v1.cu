// gemm1x1.cu — prototype of convgen's dense 1x1 (pointwise) conv2d kernel, fp32, NCHW.
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
constexpr int kVM = CG_VM;   // 4-row groups per thread (spaced kBM / kVM apart)
constexpr int kVN = CG_VN;   // 4-column groups per thread (spaced kBN / kVN apart)

// ---- Derived -----------------------------------------------------------------
constexpr int kThreadsN = kBN / (4 * kVN);
constexpr int kThreadsM = kBM / (4 * kVM);
constexpr int kThreads = kThreadsN * kThreadsM;
constexpr int kMBlocks = (kOutChannels + kBM - 1) / kBM;
constexpr int kKSteps = (kChannels + kBK - 1) / kBK;
// X columns can be read 4 at a time when every group of 4 pixels lies inside one
// image and is 16-byte aligned: HW % 4 == 0.
constexpr int kXVec = (kPixels % 4 == 0) ? 4 : 1;
constexpr int kXCols = kBN / kXVec;                 // loads per tile row
constexpr int kXRowsPerPass = kThreads / kXCols;    // tile rows loaded per pass
constexpr int kXPasses = (kBK + kXRowsPerPass - 1) / kXRowsPerPass;
constexpr int kWLoads = (kBM * kBK + kThreads - 1) / kThreads;
// Weights are stored transposed, [k][m]; 4 floats of padding per row put the
// 8 k-rows that one warp's loads touch on different banks.
constexpr int kAPitch = kBM + 4;
// Registers a thread needs: accumulators, two fragments, and ~64 for the copy
// addresses, indices and the epilogue. The occupancy hint in __launch_bounds__
// keeps the compiler's register cap (65536 / (threads * blocks)) at or above it.
constexpr int kRegsWanted = 16 * kVM * kVN + 8 * (kVM + kVN) + 64;
#ifdef CG_MIN_BLOCKS
constexpr int kMinBlocksPerSM = CG_MIN_BLOCKS;
#else
constexpr int kMinBlocksPerSM = (65536 / (kThreads * kRegsWanted)) > 0 ? (65536 / (kThreads * kRegsWanted)) : 1;
#endif

static_assert(kBM % (4 * kVM) == 0 && kBN % (4 * kVN) == 0, "tile must split into 4x4 groups");
static_assert(kThreads % kXCols == 0, "a thread loads X from one fixed column");
static_assert(kThreads <= 1024, "too many threads");
static_assert(2 * (kBK * kAPitch + kBK * kBN) * 4 <= 48 * 1024, "static shared memory is 48 KB");

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

__global__ void __launch_bounds__(kThreads, kMinBlocksPerSM)
CG_KERNEL(const float* __restrict__ input, const float* __restrict__ filter,
          const float* __restrict__ epilogue_a, const float* __restrict__ epilogue_b,
          const float* __restrict__ residual, float* __restrict__ output, int batch) {
  __shared__ __align__(16) float w_s[2][kBK][kAPitch];  // weights, [k][m]
  __shared__ __align__(16) float x_s[2][kBK][kBN];      // pixels,  [k][p]

  const int tid = threadIdx.x;
  // Output-channel blocks vary fastest, so the blocks that read one X tile run
  // together and all but the first find it in L2.
  const int m0 = (blockIdx.x % kMBlocks) * kBM;
  const long long p0 = static_cast<long long>(blockIdx.x / kMBlocks) * kBN;
  const long long num_pixels = static_cast<long long>(batch) * kPixels;

  // This thread's X column is the same in every stage: find its image and
  // offset once.
  const int x_col = (tid % kXCols) * kXVec;
  const int x_row = tid / kXCols;
  const long long x_p = p0 + x_col;
  const bool x_valid = x_p < num_pixels;  // HW % 4 == 0 when kXVec == 4: all 4 or none
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
      if (kXVec == 4) cp_async16(&x_s[buf][k][x_col], src, valid);
      else cp_async4(&x_s[buf][k][x_col], src, valid);
    }
    // Weights [m][k] (k contiguous in OIHW): consecutive threads take consecutive
    // k of one row, so the global reads coalesce; they land transposed.
#pragma unroll
    for (int j = 0; j < kWLoads; ++j) {
      const int i = tid + j * kThreads;
      if ((kBM * kBK) % kThreads != 0 && i >= kBM * kBK) break;
      const int k = i % kBK, m = i / kBK;
      const bool valid = (kOutChannels % kBM == 0 || m0 + m < kOutChannels) &&
                         (kChannels % kBK == 0 || k0 + k < kChannels);
      cp_async4(&w_s[buf][k][m], valid ? filter + (m0 + m) * kChannels + k0 + k : filter, valid);
    }
    cp_async_commit();
  };

  const int tn = tid % kThreadsN;  // threads of a warp differ first along N
  const int tm = tid / kThreadsN;
  float acc[kVM * 4][kVN * 4];
#pragma unroll
  for (int i = 0; i < kVM * 4; ++i)
#pragma unroll
    for (int j = 0; j < kVN * 4; ++j) acc[i][j] = 0.0f;

  load_stage(0, 0);
#pragma unroll 1
  for (int step = 0; step < kKSteps; ++step) {
    const int buf = step & 1;
    // Fetch the next stage while this one is computed.
    if (step + 1 < kKSteps) {
      load_stage(step + 1, buf ^ 1);
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kBK; ++k) {
      float a[kVM * 4], b[kVN * 4];
#pragma unroll
      for (int g = 0; g < kVM; ++g) {
        const float4 v = *reinterpret_cast<const float4*>(&w_s[buf][k][g * (kBM / kVM) + tm * 4]);
        a[g * 4 + 0] = v.x; a[g * 4 + 1] = v.y; a[g * 4 + 2] = v.z; a[g * 4 + 3] = v.w;
      }
#pragma unroll
      for (int g = 0; g < kVN; ++g) {
        const float4 v = *reinterpret_cast<const float4*>(&x_s[buf][k][g * (kBN / kVN) + tn * 4]);
        b[g * 4 + 0] = v.x; b[g * 4 + 1] = v.y; b[g * 4 + 2] = v.z; b[g * 4 + 3] = v.w;
      }
#pragma unroll
      for (int i = 0; i < kVM * 4; ++i)
#pragma unroll
        for (int j = 0; j < kVN * 4; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();  // the buffer is refilled by the next iteration's load
  }

  // Epilogue in registers, then one store per output (4-wide where HW % 4 == 0).
#pragma unroll
  for (int gn = 0; gn < kVN; ++gn) {
    const long long p = p0 + gn * (kBN / kVN) + tn * 4;
    if (kXVec == 4) {
      if (p >= num_pixels) continue;
      const long long n = p / kPixels;
      const long long base = n * kOutChannels * kPixels + (p - n * kPixels);
#pragma unroll
      for (int gm = 0; gm < kVM; ++gm) {
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const int m = m0 + gm * (kBM / kVM) + tm * 4 + i;
          if (kOutChannels % kBM != 0 && m >= kOutChannels) continue;
          const float ea = kEpilogue != 0 ? __ldg(epilogue_a + m) : 0.0f;
          const float eb = kEpilogue == 2 ? __ldg(epilogue_b + m) : 0.0f;
          const long long off = base + static_cast<long long>(m) * kPixels;
          float4 r = make_float4(0.f, 0.f, 0.f, 0.f);
          if (kResidual) r = __ldg(reinterpret_cast<const float4*>(residual + off));
          const int row = gm * 4 + i, col = gn * 4;
          float4 v;
          v.x = epilogue(acc[row][col + 0], ea, eb, r.x);
          v.y = epilogue(acc[row][col + 1], ea, eb, r.y);
          v.z = epilogue(acc[row][col + 2], ea, eb, r.z);
          v.w = epilogue(acc[row][col + 3], ea, eb, r.w);
          *reinterpret_cast<float4*>(output + off) = v;
        }
      }
    } else {
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        if (p + j >= num_pixels) continue;
        const long long n = (p + j) / kPixels;
        const long long base = n * kOutChannels * kPixels + (p + j - n * kPixels);
#pragma unroll
        for (int gm = 0; gm < kVM; ++gm) {
#pragma unroll
          for (int i = 0; i < 4; ++i) {
            const int m = m0 + gm * (kBM / kVM) + tm * 4 + i;
            if (kOutChannels % kBM != 0 && m >= kOutChannels) continue;
            const float ea = kEpilogue != 0 ? __ldg(epilogue_a + m) : 0.0f;
            const float eb = kEpilogue == 2 ? __ldg(epilogue_b + m) : 0.0f;
            const long long off = base + static_cast<long long>(m) * kPixels;
            const float r = kResidual ? __ldg(residual + off) : 0.0f;
            output[off] = epilogue(acc[gm * 4 + i][gn * 4 + j], ea, eb, r);
          }
        }
      }
    }
  }
}

// Launches the kernel for `batch` images on `stream`. Unused epilogue and
// residual pointers are ignored.
cudaError_t CG_LAUNCH(const float* input, const float* filter, const float* epilogue_a,
                      const float* epilogue_b, const float* residual, float* output, int batch,
                      cudaStream_t stream) {
  const long long pixel_blocks = (static_cast<long long>(batch) * kPixels + kBN - 1) / kBN;
  const dim3 grid(static_cast<unsigned>(pixel_blocks * kMBlocks));
  CG_KERNEL<<<grid, kThreads, 0, stream>>>(input, filter, epilogue_a, epilogue_b, residual, output, batch);
  return cudaGetLastError();
}
