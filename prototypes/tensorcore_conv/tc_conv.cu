// Tensor-core fp16 NHWC implicit-GEMM convolution on CUTLASS, measured layer by
// layer beside a float64 reference.
//
//   A  CUTLASS 2.x ImplicitGemmConvolution (mma.sync, cp.async multistage, Sm80
//      kernels, which run unchanged on sm_90)
//   B  CUTLASS 3.x sm90 implicit GEMM (TMA im2col loads, wgmma, warp-specialized
//      producer/consumer, TMA-store epilogue)
//
// Tensors: activations NHWC fp16, weights KRSC fp16 (PyTorch channels_last),
// output NHWC fp16, fp32 accumulation, cross-correlation (no filter flip), no
// bias or activation.  Every output element is checked against the reference.
//
// Usage: tc_conv [substring]   runs only the layers whose name contains it.
// Output: CSV on stdout, one line per (layer, impl, config).

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cutlass/cutlass.h"
#include "cutlass/numeric_types.h"
#include "cutlass/tensor_ref.h"
#include "cutlass/layout/tensor.h"

// CUTLASS 2.x implicit GEMM
#include "cutlass/conv/conv2d_problem_size.h"
#include "cutlass/conv/kernel/default_conv2d_fprop.h"
#include "cutlass/conv/device/implicit_gemm_convolution.h"
#include "cutlass/epilogue/thread/linear_combination.h"
#include "cutlass/gemm/threadblock/threadblock_swizzle.h"

// CUTLASS 3.x sm90 implicit GEMM
#include "cute/tensor.hpp"
#include "cutlass/kernel_hardware_info.hpp"
#include "cutlass/conv/convnd_problem_shape.hpp"
#include "cutlass/conv/dispatch_policy.hpp"
#include "cutlass/conv/collective/collective_builder.hpp"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/conv/kernel/conv_universal.hpp"
#include "cutlass/conv/device/conv_universal_adapter.hpp"

using half_t = cutlass::half_t;

#define CUDA_CHECK(expr)                                                        \
  do {                                                                          \
    cudaError_t err_ = (expr);                                                  \
    if (err_ != cudaSuccess) {                                                  \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #expr, \
                   cudaGetErrorString(err_));                                   \
      std::exit(1);                                                             \
    }                                                                           \
  } while (0)

// ---------------------------------------------------------------------------
// Problems

struct Layer {
  const char* name;
  int n, c_in, c_out, h, w, k, stride;
};

// MobileNetV2 pointwise layers (batch 64) and ResNet 3x3 layers (batch 32).
static const Layer kLayers[] = {
    {"mnv2_pw_16_96", 64, 16, 96, 112, 112, 1, 1},
    {"mnv2_pw_96_24", 64, 96, 24, 56, 56, 1, 1},
    {"mnv2_pw_24_144", 64, 24, 144, 56, 56, 1, 1},
    {"mnv2_pw_144_32", 64, 144, 32, 28, 28, 1, 1},
    {"mnv2_pw_32_192", 64, 32, 192, 28, 28, 1, 1},
    {"mnv2_pw_384_64", 64, 384, 64, 14, 14, 1, 1},
    {"mnv2_pw_96_576", 64, 96, 576, 14, 14, 1, 1},
    {"mnv2_pw_960_160", 64, 960, 160, 7, 7, 1, 1},
    {"mnv2_pw_320_1280", 64, 320, 1280, 7, 7, 1, 1},
    {"resnet_64_64_56", 32, 64, 64, 56, 56, 3, 1},
    {"resnet_128_128_28", 32, 128, 128, 28, 28, 3, 1},
    {"resnet_256_256_14", 32, 256, 256, 14, 14, 3, 1},
    {"resnet_512_512_7", 32, 512, 512, 7, 7, 3, 1},
    {"resnet_64_128_56_s2", 32, 64, 128, 56, 56, 3, 2},
};

// A layer with its derived quantities: "same" padding (k-1)/2 for odd k.
struct Problem {
  int N, H, W, C;  // input NHWC
  int K, R, S;     // filter KRSC
  int pad, stride;
  int P, Q;        // output height, width

