// dwlarge.cu — prototype depthwise conv2d kernel for large filters (5x5..11x11,
// multiplier 1..4, stride 1..2), fp32 NCHW. Every constant is a -D macro:
//   problem : C H W KH KW S PT PL (padding top/left; bottom/right follow from OH/OW) M EPI(0 none,1 bias,2 scale_shift) ACT(0,1 relu,2 relu6)
//             OH OW (output size; default = 'same' for odd K)
//   schedule: R  output rows per thread          V  adjacent output columns per thread
//             TH output rows per block (band; multiple of R)   CB channels (planes) per block (CB>1 needs TH>=OH)
//             MINB min blocks per SM for __launch_bounds__
// A block stages CB input planes (or one band of TH output rows of one plane plus the
// KH-S halo rows) in shared memory with cp.async (16-byte when W%4==0, zero-filled rows
// outside the image, zeroed pad columns), then each thread computes an R x V register tile
// of outputs for all M output channels: it slides down the (R-1)*S+KH input rows of its
// window, loading each row's (V-1)*S+KW columns once from shared memory (16-byte loads when
// V*S%4==0) and feeding them to every output row that uses that input row. Taps, bias,
// scale, shift sit in registers (loaded while the copy is in flight). One barrier per block.
#include <cuda_runtime.h>

#ifndef M
#define M 1
#endif
#ifndef S
#define S 1
#endif
#ifndef PT
#define PT (KH / 2)
#endif
#ifndef PL
#define PL (KW / 2)
#endif
#ifndef EPI
#define EPI 0
#endif
#ifndef ACT
#define ACT 0
#endif
#ifndef CB
#define CB 1
#endif
#ifndef MINB
#define MINB 0  // 0: enough blocks per SM for OCC threads
#endif
#ifndef TAPS_SMEM
#define TAPS_SMEM 0  // 1: taps staged in shared memory and read by broadcast loads (big M*KH*KW)
#endif
#ifndef PIPE
#define PIPE 1  // 1: persistent blocks, two shared buffers, the next tile's copy in flight during this tile's arithmetic
#endif
#ifndef NAME
#define NAME dwlarge
#endif

namespace {
constexpr int kC = C, kH = H, kW = W, kKH = KH, kKW = KW, kS = S, kPT = PT, kPL = PL, kM = M;
#ifdef OH
constexpr int kOH = OH;
#else
constexpr int kOH = (kH + 2 * kPT - kKH) / kS + 1;
#endif
#ifdef OW
constexpr int kOW = OW;
#else
constexpr int kOW = (kW + 2 * kPL - kKW) / kS + 1;
#endif
constexpr int kR = R, kV = V, kTH = TH, kCB = CB;
static_assert(kTH % kR == 0, "TH must be a multiple of R");
constexpr int kNB = (kOH + kTH - 1) / kTH;  // bands per plane
static_assert(kCB == 1 || kNB == 1, "several channels per block need whole planes");
static_assert(kC % kCB == 0, "CB must divide C");
constexpr int kTX = (kOW + kV - 1) / kV;  // threads across a row
constexpr int kTY = kTH / kR;             // threads down a band
constexpr int kWork = kCB * kTY * kTX;    // computing threads
constexpr int kThreads = (kWork + 31) / 32 * 32;
constexpr int kRows = (kTH - 1) * kS + kKH;  // staged input rows per plane
constexpr int kE = (kW % 4 == 0) ? 4 : 1;    // floats per cp.async
constexpr int kP = kE == 4 ? (kPL + 3) / 4 * 4 : kPL;  // shared column of input column 0
constexpr int kOff = kP - kPL;                        // shared column of window column 0 (thread 0)
constexpr int kWin = (kV - 1) * kS + kKW;             // input columns of a thread's window
constexpr bool kVecWin = (kV * kS) % 4 == 0;
constexpr int kOffA = kVecWin ? (kOff & ~3) : kOff;
constexpr int kOffR = kOff - kOffA;
constexpr int kNQ = (kOffR + kWin + 3) / 4;
constexpr int kReadCols = kVecWin ? 4 * kNQ : kWin;
constexpr int kColsNeeded0 = (kTX - 1) * kV * kS + kOffA + kReadCols;
constexpr int kColsNeeded = kColsNeeded0 > kP + kW ? kColsNeeded0 : kP + kW;
constexpr int kPitch0 = (kColsNeeded + 3) / 4 * 4;
constexpr int kPitch = (kPitch0 % 32 == 0) ? kPitch0 + 4 : kPitch0;
constexpr int kPlaneSm = kRows * kPitch;
constexpr int kSmemFloats = kCB * kPlaneSm;
constexpr int kGW = kW / kE;                       // copy groups per row
constexpr int kCopyItems = kCB * kRows * kGW;
constexpr int kCopyIters = (kCopyItems + kThreads - 1) / kThreads;
constexpr int kPadCols = kPitch - kW;
constexpr int kZeroItems = kCB * kRows * kPadCols;
constexpr int kZeroIters = (kZeroItems + kThreads - 1) / kThreads;
constexpr int kInRowsT = (kR - 1) * kS + kKH;  // input rows of a thread's window
constexpr int kTaps = kKH * kKW;
#ifndef OCC
#define OCC 384  // with MINB=0: ask for blocks enough for OCC threads per SM (384: <= 168 registers)
#endif
constexpr int kMinBlocks0 = MINB ? MINB : (OCC + kThreads - 1) / kThreads;
constexpr int kMinBlocks = kMinBlocks0 > 32 ? 32 : kMinBlocks0;
constexpr int kKWp = (PIPE && TAPS_SMEM) ? (kKW + 3) / 4 * 4 : kKW;  // tap row pitch in shared memory
constexpr int kTapFloats = (TAPS_SMEM || PIPE) ? kCB * kM * kKH * kKWp : 0;
constexpr int kEpiFloats = PIPE ? kCB * kM * (EPI == 0 ? 0 : EPI == 1 ? 1 : 2) : 0;
constexpr int kParFloats = (kTapFloats + kEpiFloats + 3) / 4 * 4;
constexpr int kBuffers = PIPE ? 2 : 1;
static_assert(kBuffers * (kSmemFloats + kParFloats) * 4 <= 48 * 1024, "shared memory over 48 KiB");
}  // namespace


