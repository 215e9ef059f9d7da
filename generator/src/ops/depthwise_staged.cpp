// depthwise_conv2d, algorithm `staged`, for NHWC: a
// block takes channels_per_block adjacent channels of a tile of
// block_tile output rows x columns. It copies the tile's input window (the
// halo and the zero padding included) into shared memory as the input holds
// it, a pixel's channels side by side, with cp.async copies of up to 16
// bytes; then each thread owns one input channel of one output column,
// keeps every tap of its output channels in registers, and slides down the
// tile's rows: each staged value is read once per window column and feeds
// every output row and tap that uses it. No shuffles, and no lane that only
// lends its column, which is what the channels algorithm pays for a wide
// window (docs/performance.md, "the input staged in shared memory").
#include <algorithm>
#include <optional>
#include <vector>

#include "depthwise.hpp"

namespace convgen::gen::depthwise {

namespace {

// Values a thread keeps live: every tap, the accumulators of the output
// rows its window covers at once, one window row and the epilogue's
// parameters (ptxas on sm_90 over tests/cpu/staged_register_sweep.yaml: no
// default schedule spills at this bound; a 7x7 filter of 2 output channels,
// 98 taps, does not fit and runs the channels algorithm).
constexpr int kMaxThreadValues = 96;
// Copies a thread issues per tile; the copy loop is unrolled and its
// addresses stay live, as in the window algorithm.
constexpr int kMaxCopySteps = 32;
// The default tile. Large filters (25 taps or more), from an H100 sweep of
// MobileNetV3's 5x5 and ConvNeXt's 7x7 layers in float16 and float32
// (docs/performance.md): a run of a pixel's channels of at most 80 bytes
// (32 float16 channels, 16 float32: more measured up to 20% slower, except
// where the block would be small), about 128 threads a block (then 4
// columns of float16, 8 of float32, 4-9% faster than twice as many), and
// 28 output rows (the halo is read (rows + kh - 1) / rows times, so taller
// tiles read less; 56 spilled).
constexpr int kLargeFilterTaps = 25;
constexpr int kLargeRunBytes = 80;
constexpr int kLargeBlockThreads = 128;
constexpr int kLargeTileRows = 28;
// Small filters (3x3), from an H100 sweep of 1,400 schedules over
// MobileNetV2's ten 3x3 layers (batch 64 in float16 and float32, batch 1 in
// float16) and the seed's 3x3 layers: runs of up to 128 bytes in multiples
// of 32 (64 float16 channels, 32 float32), 7 or 8 output columns (whichever
// leaves fewer ragged; 224-512 threads a block) and 14 output rows at stride
// 1, 7 at stride 2 (a small window's halo costs little, and smaller tiles
// spread better over the SMs); then fewer rows, halved, while the grid
// holds fewer than two blocks an SM. Within 8% of the fastest schedule swept
// on every layer, and 1.01-1.38x faster (cold) than the channels algorithm.
constexpr int kSmallRunBytes = 128;
constexpr int kSmallTileRows = 14;
constexpr int kSmallMinBlocksPerSm = 2;
// Strided layers whose pixels hold at most 288 bytes, any filter: a block
// takes every channel of a pixel, so that each staged row is one run of
// memory, and 4 columns. On the H100 (float16, 515 schedules): 1.07x
// faster cold on 64x96x112^2 3x3 stride 2, 1.06x on 64x144x56^2 3x3 stride
// 2, 1.16x on 64x72x56^2 5x5 stride 2; at stride 1 it gained 3% at most
// (64x144x56^2) or lost (ConvNeXt's 7x7, MobileNetV3's 28^2 5x5).
constexpr int kWholePixelMaxBytes = 288;
constexpr int kWholePixelColumns = 4;
// Small filters at stride 1 whose pixels hold more than a small-filter run
// and at most 288 bytes (144 float16 channels): whole pixels too, with 3
// columns and 28 rows, where that grid holds kSmallMinBlocksPerSm blocks an
// SM. On the H100 (64x144x56^2 3x3 in float16 and bfloat16, 81 schedules
// each, copy groups included): 1.025-1.038x faster cold than 48 channels
// and [14, 8] (4 columns leave the window over 48 KiB); at batch 1 (38 such
// tiles for 132 SMs) 48 channels stay faster.
constexpr int kWholePixelStride1Columns = 3;
constexpr int kWholePixelStride1Rows = 28;
// float32 takes longer runs than the half types' sweeps chose. On the H200
// (docs/performance.md, "float32 NHWC depthwise: longer runs"): large
// filters in runs of up to 128 bytes (32 channels) ran 1.04-1.17x faster
// cold than in runs of 64 or 80 on six of the seven float32 large-filter
// layers of the benchmark (16x512x14^2 7x7: 4% slower); 144 channels of a
// 3x3 filter in runs of 48 (192 bytes) 1.07-1.08x faster than in 24 (96
// bytes, every other one off a 64-byte boundary). Small filters whose runs
// of the half types' rule are no multiple of 64 bytes take up to 192 bytes
// in multiples of 64, where a divisor of the channels reaches past them and
// the grid stays full; those in 128-byte runs (32 channels) ran 1.03-1.11x
// slower in 192.
constexpr int kLargeRunBytesF32 = 128;
constexpr int kLongRunBytesF32 = 192;
constexpr int kLongRunMultipleF32 = 64;
// Where copies are asynchronous (cp.async: 4 bytes and more) and the grid
// holds at least 4 blocks an SM, a default copies its window in 4 groups of
// rows and computes on each as it lands (2-byte copies are loads and
// stores, complete when issued: one group). On the H100 (float16, the
// eleven MobileNetV2 3x3, MobileNetV3 5x5 and ConvNeXt 7x7 layers furthest
// from the copy rate, each default tile with 1-8 groups): 4 groups ran
// 1.01-1.13x faster cold than one on ten of them and 0.4% slower on the
// eleventh (16x128x56^2 7x7); the best count per layer (2-7) was within 4%
// of 4 groups. In the benchmark, groups on the grids of batch 1 (0.3-2.5
// blocks an SM) ran 0.89-1.02x as fast as one group: little to overlap
// where a block's whole life is one trip to memory.
constexpr int kDefaultCopyGroups = 4;
constexpr int kCopyGroupsMinBlocksPerSm = 4;

struct Staged {
  int channels_per_block = 0;
  int tile_h = 0;       // output rows of a tile
  int tile_w = 0;       // output columns of a tile
  int copy_groups = 1;  // groups of staged rows, copied and waited for one by one
};

// What a staged schedule derives: the template's numbers.
struct StagedShape {
  int staged_rows = 0;     // input rows of a tile (the halo included)
  int staged_columns = 0;  // input columns of a tile
  int copy_bytes = 0;      // of one copy: the widest of 16, 8, 4 and 2 dividing a pixel's run and the pixel stride
  int group_rows = 0;      // staged rows of a copy group (the last one may hold fewer)
  int copy_groups = 0;     // groups that hold staged rows: at most the schedule's
  int group_steps = 0;     // copies a thread issues per group
  int copy_steps = 0;      // copies a thread issues per tile
  int threads = 0;
  int smem_bytes = 0;
  int thread_values = 0;   // values a thread keeps live
};

// The bytes of one copy: the widest of 16, 8, 4 and 2 dividing a block's
// run of a pixel and the pixel stride (a copy starts at a pixel's first
// channel of the block: a multiple of the run past a multiple of the stride).
int copy_bytes(const Workload& wl, int channels_per_block) {
  const int bytes = ops::element_bytes(wl);
  int copy = 16;
  while (copy > bytes && (channels_per_block * bytes % copy != 0 || wl.c * bytes % copy != 0)) copy /= 2;
  return copy;
}

// Whether a thread writes its output rows two at a time, rounded as a pair
// and clamped as one: half types whose activation clamps_after_half_rounding
// (relu, relu6), in tiles of two rows or more. It takes the clamps from two
// FMNMX an output to one HMNMX2 a pair and bound, and one conversion a pair
// (the 192-channel 28^2 3x3 layer with scale, shift and relu6 in float16:
// 48 more instructions a thread than without an epilogue in ptxas's SASS for
// sm_90, of which 28 FMNMX and 14 F2FP).
bool pair_rows(const Workload& wl, const Staged& s) {
  return wl.dtype != DataType::kFloat32 && clamps_after_half_rounding(wl.activation) && s.tile_h >= 2;
}

StagedShape staged_shape(const Workload& wl, const Staged& s) {
  StagedShape r;
  const int bytes = ops::element_bytes(wl);
  r.staged_rows = (s.tile_h - 1) * wl.stride_h + (wl.kh - 1) * wl.dilation_h + 1;
  r.staged_columns = (s.tile_w - 1) * wl.stride_w + (wl.kw - 1) * wl.dilation_w + 1;
  r.copy_bytes = copy_bytes(wl, s.channels_per_block);
  r.threads = s.channels_per_block * s.tile_w;
  r.group_rows = ceil_div(r.staged_rows, std::max(1, s.copy_groups));
  r.copy_groups = ceil_div(r.staged_rows, r.group_rows);
  const int group_copies = r.group_rows * r.staged_columns * (s.channels_per_block * bytes / r.copy_bytes);
  r.group_steps = ceil_div(group_copies, std::max(1, r.threads));
  r.copy_steps = r.copy_groups * r.group_steps;
  r.smem_bytes = r.staged_rows * r.staged_columns * s.channels_per_block * bytes;
  const int window_h = (wl.kh - 1) * wl.dilation_h + 1;
  const int live_rows = std::min(s.tile_h, ceil_div(window_h, wl.stride_h));
  // Paired rows keep one more row's sums until its pair is complete.
  const int held_rows = live_rows + (pair_rows(wl, s) && live_rows < s.tile_h ? 1 : 0);
  r.thread_values = wl.multiplier * (wl.kh * wl.kw + held_rows + epilogue_params(wl)) + wl.kw;
  return r;
}

// Why this schedule does not fit the workload, with the knob to blame; "" if it fits.
struct Misfit {
  std::string key, why;
};
Misfit schedule_misfit(const Workload& wl, const Staged& s, const PlanOptions& options) {
  if (wl.c % s.channels_per_block != 0) {
    return {"channels_per_block", "channels_per_block " + num(s.channels_per_block) + " does not divide the " +
                                      num(wl.c) + " channels"};
  }
  if (s.tile_h > wl.out_h() || s.tile_w > wl.out_w()) {
    return {"block_tile", "block_tile [" + num(s.tile_h) + ", " + num(s.tile_w) + "] is larger than the " +
                              num(wl.out_h()) + " x " + num(wl.out_w()) + " outputs of a plane"};
  }
  const StagedShape r = staged_shape(wl, s);
  if (r.threads > kMaxThreads) {
    return {"channels_per_block", "a block needs " + num(r.threads) + " threads (channels_per_block " +
                                      num(s.channels_per_block) + " x " + num(s.tile_w) + " tile columns); at most " +
                                      num(kMaxThreads)};
  }
  if (r.thread_values > kMaxThreadValues) {
    return {"block_tile", "each thread would keep " + num(r.thread_values) + " values in registers (" +
                              num(wl.multiplier * wl.kh * wl.kw) + " taps, the accumulators of " + num(wl.multiplier) +
                              " output channel(s), a window row, the epilogue's parameters); at most " +
                              num(kMaxThreadValues) + " fit"};
  }
  if (r.copy_steps > kMaxCopySteps) {
    return {"block_tile", "each thread would issue " + num(r.copy_steps) + " copies of " + num(r.copy_bytes) +
                              " bytes per tile (" + num(r.staged_rows) + " x " + num(r.staged_columns) +
                              " pixels of " + num(s.channels_per_block) + " channels over " + num(r.threads) +
                              " threads, in " + num(r.copy_groups) + " group(s) of " + num(r.group_rows) +
                              " rows); at most " + num(kMaxCopySteps) +
                              " fit in registers: use a smaller block_tile or more channels_per_block"};
  }
  if (r.smem_bytes > options.max_shared_bytes) {
    return {"block_tile", "the tile stages " + num(r.smem_bytes) + " bytes of shared memory (" + num(r.staged_rows) +
                              " x " + num(r.staged_columns) + " pixels of " + num(s.channels_per_block) +
                              " channels); at most " + num(options.max_shared_bytes) +
                              " fit: use a smaller block_tile or fewer channels_per_block"};
  }
  return {};
}

bool large_filter(const Workload& wl) { return wl.kh * wl.kw >= kLargeFilterTaps; }
// Blocks of the grid at the workload's declared batch.
long long grid_blocks(const Workload& wl, int channels, int rows, int columns) {
  return 1LL * wl.n * (wl.c / channels) * ceil_div(wl.out_h(), rows) * ceil_div(wl.out_w(), columns);
}

// Whether that grid holds kSmallMinBlocksPerSm blocks for each SM of the
// newest target GPU: the test of every default that trades blocks for
// longer runs or taller tiles.
bool fills_gpu(const Workload& wl, int channels, int rows, int columns, const PlanOptions& options) {
  return grid_blocks(wl, channels, rows, columns) >= 1LL * kSmallMinBlocksPerSm * options.target.newest.sm_count;
}

bool strided(const Workload& wl) { return wl.stride_h > 1 || wl.stride_w > 1; }

// Whether a block takes every channel of a pixel by default: strided layers,
// and small filters at stride 1 past a small-filter run, both of pixels of
// at most kWholePixelMaxBytes (the latter where the grid stays full).
bool whole_pixels(const Workload& wl, const PlanOptions& options) {
  const int pixel_bytes = wl.c * ops::element_bytes(wl);
  if (pixel_bytes > kWholePixelMaxBytes) return false;
  if (strided(wl)) return true;
  if (large_filter(wl) || pixel_bytes <= kSmallRunBytes) return false;
  const int rows = std::min(kWholePixelStride1Rows, wl.out_h());
  const int columns = std::min(kWholePixelStride1Columns, wl.out_w());
  return fills_gpu(wl, wl.c, rows, columns, options);
}

int default_columns(const Workload& wl, int channels, const PlanOptions& options);

// The most channels, dividing the workload's, whose run is at most
// run_bytes and a multiple of the first of `multiples` that one reaches; 0
// if none.
int channels_in_runs(const Workload& wl, int run_bytes, const std::vector<int>& multiples) {
  const int bytes = ops::element_bytes(wl);
  for (int multiple : multiples) {
    for (int c = std::min(wl.c, std::max(1, run_bytes / bytes)); c >= 1; --c) {
      if (wl.c % c == 0 && c * bytes % multiple == 0) return c;
    }
  }
  return 0;
}

// The channels a block takes by default: a whole pixel's (whole_pixels);
// else the most whose run of a pixel is at most the filter size's run
// bytes (large filters in float32: kLargeRunBytesF32) and a multiple of
// the widest copy (32 bytes for small filters, then 16; 16 for large ones)
// that divide the channels (120 channels of float16, large filter: 40);
// else of 4 bytes; else any divisor. Small filters in float32 whose run so
// found is no multiple of 64 bytes take longer runs where they divide the
// channels and the grid stays full (144 channels at batch 64: 48, not 24).
int default_channels(const Workload& wl, const PlanOptions& options) {
  if (whole_pixels(wl, options)) return wl.c;
  const bool f32 = ops::element_bytes(wl) == 4;
  if (large_filter(wl)) return channels_in_runs(wl, f32 ? kLargeRunBytesF32 : kLargeRunBytes, {16, 4, 1});
  const int c = channels_in_runs(wl, kSmallRunBytes, {32, 16, 4, 1});
  if (f32 && c * 4 % kLongRunMultipleF32 != 0) {
    // Only where the grid of the longer runs' blocks, at the usual tile,
    // fills the GPU: at batch 1 the 144 channels of 56^2 in runs of 48 (84
    // blocks) ran 1.08-1.27x slower hot.
    const int longer = channels_in_runs(wl, kLongRunBytesF32, {kLongRunMultipleF32});
    const int rows = std::min(wl.out_h(), std::max(1, kSmallTileRows / wl.stride_h));
    if (longer > c && fills_gpu(wl, longer, rows, default_columns(wl, longer, options), options)) return longer;
  }
  return c;
}

// The default tile columns (at most the plane's): kWholePixelColumns for
// whole pixels; large filters, the power of two nearest kLargeBlockThreads
// / channels, or at stride 1 the whole plane where it is narrower than two
// such tiles; small ones, 7 or 8, whichever leaves fewer ragged columns (8
// on a tie).
int default_columns(const Workload& wl, int channels, const PlanOptions& options) {
  if (whole_pixels(wl, options)) {
    return std::min(strided(wl) ? kWholePixelColumns : kWholePixelStride1Columns, wl.out_w());
  }
  if (!large_filter(wl)) {
    const auto ragged = [&](int columns) { return ceil_div(wl.out_w(), columns) * columns - wl.out_w(); };
    return std::min(ragged(7) < ragged(8) ? 7 : 8, wl.out_w());
  }
  const double ideal = static_cast<double>(kLargeBlockThreads) / channels;
  int columns = 1;
  while (columns * 2 <= ideal * 1.41421356) columns *= 2;  // nearest on a log scale
  // At stride 1, a plane narrower than two such tiles is one: 7 columns in
  // tiles of 4 stage 16 window columns of a 5x5 filter for 7 outputs, one
  // tile 11. On the H200 the half types' 7x7 planes of 5x5 and 7x7 filters
  // ran 1.03-1.12x faster cold so; at stride 2 (the 14x14 5x5 layer of 672
  // channels) 1.06-1.08x slower.
  if (!strided(wl) && wl.out_w() < 2 * columns) return wl.out_w();
  return columns;
}

// The default tile rows (at most the plane's): for large filters at most
// kLargeTileRows, as many in each tile (96 rows: 4 tiles of 24, where 28
// rows left the last tile 12; on the H200 the float32 seed 5x5 layer ran
// 1.08x faster cold); for small ones kSmallTileRows / stride, halved while
// the grid does not fill the GPU (fills_gpu).
int default_rows(const Workload& wl, int channels, int columns, const PlanOptions& options) {
  if (large_filter(wl)) return ceil_div(wl.out_h(), ceil_div(wl.out_h(), kLargeTileRows));
  if (!strided(wl) && whole_pixels(wl, options)) return std::min(wl.out_h(), kWholePixelStride1Rows);
  int rows = std::min(wl.out_h(), std::max(1, kSmallTileRows / wl.stride_h));
  while (rows > 1 && !fills_gpu(wl, channels, rows, columns, options)) rows = ceil_div(rows, 2);
  return rows;
}

// The default schedule, keeping the knobs the spec sets: default_channels,
// default_columns and default_rows; then lower tiles until the shared
// memory, the copies and the registers fit. None if nothing fits.
std::optional<Staged> fit_staged(const Workload& wl, const ScheduleRequest& req, const PlanOptions& options) {
  Staged s;
  s.channels_per_block = req.value("channels_per_block").value_or(default_channels(wl, options));
  s.tile_w = req.value("tile_w").value_or(default_columns(wl, s.channels_per_block, options));
  s.tile_h = req.value("tile_h").value_or(default_rows(wl, s.channels_per_block, s.tile_w, options));
  s.copy_groups = req.value("copy_groups").value_or(copy_bytes(wl, s.channels_per_block) >= 4 ? kDefaultCopyGroups : 1);
  for (;;) {
    if (schedule_misfit(wl, s, options).key.empty()) break;
    if (req.has("tile_h") || s.tile_h == 1) return std::nullopt;
    s.tile_h = std::max(1, s.tile_h * 3 / 4);
  }
  // Small grids copy in one group, which fits wherever more do (a thread's
  // copies only fall).
  const long long few_blocks = 1LL * kCopyGroupsMinBlocksPerSm * options.target.newest.sm_count;
  if (!req.has("copy_groups") && grid_blocks(wl, s.channels_per_block, s.tile_h, s.tile_w) < few_blocks) {
    s.copy_groups = 1;
  }
  return s;
}

void plan(const Workload& wl, const PlanOptions& options, KernelPlan& p) {
  const ScheduleRequest& req = wl.schedule;
  const std::optional<Staged> fit = fit_staged(wl, req, options);
  if (!fit) {
    Staged s{req.value("channels_per_block").value_or(default_channels(wl, options)), req.value("tile_h").value_or(1),
             req.value("tile_w").value_or(1), req.value("copy_groups").value_or(1)};
    Misfit m = schedule_misfit(wl, s, options);
    if (m.key.empty()) m = {"algorithm", "no tile fits with the knobs the spec sets"};
    throw InputError({{req.at(m.key), "the staged algorithm cannot run this workload: " + m.why}});
  }
  const Staged s = *fit;
  const StagedShape r = staged_shape(wl, s);
  // The groups that hold rows: a schedule asking for more groups than
  // staged rows gets one group a row.
  p.schedule.values = {{"channels_per_block", s.channels_per_block},
                       {"tile_h", s.tile_h},
                       {"tile_w", s.tile_w},
                       {"copy_groups", r.copy_groups}};
  const int bytes = ops::element_bytes(wl);
  p.alignment = r.copy_bytes;
  p.threads = r.threads;
  p.block_threads = r.threads;
  p.smem_bytes = r.smem_bytes;
  const int channel_blocks = wl.c / s.channels_per_block;
  const int column_tiles = ceil_div(wl.out_w(), s.tile_w);
  const int row_tiles = ceil_div(wl.out_h(), s.tile_h);
  const long long tiles_per_image = 1LL * channel_blocks * column_tiles * row_tiles;
  p.max_batch = batch_limit(tiles_per_image);  // the launch numbers tiles with an int
  p.values = {
      {"threads_per_block", static_cast<long long>(r.threads)},
      {"channel_blocks", static_cast<long long>(channel_blocks)},
      {"column_tiles", static_cast<long long>(column_tiles)},
      {"row_tiles", static_cast<long long>(row_tiles)},
      {"tiles_per_image", tiles_per_image},
      {"staged_rows", static_cast<long long>(r.staged_rows)},
      {"staged_columns", static_cast<long long>(r.staged_columns)},
      {"copy_bytes", static_cast<long long>(r.copy_bytes)},
      {"copy_elements", static_cast<long long>(r.copy_bytes / bytes)},
      {"copy_groups", static_cast<long long>(r.copy_groups)},
      {"group_rows", static_cast<long long>(r.group_rows)},
      {"grouped_copies", r.copy_groups > 1},
      // cp.async copies 4, 8 or 16 bytes; a lone 2-byte element is loaded and stored.
      {"async_copies", r.copy_bytes >= 4},
      {"out_channels", static_cast<long long>(p.out_channels)},
      {"ragged_tiles", wl.out_h() % s.tile_h != 0 || wl.out_w() % s.tile_w != 0},
      // The bias, or the scale and shift, applied before the taps (the
      // scale folded into them, each sum started at the shift or bias):
      // float32 only. On the H100 it took the float32 rows within 5% of
      // the plain kernel from 24 to 28 of 29, and the half ones from 39 to
      // 34 (docs/performance.md, "The affine step before the taps").
      {"fold_affine", wl.dtype == DataType::kFloat32},
      {"pair_rows", pair_rows(wl, s)},
  };
}

std::string describe(const Schedule& s) {
  std::string d = "channels_per_block " + num(s.at("channels_per_block")) + ", block_tile [" + num(s.at("tile_h")) +
                  ", " + num(s.at("tile_w")) + "]";
  if (s.at("copy_groups") > 1) d += ", copy_groups " + num(s.at("copy_groups"));
  return d;
}

// A block per tile; the kernel takes the tile count.
LaunchDescription launch(const KernelPlan& p) {
  LaunchDescription l;
  l.grid[0].per_image = p.number("tiles_per_image");
  l.block[0] = p.block_threads;
  l.count_per_image = l.grid[0].per_image;
  l.count_of = "tiles";
  return l;
}

}  // namespace

// Wherever the default schedule fits, for filters of 25 taps or more (5x5
// and up), and for smaller ones where its copies move 16 bytes (a pixel's
// channels in whole 16-byte runs). Measured on the H100
// (docs/performance.md, "NHWC, large filters" and "NHWC, 3x3"): 1.2-2.8x
// faster (cold) than channels on ConvNeXt's 7x7 and MobileNetV3's 5x5
// layers in every dtype, whose taps do not fit a lane of channels or whose
// window leaves a third of its lanes only lending; 1.01-1.38x on
// MobileNetV2's and the seed's 3x3 layers (float16 and float32, batch 1 and
// 64), where a channels warp reads 8 columns to write 6. Narrower copies are
// unmeasured: channels keeps them.
bool staged_is_default(const Workload& wl, const PlanOptions& options) {
  const std::optional<Staged> s = fit_staged(wl, ScheduleRequest{}, options);
  return s && (large_filter(wl) || staged_shape(wl, *s).copy_bytes == 16);
}

const Algorithm kStaged{
    "staged",
    &kOperator,
    {channels_per_block_knob(),
     Knob::tuple("block_tile", {"tile_h", "tile_w"}, 1, 256, "[rows, columns]",
                 "output rows x columns of a tile; a thread per column and channel"),
     Knob::integer("copy_groups", 1, 8,
                   "groups the staged rows are copied in; the block computes on a group as soon as it lands")},
    "depthwise_nhwc_staged.cu.mustache",
    &plan,
    &describe,
    &launch,
    {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16},
    {Layout::kNHWC},
};

}  // namespace convgen::gen::depthwise
