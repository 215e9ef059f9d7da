// conv2d, algorithm `implicit_gemm`: float16/bfloat16 NHWC convolutions on
// tensor cores, and float32 ones with math tf32 or 3xtf32. The convolution
// is the GEMM
//   out[M = N*OH*OW pixels, N = c_out] = im2col(input)[M, K = kh*kw*c] x filter[K, c_out]
// (the filter is [c_out, kh, kw, c], PyTorch's channels_last weight), summed
// in fp32. The main loop is CUTLASS's (the nvidia-cutlass headers, version
// pinned in scripts/install_deps.sh): a block computes a cta_m x cta_n tile
// of the GEMM, its warps warp_m x warp_n each with mma.sync (16x8x16 for
// half operands, 16x8x8 for tf32; 3xtf32 is CUTLASS's three products), over K
// in steps of cta_k staged through `stages` buffers of shared memory by
// cp.async; padding and strides are predicates of the copies. The epilogue
// is convgen's: the accumulators go through shared memory to rows of
// output channels, where each thread applies bias or scale/shift, the
// residual and the activation in fp32 and stores one vector of the dtype.
//
// It needs tensor cores with mma.sync and cp.async: sm_80 and newer. A
// library built for an older GPU too compiles an empty body there, and the
// runtime runs the generic kernel on such a GPU.
//
// Algorithm `implicit_gemm_nchw` runs the same main loop for float32 NCHW
// convolutions with math tf32 or 3xtf32 (CUTLASS's iterators read NHWC
// only): a first launch copies the filter [c_out, c, kh, kw] and the input
// [N, c, h, w] channels-last into the call's workspace, their channels
// padded with zeros to a multiple of 16 bytes; the epilogue writes the
// output, and reads the residual, in NCHW. The copies cost a read and a
// write of the input and the filter, which the tensor cores repay on
// compute-bound layers.
#include <algorithm>
#include <vector>

#include "conv2d.hpp"