  explicit Problem(const Layer& l)
      : N(l.n), H(l.h), W(l.w), C(l.c_in), K(l.c_out), R(l.k), S(l.k),
        pad((l.k - 1) / 2), stride(l.stride),
        P((l.h + 2 * pad - l.k) / l.stride + 1),
        Q((l.w + 2 * pad - l.k) / l.stride + 1) {}

  __host__ __device__ int64_t x_elems() const { return int64_t(N) * H * W * C; }
  __host__ __device__ int64_t w_elems() const { return int64_t(K) * R * S * C; }
  __host__ __device__ int64_t y_elems() const { return int64_t(N) * P * Q * K; }
  double flops() const { return 2.0 * double(y_elems()) * C * R * S; }
};

// ---------------------------------------------------------------------------
// Device buffers, inputs and the float64 reference

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes) { resize(bytes); }
  ~DeviceBuffer() { cudaFree(ptr_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void resize(size_t bytes) {
    if (bytes <= bytes_) return;
    CUDA_CHECK(cudaFree(ptr_));
    ptr_ = nullptr;
    CUDA_CHECK(cudaMalloc(&ptr_, bytes));
    bytes_ = bytes;
  }
  template <class T>
  T* as() const { return static_cast<T*>(ptr_); }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

__device__ inline uint64_t splitmix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Uniform values in [-1, 1): 24 random bits, so every value is exact in float
// before the (rounding) conversion to fp16.
__global__ void fill_uniform(half_t* p, int64_t n, uint64_t seed) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    uint64_t r = splitmix64(seed ^ splitmix64(uint64_t(i)));
    float u = float(r >> 40) * (1.0f / 16777216.0f);
    p[i] = half_t(2.0f * u - 1.0f);
  }
}

// Direct convolution, one thread per output element (n, p, q, k).  Besides the
// exact sum it keeps sum |x*w|, the scale of the rounding error of any order
// of accumulation.
__global__ void conv_reference(const half_t* x, const half_t* w, double* ref,
                               double* sum_abs, Problem pb) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= pb.y_elems()) return;
  int k = int(i % pb.K);
  int64_t t = i / pb.K;
  int q = int(t % pb.Q);
  t /= pb.Q;
  int p = int(t % pb.P);
  int n = int(t / pb.P);

  double acc = 0.0, mag = 0.0;
  for (int r = 0; r < pb.R; ++r) {
    int h = p * pb.stride - pb.pad + r;
    if (h < 0 || h >= pb.H) continue;
    for (int s = 0; s < pb.S; ++s) {
      int wi = q * pb.stride - pb.pad + s;
      if (wi < 0 || wi >= pb.W) continue;
      const half_t* xp = x + ((int64_t(n) * pb.H + h) * pb.W + wi) * pb.C;
      const half_t* wp = w + ((int64_t(k) * pb.R + r) * pb.S + s) * pb.C;
      for (int c = 0; c < pb.C; ++c) {
        double term = double(float(xp[c])) * double(float(wp[c]));
        acc += term;
        mag += fabs(term);
      }
    }
  }
  ref[i] = acc;
  sum_abs[i] = mag;
}

// Per element: |got - ref| <= 2^-10 |ref| + 2^-12 sum|terms|, i.e. fp16 output
// rounding (half an ulp is 2^-11 relative, doubled) plus fp32 accumulation slack.
// A NaN (an element never written: the output is poisoned) fails the test.
// worst_bits holds max |err| / sum|terms| as the bits of a non-negative double,
// whose integer order is its numeric order, so atomicMax applies.
__global__ void compare(const half_t* y, const double* ref, const double* sum_abs,
                        int64_t n, unsigned long long* bad,
                        unsigned long long* worst_bits) {
  unsigned long long my_bad = 0;
  double my_worst = 0.0;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    double got = double(float(y[i]));
    double err = fabs(got - ref[i]);
    double bound = ldexp(fabs(ref[i]), -10) + ldexp(sum_abs[i], -12);
    if (!(err <= bound)) ++my_bad;
    double rel = sum_abs[i] > 0.0 ? err / sum_abs[i] : (err == 0.0 ? 0.0 : INFINITY);
    if (!(rel <= my_worst)) my_worst = isnan(rel) ? INFINITY : rel;
  }
  if (my_bad) atomicAdd(bad, my_bad);
  atomicMax(worst_bits, static_cast<unsigned long long>(__double_as_longlong(my_worst)));
}

