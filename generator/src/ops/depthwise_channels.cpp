// depthwise_conv2d, algorithm `channels`, for NHWC: channels are contiguous,
// so a lane owns one vector of channels (up to 16 bytes) of one input
// column, and a warp covers a few adjacent columns x a few adjacent channel
// vectors. Each lane slides down a band of output rows: every input row of
// the band is loaded once, the window's other columns come from the lanes
// beside it by warp shuffle, and each output row is written once its last
// input row is in. No shared memory, no barrier.
#include <algorithm>
#include <optional>
#include <vector>

#include "depthwise.hpp"

namespace convgen::gen::depthwise {

namespace {

// Blocks of 4 warps: on the H100 they ran every layer of a sweep of
// MobileNetV2/V3 and ConvNeXt float16 layers 2-10% faster (cold) than
// blocks of 8, and blocks of 16 were slower still.
constexpr int kDefaultWarpsPerBlock = 4;
constexpr int kMaxVectorBytes = 16;  // the widest load
constexpr int kMaxChannelsPerThread = 16;
constexpr int kDefaultRows = 8;
constexpr int kSectorBytes = 32;  // a warp's run of a pixel's channels fills a memory sector at least
// Values a lane keeps live: its kernel asks for at most 128 registers
// (launch bounds: 512 threads an SM), and indices, pointers and the
// compiler's own take the rest (ptxas on sm_90: no default schedule of
// MobileNetV2's, MobileNetV3's or ConvNeXt's layers, nor of
// tests/cpu/nhwc_register_sweep.yaml, spills at this bound). It admits a
// band of 8 rows for a 3x3 filter with 8-byte vectors of float16 and an
// epilogue (92 values at stride 1, 102 at stride 2), which the H100
// measured 1.16-1.34x faster (cold) than the 4 rows a bound of 88 left
// on MobileNetV2's largest layers.
constexpr int kMaxLaneValues = 102;
// The same where the taps are loaded where they are used: ptxas needs room
// to keep those loads ahead (float32 7x7 bands of 8 rows, counted at 86 and
// 88, spilled 4 and 8 bytes).
constexpr int kMaxLaneValuesTapsLoaded = 84;
constexpr int kMaxLaneValuesAt64 = 40;  // the same at a 64-register cap
// Taps kept in registers when they are at most this many; more (large
// filters) are loaded where they are used, from L1. 50 holds a 5x5 filter
// of 2 channels, which ran MobileNetV3's 5x5 layers 1.2x faster on the
// H100 than with its taps loaded (a 7x7 filter of 2 channels, 98 taps,
// spills).
constexpr int kMaxTapsInRegisters = 50;

struct Channels {
  int channels_per_thread = 0;  // a lane's vector of input channels
  int pixels_per_warp = 0;      // input columns a warp covers (4, 8, 16 or 32)
  int rows_per_thread = 0;      // output rows of a band
};

// Output columns a warp of `pixels` input columns writes: those whose whole
// window lies inside the warp's columns (the others only lend theirs).
int writing_columns(const Workload& wl, int pixels) {
  const int reach = (wl.kw - 1) * wl.dilation_w;
  return pixels > reach ? (pixels - reach - 1) / wl.stride_w + 1 : 0;
}

// The derived shape of a channels schedule.
struct ChannelsShape {
  int groups_per_warp = 0;   // 32 / pixels_per_warp channel vectors
  int outputs_per_warp = 0;  // output columns a warp writes (its other columns only lend)
  int live_rows = 0;         // output rows a lane sums into at once
  bool taps_in_registers = false;
  int lane_values = 0;  // loaded input rows, taps, accumulators, one row's window, epilogue parameters
};

ChannelsShape channels_shape(const Workload& wl, const Channels& s) {
  ChannelsShape shape;
  shape.groups_per_warp = 32 / s.pixels_per_warp;
  shape.outputs_per_warp = writing_columns(wl, s.pixels_per_warp);
  const int window_h = (wl.kh - 1) * wl.dilation_h + 1;
  shape.live_rows = std::min(s.rows_per_thread, ceil_div(window_h, wl.stride_h));
  const int outputs = s.channels_per_thread * wl.multiplier;
  shape.taps_in_registers = wl.kh * wl.kw * outputs <= kMaxTapsInRegisters;
  // Taps loaded where they are used: the compiler keeps about two filter
  // rows' worth in flight (ptxas on sm_90 over the 5x5 to 11x11 filters of
  // tests/cpu/nhwc_register_sweep.yaml).
  const int taps = (shape.taps_in_registers ? wl.kh * wl.kw : 2 * wl.kw) * outputs;
  const int in_rows = (s.rows_per_thread - 1) * wl.stride_h + (wl.kh - 1) * wl.dilation_h + 1;
  // Every input row of the band is in flight at once, as loaded (4-byte
  // registers of elements).
  const int loaded = in_rows * ceil_div(s.channels_per_thread * ops::element_bytes(wl), 4);
  shape.lane_values = loaded + taps + shape.live_rows * outputs + (wl.kw + 1) * s.channels_per_thread +
                      epilogue_params(wl) * outputs;
  return shape;
}

// Why this schedule cannot run the workload; "" if it can.
std::string channels_misfit(const Workload& wl, const Channels& s) {
  const int bytes = ops::element_bytes(wl);
  if (wl.c % s.channels_per_thread != 0) {
    return "channels_per_thread " + num(s.channels_per_thread) + " does not divide the " + num(wl.c) +
           " channels (a lane's channels are one vector of a pixel)";
  }
  if (s.channels_per_thread * bytes > kMaxVectorBytes) {
    return "channels_per_thread " + num(s.channels_per_thread) + " of " + to_string(wl.dtype) + " is " +
           num(s.channels_per_thread * bytes) + " bytes; a load moves at most " + num(kMaxVectorBytes);
  }
  const ChannelsShape shape = channels_shape(wl, s);
  if (shape.outputs_per_warp < 1) {
    return "pixels_per_warp " + num(s.pixels_per_warp) + " does not hold one output's window, " +
           num((wl.kw - 1) * wl.dilation_w + 1) + " columns wide";
  }
  const int bound = shape.taps_in_registers ? kMaxLaneValues : kMaxLaneValuesTapsLoaded;
  if (shape.lane_values > bound) {
    return "each lane would keep " + num(shape.lane_values) + " values in registers (the band's input rows, " +
           (shape.taps_in_registers ? "every tap" : "a filter row's taps") + ", " + num(shape.live_rows) +
           " output row(s) of accumulators, a window row and the epilogue's parameters, for " +
           num(s.channels_per_thread * wl.multiplier) + " output channels); at most " + num(bound) + " fit";
  }
  return "";
}

// The default pixels per warp for a vector: the fewest columns (so the most
// channel vectors) whose run of a pixel's channels fills a sector, but no
// more vectors than the pixel has, and columns enough that the window
// leaves at least half of them writing outputs; below 16 columns, three
// quarters (a 5x5 filter's 8 columns write 4: on the H100, 16 columns ran
// two of MobileNetV3's three 5x5 layers 1.07x and 1.24x faster, the 14x14
// one 7% slower).
int default_pixels(const Workload& wl, int channels) {
  const int run = channels * ops::element_bytes(wl);
  int groups = std::clamp(kSectorBytes / run, 1, 32);
  groups = std::min(groups, pow2_at_least(wl.c / channels));
  int pixels = 32 / groups;
  while (pixels < 32 && writing_columns(wl, pixels) < std::max(1, pixels / (2 * wl.stride_w))) pixels *= 2;
  if (pixels < 16 && 4 * writing_columns(wl, pixels) < 3 * std::max(1, pixels / wl.stride_w)) pixels *= 2;
  while (pixels < 32 && writing_columns(wl, pixels) < 1) pixels *= 2;
  return pixels;
}

// The default schedule, keeping the knobs the spec sets: the tallest band
// of 8, 4, 2 or 1 output rows that fits (an input row is read by (rows +
// window - 1) / rows bands instead of by each row of its window: the band's
// height counted most in the H100's measurements), with the widest vector
// of channels of 8 bytes or more that divides the channels and fits in
// registers (then narrower vectors), and its default pixels per warp. None
// when nothing fits.
std::optional<Channels> fit_channels(const Workload& wl, const ScheduleRequest& req) {
  const int bytes = ops::element_bytes(wl);
  const int widest = std::min(kMaxChannelsPerThread, kMaxVectorBytes / bytes);
  const std::vector<int> rows = req.has("rows_per_thread") ? std::vector<int>{*req.value("rows_per_thread")}
                                                           : std::vector<int>{kDefaultRows, 4, 2, 1};
  for (int band : rows) {
    for (bool wide : {true, false}) {
      for (int channels = widest; channels >= 1; channels /= 2) {
        if (req.has("channels_per_thread") && channels != *req.value("channels_per_thread")) continue;
        if (wide != (channels * bytes >= 8)) continue;
        Channels s{channels, req.value("pixels_per_warp").value_or(default_pixels(wl, channels)),
                   std::min(band, wl.out_h())};
        if (channels_misfit(wl, s).empty()) return s;
      }
    }
  }
  return std::nullopt;
}

void plan(const Workload& wl, const PlanOptions&, KernelPlan& p) {
  const ScheduleRequest& req = wl.schedule;
  if (req.value("rows_per_thread").value_or(1) > wl.out_h()) {
    throw InputError({{req.at("rows_per_thread"), "rows_per_thread " + num(*req.value("rows_per_thread")) +
                                                      " is more than the " + num(wl.out_h()) + " output rows"}});
  }
  const std::optional<Channels> fit = fit_channels(wl, req);
  if (!fit) {
    const int channels = req.value("channels_per_thread").value_or(1);
    const Channels s{channels, req.value("pixels_per_warp").value_or(default_pixels(wl, channels)),
                     req.value("rows_per_thread").value_or(1)};
    std::string key = "channels_per_thread";
    for (const char* k : {"channels_per_thread", "pixels_per_warp", "rows_per_thread"}) {
      if (req.has(k)) key = k;
    }
    throw InputError({{req.at(key), "the channels algorithm cannot run this workload: " + channels_misfit(wl, s) +
                                        "; use fewer channels_per_thread or rows_per_thread, or more "
                                        "pixels_per_warp"}});
  }
  const Channels s = *fit;
  const int warps_per_block = req.value("warps_per_block").value_or(kDefaultWarpsPerBlock);
  p.schedule.values = {{"channels_per_thread", s.channels_per_thread},
                       {"pixels_per_warp", s.pixels_per_warp},
                       {"rows_per_thread", s.rows_per_thread},
                       {"warps_per_block", warps_per_block}};
  const ChannelsShape shape = channels_shape(wl, s);
  const int groups = wl.c / s.channels_per_thread;  // channel vectors of a pixel
  const int group_blocks = ceil_div(groups, shape.groups_per_warp);
  const int column_blocks = ceil_div(wl.out_w(), shape.outputs_per_warp);
  const int bands = ceil_div(wl.out_h(), s.rows_per_thread);
  const int vector_bytes = s.channels_per_thread * ops::element_bytes(wl);
  p.alignment = vector_bytes;
  p.threads = 32 * warps_per_block;
  p.block_threads = p.threads;
  // The launch numbers warps with an int.
  const long long warps_per_image = 1LL * group_blocks * column_blocks * bands;
  p.max_batch = batch_limit(warps_per_image);
  p.values = {
      {"threads_per_block", static_cast<long long>(p.block_threads)},
      {"groups", static_cast<long long>(groups)},
      {"groups_per_warp", static_cast<long long>(shape.groups_per_warp)},
      {"group_blocks", static_cast<long long>(group_blocks)},
      {"outputs_per_warp", static_cast<long long>(shape.outputs_per_warp)},
      {"column_blocks", static_cast<long long>(column_blocks)},
      {"bands", static_cast<long long>(bands)},
      {"warps_per_image", warps_per_image},
      {"vector_bytes", static_cast<long long>(vector_bytes)},
      {"warp_run_bytes", static_cast<long long>(vector_bytes * shape.groups_per_warp)},
      {"out_channels", static_cast<long long>(p.out_channels)},
      {"taps_in_registers", shape.taps_in_registers},
      // __launch_bounds__ minimum blocks per SM: caps registers at 64 where
      // the lane's values leave room (twice the warps an SM keeps), else 128.
      {"min_blocks", static_cast<long long>(std::max(1, (shape.lane_values <= kMaxLaneValuesAt64 ? 1024 : 512) /
                                                            p.block_threads))},
  };
}

std::string describe(const Schedule& s) {
  return "channels_per_thread " + num(s.at("channels_per_thread")) + ", pixels_per_warp " +
         num(s.at("pixels_per_warp")) + ", rows_per_thread " + num(s.at("rows_per_thread")) + ", warps_per_block " +
         num(s.at("warps_per_block"));
}

Knob channels_knob() {
  Knob k = Knob::integer("channels_per_thread", 1, kMaxChannelsPerThread,
                         "input channels a lane owns: one vector of a pixel, at most 16 bytes");
  k.allowed = {1, 2, 4, 8, 16};
  k.rule_note = "(a power of two: one load)";
  return k;
}

Knob pixels_knob() {
  Knob k = Knob::integer("pixels_per_warp", 4, 32, "input columns a warp covers; 32 / it channel vectors each");
  k.allowed = {4, 8, 16, 32};
  k.rule_note = "(divides the warp)";
  return k;
}

// Warps in blocks of warps_per_block; the kernel takes the warp count.
LaunchDescription launch(const KernelPlan& p) {
  LaunchDescription l;
  l.grid[0].per_image = p.number("warps_per_image");
  l.grid[0].per_block = p.schedule.at("warps_per_block");
  l.block[0] = p.block_threads;
  l.count_per_image = p.number("warps_per_image");
  l.count_of = "warps";
  return l;
}

}  // namespace

const Algorithm kChannels{
    "channels",
    &kOperator,
    {channels_knob(), pixels_knob(),
     Knob::integer("rows_per_thread", 1, 32, "output rows of the band a lane slides down"),
     Knob::integer("warps_per_block", 1, 32, "warps per block")},
    "depthwise_nhwc.cu.mustache",
    &plan,
    &describe,
    &launch,
    {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16},
    {Layout::kNHWC},
};

}  // namespace convgen::gen::depthwise