#define STR2(x) #x
#define STR(x) STR2(x)
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)

namespace {
// Issues the cp.async copies of one tile (kCB planes, or one band of one plane) into sm
// and, with PIPE, the tile's taps and epilogue parameters into par.
__device__ __forceinline__ void issue_tile(const float* __restrict__ input, const float* __restrict__ filter,
                                           const float* __restrict__ epi_a, const float* __restrict__ epi_b,
                                           int tile, unsigned sm_addr, unsigned par_addr, int tid_in) {
  // Opaque copy of the thread index: keeps the compiler from hoisting every copy's offsets out of
  // the tile loop (they would stay live, in registers, across the arithmetic).
  int tid = tid_in;
  asm volatile("" : "+r"(tid));
  const int band = kNB == 1 ? 0 : tile % kNB;
  const long long plane0 = (long long)(kNB == 1 ? tile : tile / kNB) * kCB;
  const int y0 = band * kTH * kS - kPT;
  const float* in_planes = input + plane0 * (kH * kW);
#pragma unroll
  for (int k = 0; k < kCopyIters; ++k) {
    const int i = tid + k * kThreads;
    if (kCopyItems % kThreads == 0 || i < kCopyItems) {
      const int ch = i / (kRows * kGW);
      const int rem = i - ch * (kRows * kGW);
      const int r = rem / kGW;
      const int g = rem - r * kGW;
      const int y = y0 + r;
      const bool ok = y >= 0 && y < kH;
      const float* src = in_planes + ch * (kH * kW) + (ok ? y : 0) * kW + g * kE;
      const unsigned dst = sm_addr + 4u * (ch * kPlaneSm + r * kPitch + kP + g * kE);
      const int bytes = ok ? 4 * kE : 0;
      if (kE == 4)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(bytes));
      else
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(bytes));
    }
  }
#if PIPE
  const int c0 = (int)(plane0 % kC);
