// conv2d, algorithm `pointwise`: float16/bfloat16 NHWC 1x1 convolutions
// with stride 1 and no padding, and float32 NHWC ones with math tf32, on
// tensor cores, for layers with few input channels, where writing the
// output bounds the time.
//
// Such a layer is the GEMM out[pixels, c_out] = input[pixels, c] x
// filter[c, c_out] with a small K = c (the default rule's: 8 to 40, up to 240
// for narrow outputs and 96 for expansions of 6 times or more in half
// precision; any multiple of 8 whose tiles fit, when a spec names the
// algorithm): a few dozen to a few hundred flops per output element. Each warp
// owns its tiles of 16 pixels x channel_tile output channels and walks
// tiles_per_warp of them with no block-wide barrier: it copies a tile's input
// into its own ring of `stages` shared-memory buffers (cp.async, the next
// tiles in flight while it computes), multiplies it by the block's filter rows
// (ldmatrix, mma.sync m16n8k16, or m16n8k8 of float32 operands rounded to
// TF32; fp32 sums), applies the epilogue in fp32 on the accumulators, converts
// them to the dtype in its staging tile, and writes the tile with 16-byte
// stores: one contiguous run of 16 x c_out elements where the tile covers
// every output channel. So the epilogue of one warp runs while the other
// warps' copies and stores are in flight, which implicit_gemm's block-wide
// epilogue through a tile of floats does not allow (docs/performance.md, "Thin
// 1×1 layers: the pointwise algorithm").
//
// It needs mma.sync (m16n8k16 of fp16 and bf16, m16n8k8 of tf32) and
// cp.async: sm_80 and newer. A library built for an older GPU too compiles an empty body
// there, and the runtime runs the generic kernel on such a GPU.
#include <algorithm>
#include <cmath>

#include "conv2d.hpp"