// Holds the stream for `ns` nanoseconds, long enough for the host to queue a
// whole timing loop behind it: then the timed launches run back to back
// instead of at the pace of the host's launch calls, which for the smallest
// layers here is slower than the kernels.
__global__ void hold_stream(uint64_t ns) {
  uint64_t start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    __nanosleep(1000);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}

static void launch_fill(half_t* p, int64_t n, uint64_t seed, cudaStream_t stream) {
  fill_uniform<<<1024, 256, 0, stream>>>(p, n, seed);
  CUDA_CHECK(cudaGetLastError());
}

// ---------------------------------------------------------------------------
// Implementations behind one interface

class ConvImpl {
 public:
  virtual ~ConvImpl() = default;
  virtual const char* impl() const = 0;
  virtual std::string config() const = 0;
  // Checks the problem and builds the launch parameters. A failure is reported
  // in *why and the (layer, config) is skipped.
  virtual bool prepare(const Problem& pb, const half_t* x, const half_t* w, half_t* y,
                       cudaStream_t stream, std::string* why) = 0;
  virtual cutlass::Status launch(cudaStream_t stream) = 0;
};

static std::string status_text(const char* stage, cutlass::Status s) {
  return std::string(stage) + ": " + cutlass::cutlassGetStatusString(s);
}


// can_implement, then the workspace and initialize, for either CUTLASS
// generation's operator; false (and why) where the configuration does not run.
template <class Op, class Args>
bool set_up(Op& op, DeviceBuffer& workspace, const Args& args, cudaStream_t stream, std::string* why) {
  cutlass::Status s = Op::can_implement(args);
  if (s != cutlass::Status::kSuccess) { *why = status_text("can_implement", s); return false; }
  workspace.resize(std::max<size_t>(Op::get_workspace_size(args), 1));
  s = op.initialize(args, workspace.template as<void>(), stream);
  if (s != cutlass::Status::kSuccess) { *why = status_text("initialize", s); return false; }
  return true;
}
// A: CUTLASS 2.x.  Threadblock tile TbM x TbN x TbK over the implicit GEMM
// (M = N*P*Q, N = K, K = R*S*C), warp tile WM x WN x WK, mma.sync 16x8x16.
template <int TbM, int TbN, int TbK, int WM, int WN, int WK, int Stages>
class Cutlass2x : public ConvImpl {
  // 8 fp16 = 16 bytes per access: needs C and K multiples of 8.
  using EpilogueOp = cutlass::epilogue::thread::LinearCombination<half_t, 8, float, float>;
  // StrideSupport is left at its default: the kOptimized fprop activation
  // iterator handles any traversal stride regardless.
  using Kernel = typename cutlass::conv::kernel::DefaultConv2dFprop<
      half_t, cutlass::layout::TensorNHWC,
      half_t, cutlass::layout::TensorNHWC,
      half_t, cutlass::layout::TensorNHWC,
      float,
      cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,
      cutlass::gemm::GemmShape<TbM, TbN, TbK>,
      cutlass::gemm::GemmShape<WM, WN, WK>,
      cutlass::gemm::GemmShape<16, 8, 16>,
      EpilogueOp,
      cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<>,
      Stages,
      cutlass::arch::OpMultiplyAdd,
      cutlass::conv::IteratorAlgorithm::kOptimized>::Kernel;
  using Op = cutlass::conv::device::ImplicitGemmConvolution<Kernel>;

 public:
  const char* impl() const override { return "cutlass2x_sm80"; }
  std::string config() const override {
    char buf[96];
    std::snprintf(buf, sizeof buf, "tb%dx%dx%d_w%dx%dx%d_s%d", TbM, TbN, TbK, WM, WN, WK, Stages);
    return buf;
  }

