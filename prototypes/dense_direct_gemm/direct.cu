// direct.cu — prototype of convgen's general dense conv2d kernel, fp32, NCHW,
// weights OIHW. Any filter 1..7, stride, padding (inline zeros), dilation.
//
// Block tile: TILE_CO output channels x TILE_H output rows x TILE_W output columns
// of one image. Threads (TX, TY, TZ) split it: a thread owns RCO channels (its tz),
// ROH adjacent rows (its ty) and VOW groups of ROW adjacent columns (its tx); the
// VOW groups are GROUP_W = ROW*TX columns apart (TVM's virtual threads along x), so
// at each read the threads of a warp touch adjacent shared-memory words.
// A warp spans columns and rows only (tx fastest, then ty): the weights it reads
// are one broadcast address, the inputs consecutive words (no bank conflicts).
//
// The reduction runs over input channels in stages of CI_STEP: the input tile with
// its halo [CI_STEP][IN_TILE_H][IN_TILE_W] and the weights [CI_STEP][KH][KW][TILE_CO]
// go through double-buffered shared memory by cp.async (zeros outside the image
// and past C / C_OUT), the next stage's copy overlapping this stage's arithmetic.
// Within a stage everything is unrolled: each input row a thread needs is read
// once into registers and used for every (output row, filter row) pair that
// touches it; the epilogue (affine, residual, activation) runs in registers
// before a single store of each output.

#include <cuda_runtime.h>

#define CG_PASTE2(a, b) a##b
#define CG_PASTE(a, b) CG_PASTE2(a, b)
#define CG_KERNEL CG_PASTE(CG_NAME, _kernel)
#define CG_LAUNCH CG_PASTE(launch_, CG_NAME)

