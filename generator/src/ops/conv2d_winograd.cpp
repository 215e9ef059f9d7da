// conv2d, algorithm `winograd`: fused Winograd F(2x2, 3x3) for 3x3
// convolutions with stride 1 and dilation 1 (any padding), float32 NCHW.
// The output is cut into 2x2 tiles, numbered over the whole batch; tile t
// reads the 4x4 input patch d that covers it, and
//   V = B^T d B        (input transform, per input channel and tile)
//   U = G g G^T        (filter transform, per input and output channel)
//   M = sum_k U (.) V  (16 GEMMs, one per element e of the 4x4 transform)
//   Y = A^T M A        (the 2x2 outputs)
// which takes 16 multiply-adds per input channel for 4 outputs instead of
// 36. A block computes block_co output channels x block_tiles tiles for all
// 16 elements. The reduction runs over the input channels in stages of
// k_step, double-buffered in shared memory: a stage's filter taps land by
// asynchronous copies two stages ahead and are transformed at the start of
// the stage before theirs; its input patches are fetched into registers
// while the stage before is multiplied and transformed at its end. The
// filter transform is done in every block (no workspace, nothing shared
// between launches): about 2% more arithmetic than a separate pass. Each
// thread owns thread_groups of 4x4 of one element's GEMM; the output
// transform goes through shared memory. With split_k (sm_90), a cluster of
// split_k blocks computes each block tile, block z summing the stages z,
// z + split_k, ...; before the output transform they add their partial M
// through distributed shared memory in rank order (deterministic, no
// workspace), each block finishing an equal share of each chunk's channels.
// The prototype and its measurements: docs/performance.md, "Winograd".
#include <algorithm>
#include <iterator>

#include "conv2d.hpp"

