// The depthwise_conv2d operator: its spec keys, its kernel names, the cost
// of a kernel, the knobs all of its algorithms share, and the default rule
// that picks among its algorithms.
#include "depthwise.hpp"

#include "convgen/oracle/oracle.h"

namespace convgen::gen::depthwise {

namespace {

// Filters of 25 taps or more (5x5 and up) at stride 1, where the rows
// algorithm cannot hold a band in registers (7x7 and up) or the plane is
// wider than 56: the window algorithm (measured on the H100,
// docs/performance.md "Large filters": 7x7 on 7x7 to 56x56 planes 1.8-3.7x
// faster than the tiles the rule gave them before, 5x5 on 96x96 17% faster
// than rows; but rows 8% faster on 28x28 5x5, and planes 41% faster on
// 7x7 planes of 5x5 at batch 64).
bool default_is_window(const Workload& wl, const PlanOptions& options) {
  return wl.kh * wl.kw >= 25 && wl.stride_h == 1 && wl.stride_w == 1 &&
         (!rows_fits_by_default(wl, options) || wl.w > 56) && window_fits_by_default(wl, options);
}

// The default rule, NHWC: staged where staged_is_default says, else
// channels, which serves every NHWC workload. NCHW: the planes
// algorithm for many small planes (default_is_planes); else the window
// algorithm for large filters (default_is_window); else the rows algorithm
// wherever a row fits one warp's lanes and a band's values fit in registers
// (measured on the H100: 85-97% of the copy bandwidth on MobileNetV2's
// 56x56 and 112x112 layers at batch 64, against 59-79% for the tiles); else
// the tiles algorithm, which serves every shape.
const Algorithm& default_algorithm(const Workload& wl, const PlanOptions& options) {
  if (wl.layout == Layout::kNHWC) return staged_is_default(wl, options) ? kStaged : kChannels;
  if (default_is_planes(wl, options)) return kPlanes;
  if (default_is_window(wl, options)) return kWindow;
  if (rows_fits_by_default(wl, options)) return kRows;
  return kTiles;
}

std::string epilogue_suffix(const Workload& wl) {
  std::string s = ops::epilogue_name_part(wl);
  if (wl.activation != Activation::kNone) s += to_string(wl.activation);
  return s.empty() ? "" : "_" + s;
}

std::string kernel_name(const Workload& wl) {
  using ops::pair_name;
  std::string name = "dw_" + ops::storage_name(wl) + "_n" + (wl.n == 0 ? std::string("any") : num(wl.n)) + "_c" + num(wl.c) + "_h" +
                     num(wl.h) + "_w" + num(wl.w) + "_k" + num(wl.kh) + "x" + num(wl.kw) + "_s" +
                     pair_name(wl.stride_h, wl.stride_w) + "_p" + ops::padding_name(wl);
  if (wl.dilation_h != 1 || wl.dilation_w != 1) name += "_d" + pair_name(wl.dilation_h, wl.dilation_w);
  name += "_m" + num(wl.multiplier) + epilogue_suffix(wl);
  return name;
}

void plan_cost(const Workload& wl, const PlanOptions& options, KernelPlan& p) {
  const long long n = p.cost_batch;
  p.bytes_read = ops::element_bytes(wl) * (n * wl.c * wl.h * wl.w + static_cast<long long>(p.out_channels) * wl.kh * wl.kw +
                        static_cast<long long>(p.out_channels) * epilogue_params(wl));
  p.bytes_written = 1LL * ops::element_bytes(wl) * n * p.out_channels * p.out_h * p.out_w;
  p.floor_us = static_cast<double>(p.bytes_read + p.bytes_written) / (options.copy_bandwidth_tbps * 1e6);
}

void template_values(const KernelPlan& p, TemplateValues& v) {
  const Schedule& s = p.schedule;
  v["multiplier"] = static_cast<long long>(p.workload.multiplier);
  const Workload& wl = p.workload;
  v["problem_fields"] = ops::problem_fields(wl, {{"multiplier", num(wl.multiplier)}});
  // The tensors' shapes in memory order, for the kernel's header.
  const std::string c = num(wl.c), oc = num(p.out_channels);
  const bool nchw = wl.layout == Layout::kNCHW;
  v["input_shape"] = nchw ? "[N, " + c + ", " + num(wl.h) + ", " + num(wl.w) + "]"
                          : "[N, " + num(wl.h) + ", " + num(wl.w) + ", " + c + "]";
  v["filter_shape"] = nchw ? "[" + oc + ", 1, " + num(wl.kh) + ", " + num(wl.kw) + "]"
                           : "[" + num(wl.kh) + ", " + num(wl.kw) + ", " + oc + "]";
  v["output_shape"] = nchw ? "[N, " + oc + ", " + num(p.out_h) + ", " + num(p.out_w) + "]"
                           : "[N, " + num(p.out_h) + ", " + num(p.out_w) + ", " + oc + "]";
  const bool input_evict_first = s.at("input_cache") == 1;
  const bool output_evict_first = s.at("output_cache") == 1;
  // The kernels' loads and stores take these as convgen::CacheHint (convgen/element.h).
  v["input_cache_hint"] = std::string(input_evict_first ? "kEvictFirst" : "kNormal");
  v["output_cache_hint"] = std::string(output_evict_first ? "kEvictFirst" : "kNormal");
  v["input_evict_first"] = input_evict_first;
  v["input_cache_description"] =
      std::string(input_evict_first ? "__ldcs: evict first in L1 and L2 (read once, so its lines are reused first)"
                                    : "__ldg: the read-only cache, normal L2 priority");
  v["output_cache_description"] =
      std::string(output_evict_first ? "__stcs: evict first (written once, so its lines are reused first)"
                                     : "plain stores, normal L2 priority");
}

// The L2 eviction priority of a kernel's input loads or output stores:
//   normal:      the default (loads through the read-only cache, __ldg).
//   evict_first: data used once (__ldcs / __stcs): its lines are the first
//                the cache reuses, so that a read-once stream pushes out as
//                few as possible of the lines other data still needs.
// Normal unless the spec asks: evict-first loads measured no faster cold on
// any MobileNetV2 layer at batch 64 and slowed the large ones
// (docs/performance.md); the knobs stay for a tuner.
Knob cache_knob(const char* key, const char* meaning) {
  return Knob::choice(key, {"normal", "evict_first"}, meaning);
}

// Each input channel is its own group of `multiplier` output channels. A
// sum has at most kh*kw products: uniform operands, a bound of kh*kw terms.
oracle::ReferenceProblem reference_problem(const Workload& wl, int n) {
  oracle::ReferenceProblem p = oracle::convolution_geometry(wl, n, wl.out_channels());
  p.groups = wl.c;
  p.filter_taps_first = true;  // NHWC: [kh, kw, c * multiplier]
  return p;
}
// Output channels per input channel: the generated kernels unroll them
// (the limits table, convgen/limits.h).
constexpr int kMaxMultiplier = static_cast<int>(kMultiplierLimit.generated);

}  // namespace

Knob channels_per_block_knob() {
  return Knob::integer("channels_per_block", 1, 256, "adjacent input channels a block takes; must divide c");
}

const Operator kOperator{
    "depthwise_conv2d",
    {{"multiplier", "dilation", false, 1, kMaxMultiplier, false, "output channels per input channel",
      [](Workload& wl, int v) { wl.multiplier = v; }, [](const Workload& wl) { return wl.multiplier; }}},
    {cache_knob("input_cache", "L2 priority of the input loads: normal | evict_first (__ldcs)"),
     cache_knob("output_cache", "L2 priority of the output stores: normal | evict_first (__stcs)")},
    {&kTiles, &kRows, &kPlanes, &kWindow, &kChannels, &kStaged},
    &default_algorithm,
    &kernel_name,
    &plan_cost,
    &template_values,
    {"Depthwise", "depthwise convolution"},
    false,
    &reference_problem,
};

}  // namespace convgen::gen::depthwise
