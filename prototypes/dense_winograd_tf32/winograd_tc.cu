// winograd_tc.cu — winograd.cu with the 16 GEMMs on the tensor cores in 3xTF32
// (fp32-accurate: x = big + small, a*b ~= a_s*b_b + a_b*b_s + a_b*b_b, mma.sync m16n8k8).
// kWarps warps; warp w owns elements e = w*kEPW .. +kEPW-1, each a full BM x BN tile of
// 16x8 mma tiles. Shared rows padded by 8 floats (fragment reads conflict-free). The
// output transform stages all 16 x BM x BN accumulators at once (no chunks).
// (winograd.cu header follows)
// winograd.cu — prototype of convgen's fused Winograd F(2x2,3x3) conv2d kernel, fp32, NCHW.
//
// 3x3, stride 1, dilation 1, any padding. Output is cut into 2x2 tiles; tile t of the
// whole batch (t = n*TH*TW + ty*TW + tx) reads the 4x4 input patch at (2ty-pt, 2tx-pl).
//   U[e][k][m] = (G g[m][k] G^T)[e]         (pre-pass kernel, into a static buffer)
//   V[e][k][t] = (B^T d[k][t] B)[e]         (fused: registers -> shared memory)
//   M[e][m][t] = sum_k U[e][k][m] V[e][k][t]   (16 GEMMs, register-tiled)
//   Y[m][t]    = A^T M[.][m][t] A           (2x2 outputs, epilogue, store)
// Block: BM output channels x BN tiles, all 16 transform elements; K in steps of BK
// channels, double-buffered (U by cp.async, V by registers prefetched one step ahead).
// 16 * (BM/4VM) * (BN/4VN) threads; each owns VM x VN 4x4 groups of one element e.
// The output transform goes through shared memory (the 16 elements of an (m, t) pair
// live in 16 threads), VM chunks of BM/VM rows.
#include <cuda_runtime.h>

#define CG_PASTE2(a, b) a##b
#define CG_PASTE(a, b) CG_PASTE2(a, b)
#define CG_KERNEL CG_PASTE(CG_NAME, _kernel)
#define CG_FKERNEL CG_PASTE(CG_NAME, _filter_kernel)
#define CG_LAUNCH CG_PASTE(launch_, CG_NAME)

