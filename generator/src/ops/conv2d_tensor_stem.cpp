// conv2d, algorithm `tensor_stem`: a network's first layer in float16 or
// bfloat16 NHWC, or float32 NHWC with math tf32 (at most 4 input channels:
// 7x7 stride 2, 3x3 stride 2, the 4x4 stride-4 patchify stem), on tensor
// cores.
//
// implicit_gemm walks such a layer's K as one run of kh x kw x c elements
// gathered one element at a time (c is odd), and those gathers bound it
// (docs/performance.md, "Stems on three channels", "Float32 stems on tensor
// cores"). In NHWC a filter row's kw taps x c channels are one contiguous
// run of the input row, and the runs of neighbouring output pixels are
// stride_w x c elements apart. So a block copies a tile's input rows whole
// into shared memory (4-byte copies), and a warp reads mma.sync's operands
// straight from there as 32-bit words: K is kh runs, each in chunks of 16
// bytes (8 half elements, 4 floats), zero-padded in registers to whole
// steps (16 half elements, 8 floats). A word of 2-byte elements holds a
// pair, which starts at an even element only where w x c and stride_w x c
// are even (every run of the tile then starts at an element of the same
// parity), which the plan asks; a run that starts at an odd element is led
// by one element of the pixel before it. A word of float32 is one element,
// rounded to TF32 as it is read.
//
// It needs mma.sync (m16n8k16 of fp16 and bf16, m16n8k8 of tf32) and
// cp.async: sm_80 and newer. A library built for an older GPU too compiles an empty body
// there, and the runtime runs the generic kernel on such a GPU.
#include <algorithm>

#include "conv2d.hpp"

