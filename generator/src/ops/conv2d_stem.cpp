// conv2d, algorithm `stem`: a network's first layer, float32 NCHW with at
// most 4 input channels (an image's RGB) and any filter, stride and
// dilation: 7x7 stride 2, 3x3 stride 2, the 4x4 stride-4 patchify stem.
// With so few channels there is no reduction to stage: a block copies, once,
// its output tile's whole input window (every channel) and the whole filter
// of its output channels into shared memory, synchronizes once, and every
// thread sums all c x kh x kw taps from there. A thread keeps
// thread_outputs channels x columns; its columns sit a thread row apart, so
// that a warp reads consecutive words and stores consecutive outputs. The
// input window is stored split by column phase (column mod stride), so that
// a strided read is a unit-stride one: no bank conflicts at any stride, and
// nothing of the window is kept in registers (the direct kernel keeps a row
// of it, which spilled at large strides).
#include <algorithm>

#include "conv2d.hpp"

namespace convgen::gen::conv2d {

bool is_stem_shape(const Workload& wl) { return wl.c <= kMaxStemChannels; }

namespace {

struct Stem {
  int tile_co = 0, tile_h = 0, tile_w = 0;  // a block's output channels, rows, columns
  int thread_co = 0, thread_cols = 0;       // a thread's output channels and columns
};

// Every number the template prints, derived from the knobs.
struct StemShape {
  int threads_x, threads_c, threads;  // threads along columns (x rows of the tile) and channels
  int co_blocks, tiles_y, tiles_x;
  int in_tile_h, in_tile_w, phase_w, pitch, in_floats, w_floats;
  int smem_bytes, accumulators, registers;
  int conflict;  // the most distinct words a warp's input read takes from one bank
};

// The bank conflict of a warp's read of the staged input at one tap: lane l
// is thread (x, row, channel group) = (l % tx, l / tx % tile_h, ...) and reads
// word row * stride_h * row_floats + x; lanes of other channel groups read
// the same words (a broadcast).
int input_conflict(const Workload& wl, int threads_x, int tile_h, int row_floats) {
  int words[32][32];
  int count[32] = {};
  int worst = 0;
  for (int lane = 0; lane < 32; ++lane) {
    const int x = lane % threads_x, row = (lane / threads_x) % tile_h;
    const int word = row * wl.stride_h * row_floats + x;
    const int bank = word % 32;
    bool seen = false;
    for (int i = 0; i < count[bank]; ++i) seen = seen || words[bank][i] == word;
    if (!seen) words[bank][count[bank]++] = word;
    worst = std::max(worst, count[bank]);
  }
  return worst;
}

StemShape stem_shape(const Workload& wl, const Stem& s) {
  StemShape g{};
  g.threads_x = s.thread_cols > 0 ? s.tile_w / s.thread_cols : 0;
  g.threads_c = s.thread_co > 0 ? s.tile_co / s.thread_co : 0;
  g.threads = g.threads_x * s.tile_h * g.threads_c;
  g.co_blocks = ceil_div(wl.c_out, s.tile_co);
  g.tiles_y = ceil_div(wl.out_h(), s.tile_h);
  g.tiles_x = ceil_div(wl.out_w(), s.tile_w);
  g.in_tile_h = (s.tile_h - 1) * wl.stride_h + (wl.kh - 1) * wl.dilation_h + 1;
  g.in_tile_w = (s.tile_w - 1) * wl.stride_w + (wl.kw - 1) * wl.dilation_w + 1;
  // A staged row is stride_w phases of `pitch` floats; the pitch is the
  // phase's width, padded to the first one whose rows meet no bank
  // conflicts in a warp (or the fewest).
  g.phase_w = ceil_div(g.in_tile_w, wl.stride_w);
  g.pitch = g.phase_w;
  g.conflict = 33;
  if (g.threads_x > 0) {
    for (int p = g.phase_w; p < g.phase_w + 32; ++p) {
      const int c = input_conflict(wl, g.threads_x, s.tile_h, wl.stride_w * p);
      if (c < g.conflict) g.pitch = p, g.conflict = c;
      if (c == 1) break;
    }
  }
  // The filter's copy starts 16-byte aligned after the input's.
  g.in_floats = (wl.c * g.in_tile_h * wl.stride_w * g.pitch + 3) / 4 * 4;
  g.w_floats = wl.c * wl.kh * wl.kw * s.tile_co;
  g.smem_bytes = 4 * (g.in_floats + g.w_floats);
  g.accumulators = s.thread_co * s.thread_cols;
  // The sums, a tap's columns and weights (two taps in flight), addresses.
  g.registers = g.accumulators + 2 * (s.thread_co + s.thread_cols) + 24;
  return g;
}

// The default, from the tuner's search on an H100 class GPU over stems
// (docs/performance.md, "Stems"), then a sweep of thread outputs on the
// H200 ("Stems: 8 channels a thread where the taps are few"): 4 columns a
// thread, x 16 channels where a thread sums 96 taps or more (7x7 x 3: the
// 8-channel thread was 2 to 24% slower there), else x 8 (3x3 and 4x4 x 3: 8%
// and 7% faster than 16, with twice the threads); fewer where the layer
// has fewer. A tile up to 32 threads (128 columns) wide, 16 for filters of
// 5 columns and more (taller tiles read less of the window twice); all
// output channels up to 128; rows for up to 448 threads, a divisor of the
// output's rows where one is at least half as many (no ragged last tile).
// Where that makes fewer blocks than half the SMs (a batch of 1), fewer
// channels a block, then fewer rows. Knobs the spec sets stay; the tile is
// cut to the thread's outputs.
constexpr int kManyTaps = 96;
constexpr int kMaxDefaultThreads = 448;
constexpr int kMinDefaultThreads = 128;

Stem default_stem(const Workload& wl, const PlanOptions& options) {
  const ScheduleRequest& req = wl.schedule;
  Stem s;
  s.thread_cols = req.value("thread_cols").value_or(std::min(4, wl.out_w()));
  const int taps = wl.c * wl.kh * wl.kw;
  s.thread_co = req.value("thread_co").value_or(std::min(taps >= kManyTaps ? 16 : 8, ops::pow2_at_least(wl.c_out)));
  const int max_threads_x = wl.kw >= 5 ? 16 : 32;
  s.tile_w = req.value("tile_w").value_or(std::min(ceil_div(wl.out_w(), s.thread_cols), max_threads_x) * s.thread_cols);
  // All channels up to 128, else the fewest blocks of at most 128.
  const int co_blocks = ceil_div(wl.c_out, 128);
  s.tile_co = req.value("tile_co").value_or(ceil_div(ceil_div(wl.c_out, co_blocks), s.thread_co) * s.thread_co);
  const int per_row = std::max(1, (s.tile_w / s.thread_cols) * (s.tile_co / s.thread_co));
  const int max_rows = std::clamp(kMaxDefaultThreads / per_row, 1, wl.out_h());
  int rows = max_rows;
  while (wl.out_h() % rows != 0) --rows;
  s.tile_h = req.value("tile_h").value_or(2 * rows >= max_rows ? rows : max_rows);
  const long long sms = options.target.newest.sm_count;
  const auto blocks = [&] {
    const StemShape g = stem_shape(wl, s);
    return static_cast<long long>(std::max(1, wl.n)) * g.co_blocks * g.tiles_y * g.tiles_x;
  };
  // Fewer channels, else rows, else columns: until the tile fits the
  // library's GPUs, then while the blocks fill less than half the SMs, as
  // long as a block keeps kMinDefaultThreads (4 warps).
  const int limit = library_shared_limit(options);
  const auto shrink = [&](int min_threads) {
    Stem fewer_channels = s, fewer_rows = s, fewer_columns = s;
    fewer_channels.tile_co = std::max(s.thread_co, s.tile_co / 2 / s.thread_co * s.thread_co);
    fewer_rows.tile_h = ceil_div(s.tile_h, 2);
    fewer_columns.tile_w = std::max(s.thread_cols, s.tile_w / 2 / s.thread_cols * s.thread_cols);
    for (const Stem& t : {fewer_channels, fewer_rows, fewer_columns}) {
      const bool changed = (t.tile_co != s.tile_co && !req.has("tile_co")) ||
                           (t.tile_h != s.tile_h && !req.has("tile_h")) ||
                           (t.tile_w != s.tile_w && !req.has("tile_w"));
      if (changed && stem_shape(wl, t).threads >= min_threads) {
        s = t;
        return true;
      }
    }
    return false;
  };
  while (stem_shape(wl, s).smem_bytes > limit && shrink(1)) {
  }
  while (2 * blocks() < sms && shrink(kMinDefaultThreads)) {
  }
  return s;
}

void plan(const Workload& wl, const PlanOptions& options, KernelPlan& p) {
  const ScheduleRequest& req = wl.schedule;
  if (!is_stem_shape(wl)) {
    throw InputError({{req.algorithm ? req.algorithm_where : req.where,
                       "the stem algorithm runs layers of at most " + num(kMaxStemChannels) +
                           " input channels (a network's first layer); this one has " + num(wl.c) +
                           ": use algorithm: direct"}});
  }
  const Stem s = default_stem(wl, options);

  const SourceLocation& tile_at = req.at("block_outputs");
  if (s.tile_co % s.thread_co != 0 || s.tile_w % s.thread_cols != 0) {
    throw InputError({{tile_at, "block_outputs " + num(s.tile_co) + "x" + num(s.tile_h) + "x" + num(s.tile_w) +
                                    " does not split into thread_outputs " + num(s.thread_co) + "x" +
                                    num(s.thread_cols) + ": the channels must be a multiple of the thread's "
                                    "channels and the columns of its columns"}});
  }
  const StemShape g = stem_shape(wl, s);
  std::vector<Diagnostic> errors;
  if (g.threads > kMaxThreads) {
    errors.push_back({tile_at, "block_outputs " + num(s.tile_co) + "x" + num(s.tile_h) + "x" + num(s.tile_w) +
                                   " with thread_outputs " + num(s.thread_co) + "x" + num(s.thread_cols) + " needs " +
                                   num(g.threads_c) + " x " + num(s.tile_h) + " x " + num(g.threads_x) + " = " +
                                   num(g.threads) + " threads per block; CUDA allows at most " + num(kMaxThreads)});
  }
  // Each thread needs at least its sums and about 32 more registers.
  const int warp_threads = ceil_div(g.threads, 32) * 32;
  const int registers_per_sm = library_registers_per_sm(options);
  if (g.threads <= kMaxThreads && warp_threads * (g.accumulators + 32) > registers_per_sm) {
    errors.push_back({tile_at, "block_outputs " + num(s.tile_co) + "x" + num(s.tile_h) + "x" + num(s.tile_w) +
                                   " with thread_outputs " + num(s.thread_co) + "x" + num(s.thread_cols) + " needs " +
                                   num(g.threads) + " threads of at least " + num(g.accumulators + 32) +
                                   " registers each; an SM has " + num(registers_per_sm) +
                                   ": use fewer threads or fewer outputs a thread"});
  }
  if (g.accumulators > kMaxAccumulators) {
    errors.push_back({req.at("thread_outputs"), "each thread would keep " + num(g.accumulators) +
                                                    " outputs live (thread_outputs " + num(s.thread_co) + "x" +
                                                    num(s.thread_cols) + "); at most " + num(kMaxAccumulators) +
                                                    " fit in registers"});
  }
  const int limit = library_shared_limit(options);
  if (g.smem_bytes > limit) {
    errors.push_back({tile_at, "the schedule needs " + num(g.smem_bytes) +
                                   " bytes of shared memory per block (the " + num(g.in_tile_h) + "x" +
                                   num(g.in_tile_w) + " input window of " + num(wl.c) + " channel(s) and the " +
                                   num(s.tile_co) + " filters); the library's GPUs allow " + num(limit) +
                                   ": use fewer rows or channels a block"});
  }
  if (!errors.empty()) throw InputError(std::move(errors));

  p.schedule.values = {{"tile_co", s.tile_co},     {"tile_h", s.tile_h},       {"tile_w", s.tile_w},
                       {"thread_co", s.thread_co}, {"thread_cols", s.thread_cols}};
  p.threads = g.threads;
  p.block_threads = g.threads;
  p.smem_bytes = g.smem_bytes;
  p.alignment = 4;
  auto n = [](int v) { return TemplateValue(static_cast<long long>(v)); };
  p.values = {
      {"threads_x", n(g.threads_x)},   {"threads_c", n(g.threads_c)},   {"co_blocks", n(g.co_blocks)},
      {"tiles_y", n(g.tiles_y)},       {"tiles_x", n(g.tiles_x)},
      {"grid_x", n(g.co_blocks * g.tiles_y * g.tiles_x)},
      {"in_tile_h", n(g.in_tile_h)},   {"in_tile_w", n(g.in_tile_w)},   {"phase_w", n(g.phase_w)},
      {"pitch", n(g.pitch)},           {"in_floats", n(g.in_floats)},   {"w_floats", n(g.w_floats)},
      {"conflict", n(g.conflict)},     {"min_blocks", n(min_blocks(g.threads, g.registers))},
  };
}

std::string describe(const Schedule& s) {
  return "block_outputs " + num(s.at("tile_co")) + "x" + num(s.at("tile_h")) + "x" + num(s.at("tile_w")) +
         " (channels x rows x columns), thread_outputs " + num(s.at("thread_co")) + "x" + num(s.at("thread_cols")) +
         " (channels x columns a thread row apart)";
}

// Grid (output channel blocks x tiles, batch), block of threads numbered
// columns fastest, then rows, then channel groups.
LaunchDescription launch(const KernelPlan& p) {
  LaunchDescription l;
  l.grid[0].blocks = p.number("grid_x");
  l.grid[1].per_image = 1;
  l.block[0] = p.block_threads;
  l.dynamic_shared_bytes = p.smem_bytes;
  return l;
}

}  // namespace

const Algorithm kStem{
    "stem",
    &kOperator,
    {Knob::tuple("block_outputs", {"tile_co", "tile_h", "tile_w"}, 1, 256, "[channels, rows, columns]",
                 "output channels x rows x columns per block"),
     Knob::tuple("thread_outputs", {"thread_co", "thread_cols"}, 1, 16, "[channels, columns]",
                 "output channels x columns per thread (the columns a thread row apart)")},
    "conv2d_nchw_stem.cu.mustache",
    &plan,
    &describe,
    &launch,
    {DataType::kFloat32},
    {Layout::kNCHW},
    TuneCompiler::kNvrtc,
    &is_stem_shape,
    kEveryMath,
};

}  // namespace convgen::gen::conv2d