  bool prepare(const Problem& pb, const half_t* x, const half_t* w, half_t* y,
               cudaStream_t stream, std::string* why) override {
    cutlass::conv::Conv2dProblemSize size(
        pb.N, pb.H, pb.W, pb.C, pb.K, pb.R, pb.S, pb.P, pb.Q,
        pb.pad, pb.pad, pb.stride, pb.stride, /*dilation*/ 1, 1,
        cutlass::conv::Mode::kCrossCorrelation);
    using Layout = cutlass::layout::TensorNHWC;
    cutlass::TensorRef<half_t, Layout> ref_x(const_cast<half_t*>(x),
                                             Layout::packed({pb.N, pb.H, pb.W, pb.C}));
    cutlass::TensorRef<half_t, Layout> ref_w(const_cast<half_t*>(w),
                                             Layout::packed({pb.K, pb.R, pb.S, pb.C}));
    cutlass::TensorRef<half_t, Layout> ref_y(y, Layout::packed({pb.N, pb.P, pb.Q, pb.K}));
    // beta = 0: the epilogue does not read C (LinearCombination::is_source_needed),
    // so passing the output as C does not disturb the NaN poisoning check.
    typename Op::Arguments args(size, ref_x, ref_w, ref_y, ref_y, {1.0f, 0.0f});

    return set_up(op_, workspace_, args, stream, why);
  }

  cutlass::Status launch(cudaStream_t stream) override { return op_.run(stream); }

 private:
  Op op_;
  DeviceBuffer workspace_;
};

// B: CUTLASS 3.x sm90.  CTA tile TileM x TileN x TileK, cluster 1x1x1, the
// builders' choice of kernel schedule (the non-persistent TMA warp-specialized
// implicit GEMM; the persistent ones are not offered for conv) and of the
// number of pipeline stages (as many as fit beside the epilogue's shared memory).
template <int TileM, int TileN, int TileK>
class Cutlass3x : public ConvImpl {
  using TileShape = cute::Shape<cute::Int<TileM>, cute::Int<TileN>, cute::Shape<cute::Int<TileK>>>;
  using ClusterShape = cute::Shape<cute::_1, cute::_1, cute::_1>;
  static constexpr int kAlign = 8;  // 16-byte TMA alignment in fp16 elements

  // ElementC = void: beta is 0, so no source tensor is read at all.
  using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp,
      TileShape, ClusterShape,
      cutlass::epilogue::collective::EpilogueTileAuto,
      float, float,
      void, cutlass::layout::TensorNHWC, kAlign,
      half_t, cutlass::layout::TensorNHWC, kAlign,
      cutlass::epilogue::TmaWarpSpecialized>::CollectiveOp;

  using Mainloop = typename cutlass::conv::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp,
      cutlass::conv::Operator::kFprop,
      half_t, cutlass::layout::TensorNHWC, kAlign,
      half_t, cutlass::layout::TensorNHWC, kAlign,
      float,
      TileShape, ClusterShape,
      cutlass::conv::collective::StageCountAutoCarveout<
          static_cast<int>(sizeof(typename Epilogue::SharedStorage))>,
      cutlass::conv::collective::KernelScheduleAuto>::CollectiveOp;

  using ProblemShape =
      cutlass::conv::ConvProblemShape<cutlass::conv::Operator::kFprop, Mainloop::NumSpatialDimensions>;
  using Kernel = cutlass::conv::kernel::ConvUniversal<ProblemShape, Mainloop, Epilogue>;
  using Op = cutlass::conv::device::ConvUniversalAdapter<Kernel>;

 public:
  const char* impl() const override { return "cutlass3x_sm90"; }
  std::string config() const override {
    char buf[96];
    std::snprintf(buf, sizeof buf, "tile%dx%dx%d_cl1x1x1_s%d", TileM, TileN, TileK,
                  int(Mainloop::DispatchPolicy::Stages));
    return buf;
  }