namespace convgen::gen::conv2d {

namespace {

// How the main loop walks K (the `iterator` knob's words, in this order):
// kOptimized steps through one filter tap's channels at a time (c even:
// its copies move 2 channels at least); kFewChannels takes the filter's
// taps and channels as one run of K = kh x kw x c, zero-padded in
// registers, for the stems' 3 or 4 channels (and any odd c), where a step
// of 32 channels of one tap would be mostly zeros.
enum Iterator { kOptimized = 0, kFewChannels = 1 };

struct ImplicitGemm {
  int cta_m = 0, cta_n = 0, cta_k = 0;  // the block's tile of the GEMM: pixels, output channels, reduction
  int warp_m = 0, warp_n = 0;           // one warp's part of it
  int stages = 0;                       // shared-memory buffers of the main loop's pipeline
  int split_k = 1;                      // blocks of a cluster that share a tile, each summing part of K
  int iterator = kOptimized;            // how the main loop walks K
};

// (The kernels run from kMinMmaSyncArch, conv2d.hpp; a split kernel needs
// kMinSplitArch: clusters.)

// The main loop's pipelines: the cp.async one of 3 stages and more, and
// the one that stages through registers (an odd c of half elements), of 2.
constexpr int kMinCpAsyncStages = 3;
constexpr int kRegisterStages = 2;
constexpr int kMaxDefaultSplitK = 4;  // the default rule's most parts
constexpr int kMinStepsPerSplit = 8;  // the default rule's fewest K steps a part
struct ImplicitGemmShape {
  int warps, threads;
  int element_bytes;  // 2 (half) or 4 (float32)
  int in_vec;   // elements per copy of input and filter: 16, 8, 4 or 2 bytes' worth
  int out_vec;  // elements per epilogue load and store of output and residual
  int mainloop_bytes, epilogue_bytes, smem_bytes;
  int k_steps;  // main-loop steps of cta_k along K
  int n_tiles;
};

ImplicitGemmShape implicit_gemm_shape(const Workload& wl, const ImplicitGemm& s) {
  ImplicitGemmShape g{};
  g.warps = (s.cta_m / s.warp_m) * (s.cta_n / s.warp_n);
  g.threads = 32 * g.warps;
  g.element_bytes = ops::element_bytes(wl);
  g.in_vec = vector_elements(wl.c, g.element_bytes);
  g.out_vec = vector_elements(wl.c_out, g.element_bytes);
  // CUTLASS's multistage storage: each stage holds the A tile (cta_m x
  // cta_k) and the B tile (cta_k x cta_n), unpadded (swizzled); the
  // template checks this against sizeof.
  g.mainloop_bytes = s.stages * (s.cta_m + s.cta_n) * s.cta_k * g.element_bytes;
  g.k_steps = s.iterator == kFewChannels ? ceil_div(wl.kh * wl.kw * wl.c, s.cta_k) : wl.kh * wl.kw * ceil_div(wl.c, s.cta_k);
  g.epilogue_bytes = s.cta_m * (s.cta_n + implicit_gemm_epilogue_pad(wl)) * 4;
  g.smem_bytes = std::max(g.mainloop_bytes, g.epilogue_bytes);
  g.n_tiles = ceil_div(wl.c_out, s.cta_n);
  return g;
}

// The default, from a sweep of 8 tiles over the benchmark's 28 float16
// layers on the H100 (docs/performance.md, "Tensor-core dense conv2d:
// implicit_gemm"): the fastest of the 8 on 25 layers, 4-12% off on 3.
// Output channels: 32 a block where c_out <= 32 (128 x 32, 4 warps of
// 32 x 32, 6 stages); else the largest tile of a list that still makes two
// blocks for every three SMs: for c_out <= 64, 256 x 64 (k 32), 128 x 64,
// 64 x 64; otherwise 128 x 128, 64 x 128, 64 x 64. The reduction step is 32
// where c <= 32 (a step covers one filter tap's channels) and for the
// 128 x 128 tile of a 1x1 convolution, else 64; stages as the tile's
// shared memory allows (3 to 6). Float32 (tf32, 3xtf32) takes the same
// tiles with the same bytes a step: half the reduction step in elements.
struct TileChoice {
  int cta_m, cta_n, cta_k, warp_m, warp_n, stages;
};

ImplicitGemm default_tiles(const Workload& wl, const PlanOptions& options, int batch) {
  const long long pixels = 1LL * batch * wl.out_h() * wl.out_w();
  const long long enough_blocks = std::max(1, options.target.newest.sm_count) * 2LL / 3;
  const int element_bytes = ops::element_bytes(wl);
  const bool thin = wl.c * element_bytes <= 64;  // a 64-byte step covers one tap's channels
  const bool one_by_one = wl.kh == 1 && wl.kw == 1;  // any stride and padding
  // Float32 on up to 8 channels (the stems): CUTLASS's few_channels
  // iterators hold every copy of a step in registers, one float a copy
  // where c is odd. Warp tiles of 32 x 32 and at most 8 copies a thread of
  // each operand's step: ptxas spilled 140 bytes on ResNet's 7x7 stem in
  // 256 x 64 tiles of 64 x 64 warps, and 940 on a 4x4 stem in 128 x 128,
  // none in 128 x 64 or 64 x 128 of 32 x 32 warps, which ran 2.1 to 2.7
  // times faster on the H200 (docs/performance.md, "Float32 stems on
  // tensor cores"). Where c_out <= 32 the 4 warps of 128 x 32 keep 16 copies
  // (8 bytes spilled), but ran faster than any other tile.
  const bool few_floats = element_bytes == 4 && wl.c <= 8;
  // (Built, not assigned: g++ 12 at -O2 warned of a null argument in
  // vector's assignment from a list.)
  const std::vector<TileChoice> list = [&]() -> std::vector<TileChoice> {
    if (wl.c_out <= 32) return {{128, 32, 32, 32, 32, 6}};
    if (few_floats && wl.c_out <= 64) return {{128, 64, 32, 32, 32, 3}, {64, 64, 32, 32, 32, 3}};
    if (few_floats) return {{64, 128, 32, 32, 32, 3}, {64, 64, 32, 32, 32, 3}};
    if (wl.c_out <= 64) return {{256, 64, 32, 64, 64, 5}, {128, 64, 64, 64, 32, 4}, {64, 64, 64, 32, 32, 5}};
    const TileChoice wide = thin || one_by_one ? TileChoice{128, 128, 32, 64, 64, 5} : TileChoice{128, 128, 64, 64, 64, 3};
    return {wide, {64, 128, 64, 32, 64, 4}, {64, 64, 64, 32, 32, 5}};
  }();
  TileChoice t = list.back();
  for (const TileChoice& c : list) {
    if (output_tiles(wl, pixels, c.cta_m, c.cta_n) >= enough_blocks) {
      t = c;
      break;
    }
  }
  // A 32-deep step for thin inputs, with twice the stages (the same bytes).
  if (thin && t.cta_k == 64) t.cta_k = 32, t.stages = std::min(2 * t.stages, 8);
  // The list's steps are of 2-byte elements.
  ImplicitGemm s{t.cta_m, t.cta_n, t.cta_k * 2 / element_bytes, t.warp_m, t.warp_n, t.stages, 1, kOptimized};
  // 3xtf32 holds each operand fragment twice (a TF32 part and its
  // remainder): ptxas spilled 1.2 to 1.8 KB a thread at 64 x 64 warp tiles
  // and 12 bytes at 64 x 32, none at 32 x 64 or 32 x 32 (sm_90,
  // docs/performance.md, "3xtf32's warp tiles"). Twice the warps, 8 at most
  // on the list's tiles.
  if (wl.math == Math::k3xTF32) s.warp_m = 32;
  // Up to 8 channels (the stems) or an odd count of half elements: K as one
  // run. An odd c of half elements copies single elements (2 bytes), which
  // cp.async cannot: CUTLASS's two-stage main loop that stages through
  // registers.
  const bool odd_halves = element_bytes == 2 && wl.c % 2 != 0;
  if (wl.c <= 8 || odd_halves) {
    s.iterator = kFewChannels;
    s.cta_k = 64 / element_bytes;
    if (odd_halves) {
      // Registers hold a step's copies too: a 64 x 32 warp tile at most
      // (ptxas spilled 688 bytes at 256 x 64 with 64 x 64 warps). The
      // single-element copies bound these layers, so the tile takes as
      // many warps as it holds up to 8: warp tiles of 32 x 32, 64 x 32
      // where those would make more (ResNet's 7x7 stem in 128 x 64 tiles
      // ran 1.2 to 1.5 times faster in 8 warps than in 4,
      // docs/performance.md, "Stems on three channels").
      s.stages = kRegisterStages;
      s.cta_m = std::min(s.cta_m, 128);
      s.warp_n = 32;
      s.warp_m = (s.cta_m / 32) * (s.cta_n / 32) <= 8 ? 32 : 64;
    }
    return s;
  }
  // Too few tiles still (deep layers on small planes): split K over a
  // cluster, where every GPU of the library has clusters. From a sweep of
  // split 1, 2, 4 and 8 over six such layers (docs/performance.md): double
  // while the blocks fit one wave (one per SM), each part keeps at least 8
  // steps of K, and at most 4 parts (8 was never the fastest: the partial
  // tiles' sum through distributed shared memory grows with the parts).
  const long long tiles = output_tiles(wl, pixels, s.cta_m, s.cta_n);
  if (tiles < enough_blocks && oldest_arch(options) >= kMinSplitArch) {
    const int chunks = ceil_div(wl.c, s.cta_k);
    const int k_steps = wl.kh * wl.kw * chunks;
    const long long sms = std::max(1, options.target.newest.sm_count);
    while (s.split_k * 2 <= std::min(kMaxDefaultSplitK, chunks) && tiles * s.split_k * 2 <= sms &&
           k_steps / (s.split_k * 2) >= kMinStepsPerSplit) {
      s.split_k *= 2;
    }
  }
  return s;
}

// The default, made to fit: where the tightest GPU of the library has less
// shared memory than the H100 the rule was measured on (sm_86 and sm_89:
// 99 KiB), fewer stages, down to the main loop's least.
ImplicitGemm default_implicit_gemm(const Workload& wl, const PlanOptions& options, int batch) {
  ImplicitGemm s = default_tiles(wl, options, batch);
  // 4-byte copies (c = 2 mod 4 halves, an odd c of floats): a stage is 4
  // times the copies of 16-byte ones, and ptxas spilled at 6 stages (c = 6
  // halves, 128 x 32 tile); 3 did not.
  if (implicit_gemm_shape(wl, s).in_vec * ops::element_bytes(wl) == 4) s.stages = std::min(s.stages, 3);
  const int least = s.stages == kRegisterStages ? kRegisterStages : kMinCpAsyncStages;
  const int limit = library_shared_limit(options, kMinMmaSyncArch);
  while (s.stages > least && implicit_gemm_shape(wl, s).smem_bytes > limit) --s.stages;
  return s;
}

// No more buffers than a block's steps of K can fill: the prologue fills
// stages - 1 of them, so steps + 1 hold the whole run in flight, and more
// would only cost shared memory, which on a thin 1x1 layer (1 to 3 steps)
// bounds the blocks an SM holds (docs/performance.md, "Stages that K can
// fill"). The main loop that stages through registers keeps its 2.
int stages_k_can_fill(const Workload& wl, const ImplicitGemm& s) {
  if (s.stages == kRegisterStages) return s.stages;
  const int block_steps = ceil_div(implicit_gemm_shape(wl, s).k_steps, s.split_k);
  return std::min(s.stages, std::max(kMinCpAsyncStages, block_steps + 1));
}

void plan(const Workload& spec_workload, const PlanOptions& options, KernelPlan& p) {
  const Workload wl = implicit_gemm_main_loop_workload(spec_workload);
  const bool nchw = wl.layout == Layout::kNCHW;
  const std::string algorithm = nchw ? "implicit_gemm_nchw" : "implicit_gemm";
  const ScheduleRequest& req = wl.schedule;
  check_mma_sync_gpu("algorithm '" + algorithm + "'", req.algorithm ? req.algorithm_where : wl.where, options);
  std::vector<Diagnostic> errors;
  ImplicitGemm s = default_implicit_gemm(wl, options, p.cost_batch);
  // NCHW: the copies' channels come in 16-byte runs, which the optimized
  // iterator takes whole; few_channels kept values in local memory there
  // (8 bytes on a 1x1 layer of 6 channels, up to 580 on thin 3xtf32 ones).
  if (nchw) s.iterator = kOptimized;
  s.iterator = req.value("iterator").value_or(s.iterator);
  s.cta_m = req.value("cta_m").value_or(s.cta_m);
  s.cta_n = req.value("cta_n").value_or(s.cta_n);
  s.cta_k = req.value("cta_k").value_or(s.cta_k);
  s.warp_m = req.value("warp_m").value_or(s.warp_m);
  s.warp_n = req.value("warp_n").value_or(s.warp_n);
  s.stages = req.value("stages").value_or(s.stages);
  s.split_k = req.value("split_k").value_or(s.split_k);
  // The default's split where the spec sets the tile: no more parts than
  // the spec's reduction step leaves chunks of channels, and none with
  // few_channels (a spec's tile may take 2 or 4 parts from a default that
  // measured a smaller step).
  if (!req.has("split_k")) {
    while (s.split_k > 1 && (s.split_k > ceil_div(wl.c, s.cta_k) || s.iterator == kFewChannels)) s.split_k /= 2;
  }
  if (!req.has("stages")) s.stages = stages_k_can_fill(wl, s);

  // The tiles CUTLASS's sm_80 tensor-op main loop is instantiated with
  // (those of its own kernel list): block sides of 32 to 256, a reduction
  // step of 64 or 128 bytes, warp tiles of 32 or 64 a side, 1 to 8 warps.
  const SourceLocation& cta_at = req.at("cta_tile");
  const SourceLocation& warp_at = req.at("warp_tile");
  const int element_bytes = ops::element_bytes(wl);
  if (!is_one_of(s.cta_m, {32, 64, 128, 256}) || !is_one_of(s.cta_n, {32, 64, 128, 256}) ||
      !is_cta_k(s.cta_k, element_bytes)) {
    errors.push_back({cta_at, "cta_tile " + num(s.cta_m) + "x" + num(s.cta_n) + "x" + num(s.cta_k) +
                                  " is not a tile the tensor-core main loop takes: pixels and channels must be 32, "
                                  "64, 128 or 256, the reduction step " + num(64 / element_bytes) + " or " +
                                  num(128 / element_bytes) + " (64 or 128 bytes of " + to_string(wl.dtype) + ")"});
  }
  if (!is_one_of(s.warp_m, {32, 64}) || !is_one_of(s.warp_n, {32, 64})) {
    errors.push_back({warp_at, "warp_tile " + num(s.warp_m) + "x" + num(s.warp_n) +
                                   " is not a warp tile the tensor-core main loop takes: each side must be 32 or 64"});
  }
  if (!errors.empty()) throw InputError(std::move(errors));
  if (s.cta_m % s.warp_m != 0 || s.cta_n % s.warp_n != 0) {
    throw InputError({{warp_at, "warp_tile " + num(s.warp_m) + "x" + num(s.warp_n) + " does not divide cta_tile " +
                                    num(s.cta_m) + "x" + num(s.cta_n)}});
  }
  const ImplicitGemmShape g = implicit_gemm_shape(wl, s);
  const TileOrder order = requested_tile_order(req, g.n_tiles);
  if (g.warps > 8) {
    errors.push_back({warp_at, "cta_tile " + num(s.cta_m) + "x" + num(s.cta_n) + " in warp tiles of " +
                                   num(s.warp_m) + "x" + num(s.warp_n) + " makes " + num(g.warps) +
                                   " warps; the main loop takes at most 8"});
  }
  // The main loop stores each operand's tile into shared memory in 16-byte
  // copies spread over all its threads (CUTLASS's warp-raked thread maps):
  // a tile of fewer than 16 bytes a thread leaves a thread no copy, and
  // CUTLASS does not compile (256x32 in 8 warps, for one).
  const long long copy_elements = 16LL / element_bytes * 32 * g.warps;
  if (g.warps <= 8 && (1LL * s.cta_m * s.cta_k < copy_elements || 1LL * s.cta_n * s.cta_k < copy_elements)) {
    errors.push_back({warp_at, "cta_tile " + num(s.cta_m) + "x" + num(s.cta_n) + "x" + num(s.cta_k) + " in " +
                                   num(g.warps) + " warps gives a thread less than one 16-byte copy of the " +
                                   (1LL * s.cta_m * s.cta_k < copy_elements ? "input" : "filter") +
                                   " tile (each tile needs at least " + num(16 / element_bytes) +
                                   " elements per thread, " + num(copy_elements) +
                                   "): use larger warp tiles or a larger cta_tile"});
  }
  // cp.async copies 4, 8 or 16 bytes: an odd c of half elements (2-byte
  // copies) takes the two-stage main loop, which stages through registers.
  const bool odd_halves = element_bytes == 2 && wl.c % 2 != 0;
  if (s.iterator == kOptimized && odd_halves) {
    errors.push_back({req.at("iterator"), "iterator optimized copies at least 2 channels (4 bytes) at a time; c = " +
                                              num(wl.c) + " is odd: use iterator few_channels"});
  }
  if (odd_halves && s.stages != kRegisterStages) {
    errors.push_back({req.at("stages"), "c = " + num(wl.c) + " is odd: its 2-byte copies cannot go through "
                                        "cp.async, and the main loop that stages through registers has 2 stages, "
                                        "not " + num(s.stages)});
  } else if (!odd_halves && s.stages < kMinCpAsyncStages) {
    errors.push_back({req.at("stages"), "the cp.async main loop takes " + num(kMinCpAsyncStages) + " to " +
                                        num(kMaxPipelineStages) + " stages, not " +
                                        num(s.stages) +
                                        "; 2 stages are for an odd c of " + to_string(wl.dtype == DataType::kFloat32
                                                                                          ? DataType::kFloat16
                                                                                          : wl.dtype)});
  }
  if (s.iterator == kFewChannels && s.split_k > 1) {
    errors.push_back({req.at("split_k"), "split_k runs with iterator optimized only (few_channels walks K as one "
                                         "run that CUTLASS's iterator does not split)"});
  }
  // The cluster is set at launch, so a split kernel compiles for every GPU
  // of the library; it runs on sm_90 and newer (min_arch), the generic
  // kernel on the others. The default splits only where every GPU can.
  if (s.split_k > 1 && options.target.newest.sm < kMinSplitArch) {
    errors.push_back({req.at("split_k"), "split_k " + num(s.split_k) + " runs the tile's blocks as a thread-block "
                                         "cluster, which needs sm_90 or newer; this library is built for sm_" +
                                         num(options.target.newest.sm) + " at most: leave split_k at 1"});
  }
  if (s.split_k > ceil_div(wl.c, s.cta_k)) {
    errors.push_back({req.at("split_k"), "split_k " + num(s.split_k) + " splits K into more parts than its " +
                                         num(ceil_div(wl.c, s.cta_k)) + " chunk(s) of " + num(s.cta_k) +
                                         " channels: some blocks would sum nothing"});
  }
  const int limit = library_shared_limit(options, kMinMmaSyncArch);
  if (g.smem_bytes > limit) {
    ImplicitGemm least_stages = s;
    least_stages.stages = odd_halves ? kRegisterStages : kMinCpAsyncStages;
    const int least_bytes = implicit_gemm_shape(wl, least_stages).smem_bytes;
    errors.push_back({req.at("stages"), "the schedule needs " + num(g.smem_bytes) +
                                            " bytes of shared memory per block (" + num(s.stages) + " stages of " +
                                            num(g.mainloop_bytes / s.stages) + ", or the epilogue's " +
                                            num(g.epilogue_bytes) + "); the GPUs of this library allow " +
                                            num(limit) +
                                            (least_bytes > limit ? ": use a smaller cta_tile (at " +
                                                                       num(least_stages.stages) + " stages it needs " +
                                                                       num(least_bytes) + ")"
                                                                 : ": use fewer stages or a smaller cta_tile")});
  }
  if (!errors.empty()) throw InputError(std::move(errors));

  p.schedule.values = {{"cta_m", s.cta_m},   {"cta_n", s.cta_n},   {"cta_k", s.cta_k},
                       {"warp_m", s.warp_m}, {"warp_n", s.warp_n}, {"stages", s.stages},
                       {"split_k", s.split_k}, {"iterator", s.iterator},
                       {"raster", order.raster}, {"swizzle", order.swizzle}};
  p.threads = g.threads;
  p.block_threads = g.threads;
  p.smem_bytes = g.smem_bytes;
  const long long images_per_launch = implicit_gemm_images_per_launch(wl, algorithm);
  // Every tensor is read or written in vectors: the input and filter of
  // in_vec elements, the output, residual and epilogue parameters of
  // out_vec (NCHW: the workspace's copies; the call's tensors as
  // plan_channels_last_copies says).
  p.alignment = element_bytes * std::max(g.in_vec, g.out_vec);
  p.min_arch = s.split_k > 1 ? kMinSplitArch : kMinMmaSyncArch;
  auto n = [](long long v) { return TemplateValue(v); };
  p.values = implicit_gemm_values(
      wl, {images_per_launch, g.out_vec, g.mainloop_bytes, g.epilogue_bytes, g.n_tiles, g.k_steps, s.split_k});
  p.values.insert({
      {"warps", n(g.warps)},
      {"in_vec", n(g.in_vec)},
      {"residual_ahead", false},  // one tile a block: the residual is read in the epilogue (as implicit_gemm_sm90's)
      {"params_ahead", false},    // and the epilogue's parameters
      {"epilogue_ahead", false},
      {"fast_f32", wl.math == Math::k3xTF32},
      {"mma_k", n(mma_sync_k(wl))},
      {"few_channels", s.iterator == kFewChannels},
      {"cp_async", s.stages >= kMinCpAsyncStages},
  });
  add_tile_order_values(order, false, p.values);
  if (nchw) plan_channels_last_copies(wl, spec_workload.c, p);
}

std::string describe(const Schedule& s) {
  return "cta_tile " + num(s.at("cta_m")) + "x" + num(s.at("cta_n")) + "x" + num(s.at("cta_k")) + ", warp_tile " +
         num(s.at("warp_m")) + "x" + num(s.at("warp_n")) + ", " + num(s.at("stages")) + " stages" +
         (s.at("split_k") > 1 ? ", split_k " + num(s.at("split_k")) : "") +
         (s.at("iterator") == kFewChannels ? ", iterator few_channels" : "") + describe_tile_order(s);
}

}  // namespace

int implicit_gemm_epilogue_pad(const Workload& wl) { return wl.layout == Layout::kNCHW ? 1 : 8; }

Workload implicit_gemm_main_loop_workload(const Workload& wl) {
  Workload m = wl;
  if (wl.layout == Layout::kNCHW) {
    const int vector = 16 / ops::element_bytes(wl);
    m.c = ceil_div(wl.c, vector) * vector;
  }
  return m;
}

void plan_channels_last_copies(const Workload& main_loop, int call_channels, KernelPlan& p) {
  const Workload& wl = main_loop;
  const int element_bytes = ops::element_bytes(wl);
  // The copies' launch (partials/nchw_channels_last_copies.mustache): a
  // block per tile of 32 taps x 32 channels of each output channel's
  // filter, and of 32 pixels x 32 channels of each image, within CUDA's
  // 2^31 - 1 blocks of a grid.
  const long long channel_tiles = ceil_div(1LL * wl.c, 32LL);
  const long long filter_elements = 1LL * wl.c_out * wl.kh * wl.kw * wl.c;
  // A 1x1 filter, where copied, an element a thread.
  const long long filter_blocks = wl.kh * wl.kw == 1 ? ceil_div(filter_elements, 256LL)
                                                     : wl.c_out * ceil_div(1LL * wl.kh * wl.kw, 32LL) * channel_tiles;
  const long long image_tiles = ceil_div(1LL * wl.h * wl.w, 32LL) * channel_tiles;
  p.values["images_per_launch"] =
      TemplateValue(std::min(p.number("images_per_launch"), (0x7fffffffLL - filter_blocks) / image_tiles));
  // The call's tensors are read and written one element at a time; the
  // workspace holds the filter's copy, then the input's (16-byte rows).
  p.alignment = element_bytes;
  p.workspace_fixed = element_bytes * filter_elements;
  p.workspace_per_image = 1LL * element_bytes * wl.h * wl.w * wl.c;
  p.values["in_pixels"] = TemplateValue(1LL * wl.h * wl.w);
  p.values["taps"] = TemplateValue(1LL * wl.kh * wl.kw);
  // A 1x1 filter of unpadded rows, [c_out, c, 1, 1], is channels-last
  // already: the call reads it in place where its pointer is 16-byte
  // aligned (the main loop's copies), and copies it otherwise.
  p.values["filter_channels_last"] = TemplateValue(wl.kh * wl.kw == 1 && wl.c == call_channels);
}

LaunchDescription implicit_gemm_launch(const KernelPlan& p) {
  LaunchDescription l;
  l.grid[0].per_image = p.number("pixels");
  l.grid[0].per_block = p.schedule.at("cta_m");
  l.grid[1].blocks = p.number("n_tiles");
  l.grid[2].blocks = p.schedule.at("split_k");
  l.block[0] = p.block_threads;
  // Its own launcher opts in to the shared memory; the registry records it,
  // so that a GPU that gives a block less runs the generic kernel.
  l.dynamic_shared_bytes = p.smem_bytes;
  return l;
}

Knob raster_knob() {
  Knob k = Knob::choice("raster", {"pixels", "channels"},
                        "the order blocks take the output's tiles in: panels of `swizzle` output-channel tiles, "
                        "taken down the pixel tiles (pixels), or of `swizzle` pixel tiles, taken along the channel "
                        "tiles (channels); pixels in panels of 1 is the grid's own order");
  k.per_kernel = true;
  return k;
}

Knob swizzle_knob() {
  Knob k = Knob::integer("swizzle", 1, 8,
                         "the width of raster's panels, in tiles (orders that are one on the workload's grid are "
                         "written as one)");
  k.allowed = {1, 2, 4, 8};
  k.default_value = 1;
  k.per_kernel = true;
  return k;
}

TileOrder requested_tile_order(const ScheduleRequest& req, int n_tiles) {
  const TileOrder order{req.value("raster").value_or(kRasterPixels), req.value("swizzle").value_or(1)};
  // Orders that are one on this grid are written as one, so that the tuner
  // times each once and their kernels share a compile unit's summary: a
  // single column of channel tiles has only the grid's order, and panels
  // as wide as the columns take each pixel tile's channel tiles in turn, as
  // raster channels in panels of 1 does.
  if (n_tiles == 1) return TileOrder{};
  if (order.raster == kRasterPixels && order.swizzle >= n_tiles) return TileOrder{kRasterChannels, 1};
  return order;
}

void add_tile_order_values(const TileOrder& order, bool persistent, TemplateValues& values) {
  const bool identity = order.raster == kRasterPixels && order.swizzle == 1;
  values["raster_identity"] = identity;
  values["tile_function"] = persistent || !identity;
  values["raster_channels"] = order.raster == kRasterChannels;
  values["swizzle"] = TemplateValue(static_cast<long long>(order.swizzle));
}

std::string describe_tile_order(const Schedule& s) {
  if (s.at("raster") == kRasterPixels && s.at("swizzle") == 1) return "";
  return std::string(", raster ") + (s.at("raster") == kRasterChannels ? "channels" : "pixels") + ", swizzle " +
         num(s.at("swizzle"));
}

int vector_elements(int channels, int element_bytes) {
  for (int v = 16 / element_bytes; v > 1; v /= 2) {
    if (channels % v == 0) return v;
  }
  return 1;
}

bool is_cta_k(int cta_k, int element_bytes) { return cta_k * element_bytes == 64 || cta_k * element_bytes == 128; }

long long output_tiles(const Workload& wl, long long pixels, int rows, int cols) {
  return ceil_div(pixels, 1LL * rows) * ceil_div(wl.c_out, cols);
}

TemplateValues implicit_gemm_values(const Workload& main_loop, const ImplicitGemmValues& v) {
  const Workload& wl = main_loop;
  auto n = [](long long x) { return TemplateValue(x); };
  return {
      {"images_per_launch", n(v.images_per_launch)},
      {"out_vec", n(v.out_vec)},
      {"epilogue_pad", n(implicit_gemm_epilogue_pad(wl))},
      {"nchw", wl.layout == Layout::kNCHW},
      {"gemm_c", n(wl.c)},
      {"mainloop_bytes", n(v.mainloop_bytes)},
      {"epilogue_bytes", n(v.epilogue_bytes)},
      {"n_tiles", n(v.n_tiles)},
      {"pixels", n(1LL * wl.out_h() * wl.out_w())},
      {"gemm_k", n(1LL * wl.kh * wl.kw * wl.c)},
      {"tensor_cores", true},  // every kernel: mma.sync or wgmma (the compute floor's rate)
      {"bfloat16", wl.dtype == DataType::kBFloat16},
      {"float32", wl.dtype == DataType::kFloat32},
      {"k_steps", n(v.k_steps)},
      {"split", v.split_k > 1},
  };
}

long long implicit_gemm_images_per_launch(const Workload& wl, const std::string& algorithm) {
  // Tensors of fewer bytes than this: the main loops offset pointers by
  // 32-bit byte counts (CUTLASS's iterators, the TMA's extents).
  constexpr long long kMaxTensorBytes = 1LL << 31;
  const int element_bytes = ops::element_bytes(wl);
  // The filter's size is the workload's; the input's and output's grow
  // with the batch, which the launcher runs in launches of this many.
  const long long filter_bytes = 1LL * element_bytes * wl.c_out * wl.kh * wl.kw * wl.c;
  if (filter_bytes >= kMaxTensorBytes) {
    throw InputError({{wl.where, "the filter takes " + num(filter_bytes) + " bytes; the " + algorithm +
                                     " algorithm takes tensors of less than 2^31 bytes"}});
  }
  const long long image_bytes =
      element_bytes * std::max(1LL * wl.h * wl.w * wl.c, 1LL * wl.out_h() * wl.out_w() * std::max(wl.c_out, 1));
  const long long images_per_launch = std::min<long long>(kMaxBatch, (kMaxTensorBytes - 1) / image_bytes);
  if (images_per_launch < 1) {
    throw InputError({{wl.where, "one image's input or output takes " + num(image_bytes) + " bytes; the " +
                                     algorithm + " algorithm takes tensors of less than 2^31 bytes"}});
  }
  return images_per_launch;
}

Algorithm implicit_gemm_family(std::string name, std::vector<Knob> knobs, std::string template_file,
                               void (*plan)(const Workload&, const PlanOptions&, KernelPlan&),
                               std::string (*describe)(const Schedule&), std::vector<DataType> dtypes, Layout layout,
                               std::vector<Math> float32_maths) {
  return Algorithm{
      std::move(name),
      &kOperator,
      std::move(knobs),
      std::move(template_file),
      plan,
      describe,
      &implicit_gemm_launch,
      std::move(dtypes),
      {layout},
      TuneCompiler::kNvcc,  // CUTLASS's main loops: NVRTC does not build them
      nullptr,
      std::move(float32_maths),
      // Compile units: most of a kernel's nvcc time is CUTLASS's headers and
      // main loop, the same for every kernel of one schedule (sm_80's: three
      // kernels took 29 s apart, 11.6 s in one unit; sm_90a's, 155 s and 53
      // s; docs/performance.md, "Compile units").
      true,
  };
}

namespace {

// The knobs of both layouts' algorithm.
std::vector<Knob> implicit_gemm_knobs() {
  return {Knob::tuple("cta_tile", {"cta_m", "cta_n", "cta_k"}, 16, 256, "[pixels, channels, reduction]",
                      "the block's tile of the GEMM: output pixels x output channels (32, 64, 128 or 256 each), "
                      "and the reduction step (64 or 128 bytes of the dtype)"),
          Knob::tuple("warp_tile", {"warp_m", "warp_n"}, 32, 64, "[pixels, channels]",
                      "one warp's part of the block tile, 32 or 64 a side (mma.sync tiles: 16x8x16 of half operands, "
                      "16x8x8 of tf32)"),
          Knob::integer("stages", kMinPipelineStages, kMaxPipelineStages,
                        "shared-memory buffers of the main loop's pipeline (cp.async; 2: staged through registers, odd c)"),
          split_k_knob(),
          Knob::choice("iterator", {"optimized", "few_channels"},
                       "how the main loop walks K: optimized, one filter tap's channels a step (c even); few_channels, "
                       "taps and channels as one run, zero-padded in registers (stems, odd c)"),
          raster_knob(),
          swizzle_knob()};
}

}  // namespace

const Algorithm kImplicitGemm =
    implicit_gemm_family("implicit_gemm", implicit_gemm_knobs(), "conv2d_implicit_gemm.cu.mustache", &plan, &describe,
                         {DataType::kFloat16, DataType::kBFloat16, DataType::kFloat32}, Layout::kNHWC,
                         {Math::kTF32, Math::k3xTF32});

bool implicit_gemm_nchw_by_default(const Workload& wl, const PlanOptions& options) {
  // Math tf32 (3xtf32's three products a term stay with the fp32 kernels,
  // which meet its bound), in a library whose every GPU has the tensor
  // cores (elsewhere the fp32 kernels run, not the generic one). From the
  // H200 run of the 31 NCHW tf32 rows of bench/dense.csv
  // (docs/performance.md, "Math tf32 in NCHW through channels-last
  // copies"): the copies pay from 64 input channels (on 16 and 32, and on
  // the stems, the fp32 kernels were 1.7-1.9x faster; at 64, even); on 1x1
  // layers, where the fp32 GEMM reads each operand once, only where the
  // GEMM does at least 20 multiply-adds a float it moves, c x c_out / (c +
  // c_out) >= 40 (MobileNetV2's 384 -> 64 at 55: 1.15x faster; its 32 ->
  // 192 at 27: 1.2x slower, and thinner layers up to 2.4x).
  constexpr int kMinChannels = 64, kMinPointwiseIntensity = 40;
  if (wl.math != Math::kTF32 || oldest_arch(options) < kMinMmaSyncArch || wl.c < kMinChannels) return false;
  return !is_pointwise(wl) || 1LL * wl.c * wl.c_out >= kMinPointwiseIntensity * (1LL * wl.c + wl.c_out);
}

// The same main loop for float32 NCHW on TF32 tensor cores, through
// channels-last copies in the workspace (the file's comment).
const Algorithm kImplicitGemmNchw =
    implicit_gemm_family("implicit_gemm_nchw", implicit_gemm_knobs(), "conv2d_implicit_gemm.cu.mustache", &plan,
                         &describe, {DataType::kFloat32}, Layout::kNCHW, {Math::kTF32, Math::k3xTF32});

}  // namespace convgen::gen::conv2d
