// depthwise_conv2d, algorithm `planes`, for many small planes: each lane
// owns a whole plane. A warp copies its 32 planes (one contiguous run) into
// shared memory, each lane computes its plane from there, and the warp
// copies the outputs out.
#include <optional>

#include "depthwise.hpp"

namespace convgen::gen::depthwise {

namespace {

constexpr int kDefaultWarpsPerBlock = 2;
constexpr int kPlanesMaxPlane = 64;  // input values per plane
constexpr int kPlanesMinWarpsPerSm = 4;

// The derived shape of a planes schedule. Whatever the dtype, the planes
// sit in shared memory as floats (converted on the way in and out).
struct PlanesShape {
  int in_stride = 0;    // floats between two lanes' input planes in shared memory (odd)
  int out_stride = 0;   // and between their output planes
  int warp_bytes = 0;   // shared memory one warp stages: 32 input and 32 output planes
  int lane_values = 0;  // values a lane keeps live: one input row, taps, epilogue parameters, one output row
};

PlanesShape planes_shape(const Workload& wl) {
  PlanesShape r;
  const int in_plane = wl.h * wl.w;
  const int out_planes = wl.multiplier * wl.out_h() * wl.out_w();
  r.in_stride = in_plane | 1;
  r.out_stride = out_planes | 1;
  r.warp_bytes = 32 * 4 * (r.in_stride + r.out_stride);
  r.lane_values = wl.w + wl.multiplier * (wl.kh * wl.kw + epilogue_params(wl) + wl.out_w());
  return r;
}

// Why `warps` warps of the planes algorithm cannot run this workload; "" if they can.
std::string planes_misfit(const Workload& wl, int warps, const PlanOptions& options) {
  const PlanesShape r = planes_shape(wl);
  if (static_cast<long long>(r.warp_bytes) * warps > options.max_shared_bytes) {
    return num(warps) + " warp(s) of 32 planes (" + num(wl.h) + "x" + num(wl.w) + " in, " +
           num(wl.multiplier) + " x " + num(wl.out_h()) + "x" + num(wl.out_w()) + " out) stage " +
           num(r.warp_bytes * warps) + " bytes of shared memory; at most " + num(options.max_shared_bytes) + " fit";
  }
  if (r.lane_values > kMaxLaneValues) {
    return "each lane would keep " + num(r.lane_values) + " values in registers (an input row of " + num(wl.w) +
           ", " + num(wl.multiplier) + " x (" + num(wl.kh * wl.kw) + " taps, " + num(epilogue_params(wl)) +
           " epilogue parameters and an output row of " + num(wl.out_w()) + ")); at most " + num(kMaxLaneValues) +
           " fit";
  }
  return "";
}

// The most warps per block (up to 2) whose shared memory fits; the given
// knob is kept as it is. None when nothing fits.
std::optional<int> fit_warps(const Workload& wl, std::optional<int> warps_per_block, const PlanOptions& options) {
  for (int warps = warps_per_block.value_or(kDefaultWarpsPerBlock); warps >= 1; --warps) {
    if (planes_misfit(wl, warps, options).empty()) return warps;
    if (warps_per_block) break;
  }
  return std::nullopt;
}

void plan(const Workload& wl, const PlanOptions& options, KernelPlan& p) {
  const ScheduleRequest& req = wl.schedule;
  const std::optional<int> warps = fit_warps(wl, req.value("warps_per_block"), options);
  if (!warps) {
    throw InputError({{req.at("warps_per_block"), "the planes algorithm cannot run this workload: " +
                                                      planes_misfit(wl, req.value("warps_per_block").value_or(1), options) +
                                                      "; use algorithm: rows or tiles"}});
  }
  p.schedule.values = {{"warps_per_block", *warps}};
  // A lane's input and output planes sit in shared memory at strides made
  // odd (conflict-free). The copies in and out move 16 bytes at a time when
  // the plane needs no such padding (one run of planes), else one element.
  // (Pairs of 2-byte elements for even planes made ptxas spill a 6x6 5x5
  // float16 kernel that single elements do not: tests/cpu/half_register_sweep.yaml.)
  const PlanesShape shape = planes_shape(wl);
  const int in_plane = wl.h * wl.w;
  const int out_planes = wl.multiplier * wl.out_h() * wl.out_w();
  const bool vector_copy_in = shape.in_stride == in_plane;
  const bool vector_copy_out = shape.out_stride == out_planes;
  const int element_bytes = ops::element_bytes(wl);
  const int in_copy = vector_copy_in ? 16 / element_bytes : 1;  // elements per copy
  const int out_copy = vector_copy_out ? 16 / element_bytes : 1;
  p.smem_bytes = shape.warp_bytes * *warps;
  p.alignment = vector_copy_in || vector_copy_out ? 16 : element_bytes;
  p.threads = 32 * *warps;
  p.block_threads = p.threads;
  p.max_batch = batch_limit(wl.c);  // the launch numbers input planes with an int
  p.values = {
      {"threads_per_block", static_cast<long long>(32 * *warps)},
      {"planes_per_block", static_cast<long long>(32 * *warps)},
      {"in_stride", static_cast<long long>(shape.in_stride)},
      {"out_stride", static_cast<long long>(shape.out_stride)},
      {"vector_copy_in", vector_copy_in},
      {"vector_copy_out", vector_copy_out},
      {"in_copy", static_cast<long long>(in_copy)},
      {"out_copy", static_cast<long long>(out_copy)},
      {"in_copies_per_lane", static_cast<long long>(ceil_div(in_plane, in_copy))},
      {"out_copies_per_lane", static_cast<long long>(ceil_div(out_planes, out_copy))},
      {"copy_in_description",
       std::string(vector_copy_in ? "16-byte loads" : "one element a load (the planes are padded to an odd stride)")},
      {"copy_out_description",
       std::string(vector_copy_out ? "16-byte stores" : "one element a store (the planes are padded to an odd stride)")},
  };
}

std::string describe(const Schedule& s) { return "warps_per_block " + num(s.at("warps_per_block")); }

// A lane per plane; the kernel takes the plane count.
LaunchDescription launch(const KernelPlan& p) {
  LaunchDescription l;
  l.grid[0].per_image = p.workload.c;
  l.grid[0].per_block = p.number("planes_per_block");
  l.block[0] = p.block_threads;
  l.count_per_image = p.workload.c;
  l.count_of = "planes";
  return l;
}

}  // namespace

// Planes of at most kPlanesMaxPlane values, where one lane's serial work
// stays short, and at the declared batch enough planes to give every SM of
// the newest GPU of the library's list (an H100 for sm_90)
// kPlanesMinWarpsPerSm warps (at batch 1 the rows algorithm spreads a few
// planes over many more lanes and wins).
bool default_is_planes(const Workload& wl, const PlanOptions& options) {
  const long long planes = static_cast<long long>(wl.n == 0 ? 1 : wl.n) * wl.c;
  return wl.h * wl.w <= kPlanesMaxPlane && planes >= 32LL * kPlanesMinWarpsPerSm * options.target.newest.sm_count &&
         fit_warps(wl, std::nullopt, options).has_value();
}

const Algorithm kPlanes{
    "planes",
    &kOperator,
    {Knob::integer("warps_per_block", 1, 32, "warps per block; a warp stages 32 input and 32 output planes")},
    "depthwise_nchw_planes.cu.mustache",
    &plan,
    &describe,
    &launch,
    {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16},
};

}  // namespace convgen::gen::depthwise