namespace {

// ---- Problem constants -------------------------------------------------------
constexpr int kChannels = CG_C;
constexpr int kOutChannels = CG_C_OUT;
constexpr int kInH = CG_H, kInW = CG_W;
constexpr int kPadTop = CG_PT, kPadBottom = CG_PB, kPadLeft = CG_PL, kPadRight = CG_PR;
constexpr int kOutH = kInH + kPadTop + kPadBottom - 2;
constexpr int kOutW = kInW + kPadLeft + kPadRight - 2;
constexpr int kEpilogue = CG_EPI;
constexpr bool kResidual = CG_RES != 0;
constexpr int kActivation = CG_ACT;

// ---- Schedule constants ------------------------------------------------------
constexpr int kBM = CG_BM;  // output channels per block
constexpr int kBN = CG_BN;  // 2x2 tiles per block
constexpr int kBK = CG_BK;  // input channels per stage
constexpr int kWarps = CG_WARPS;  // 8 or 16: 2 or 1 transform elements per warp
constexpr int kVM = 1;

// ---- Derived -----------------------------------------------------------------
constexpr int kTilesH = (kOutH + 1) / 2, kTilesW = (kOutW + 1) / 2;
constexpr int kTilesPerImage = kTilesH * kTilesW;
constexpr int kInPlane = kInH * kInW;
constexpr int kThreads = 32 * kWarps;
constexpr int kEPW = 16 / kWarps;               // elements per warp
constexpr int kMT = kBM / 16, kNT = kBN / 8;    // mma tiles per element
constexpr int kUPitch = kBM + 8, kVPitch = kBN + 8;
static_assert(kWarps * kEPW == 16 && kBM % 16 == 0 && kBN % 8 == 0 && kBK % 8 == 0, "mma tiling");
constexpr int kMBlocks = (kOutChannels + kBM - 1) / kBM;
constexpr int kMPad = kMBlocks * kBM;
constexpr int kKSteps = (kChannels + kBK - 1) / kBK;
constexpr int kKPad = kKSteps * kBK;
// Input patches per thread per stage; with fewer patches than threads, threads
// tid >= kBN*kBK load none.
constexpr int kLoadPasses = kBN * kBK >= kThreads ? kBN * kBK / kThreads : 1;
constexpr int kLoaders = kBN * kBK >= kThreads ? kThreads : kBN * kBK;
constexpr int kKPerPass = kLoaders / kBN;
constexpr int kUChunks = 16 * kBK * kBM / 4;             // 16-byte copies of U per stage
constexpr int kUPasses = kUChunks / kThreads;
constexpr int kStageFloats = 16 * kBK * (kUPitch + kVPitch);
constexpr int kChunkRows = kBM / kVM;
constexpr int kOutFloats = 16 * kChunkRows * kBN;
constexpr int kSmemFloats = 2 * kStageFloats > kOutFloats ? 2 * kStageFloats : kOutFloats;
constexpr int kSmemBytes = kSmemFloats * 4;
constexpr int kPairs = kChunkRows * kBN / kThreads;      // output (m, t) pairs per thread per chunk
constexpr int kMinBlocks = CG_MIN_BLOCKS;

static_assert(kLoaders % kBN == 0 && (kBN * kBK) % kLoaders == 0, "input loader: whole passes");
static_assert(kUChunks % kThreads == 0, "U loader: whole passes");
static_assert((kChunkRows * kBN) % kThreads == 0, "output: whole passes");
static_assert(kThreads <= 1024, "too many threads");
static_assert(kSmemBytes <= 227 * 1024, "shared memory");

__device__ __align__(16) float g_u[16 * kKPad * kMPad];  // transformed filter, [e][k][m], zero-padded

__device__ __forceinline__ void cp_async16(float* smem, const float* gmem) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_group 0;\n" ::); }

__device__ __forceinline__ void split_tf32(float v, unsigned& big, unsigned& small) {
  big = (__float_as_uint(v) + 0x1000u) & 0xffffe000u;  // v rounded to tf32
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

// U = G g G^T, G = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1]. A block of 256 threads takes
// 8 output channels x 32 input channels: it reads them k-fastest (each warp one
// contiguous 32*9-float run of OIHW), transposes through shared memory, and writes
// U[e][k][m] in 32-byte runs of 8 m.
constexpr int kFM = 8, kFK = 32;
static_assert(kMPad % kFM == 0, "filter pre-pass: 8 output channels per block");
__global__ void __launch_bounds__(256) CG_FKERNEL(const float* __restrict__ filter) {
  __shared__ float us[16][kFK][kFM + 1];
  const int k0 = blockIdx.x * kFK, m0 = blockIdx.y * kFM;
  {
    const int k = k0 + threadIdx.x % kFK, m = m0 + threadIdx.x / kFK;
    float u[16];
    if (m < kOutChannels && k < kChannels) {
      const float* g = filter + (static_cast<long long>(m) * kChannels + k) * 9;
      float t[4][3];
#pragma unroll
      for (int j = 0; j < 3; ++j) {
        const float g0 = __ldg(g + j), g1 = __ldg(g + 3 + j), g2 = __ldg(g + 6 + j);
        t[0][j] = g0;
        t[1][j] = 0.5f * (g0 + g1 + g2);
        t[2][j] = 0.5f * (g0 - g1 + g2);
        t[3][j] = g2;
      }
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        u[i * 4 + 0] = t[i][0];
        u[i * 4 + 1] = 0.5f * (t[i][0] + t[i][1] + t[i][2]);
        u[i * 4 + 2] = 0.5f * (t[i][0] - t[i][1] + t[i][2]);
        u[i * 4 + 3] = t[i][2];
      }
    } else {
#pragma unroll
      for (int e = 0; e < 16; ++e) u[e] = 0.0f;
    }
#pragma unroll
    for (int e = 0; e < 16; ++e) us[e][threadIdx.x % kFK][threadIdx.x / kFK] = u[e];
  }
  __syncthreads();
  const int ml = threadIdx.x % kFM, kl = threadIdx.x / kFM;
  if (k0 + kl < kKPad) {
#pragma unroll
    for (int e = 0; e < 16; ++e)
      g_u[(static_cast<long long>(e) * kKPad + k0 + kl) * kMPad + m0 + ml] = us[e][kl][ml];
  }
}

__global__ void __launch_bounds__(kThreads, kMinBlocks)
CG_KERNEL(const float* __restrict__ input, const float* __restrict__ epilogue_a,
          const float* __restrict__ epilogue_b, const float* __restrict__ residual,
          float* __restrict__ output, int batch) {
  extern __shared__ __align__(16) float smem[];
  const int tid = threadIdx.x;
  const int mb = blockIdx.x % kMBlocks;
  const int m0 = mb * kBM;
  const long long t0 = static_cast<long long>(blockIdx.x / kMBlocks) * kBN;
  const long long num_tiles = static_cast<long long>(batch) * kTilesPerImage;

  // ---- this thread's input patch: fixed tile, kLoadPasses channels per stage ----
  const int ld_n = tid % kBN;
  const int ld_k = tid / kBN;
  unsigned mask = 0;  // bit 4i+j: patch element (i, j) inside the image
  long long in_off = 0;
  {
    const long long t = t0 + ld_n;
    if (t < num_tiles) {
      const long long img = t / kTilesPerImage;
      const int r = static_cast<int>(t - img * kTilesPerImage);
      const int iy0 = (r / kTilesW) * 2 - kPadTop, ix0 = (r % kTilesW) * 2 - kPadLeft;
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
          if (iy0 + i >= 0 && iy0 + i < kInH && ix0 + j >= 0 && ix0 + j < kInW) mask |= 1u << (4 * i + j);
      in_off = img * kChannels * kInPlane + static_cast<long long>(iy0) * kInW + ix0;
    }
  }
  float d[kLoadPasses][16];
  const bool loader = kLoaders == kThreads || tid < kLoaders;
  auto load_patch = [&](int step) {
    if (!loader) return;
#pragma unroll
    for (int q = 0; q < kLoadPasses; ++q) {
      const int k = step * kBK + ld_k + q * kKPerPass;
      const bool kval = kChannels % kBK == 0 || k < kChannels;
      const float* src = input + (in_off + static_cast<long long>(k) * kInPlane);
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
          d[q][4 * i + j] = (kval && (mask >> (4 * i + j)) & 1u) ? __ldg(src + i * kInW + j) : 0.0f;
    }
  };
  // V = B^T d B, B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]
  auto store_patch = [&](int buf) {
    if (!loader) return;
    float* vs = smem + buf * kStageFloats + 16 * kBK * kUPitch;
#pragma unroll
    for (int q = 0; q < kLoadPasses; ++q) {
      float t[16];
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        t[0 * 4 + j] = d[q][0 * 4 + j] - d[q][2 * 4 + j];
        t[1 * 4 + j] = d[q][1 * 4 + j] + d[q][2 * 4 + j];
        t[2 * 4 + j] = d[q][2 * 4 + j] - d[q][1 * 4 + j];
        t[3 * 4 + j] = d[q][1 * 4 + j] - d[q][3 * 4 + j];
      }
      const int k = ld_k + q * kKPerPass;
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const float v0 = t[i * 4 + 0] - t[i * 4 + 2];
        const float v1 = t[i * 4 + 1] + t[i * 4 + 2];
        const float v2 = t[i * 4 + 2] - t[i * 4 + 1];
        const float v3 = t[i * 4 + 1] - t[i * 4 + 3];
        vs[((i * 4 + 0) * kBK + k) * kVPitch + ld_n] = v0;
        vs[((i * 4 + 1) * kBK + k) * kVPitch + ld_n] = v1;
        vs[((i * 4 + 2) * kBK + k) * kVPitch + ld_n] = v2;
        vs[((i * 4 + 3) * kBK + k) * kVPitch + ld_n] = v3;
      }
    }
  };
  auto load_u = [&](int step, int buf) {
    float* us = smem + buf * kStageFloats;
#pragma unroll
    for (int q = 0; q < kUPasses; ++q) {
      const int c = tid + q * kThreads;  // chunk: [e][k][m/4]
      const int m4 = c % (kBM / 4), k = (c / (kBM / 4)) % kBK, e = c / (kBM / 4 * kBK);
      cp_async16(us + (e * kBK + k) * kUPitch + m4 * 4,
                 g_u + (static_cast<long long>(e) * kKPad + step * kBK + k) * kMPad + m0 + m4 * 4);
    }
    cp_async_commit();
  };

  // ---- GEMM role ----
  const int warp = tid / 32, lane = tid % 32;
  const int g = lane / 4, t = lane % 4;
  float acc[kEPW][kMT][kNT][4];
