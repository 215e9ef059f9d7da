// conv2d, algorithm `implicit_gemm_sm90`: the implicit GEMM of
// `implicit_gemm` (float16/bfloat16 NHWC, float32 NHWC with math tf32) on
// Hopper's own instructions. The copies are CUTLASS's sm_90 collective
// (the nvidia-cutlass headers, version pinned in scripts/install_deps.sh):
// one warp copies each step's tiles into a ring of `stages` shared-memory
// buffers with the tensor memory accelerator (TMA; its im2col mode reads
// the input's window with padding and strides, and rounds float operands
// to TF32); `warpgroups` warpgroups of 128 threads multiply them with
// wgmma, both operands read from shared memory, in the kernel's own loop.
// split_k splits K over a cluster of blocks that add their partial tiles
// through distributed shared memory. With `pingpong`, the grid is
// persistent (as many blocks as the GPU holds, each taking tile after tile)
// and two warpgroups take turns at the tiles, one's epilogue running while
// the other multiplies. The epilogue is convgen's,
// the same as implicit_gemm's: the accumulators go through shared memory
// to rows of output channels, where every thread of the block applies bias
// or scale/shift, the residual and the activation in fp32 and stores one
// vector of the dtype.
//
// wgmma and TMA are arch-specific: the kernel runs on sm_90 only, from an
// sm_90a image (convgen_add_library builds sm_90 as sm_90a). Other GPUs of
// the library compile an empty body and run the generic kernel.
#include <algorithm>
#include <vector>

#include "conv2d.hpp"
#include "convgen/gen/arch.hpp"