#pragma unroll
  for (int k = 0; k < (kTapFloats + kEpiFloats + kThreads - 1) / kThreads; ++k) {
    const int i = tid + k * kThreads;
    if (i < kTapFloats + kEpiFloats) {
      // Taps land at [ch*M+m][ky][kKWp]; the pad slots are copied from tap 0 (never used).
      const int cm = i / (kKH * kKWp), kyx = i - cm * (kKH * kKWp), ky = kyx / kKWp, kx = kyx - ky * kKWp;
      const float* src = i < kTapFloats ? filter + c0 * (kM * kTaps) + (kx < kKW ? cm * kTaps + ky * kKW + kx : 0)
                         : (EPI == 2 && i >= kTapFloats + kCB * kM) ? epi_b + c0 * kM + (i - kTapFloats - kCB * kM)
                                                                  : epi_a + c0 * kM + (i - kTapFloats);
      asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(par_addr + 4u * i), "l"(src));
    }
  }
#endif
}

// Zeros the pad columns (left of the image, right of it up to the pitch) of one buffer.
__device__ __forceinline__ void zero_pads(float* sm, int tid) {
#pragma unroll
  for (int k = 0; k < kZeroIters; ++k) {
    const int i = tid + k * kThreads;
    if (kZeroItems % kThreads == 0 || i < kZeroItems) {
      const int row = i / kPadCols;  // ch * kRows + r
      const int j = i - row * kPadCols;
      const int col = j < kP ? j : kW + j;
      sm[row * kPitch + col] = 0.0f;
    }
  }
}
}  // namespace