namespace convgen::gen::conv2d {

namespace {

constexpr int kTilePixels = 16;      // mma.sync's M: the pixels of a warp's tile
constexpr int kVectorBytes = 16;     // every copy and store moves 16 bytes
constexpr int kMaxChannelTile = 256;  // 128 accumulators a thread
// The default rule's most input channels: on the H100, pointwise ran 1.1 to
// 1.8 times faster than implicit_gemm on every batch-64 layer of 16 to 40
// input channels measured, and within 0.1 us at batch 1; at 64 channels it
// won on 64 -> 64 but lost on 64 -> 256 and 64 -> 384 (1.07 and 1.3 times
// slower: too few tiles a warp to hide its copies; docs/performance.md,
// "Thin 1×1 layers: the `pointwise` algorithm").
constexpr int kMaxDefaultChannels = 40;
// Narrow outputs take it too, from deeper inputs: on the H200, 96 -> 24 and
// 144 -> 24 on 56^2 ran 1.43 and 1.37 times faster hot than implicit_gemm at
// batch 64, 96 -> 24 1.39 times at batch 1 (docs/performance.md, "pointwise
// on narrow outputs"). The deepest input measured bounds the rule.
constexpr int kMaxDefaultNarrowOutputs = 24;
constexpr int kMaxDefaultNarrowInputs = 144;
// In float16 and bfloat16, outputs of up to 40 channels from inputs of up to
// 240 too, once the epilogue read its parameters once a channel pair: on the
// H200 at batch 64 on 28^2, MobileNetV2's 144 -> 32 and 192 -> 32,
// EfficientNet-B0's 144 -> 40 and 240 -> 40 and MobileNetV3-Large's 72 -> 40
// and 120 -> 40 ran 0.71 to 1.01 times implicit_gemm's time with 3 tiles a
// warp, and at batch 1 0.74 to 0.89 times with one; in float32 (math tf32)
// they lost on two of the six at batch 64 and four of five at batch 1
// (docs/performance.md, "`pointwise`'s epilogue in two phases, and outputs
// of 32 and 40 channels"). Their tiles a warp: the nearest count to the
// tiles over kNarrowWarpsPerSm warps an SM. 3 beat the thin layers' power
// of two (2) by 1.06 to 1.29 times at batch 64 (3,136 tiles: 262 blocks, 2
// on all but two SMs; with 2, three of the six were slower than
// implicit_gemm; 4 leaves 1.48 blocks an SM, uneven). The narrow layers of
// up to 24 outputs from 41 to 144 inputs take them too: on the H100 at
// batch 64 on 56^2, 96 -> 24 and 144 -> 24 ran 0.90 to 0.96 times the time
// of the power of two (fused and plain, both dtypes), and 96 -> 24 at
// batch 1 the same; thin inputs keep the power of two (32 -> 16 on 112^2
// ran 1.02 times slower with 8 warps an SM; docs/performance.md, "Narrow
// outputs of deeper inputs in 8 warps an SM").
constexpr int kMaxDefaultNarrowHalfOutputs = 40;
constexpr int kMaxDefaultNarrowHalfInputs = 240;
constexpr int kNarrowWarpsPerSm = 8;
// Those warps in one block an SM where they take at least 3 tiles each: at
// batch 64 on 28^2 (3,136 tiles: 131 blocks of 8 warps of 3 tiles), the six
// layers above ran 0.84 to 0.89 times the time of 2 blocks of 4 warps an SM
// in float16 and bfloat16, hot and cold: the filter rows and parameters
// copied once an SM, not twice (sweeps 30 and 31, H200; 6 warps of 4 and
// 12 of 2 within 4% of it but for two layers). At batch 1 (one tile a
// warp) blocks of 8 warps ran 1.09 to 1.15 times slower than blocks of 4;
// between the two (1 to 2.5 tiles a warp) blocks of 4 are kept, not
// measured. A library whose tightest GPU holds fewer warps' rings (sm_86's
// 99 KiB from 192 input channels) halves them back to 4.
constexpr int kNarrowBlockWarps = 8;
constexpr double kNarrowBlockMinTiles = 2.5;
// Float32 (math tf32) takes the same layers, thin ones only where they make
// at least one tile for each of the rule's warps: on the H200 pointwise ran
// MobileNetV2's 16 -> 96, 24 -> 144, 32 -> 192 and 96 -> 24 at batch 64 in
// 0.69 to 0.89 times the time of the kernel the rule gave them before
// (implicit_gemm, implicit_gemm_sm90 on 32 -> 192), 96 -> 24 at batch 1 in
// 0.81 times; but 16 -> 96 at batch 1 (0.37 tiles a warp) in 1.26 times
// (docs/performance.md, "`pointwise` in float32").
// The default rule's most output channels a tile: 144 ran 1.4 times faster
// in one tile than in two of 72 (24 -> 144), 192 and 240 faster in two
// tiles (1.3 and 1.8 times: 96 and 120 accumulators a thread spill less).
constexpr int kMaxDefaultChannelTile = 144;
// In float16 and bfloat16, every layer but the narrow ones below (the
// thin ones, the expansions, and those a spec names the algorithm for) in
// tiles of at most 96 channels past that one tile, in a grid of one wave
// of two blocks an SM: on the H200 at batch 64 (convgen tune, 84 to 94
// candidates a kernel) the fastest schedules of MobileNetV2's 16 -> 96,
// 24 -> 144, 64 -> 384 and 96 -> 576 were all 262 to 264 blocks (1.98 to
// 2.00 an SM) of 3 or 4 warps, and those of 1.7, 2.2, 3 or 4 blocks an SM
// ran 1.03 to 1.3 times slower; 384, 576 and 960 outputs ran fastest in
// tiles of 96 (docs/performance.md, "`pointwise` in one wave of two blocks
// an SM").
constexpr int kMaxDefaultHalfChannelTile = 96;
// Thin layers without a residual narrower still, in float16 and bfloat16:
// tiles of at most 64 where they cover c_out in no more columns than the
// tiles of 96 do. On the H100, 32 -> 192 on 28^2 ran fused in 0.93 to 0.95
// times the time of 96-wide tiles at batch 64 and 0.89 to 0.91 at batch 1
// (64 accumulators a pixel, not 96: fewer registers, so more warps can be
// resident); with a residual it ran 1.12 times slower, and
// EfficientNet-B0's 40 -> 240, whose 4 tiles of 64 cover 256 columns, 1.12
// times slower without an epilogue (docs/performance.md, "Thin layers'
// channel tiles of 64 past one of 144").
constexpr int kMaxDefaultThinHalfChannelTile = 64;
constexpr int kHalfBlocksPerSm = 2;
// Half-precision layers that expand their input 6 times or more, from
// more than the thin layers' 40 channels up to 96, take pointwise too where
// every warp of two blocks of 4 an SM gets a tile: in that tuning 64 -> 384
// and 96 -> 576 on 14^2 ran 0.72 and 0.90 times the time of implicit_gemm,
// the kernel the rule gave them. Not from 160: 160 -> 960 on 7^2 ran 0.96
// times only in blocks of 8 warps of 2 tiles, and the rule's 4 warps of 2
// spill on sm_90 (4 bytes at 128 registers); 320 -> 1280 1.38 times slower.
constexpr int kMaxDefaultExpandInputs = 96;
constexpr int kMinDefaultExpansion = 6;
constexpr int kDefaultWarps = 4;
constexpr int kDefaultStages = 2;
// Warps the default rule aims to give each SM: tiles_per_warp is the power
// of two nearest to the tiles over (SMs x this).
constexpr int kDefaultWarpsPerSm = 16;
constexpr int kMaxDefaultTilesPerWarp = 32;

struct Pointwise {
  int channel_tile = 0;   // output channels of a warp's tile
  int warps = 0;          // warps of a block
  int tiles_per_warp = 0;  // tiles each warp computes, one after another
  int stages = 0;         // input tiles of a warp's ring (stages - 1 in flight)
};

struct PointwiseShape {
  int mma_k;          // mma.sync's K: 32 bytes of elements (16 half, 8 float)
  int k_pad;          // c rounded up to mma_k (zeros past c)
  int input_pitch;    // elements between rows of an input tile and of the filter
  int output_pitch;   // elements between rows of the staging tile
  int channel_tiles;  // tiles across c_out (grid.y)
  int block_pixels;   // pixels of a block's tiles
  int filter_bytes;   // the block's filter rows, of its smem_bytes
  int smem_bytes;
};

// Rows of 16-byte units: an input and filter row is k_pad and 16 bytes, so
// that ldmatrix's 8 rows of 16 bytes fall on distinct banks; a staging row
// is 8 elements more than a multiple of 16 (channel_tile + 8 or + 16), so
// that the rows one accumulator store touches are on distinct banks (8 rows
// of 2-byte pairs, 4 words past a multiple of 8 words; or, in each half of
// the warp, 4 rows of float pairs, 8 words past a multiple of 16).
PointwiseShape pointwise_shape(const Workload& wl, const Pointwise& s) {
  PointwiseShape g{};
  const int element_bytes = ops::element_bytes(wl);
  g.mma_k = mma_sync_k(wl);
  g.k_pad = ceil_div(wl.c, g.mma_k) * g.mma_k;
  g.input_pitch = g.k_pad + kVectorBytes / element_bytes;
  g.output_pitch = s.channel_tile + ((s.channel_tile / 8) % 2 == 0 ? 8 : 16);
  g.channel_tiles = ceil_div(wl.c_out, s.channel_tile);
  g.block_pixels = kTilePixels * s.warps * s.tiles_per_warp;
  g.filter_bytes = s.channel_tile * g.input_pitch * element_bytes;
  const int epilogue_bytes = 2 * s.channel_tile * 4;  // fp32 parameters
  const int warp_bytes = (s.stages * kTilePixels * g.input_pitch + kTilePixels * g.output_pitch) * element_bytes;
  g.smem_bytes = g.filter_bytes + epilogue_bytes + s.warps * warp_bytes;
  return g;
}

// The default rule's tile across c_out: one up to 144 channels, else equal
// tiles of at most 144 (float16 and bfloat16: of at most 96, and of at most
// 64 on thin layers without a residual where those cover no more columns).
int default_channel_tile(const Workload& wl) {
  if (wl.c_out <= kMaxDefaultChannelTile) return round_up(wl.c_out, 8);
  if (wl.dtype == DataType::kFloat32) return equal_channel_tile(wl.c_out, kMaxDefaultChannelTile);
  const int half = equal_channel_tile(wl.c_out, kMaxDefaultHalfChannelTile);
  if (wl.c > kMaxDefaultChannels || wl.residual) return half;
  const int thin = equal_channel_tile(wl.c_out, kMaxDefaultThinHalfChannelTile);
  const auto columns = [&](int tile) { return ceil_div(wl.c_out, tile) * tile; };
  return columns(thin) <= columns(half) ? thin : half;
}

// The batch's tiles of 16 pixels (a tile's rows).
long long pixel_tiles(const Workload& wl, int batch) {
  return ceil_div(1LL * batch * wl.out_h() * wl.out_w(), 1LL * kTilePixels);
}

// The tiles each warp would walk with warps_per_sm warps on every SM of the
// library's newest GPU.
double tiles_a_warp(const Workload& wl, const PlanOptions& options, int batch, int channel_tile,
                    int warps_per_sm = kDefaultWarpsPerSm) {
  const long long tiles = pixel_tiles(wl, batch) * ceil_div(wl.c_out, channel_tile);
  return static_cast<double>(tiles) / (std::max(1, options.target.newest.sm_count) * warps_per_sm);
}

// The layers the rule takes for their narrow output in every dtype.
bool narrow(const Workload& wl) {
  return wl.c_out <= kMaxDefaultNarrowOutputs && wl.c <= kMaxDefaultNarrowInputs;
}

// The layers of up to 40 outputs from inputs deeper than the thin layers'
// 40 (up to 240) in half precision: the rule takes those of more than 24
// outputs or inputs deeper than 144 for their narrow output alone, and
// gives all of them about 8 warps an SM.
bool narrow_half(const Workload& wl) {
  return wl.dtype != DataType::kFloat32 && wl.c > kMaxDefaultChannels && wl.c <= kMaxDefaultNarrowHalfInputs &&
         wl.c_out <= kMaxDefaultNarrowHalfOutputs;
}

// The layers the rule takes in half precision for expanding their input.
bool expand_half(const Workload& wl) {
  return wl.dtype != DataType::kFloat32 && wl.c > kMaxDefaultChannels && wl.c <= kMaxDefaultExpandInputs &&
         wl.c_out >= kMinDefaultExpansion * wl.c;
}

// Half precision's layers but the narrow ones: the fewest tiles a warp (up
// to 32) that keep the grid to one wave of two blocks an SM, in blocks of 4
// warps, or of 3 where 4 need more than one tile a warp and 3 leave the
// busiest SM fewer tiles (96 -> 576 at batch 64: 264 blocks of 3 x 6
// tiles, 36 on every SM, against 240 blocks of 4 x 5, 40 on the SMs that
// take two). Measured on the H200 against the rule before (powers of two),
// the benchmark's hot time: 24 -> 144 and 32 -> 192 at batch 64 (4 x 12
// and 4 x 6) 0.95 and 0.94 times, fused. Not taken: 48 tiles a warp on
// 16 -> 96 at batch 64, 0.97 times fused but 1.08 with the residual; and 3
// warps of one tile at batch 1 (262 blocks against 4 warps' 196 on
// 16 -> 96), 1.09 to 1.12 times slower: a block's start, its filter rows,
// paid for 3 tiles instead of 4 (docs/performance.md, "`pointwise` in one
// wave of two blocks an SM").
void fill_one_wave(const Workload& wl, const PlanOptions& options, int batch, Pointwise& s) {
  const long long tiles_of_pixels = pixel_tiles(wl, batch);
  const long long channel_tiles = ceil_div(wl.c_out, s.channel_tile);
  const long long sms = std::max(1, options.target.newest.sm_count);
  const auto blocks = [&](int warps, int tiles) { return ceil_div(tiles_of_pixels, 1LL * warps * tiles) * channel_tiles; };
  // The fewest tiles a warp of blocks of `warps` that make one wave.
  const auto fewest_tiles = [&](int warps) {
    int tiles = 1;
    while (tiles < kMaxDefaultTilesPerWarp && blocks(warps, tiles) > kHalfBlocksPerSm * sms) ++tiles;
    return tiles;
  };
  // The tiles of the SM that takes the most blocks.
  const auto busiest = [&](int warps, int tiles) { return ceil_div(blocks(warps, tiles), sms) * warps * tiles; };
  s.warps = kDefaultWarps;
  s.tiles_per_warp = fewest_tiles(kDefaultWarps);
  if (s.tiles_per_warp == 1) return;
  const int fewer = kDefaultWarps - 1;
  const int tiles = fewest_tiles(fewer);
  if (busiest(fewer, tiles) < busiest(s.warps, s.tiles_per_warp)) {
    s.warps = fewer;
    s.tiles_per_warp = tiles;
  }
}

// The default, from sweeps on the H100 over thin layers (docs/performance.md):
// one tile across c_out up to 144 channels, else equal tiles of at most 144
// (96 in half precision, 64 on thin layers without a residual where those
// cover no more columns: default_channel_tile); 4 warps (8 were 1.06 to
// 1.24 times slower at batch 64), 2 stages (3 were within 2%, and 7% slower
// on one layer); and as many tiles a warp as make about 16 warps an SM,
// rounded to a power of two in float32 and on thin narrow outputs of up to
// 24 channels. Half precision's narrow layers of up to 40 outputs from
// inputs deeper than 40 take about 8 warps an SM, to the nearest count, in
// one block where they take 3 tiles or more; its other layers (thin,
// expanding, or named) fill one wave of two blocks an SM (fill_one_wave).
Pointwise default_pointwise(const Workload& wl, const PlanOptions& options, int batch) {
  Pointwise s;
  s.channel_tile = default_channel_tile(wl);
  s.warps = kDefaultWarps;
  s.stages = kDefaultStages;
  if (narrow_half(wl)) {
    const double per_warp = tiles_a_warp(wl, options, batch, s.channel_tile, kNarrowWarpsPerSm);
    s.tiles_per_warp =
        static_cast<int>(std::lround(std::clamp(per_warp, 1.0, static_cast<double>(kMaxDefaultTilesPerWarp))));
    if (per_warp >= kNarrowBlockMinTiles) s.warps = kNarrowBlockWarps;
  } else if (wl.dtype != DataType::kFloat32 && !narrow(wl)) {
    fill_one_wave(wl, options, batch, s);
  } else {
    const double per_warp = tiles_a_warp(wl, options, batch, s.channel_tile);
    const double clamped = std::clamp(per_warp, 1.0, static_cast<double>(kMaxDefaultTilesPerWarp));
    s.tiles_per_warp = 1 << static_cast<int>(std::lround(std::log2(clamped)));
  }
  // Made to fit the library's tightest GPU from sm_80 (deep inputs; sm_86's
  // and sm_89's 99 KiB): a narrower tile where the filter rows take more
  // shared memory than the warps' rings, else fewer warps.
  const int limit = library_shared_limit(options, kMinMmaSyncArch);
  while (pointwise_shape(wl, s).smem_bytes > limit && (s.channel_tile > 8 || s.warps > 1)) {
    const PointwiseShape g = pointwise_shape(wl, s);
    if (s.channel_tile > 8 && (g.filter_bytes >= g.smem_bytes - g.filter_bytes || s.warps == 1)) {
      const int narrower = channel_tile_of_parts(wl.c_out, ceil_div(wl.c_out, s.channel_tile) + 1, 8);
      s.channel_tile = std::min(narrower, s.channel_tile - 8);
    } else {
      s.warps -= s.warps / 2;  // 8 -> 4, 4 -> 2, 3 -> 2
    }
  }
  return s;
}

// Whether the grid at `batch` is at most one block for each SM of the
// library's newest GPU.
bool one_wave_of_blocks(const Workload& wl, const PlanOptions& options, int batch, const PointwiseShape& g) {
  const long long blocks = ceil_div(1LL * batch * wl.out_h() * wl.out_w(), 1LL * g.block_pixels) * g.channel_tiles;
  return blocks <= std::max(1, options.target.newest.sm_count);
}

void plan(const Workload& wl, const PlanOptions& options, KernelPlan& p) {
  const ScheduleRequest& req = wl.schedule;
  check_mma_sync_gpu("algorithm 'pointwise'", req.algorithm ? req.algorithm_where : wl.where, options);
  if (!is_pointwise(wl)) {
    throw InputError({{req.algorithm ? req.algorithm_where : wl.where,
                       "algorithm 'pointwise' computes 1x1 convolutions with stride 1 and no padding; this one is " +
                           num(wl.kh) + "x" + num(wl.kw) + ", stride " + num(wl.stride_h) + "x" + num(wl.stride_w) +
                           (wl.pad_top || wl.pad_bottom || wl.pad_left || wl.pad_right ? ", padded" : "") +
                           ": use implicit_gemm"}});
  }
  const int vector = kVectorBytes / ops::element_bytes(wl);
  if (wl.c % vector != 0 || wl.c_out % vector != 0) {
    throw InputError({{req.algorithm ? req.algorithm_where : wl.where,
                       "algorithm 'pointwise' copies and stores 16-byte vectors of " + num(vector) + " " +
                           to_string(wl.dtype) + " channels: c (" + num(wl.c) + ") and c_out (" + num(wl.c_out) +
                           ") must be multiples of " + num(vector) + "; use implicit_gemm"}});
  }
  Pointwise s = default_pointwise(wl, options, p.cost_batch);
  s.channel_tile = req.value("channel_tile").value_or(s.channel_tile);
  s.warps = req.value("warps_per_block").value_or(s.warps);
  s.tiles_per_warp = req.value("tiles_per_warp").value_or(s.tiles_per_warp);
  s.stages = req.value("stages").value_or(s.stages);

  std::vector<Diagnostic> errors;
  if (s.channel_tile > round_up(wl.c_out, 8)) {
    errors.push_back({req.at("channel_tile"), "channel_tile " + num(s.channel_tile) + " is wider than the " +
                                                  num(wl.c_out) + " output channels: at most " +
                                                  num(round_up(wl.c_out, 8))});
  }
  const PointwiseShape g = pointwise_shape(wl, s);
  const int limit = library_shared_limit(options, kMinMmaSyncArch);
  // The least a block of this workload takes: 8 channels, 1 warp, 2 stages.
  const int least_bytes = pointwise_shape(wl, Pointwise{8, 1, 1, 2}).smem_bytes;
  if (g.smem_bytes > limit) {
    errors.push_back({req.at("stages"), "the schedule needs " + num(g.smem_bytes) +
                                            " bytes of shared memory per block (the filter's " + num(s.channel_tile) +
                                            " rows of " + num(g.k_pad) + " channels, and per warp " + num(s.stages) +
                                            " input tiles and a staging tile); the GPUs of this library allow " +
                                            num(limit) +
                                            (least_bytes > limit
                                                 ? ", and no schedule fits (" + num(least_bytes) +
                                                       " bytes at channel_tile 8, 1 warp, 2 stages): its " +
                                                       num(wl.c) + " input channels are too many for pointwise, "
                                                       "use implicit_gemm"
                                                 : ": use fewer warps_per_block, stages or a narrower channel_tile")});
  }
  if (!errors.empty()) throw InputError(std::move(errors));

  p.schedule.values = {{"channel_tile", s.channel_tile},
                       {"warps_per_block", s.warps},
                       {"tiles_per_warp", s.tiles_per_warp},
                       {"stages", s.stages}};
  p.threads = 32 * s.warps;
  p.block_threads = p.threads;
  p.smem_bytes = g.smem_bytes;
  p.alignment = kVectorBytes;
  p.min_arch = kMinMmaSyncArch;
  // The launch numbers the batch's pixels with an int.
  p.max_batch = ops::batch_limit(1LL * wl.out_h() * wl.out_w());
  auto n = [](long long v) { return TemplateValue(v); };
  p.values = {
      {"k_pad", n(g.k_pad)},
      {"k_steps", n(g.k_pad / g.mma_k)},
      {"input_pitch", n(g.input_pitch)},
      {"output_pitch", n(g.output_pitch)},
      {"channel_tiles", n(g.channel_tiles)},
      {"block_pixels", n(g.block_pixels)},
      {"tiles_ahead", n(s.stages - 1)},
      {"pixels", n(1LL * wl.out_h() * wl.out_w())},
      {"tensor_cores", true},  // mma.sync (the compute floor's rate)
      // Blocks of 8 warps and more in a grid of at most one block an SM (as
      // the rule plans the narrow layers') are told to ptxas as one an SM:
      // left to its default it held MobileNetV2's 144 -> 32 in 8 warps to 80
      // registers and spilled 8 bytes (sm_90); told, 122 and none. A larger
      // grid keeps ptxas's default, which leaves room for more blocks.
      {"one_block_an_sm", s.warps >= kNarrowBlockWarps && one_wave_of_blocks(wl, options, p.cost_batch, g)},
  };
  add_mma_fragment_values(wl, p.values);
}

std::string describe(const Schedule& s) {
  return "channel_tile " + num(s.at("channel_tile")) + ", warps_per_block " + num(s.at("warps_per_block")) +
         ", tiles_per_warp " + num(s.at("tiles_per_warp")) + ", " + num(s.at("stages")) + " stages";
}

LaunchDescription launch(const KernelPlan& p) {
  LaunchDescription l;
  l.count_per_image = p.number("pixels");
  l.count_of = "output pixels";
  l.grid[0].per_image = p.number("pixels");
  l.grid[0].per_block = p.number("block_pixels");
  l.grid[1].blocks = p.number("channel_tiles");
  l.block[0] = p.block_threads;
  l.dynamic_shared_bytes = p.smem_bytes;
  return l;
}

}  // namespace

bool pointwise_by_default(const Workload& wl, const PlanOptions& options) {
  const int vector = kVectorBytes / ops::element_bytes(wl);
  const bool thin = wl.c <= kMaxDefaultChannels;
  const bool narrow_output = narrow(wl) || narrow_half(wl);
  const int batch = std::max(1, wl.n);
  const bool fills = wl.dtype != DataType::kFloat32 ||
                     tiles_a_warp(wl, options, batch, default_channel_tile(wl)) >= 1.0;
  // A library with an sm_90a image keeps implicit_gemm_sm90 where that rule
  // gives it: on the H200 it ran 96 -> 576 and 160 -> 960 at batch 64 in
  // 0.88 times pointwise's time, 64 -> 384 in 1.05 (docs/performance.md,
  // "`pointwise` in one wave of two blocks an SM").
  const bool expands = expand_half(wl) &&
                       tiles_a_warp(wl, options, batch, default_channel_tile(wl), kHalfBlocksPerSm * kDefaultWarps) >=
                           1.0 &&
                       !implicit_gemm_sm90_by_default(wl, options);
  return kPointwise.serves(wl) && is_pointwise(wl) && ((thin && fills) || narrow_output || expands) &&
         wl.c % vector == 0 && wl.c_out % vector == 0 && options.target.newest.sm >= kMinMmaSyncArch;
}

const Algorithm kPointwise{
    "pointwise",
    &kOperator,
    {[] {
       Knob k = Knob::integer("channel_tile", 8, kMaxChannelTile,
                              "output channels of a warp's tile of 16 pixels (its accumulators: half of them a thread)");
       k.multiple_of = 8;
       k.rule_note = "(16-byte vectors of output channels)";
       return k;
     }(),
     Knob::integer("warps_per_block", 1, 16, "warps of a block; they share its filter rows, each walks its own tiles"),
     Knob::integer("tiles_per_warp", 1, 64, "tiles of 16 pixels each warp computes, one after another"),
     Knob::integer("stages", 2, 4, "input tiles of a warp's shared-memory ring (stages - 1 copied ahead)")},
    "conv2d_nhwc_pointwise.cu.mustache",
    &plan,
    &describe,
    &launch,
    {DataType::kFloat16, DataType::kBFloat16, DataType::kFloat32},
    {Layout::kNHWC},
    TuneCompiler::kNvrtc,
    &is_pointwise,
    {Math::kTF32},  // float32 operands rounded to TF32 (one product; 3xtf32's three are not built)
};

}  // namespace convgen::gen::conv2d