  bool prepare(const Problem& pb, const half_t* x, const half_t* w, half_t* y,
               cudaStream_t stream, std::string* why) override {
    // Packed tensors; the constructor derives the output extent [N,P,Q,K].
    ProblemShape shape(cutlass::conv::Mode::kCrossCorrelation,
                       {pb.N, pb.H, pb.W, pb.C}, {pb.K, pb.R, pb.S, pb.C},
                       {pb.pad, pb.pad}, {pb.pad, pb.pad},
                       {pb.stride, pb.stride}, {1, 1}, /*groups*/ 1);
    if (shape.shape_C[1] != pb.P || shape.shape_C[2] != pb.Q) {
      *why = "output extent differs from the reference's";
      return false;
    }

    // The epilogue sees the output as a matrix ((Q,P,N), K); its M-mode
    // strides are those of Q, P and N in the NPQK tensor.
    typename Kernel::StrideD stride_y{};
    cute::for_each(cute::make_seq<cute::rank<0>(typename Kernel::StrideD{})>{}, [&](auto i) {
      cute::get<0, i>(stride_y) = shape.stride_C[ProblemShape::RankT - 2 - i];
    });

    typename Op::Arguments args{};
    args.mode = cutlass::gemm::GemmUniversalMode::kGemm;
    args.problem_shape = shape;
    args.mainloop.ptr_A = x;
    args.mainloop.ptr_B = w;
    args.epilogue.thread.alpha = 1.0f;
    args.epilogue.thread.beta = 0.0f;
    args.epilogue.ptr_C = nullptr;
    args.epilogue.dC = stride_y;
    args.epilogue.ptr_D = y;
    args.epilogue.dD = stride_y;

    return set_up(op_, workspace_, args, stream, why);
  }

  cutlass::Status launch(cudaStream_t stream) override { return op_.run(stream); }

 private:
  Op op_;
  DeviceBuffer workspace_;
};

// ---------------------------------------------------------------------------
// Measurement

static float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5f * (v[m - 1] + v[m]);
}

struct Buffers {
  DeviceBuffer x, w, y, ref, sum_abs, counters, flush;
};

static constexpr size_t kFlushBytes = size_t(256) << 20;  // well past the 50 MB L2
static constexpr int kHotRuns = 20;
static constexpr int kColdRuns = 10;

static void print_skip(const char* layer, ConvImpl& impl, const std::string& why) {
  std::printf("%s,%s,%s,%s,,,,,\n", layer, impl.impl(), impl.config().c_str(), why.c_str());
  std::fflush(stdout);
}

