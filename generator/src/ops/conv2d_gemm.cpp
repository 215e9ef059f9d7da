// conv2d, algorithm `gemm`: a convolution as, per image, the GEMM
// out[c_out x OH*OW] = filter[c_out x K] x im2col(input)[K x OH*OW], with
// K = c x kh x kw (OIHW holds the filter as that matrix already). For 1x1
// convolutions with stride 1 and no padding im2col(input) is the input
// itself, [c x HW], read in rows; for any other filter, stride, dilation or
// padding ("im2col") a stage gathers its rows of K, (input channel, filter
// tap) pairs, from the input as it copies them, padding read as zero: no
// im2col matrix is materialized. The pixels of all images of the batch sit
// side by side along N, so small planes still fill whole tiles. A block
// computes a block_tile of output channels x pixels; the reduction runs over
// K in stages of k_step through a ring of `stages` shared-memory buffers
// (cp.async, 16-byte copies of a 1x1 input where HW % 4 == 0; one barrier a
// stage). Each thread
// owns vthreads groups of 4x4 outputs, spread a block's fraction apart so
// that a warp's 16-byte shared-memory reads are conflict-free, and applies
// the fused epilogue in registers before one 16-byte store per 4 outputs.
// With split_k (sm_90), a cluster of split_k blocks computes each tile, block
// z summing the stages z, z + split_k, ...; they add their partial tiles
// through distributed shared memory in rank order, each block finishing
// block_co / split_k of the tile's channels.
// With math tf32 or 3xtf32 the products may run on tensor cores (knob
// `products: tensor_cores`; mma.sync m16n8k8, sm_80 and newer): the same
// stages, tiles and knobs, each warp computing (16 vthreads_co) x
// (32 vthreads_pixels) of the tile and applying the epilogue to its
// accumulators (with split K they pass through shared memory, the stages'
// buffers, to be added).
#include <algorithm>

#include "conv2d.hpp"

