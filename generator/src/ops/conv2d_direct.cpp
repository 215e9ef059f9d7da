// conv2d, algorithm `direct`: the d2l-tvm schedule. A block computes a tile
// of output channels x rows x columns of one image; threads split it along
// all three (threadIdx.z, .y, .x), each keeping a register tile of
// thread_tile channels x rows x columns, repeated `column_groups` times along the
// columns (TVM's virtual threads: the groups sit a thread row apart, so a
// warp reads consecutive shared-memory words). The reduction runs over the
// input channels in stages of ci_step: the input tile with its halo and the
// weight tile are fetched cooperatively into double-buffered shared memory
// (cp.async), and every tap is unrolled. Serves every shape. With split_k
// (sm_90), a cluster of split_k blocks computes each tile, block z running
// the stages z, z + split_k, ...; they add their partial tiles through
// distributed shared memory in rank order, each block finishing
// tile_co / split_k of the tile's channels.
#include <algorithm>

#include "conv2d.hpp"

namespace convgen::gen::conv2d {

namespace {

struct Direct {
  int threads_z = 0, threads_y = 0, threads_x = 0;   // threads along output channels, rows, columns
  int thread_co = 0, thread_rows = 0, thread_cols = 0;  // register tile per thread and virtual thread
  int column_groups = 1;  // column groups per thread (virtual threads along the columns)
  int ci_step = 0;   // input channels per shared-memory stage
  int split_k = 1;   // blocks of a cluster that share a tile
};

// Every number the template prints, derived from the knobs.
struct DirectShape {
  int tile_co, tile_h, group_w, tile_w, threads;
  int co_blocks, tiles_y, tiles_x, steps;
  int in_tile_h, in_tile_w, span_h, span_w;
  int vec, span_vecs, in_pitch, in_stage, w_stage, in_loads, w_loads, w_vec;
  bool store_vec;
  int smem_bytes, accumulators;
  int registers;  // a thread's estimated need: accumulators, a row of input, weights, copy indices
};

// Blocks per SM for __launch_bounds__. The register estimate holds for the
// unit-stride, small-filter, full-block schedules it was fitted on; with a
// strided or large window, or a small block, the compiler pipelines more of
// the window than it counts and spilled at the cap it implies (ptxas over
// 103 default schedules, docs/performance.md "Dense convolution" v2), so
// there the cap is left at the hardware's 255 registers.
int direct_min_blocks(const Workload& wl, const DirectShape& d) {
  const bool estimate_holds = wl.stride_h == 1 && wl.stride_w == 1 && wl.kh * wl.kw <= 9 && d.threads >= 64;
  return estimate_holds ? min_blocks(d.threads, d.registers) : 1;
}

DirectShape direct_shape(const Workload& wl, const Direct& s) {
  DirectShape d{};
  const int out_h = wl.out_h(), out_w = wl.out_w();
  d.tile_co = s.thread_co * s.threads_z;
  d.tile_h = s.thread_rows * s.threads_y;
  d.group_w = s.thread_cols * s.threads_x;
  d.tile_w = d.group_w * s.column_groups;
  d.threads = s.threads_x * s.threads_y * s.threads_z;
  d.co_blocks = ceil_div(wl.c_out, d.tile_co);
  d.tiles_y = ceil_div(out_h, d.tile_h);
  d.tiles_x = ceil_div(out_w, d.tile_w);
  d.steps = ceil_div(wl.c, s.ci_step);
  d.in_tile_h = (d.tile_h - 1) * wl.stride_h + (wl.kh - 1) * wl.dilation_h + 1;
  d.in_tile_w = (d.tile_w - 1) * wl.stride_w + (wl.kw - 1) * wl.dilation_w + 1;
  d.span_h = (s.thread_rows - 1) * wl.stride_h + (wl.kh - 1) * wl.dilation_h + 1;
  d.span_w = (s.thread_cols - 1) * wl.stride_w + (wl.kw - 1) * wl.dilation_w + 1;
  // Shared-memory reads of input are 16 bytes wide when every column group
  // starts on a multiple of 4 columns of the tile, else 8 or 4.
  const int col_step = s.thread_cols * wl.stride_w, group_step = d.group_w * wl.stride_w;
  d.vec = col_step % 4 == 0 && group_step % 4 == 0 ? 4 : col_step % 2 == 0 && group_step % 2 == 0 ? 2 : 1;
  d.span_vecs = ceil_div(d.span_w, d.vec);
  const int last_read_end = ((s.column_groups - 1) * d.group_w + (s.threads_x - 1) * s.thread_cols) * wl.stride_w +
                            d.span_vecs * d.vec;
  d.in_pitch = (std::max(d.in_tile_w, last_read_end) + 3) / 4 * 4;
  // With fewer than 8 threads along x, one 8-lane phase of a 16-byte read
  // spans several threads' rows: choose the row pitch so that the next row's
  // words continue where this row's end, modulo the 32 banks.
  if (d.vec == 4 && s.threads_x < 8) {
    const int target = (s.threads_x * s.thread_cols * wl.stride_w) % 32;
    for (int p = d.in_pitch; p < d.in_pitch + 32; p += 4) {
      if ((s.thread_rows * wl.stride_h * p) % 32 == target) {
        d.in_pitch = p;
        break;
      }
    }
  }
  d.in_stage = s.ci_step * d.in_tile_h * d.in_pitch;
  d.w_stage = s.ci_step * wl.kh * wl.kw * d.tile_co;
  d.in_loads = ceil_div(d.in_tile_h * d.in_tile_w, d.threads);
  d.w_loads = ceil_div(d.w_stage, d.threads);
  d.w_vec = s.thread_co % 4 == 0 ? 4 : s.thread_co % 2 == 0 ? 2 : 1;
  d.store_vec = s.thread_cols % 4 == 0 && out_w % 4 == 0;
  // Split K adds the block's partial tile, which its cluster reads.
  d.smem_bytes = 2 * (d.in_stage + d.w_stage) * 4 + (s.split_k > 1 ? d.tile_co * d.tile_h * d.tile_w * 4 : 0);
  d.accumulators = s.thread_co * s.thread_rows * s.thread_cols * s.column_groups;
  d.registers = d.accumulators + s.column_groups * d.span_vecs * d.vec + s.thread_co + 3 * d.in_loads + 56;
  return d;
}

// The default schedule, from a sweep of about 500 schedules on the H100
// (docs/performance.md, "Dense convolution"): it picks the fastest one swept
// on every seed002 row and on ResNet's 28x28, 14x14 and 7x7 layers, and is
// 1.8% off on 56x56.
// Columns: a thread takes 4 adjacent columns (a 16-byte shared-memory read),
// 8 threads along a row; a narrow output (7 columns or fewer) is one thread's
// row; strided rows whose width is a multiple of 7 take 7 columns a thread.
// Batch 1: small blocks of 4 channels x 4 columns a thread, so that even a
// 64x64 image makes a wave of blocks. Larger batches: bigger register tiles
// (8 channels x 2 rows x 4 columns), 7 rows of threads where that tiles a
// 14- or 28-row output exactly. Then the reduction split: 8 or 4 input
// channels a stage, halved until the two staged stages fit.
// The widest row of the window a default thread keeps: ptxas on sm_90
// compiled stems whose span was 19 columns (7 columns a thread at stride 2,
// 7x7) without spills, and spilled at 23 (4 columns at stride 4, 11x11) and
// 28 (7 at stride 4, 4x4).
constexpr int kMaxDefaultSpanW = 20;

// Few blocks of few threads (deep layers on 7x7 outputs: 256 -> 512
// channels at stride 2, batch 8, makes 128 blocks of 64 threads), where
// every GPU of the library has clusters: split K in 2, 4 or 8 while the
// blocks stay within 4 per SM, every part keeps 4 stages and the tile's
// channels divide evenly (docs/performance.md, "Split K").
constexpr int kMinDirectStepsPerSplit = 4;
constexpr int kMaxDirectBlocksPerSM = 4;


Direct default_direct(const Workload& wl) {
  const int out_h = wl.out_h(), out_w = wl.out_w();
  Direct s;
  if (out_w <= 7) {
    s.thread_cols = out_w, s.threads_x = 1;
  } else if (out_w <= 16) {
    s.thread_cols = 4, s.threads_x = ceil_div(out_w, 4);
  } else if (wl.stride_w > 1 && out_w % 7 == 0) {
    s.thread_cols = 7, s.threads_x = out_w / 7 <= 8 ? out_w / 7 : 4;
  } else {
    s.thread_cols = 4, s.threads_x = std::min(8, ceil_div(out_w, 4));
  }
  // A thread's row of the window spans (thread_cols - 1) * stride + the
  // filter's width of input columns, all live at once: fewer columns where
  // that exceeds kMaxDefaultSpanW.
  while (s.thread_cols > 1 && (s.thread_cols - 1) * wl.stride_w + (wl.kw - 1) * wl.dilation_w + 1 > kMaxDefaultSpanW) {
    s.thread_cols = ceil_div(s.thread_cols, 2);
  }
  auto set = [&s](int co, int tz, int rows, int ty, int ci) {
    s.thread_co = co, s.threads_z = tz, s.thread_rows = rows, s.threads_y = ty, s.ci_step = ci;
  };
  if (wl.n == 1 || wl.n == 0) {
    set(4, 2, 1, std::min(8, out_h), 8);
  } else if (out_w <= 7) {
    set(4, 8, 1, 8, 8);
  } else if (out_w <= 16) {
    set(4, 4, 2, out_h % 14 == 0 ? 7 : 8, 4);
  } else if (wl.stride_w > 1) {
    set(8, 8, 1, 4, 4);
  } else {
    set(8, 4, 2, out_h % 14 == 0 && out_h % 8 != 0 ? 7 : 4, 4);
  }
  s.column_groups = 1;  // 2 column groups never won in the sweep
  // Strided or large windows and small blocks: fewer channels a stage, so
  // that the unrolled stage keeps fewer window values in flight (ptxas over
  // 103 default schedules spilled at 8; docs/performance.md, dense v2).
  const bool heavy = wl.stride_h > 1 || wl.stride_w > 1 || wl.kh * wl.kw > 9 ||
                     s.threads_x * s.threads_y * s.threads_z < 64;
  s.ci_step = std::min({s.ci_step, wl.c, heavy ? std::clamp(36 / (wl.kh * wl.kw), 1, 4) : 8});
  return s;
}

void plan(const Workload& wl, const PlanOptions& options, KernelPlan& p) {
  const ScheduleRequest& req = wl.schedule;
  Direct s = default_direct(wl);
  s.threads_z = req.value("threads_z").value_or(s.threads_z);
  s.threads_y = req.value("threads_y").value_or(s.threads_y);
  s.threads_x = req.value("threads_x").value_or(s.threads_x);
  s.thread_co = req.value("thread_co").value_or(s.thread_co);
  s.thread_rows = req.value("thread_rows").value_or(s.thread_rows);
  s.thread_cols = req.value("thread_cols").value_or(s.thread_cols);
  s.column_groups = req.value("column_groups").value_or(s.column_groups);
  s.ci_step = req.value("ci_step").value_or(s.ci_step);
  // The default shrinks the staged tiles until they fit: fewer input
  // channels a stage, then fewer rows, columns and channels of threads, then
  // fewer channels a thread (knobs the spec sets stay). Wide inputs at large
  // strides need the rows and columns: a 4x4 stride-4 stem over 224 columns
  // stages 224 input columns for every row of threads, 58,368 bytes at 8
  // rows and one channel a stage. Large filters need the channels: an 11x11
  // filter's weights for 64 output channels take 61,952 bytes.
  const int smem_limit = std::min(options.max_shared_bytes, kMaxStaticSharedBytes);
  DirectShape d = direct_shape(wl, s);
  // Halves the first of `knobs` the spec leaves free and above 1; false if none is.
  const auto halve = [&](std::initializer_list<std::pair<const char*, int*>> knobs) {
    for (const auto& [knob, value] : knobs) {
      if (req.has(knob) || *value == 1) continue;
      *value = std::max(1, *value / 2);
      d = direct_shape(wl, s);
      return true;
    }
    return false;
  };
  while (d.smem_bytes > smem_limit) {
    if (halve({{"ci_step", &s.ci_step}})) continue;
    // The larger of the two staged tiles shrinks first.
    const bool weights = d.w_stage >= d.in_stage;
    const std::initializer_list<std::pair<const char*, int*>> channels = {{"threads_z", &s.threads_z},
                                                                           {"thread_co", &s.thread_co}};
    const std::initializer_list<std::pair<const char*, int*>> pixels = {{"threads_y", &s.threads_y},
                                                                         {"threads_x", &s.threads_x}};
    if (!halve(weights ? channels : pixels) && !halve(weights ? pixels : channels)) break;
  }

  // Split K where the tiles leave SMs idle; not where the partial tile
  // would not fit beside the stages.
  const long long blocks = static_cast<long long>(std::max(1, wl.n)) * d.co_blocks * d.tiles_y * d.tiles_x;
  s.split_k = req.value("split_k").value_or(
      default_split_k(blocks, d.steps, d.tile_co, kMaxDirectBlocksPerSM, kMinDirectStepsPerSplit, options));
  d = direct_shape(wl, s);
  if (!req.has("split_k") && s.split_k > 1 && d.smem_bytes > smem_limit) {
    s.split_k = 1;
    d = direct_shape(wl, s);
  }

  std::vector<Diagnostic> errors;
  check_split_k(req, s.split_k, d.steps, s.ci_step, d.tile_co, options, errors);
  if (d.threads > kMaxThreads) {
    errors.push_back({req.at("threads"), "threads " + num(s.threads_z) + "x" + num(s.threads_y) + "x" +
                                             num(s.threads_x) + " = " + num(d.threads) +
                                             " per block; CUDA allows at most " + num(kMaxThreads)});
  }
  if (d.accumulators > kMaxAccumulators) {
    errors.push_back({req.at("thread_tile"), "each thread would keep " + num(d.accumulators) +
                                                 " outputs live (thread_tile " + num(s.thread_co) + "x" +
                                                 num(s.thread_rows) + "x" + num(s.thread_cols) + " x column_groups " +
                                                 num(s.column_groups) + "); at most " + num(kMaxAccumulators) +
                                                 " fit in registers"});
  }
  if (d.smem_bytes > smem_limit) {
    errors.push_back({req.at("ci_step"), "the schedule stages " + num(d.smem_bytes) +
                                             " bytes of shared memory per block (two stages of " +
                                             num(s.ci_step) + " input channels of a " + num(d.in_tile_h) + "x" +
                                             num(d.in_tile_w) + " input tile and their weights); the limit is " +
                                             num(smem_limit) + ": use a smaller ci_step or a smaller tile"});
  }
  if (!errors.empty()) throw InputError(std::move(errors));

  p.schedule.values = {{"threads_z", s.threads_z},     {"threads_y", s.threads_y},
                       {"threads_x", s.threads_x},     {"thread_co", s.thread_co},
                       {"thread_rows", s.thread_rows}, {"thread_cols", s.thread_cols},
                       {"column_groups", s.column_groups},  {"ci_step", s.ci_step},
                       {"split_k", s.split_k}};
  p.threads = d.threads;
  p.block_threads = d.threads;
  p.smem_bytes = d.smem_bytes;
  if (s.split_k > 1) p.min_arch = kMinSplitArch;
  // Vector stores of the output (and loads of the residual) need 16 bytes.
  p.alignment = d.store_vec ? 16 : 4;
  auto n = [](int v) { return TemplateValue(static_cast<long long>(v)); };
  p.values = {
      {"tile_co", n(d.tile_co)},         {"tile_h", n(d.tile_h)},         {"group_w", n(d.group_w)},
      {"tile_w", n(d.tile_w)},           {"co_blocks", n(d.co_blocks)},   {"tiles_y", n(d.tiles_y)},
      {"tiles_x", n(d.tiles_x)},         {"grid_x", n(d.co_blocks * d.tiles_y * d.tiles_x)},
      {"steps", n(d.steps)},             {"in_tile_h", n(d.in_tile_h)},   {"in_tile_w", n(d.in_tile_w)},
      {"span_h", n(d.span_h)},           {"span_w", n(d.span_w)},         {"vec", n(d.vec)},
      {"span_vecs", n(d.span_vecs)},     {"in_pitch", n(d.in_pitch)},     {"in_stage", n(d.in_stage)},
      {"w_stage", n(d.w_stage)},         {"in_loads", n(d.in_loads)},     {"w_loads", n(d.w_loads)},
      {"w_vec", n(d.w_vec)},             {"min_blocks", n(direct_min_blocks(wl, d))},
      {"store_vec", d.store_vec},
      {"ragged_co", wl.c_out % d.tile_co != 0},
      {"ragged_ci", wl.c % s.ci_step != 0},
      {"ragged_h", wl.out_h() % d.tile_h != 0},
      {"ragged_w", wl.out_w() % d.tile_w != 0},
      {"ragged_in_loads", d.in_tile_h * d.in_tile_w % d.threads != 0},
      {"ragged_w_loads", d.w_stage % d.threads != 0},
      {"split", s.split_k > 1},
  };
}

std::string describe(const Schedule& s) {
  return "threads " + num(s.at("threads_z")) + "x" + num(s.at("threads_y")) + "x" + num(s.at("threads_x")) +
         ", thread_tile " + num(s.at("thread_co")) + "x" + num(s.at("thread_rows")) + "x" +
         num(s.at("thread_cols")) + ", column_groups " + num(s.at("column_groups")) + ", ci_step " +
         num(s.at("ci_step")) + (s.at("split_k") > 1 ? ", split_k " + num(s.at("split_k")) : "");
}

// Grid (output channel blocks x tiles, batch), block (columns, rows, channels).
LaunchDescription launch(const KernelPlan& p) {
  LaunchDescription l;
  l.grid[0].blocks = p.number("grid_x");
  l.grid[1].per_image = 1;
  l.grid[2].blocks = p.schedule.at("split_k");
  l.block[0] = p.schedule.at("threads_x");
  l.block[1] = p.schedule.at("threads_y");
  l.block[2] = p.schedule.at("threads_z");
  return l;
}

}  // namespace

const Algorithm kDirect{
    "direct",
    &kOperator,
    {Knob::tuple("threads", {"threads_z", "threads_y", "threads_x"}, 1, 1024, "[channels, rows, columns]",
                 "threads per block along output channels, rows and columns"),
     Knob::tuple("thread_tile", {"thread_co", "thread_rows", "thread_cols"}, 1, 16, "[channels, rows, columns]",
                 "outputs per thread (and virtual thread): channels x rows x adjacent columns"),
     Knob::integer("column_groups", 1, 8,
                   "column groups per thread, a thread row apart (virtual threads along the columns)"),
     Knob::integer("ci_step", 1, 64, "input channels per shared-memory stage (the reduction split)"),
     split_k_knob()},
    "conv2d_nchw_direct.cu.mustache",
    &plan,
    &describe,
    &launch,
    {DataType::kFloat32},
    {Layout::kNCHW},
    TuneCompiler::kNvrtc,
    nullptr,
    kEveryMath,
};

}  // namespace convgen::gen::conv2d