#pragma unroll
  for (int q = 0; q < kEPW; ++q)
#pragma unroll
    for (int i = 0; i < kMT; ++i)
#pragma unroll
      for (int j = 0; j < kNT; ++j)
#pragma unroll
        for (int r = 0; r < 4; ++r) acc[q][i][j][r] = 0.0f;

  load_u(0, 0);
  load_patch(0);
  store_patch(0);
  cp_async_wait_all();
  __syncthreads();
#pragma unroll 1
  for (int step = 0; step < kKSteps; ++step) {
    const int buf = step & 1;
    const bool more = step + 1 < kKSteps;
    if (more) {
      load_u(step + 1, buf ^ 1);
      load_patch(step + 1);
    }
#pragma unroll
    for (int q = 0; q < kEPW; ++q) {
      const int e = warp * kEPW + q;
      const float* us = smem + buf * kStageFloats + e * kBK * kUPitch;
      const float* vs = smem + buf * kStageFloats + 16 * kBK * kUPitch + e * kBK * kVPitch;
#pragma unroll
      for (int kk = 0; kk < kBK; kk += 8) {
        unsigned ab[kMT][4], as[kMT][4], bb[kNT][2], bs[kNT][2];
#pragma unroll
        for (int i = 0; i < kMT; ++i)
#pragma unroll
          for (int r = 0; r < 4; ++r)
            split_tf32(us[(kk + t + (r >> 1) * 4) * kUPitch + i * 16 + g + (r & 1) * 8], ab[i][r], as[i][r]);
#pragma unroll
        for (int j = 0; j < kNT; ++j)
#pragma unroll
          for (int r = 0; r < 2; ++r) split_tf32(vs[(kk + t + r * 4) * kVPitch + j * 8 + g], bb[j][r], bs[j][r]);
#pragma unroll
        for (int i = 0; i < kMT; ++i)
#pragma unroll
          for (int j = 0; j < kNT; ++j) {
            mma_tf32(acc[q][i][j], as[i], bb[j]);
            mma_tf32(acc[q][i][j], ab[i], bs[j]);
            mma_tf32(acc[q][i][j], ab[i], bb[j]);
          }
      }
    }
    if (more) {
      store_patch(buf ^ 1);
      cp_async_wait_all();
    }
    __syncthreads();
  }

  // ---- output transform: chunks of kChunkRows rows through shared memory ----
  // A^T = [1 1 1 0; 0 1 -1 -1]