namespace convgen::gen::conv2d {

namespace {

struct Gemm {
  int block_co = 0, block_pixels = 0;  // output channels and pixels per block
  int k_step = 0;                      // rows of K per shared-memory stage
  int stages = 2;                      // shared-memory buffers of the main loop's ring
  int vthreads_co = 1, vthreads_pixels = 1;  // 4x4 groups per thread along each
  int split_k = 1;                     // blocks of a cluster that share a tile
  int products = kFma;                 // fp32 FMA, or TF32 tensor cores (math tf32, 3xtf32)
};

struct GemmShape {
  int threads_m, threads_n, threads, m_blocks, k_steps, x_vec, x_cols, x_rows_per_pass, x_passes, w_loads, a_pitch;
  int x_pitch, tile_pitch;  // floats between staged input rows, and between rows of the tile of sums
  int smem_bytes, accumulators;
  int registers;  // a thread's estimated need: accumulators, two fragments, copy addresses and the epilogue
};

// The GEMM's K: input channels x filter taps.
int gemm_k(const Workload& wl) { return wl.c * wl.kh * wl.kw; }

// Where math tf32 lets the products run on TF32 tensor cores, the default
// does so where they measured faster than this algorithm's and the others'
// fp32 kernels: strided 3x3 layers (1.3 to 1.5 times faster on the H100,
// docs/performance.md, "Math tf32 and 3xtf32") and 1x1 layers of at least
// 32 input channels. On the H200, with the epilogue applied to the
// accumulators in registers (docs/performance.md, "The gemm algorithm's
// tensor-core epilogue in registers"), the fastest schedules convgen tune
// found for MobileNetV2's 1x1 layers at batch 64 ran 1.07 to 1.43 times
// faster on tensor cores than on FMA from 32 input channels up (32 -> 192,
// 96 -> 24, 144 -> 32, 384 -> 64, 96 -> 576); on 16 as fast, on 24
// (24 -> 144) 1.16 times slower. 3xtf32's three products a term never paid
// (0.95 to 2.4 times the fp32 kernels' time on the H100): FMA, which keeps
// its accuracy.
int default_products(const Workload& wl) {
  constexpr int kMinPointwiseChannels = 32;
  const bool pays = is_strided_3x3(wl) || (is_pointwise(wl) && wl.c >= kMinPointwiseChannels);
  return wl.math == Math::kTF32 && pays ? kTensorCores : kFma;
}

GemmShape gemm_shape(const Workload& wl, const Gemm& s) {
  const bool tensor = s.products == kTensorCores;
  GemmShape g{};
  g.threads_n = s.block_pixels / (4 * s.vthreads_pixels);
  g.threads_m = s.block_co / (4 * s.vthreads_co);
  g.threads = g.threads_m * g.threads_n;
  g.m_blocks = ceil_div(wl.c_out, s.block_co);
  g.k_steps = ceil_div(gemm_k(wl), s.k_step);
  // Input columns of a 1x1 convolution are copied 4 at a time when every
  // group of 4 pixels lies inside one image and is 16-byte aligned: HW % 4
  // == 0. Gathered im2col columns are copied one at a time.
  g.x_vec = is_pointwise(wl) && (wl.h * wl.w) % 4 == 0 ? 4 : 1;
  g.x_cols = s.block_pixels / g.x_vec;
  g.x_rows_per_pass = g.threads > 0 ? g.threads / g.x_cols : 0;
  g.x_passes = g.x_rows_per_pass > 0 ? ceil_div(s.k_step, g.x_rows_per_pass) : 0;
  g.w_loads = g.threads > 0 ? ceil_div(s.block_co * s.k_step, g.threads) : 0;
  // Weights are stored transposed, [k][m]; 4 floats of padding per row put
  // the k-rows one warp's copies touch on different banks. The tensor
  // cores' fragments read 4 rows x 8 columns a load (and their sums are
  // stored 2 columns a lane): rows 8 floats apart (mod 32) put those on
  // distinct banks, in the weights, the input and the tile of sums.
  g.a_pitch = s.block_co + (tensor ? 8 : 4);
  g.x_pitch = s.block_pixels + (tensor ? 8 : 0);
  g.tile_pitch = s.block_pixels + (tensor ? 8 : 0);
  const int stage_bytes = s.stages * (s.k_step * g.a_pitch + s.k_step * g.x_pitch) * 4;
  const int tile_bytes = s.block_co * g.tile_pitch * 4;
  // The block's tile of sums, with split K only: with tensor cores in the
  // stages' buffers once the main loop is done; on FMA beside them.
  g.smem_bytes = s.split_k == 1 ? stage_bytes : tensor ? std::max(stage_bytes, tile_bytes) : stage_bytes + tile_bytes;
  g.accumulators = 16 * s.vthreads_co * s.vthreads_pixels;
  // The fragments a k-row: 4 weights and 4 inputs a 4x4 group on FMA; on
  // tensor cores 4 a 16-channel tile and 2 a tile of 8 pixels, as floats
  // and as TF32, and twice that with 3xtf32's remainders (ptxas needed 184
  // registers for a 3xtf32 1x1 kernel of 2x2 groups split in 2, and spilled
  // under the FMA estimate's cap).
  const int fragments = tensor ? (4 * s.vthreads_co + 8 * s.vthreads_pixels) * 2 * (wl.math == Math::k3xTF32 ? 2 : 1)
                               : 8 * (s.vthreads_co + s.vthreads_pixels);
  // Plus 40 for indices, pointers and the epilogue, and one a copy the
  // thread issues a stage. A flat 64 let ptxas give MobileNetV2's 24 -> 144
  // 1x1 kernel (2x2 groups, 64 threads, 8 copies a stage) 141 registers
  // under the ring of stages, 7 blocks an SM; asked for 7 blocks it fits 127
  // without spilling, 8 blocks. A flat 48 made 384 -> 96 (16 copies a
  // stage) spill.
  g.registers = g.accumulators + fragments + 40 + g.x_passes + g.w_loads;
  return g;
}

// The default, from a sweep on the H100 of MobileNetV2's 1x1 layers at
// batch 64 (docs/performance.md, "Dense convolution"): the fastest swept on
// 5 of 9 rows, within 2% on 3 more, 9% off on 384->64.
// 128 pixels a block; 16 input channels a stage where c is 16 or a multiple
// of 16 from 128 up, else 8. Output channels: a block covers all of a few
// (c_out <= 24: the input is read once); a wide tile for a single stage
// (c <= 16); few outputs and a long reduction: 16 a block, for more blocks;
// otherwise 32 (8x8 outputs a thread, 64 threads).
// The blocks of a launch for the workload's batch (1 where it is left to
// the call): channel blocks x pixel blocks.
long long gemm_blocks(const Workload& wl, const Gemm& s) {
  const long long pixels = static_cast<long long>(std::max(1, wl.n)) * wl.out_h() * wl.out_w();
  return ceil_div(wl.c_out, s.block_co) * ((pixels + s.block_pixels - 1) / s.block_pixels);
}

// Too few tiles (deep layers on small planes at batch 1: 2048 -> 512
// channels on 7x7 makes 16 blocks), where every GPU of the library has
// clusters: 64 pixels a block for planes that fill no more, then split K in
// 2, 4 or 8 while the blocks stay within one wave and every part keeps
// kMinStepsPerSplit stages (docs/performance.md, "Split K").
constexpr int kMinStepsPerSplit = 8;

// im2col (any other shape): 64 x 64 with 16 rows of K a stage, 2x1 groups
// a thread (128 threads, a pixel column each); plan() splits K as above.
// From two sweeps on the H100 (docs/performance.md, "gemm for any
// filter"): of 7 tiles over four strided 3x3 layers and a 5x5 one, the
// fastest on four; of 4 tiles over ResNet's six stride-2 3x3 layers at
// batches 1, 8 and 32, the fastest on 8 of 18 and on average 6% (at most
// 20%) off the fastest of the four. On tensor cores, 64 x 128 with 2x2
// groups a thread (warps of 32 x 64) where those tiles still make two
// waves: of 5 tiles on two 3x3 layers at batch 32 (stride 1 and 2), the
// fastest, 15-17% ahead of 64 x 64; on fewer tiles (batch 8, 14^2) 64 x 64
// was as fast or faster (docs/performance.md, "Math tf32 and 3xtf32"). In
// fp32 FMAs, 128 x 64 with 4x1 groups a thread where those tiles make two
// waves: of ResNet's six stride-2 3x3 layers at batches 1, 8 and 32 on the
// H200, those are 64 -> 128 and 128 -> 128 channels on 56x56 at batch 32,
// 14% and 16% faster than 64 x 64 (135.5 -> 116.2 and 263.4 -> 220.8 us);
// on the other 16 (fewer blocks) it lost, by 8 to 22% at batch 32 and by
// 11% to 13x at batches 1 and 8, where its stages leave no room to split K
// (docs/performance.md, "gemm for any filter: the tile at batch 32").
Gemm default_gemm(const Workload& wl, const PlanOptions& options, int products) {
  Gemm s;
  s.products = products;
  if (!is_pointwise(wl)) {
    s.block_co = 64, s.block_pixels = 64, s.k_step = 16, s.vthreads_co = 2, s.vthreads_pixels = 1;
    const long long two_waves = 2LL * options.target.newest.sm_count;
    Gemm wide = s;
    if (products == kTensorCores) {
      wide.block_pixels = 128, wide.vthreads_pixels = 2;
    } else {
      wide.block_co = 128, wide.vthreads_co = 4;
    }
    // (A layer of fewer than 128 output channels would leave FMA rows of
    // the 128 x 64 tile idle.)
    const bool fills = products == kTensorCores || wl.c_out >= 128;
    if (fills && gemm_blocks(wl, wide) >= two_waves) s = wide;
    return s;
  }
  // (On tensor cores, the same tiles: of 5 swept on 1x1 layers, none won on
  // all of them; docs/performance.md, "Math tf32 and 3xtf32".)
  s.block_pixels = 128;
  s.k_step = wl.c % 16 == 0 && (wl.c >= 128 || wl.c == 16) ? 16 : 8;
  // Scalar copies of the input (H x W % 4 != 0) need a thread per pixel
  // column of the tile.
  s.vthreads_pixels = (wl.h * wl.w) % 4 == 0 ? 2 : 1;
  if (wl.c_out <= 24) {
    s.block_co = ceil_div(wl.c_out, 8) * 8, s.vthreads_co = 1;
  } else if (wl.c <= 16) {
    s.block_co = 64, s.vthreads_co = 2;
  } else if (wl.c_out <= 64 && wl.c >= 128) {
    s.block_co = 16, s.vthreads_co = 1;
  } else {
    s.block_co = 32, s.vthreads_co = 2;
  }
  // Scalar copies give each of a tile row's pixels its own thread: the
  // thread count (block_co / (4 vthreads_co) x 32) must be a multiple of the
  // 128 pixels, so block_co a multiple of 16 x vthreads_co.
  // A warp of tensor cores computes 16 x vthreads_co channels: the same.
  if (s.vthreads_pixels == 1 || s.products == kTensorCores) {
    s.block_co = ceil_div(s.block_co, 16 * s.vthreads_co) * 16 * s.vthreads_co;
  }
  if (gemm_blocks(wl, s) < options.target.newest.sm_count && oldest_arch(options) >= kMinSplitArch &&
      static_cast<long long>(std::max(1, wl.n)) * wl.h * wl.w <= 64) {
    s.block_pixels = 64;
  }
  return s;
}

// Buffers of the main loop's ring, once the stage's depth is known: 3 for
// 1x1 layers whose stages hold 8 rows of K, else 2. Short stages of the
// thin, memory-bound 1x1 layers need two stages' copies in flight; with
// longer stages the third buffer only costs shared memory. On the H200,
// of MobileNetV2's 1x1 layers at batch 64 (docs/performance.md, "The ring
// of stages in the product"), the four with 8-row stages ran faster
// with 3 buffers than with 2 (2-9%), the others (16 rows) as fast or up
// to 3% slower.
int default_stages(const Workload& wl, const Gemm& s) { return is_pointwise(wl) && s.k_step == 8 ? 3 : 2; }

void plan(const Workload& wl, const PlanOptions& options, KernelPlan& p) {
  const ScheduleRequest& req = wl.schedule;
  if (!gemm_filter_fits(wl)) {
    throw InputError({{req.algorithm ? req.algorithm_where : req.where,
                       "the filter holds " + num(static_cast<long long>(wl.c_out) * gemm_k(wl)) +
                           " elements; the gemm algorithm indexes it with 32-bit offsets (at most 2^31 - 1): use "
                           "algorithm: direct"}});
  }
  // The products first: the default tile fits them.
  Gemm s = default_gemm(wl, options, req.value("products").value_or(default_products(wl)));
  s.block_co = req.value("block_co").value_or(s.block_co);
  s.block_pixels = req.value("block_pixels").value_or(s.block_pixels);
  s.k_step = req.value("k_step").value_or(s.k_step);
  s.vthreads_co = req.value("vthreads_co").value_or(s.vthreads_co);
  s.vthreads_pixels = req.value("vthreads_pixels").value_or(s.vthreads_pixels);
  s.stages = req.value("stages").value_or(default_stages(wl, s));

  std::vector<Diagnostic> errors;
  const SourceLocation& tile_at = req.at("block_tile");
  if (s.block_co % (4 * s.vthreads_co) != 0 || s.block_pixels % (4 * s.vthreads_pixels) != 0) {
    errors.push_back({tile_at, "block_tile " + num(s.block_co) + "x" + num(s.block_pixels) +
                                   " does not split into vthreads " + num(s.vthreads_co) + "x" +
                                   num(s.vthreads_pixels) + " groups of 4x4 outputs per thread; each side must be "
                                   "a multiple of 4 x its vthreads"});
    throw InputError(std::move(errors));
  }
  check_products_math(req, s.products, wl, options);
  if (s.products == kTensorCores) {
    // Tensor cores: a warp computes (16 vthreads_co) x (32 vthreads_pixels)
    // in mma tiles of 16 x 8, over 8 rows of K at a time.
    if (s.block_co % (16 * s.vthreads_co) != 0 || s.block_pixels % (32 * s.vthreads_pixels) != 0) {
      errors.push_back({tile_at, "block_tile " + num(s.block_co) + "x" + num(s.block_pixels) + " does not split " +
                                     "into warp tiles of " + num(16 * s.vthreads_co) + "x" +
                                     num(32 * s.vthreads_pixels) + " (math " + to_string(wl.math) + ": vthreads " +
                                     num(s.vthreads_co) + "x" + num(s.vthreads_pixels) + " per warp of tensor "
                                     "cores, 16 channels x 32 pixels each)"});
    }
    if (s.k_step % 8 != 0) {
      errors.push_back({req.at("k_step"), "k_step " + num(s.k_step) + " is not a multiple of 8, the rows of K of one "
                                          "tensor-core product (math " + to_string(wl.math) + ")"});
    }
    if (!errors.empty()) throw InputError(std::move(errors));
  }
  // Split K where the tiles leave SMs idle; not where the partial tile
  // would not fit beside the stages.
  const int smem_limit = std::min(options.max_shared_bytes, kMaxStaticSharedBytes);
  s.split_k = req.value("split_k").value_or(
      default_split_k(gemm_blocks(wl, s), ceil_div(gemm_k(wl), s.k_step), s.block_co, 1, kMinStepsPerSplit, options));
  if (!req.has("split_k") && s.split_k > 1 && gemm_shape(wl, s).smem_bytes > smem_limit) s.split_k = 1;
  const GemmShape g = gemm_shape(wl, s);
  if (g.threads > kMaxThreads) {
    errors.push_back({tile_at, "block_tile " + num(s.block_co) + "x" + num(s.block_pixels) + " with vthreads " +
                                   num(s.vthreads_co) + "x" + num(s.vthreads_pixels) + " needs " + num(g.threads) +
                                   " threads per block; CUDA allows at most " + num(kMaxThreads)});
  }
  if (g.threads % g.x_cols != 0) {
    errors.push_back({tile_at, "the block's " + num(g.threads) + " threads cannot copy rows of " + num(g.x_cols) +
                                   " input vectors (" + num(s.block_pixels) + " pixels) in whole passes: the "
                                   "thread count must be a multiple of block_pixels / " + num(g.x_vec)});
  }
  if (g.accumulators > kMaxAccumulators) {
    errors.push_back({req.at("vthreads"), "each thread would keep " + num(g.accumulators) +
                                              " outputs live (vthreads " + num(s.vthreads_co) + "x" +
                                              num(s.vthreads_pixels) + " groups of 4x4); at most " +
                                              num(kMaxAccumulators) + " fit in registers"});
  }
  check_split_k(req, s.split_k, g.k_steps, s.k_step, s.block_co, options, errors);
  if (g.smem_bytes > smem_limit) {
    errors.push_back({req.at("k_step"), "the schedule stages " + num(g.smem_bytes) +
                                            " bytes of shared memory per block; the limit is " + num(smem_limit) +
                                            ": use a smaller k_step or block_tile, or fewer stages"});
  }
  if (!errors.empty()) throw InputError(std::move(errors));

  p.schedule.values = {{"block_co", s.block_co},
                       {"block_pixels", s.block_pixels},
                       {"k_step", s.k_step},
                       {"stages", s.stages},
                       {"vthreads_co", s.vthreads_co},
                       {"vthreads_pixels", s.vthreads_pixels},
                       {"split_k", s.split_k},
                       {"products", s.products}};
  p.threads = g.threads;
  p.block_threads = g.threads;
  p.smem_bytes = g.smem_bytes;
  // TF32 tensor cores (mma.sync, cvt.rna.tf32): sm_80; clusters: sm_90.
  if (s.products == kTensorCores) p.min_arch = kMinMmaSyncArch;
  if (s.split_k > 1) p.min_arch = kMinSplitArch;
  // grid.x is m_blocks blocks for each block_pixels pixels of the batch, at
  // most 2^31 - 1: the batch's pixels may fill that many pixel blocks.
  p.max_batch = std::min<long long>(kMaxBatch, (0x7fffffffLL / g.m_blocks) * s.block_pixels /
                                                   (static_cast<long long>(wl.out_h()) * wl.out_w()));
  // 16-byte copies of the input and stores of the output.
  p.alignment = g.x_vec == 4 ? 16 : 4;
  auto n = [](int v) { return TemplateValue(static_cast<long long>(v)); };
  p.values = {
      {"threads_m", n(g.threads_m)},         {"threads_n", n(g.threads_n)},
      {"m_blocks", n(g.m_blocks)},           {"k_steps", n(g.k_steps)},
      {"x_vec", n(g.x_vec)},                 {"x_cols", n(g.x_cols)},
      {"x_rows_per_pass", n(g.x_rows_per_pass)}, {"x_passes", n(g.x_passes)},
      {"w_loads", n(g.w_loads)},             {"a_pitch", n(g.a_pitch)},
      {"a_pad", n(g.a_pitch - s.block_co)},   {"x_pitch", n(g.x_pitch)},
      {"tile_pitch", n(g.tile_pitch)},
      {"pixels", n(wl.out_h() * wl.out_w())}, {"min_blocks", n(min_blocks(g.threads, g.registers))},
      {"ragged_m", wl.c_out % s.block_co != 0},
      {"ragged_k", gemm_k(wl) % s.k_step != 0},
      {"split", s.split_k > 1},
      {"im2col", !is_pointwise(wl)},
      {"gemm_k", n(gemm_k(wl))},
      {"tensor_cores", s.products == kTensorCores},
      {"three_products", s.products == kTensorCores && wl.math == Math::k3xTF32},
      {"math", std::string(to_string(wl.math))},
      {"finish_from_tile", s.split_k > 1},
      {"pair_stores", g.x_vec == 4},
      {"warp_co", n(16 * s.vthreads_co)},
      {"warp_pixels", n(32 * s.vthreads_pixels)},
      {"vthreads_pixels_x4", n(4 * s.vthreads_pixels)},
  };
}

std::string describe(const Schedule& s) {
  return "block_tile " + num(s.at("block_co")) + "x" + num(s.at("block_pixels")) + ", k_step " +
         num(s.at("k_step")) + (s.at("stages") != 2 ? ", " + num(s.at("stages")) + " stages" : "") + ", vthreads " +
         num(s.at("vthreads_co")) + "x" + num(s.at("vthreads_pixels")) + " (4x4 outputs each)" +
         (s.at("split_k") > 1 ? ", split_k " + num(s.at("split_k")) : "") +
         (s.at("products") == kTensorCores ? ", products tensor_cores" : "");
}

// A block per pixel block and channel block (and split_k blocks of a
// cluster along z); the kernel takes the batch.
LaunchDescription launch(const KernelPlan& p) {
  LaunchDescription l;
  l.grid[0].blocks = p.number("m_blocks");
  l.grid[0].per_image = p.number("pixels");
  l.grid[0].per_block = p.schedule.at("block_pixels");
  l.grid[2].blocks = p.schedule.at("split_k");
  l.block[0] = p.block_threads;
  l.count_per_image = 1;
  l.count_of = "images";
  return l;
}

}  // namespace

const Algorithm kGemm{
    "gemm",
    &kOperator,
    {Knob::tuple("block_tile", {"block_co", "block_pixels"}, 4, 512, "[channels, pixels]",
                 "output channels x pixels per block"),
     Knob::integer("k_step", 1, 64, "rows of K (input channels x filter taps) per shared-memory stage (the reduction split)"),
     Knob::integer("stages", kMinPipelineStages, kMaxPipelineStages,
                   "shared-memory buffers of the main loop's ring: stage i + stages - 1 is copied while stage i is "
                   "computed"),
     Knob::tuple("vthreads", {"vthreads_co", "vthreads_pixels"}, 1, 4, "[channels, pixels]",
                 "groups of 4x4 outputs per thread, spread over the block tile (virtual threads)"),
     split_k_knob(),
     products_knob()},
    "conv2d_nchw_gemm.cu.mustache",
    &plan,
    &describe,
    &launch,
    {DataType::kFloat32},
    {Layout::kNCHW},
    TuneCompiler::kNvrtc,
    &is_pointwise,
    kEveryMath,
};

}  // namespace convgen::gen::conv2d
