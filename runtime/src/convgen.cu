// convgen runtime: problem and pointer validation, lookup in a generated
// registry, and the generic kernel that serves every other problem.
#include "convgen/convgen.h"

#include <cstdint>
#include <sstream>

namespace convgen {

const char* to_string(StatusCode code) {
  switch (code) {
    case StatusCode::kSuccess: return "success";
    case StatusCode::kInvalidProblem: return "invalid problem";
    case StatusCode::kInvalidPointer: return "invalid pointer";
    case StatusCode::kNoSpecializedKernel: return "no specialized kernel";
    case StatusCode::kCudaError: return "CUDA error";
  }
  return "unknown status";
}

const char* to_string(Epilogue e) {
  switch (e) {
    case Epilogue::kNone: return "none";
    case Epilogue::kBias: return "bias";
    case Epilogue::kScaleShift: return "scale_shift";
  }
  return "?";
}

const char* to_string(Activation a) {
  switch (a) {
    case Activation::kNone: return "none";
    case Activation::kRelu: return "relu";
    case Activation::kRelu6: return "relu6";
  }
  return "?";
}

std::string describe(const DepthwiseProblem& p) {
  std::ostringstream s;
  s << "depthwise conv2d f32 NCHW n" << p.n << " c" << p.c << " h" << p.h << " w" << p.w << " k" << p.kh << "x"
    << p.kw << " stride " << p.stride_h << "x" << p.stride_w << " pad " << p.pad_top << "," << p.pad_bottom << ","
    << p.pad_left << "," << p.pad_right << " dilation " << p.dilation_h << "x" << p.dilation_w << " multiplier "
    << p.multiplier << " epilogue " << to_string(p.epilogue) << " activation " << to_string(p.activation);
  return s.str();
}

namespace {

Status error(StatusCode code, const std::string& message) { return {code, message}; }

// The largest batch a launch takes: grid.z.
constexpr int kMaxBatch = 65535;

bool misaligned(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % alignof(float) != 0; }

Status check_pointer(const void* p, const char* name, bool wanted) {
  if (wanted && p == nullptr) return error(StatusCode::kInvalidPointer, std::string(name) + " is null");
  if (!wanted && p != nullptr) {
    return error(StatusCode::kInvalidPointer,
                 std::string(name) + " is set but the problem's epilogue does not use it; pass null");
  }
  if (p != nullptr && misaligned(p)) {
    return error(StatusCode::kInvalidPointer, std::string(name) + " is not 4-byte aligned");
  }
  return Status::Ok();
}

}  // namespace

Status validate(const DepthwiseProblem& p) {
  auto bad = [&](const std::string& what) {
    return error(StatusCode::kInvalidProblem, what + " (" + describe(p) + ")");
  };
  if (p.dtype != DataType::kFloat32) return bad("only float32 is supported");
  if (p.layout != Layout::kNCHW) return bad("only NCHW is supported");
  if (p.n < 1 || p.c < 1 || p.h < 1 || p.w < 1) return bad("n, c, h and w must be at least 1");
  if (p.n > kMaxBatch) return bad("n must be at most " + std::to_string(kMaxBatch));
  if (p.kh < 1 || p.kw < 1) return bad("the filter must be at least 1x1");
  if (p.stride_h < 1 || p.stride_w < 1) return bad("strides must be at least 1");
  if (p.dilation_h < 1 || p.dilation_w < 1) return bad("dilations must be at least 1");
  if (p.pad_top < 0 || p.pad_bottom < 0 || p.pad_left < 0 || p.pad_right < 0) return bad("padding must be >= 0");
  if (p.multiplier < 1) return bad("the channel multiplier must be at least 1");
  if (p.h + p.pad_top + p.pad_bottom < p.dilation_h * (p.kh - 1) + 1 ||
      p.w + p.pad_left + p.pad_right < p.dilation_w * (p.kw - 1) + 1) {
    return bad("the dilated filter is larger than the padded input: the output would be empty");
  }
  const long long in_elems = 1LL * p.n * p.c * p.h * p.w;
  const long long out_elems = 1LL * p.n * p.out_channels() * p.out_h() * p.out_w();
  if (in_elems > (1LL << 40) || out_elems > (1LL << 40)) return bad("the tensors are too large");
  return Status::Ok();
}

Status validate(const DepthwiseProblem& p, const DepthwiseArgs& a) {
  Status s = validate(p);
  if (!s.ok()) return s;
  const bool bias = p.epilogue == Epilogue::kBias;
  const bool scale_shift = p.epilogue == Epilogue::kScaleShift;
  for (Status check : {check_pointer(a.input, "input", true), check_pointer(a.filter, "filter", true),
                       check_pointer(a.output, "output", true), check_pointer(a.bias, "bias", bias),
                       check_pointer(a.scale, "scale", scale_shift), check_pointer(a.shift, "shift", scale_shift)}) {
    if (!check.ok()) return check;
  }
  const auto in_begin = reinterpret_cast<std::uintptr_t>(a.input);
  const auto in_end = in_begin + sizeof(float) * p.n * p.c * p.h * p.w;
  const auto out_begin = reinterpret_cast<std::uintptr_t>(a.output);
  const auto out_end = out_begin + sizeof(float) * p.n * p.out_channels() * p.out_h() * p.out_w();
  if (in_begin < out_end && out_begin < in_end) {
    return error(StatusCode::kInvalidPointer, "input and output overlap; the convolution is not in place");
  }
  return Status::Ok();
}

namespace {

// One thread per output element. Slow and simple on purpose: it is the
// fallback that keeps every valid problem running, and the reference the
// specialized kernels are compared with on the GPU.
__global__ void generic_depthwise_f32_nchw(DepthwiseProblem p, const float* __restrict__ input,
                                           const float* __restrict__ filter, const float* __restrict__ epilogue_a,
                                           const float* __restrict__ epilogue_b, float* __restrict__ output) {
  const int out_h = p.out_h();
  const int out_w = p.out_w();
  const int out_c = p.out_channels();
  const long long total = 1LL * p.n * out_c * out_h * out_w;
  for (long long idx = blockIdx.x * 1LL * blockDim.x + threadIdx.x; idx < total; idx += 1LL * gridDim.x * blockDim.x) {
    const int ox = static_cast<int>(idx % out_w);
    const int oy = static_cast<int>((idx / out_w) % out_h);
    const int co = static_cast<int>((idx / (1LL * out_w * out_h)) % out_c);
    const long long n = idx / (1LL * out_w * out_h * out_c);
    const int ci = co / p.multiplier;
    const float* plane = input + (n * p.c + ci) * p.h * p.w;
    const float* taps = filter + 1LL * co * p.kh * p.kw;
    float acc = 0.0f;
    for (int ky = 0; ky < p.kh; ++ky) {
      const int y = oy * p.stride_h - p.pad_top + ky * p.dilation_h;
      if (y < 0 || y >= p.h) continue;
      for (int kx = 0; kx < p.kw; ++kx) {
        const int x = ox * p.stride_w - p.pad_left + kx * p.dilation_w;
        if (x < 0 || x >= p.w) continue;
        acc = fmaf(plane[1LL * y * p.w + x], taps[ky * p.kw + kx], acc);
      }
    }
    if (p.epilogue == Epilogue::kBias) acc += epilogue_a[co];
    if (p.epilogue == Epilogue::kScaleShift) acc = fmaf(acc, epilogue_a[co], epilogue_b[co]);
    if (p.activation == Activation::kRelu) acc = fmaxf(acc, 0.0f);
    if (p.activation == Activation::kRelu6) acc = fminf(fmaxf(acc, 0.0f), 6.0f);
    output[idx] = acc;
  }
}

const float* epilogue_a(const DepthwiseProblem& p, const DepthwiseArgs& a) {
  return p.epilogue == Epilogue::kBias ? a.bias : a.scale;
}

Status launched(cudaError_t e, const char* kernel) {
  if (e != cudaSuccess) {
    return error(StatusCode::kCudaError, std::string("launching ") + kernel + ": " + cudaGetErrorString(e));
  }
  return Status::Ok();
}

// Everything but the batch must match: kernels take the batch at launch.
bool same_shape(const DepthwiseProblem& a, const DepthwiseProblem& b) {
  return a.c == b.c && a.h == b.h && a.w == b.w && a.kh == b.kh && a.kw == b.kw && a.stride_h == b.stride_h &&
         a.stride_w == b.stride_w && a.pad_top == b.pad_top && a.pad_bottom == b.pad_bottom &&
         a.pad_left == b.pad_left && a.pad_right == b.pad_right && a.dilation_h == b.dilation_h &&
         a.dilation_w == b.dilation_w && a.multiplier == b.multiplier && a.epilogue == b.epilogue &&
         a.activation == b.activation && a.dtype == b.dtype && a.layout == b.layout;
}

// Two levels, as in CUTLASS's operation table: kernels made for the same
// problem up to the batch, then a preference among them: the kernel made for
// this batch, else the one made for a runtime batch, else the first.
const detail::RegistryEntry* lookup(const detail::Registry& r, const DepthwiseProblem& p) {
  const detail::RegistryEntry* runtime_batch = nullptr;
  const detail::RegistryEntry* other_batch = nullptr;
  for (int i = 0; i < r.count; ++i) {
    const detail::RegistryEntry& e = r.entries[i];
    if (!same_shape(e.problem, p)) continue;
    if (e.problem.n == p.n) return &e;
    if (e.problem.n == 0 && runtime_batch == nullptr) runtime_batch = &e;
    if (other_batch == nullptr) other_batch = &e;
  }
  return runtime_batch != nullptr ? runtime_batch : other_batch;
}

constexpr const char* kGenericName = "generic_depthwise_f32_nchw";

}  // namespace

Status generic_depthwise_conv2d(const DepthwiseProblem& p, const DepthwiseArgs& a, cudaStream_t stream) {
  Status s = validate(p, a);
  if (!s.ok()) return s;
  const long long total = 1LL * p.n * p.out_channels() * p.out_h() * p.out_w();
  const int threads = 256;
  const long long blocks = (total + threads - 1) / threads;
  const int grid = static_cast<int>(blocks < (1LL << 20) ? blocks : (1LL << 20));
  generic_depthwise_f32_nchw<<<grid, threads, 0, stream>>>(p, a.input, a.filter, epilogue_a(p, a), a.shift,
                                                           a.output);
  return launched(cudaGetLastError(), kGenericName);
}

namespace detail {

KernelChoice find(const Registry& r, const DepthwiseProblem& p) {
  KernelChoice choice;
  choice.status = validate(p);
  if (!choice.status.ok()) return choice;
  const RegistryEntry* e = lookup(r, p);
  if (e == nullptr) {
    choice.kernel = kGenericName;
    choice.reason = std::string("library ") + r.library + " has no kernel for " + describe(p) +
                    "; the generic kernel serves it";
    return choice;
  }
  choice.specialized = true;
  choice.kernel = e->name;
  const std::string alignment =
      e->alignment > 4 ? "; input and output aligned to less than " + std::to_string(e->alignment) +
                             " bytes run the generic kernel"
                       : "";
  choice.reason = e->problem.n == p.n   ? std::string("made for this problem (") + e->spec_location + ")"
                  : e->problem.n == 0   ? std::string("made for this problem with a runtime batch (") +
                                            e->spec_location + ")"
                                        : std::string("made for this problem at batch ") +
                                            std::to_string(e->problem.n) + "; runs any batch (" + e->spec_location +
                                            ")";
  choice.reason += alignment;
  return choice;
}

Status run(const Registry& r, const DepthwiseProblem& p, const DepthwiseArgs& a, cudaStream_t stream,
           Dispatch dispatch) {
  Status s = validate(p, a);
  if (!s.ok()) return s;
  const RegistryEntry* e = lookup(r, p);
  if (e == nullptr) {
    if (dispatch == Dispatch::kStrict) {
      return error(StatusCode::kNoSpecializedKernel,
                   std::string("library ") + r.library + " has no kernel for " + describe(p));
    }
    return generic_depthwise_conv2d(p, a, stream);
  }
  // An entry that records no alignment (0) needs only a float's.
  const std::uintptr_t alignment = e->alignment > 4 ? static_cast<std::uintptr_t>(e->alignment) : 4;
  const auto aligned = [&](const void* ptr) { return reinterpret_cast<std::uintptr_t>(ptr) % alignment == 0; };
  if (!aligned(a.input) || !aligned(a.output)) {
    if (dispatch == Dispatch::kStrict) {
      return error(StatusCode::kInvalidPointer, std::string("kernel ") + e->name + " needs input and output aligned to " +
                                                    std::to_string(alignment) + " bytes");
    }
    return generic_depthwise_conv2d(p, a, stream);
  }
  return launched(e->launch(a.input, a.filter, epilogue_a(p, a), a.shift, a.output, p.n, stream), e->name);
}

std::vector<KernelInfo> list(const Registry& r) {
  std::vector<KernelInfo> infos;
  for (int i = 0; i < r.count; ++i) {
    const RegistryEntry& e = r.entries[i];
    infos.push_back({e.name, e.problem, e.schedule, e.spec_location, e.alignment});
  }
  return infos;
}

}  // namespace detail
}  // namespace convgen