#pragma unroll
  for (int gm = 0; gm < kVM; ++gm) {
#pragma unroll
    for (int q = 0; q < kEPW; ++q)
#pragma unroll
      for (int i = 0; i < kMT; ++i)
#pragma unroll
        for (int j = 0; j < kNT; ++j) {
          float* d = smem + ((warp * kEPW + q) * kChunkRows + i * 16 + g) * kBN + j * 8 + 2 * t;
          *reinterpret_cast<float2*>(d) = make_float2(acc[q][i][j][0], acc[q][i][j][1]);
          *reinterpret_cast<float2*>(d + 8 * kBN) = make_float2(acc[q][i][j][2], acc[q][i][j][3]);
        }
    __syncthreads();
#pragma unroll
    for (int q = 0; q < kPairs; ++q) {
      const int p = tid + q * kThreads;
      const int n = p % kBN, ml = p / kBN;
      const int m = m0 + gm * kChunkRows + ml;
      const long long t = t0 + n;
      if ((kOutChannels % kBM == 0 || m < kOutChannels) && t < num_tiles) {
        float mv[16];
#pragma unroll
        for (int e = 0; e < 16; ++e) mv[e] = smem[(e * kChunkRows + ml) * kBN + n];
        float r0[4], r1[4];
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          r0[j] = mv[0 * 4 + j] + mv[1 * 4 + j] + mv[2 * 4 + j];
          r1[j] = mv[1 * 4 + j] - mv[2 * 4 + j] - mv[3 * 4 + j];
        }
        float y[2][2];
        y[0][0] = r0[0] + r0[1] + r0[2];
        y[0][1] = r0[1] - r0[2] - r0[3];
        y[1][0] = r1[0] + r1[1] + r1[2];
        y[1][1] = r1[1] - r1[2] - r1[3];
        const long long img = t / kTilesPerImage;
        const int r = static_cast<int>(t - img * kTilesPerImage);
        const int oy = (r / kTilesW) * 2, ox = (r % kTilesW) * 2;
        const float ea = kEpilogue != 0 ? __ldg(epilogue_a + m) : 0.0f;
        const float eb = kEpilogue == 2 ? __ldg(epilogue_b + m) : 0.0f;
        const long long base = ((img * kOutChannels + m) * kOutH + oy) * kOutW + ox;
#pragma unroll
        for (int a = 0; a < 2; ++a) {
          if (kOutH % 2 != 0 && oy + a >= kOutH) continue;
          const long long off = base + a * kOutW;
          if (kOutW % 2 == 0) {
            float2 rr = make_float2(0.f, 0.f);
            if (kResidual) rr = __ldg(reinterpret_cast<const float2*>(residual + off));
            *reinterpret_cast<float2*>(output + off) =
                make_float2(epilogue(y[a][0], ea, eb, rr.x), epilogue(y[a][1], ea, eb, rr.y));
          } else {
            output[off] = epilogue(y[a][0], ea, eb, kResidual ? __ldg(residual + off) : 0.0f);
            if (ox + 1 < kOutW)
              output[off + 1] = epilogue(y[a][1], ea, eb, kResidual ? __ldg(residual + off + 1) : 0.0f);
          }
        }
      }
    }
    if (gm + 1 < kVM) __syncthreads();
  }
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
#ifdef CG_FILTER_ONCE
  // Weights treated as constant (transformed once, at the first call): the time of
  // the main kernel alone, as with weights pre-transformed when the model is loaded.
  static bool transformed = false;
  if (!transformed) {
    CG_FKERNEL<<<dim3((kKPad + kFK - 1) / kFK, kMPad / kFM), 256, 0, stream>>>(filter);
    transformed = true;
  }
#else
  CG_FKERNEL<<<dim3((kKPad + kFK - 1) / kFK, kMPad / kFM), 256, 0, stream>>>(filter);
#endif
  const long long tile_blocks = (static_cast<long long>(batch) * kTilesPerImage + kBN - 1) / kBN;
  CG_KERNEL<<<static_cast<unsigned>(tile_blocks * kMBlocks), kThreads, kSmemBytes, stream>>>(
      input, epilogue_a, epilogue_b, residual, output, batch);
  return cudaGetLastError();
}