namespace convgen::gen::conv2d {

namespace {

struct Winograd {
  int block_co = 0, block_tiles = 0;  // output channels and 2x2 tiles per block
  int k_step = 0;                     // input channels per shared-memory stage
  int groups_co = 1, groups_tiles = 1;  // 4x4 groups of one element's GEMM per thread
  int split_k = 1;                      // blocks of a cluster that share a block tile
};

// The transform has 16 elements; a thread keeps at most this many sums (the
// prototype's fastest schedule kept 128 at one block per SM, without spills).
constexpr int kElements = 16;
constexpr int kMaxWinogradAccumulators = 128;
// A thread's registers: the accumulators, its prefetched patches (16 each),
// and fragments, transforms and addresses: ptxas (sm_90) used 61 to 91
// registers past the first two on five schedules.
constexpr int kOtherRegisters = 80;
constexpr int kMaxRegisters = 255;
// Split K's default: the fewest stages a block of a cluster keeps.
constexpr int kMinWinogradStepsPerSplit = 4;

struct WinogradShape {
  int tiles_h, tiles_w, tiles_per_image;
  int threads_m, threads_n, threads;  // per element: threads along channels and tiles; x 16 elements
  int m_blocks, k_steps;
  int patch_loaders, patch_passes, k_per_pass;  // input patches: loaders, patches each, channels a pass
  int filter_passes;                            // filter (m, k) pairs a thread transforms
  int stage_floats, raw_floats, chunk_rows, out_floats, smem_bytes;
  int accumulators, registers;
};

WinogradShape winograd_shape(const Workload& wl, const Winograd& s) {
  WinogradShape g{};
  g.tiles_h = ceil_div(wl.out_h(), 2);
  g.tiles_w = ceil_div(wl.out_w(), 2);
  g.tiles_per_image = g.tiles_h * g.tiles_w;
  g.threads_m = s.block_co / (4 * s.groups_co);
  g.threads_n = s.block_tiles / (4 * s.groups_tiles);
  g.threads = kElements * g.threads_m * g.threads_n;
  g.m_blocks = ceil_div(wl.c_out, s.block_co);
  g.k_steps = ceil_div(wl.c, s.k_step);
  // Each loader keeps one tile and takes k_per_pass channels apart.
  const int patches = s.block_tiles * s.k_step;
  g.patch_loaders = std::min(g.threads, patches);
  g.patch_passes = g.patch_loaders > 0 ? patches / g.patch_loaders : 0;
  g.k_per_pass = s.block_tiles > 0 ? g.patch_loaders / s.block_tiles : 0;
  g.filter_passes = g.threads > 0 ? ceil_div(s.block_co * s.k_step, g.threads) : 0;
  // Shared memory: two stages of U [16][k_step][block_co] and V
  // [16][k_step][block_tiles], then two buffers of raw 3x3 taps (rows of
  // k_step x 9 + 1 floats); after the loop, the same memory holds
  // block_co / groups_co rows of M at a time.
  g.stage_floats = kElements * s.k_step * (s.block_co + s.block_tiles);
  g.raw_floats = 2 * s.block_co * (s.k_step * 9 + 1);
  g.chunk_rows = s.block_co / std::max(1, s.groups_co);
  g.out_floats = kElements * g.chunk_rows * s.block_tiles;
  g.smem_bytes = 4 * std::max(2 * g.stage_floats + g.raw_floats, g.out_floats);
  g.accumulators = kElements * s.groups_co * s.groups_tiles;
  g.registers = g.accumulators + kElements * g.patch_passes + kOtherRegisters;
  return g;
}

// The default, from a sweep on the H100 of three tiles over the 15 3x3
// stride-1 layers of the dense benchmark (docs/performance.md, "Winograd"):
//   large  64 x 32 tiles, 4x2 groups a thread: the fastest GEMM, one block per SM;
//   medium 32 x 32, 2x2 groups: one block per SM;
//   small  32 x 16, 2x1 groups: two blocks per SM, four times the blocks of the large.
// The rule takes the tile whose blocks finish first: the waves of blocks
// the SMs run (ceil(blocks / SMs)) times a block's measured time, relative
// 2048 : 1250 : 665 (two small blocks share an SM). That picks the sweep's
// fastest of the three on 14 of the 15 layers (ResNet-34's 28x28 at batch
// 8: the small tile, 43.4 us against the large one's 41.1). 8 input channels a stage; the
// small tile takes 16 on deep reductions (384 channels and up, 10% faster)
// and all of them at once up to 16.
struct DefaultTile {
  Winograd schedule;
  double block_time;  // relative
};
constexpr DefaultTile kDefaultTiles[] = {
    {{64, 32, 8, 4, 2, 1}, 2048},
    {{32, 32, 8, 2, 2, 1}, 1250},
    {{32, 16, 8, 2, 1, 1}, 665},
};

Winograd default_winograd(const Workload& wl, const PlanOptions& options) {
  const WinogradShape any = winograd_shape(wl, Winograd{4, 4, 1, 1, 1});
  const long long tiles = static_cast<long long>(std::max(1, wl.n)) * any.tiles_per_image;
  const int sms = options.target.newest.sm_count;
  size_t best = 0;
  double best_time = 0;
  for (size_t i = 0; i < std::size(kDefaultTiles); ++i) {
    const Winograd& t = kDefaultTiles[i].schedule;
    const long long blocks = (tiles + t.block_tiles - 1) / t.block_tiles * ceil_div(wl.c_out, t.block_co);
    const double time = static_cast<double>((blocks + sms - 1) / sms) * kDefaultTiles[i].block_time;
    if (i == 0 || time < best_time) best = i, best_time = time;
  }
  // Where the stages do not fit the library's GPUs (a T4's 64 KiB), fewer
  // input channels a stage down to 4, then the next smaller tile; the
  // smallest one halves on to 1 in plan().
  const int limit = library_shared_limit(options);
  Winograd s;
  for (size_t i = best; i < std::size(kDefaultTiles); ++i) {
    s = kDefaultTiles[i].schedule;
    if (s.block_tiles == 16 && (wl.c >= 384 || wl.c <= 16)) s.k_step = 16;
    s.k_step = std::min(s.k_step, ops::pow2_at_least(wl.c));
    while (winograd_shape(wl, s).smem_bytes > limit && s.k_step > 4) s.k_step /= 2;
    if (winograd_shape(wl, s).smem_bytes <= limit) break;
  }
  return s;
}

void plan(const Workload& wl, const PlanOptions& options, KernelPlan& p) {
  const ScheduleRequest& req = wl.schedule;
  if (!is_winograd_shape(wl)) {
    throw InputError({{req.algorithm ? req.algorithm_where : req.where,
                       "the winograd algorithm runs 3x3 convolutions with stride 1 and dilation 1; this one is " +
                           num(wl.kh) + "x" + num(wl.kw) + " with stride " + ops::pair_name(wl.stride_h, wl.stride_w) +
                           " and dilation " + ops::pair_name(wl.dilation_h, wl.dilation_w) +
                           ": use algorithm: direct"}});
  }
  Winograd s = default_winograd(wl, options);
  s.block_co = req.value("block_co").value_or(s.block_co);
  s.block_tiles = req.value("block_tiles").value_or(s.block_tiles);
  s.k_step = req.value("k_step").value_or(s.k_step);
  s.groups_co = req.value("groups_co").value_or(s.groups_co);
  s.groups_tiles = req.value("groups_tiles").value_or(s.groups_tiles);
  // The stages of the block tile's computation, in a cluster of blocks
  // where the block tiles leave at least half of the SMs idle (deep layers
  // on small planes at small batches), up to as many blocks an SM as the
  // register cap allows. With fewer idle SMs it did not pay: ResNet-34's
  // 512-channel 7x7 layer at batch 8 (128 blocks on 132 SMs) ran 13% slower
  // split in 2 (56.3 -> 63.8 us, H100), where 48 and 32 blocks of the deep
  // batch-1 layers ran 1.5 and 1.9 times faster split in 4 and 8
  // (docs/performance.md, "Split K in winograd").
  const auto split_default = [&](const WinogradShape& g) {
    const long long tiles = static_cast<long long>(std::max(1, wl.n)) * g.tiles_per_image;
    const long long blocks = (tiles + s.block_tiles - 1) / s.block_tiles * g.m_blocks;
    if (2 * blocks > options.target.newest.sm_count) return 1;
    return default_split_k(blocks, g.k_steps, g.chunk_rows, min_blocks(g.threads, g.registers),
                           kMinWinogradStepsPerSplit, options);
  };

  std::vector<Diagnostic> errors;
  const SourceLocation& tile_at = req.at("block");
  if (s.block_co % (4 * s.groups_co) != 0 || s.block_tiles % (4 * s.groups_tiles) != 0) {
    throw InputError({{tile_at, "block " + num(s.block_co) + "x" + num(s.block_tiles) +
                                    " does not split into thread_groups " + num(s.groups_co) + "x" +
                                    num(s.groups_tiles) + " groups of 4x4 per thread; each side must be a "
                                    "multiple of 4 x its thread_groups"}});
  }
  // The default halves its stage until it fits the library's GPUs.
  const int limit = library_shared_limit(options);
  WinogradShape g = winograd_shape(wl, s);
  while (g.smem_bytes > limit && !req.has("k_step") && s.k_step > 1) {
    s.k_step /= 2;
    g = winograd_shape(wl, s);
  }
  s.split_k = req.value("split_k").value_or(split_default(g));
  check_split_k(req, s.split_k, g.k_steps, s.k_step, g.chunk_rows, options, errors);
  if (g.threads > kMaxThreads) {
    errors.push_back({tile_at, "block " + num(s.block_co) + "x" + num(s.block_tiles) + " with thread_groups " +
                                   num(s.groups_co) + "x" + num(s.groups_tiles) + " needs 16 x " +
                                   num(g.threads_m) + " x " + num(g.threads_n) + " = " + num(g.threads) +
                                   " threads per block; CUDA allows at most " + num(kMaxThreads)});
  }
  const int patches = s.block_tiles * s.k_step;
  if (g.patch_loaders % s.block_tiles != 0 || patches % g.patch_loaders != 0) {
    errors.push_back({req.at("k_step"), "the block's " + num(g.threads) + " threads cannot load the " +
                                            num(patches) + " input patches of a stage (" + num(s.block_tiles) +
                                            " tiles x k_step " + num(s.k_step) +
                                            ") in whole passes: the thread count must be a multiple of "
                                            "the block's tiles and divide their number, or exceed it"});
  }
  if (g.accumulators > kMaxWinogradAccumulators) {
    errors.push_back({req.at("thread_groups"), "each thread would keep " + num(g.accumulators) +
                                                   " sums live (16 x thread_groups " + num(s.groups_co) + "x" +
                                                   num(s.groups_tiles) + "); at most " +
                                                   num(kMaxWinogradAccumulators) + " fit in registers"});
  } else if (g.registers > kMaxRegisters) {
    errors.push_back({req.at("k_step"), "each thread would keep about " + num(g.registers) + " values live (" +
                                            num(g.accumulators) + " sums and " + num(g.patch_passes) +
                                            " prefetched 4x4 patches); at most " + num(kMaxRegisters) +
                                            " registers: use a smaller k_step or block"});
  }
  if (g.smem_bytes > limit) {
    errors.push_back({req.at("k_step"), "the schedule needs " + num(g.smem_bytes) +
                                            " bytes of shared memory per block (two stages of k_step " +
                                            num(s.k_step) + " transformed channels for a " + num(s.block_co) + "x" +
                                            num(s.block_tiles) + " block tile); the library's GPUs allow " +
                                            num(limit) + ": use a smaller k_step or block"});
  }
  if (!errors.empty()) throw InputError(std::move(errors));

  p.schedule.values = {{"block_co", s.block_co},
                       {"block_tiles", s.block_tiles},
                       {"k_step", s.k_step},
                       {"groups_co", s.groups_co},
                       {"groups_tiles", s.groups_tiles},
                       {"split_k", s.split_k}};
  p.threads = g.threads;
  p.block_threads = g.threads;
  p.smem_bytes = g.smem_bytes;
  // grid.x is m_blocks blocks for each block_tiles tiles of the batch.
  p.max_batch = std::min<long long>(
      kMaxBatch, (0x7fffffffLL / g.m_blocks) * s.block_tiles / static_cast<long long>(g.tiles_per_image));
  // Pairs of outputs (and of the residual) move as float2 where rows have
  // an even width.
  p.alignment = wl.out_w() % 2 == 0 ? 8 : 4;
  if (s.split_k > 1) p.min_arch = kMinSplitArch;
  auto n = [](int v) { return TemplateValue(static_cast<long long>(v)); };
  p.values = {
      {"tiles_h", n(g.tiles_h)},
      {"tiles_w", n(g.tiles_w)},
      {"tiles_per_image", n(g.tiles_per_image)},
      {"threads_m", n(g.threads_m)},
      {"threads_n", n(g.threads_n)},
      {"m_blocks", n(g.m_blocks)},
      {"k_steps", n(g.k_steps)},
      {"patch_loaders", n(g.patch_loaders)},
      {"patch_passes", n(g.patch_passes)},
      {"k_per_pass", n(g.k_per_pass)},
      {"filter_passes", n(g.filter_passes)},
      {"stage_floats", n(g.stage_floats)},
      {"chunk_rows", n(g.chunk_rows)},
      {"min_blocks", n(min_blocks(g.threads, g.registers))},
      {"ragged_m", wl.c_out % s.block_co != 0},
      {"ragged_k", wl.c % s.k_step != 0},
      {"split", s.split_k > 1},
      {"split_k", n(s.split_k)},
  };
}

std::string describe(const Schedule& s) {
  return "block " + num(s.at("block_co")) + "x" + num(s.at("block_tiles")) + " (channels x 2x2 tiles), k_step " +
         num(s.at("k_step")) + ", thread_groups " + num(s.at("groups_co")) + "x" + num(s.at("groups_tiles")) +
         " (4x4 of one element's GEMM each)" + (s.at("split_k") > 1 ? ", split_k " + num(s.at("split_k")) : "");
}

// A block per tile block and channel block (and split_k blocks of a
// cluster); the kernel takes the batch.
LaunchDescription launch(const KernelPlan& p) {
  LaunchDescription l;
  l.grid[0].blocks = p.number("m_blocks");
  l.grid[0].per_image = p.number("tiles_per_image");
  l.grid[0].per_block = p.schedule.at("block_tiles");
  l.grid[2].blocks = p.schedule.at("split_k");
  l.block[0] = p.block_threads;
  l.count_per_image = 1;
  l.count_of = "images";
  l.dynamic_shared_bytes = p.smem_bytes;
  return l;
}

}  // namespace

const Algorithm kWinograd{
    "winograd",
    &kOperator,
    {Knob::tuple("block", {"block_co", "block_tiles"}, 4, 256, "[channels, tiles]",
                 "output channels x 2x2 output tiles per block"),
     Knob::integer("k_step", 1, 64, "input channels per shared-memory stage (the reduction split)"),
     Knob::tuple("thread_groups", {"groups_co", "groups_tiles"}, 1, 4, "[channels, tiles]",
                 "groups of 4x4 (channels x tiles) of one transform element's GEMM per thread (virtual threads)"),
     split_k_knob()},
    "conv2d_nchw_winograd.cu.mustache",
    &plan,
    &describe,
    &launch,
    {DataType::kFloat32},
    {Layout::kNCHW},
    TuneCompiler::kNvrtc,
    &is_winograd_shape,
    kEveryMath,
};

}  // namespace convgen::gen::conv2d