__global__ void __launch_bounds__(kThreads, kMinBlocks)
CAT(NAME, _kernel)(const float* __restrict__ input, const float* __restrict__ filter,
                   const float* __restrict__ epi_a, const float* __restrict__ epi_b, float* __restrict__ output,
                   int num_tiles) {
  __shared__ __align__(16) float sm_all[kBuffers][kSmemFloats];
#if PIPE || TAPS_SMEM
  __shared__ __align__(16) float par_all[kBuffers][kParFloats > 0 ? kParFloats : 4];
#endif
  const int tid = threadIdx.x;
  const int t = tid < kWork ? tid : kWork - 1;
  const int ch = t / (kTY * kTX);
  const int trem = t - ch * (kTY * kTX);
  const int ty = trem / kTX;
  const int tx = trem - ty * kTX;

#pragma unroll
  for (int b = 0; b < kBuffers; ++b) zero_pads(sm_all[b], tid);
  int tile = blockIdx.x;
#if PIPE
  issue_tile(input, filter, epi_a, epi_b, tile, (unsigned)__cvta_generic_to_shared(sm_all[0]),
             (unsigned)__cvta_generic_to_shared(par_all[0]), tid);
  asm volatile("cp.async.commit_group;\n" ::);
  for (int it = 0;; ++it) {
    const int buf = it & 1;
    const int next = tile + gridDim.x;
    if (next < num_tiles)
      issue_tile(input, filter, epi_a, epi_b, next, (unsigned)__cvta_generic_to_shared(sm_all[buf ^ 1]),
                 (unsigned)__cvta_generic_to_shared(par_all[buf ^ 1]), tid);
    asm volatile("cp.async.commit_group;\n" ::);
    asm volatile("cp.async.wait_group 1;\n" ::);
    __syncthreads();
    const float* sm = sm_all[buf];
    const float* par = par_all[buf];
#else
  {
    const float* sm = sm_all[0];
    issue_tile(input, filter, epi_a, epi_b, tile, (unsigned)__cvta_generic_to_shared(sm_all[0]), 0u, tid);
    asm volatile("cp.async.commit_group;\n" ::);
#if TAPS_SMEM
    float* par = par_all[0];
#endif
#endif
    const int band = kNB == 1 ? 0 : tile % kNB;
    const long long plane0 = (long long)(kNB == 1 ? tile : tile / kNB) * kCB;
    const long long plane = plane0 + ch;
    const int c = (int)(plane % kC);

    // Taps and epilogue parameters.
#if PIPE
#if TAPS_SMEM
    // Taps read from shared memory where they are used, a 16-byte broadcast load per 4 taps
    // (volatile: not hoisted into registers, which would spill for large M*KH*KW).
    const unsigned tap_addr = (unsigned)__cvta_generic_to_shared(par) + 4u * (ch * kM * kKH * kKWp);
#else
    float taps[kM][kTaps];
#pragma unroll
    for (int m = 0; m < kM; ++m)
#pragma unroll
      for (int i = 0; i < kTaps; ++i) taps[m][i] = par[(ch * kM + m) * kTaps + i];
#define TAP(m, i) taps[m][i]
#endif
#if EPI >= 1
    float ea[kM];
#pragma unroll
    for (int m = 0; m < kM; ++m) ea[m] = par[kTapFloats + ch * kM + m];
#endif
#if EPI == 2
    float eb[kM];
#pragma unroll
    for (int m = 0; m < kM; ++m) eb[m] = par[kTapFloats + kCB * kM + ch * kM + m];
#endif
#else
#if TAPS_SMEM
    {
      const float* fb = filter + (plane0 % kC) * (kM * kTaps);
#pragma unroll
      for (int k = 0; k < (kTapFloats + kThreads - 1) / kThreads; ++k) {
        const int i = tid + k * kThreads;
        if (kTapFloats % kThreads == 0 || i < kTapFloats) par[i] = __ldg(fb + i);
      }
    }
#define TAP(m, i) par[(ch * kM + (m)) * kTaps + (i)]
#else
    float taps[kM][kTaps];
#pragma unroll
    for (int m = 0; m < kM; ++m)
#pragma unroll
      for (int i = 0; i < kTaps; ++i) taps[m][i] = __ldg(filter + (c * kM + m) * kTaps + i);
#define TAP(m, i) taps[m][i]
#endif
#if EPI >= 1
    float ea[kM];
#pragma unroll
    for (int m = 0; m < kM; ++m) ea[m] = __ldg(epi_a + c * kM + m);
#endif
#if EPI == 2
    float eb[kM];
#pragma unroll
    for (int m = 0; m < kM; ++m) eb[m] = __ldg(epi_b + c * kM + m);
#endif
    asm volatile("cp.async.wait_group 0;\n" ::);
    __syncthreads();
#endif

    if (tid < kWork) {
      // The register tile: slide down the window's input rows.
      float acc[kM][kR][kV];
#pragma unroll
      for (int m = 0; m < kM; ++m)
#pragma unroll
        for (int r = 0; r < kR; ++r)
#pragma unroll
          for (int v = 0; v < kV; ++v) acc[m][r][v] = 0.0f;

      const float* base = sm + ch * kPlaneSm + (ty * kR * kS) * kPitch + tx * kV * kS + kOffA;
#pragma unroll
      for (int ir = 0; ir < kInRowsT; ++ir) {
        float win[kReadCols];
        const float* rp = base + ir * kPitch;
#if PIPE && TAPS_SMEM
        // Volatile, like the taps: keeps ptxas from hoisting later rows' loads (register pressure).
        const unsigned ra = (unsigned)__cvta_generic_to_shared(rp);
        if (kVecWin) {
#pragma unroll
          for (int q = 0; q < kNQ; ++q)
            asm volatile("ld.volatile.shared.v4.f32 {%0, %1, %2, %3}, [%4];\n"
                         : "=f"(win[4 * q]), "=f"(win[4 * q + 1]), "=f"(win[4 * q + 2]), "=f"(win[4 * q + 3])
                         : "r"(ra + 16u * q));
        } else {
#pragma unroll
          for (int j = 0; j < kReadCols; ++j) asm volatile("ld.volatile.shared.f32 %0, [%1];\n" : "=f"(win[j]) : "r"(ra + 4u * j));
        }
#else
        if (kVecWin) {
#pragma unroll
          for (int q = 0; q < kNQ; ++q) {
            const float4 f = reinterpret_cast<const float4*>(rp)[q];
            win[4 * q] = f.x; win[4 * q + 1] = f.y; win[4 * q + 2] = f.z; win[4 * q + 3] = f.w;
          }
        } else {
#pragma unroll
          for (int j = 0; j < kReadCols; ++j) win[j] = rp[j];
        }
#endif
#pragma unroll
        for (int r = 0; r < kR; ++r) {
          const int ky = ir - r * kS;
          if (ky < 0 || ky >= kKH) continue;
#pragma unroll
          for (int m = 0; m < kM; ++m) {
#if PIPE && TAPS_SMEM
            float trow[kKWp];
#pragma unroll
            for (int q = 0; q < kKWp / 4; ++q)
              asm volatile("ld.volatile.shared.v4.f32 {%0, %1, %2, %3}, [%4];\n"
                           : "=f"(trow[4 * q]), "=f"(trow[4 * q + 1]), "=f"(trow[4 * q + 2]), "=f"(trow[4 * q + 3])
                           : "r"(tap_addr + 4u * ((m * kKH + ky) * kKWp + 4 * q)));
#define TAPK(kx) trow[kx]
#else
#define TAPK(kx) TAP(m, ky * kKW + (kx))
#endif
#pragma unroll
            for (int kx = 0; kx < kKW; ++kx)
#pragma unroll
              for (int v = 0; v < kV; ++v)
                acc[m][r][v] = fmaf(win[(kVecWin ? kOffR : 0) + v * kS + kx], TAPK(kx), acc[m][r][v]);
#undef TAPK
          }
        }
      }

      // Epilogue and the single write of each output.
      const int oy0 = band * kTH + ty * kR;
      const int ox0 = tx * kV;
#pragma unroll
      for (int m = 0; m < kM; ++m) {
        float* out_plane = output + (plane * kM + m) * (long long)(kOH * kOW);
#pragma unroll
        for (int r = 0; r < kR; ++r) {
          const int oy = oy0 + r;
          if (kOH % kTH != 0 && oy >= kOH) continue;
          float res[kV];
#pragma unroll
          for (int v = 0; v < kV; ++v) {
            float x = acc[m][r][v];
#if EPI == 1
            x += ea[m];
#elif EPI == 2
            x = fmaf(x, ea[m], eb[m]);
#endif
#if ACT == 1
            x = fmaxf(x, 0.0f);
#elif ACT == 2
            x = fminf(fmaxf(x, 0.0f), 6.0f);
#endif
            res[v] = x;
          }
          float* orow = out_plane + oy * kOW + ox0;
          if (kV % 4 == 0 && kOW % 4 == 0) {
#pragma unroll
            for (int q = 0; q < kV / 4; ++q)
              if (kOW % kV == 0 || ox0 + 4 * q < kOW)
                reinterpret_cast<float4*>(orow)[q] = make_float4(res[4 * q], res[4 * q + 1], res[4 * q + 2], res[4 * q + 3]);
          } else if (kV % 2 == 0 && kOW % 2 == 0) {
#pragma unroll
            for (int q = 0; q < kV / 2; ++q)
              if (kOW % kV == 0 || ox0 + 2 * q < kOW)
                reinterpret_cast<float2*>(orow)[q] = make_float2(res[2 * q], res[2 * q + 1]);
          } else {
#pragma unroll
            for (int v = 0; v < kV; ++v)
              if (kOW % kV == 0 || ox0 + v < kOW) orow[v] = res[v];
          }
        }
      }
    }
#if PIPE
    __syncthreads();  // this buffer is refilled by the copy issued in the next iteration
    tile = next;
    if (tile >= num_tiles) break;
#endif
  }
#ifdef TAP
#undef TAP
#endif
}

cudaError_t CAT(launch_, NAME)(const float* input, const float* filter, const float* epilogue_a,
                               const float* epilogue_b, float* output, int batch, cudaStream_t stream) {
  const long long tiles = (long long)batch * (kC / kCB) * kNB;
  if (tiles > 0x7fffffffLL) return cudaErrorInvalidConfiguration;
  if (tiles == 0) return cudaSuccess;
  long long blocks = tiles;
#if PIPE
  // Persistent grid: as many blocks as fit on the device at once (computed once).
  static int capacity = 0;
  if (capacity == 0) {
    int per_sm = 0, sms = 0, dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    if (e == cudaSuccess) e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, CAT(NAME, _kernel), kThreads, 0);
    if (e != cudaSuccess) return e;
    capacity = per_sm * sms;
  }
  if (blocks > capacity) blocks = capacity;
#endif
  CAT(NAME, _kernel)<<<(unsigned)blocks, kThreads, 0, stream>>>(input, filter, epilogue_a, epilogue_b, output, (int)tiles);
  return cudaGetLastError();
}

// Schedule description for the harness.
extern "C" const char* CAT(sched_, NAME)() {
  return "R=" STR(R) " V=" STR(V) " TH=" STR(TH) " CB=" STR(CB) " MINB=" STR(MINB) " TAPS_SMEM=" STR(TAPS_SMEM) " PIPE=" STR(PIPE);
}
extern "C" int CAT(threads_, NAME)() { return kThreads; }
extern "C" int CAT(smem_, NAME)() { return kBuffers * (kSmemFloats + kParFloats) * 4; }