namespace convgen::gen::conv2d {

namespace {

constexpr int kArch = 90;  // the only GPU: wgmma and TMA are sm_90a's
// Accumulators a multiplying thread may keep: its warpgroup's rows x cta_n
// / 128. 128 leaves room for the rest at 168 registers a thread (3
// warpgroups a block, one block an SM).
constexpr int kMaxWgmmaAccumulators = 128;
// Pingpong: rows of its tile a warpgroup's epilogue finishes at once (one
// wgmma's rows), each warpgroup in shared memory of its own (or, with
// epilogue_turns, in the same, in turns).
constexpr int kChunkRows = 64;
// Pingpong: the threads of a warpgroup's epilogue (the template's 128).
constexpr int kPingpongEpilogueThreads = 128;
// The TMA's im2col limits for two spatial dimensions (CUTLASS's
// can_implement): corners of the window in [-128, 127], filter offsets
// below 255, traversal strides of at most 8.
constexpr int kCornerLimit = 128;
constexpr int kMaxFilterOffset = 254;
constexpr int kMaxStride = 8;

struct Sm90Gemm {
  int cta_m = 0, cta_n = 0, cta_k = 0;  // the block's tile of the GEMM: pixels, output channels, reduction
  int warpgroups = 0;                   // warpgroups that multiply, each cta_m / warpgroups rows
  int stages = 0;                       // shared-memory buffers of the main loop's ring
  int split_k = 1;                      // blocks of a cluster that share a tile, each summing a run of K's steps
  bool pingpong = false;                // persistent; two warpgroups take turns, each a whole tile
  bool epilogue_turns = false;          // pingpong: the warpgroups take turns at the epilogue too, sharing its floats
};

struct Sm90Shape {
  int threads;
  int element_bytes;
  int out_vec;  // elements per epilogue load and store of output and residual
  int mainloop_bytes, epilogue_bytes, barrier_bytes, smem_bytes;
  int k_steps;
  int n_tiles;
  int accumulators;  // per multiplying thread
};

// The shared memory a block may have, and the SMs (the H100's), on the one
// GPU the kernel runs on.
int sm90_shared_limit() { return find_arch(kArch)->shared_per_block; }
int sm90_sm_count() { return find_arch(kArch)->sm_count; }

Sm90Shape sm90_shape(const Workload& wl, const Sm90Gemm& s) {
  Sm90Shape g{};
  g.threads = 128 * (1 + s.warpgroups);
  g.element_bytes = ops::element_bytes(wl);
  g.out_vec = vector_elements(wl.c_out, g.element_bytes);
  // CUTLASS's ring: each stage holds the input tile (cta_m x cta_k) and the
  // filter tile (cta_n x cta_k), swizzled, unpadded; the epilogue's tile of
  // floats shares those bytes (pingpong: each warpgroup's kChunkRows rows
  // follow them, or with epilogue_turns one warpgroup's, which both take in
  // turns); the ring's barriers (two 8-byte ones a stage, and pingpong's of
  // the turns: 8 bytes for each warpgroup and turn a tile) follow, the whole
  // rounded to 128 bytes. The template checks this against sizeof.
  g.mainloop_bytes = s.stages * (s.cta_m + s.cta_n) * s.cta_k * g.element_bytes;
  g.barrier_bytes = 16 * s.stages;
  if (s.pingpong) {
    const int turns_a_tile = s.epilogue_turns ? 2 : 1;
    g.epilogue_bytes = (s.epilogue_turns ? 1 : 2) * kChunkRows * (s.cta_n + implicit_gemm_epilogue_pad(wl)) * 4;
    g.smem_bytes = round_up(g.mainloop_bytes + g.epilogue_bytes + g.barrier_bytes + 16 * turns_a_tile, 128);
  } else {
    g.epilogue_bytes = s.cta_m * (s.cta_n + implicit_gemm_epilogue_pad(wl)) * 4;
    g.smem_bytes = round_up(round_up(std::max(g.mainloop_bytes, g.epilogue_bytes), 128) + g.barrier_bytes, 128);
  }
  g.k_steps = wl.kh * wl.kw * ceil_div(wl.c, s.cta_k);
  g.n_tiles = ceil_div(wl.c_out, s.cta_n);
  g.accumulators = (s.pingpong ? s.cta_m : s.cta_m / s.warpgroups) * s.cta_n / 128;
  return g;
}

// Whether the library holds an sm_90a image (an arch-specific 90a entry
// that is not PTX only): the only code with wgmma and TMA.
bool has_sm90a_image(const PlanOptions& options) {
  for (const ArchEntry& e : options.target.entries) {
    if (e.sm == kArch && e.text.rfind("90a", 0) == 0 && e.text.find("-virtual") == std::string::npos) return true;
  }
  return false;
}

// The default tile has two regimes, each from a sweep of float16 layers
// of the benchmark (docs/performance.md, "Hopper's main loop" and "Split K
// on Hopper"): grids that fill the GPU (at least one block an SM in 128 x
// 64 tiles) and smaller ones.
//
// Grids that fill the GPU: of 256 x 128 (two warpgroups), 128 x 128 and
// 128 x 64 (one), the tile that makes the fewest waves of blocks times a
// block's work, a block's work weighed by how fast its tile ran (the larger
// tiles reuse each operand more: 256 x 128 ran 1.18 times the rate of 128 x
// 128 a block, 128 x 64 0.55 times). Where c_out <= 64, 128 x 64 alone (a
// 128-wide tile would be half zeros).
struct TileRate {
  int cta_m, cta_n, warpgroups;
  double rate;  // a block's work per unit of time, relative to 128 x 128
};

void pick_throughput_tile(const Workload& wl, long long pixels, Sm90Gemm& s) {
  const std::vector<TileRate> tiles = wl.c_out <= 64
                                          ? std::vector<TileRate>{{128, 64, 1, 0.55}}
                                          : std::vector<TileRate>{{256, 128, 2, 1.18}, {128, 128, 1, 1.0},
                                                                  {128, 64, 1, 0.55}};
  const long long sms = sm90_sm_count();
  double best_time = 0;
  for (const TileRate& t : tiles) {
    const long long blocks = output_tiles(wl, pixels, t.cta_m, t.cta_n);
    const double time = static_cast<double>(ceil_div(blocks, sms)) * t.cta_m * t.cta_n / t.rate;
    if (s.cta_m == 0 || time < best_time) {
      s.cta_m = t.cta_m, s.cta_n = t.cta_n, s.warpgroups = t.warpgroups;
      best_time = time;
    }
  }
}

// Smaller grids (deep layers on small planes, small batches), where a
// block's time is its steps' latency rather than the GPU's throughput: of
// the one-warpgroup tiles 64 x 64 to 128 x 128, each split into 1, 2, 4
// or 8 runs of K, the one whose predicted time is least: waves x (a
// block's fixed time + its steps x its tile's time a step) + the split's
// cost, which grows with the split and the tile (a larger cluster to place,
// more partial tiles to exchange). The times, in microseconds, were fitted
// to the sweep (12 layers, 15 schedules each); the schedule they pick ran
// within 13% of the sweep's fastest on every layer, 2% on average.
struct TileStep {
  int cta_m, cta_n;
  double step_us;  // a block's time a step of 128 bytes of K
};
constexpr double kBlockUs = 1.0;
double split_us(int split_k, int cta_m, int cta_n) {
  return split_k == 1 ? 0.0 : 0.5 + 0.2 * split_k * (cta_m * cta_n / 4096.0);
}

void pick_latency_tile(const Workload& wl, long long pixels, Sm90Gemm& s) {
  const std::vector<TileStep> tiles = {{64, 64, 0.156}, {64, 128, 0.17}, {128, 64, 0.26}, {128, 128, 0.31}};
  const long long sms = sm90_sm_count();
  const int k_steps = wl.kh * wl.kw * ceil_div(wl.c, s.cta_k);
  double best_time = 0;
  for (const TileStep& t : tiles) {
    if (wl.c_out <= 64 && t.cta_n > 64) continue;
    for (int split_k = 1; split_k <= std::min(kMaxSplitK, k_steps); split_k *= 2) {
      const long long blocks = output_tiles(wl, pixels, t.cta_m, t.cta_n) * split_k;
      const double time = static_cast<double>(ceil_div(blocks, sms)) *
                              (kBlockUs + ceil_div(k_steps, split_k) * t.step_us) +
                          split_us(split_k, t.cta_m, t.cta_n);
      if (s.cta_m == 0 || time < best_time) {
        s.cta_m = t.cta_m, s.cta_n = t.cta_n, s.warpgroups = 1, s.split_k = split_k;
        best_time = time;
      }
    }
  }
}

// The most stages, at most 6, whose shared memory fits a block (at least 2).
int most_stages_that_fit(const Workload& wl, Sm90Gemm s) {
  for (s.stages = 6; s.stages > 2 && sm90_shape(wl, s).smem_bytes > sm90_shared_limit(); --s.stages) {
  }
  return s.stages;
}

// The blocks of a schedule that an SM holds at once, by their shared memory.
int sm90_resident_blocks(const Workload& wl, const Sm90Gemm& s) {
  const ArchFacts& f = *find_arch(kArch);
  return f.shared_per_sm / (sm90_shape(wl, s).smem_bytes + f.shared_reserved);
}

// The fewest stages a block keeps where it gives up some so that two
// blocks share an SM (grids of more blocks than SMs). Measured on the H100
// (docs/performance.md, "Stages against blocks an SM"): the 128 x 64 tile
// ran 1.19 and 1.26 times faster with 4 stages (two blocks an SM) than
// with 5 or 6 (one) on ResNet's 64-channel 3x3 layers at batch 32 and 8,
// and 1 to 2% slower with 3 than with 4; the 128 x 128 tile needs 3 stages
// for two blocks an SM, and ran 1.13 times slower with them than with 6.
constexpr int kLeastSharedStages = 4;
// A one-warpgroup tile 128 channels wide becomes 96 wide where 96 still
// covers c_out in as many tiles: fewer of its columns are past c_out. On
// the H100 (docs/performance.md, "Tiles that fit the output channels"):
// 1.11 to 1.27 times faster on six 1x1 layers of 80 to 192 output channels
// (64 x 96 against 64 x 128 at 160 and 192 channels on 7^2, 128 x 96
// against 128 x 128 at 80 and 96 on 14^2); 80 and 112 wide, not multiples
// of 32, ran slower than 96 and 128.
constexpr int kNarrowColumns = 96;
// And where c_out is two tiles of a width below 96 that is a multiple of 16
// (160 channels: two of 80), a half-precision tile of 64 rows takes that
// width: every column is one of c_out's, in one wgmma as wide (the
// template enables CUTLASS's extended wgmma shapes, every multiple of 8;
// without them an 80-wide tile ran as five of 16). On the H100
// (docs/performance.md, "wgmma as wide as the tile"): 960 -> 160 on 7^2 at
// batch 64 took 5.03 us fused in 64 x 80 against 5.54-5.60 in 64 x 96, and
// 6.35 in 64 x 80 as five N = 16 instructions. TF32 tiles are 16, 32 or a
// multiple of 32 wide, and keep 96.
bool narrows_to_half_of_c_out(const Workload& wl, const Sm90Gemm& s) {
  return s.cta_n == kNarrowColumns && s.cta_m == 64 && wl.dtype != DataType::kFloat32 && wl.c_out % 32 == 0 &&
         wl.c_out / 2 < kNarrowColumns && ceil_div(wl.c_out, kNarrowColumns) == 2;
}

// Pingpong's rows a tile: 128, or 64 where the tiles then spread over the
// blocks so much more evenly that the blocks finish sooner. A persistent
// block's time is about its count of tiles times a tile's; on the H200
// (docs/performance.md, "Pingpong's rows"), float16, a tile of 64 rows took
// 0.52 to 0.59 of one of 128 (fitted on four layers where the tiles are
// 3 to 12 a block). (Where a spec asks for pingpong on fewer tiles than
// SMs, one a block either way, that makes them 64 rows: on ResNet's 512 ->
// 512 3x3 on 7^2 at batch 32, 16.98 us against 17.56 with 128.)
constexpr double kHalfTileTime = 0.55;

int pingpong_rows(const Workload& wl, long long pixels, const Sm90Gemm& s) {
  const long long sms = sm90_sm_count();
  const auto tiles_a_block = [&](int rows) {
    return ceil_div(output_tiles(wl, pixels, rows, s.cta_n), sms);
  };
  if (s.cta_m < 128) return s.cta_m;
  return kHalfTileTime * tiles_a_block(64) < tiles_a_block(128) ? 64 : 128;
}

// Pingpong where its tile gives every SM at least kPingpongTilesPerSm
// tiles: every block then takes two or more, so that each warpgroup's
// epilogue and each tile's first copies run under the other warpgroup's
// main loop. On the H200 (docs/performance.md, "Persistent pingpong"),
// float16: 1.04 to 1.26 times faster on the four layers of 2.3 to 5.9
// tiles an SM; on five of 0.4 to 1.9 (a block takes at most two tiles,
// often one), 0.96 to 1.06: three slower, two faster. Float32 (tf32) is
// not measured: it keeps one tile a block.
constexpr int kPingpongTilesPerSm = 2;

bool pingpong_pays(const Workload& wl, long long pixels, const Sm90Gemm& s) {
  const int cta_m = pingpong_rows(wl, pixels, s);
  const long long tiles = output_tiles(wl, pixels, cta_m, s.cta_n);
  return wl.dtype != DataType::kFloat32 && s.split_k == 1 && cta_m * s.cta_n / 128 <= kMaxWgmmaAccumulators &&
         tiles >= kPingpongTilesPerSm * sm90_sm_count();
}

// A schedule's tile taken in turns: each warpgroup a tile of pingpong's
// rows, unsplit (plan() then gives it its stages).
void to_pingpong(const Workload& wl, long long pixels, Sm90Gemm& s) {
  s.cta_m = pingpong_rows(wl, pixels, s);
  s.pingpong = true;
  s.warpgroups = 2;
  s.split_k = 1;
}

// Either way: the tile's columns narrowed where that makes no more tiles;
// steps of 128 bytes of K where a tap's channels fill one (64 otherwise);
// as many stages as fit, at most 6, but where the grid has more blocks
// than SMs and kLeastSharedStages or more let two blocks share an SM, the
// most stages that do. (Pingpong, where it pays, is made of this tile:
// to_pingpong.)
Sm90Gemm default_sm90(const Workload& wl, int batch) {
  const long long pixels = 1LL * std::max(batch, 1) * wl.out_h() * wl.out_w();
  const int element_bytes = ops::element_bytes(wl);
  Sm90Gemm s;
  s.cta_k = (wl.c * element_bytes >= 128 ? 128 : 64) / element_bytes;
  if (output_tiles(wl, pixels, 128, 64) >= sm90_sm_count()) {
    pick_throughput_tile(wl, pixels, s);
  } else {
    pick_latency_tile(wl, pixels, s);
  }
  if (s.warpgroups == 1 && s.cta_n == 128 && ceil_div(wl.c_out, kNarrowColumns) == ceil_div(wl.c_out, 128)) {
    s.cta_n = kNarrowColumns;
  }
  if (narrows_to_half_of_c_out(wl, s)) s.cta_n = wl.c_out / 2;
  s.stages = most_stages_that_fit(wl, s);
  const long long blocks = output_tiles(wl, pixels, s.cta_m, s.cta_n) * s.split_k;
  if (blocks > sm90_sm_count()) {
    Sm90Gemm shared = s;
    while (shared.stages > kLeastSharedStages && sm90_resident_blocks(wl, shared) < 2) --shared.stages;
    if (sm90_resident_blocks(wl, shared) >= 2) s.stages = shared.stages;
  }
  return s;
}

// What the TMA's im2col takes (CUTLASS's can_implement, two spatial
// dimensions): input channels in 16-byte rows, strides of at most 8, a
// filter reach (size - 1) x dilation of at most 254, paddings of 0 to 128
// within 128 of that reach.
bool tma_takes(const Workload& wl) {
  const auto window_fits = [](int pad_lo, int pad_hi, int k, int d) {
    const int reach = (k - 1) * d;
    return pad_lo >= 0 && pad_hi >= 0 && pad_lo <= kCornerLimit && pad_hi - reach >= -kCornerLimit &&
           pad_hi - reach < kCornerLimit && reach <= kMaxFilterOffset;
  };
  return window_fits(wl.pad_top, wl.pad_bottom, wl.kh, wl.dilation_h) &&
         window_fits(wl.pad_left, wl.pad_right, wl.kw, wl.dilation_w) && wl.stride_h <= kMaxStride &&
         wl.stride_w <= kMaxStride;
}

// No more buffers than the block's steps of K (the ring's least is 2): the
// copying warp issues a step's copies as soon as its buffer is free, so
// that many hold the whole run in flight, and more would only cost shared
// memory, which on a 1x1 layer of 1 to 5 steps bounds the blocks an SM
// holds (docs/performance.md, "Stages that K can fill").
int stages_k_can_fill(const Workload& wl, const Sm90Gemm& s) {
  return std::min(s.stages, std::max(2, ceil_div(sm90_shape(wl, s).k_steps, s.split_k)));
}

void plan(const Workload& spec_workload, const PlanOptions& options, KernelPlan& p) {
  const Workload wl = implicit_gemm_main_loop_workload(spec_workload);
  const bool nchw = wl.layout == Layout::kNCHW;
  const std::string algorithm = nchw ? "implicit_gemm_sm90_nchw" : "implicit_gemm_sm90";
  const ScheduleRequest& req = wl.schedule;
  std::vector<Diagnostic> errors;
  Sm90Gemm s = default_sm90(wl, p.cost_batch);
  // Pingpong by default where it pays on the default's columns and the
  // spec sets no tile, split or stages of its own (its stages may not fit
  // beside pingpong's rows of outputs); the spec's pingpong takes the
  // default's columns and pingpong's rows (or the spec's tile) in turns.
  const bool own_tile = req.has("cta_m") || req.has("warpgroups");
  const long long pixels = 1LL * std::max(p.cost_batch, 1) * wl.out_h() * wl.out_w();
  const bool own_schedule = own_tile || req.has("split_k") || req.has("stages");
  if (req.value("pingpong").value_or(!own_schedule && pingpong_pays(wl, pixels, s)) != 0) {
    to_pingpong(wl, pixels, s);
  }
  s.epilogue_turns = req.value("epilogue_turns").value_or(0) != 0;
  s.cta_m = req.value("cta_m").value_or(s.cta_m);
  s.cta_n = req.value("cta_n").value_or(s.cta_n);
  s.cta_k = req.value("cta_k").value_or(s.cta_k);
  s.warpgroups = req.value("warpgroups").value_or(s.warpgroups);
  s.stages = req.value("stages").value_or(s.stages);
  // The default's split is for the default's tile: a spec's own tile runs
  // unsplit unless the spec splits it too.
  s.split_k = req.value("split_k").value_or(own_tile || s.pingpong ? 1 : s.split_k);
  // Warpgroups without a tile: the default's rows, within the 64 to 128 a
  // warpgroup takes.
  if (req.has("warpgroups") && !req.has("cta_m") && !s.pingpong) {
    s.cta_m = std::clamp(s.cta_m, 64 * s.warpgroups, 128 * s.warpgroups);
  }
  // A tile without warpgroups: the default's where they take its rows, else
  // the count that does (64 rows: one; 256: two).
  if (req.has("cta_m") && !req.has("warpgroups") && !s.pingpong) {
    if (s.cta_m < 64 * s.warpgroups) s.warpgroups = 1;
    if (s.cta_m > 128 * s.warpgroups) s.warpgroups = 2;
  }
  if (!req.has("stages")) {
    if (s.pingpong) {
      // As many as fit beside the warpgroups' rows of outputs. Not capped
      // at a tile's steps of K: the copying warp runs on into the block's
      // next tile (on the H200, 96 -> 576 1x1 at batch 64, 2 steps a tile,
      // ran 1.05 times faster with 4 stages than 2: docs/performance.md,
      // "Persistent pingpong").
      s.stages = most_stages_that_fit(wl, s);
    } else {
      s.stages = stages_k_can_fill(wl, s);
    }
  }
  const int element_bytes = ops::element_bytes(wl);

  // What the library or the workload's shape does not allow is the
  // algorithm's to say where the spec (or a tuning entry) names it; where
  // its knobs alone named it (pingpong, warpgroups), the workload's.
  const SourceLocation& algorithm_at = req.algorithm ? req.algorithm_where : wl.where;
  // The sm_80 algorithm of the same layout, which takes what this one does not.
  const std::string portable = nchw ? "implicit_gemm_nchw" : "implicit_gemm";
  if (!has_sm90a_image(options)) {
    errors.push_back({algorithm_at,
                      algorithm + " runs wgmma and TMA, which only an sm_90a image holds; this library is "
                      "built for " + options.target.list() + ": add 90a (convgen_add_library builds 90 as 90a), or "
                      "use " + portable});
  }
  // The TMA copies 16-byte rows: channels of 16 bytes' worth, in and out
  // (NCHW: the copies' channels, padded to 16 bytes).
  if (wl.c * element_bytes % 16 != 0) {
    errors.push_back({algorithm_at, "c = " + num(wl.c) + ": " + algorithm + "'s TMA copies the input's channels in "
                                    "16-byte rows, so c must be a multiple of " + num(16 / element_bytes) +
                                    " (use " + portable + ")"});
  }
  if (!tma_takes(wl)) {
    errors.push_back({algorithm_at, "the TMA's im2col takes strides of at most " + num(kMaxStride) +
                                    ", a filter's reach (size - 1) x dilation of at most " + num(kMaxFilterOffset) +
                                    " and paddings of 0 to " + num(kCornerLimit) + " within 128 of that reach: " +
                                    "use " + portable});
  }
  if (s.epilogue_turns && !s.pingpong) {
    errors.push_back({req.at("epilogue_turns"), "epilogue_turns without pingpong: only pingpong's two warpgroups "
                                                "take turns (add pingpong: true, or leave epilogue_turns out)"});
  }
  const SourceLocation& cta_at = req.at("cta_tile");
  if (!is_one_of(s.warpgroups, {1, 2})) {
    errors.push_back({req.at("warpgroups"), "warpgroups " + num(s.warpgroups) + ": 1 or 2 warpgroups multiply"});
  } else if (s.pingpong) {
    if (s.warpgroups != 2) {
      errors.push_back({req.at("warpgroups"), "warpgroups " + num(s.warpgroups) +
                                                  " with pingpong: its two warpgroups take turns at the tiles "
                                                  "(leave warpgroups out, or set it to 2)"});
    }
    if (!is_one_of(s.cta_m, {64, 128})) {
      errors.push_back({cta_at, "cta_tile " + num(s.cta_m) + " pixels with pingpong: a warpgroup takes a whole "
                                "tile, 64 or 128 rows (wgmma's 64, once or twice)"});
    }
    if (s.split_k != 1) {
      errors.push_back({req.at("split_k"), "split_k " + num(s.split_k) + " with pingpong: its blocks take whole "
                                           "tiles (use one or the other)"});
    }
  } else if (!is_one_of(s.cta_m / s.warpgroups, {64, 128}) || s.cta_m % s.warpgroups != 0) {
    errors.push_back({cta_at, "cta_tile " + num(s.cta_m) + " pixels in " + num(s.warpgroups) +
                                  " warpgroup(s): each warpgroup takes 64 or 128 rows (wgmma's 64, once or twice)"});
  }
  if (s.cta_n < 16 || s.cta_n > 256 || s.cta_n % 16 != 0) {
    errors.push_back({cta_at, "cta_tile " + num(s.cta_n) + " channels: wgmma takes 16 to 256, a multiple of 16"});
  } else if (wl.dtype == DataType::kFloat32 && s.cta_n > 32 && s.cta_n % 32 != 0) {
    // CUTLASS's shared-memory layout of a float filter tile does not
    // divide such widths (48, 80, 112 fail to compile; 16, 32, 64, 96, 128
    // build and run).
    errors.push_back({cta_at, "cta_tile " + num(s.cta_n) + " channels in float32: 16, 32, or a multiple of 32"});
  }
  if (!is_cta_k(s.cta_k, element_bytes)) {
    errors.push_back({cta_at, "cta_tile reduction step " + num(s.cta_k) + ": " + num(64 / element_bytes) + " or " +
                                  num(128 / element_bytes) + " (64 or 128 bytes of " + to_string(wl.dtype) +
                                  ", the TMA's swizzled rows)"});
  }
  if (!errors.empty()) throw InputError(std::move(errors));
  const Sm90Shape g = sm90_shape(wl, s);
  const TileOrder order = requested_tile_order(req, g.n_tiles);
  if (g.accumulators > kMaxWgmmaAccumulators) {
    errors.push_back({cta_at, "cta_tile " + num(s.cta_m) + "x" + num(s.cta_n) + " in " +
                                  (s.pingpong ? std::string("one warpgroup (pingpong)") : num(s.warpgroups) + " warpgroup(s)") +
                                  " gives a thread " + num(g.accumulators) + " accumulators; at most " +
                                  num(kMaxWgmmaAccumulators) + " fit its registers: " +
                                  (s.pingpong           ? "use a smaller tile (cta_m x cta_n at most 16384)"
                                   : s.warpgroups == 1 ? "use 2 warpgroups or a smaller tile"
                                                        : "use a smaller tile (cta_m x cta_n at most 32768)")});
  }
  const int limit = sm90_shared_limit();
  if (g.smem_bytes > limit) {
    Sm90Gemm least_stages = s;
    least_stages.stages = kMinPipelineStages;
    const int least_bytes = sm90_shape(wl, least_stages).smem_bytes;
    errors.push_back({req.at("stages"), "the schedule needs " + num(g.smem_bytes) +
                                            " bytes of shared memory per block (" + num(s.stages) + " stages of " +
                                            num(g.mainloop_bytes / s.stages) + (s.pingpong ? ", and" : ", or") +
                                            " the epilogue's " + num(g.epilogue_bytes) +
                                            ", and the barriers); sm_90 allows " + num(limit) +
                                            (least_bytes > limit ? ": use a smaller cta_tile (at " +
                                                                       num(kMinPipelineStages) + " stages it needs " +
                                                                       num(least_bytes) + ")"
                                                                 : ": use fewer stages or a smaller cta_tile")});
  }
  // Pingpong's epilogue is one warpgroup's: its 128 threads take a row's
  // output vectors side by side, as many rounds as the row has vectors of
  // 128 (nhwc_epilogue_share). Elements one a vector (an odd c_out of
  // halves, or of floats) on 144 to 240 columns leave a part round.
  const int row_vectors = s.cta_n / g.out_vec;
  if (s.pingpong && row_vectors > kPingpongEpilogueThreads && row_vectors % kPingpongEpilogueThreads != 0) {
    errors.push_back({cta_at, "cta_tile " + num(s.cta_n) + " channels with pingpong, c_out " + num(wl.c_out) +
                                  " (stored " + num(g.out_vec) + " a vector): a row of " + num(row_vectors) +
                                  " vectors, and a warpgroup's epilogue takes a row in whole rounds of " +
                                  num(kPingpongEpilogueThreads) + ": use at most " +
                                  num(kPingpongEpilogueThreads) + " channels or " +
                                  num(2 * kPingpongEpilogueThreads) + ", or an even c_out"});
  }
  if (s.split_k > g.k_steps) {
    errors.push_back({req.at("split_k"), "split_k " + num(s.split_k) + " splits K into more parts than its " +
                                         num(g.k_steps) + " steps of " + num(s.cta_k) +
                                         " channels: some blocks would sum nothing"});
  }
  if (!errors.empty()) throw InputError(std::move(errors));

  const long long images_per_launch = implicit_gemm_images_per_launch(wl, algorithm);

  p.schedule.values = {{"cta_m", s.cta_m}, {"cta_n", s.cta_n}, {"cta_k", s.cta_k},
                       {"warpgroups", s.warpgroups}, {"stages", s.stages}, {"split_k", s.split_k},
                       {"pingpong", s.pingpong ? 1 : 0}, {"epilogue_turns", s.epilogue_turns ? 1 : 0},
                       {"raster", order.raster}, {"swizzle", order.swizzle}};
  p.threads = g.threads;
  p.block_threads = g.threads;
  p.smem_bytes = g.smem_bytes;
  p.alignment = 16;  // the TMA's addresses; the epilogue's vectors are at most 16 bytes
  p.min_arch = kArch;
  p.max_arch = kArch;
  auto n = [](long long v) { return TemplateValue(v); };
  // A persistent warpgroup reads a tile's residual before its products
  // (their latency under them): 0.95-0.96x the time of two pingpong
  // residual kernels of the dense benchmark, the others within the spread
  // (H200). A block of one tile reads it in its epilogue: read ahead, those
  // ran 0.96-1.03x, no more than identical code varied. It reads the
  // tile's epilogue parameters (bias, or scale and shift) ahead too: a tile
  // of few steps of K (96 -> 576 on 14^2: 2) is its epilogue's time, and
  // the loads were two trips to L2 in it, one each chunk of rows (H100:
  // 0.90x fused, docs/performance.md).
  const bool residual_ahead = s.pingpong && wl.residual && !nchw;
  const bool params_ahead = s.pingpong && wl.epilogue != Epilogue::kNone && !nchw;
  p.values = implicit_gemm_values(
      wl, {images_per_launch, g.out_vec, g.mainloop_bytes, g.epilogue_bytes, g.n_tiles, g.k_steps, s.split_k});
  p.values.insert({
      {"warpgroups", n(s.warpgroups)},
      {"warpgroup_m", n(s.pingpong ? s.cta_m : s.cta_m / s.warpgroups)},
      {"pingpong", s.pingpong},
      {"epilogue_turns", s.epilogue_turns},
      {"residual_ahead", residual_ahead},
      {"params_ahead", params_ahead},
      {"epilogue_ahead", residual_ahead || params_ahead},  // either: the epilogue's shares set up before the tiles
      {"chunk_rows", n(kChunkRows)},
      {"split_k", n(s.split_k)},
      {"split_runs", g.k_steps % s.split_k == 0
                         ? num(g.k_steps / s.split_k) + " steps each"
                         : num(g.k_steps / s.split_k + 1) + " or " + num(g.k_steps / s.split_k) + " steps each"},
  });
  add_tile_order_values(order, s.pingpong, p.values);
  if (nchw) plan_channels_last_copies(wl, spec_workload.c, p);
}

std::string describe(const Schedule& s) {
  return "cta_tile " + num(s.at("cta_m")) + "x" + num(s.at("cta_n")) + "x" + num(s.at("cta_k")) + ", " +
         num(s.at("warpgroups")) + " warpgroup(s)" + (s.at("pingpong") ? " in turns (pingpong, persistent)" : "") +
         (s.at("epilogue_turns") ? ", the epilogue in turns too" : "") +
         ", " + num(s.at("stages")) + " stages" +
         (s.at("split_k") > 1 ? ", split_k " + num(s.at("split_k")) : "") + describe_tile_order(s);
}

}  // namespace

// From the same sweeps (docs/performance.md): against implicit_gemm's
// defaults, Hopper's main loop ran 1.2-1.6 times faster on ResNet's 3x3
// layers of 128 channels and up (batch 32 and 8) and on 1x1 layers of 320
// to 1024 channels, about even at 64 input channels (0.95-1.05); with its
// split K, 1.1-1.7 times faster on deep layers at batch 1 (where
// implicit_gemm's split K had been ahead of its unsplit tiles); on thin
// layers (fewer than 128 bytes of input channels: a step of mostly zeros,
// or c_out < 64) up to 1.9 times slower. Float32 with math tf32, the same
// layers and tiles in steps of 32 floats: 1.2-1.9 times faster than
// implicit_gemm's tf32, the same exceptions (its split K and 64-row tiles
// are not measured yet: the rule takes them as it does in float16).
bool implicit_gemm_sm90_by_default(const Workload& spec_workload, const PlanOptions& options) {
  const Workload wl = implicit_gemm_main_loop_workload(spec_workload);
  const int element_bytes = ops::element_bytes(wl);
  const Algorithm& sm90 = wl.layout == Layout::kNCHW ? kImplicitGemmSm90Nchw : kImplicitGemmSm90;
  if (!sm90.serves(wl) || !has_sm90a_image(options) || !tma_takes(wl)) return false;
  return wl.c * element_bytes % 16 == 0 && wl.c * element_bytes >= 128 && wl.c_out >= 64;
}

namespace {

// The knobs of both layouts' algorithm.
std::vector<Knob> sm90_knobs() {
  // Multiples of 16 (every value the planner takes is one): the tuner
  // tries each, 80 and 160 channels too, which one wgmma covers (the
  // extended shapes) and the 2^i, 3 x 2^i, 7 x 2^i sampling would skip.
  Knob cta_tile = Knob::tuple("cta_tile", {"cta_m", "cta_n", "cta_k"}, 16, 256, "[pixels, channels, reduction]",
                              "the block's tile of the GEMM: output pixels (64 or 128 a warpgroup), output channels "
                              "(a multiple of 16; float32: 16, 32 or a multiple of 32), and the reduction step (64 "
                              "or 128 bytes of the dtype)");
  cta_tile.multiple_of = 16;
  cta_tile.rule_note = "(wgmma's and the TMA's tiles)";
  return {cta_tile,
          Knob::integer("warpgroups", 1, 2, "warpgroups of 128 threads that multiply (wgmma), each cta_m / warpgroups rows"),
          Knob::integer("stages", kMinPipelineStages, kMaxPipelineStages,
                        "shared-memory buffers of the main loop's ring (TMA copies)"),
          split_k_knob(),
          Knob::flag("pingpong", "persistent blocks, each taking tile after tile; two warpgroups take turns at them, "
                                 "one's epilogue running while the other multiplies (cta_tile is one warpgroup's)"),
          Knob::flag("epilogue_turns", "with pingpong, off unless asked: the warpgroups take turns at the epilogue too, "
                                       "sharing one tile of floats, so that the ring has the shared memory of the other "
                                       "(pays only where two such tiles leave the ring few stages and the epilogue is "
                                       "short)"),
          raster_knob(),
          swizzle_knob()};
}

}  // namespace

const Algorithm kImplicitGemmSm90 =
    implicit_gemm_family("implicit_gemm_sm90", sm90_knobs(), "conv2d_implicit_gemm_sm90.cu.mustache", &plan, &describe,
                         {DataType::kFloat16, DataType::kBFloat16, DataType::kFloat32}, Layout::kNHWC, {Math::kTF32});
// Float32 NCHW (math tf32) through channels-last copies in the workspace,
// as implicit_gemm_nchw.
const Algorithm kImplicitGemmSm90Nchw =
    implicit_gemm_family("implicit_gemm_sm90_nchw", sm90_knobs(), "conv2d_implicit_gemm_sm90.cu.mustache", &plan,
                         &describe, {DataType::kFloat32}, Layout::kNCHW, {Math::kTF32});

}  // namespace convgen::gen::conv2d