namespace convgen::gen::conv2d {

namespace {

constexpr int kMaxWarps = 16;
// Float32's default: 12 warps at most, which ptxas gives 168 registers a
// thread. At 13 to 16 (128 registers: ptxas counts warps in groups of 4)
// it spilled up to 52 bytes on ResNet's 7x7 stem in 32 x 64 warp tiles and
// 8 on a 3x3 one with the residual (sm_90, CUDA 13.0).
constexpr int kMaxFloatWarps = 12;
constexpr int kMaxTileColumns = 256;  // block_outputs' range
constexpr int kDefaultPixels = 448;   // the default rule's pixels a block

struct TensorStem {
  int tile_co = 0, tile_h = 0, tile_w = 0;  // a block's output channels, rows and columns
  int warp_pixels = 0, warp_channels = 0;   // a warp's part of it
};

// Every number the template prints, derived from the knobs.
struct TensorStemShape {
  int chunk;         // elements of 16 bytes: half an mma.sync step along K
  int word;          // elements of a 32-bit word: a lane's read of a chunk, and a copy
  int lead;          // elements of the previous pixel before each run (0 or 1)
  int run_elements;  // kw x c
  int row_chunks;    // chunks of a filter row: its lead and run
  int k_pad, k_steps;
  bool masked;       // some chunk holds an element that is not a tap
  int warps_m, warps_n, warps, threads, accumulators;
  int tiles_x, tiles_per_image, channel_tiles;
  int window_rows, span, row_copies, window_pitch, filter_pitch, stage_pitch;
  int left_edge, right_edge;  // a window row's pixels that can lie past the image's left and right edges
  int filter_bytes;  // the block's filter rows, of its smem_bytes
  int smem_bytes;
};

// Output channels of a 16-byte store.
int store_vector_elements(const Workload& wl) { return 16 / ops::element_bytes(wl); }

TensorStemShape tensor_stem_shape(const Workload& wl, const TensorStem& s) {
  TensorStemShape g{};
  const int element_bytes = ops::element_bytes(wl);
  g.chunk = 16 / element_bytes;
  g.word = 4 / element_bytes;
  g.lead = (wl.pad_left * wl.c) % g.word;
  g.run_elements = wl.kw * wl.c;
  g.row_chunks = ceil_div(g.lead + g.run_elements, g.chunk);
  g.k_pad = round_up(g.chunk * wl.kh * g.row_chunks, 2 * g.chunk);
  g.k_steps = g.k_pad / (2 * g.chunk);
  g.masked = (g.lead + g.run_elements) % g.chunk != 0 || g.lead == 1;
  const int pixels = s.tile_h * s.tile_w;
  g.warps_m = s.warp_pixels > 0 ? ceil_div(pixels, s.warp_pixels) : 0;
  g.warps_n = s.warp_channels > 0 ? s.tile_co / s.warp_channels : 0;
  g.warps = g.warps_m * g.warps_n;
  g.threads = 32 * g.warps;
  g.accumulators = s.warp_pixels * s.warp_channels / 32;
  g.tiles_x = ceil_div(wl.out_w(), s.tile_w);
  g.tiles_per_image = ceil_div(wl.out_h(), s.tile_h) * g.tiles_x;
  g.channel_tiles = ceil_div(wl.c_out, s.tile_co);
  g.window_rows = (s.tile_h - 1) * wl.stride_h + (wl.kh - 1) * wl.dilation_h + 1;
  g.span = (s.tile_w - 1) * wl.stride_w + wl.kw;
  g.row_copies = ceil_div(g.lead + g.span * wl.c, g.word);
  g.left_edge = std::min(wl.pad_left, g.span);
  const int last_tile_first = (g.tiles_x - 1) * s.tile_w * wl.stride_w - wl.pad_left;
  // Disjoint from the left edge's pixels: where a window reaches past both
  // edges (padding past the filter's reach), the left edge's cover the rest,
  // and two threads would otherwise zero one element with no barrier between.
  g.right_edge = std::clamp(last_tile_first + g.span - wl.w, 0, g.span - g.left_edge);
  // A row's reads run to the last pixel's last chunk, past the copies by
  // less than a chunk (elements that are masked): in whole 16 bytes.
  g.window_pitch = round_up(std::max(g.word * g.row_copies, (s.tile_w - 1) * wl.stride_w * wl.c + g.chunk * g.row_chunks),
                            g.chunk);
  g.filter_pitch = g.k_pad + g.chunk;
  g.stage_pitch = s.warp_channels + ((8 - s.warp_channels) % 32 + 32) % 32;  // floats, 8 past a multiple of 32
  g.filter_bytes = element_bytes * s.tile_co * g.filter_pitch;
  const int epilogue_bytes = 2 * 4 * s.tile_co;
  const int window_bytes = 2 * element_bytes * g.window_rows * g.window_pitch;
  const int staging_bytes = 4 * g.warps * 16 * g.stage_pitch;  // a warp stages one mma.sync tile at a time, in fp32
  g.smem_bytes = round_up(g.filter_bytes + epilogue_bytes, 16) + window_bytes + staging_bytes;
  return g;
}

// What keeps a workload from this algorithm: "" where nothing does.
std::string misfit(const Workload& wl) {
  if (!is_stem_shape(wl)) {
    return "runs layers of at most " + num(kMaxStemChannels) + " input channels (a network's first layer); this one has " +
           num(wl.c) + ": use implicit_gemm";
  }
  if (wl.dilation_w != 1) {
    return "reads a filter row's taps as one run of the input row, which a dilation along the row (" +
           num(wl.dilation_w) + ") breaks: use implicit_gemm";
  }
  if (ops::element_bytes(wl) == 2 && ((wl.w * wl.c) % 2 != 0 || (wl.stride_w * wl.c) % 2 != 0)) {
    return "reads pairs of elements, which needs w x c (" + num(wl.w) + " x " + num(wl.c) + ") and stride_w x c (" +
           num(wl.stride_w) + " x " + num(wl.c) + ") even: use implicit_gemm";
  }
  if (wl.c_out % store_vector_elements(wl) != 0) {
    return "stores 16-byte vectors of " + num(store_vector_elements(wl)) + " output channels: c_out (" + num(wl.c_out) +
           ") must be a multiple of " + num(store_vector_elements(wl)) + "; use implicit_gemm";
  }
  return "";
}

// The default, from a sweep on the H100 over ResNet's, MobileNet's and
// ConvNeXt's stems at batch 1, 8 and 64 (docs/performance.md, "Half-precision
// stems: the tensor_stem algorithm"): all output channels up to 128 a
// block, else equal parts of at most 128; warp tiles of 32 channels (16 or
// 8 where the block's are not a multiple of 32) and 32 pixels, or 64 where
// 32 would make more than 16 warps; about 448 pixels a block (4 rows of 112:
// taller tiles read fewer input rows twice; 7x7 ran 1.2 times faster in 4
// rows than in 2), fewer where 64-pixel warp tiles still make more than 16
// warps. Float32 (math tf32) reads the window one float a word, and a
// warp's loads of its pixels' words serve every channel of its tile: its
// warp tiles are 32 pixels, 64 channels where the block's are a multiple
// of 64, with fewer rows (then columns) where they make more than
// kMaxFloatWarps (docs/performance.md, "Float32 stems on tensor cores").
// Knobs the spec sets stay.
TensorStem default_tensor_stem(const Workload& wl, const PlanOptions& options) {
  const ScheduleRequest& req = wl.schedule;
  const bool floats = ops::element_bytes(wl) == 4;
  const int max_warps = floats ? kMaxFloatWarps : kMaxWarps;
  TensorStem s;
  // The warp's channels: 32 (float32: 64 where they divide the block's),
  // else the most of 16 and 8 that divides the block's.
  const auto fit_warp_channels = [&] {
    s.warp_channels = req.value("warp_channels")
                          .value_or(floats && s.tile_co % 64 == 0 ? 64
                                    : s.tile_co % 32 == 0         ? 32
                                    : s.tile_co % 16 == 0         ? 16
                                                                  : 8);
  };
  s.tile_co = req.value("tile_co").value_or(equal_channel_tile(wl.c_out, 128));
  fit_warp_channels();
  // About kDefaultPixels pixels a block: whole output rows where a row
  // holds fewer.
  s.tile_w = req.value("tile_w").value_or(std::min({wl.out_w(), kDefaultPixels, kMaxTileColumns}));
  s.tile_h = req.value("tile_h").value_or(std::clamp(kDefaultPixels / std::max(1, s.tile_w), 1, wl.out_h()));
  // Warp tiles of 32 pixels where the block's warps stay within
  // kMaxWarps, else of 64, with fewer rows (then columns) until they do.
  // (A quarter of an SM holds 16384 registers: 13 to 16 warps get 128 a
  // thread, which a 64 x 32 warp tile fits in with any epilogue.)
  const auto warps = [&](int warp_pixels) {
    return ceil_div(s.tile_h * s.tile_w, std::max(16, warp_pixels)) * std::max(1, s.tile_co / std::max(1, s.warp_channels));
  };
  s.warp_pixels = req.value("warp_pixels").value_or(floats || warps(32) <= kMaxWarps ? 32 : 64);
  const auto fit_warps = [&] {
    while (warps(s.warp_pixels) > max_warps && !req.has("tile_h") && s.tile_h > 1) --s.tile_h;
    while (warps(s.warp_pixels) > max_warps && !req.has("tile_w") && s.tile_w > 16) {
      s.tile_w = round_up(ceil_div(s.tile_w, 2), 16);
    }
  };
  fit_warps();
  // Made to fit the library's tightest GPU (large filters, a GPU of
  // 100 KiB a block): fewer channels a block where the filter's rows take
  // most of the shared memory, else fewer rows, then fewer columns (the
  // knobs the spec sets stay).
  const int limit = library_shared_limit(options, kMinMmaSyncArch);
  const bool free_channels = !req.has("tile_co");
  const int step = req.has("warp_channels") ? std::max(8, s.warp_channels) : 8;  // the block's channels stay whole warps'
  for (TensorStemShape g = tensor_stem_shape(wl, s); g.smem_bytes > limit; g = tensor_stem_shape(wl, s)) {
    if (free_channels && s.tile_co > step && 2 * g.filter_bytes > g.smem_bytes) {
      // The tile that covers c_out in one more part, or one step narrower
      // where the rounding gives the same (1024 channels: 80 again after 80).
      const int narrower = channel_tile_of_parts(wl.c_out, ceil_div(wl.c_out, s.tile_co) + 1, step);
      s.tile_co = narrower < s.tile_co ? narrower : s.tile_co - step;
      fit_warp_channels();
    } else if (!req.has("tile_h") && s.tile_h > 1) {
      s.tile_h = ceil_div(s.tile_h, 2);
    } else if (!req.has("tile_w") && s.tile_w > 16) {
      s.tile_w = round_up(ceil_div(s.tile_w, 2), 16);
    } else if (free_channels && s.tile_co > step) {
      s.tile_co -= step;
      fit_warp_channels();
    } else {
      break;  // the plan names what does not fit
    }
  }
  fit_warps();  // narrower channel tiles may take narrower warp tiles
  return s;
}

void plan(const Workload& wl, const PlanOptions& options, KernelPlan& p) {
  const ScheduleRequest& req = wl.schedule;
  check_mma_sync_gpu("algorithm 'tensor_stem'", req.algorithm ? req.algorithm_where : wl.where, options);
  if (const std::string why = misfit(wl); !why.empty()) {
    throw InputError({{req.algorithm ? req.algorithm_where : wl.where, "algorithm 'tensor_stem' " + why}});
  }
  const TensorStem s = default_tensor_stem(wl, options);

  std::vector<Diagnostic> errors;
  const SourceLocation& tile_at = req.at("block_outputs");
  const SourceLocation& warp_at = req.at("warp_outputs");
  const std::string tile = "block_outputs " + num(s.tile_co) + "x" + num(s.tile_h) + "x" + num(s.tile_w);
  if (s.tile_co % 8 != 0 || s.tile_co > round_up(wl.c_out, 8)) {
    errors.push_back({tile_at, tile + ": the block's channels must be a multiple of 8 (mma.sync's tiles of 8) and at "
                                      "most " + num(round_up(wl.c_out, 8)) + " (c_out rounded up to 8)"});
  }
  if (s.tile_h > wl.out_h() || s.tile_w > wl.out_w()) {
    errors.push_back({tile_at, tile + " is larger than the " + num(wl.out_h()) + "x" + num(wl.out_w()) +
                                   " output: at most that many rows and columns"});
  }
  if (s.warp_pixels % 16 != 0 || s.warp_channels % 8 != 0) {
    errors.push_back({warp_at, "warp_outputs " + num(s.warp_pixels) + "x" + num(s.warp_channels) +
                                   ": a warp's pixels must be a multiple of 16 and its channels of 8 (mma.sync's "
                                   "16 x 8 tiles)"});
  } else if (s.tile_co % s.warp_channels != 0) {
    errors.push_back({warp_at, "warp_outputs " + num(s.warp_pixels) + "x" + num(s.warp_channels) + " does not split " +
                                   tile + ": the block's channels must be a multiple of the warp's"});
  }
  if (!errors.empty()) throw InputError(std::move(errors));
  const TensorStemShape g = tensor_stem_shape(wl, s);
  if (g.warps > kMaxWarps) {
    errors.push_back({tile_at, tile + " in warp tiles of " + num(s.warp_pixels) + "x" + num(s.warp_channels) +
                                   " needs " + num(g.warps_m) + " x " + num(g.warps_n) + " = " + num(g.warps) +
                                   " warps; a block has at most " + num(kMaxWarps) +
                                   ": use fewer pixels or channels a block, or larger warp tiles"});
  }
  if (g.accumulators > kMaxAccumulators) {
    errors.push_back({warp_at, "warp_outputs " + num(s.warp_pixels) + "x" + num(s.warp_channels) + " keeps " +
                                   num(g.accumulators) + " sums a thread; at most " + num(kMaxAccumulators) +
                                   " fit in registers"});
  }
  const int limit = library_shared_limit(options, kMinMmaSyncArch);
  if (g.smem_bytes > limit) {
    errors.push_back({tile_at, "the schedule needs " + num(g.smem_bytes) +
                                   " bytes of shared memory per block (the filter's " + num(s.tile_co) + " rows of " +
                                   num(g.k_pad) + ", two windows of " + num(g.window_rows) + " rows of " +
                                   num(g.span) + " pixels, and each warp's staging tile); the GPUs of this library "
                                   "allow " + num(limit) + ": use fewer rows, columns or channels a block"});
  }
  if (!errors.empty()) throw InputError(std::move(errors));

  p.schedule.values = {{"tile_co", s.tile_co},
                       {"tile_h", s.tile_h},
                       {"tile_w", s.tile_w},
                       {"warp_pixels", s.warp_pixels},
                       {"warp_channels", s.warp_channels}};
  p.threads = g.threads;
  p.block_threads = g.threads;
  p.smem_bytes = g.smem_bytes;
  p.alignment = 16;
  p.min_arch = kMinMmaSyncArch;
  // The launch numbers the batch's tiles with an int.
  p.max_batch = ops::batch_limit(g.tiles_per_image);
  auto n = [](long long v) { return TemplateValue(v); };
  p.values = {
      {"chunk", n(g.chunk)},
      {"lead", n(g.lead)},
      {"lead_note", std::string(g.lead == 1 ? "the run led by one element of the pixel before it" : "the run")},
      {"run_elements", n(g.run_elements)},
      {"row_chunks", n(g.row_chunks)},
      {"k_pad", n(g.k_pad)},
      {"k_steps", n(g.k_steps)},
      {"masked", std::string(g.masked ? "true" : "false")},
      {"warps_per_block", n(g.warps)},
      {"tiles_x", n(g.tiles_x)},
      {"tiles_per_image", n(g.tiles_per_image)},
      {"channel_tiles", n(g.channel_tiles)},
      {"window_rows", n(g.window_rows)},
      {"span", n(g.span)},
      {"row_copies", n(g.row_copies)},
      {"left_edge", n(g.left_edge)},
      {"right_edge", n(g.right_edge)},
      {"window_pitch", n(g.window_pitch)},
      {"filter_pitch", n(g.filter_pitch)},
      {"stage_pitch", n(g.stage_pitch)},
      {"tensor_cores", true},  // mma.sync (the compute floor's rate)
  };
  add_mma_fragment_values(wl, p.values);
}

std::string describe(const Schedule& s) {
  return "block_outputs " + num(s.at("tile_co")) + "x" + num(s.at("tile_h")) + "x" + num(s.at("tile_w")) +
         " (channels x rows x columns), warp_outputs " + num(s.at("warp_pixels")) + "x" + num(s.at("warp_channels")) +
         " (pixels x channels)";
}

// Persistent blocks (at most those resident at once) walk the batch's
// tiles; grid.y takes the tiles of output channels. The kernel takes the
// tile count.
LaunchDescription launch(const KernelPlan& p) {
  LaunchDescription l;
  l.grid[0].per_image = p.number("tiles_per_image");
  l.grid[1].blocks = p.number("channel_tiles");
  l.block[0] = p.block_threads;
  l.count_per_image = p.number("tiles_per_image");
  l.count_of = "tiles";
  l.grid_capped_by_residency = true;
  l.dynamic_shared_bytes = p.smem_bytes;
  return l;
}

bool tensor_stem_shape_claimed(const Workload& wl) { return misfit(wl).empty(); }

}  // namespace

bool tensor_stem_by_default(const Workload& wl, const PlanOptions& options) {
  return kTensorStem.serves(wl) && misfit(wl).empty() && options.target.newest.sm >= kMinMmaSyncArch;
}

const Algorithm kTensorStem{
    "tensor_stem",
    &kOperator,
    {Knob::tuple("block_outputs", {"tile_co", "tile_h", "tile_w"}, 1, kMaxTileColumns, "[channels, rows, columns]",
                 "output channels x rows x columns per block (channels a multiple of 8)"),
     Knob::tuple("warp_outputs", {"warp_pixels", "warp_channels"}, 8, 128, "[pixels, channels]",
                 "pixels x output channels per warp (multiples of 16 and 8: mma.sync's tiles)")},
    "conv2d_nhwc_tensor_stem.cu.mustache",
    &plan,
    &describe,
    &launch,
    {DataType::kFloat16, DataType::kBFloat16, DataType::kFloat32},
    {Layout::kNHWC},
    TuneCompiler::kNvrtc,
    &tensor_stem_shape_claimed,
    {Math::kTF32},  // float32 operands rounded to TF32 (one product; 3xtf32's three are not built)
};

}  // namespace convgen::gen::conv2d