namespace {

// ---- Problem constants -------------------------------------------------------
constexpr int kChannels = CG_C;
constexpr int kOutChannels = CG_C_OUT;
constexpr int kInH = CG_H, kInW = CG_W;
constexpr int kKH = CG_KH, kKW = CG_KW;
constexpr int kStrideH = CG_SH, kStrideW = CG_SW;
constexpr int kPadTop = CG_PT, kPadLeft = CG_PL;
constexpr int kDilationH = CG_DH, kDilationW = CG_DW;
constexpr int kOutH = CG_OH, kOutW = CG_OW;
constexpr int kEpilogue = CG_EPI;        // 0 none, 1 +bias[co], 2 *scale[co]+shift[co]
constexpr bool kResidual = CG_RES != 0;  // + residual[n,co,oy,ox] after the affine
constexpr int kActivation = CG_ACT;      // 0 none, 1 relu, 2 relu6

// ---- Schedule constants ------------------------------------------------------
constexpr int kRCO = CG_RCO;  // output channels per thread
constexpr int kTZ = CG_TZ;    // threads along output channels
constexpr int kROH = CG_ROH;  // adjacent output rows per thread
constexpr int kTY = CG_TY;    // threads along rows
constexpr int kROW = CG_ROW;  // adjacent output columns per thread and group
constexpr int kVOW = CG_VOW;  // column groups per thread (virtual threads along x)
constexpr int kTX = CG_TX;    // threads along columns
constexpr int kCIStep = CG_CI_STEP;  // input channels per shared-memory stage

// ---- Derived -----------------------------------------------------------------
constexpr int kKK = kKH * kKW;
constexpr int kTileCO = kRCO * kTZ;
constexpr int kTileH = kROH * kTY;
constexpr int kGroupW = kROW * kTX;
constexpr int kTileW = kGroupW * kVOW;
constexpr int kThreads = kTX * kTY * kTZ;
constexpr int kCOBlocks = (kOutChannels + kTileCO - 1) / kTileCO;
constexpr int kTilesY = (kOutH + kTileH - 1) / kTileH;
constexpr int kTilesX = (kOutW + kTileW - 1) / kTileW;
constexpr int kSteps = (kChannels + kCIStep - 1) / kCIStep;
constexpr int kInTileH = (kTileH - 1) * kStrideH + (kKH - 1) * kDilationH + 1;
constexpr int kInTileW = (kTileW - 1) * kStrideW + (kKW - 1) * kDilationW + 1;
constexpr int kSpanH = (kROH - 1) * kStrideH + (kKH - 1) * kDilationH + 1;  // input rows per thread
constexpr int kSpanW = (kROW - 1) * kStrideW + (kKW - 1) * kDilationW + 1;  // input columns per group
// Width of the shared-memory reads of input: 16 bytes when every group starts on a
// multiple of 4 columns of the tile, else 8 or 4.
constexpr int kVec = ((kROW * kStrideW) % 4 == 0 && (kGroupW * kStrideW) % 4 == 0) ? 4
                   : ((kROW * kStrideW) % 2 == 0 && (kGroupW * kStrideW) % 2 == 0) ? 2 : 1;
constexpr int kSpanVecs = (kSpanW + kVec - 1) / kVec;
constexpr int kLastReadEnd = ((kVOW - 1) * kGroupW + (kTX - 1) * kROW) * kStrideW + kSpanVecs * kVec;
constexpr int kInPitchRaw = ((kInTileW > kLastReadEnd ? kInTileW : kLastReadEnd) + 3) / 4 * 4;
// With fewer than 8 threads along x, one 8-lane phase of a 16-byte read spans
// several threads' rows: pick the row pitch so that the next row's words continue
// where this row's end, modulo the 32 banks (no conflicts).
constexpr int pick_pitch(int raw) {
  if (kVec != 4 || kTX >= 8) return raw;
  const int target = (kTX * kROW * kStrideW) % 32;
  for (int p = raw; p < raw + 32; p += 4)
    if ((kROH * kStrideH * p) % 32 == target) return p;
  return raw;
}
constexpr int kInPitch = pick_pitch(kInPitchRaw);
constexpr int kInStage = kCIStep * kInTileH * kInPitch;  // floats per stage
constexpr int kWStage = kCIStep * kKK * kTileCO;
constexpr int kInSpatial = kInTileH * kInTileW;  // tile positions, halo included
constexpr int kInLoads = (kInSpatial + kThreads - 1) / kThreads;  // positions per thread
constexpr int kWLoads = (kWStage + kThreads - 1) / kThreads;
constexpr int kWVec = (kRCO % 4 == 0) ? 4 : (kRCO % 2 == 0) ? 2 : 1;
constexpr bool kStoreVec = kROW % 4 == 0 && kOutW % 4 == 0;
// Registers a thread needs: accumulators, one input row, one weight vector, the
// copy addresses kept across stages, and ~56 for indices and pointers. The
// occupancy hint in __launch_bounds__ is chosen so that the compiler's register
// cap (65536 / (threads * blocks)) stays at or above it: no spills.
constexpr int kRegsWanted = kRCO * kROH * kVOW * kROW + kVOW * kSpanVecs * kVec + kRCO + 3 * kInLoads + 56;
#ifdef CG_MIN_BLOCKS
constexpr int kMinBlocksPerSM = CG_MIN_BLOCKS;
#else
constexpr int kMinBlocksPerSM = (65536 / (kThreads * kRegsWanted)) > 0 ? (65536 / (kThreads * kRegsWanted)) : 1;
#endif

static_assert(kThreads <= 1024, "too many threads");
static_assert(2 * (kInStage + kWStage) * 4 <= 48 * 1024, "static shared memory is 48 KB");

__device__ __forceinline__ void cp_async4(float* smem, const float* gmem, bool valid) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  // src-size 0 writes zeros: padding and ragged edges cost no branch.
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(gmem), "r"(valid ? 4 : 0));
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
          const float* __restrict__ residual, float* __restrict__ output) {
  __shared__ __align__(16) float in_s[2][kInStage];  // [ci][row][col], rows kInPitch apart
  __shared__ __align__(16) float w_s[2][kWStage];    // [ci][ky][kx][co]

  const int tx = threadIdx.x, ty = threadIdx.y, tz = threadIdx.z;
  const int tid = tx + kTX * (ty + kTY * tz);
  // Output-channel blocks vary fastest: the blocks that share an input tile run
  // together and find it in L2.
  const int co0 = (blockIdx.x % kCOBlocks) * kTileCO;
  const int tile = blockIdx.x / kCOBlocks;
  const int oy0 = (tile / kTilesX) * kTileH;
  const int ox0 = (tile % kTilesX) * kTileW;
  const int n = blockIdx.y;
  const int iy0 = oy0 * kStrideH - kPadTop;   // first input row / column of the tile
  const int ix0 = ox0 * kStrideW - kPadLeft;
  const float* in_image = input + static_cast<long long>(n) * kChannels * kInH * kInW;

  // Where this thread copies input from, stage after stage: positions of the
  // tile (with halo) are fixed, only the channel moves. Computed once.
  int in_src[kInLoads], in_dst[kInLoads];
  bool in_ok[kInLoads];
#pragma unroll
  for (int j = 0; j < kInLoads; ++j) {
    const int e = tid + j * kThreads;
    const int r = e / kInTileW, c = e % kInTileW;
    const int y = iy0 + r, x = ix0 + c;
    in_ok[j] = (kInSpatial % kThreads == 0 || e < kInSpatial) && y >= 0 && y < kInH && x >= 0 && x < kInW;
    in_src[j] = y * kInW + x;
    in_dst[j] = r * kInPitch + c;
  }

  auto load_stage = [&](int step, int buf) {
    const int ci0 = step * kCIStep;
    // Input tile with halo: consecutive threads take consecutive columns (coalesced).
    const float* stage_src = in_image + static_cast<long long>(ci0) * (kInH * kInW);
#pragma unroll
    for (int j = 0; j < kInLoads; ++j) {
      if (kInSpatial % kThreads != 0 && j == kInLoads - 1 && tid + j * kThreads >= kInSpatial) break;
#pragma unroll
      for (int ci = 0; ci < kCIStep; ++ci) {
        const bool valid = in_ok[j] && (kChannels % kCIStep == 0 || ci0 + ci < kChannels);
        cp_async4(&in_s[buf][ci * kInTileH * kInPitch + in_dst[j]],
                  valid ? stage_src + ci * (kInH * kInW) + in_src[j] : input, valid);
      }
    }
    // Weights: one filter's CI_STEP*KH*KW values are contiguous in OIHW, so
    // threads walk (co, ci*KK + tap) with the latter fastest (coalesced); they land
    // as [ci][tap][co]. The index math is redone each stage (the empty asm keeps
    // the compiler from hoisting it into dozens of live registers).
    int t = tid;
    asm volatile("" : "+r"(t));
    const float* stage_w = filter + (static_cast<long long>(co0) * kChannels + ci0) * kKK;
#pragma unroll
    for (int j = 0; j < kWLoads; ++j) {
      const int e = t + j * kThreads;
      if (kWStage % kThreads != 0 && j == kWLoads - 1 && e >= kWStage) break;
      const int co = e / (kCIStep * kKK);
      const int rem = e - co * (kCIStep * kKK);  // ci * KK + tap
      const bool valid = (kOutChannels % kTileCO == 0 || co0 + co < kOutChannels) &&
                         (kChannels % kCIStep == 0 || rem < (kChannels - ci0) * kKK);
      cp_async4(&w_s[buf][rem * kTileCO + co], valid ? stage_w + co * (kChannels * kKK) + rem : filter, valid);
    }
    cp_async_commit();
  };

  float acc[kRCO][kROH][kVOW][kROW];
#pragma unroll
  for (int a = 0; a < kRCO; ++a)
#pragma unroll
    for (int i = 0; i < kROH; ++i)
#pragma unroll
      for (int g = 0; g < kVOW; ++g)
#pragma unroll
        for (int j = 0; j < kROW; ++j) acc[a][i][g][j] = 0.0f;

  load_stage(0, 0);
#pragma unroll 1
  for (int step = 0; step < kSteps; ++step) {
    const int buf = step & 1;
    if (step + 1 < kSteps) {
      load_stage(step + 1, buf ^ 1);
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();

    const float* in_t = &in_s[buf][(ty * kROH * kStrideH) * kInPitch + tx * kROW * kStrideW];
    const float* w_t = &w_s[buf][tz * kRCO];
#pragma unroll
    for (int ci = 0; ci < kCIStep; ++ci) {
#pragma unroll
      for (int r = 0; r < kSpanH; ++r) {
        // Input row r of this thread's span, every column group.
        float v[kVOW][kSpanVecs * kVec];
#pragma unroll
        for (int g = 0; g < kVOW; ++g) {
          const float* src = in_t + (ci * kInTileH + r) * kInPitch + g * kGroupW * kStrideW;
#pragma unroll
          for (int q = 0; q < kSpanVecs; ++q) {
            if (kVec == 4) {
              const float4 t = *reinterpret_cast<const float4*>(src + q * 4);
              v[g][q * 4 + 0] = t.x; v[g][q * 4 + 1] = t.y; v[g][q * 4 + 2] = t.z; v[g][q * 4 + 3] = t.w;
            } else if (kVec == 2) {
              const float2 t = *reinterpret_cast<const float2*>(src + q * 2);
              v[g][q * 2 + 0] = t.x; v[g][q * 2 + 1] = t.y;
            } else {
              v[g][q] = src[q];
            }
          }
        }
        // Every (output row i, filter row ky) with i*SH + ky*DH == r uses this row.
#pragma unroll
        for (int ky = 0; ky < kKH; ++ky) {
#pragma unroll
          for (int i = 0; i < kROH; ++i) {
            if (i * kStrideH + ky * kDilationH != r) continue;  // resolved at compile time
#pragma unroll
            for (int kx = 0; kx < kKW; ++kx) {
              float w[kRCO];
              const float* ws = w_t + (ci * kKK + ky * kKW + kx) * kTileCO;
#pragma unroll
              for (int a = 0; a < kRCO; a += kWVec) {
                if (kWVec == 4) {
                  const float4 t = *reinterpret_cast<const float4*>(ws + a);
                  w[a] = t.x; w[a + 1] = t.y; w[a + 2] = t.z; w[a + 3] = t.w;
                } else if (kWVec == 2) {
                  const float2 t = *reinterpret_cast<const float2*>(ws + a);
                  w[a] = t.x; w[a + 1] = t.y;
                } else {
                  w[a] = ws[a];
                }
              }
#pragma unroll
              for (int a = 0; a < kRCO; ++a)
#pragma unroll
                for (int g = 0; g < kVOW; ++g)
#pragma unroll
                  for (int j = 0; j < kROW; ++j)
                    acc[a][i][g][j] = fmaf(v[g][j * kStrideW + kx * kDilationW], w[a], acc[a][i][g][j]);
            }
          }
        }
      }
    }
    __syncthreads();  // the buffer is refilled by the next iteration's load
  }

  // Epilogue in registers, then a single store of each output.
#pragma unroll
  for (int a = 0; a < kRCO; ++a) {
    const int co = co0 + tz * kRCO + a;
    if (kOutChannels % kTileCO != 0 && co >= kOutChannels) continue;
    const float ea = kEpilogue != 0 ? __ldg(epilogue_a + co) : 0.0f;
    const float eb = kEpilogue == 2 ? __ldg(epilogue_b + co) : 0.0f;
    const long long plane = (static_cast<long long>(n) * kOutChannels + co) * (kOutH * kOutW);
#pragma unroll
    for (int i = 0; i < kROH; ++i) {
      const int oy = oy0 + ty * kROH + i;
      if (kOutH % kTileH != 0 && oy >= kOutH) continue;
#pragma unroll
      for (int g = 0; g < kVOW; ++g) {
        const int ox = ox0 + g * kGroupW + tx * kROW;
        const long long off = plane + oy * kOutW + ox;
        if (kStoreVec) {
          // ROW % 4 == 0 and OUT_W % 4 == 0: 4 outputs are in bounds together and aligned.
#pragma unroll
          for (int j = 0; j < kROW; j += 4) {
            if (kOutW % kTileW != 0 && ox + j >= kOutW) continue;
            float4 r = make_float4(0.f, 0.f, 0.f, 0.f);
            if (kResidual) r = __ldg(reinterpret_cast<const float4*>(residual + off + j));
            float4 o;
            o.x = epilogue(acc[a][i][g][j + 0], ea, eb, r.x);
            o.y = epilogue(acc[a][i][g][j + 1], ea, eb, r.y);
            o.z = epilogue(acc[a][i][g][j + 2], ea, eb, r.z);
            o.w = epilogue(acc[a][i][g][j + 3], ea, eb, r.w);
            *reinterpret_cast<float4*>(output + off + j) = o;
          }
        } else {
#pragma unroll
          for (int j = 0; j < kROW; ++j) {
            if (kOutW % kTileW != 0 && ox + j >= kOutW) continue;
            const float r = kResidual ? __ldg(residual + off + j) : 0.0f;
            output[off + j] = epilogue(acc[a][i][g][j], ea, eb, r);
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
  const dim3 grid(kCOBlocks * kTilesY * kTilesX, batch);
  const dim3 block(kTX, kTY, kTZ);
  CG_KERNEL<<<grid, block, 0, stream>>>(input, filter, epilogue_a, epilogue_b, residual, output);
  return cudaGetLastError();
}