// Correctness then timing of one implementation on one layer whose inputs and
// reference are already in bufs.
static void run_one(const char* layer, const Problem& pb, ConvImpl& impl, Buffers& bufs,
                    cudaStream_t stream) {
  half_t* x = bufs.x.as<half_t>();
  half_t* w = bufs.w.as<half_t>();
  half_t* y = bufs.y.as<half_t>();

  std::string why;
  if (!impl.prepare(pb, x, w, y, stream, &why)) { print_skip(layer, impl, why); return; }

  // 0xFFFF is a NaN in fp16: any element the kernel fails to write fails the check.
  CUDA_CHECK(cudaMemsetAsync(y, 0xFF, pb.y_elems() * sizeof(half_t), stream));
  cutlass::Status s = impl.launch(stream);
  if (s != cutlass::Status::kSuccess) { print_skip(layer, impl, status_text("launch", s)); return; }
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaStreamSynchronize(stream));

  unsigned long long* counters = bufs.counters.as<unsigned long long>();
  CUDA_CHECK(cudaMemsetAsync(counters, 0, 2 * sizeof(unsigned long long), stream));
  compare<<<1024, 256, 0, stream>>>(y, bufs.ref.as<double>(), bufs.sum_abs.as<double>(),
                                    pb.y_elems(), counters, counters + 1);
  CUDA_CHECK(cudaGetLastError());
  unsigned long long host_counters[2];
  CUDA_CHECK(cudaMemcpyAsync(host_counters, counters, sizeof host_counters,
                             cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  unsigned long long bad = host_counters[0];
  double worst;
  std::memcpy(&worst, &host_counters[1], sizeof worst);

  // Hot: back-to-back launches, each between its own pair of events.
  std::vector<cudaEvent_t> ev(kHotRuns + 1);
  for (auto& e : ev) CUDA_CHECK(cudaEventCreate(&e));
  hold_stream<<<1, 1, 0, stream>>>(2000000);
  CUDA_CHECK(cudaEventRecord(ev[0], stream));
  bool launched = true;
  for (int i = 0; i < kHotRuns; ++i) {
    launched &= impl.launch(stream) == cutlass::Status::kSuccess;
    CUDA_CHECK(cudaEventRecord(ev[i + 1], stream));
  }
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<float> hot(kHotRuns);
  for (int i = 0; i < kHotRuns; ++i) CUDA_CHECK(cudaEventElapsedTime(&hot[i], ev[i], ev[i + 1]));

  // Cold: each launch after writing a scratch buffer larger than L2, so the
  // inputs come from DRAM.  The memset (~0.1 ms) also covers the time the host
  // takes to queue the event and the launch.
  std::vector<float> cold(kColdRuns);
  for (int i = 0; i < kColdRuns; ++i) {
    CUDA_CHECK(cudaMemsetAsync(bufs.flush.as<void>(), i, kFlushBytes, stream));
    CUDA_CHECK(cudaEventRecord(ev[0], stream));
    launched &= impl.launch(stream) == cutlass::Status::kSuccess;
    CUDA_CHECK(cudaEventRecord(ev[1], stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaEventElapsedTime(&cold[i], ev[0], ev[1]));
  }
  CUDA_CHECK(cudaGetLastError());
  for (auto& e : ev) CUDA_CHECK(cudaEventDestroy(e));
  if (!launched) { print_skip(layer, impl, "launch failed while timing"); return; }

  float hot_us = 1000.0f * median(hot);
  float cold_us = 1000.0f * median(cold);
  double tflops = pb.flops() / (hot_us * 1e-6) / 1e12;
  std::printf("%s,%s,%s,%s,%llu,%.3e,%.2f,%.2f,%.2f\n", layer, impl.impl(),
              impl.config().c_str(), bad ? "mismatch" : "ok", bad, worst, hot_us, cold_us,
              tflops);
  std::fflush(stdout);
}

int main(int argc, char** argv) {
  const char* filter = argc > 1 ? argv[1] : "";

  int dev = 0;
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  std::fprintf(stderr, "device: %s (sm_%d%d)\n", prop.name, prop.major, prop.minor);
  if (prop.major != 9 || prop.minor != 0)
    std::fprintf(stderr, "warning: built for sm_90a only; kernels will not launch here\n");

  std::vector<std::unique_ptr<ConvImpl>> impls;
  impls.emplace_back(new Cutlass2x<128, 128, 64, 64, 64, 64, 3>());
  impls.emplace_back(new Cutlass2x<128, 64, 64, 64, 32, 64, 4>());
  impls.emplace_back(new Cutlass2x<64, 64, 64, 32, 32, 64, 5>());
  impls.emplace_back(new Cutlass3x<128, 128, 64>());
  impls.emplace_back(new Cutlass3x<64, 128, 64>());

  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  Buffers bufs;
  bufs.counters.resize(2 * sizeof(unsigned long long));
  bufs.flush.resize(kFlushBytes);

  std::printf("layer,impl,config,status,bad,worst_rel_err,hot_us,cold_us,tflops\n");
  uint64_t seed = 0x5EED;
  for (const Layer& layer : kLayers) {
    if (!std::strstr(layer.name, filter)) continue;
    Problem pb(layer);

    bufs.x.resize(pb.x_elems() * sizeof(half_t));
    bufs.w.resize(pb.w_elems() * sizeof(half_t));
    bufs.y.resize(pb.y_elems() * sizeof(half_t));
    bufs.ref.resize(pb.y_elems() * sizeof(double));
    bufs.sum_abs.resize(pb.y_elems() * sizeof(double));

    // Fresh inputs for every layer.
    launch_fill(bufs.x.as<half_t>(), pb.x_elems(), seed++, stream);
    launch_fill(bufs.w.as<half_t>(), pb.w_elems(), seed++, stream);
    int64_t blocks = (pb.y_elems() + 255) / 256;
    conv_reference<<<unsigned(blocks), 256, 0, stream>>>(
        bufs.x.as<half_t>(), bufs.w.as<half_t>(), bufs.ref.as<double>(),
        bufs.sum_abs.as<double>(), pb);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(stream));

    for (auto& impl : impls) run_one(layer.name, pb, *impl, bufs, stream);
  }

  CUDA_CHECK(cudaStreamDestroy(stream));
  return 0;
}
