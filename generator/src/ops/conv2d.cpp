// The conv2d operator (dense convolution, groups = 1, weights OIHW): its
// spec keys, kernel names, cost, and the default rule that picks among its
// algorithms.
#include "conv2d.hpp"

#include "convgen/oracle/oracle.h"

namespace convgen::gen::conv2d {

bool is_pointwise(const Workload& wl) {
  return wl.kh == 1 && wl.kw == 1 && wl.stride_h == 1 && wl.stride_w == 1 && wl.pad_top == 0 &&
         wl.pad_bottom == 0 && wl.pad_left == 0 && wl.pad_right == 0;
}

int mma_sync_k(const Workload& wl) { return 32 / ops::element_bytes(wl); }

void add_mma_fragment_values(const Workload& wl, TemplateValues& values) {
  values["mma_type"] = std::string(wl.dtype == DataType::kBFloat16  ? "bf16"
                                   : wl.dtype == DataType::kFloat32 ? "tf32"
                                                                    : "f16");
  values["mma_k"] = TemplateValue(static_cast<long long>(mma_sync_k(wl)));
}

bool gemm_filter_fits(const Workload& wl) {
  return 1LL * wl.c_out * wl.c * wl.kh * wl.kw <= 0x7fffffffLL;
}

bool is_strided_3x3(const Workload& wl) {
  return wl.kh == 3 && wl.kw == 3 && (wl.stride_h > 1 || wl.stride_w > 1) && wl.dilation_h == 1 &&
         wl.dilation_w == 1;
}

bool is_winograd_shape(const Workload& wl) {
  return wl.kh == 3 && wl.kw == 3 && wl.stride_h == 1 && wl.stride_w == 1 && wl.dilation_h == 1 &&
         wl.dilation_w == 1;
}

int library_shared_limit(const PlanOptions& options, int min_arch) {
  int limit = 0;
  for (const ArchFacts& f : options.target.facts) {
    if (f.sm < min_arch) continue;
    limit = limit == 0 ? f.shared_per_block : std::min(limit, f.shared_per_block);
  }
  return limit == 0 && min_arch == 0 ? kMaxStaticSharedBytes : limit;
}

int oldest_arch(const PlanOptions& options) {
  return options.target.facts.empty() ? 0 : options.target.facts.front().sm;
}

int library_registers_per_sm(const PlanOptions& options) {
  int registers = 65536;
  for (const ArchFacts& f : options.target.facts) registers = std::min(registers, f.registers_per_sm);
  return registers;
}

Knob split_k_knob() {
  Knob k = Knob::integer("split_k", 1, kMaxSplitK,
                         "blocks of a thread-block cluster that share a tile, each summing a share of K; they add "
                         "their partial tiles in a fixed order (sm_90+)");
  k.allowed = {1, 2, 4, 8};
  k.rule_note = "(the cluster's blocks share the tile's rows evenly)";
  return k;
}

Knob products_knob() {
  return Knob::choice("products", {"fma", "tensor_cores"},
                      "how the products are computed: fma, in fp32; tensor_cores, mma.sync of TF32 operands (sm_80+), "
                      "where the workload's math allows it (tf32: one product, 3xtf32: three)");
}

void check_mma_sync_gpu(const std::string& what, const SourceLocation& where, const PlanOptions& options) {
  if (options.target.newest.sm >= kMinMmaSyncArch) return;
  throw InputError({{where, what + " runs on sm_" + num(kMinMmaSyncArch) + " and newer (mma.sync, cp.async); this "
                            "library is built for " + options.target.list() + ", where every call of this workload "
                            "would run the generic kernel: add a GPU of sm_" + num(kMinMmaSyncArch) +
                            " or newer to the list (--archs; convgen_add_library's ARCHS), or leave the workload out "
                            "(the generic kernel serves its calls without one)"}});
}

void check_products_math(const ScheduleRequest& req, int products, const Workload& wl, const PlanOptions& options) {
  if (products != kTensorCores) return;
  if (wl.math == Math::kFloat32) {
    throw InputError({{req.at("products"), "products tensor_cores rounds the operands to TF32, which math fp32 "
                                           "does not allow: set math: tf32 or 3xtf32, or products: fma"}});
  }
  check_mma_sync_gpu("products tensor_cores", req.at("products"), options);
}

int default_split_k(long long blocks, int stages, int tile_channels, int max_blocks_per_sm, int min_stages,
                    const PlanOptions& options) {
  const long long sms = options.target.newest.sm_count;
  int split = 1;
  if (blocks >= sms || oldest_arch(options) < kMinSplitArch) return split;
  while (split * 2 <= kMaxSplitK && blocks * split * 2 <= max_blocks_per_sm * sms && stages / (split * 2) >= min_stages &&
         tile_channels % (split * 2) == 0) {
    split *= 2;
  }
  return split;
}

void check_split_k(const ScheduleRequest& req, int split_k, int stages, int stage_channels, int tile_channels,
                   const PlanOptions& options, std::vector<Diagnostic>& errors) {
  if (split_k > 1 && oldest_arch(options) < kMinSplitArch) {
    errors.push_back({req.at("split_k"), "split_k " + num(split_k) + " runs the tile's blocks as a thread-block "
                                         "cluster, which needs sm_90 or newer; this library is built for sm_" +
                                         num(oldest_arch(options)) + " too: leave split_k at 1"});
  }
  if (split_k > stages) {
    errors.push_back({req.at("split_k"), "split_k " + num(split_k) + " splits K into more parts than its " +
                                         num(stages) + " stage(s) of " + num(stage_channels) +
                                         " input channels: some blocks would sum nothing"});
  }
  if (tile_channels % split_k != 0) {
    errors.push_back({req.at("split_k"), "split_k " + num(split_k) + " blocks finish the tile's " +
                                         num(tile_channels) + " output channels in equal shares: the tile's "
                                         "channels must be a multiple of split_k"});
  }
}

namespace {

// Input channels from which the winograd algorithm beats the direct one on
// 3x3 stride-1 layers: on every benchmark layer from 16 channels up, and
// from 32 in a library that also runs on a T4 (64 KiB a block: its stages
// take fewer channels; docs/performance.md, "Winograd").
int winograd_min_channels(const PlanOptions& options) {
  return library_shared_limit(options) >= 96 * 1024 ? 16 : 32;
}

// Half precision in NHWC, and float32 NHWC with math tf32 or 3xtf32: the
// tensor cores (pointwise on thin 1x1 layers of half elements, tensor_stem
// on the stems it serves; else implicit_gemm, or implicit_gemm_sm90 where a
// library holds an sm_90a image and it measured faster). Float32 NCHW, whatever its math (tf32 and
// 3xtf32 allow tensor cores; the fp32 kernels meet their bounds, and the
// gemm algorithm's `products` knob takes the tensor cores where they pay):
// the GEMM algorithm wherever it applies (a 1x1 convolution is a GEMM whose
// operands are already laid out for one); the stem algorithm on layers of
// at most 4 input channels; the GEMM over im2col on strided 3x3 layers (1.5
// to 2.9 times faster than direct on four such layers, docs/performance.md,
// "gemm for any filter"); Winograd on 3x3 stride-1 layers deep enough for
// it to win, non-fused through a workspace where its GEMMs are large; the
// direct one everywhere else. The GEMM's filter offsets are
// 32-bit: a filter past 2^31 elements stays with direct.
const Algorithm& default_algorithm(const Workload& wl, const PlanOptions& options) {
  if (pointwise_by_default(wl, options)) return kPointwise;
  if (tensor_stem_by_default(wl, options)) return kTensorStem;
  if (kImplicitGemm.serves(wl)) {
    return implicit_gemm_sm90_by_default(wl, options) ? kImplicitGemmSm90 : kImplicitGemm;
  }
  if (kImplicitGemmNchw.serves(wl) && implicit_gemm_nchw_by_default(wl, options)) {
    return implicit_gemm_sm90_by_default(wl, options) ? kImplicitGemmSm90Nchw : kImplicitGemmNchw;
  }
  if (is_pointwise(wl) && gemm_filter_fits(wl)) return kGemm;
  if (kStem.serves(wl) && is_stem_shape(wl)) return kStem;
  if (kGemm.serves(wl) && is_strided_3x3(wl) && gemm_filter_fits(wl)) return kGemm;
  if (kWinograd.serves(wl) && is_winograd_shape(wl) && wl.c >= winograd_min_channels(options)) {
    return kWinogradNonfused.serves(wl) && winograd_nonfused_by_default(wl) ? kWinogradNonfused : kWinograd;
  }
  return kDirect;
}

// conv_f32_nchw_n64_c16_co96_h112_w112_k1x1_s1_p0_ssrelu6 (conv_f32_tf32_nhwc_...
// with math tf32); a residual add
// shows as _res between the affine part and the activation.
std::string kernel_name(const Workload& wl) {
  using ops::pair_name;
  std::string name = "conv_" + ops::storage_name(wl) + "_n" + (wl.n == 0 ? std::string("any") : num(wl.n)) + "_c" + num(wl.c) + "_co" +
                     num(wl.c_out) + "_h" + num(wl.h) + "_w" + num(wl.w) + "_k" + num(wl.kh) + "x" + num(wl.kw) +
                     "_s" + pair_name(wl.stride_h, wl.stride_w) + "_p" + ops::padding_name(wl);
  if (wl.dilation_h != 1 || wl.dilation_w != 1) name += "_d" + pair_name(wl.dilation_h, wl.dilation_w);
  std::string epilogue = ops::epilogue_name_part(wl);
  if (wl.residual) epilogue += epilogue.empty() ? "res" : "_res";
  if (wl.activation != Activation::kNone) {
    epilogue += (wl.residual ? "_" : "") + std::string(to_string(wl.activation));
  }
  return epilogue.empty() ? name : name + "_" + epilogue;
}

void plan_cost(const Workload& wl, const PlanOptions& options, KernelPlan& p) {
  const long long n = p.cost_batch;
  const long long outputs = n * wl.c_out * p.out_h * p.out_w;
  p.bytes_read = ops::element_bytes(wl) * (n * wl.c * wl.h * wl.w + 1LL * wl.c_out * wl.c * wl.kh * wl.kw +
                        1LL * wl.c_out * ops::epilogue_params(wl) + (wl.residual ? outputs : 0));
  p.bytes_written = ops::element_bytes(wl) * outputs;
  p.flops = 2LL * outputs * wl.c * wl.kh * wl.kw;
  p.floor_us = static_cast<double>(p.bytes_read + p.bytes_written) / (options.copy_bandwidth_tbps * 1e6);
  // The rate of the kernel's products: FMA's fp32 peak, or the tensor
  // cores' where its plan says it runs on them (flag "tensor_cores"):
  // half-precision operands at the fp16 peak, float32 ones (math tf32,
  // 3xtf32) at half of it (the H100's and A100's TF32 rate), and for 3xtf32
  // a third of that (three products for one).
  const bool tensor_cores = p.values.count("tensor_cores") != 0 && p.flag("tensor_cores");
  double peak = options.tensor_peak_tflops;
  if (tensor_cores && wl.dtype == DataType::kFloat32) {
    peak = options.tensor_peak_tflops / 2 / row(wl.math).products;
    p.compute_peak = "the " + std::string(to_string(wl.math)) + " tensor-core rate of " +
                     num(static_cast<long long>(peak)) + " TFLOP/s (half the fp16 peak" +
                     (row(wl.math).products > 1 ? ", three products for one" : "") + ")";
  } else if (tensor_cores) {
    p.compute_peak = "the tensor-core peak of " + num(static_cast<long long>(peak)) + " TFLOP/s";
  } else {
    peak = options.fp32_peak_tflops;
    p.compute_peak = "the fp32 peak";
  }
  p.compute_floor_us = static_cast<double>(p.flops) / (peak * 1e6);
}

void template_values(const KernelPlan& p, TemplateValues& v) {
  const Workload& wl = p.workload;
  v["c_out"] = static_cast<long long>(wl.c_out);
  v["residual"] = wl.residual;
  v["problem_fields"] = ops::problem_fields(
      wl, {{"c_out", num(wl.c_out)},
           {"groups", "1"},
           {"residual", wl.residual ? "true" : "false"},
           {"math", std::string("Math::") + row(wl.math).enumerator}});
  v["epilogue_kind"] = static_cast<long long>(ops::epilogue_params(wl));
}

// One group: every output channel sums all c*kh*kw products, so operands
// are multiples of 1/16 and the sums exact (the bound stays tight).
oracle::ReferenceProblem reference_problem(const Workload& wl, int n) {
  oracle::ReferenceProblem p = oracle::convolution_geometry(wl, n, wl.c_out);
  p.residual = wl.residual;
  p.math = wl.math;
  p.exact_sums = true;
  return p;
}

// Grouped convolution other than depthwise is not generated.
std::string refuse_groups(int groups) {
  if (groups == 1) return "";
  return "'groups' must be 1 (dense convolution), got " + std::to_string(groups) +
         "; for groups = c use op: depthwise_conv2d; other grouped convolutions are not supported";
}

}  // namespace

const Operator kOperator{
    "conv2d",
    {{"c_out", "c", false, 1, kMaxChannels, true, "output channels", [](Workload& wl, int v) { wl.c_out = v; },
      [](const Workload& wl) { return wl.out_channels(); }},
     {"groups", "dilation", false, 1, kMaxChannels, false, "groups of channels", nullptr, nullptr, &refuse_groups},
     {"residual", "epilogue", true, 0, 1, false, "add a tensor shaped like the output",
      [](Workload& wl, int v) { wl.residual = v != 0; }, [](const Workload& wl) { return wl.residual ? 1 : 0; }}},
    {},
    {&kDirect, &kGemm, &kWinograd, &kWinogradNonfused, &kStem, &kImplicitGemm, &kImplicitGemmNchw, &kImplicitGemmSm90, &kImplicitGemmSm90Nchw, &kPointwise, &kTensorStem},
    &default_algorithm,
    &kernel_name,
    &plan_cost,
    &template_values,
    {"Conv2d", "dense convolution (groups = 1, weights OIHW)"},
    true,
    &reference_problem,
};

}  // namespace convgen::gen::conv2d
