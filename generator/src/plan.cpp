// Planning: schedule defaults, schedule checks, and every derived number.
#include "convgen/gen/plan.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

namespace convgen::gen {

namespace {

constexpr int kMaxThreads = 1024;
// Accumulators a thread keeps live at once (rows x cols x multiplier): above
// this the compiler starts to spill.
constexpr int kMaxAccumulators = 32;
// Filter taps kept in registers when the filter is not staged in shared memory.
constexpr int kMaxRegisterTaps = 128;

int ceil_div(int a, int b) { return (a + b - 1) / b; }

int pow2_at_least(int x) {
  int p = 1;
  while (p < x) p *= 2;
  return p;
}

std::string num(int v) { return std::to_string(v); }


int shared_bytes(const Workload& wl, const Schedule& s) {
  int bytes = 0;
  if (s.shared_input) {
    const int in_h = (s.tile_h - 1) * wl.stride_h + (wl.kh - 1) * wl.dilation_h + 1;
    const int in_w = (s.tile_w - 1) * wl.stride_w + (wl.kw - 1) * wl.dilation_w + 1;
    bytes += in_h * in_w * 4;
  }
  if (s.shared_filter) bytes += wl.multiplier * wl.kh * wl.kw * 4;
  return bytes * s.channels_per_block;
}

std::string epilogue_suffix(const Workload& wl) {
  std::string s;
  if (wl.epilogue == Epilogue::kBias) s = "bias";
  if (wl.epilogue == Epilogue::kScaleShift) s = "ss";
  if (wl.activation != Activation::kNone) s += to_string(wl.activation);
  return s.empty() ? "" : "_" + s;
}

// "1" when both are equal, else "2x1".
std::string pair(int a, int b) { return a == b ? num(a) : num(a) + "x" + num(b); }

// A block of fewer than 128 threads whose tile covers the whole plane of a
// small image does little work for its start-up cost (filter and tile loads,
// a barrier): give it several channels, up to 256 threads, in a count that
// divides the channels. (Measured on the H100: 4 channels of 7x7 cut
// 64x960x7x7 from 41 to 28 us; 2 channels of 14x14 at 128 threads each made
// 64x576x14x14 12% slower, hence the 128-thread condition.)
int default_channels_per_block(const Workload& wl, const Schedule& s, const PlanOptions& options) {
  const bool whole_plane = s.tile_h >= wl.out_h() && s.tile_w >= wl.out_w();
  if (!whole_plane || s.threads_y * s.threads_x >= 128) return 1;
  Schedule one_channel = s;
  one_channel.channels_per_block = 1;
  const int bytes_per_channel = shared_bytes(wl, one_channel);
  int channels = 1;
  while (channels * 2 * s.threads_y * s.threads_x <= 256 && wl.c % (channels * 2) == 0 &&
         bytes_per_channel * channels * 2 <= options.max_shared_bytes) {
    channels *= 2;
  }
  return channels;
}

// The rows algorithm keeps every input row of a band in registers, with the
// taps, the epilogue's parameters, the halo and the accumulators. Its launch
// bounds allow 64 registers a lane and indices and pointers take about 10 of
// them. ptxas over the default schedules of 1x1 to 7x7 filters, multipliers
// 1 to 8, strides 1 and 2, with and without epilogue: none spills at this
// limit; the first spill is at 56 values (1x1, multiplier 8).
constexpr int kMaxLaneValues = 54;
constexpr int kDefaultRowsPerThread = 4;
constexpr int kDefaultThreadsPerBlock = 128;
constexpr int kDefaultWarpsPerBlock = 2;
constexpr int kPlanesMaxPlane = 64;      // input values per plane
constexpr int kPlanesMinWarpsPerSm = 4;
constexpr int kRowsMinWarpsPerSm = 16;
constexpr int kH100Sms = 132;

// Parameters the epilogue reads per output channel.
int epilogue_params(const Workload& wl) {
  switch (wl.epilogue) {
    case Epilogue::kNone: return 0;
    case Epilogue::kBias: return 1;
    case Epilogue::kScaleShift: return 2;
  }
  return 0;
}

// The derived shape of a rows schedule.
struct RowsShape {
  int outputs = 0;     // output columns per lane
  int lanes = 0;       // lanes a row needs, for its input or its outputs
  int halo_left = 0;   // columns the window reaches left of a lane's own
  int halo_right = 0;  // and right of them
  int in_rows = 0;     // input rows a band reads
  int lane_values = 0; // values a lane keeps live: input rows, halo, taps, epilogue parameters, accumulators
};

RowsShape rows_shape(const Workload& wl, int rows, int vector) {
  RowsShape r;
  r.outputs = std::max(1, vector / wl.stride_w);
  r.lanes = std::max(ceil_div(wl.w, vector), ceil_div(wl.out_w(), r.outputs));
  r.halo_left = wl.pad_left;
  r.halo_right = std::max(0, (r.outputs - 1) * wl.stride_w + (wl.kw - 1) * wl.dilation_w - wl.pad_left - (vector - 1));
  r.in_rows = (rows - 1) * wl.stride_h + (wl.kh - 1) * wl.dilation_h + 1;
  r.lane_values = r.in_rows * vector + r.halo_left + r.halo_right +
                  wl.multiplier * (wl.kh * wl.kw + epilogue_params(wl) + r.outputs);
  return r;
}

// Why lanes of `vector` columns cannot cover this workload's rows; "" if they can.
std::string rows_vector_misfit(const Workload& wl, int vector) {
  const RowsShape r = rows_shape(wl, 1, vector);
  if (wl.w % vector != 0) {
    return "vector_width " + num(vector) + " does not divide the input width " + num(wl.w) +
           " (each lane's load must start on a multiple of vector_width floats)";
  }
  if (vector % wl.stride_w != 0) {
    return "vector_width " + num(vector) + " is not a multiple of the horizontal stride " + num(wl.stride_w) +
           " (each lane computes vector_width / stride whole outputs)";
  }
  if (r.lanes > 32) {
    return "a row needs " + num(r.lanes) + " lanes of vector_width " + num(vector) +
           "; a row is owned by one warp (32 lanes)";
  }
  if (r.halo_left > vector || r.halo_right > vector) {
    return "the filter window reaches " + num(std::max(r.halo_left, r.halo_right)) +
           " columns past a lane's own " + num(vector) + "; only the next lane's columns can be exchanged";
  }
  return "";
}

// Why a lane of this schedule would not fit its values in registers; "" if it does.
std::string rows_register_misfit(const Workload& wl, int rows, int vector) {
  const RowsShape r = rows_shape(wl, rows, vector);
  if (r.lane_values <= kMaxLaneValues) return "";
  return "each lane would keep " + num(r.lane_values) + " values in registers (" + num(r.in_rows) +
         " input rows x vector_width " + num(vector) + ", the halo, " + num(wl.multiplier) + " x (" +
         num(wl.kh * wl.kw) + " taps, " + num(epilogue_params(wl)) + " epilogue parameters and " +
         num(r.outputs) + " accumulators)); at most " + num(kMaxLaneValues) + " fit";
}

// Output rows per lane by default: 4, so that a lane's input rows serve
// several output rows; but 2 when 4 would leave fewer than
// kRowsMinWarpsPerSm warps per SM of an H100 at the declared batch. Such a
// grid is one short wave, whose time is each lane's serial chain of
// instructions after its loads arrive; halving that chain and doubling the
// warps measured 5-11% faster at batch 1 on MobileNetV2's stride-2 and
// 28x28 layers (docs/performance.md), and made their fused epilogue cheap.
int default_rows_per_thread(const Workload& wl, int vector) {
  const RowsShape shape = rows_shape(wl, kDefaultRowsPerThread, vector);
  const long long lanes_per_band = pow2_at_least(shape.lanes);
  const long long warps = static_cast<long long>(wl.n == 0 ? 1 : wl.n) * wl.c *
                          ceil_div(wl.out_h(), kDefaultRowsPerThread) * lanes_per_band / 32;
  const int rows = warps < static_cast<long long>(kRowsMinWarpsPerSm) * kH100Sms ? 2 : kDefaultRowsPerThread;
  return std::min(rows, wl.out_h());
}

// The rows schedule with the widest load that covers the row, then the most
// output rows per lane (4, or fewer down to 1) whose values fit in registers,
// and 128 threads per block; knobs given are kept as they are. None when
// nothing fits.
std::optional<Schedule> fit_rows_schedule(const Workload& wl, std::optional<int> vector_width,
                                          std::optional<int> rows_per_thread) {
  for (int vector : {4, 2, 1}) {
    if (vector_width && vector != *vector_width) continue;
    if (!rows_vector_misfit(wl, vector).empty()) continue;
    const int most_rows = rows_per_thread ? *rows_per_thread : default_rows_per_thread(wl, vector);
    const int fewest_rows = rows_per_thread ? *rows_per_thread : 1;
    for (int rows = most_rows; rows >= fewest_rows; --rows) {
      if (!rows_register_misfit(wl, rows, vector).empty()) continue;
      Schedule s;
      s.algorithm = Algorithm::kRows;
      s.rows_per_thread = rows;
      s.vector_width = vector;
      s.threads_per_block = kDefaultThreadsPerBlock;
      return s;
    }
  }
  return std::nullopt;
}

// The derived shape of a planes schedule.
struct PlanesShape {
  int in_stride = 0;      // floats between two lanes' input planes in shared memory (odd)
  int out_stride = 0;     // and between their output planes
  int warp_bytes = 0;     // shared memory one warp stages: 32 input and 32 output planes
  int lane_values = 0;    // values a lane keeps live: one input row, taps, epilogue parameters, one output row
};

PlanesShape planes_shape(const Workload& wl) {
  PlanesShape r;
  const int in_plane = wl.h * wl.w;
  const int out_planes = wl.multiplier * wl.out_h() * wl.out_w();
  r.in_stride = in_plane | 1;
  r.out_stride = out_planes | 1;
  r.warp_bytes = 32 * 4 * (r.in_stride + r.out_stride);
  r.lane_values = wl.w + wl.multiplier * (wl.kh * wl.kw + epilogue_params(wl) + wl.out_w());
  return r;
}

// Why `warps` warps of the planes algorithm cannot run this workload; "" if they can.
std::string planes_misfit(const Workload& wl, int warps, const PlanOptions& options) {
  const PlanesShape r = planes_shape(wl);
  if (static_cast<long long>(r.warp_bytes) * warps > options.max_shared_bytes) {
    return num(warps) + " warp(s) of 32 planes (" + num(wl.h) + "x" + num(wl.w) + " in, " +
           num(wl.multiplier) + " x " + num(wl.out_h()) + "x" + num(wl.out_w()) + " out) stage " +
           num(r.warp_bytes * warps) + " bytes of shared memory; at most " + num(options.max_shared_bytes) + " fit";
  }
  if (r.lane_values > kMaxLaneValues) {
    return "each lane would keep " + num(r.lane_values) + " values in registers (an input row of " + num(wl.w) +
           ", " + num(wl.multiplier) + " x (" + num(wl.kh * wl.kw) + " taps, " + num(epilogue_params(wl)) +
           " epilogue parameters and an output row of " + num(wl.out_w()) + ")); at most " + num(kMaxLaneValues) +
           " fit";
  }
  return "";
}

// The planes schedule with the most warps per block (up to 2) whose shared
// memory fits; the given knob is kept as it is. None when nothing fits.
std::optional<Schedule> fit_planes_schedule(const Workload& wl, std::optional<int> warps_per_block,
                                            const PlanOptions& options) {
  for (int warps = warps_per_block.value_or(kDefaultWarpsPerBlock); warps >= 1; --warps) {
    if (!planes_misfit(wl, warps, options).empty()) {
      if (warps_per_block) break;
      continue;
    }
    Schedule s;
    s.algorithm = Algorithm::kPlanes;
    s.warps_per_block = warps;
    return s;
  }
  return std::nullopt;
}

}  // namespace

bool Schedule::operator==(const Schedule& o) const {
  return std::tie(algorithm, tile_h, tile_w, threads_y, threads_x, vthreads_y, vthreads_x, shared_input,
                  shared_filter, channels_per_block, rows_per_thread, vector_width, threads_per_block,
                  warps_per_block, input_cache, output_cache) ==
         std::tie(o.algorithm, o.tile_h, o.tile_w, o.threads_y, o.threads_x, o.vthreads_y, o.vthreads_x,
                  o.shared_input, o.shared_filter, o.channels_per_block, o.rows_per_thread, o.vector_width,
                  o.threads_per_block, o.warps_per_block, o.input_cache, o.output_cache);
}

std::string Schedule::summary() const {
  // The cache knobs are named only where they differ from the default.
  std::string caches;
  if (input_cache != CachePolicy::kNormal) caches += std::string(", input_cache ") + to_string(input_cache);
  if (output_cache != CachePolicy::kNormal) caches += std::string(", output_cache ") + to_string(output_cache);
  if (algorithm == Algorithm::kRows) {
    return "rows: rows_per_thread " + num(rows_per_thread) + ", vector_width " + num(vector_width) +
           ", threads_per_block " + num(threads_per_block) + caches;
  }
  if (algorithm == Algorithm::kPlanes) return "planes: warps_per_block " + num(warps_per_block) + caches;
  return "tiles: block_tile " + num(tile_h) + "x" + num(tile_w) + ", threads " + num(threads_y) + "x" + num(threads_x) +
         ", vthreads " + num(vthreads_y) + "x" + num(vthreads_x) + ", input " +
         (shared_input ? "in shared memory" : "from global memory") + ", filter " +
         (shared_filter ? "in shared memory" : "in registers") +
         (channels_per_block > 1 ? ", " + num(channels_per_block) + " channels per block" : "") + caches;
}

std::string kernel_name(const Workload& wl) {
  std::string padding;
  if (wl.pad_top == wl.pad_bottom && wl.pad_top == wl.pad_left && wl.pad_top == wl.pad_right) {
    padding = num(wl.pad_top);
  } else {
    padding = "t" + num(wl.pad_top) + "b" + num(wl.pad_bottom) + "l" + num(wl.pad_left) + "r" + num(wl.pad_right);
  }
  std::string name = "dw_f32_nchw_n" + (wl.n == 0 ? std::string("any") : num(wl.n)) + "_c" + num(wl.c) + "_h" +
                     num(wl.h) + "_w" + num(wl.w) + "_k" + num(wl.kh) + "x" + num(wl.kw) + "_s" +
                     pair(wl.stride_h, wl.stride_w) + "_p" + padding;
  if (wl.dilation_h != 1 || wl.dilation_w != 1) name += "_d" + pair(wl.dilation_h, wl.dilation_w);
  name += "_m" + num(wl.multiplier) + epilogue_suffix(wl);
  return name;
}

// The default tiles schedule, in words: a warp's worth of threads along the output
// width (fewer when the output is narrower), so that a warp reads and writes
// consecutive addresses; up to 4 output rows per thread, so that each input
// row staged in shared memory is reused by the filter rows of several
// outputs; at most 256 threads per block; the input tile (with its halo) in
// shared memory when the filter has more than one tap and the stride is 1;
// the filter in registers unless it has more taps than registers
// comfortably hold; several channels per block for small whole planes.
static Schedule default_tiles_schedule(const Workload& wl, const PlanOptions& options) {
  const int out_h = wl.out_h();
  const int out_w = wl.out_w();
  Schedule s;
  s.threads_x = std::min(32, pow2_at_least(out_w));
  const int rows = out_h >= 32 ? 4 : out_h >= 8 ? 2 : 1;
  s.threads_y = std::min(256 / s.threads_x, pow2_at_least(ceil_div(out_h, rows)));
  // Strided windows read shared memory with a stride too (bank conflicts)
  // and reuse little of it: those read through the cache instead.
  s.shared_input = wl.kh * wl.kw > 1 && wl.stride_h == 1 && wl.stride_w == 1;
  s.shared_filter = wl.multiplier * wl.kh * wl.kw > 64;
  s.tile_w = s.threads_x;
  s.tile_h = s.threads_y * rows;
  // Large strides, dilations or filters make the halo big: halve the block
  // until the staged input fits.
  while (shared_bytes(wl, s) > options.max_shared_bytes && s.threads_y > 1) {
    s.threads_y /= 2;
    s.tile_h = s.threads_y * rows;
  }
  while (shared_bytes(wl, s) > options.max_shared_bytes && s.threads_x > 1) {
    s.threads_x /= 2;
    s.tile_w = s.threads_x;
  }
  s.channels_per_block = default_channels_per_block(wl, s, options);
  return s;
}

// Whether the default rule gives this workload the planes algorithm: planes
// of at most kPlanesMaxPlane values, where one lane's serial work stays
// short, and at the declared batch enough planes to give every SM of an H100
// kPlanesMinWarpsPerSm warps (at batch 1 the rows algorithm spreads a few
// planes over many more lanes and wins).
static bool default_is_planes(const Workload& wl, const PlanOptions& options) {
  const long long planes = static_cast<long long>(wl.n == 0 ? 1 : wl.n) * wl.c;
  return wl.h * wl.w <= kPlanesMaxPlane && planes >= 32LL * kPlanesMinWarpsPerSm * kH100Sms &&
         fit_planes_schedule(wl, std::nullopt, options).has_value();
}

// The default rule: the planes algorithm for many small planes (above); else
// the rows algorithm wherever a row fits one warp's lanes and a band's values
// fit in registers (measured on the H100: 85-97% of the copy bandwidth on
// MobileNetV2's 56x56 and 112x112 layers at batch 64, against 59-79% for the
// tiles); else the tiles algorithm, which serves every shape.
Schedule default_schedule(const Workload& wl, const PlanOptions& options) {
  std::optional<Schedule> s;
  if (default_is_planes(wl, options)) s = fit_planes_schedule(wl, std::nullopt, options);
  if (!s) s = fit_rows_schedule(wl, std::nullopt, std::nullopt);
  if (!s) s = default_tiles_schedule(wl, options);
  return *s;
}

static KernelPlan plan_tiles(const Workload& wl, const PlanOptions& options) {
  const ScheduleRequest& req = wl.schedule;
  Schedule s = default_tiles_schedule(wl, options);
  // Keys the spec sets replace the defaults. When the spec sets threads but
  // not the tile, the tile follows the threads (one output per thread per
  // virtual thread times the default rows per thread).
  const int default_rows = s.tile_h / s.threads_y;
  if (req.threads_y) s.threads_y = *req.threads_y;
  if (req.threads_x) s.threads_x = *req.threads_x;
  if (req.vthreads_y) s.vthreads_y = *req.vthreads_y;
  if (req.vthreads_x) s.vthreads_x = *req.vthreads_x;
  if (req.tile_h) {
    s.tile_h = *req.tile_h;
    s.tile_w = *req.tile_w;
  } else {
    s.tile_h = s.threads_y * s.vthreads_y * default_rows;
    s.tile_w = s.threads_x * s.vthreads_x;
  }
  if (req.shared_input) s.shared_input = *req.shared_input;
  if (req.shared_filter) s.shared_filter = *req.shared_filter;
  // The channel count follows the final threads and tile, unless set.
  s.channels_per_block = req.channels_per_block ? *req.channels_per_block
                                                : default_channels_per_block(wl, s, options);

  std::vector<Diagnostic> errors;
  const SourceLocation& threads_at = req.threads_where.line ? req.threads_where : req.where;
  const SourceLocation& tile_at = req.tile_where.line ? req.tile_where : req.where;

  const int threads = s.threads_y * s.threads_x;
  if (threads * s.channels_per_block > kMaxThreads) {
    errors.push_back({threads_at, "threads " + num(s.threads_y) + "x" + num(s.threads_x) + " x channels_per_block " +
                                      num(s.channels_per_block) + " = " + num(threads * s.channels_per_block) +
                                      " per block; CUDA allows at most " + num(kMaxThreads)});
  }
  if (wl.c % s.channels_per_block != 0) {
    const SourceLocation& at = req.channels_where.line ? req.channels_where : req.where;
    errors.push_back({at, "channels_per_block " + num(s.channels_per_block) + " does not divide the " + num(wl.c) +
                              " input channels"});
  }
  const int split_h = s.threads_y * s.vthreads_y;
  const int split_w = s.threads_x * s.vthreads_x;
  if (s.tile_h % split_h != 0 || s.tile_w % split_w != 0) {
    errors.push_back({tile_at, "block_tile " + num(s.tile_h) + "x" + num(s.tile_w) +
                                   " does not split evenly over threads x vthreads = " + num(split_h) + "x" +
                                   num(split_w) + "; each tile side must be a multiple of its split"});
  }
  if (errors.empty()) {
    const int accumulators = (s.tile_h / split_h) * (s.tile_w / split_w) * wl.multiplier;
    if (accumulators > kMaxAccumulators) {
      errors.push_back({tile_at, "each thread would keep " + num(accumulators) +
                                     " outputs live (rows x cols per thread x multiplier); at most " +
                                     num(kMaxAccumulators) + " fit in registers: use a smaller block_tile, "
                                     "more threads or more vthreads"});
    }
  }
  if (!s.shared_filter && wl.multiplier * wl.kh * wl.kw > kMaxRegisterTaps) {
    errors.push_back({req.where, "a filter of " + num(wl.multiplier * wl.kh * wl.kw) +
                                     " taps (multiplier x kh x kw) does not fit in registers (at most " +
                                     num(kMaxRegisterTaps) + "); set shared_filter: true"});
  }
  const int smem = shared_bytes(wl, s);
  if (smem > options.max_shared_bytes) {
    errors.push_back({tile_at, "the schedule needs " + num(smem) + " bytes of shared memory per block; the limit "
                                   "is " + num(options.max_shared_bytes) + " bytes: use a smaller block_tile or "
                                   "turn off shared_input"});
  }
  if (!errors.empty()) throw SpecError(std::move(errors));

  KernelPlan p;
  p.schedule = s;
  p.rows_per_thread = s.tile_h / split_h;
  p.cols_per_thread = s.tile_w / split_w;
  p.threads = threads;
  p.block_threads = threads * s.channels_per_block;
  p.tiles_y = ceil_div(wl.out_h(), s.tile_h);
  p.tiles_x = ceil_div(wl.out_w(), s.tile_w);
  p.in_tile_h = (s.tile_h - 1) * wl.stride_h + (wl.kh - 1) * wl.dilation_h + 1;
  p.in_tile_w = (s.tile_w - 1) * wl.stride_w + (wl.kw - 1) * wl.dilation_w + 1;
  p.loads_per_thread = ceil_div(p.in_tile_h * p.in_tile_w, threads);
  p.smem_bytes = smem;
  return p;
}

static KernelPlan plan_rows(const Workload& wl) {
  const ScheduleRequest& req = wl.schedule;
  const SourceLocation& vector_at = req.vector_where.line ? req.vector_where : req.where;
  const SourceLocation& rows_at = req.rows_where.line ? req.rows_where : req.where;
  // Unset knobs: the widest vector, then the most rows (up to 4), that fit
  // with the knobs the spec sets.
  const std::optional<Schedule> fit = fit_rows_schedule(wl, req.vector_width, req.rows_per_thread);
  Schedule s = fit.value_or(Schedule{});
  s.algorithm = Algorithm::kRows;
  if (!fit) {  // kept for the messages below
    s.vector_width = req.vector_width.value_or(4);
    s.rows_per_thread = req.rows_per_thread.value_or(1);
  }
  s.threads_per_block = req.threads_per_block.value_or(kDefaultThreadsPerBlock);

  std::vector<Diagnostic> errors;
  if (!fit && !req.vector_width) {
    // No width fits: say why for each.
    const int rows = req.rows_per_thread.value_or(1);
    std::string why;
    for (int vector : {4, 2, 1}) {
      std::string misfit = rows_vector_misfit(wl, vector);
      if (misfit.empty()) misfit = rows_register_misfit(wl, rows, vector);
      why += "\n  vector_width " + num(vector) + ": " + misfit;
    }
    errors.push_back({rows_at, "the rows algorithm cannot run this workload with any vector_width" +
                                   (req.rows_per_thread ? " at rows_per_thread " + num(rows)
                                                        : std::string(", even at rows_per_thread 1")) +
                                   ":" + why + "\n  use algorithm: tiles"});
  } else if (std::string why = rows_vector_misfit(wl, s.vector_width); !why.empty()) {
    std::string other;  // a width that would cover the row
    for (int vector : {4, 2, 1}) {
      if (other.empty() && vector != s.vector_width && rows_vector_misfit(wl, vector).empty()) {
        other = "vector_width " + num(vector) + " or ";
      }
    }
    errors.push_back({vector_at, "the rows algorithm cannot run this workload: " + why + "; use " + other +
                                     "algorithm: tiles"});
  } else if (std::string why = rows_register_misfit(wl, s.rows_per_thread, s.vector_width); !why.empty()) {
    std::string remedies;
    if (s.rows_per_thread > 1) remedies += "fewer rows_per_thread, ";
    if (s.vector_width > 1) remedies += "a narrower vector_width, ";
    errors.push_back({rows_at, "the rows algorithm cannot run this workload: " + why + "; use " + remedies +
                                   "or algorithm: tiles"});
  }
  if (s.rows_per_thread > wl.out_h()) {
    errors.push_back({rows_at, "rows_per_thread " + num(s.rows_per_thread) + " is more than the " +
                                   num(wl.out_h()) + " output rows"});
  }
  if (!errors.empty()) throw SpecError(std::move(errors));

  const RowsShape shape = rows_shape(wl, s.rows_per_thread, s.vector_width);
  KernelPlan p;
  p.schedule = s;
  p.group_lanes = pow2_at_least(shape.lanes);
  p.bands = ceil_div(wl.out_h(), s.rows_per_thread);
  p.in_rows = shape.in_rows;
  p.outputs_per_lane = shape.outputs;
  p.halo_left = shape.halo_left;
  p.halo_right = shape.halo_right;
  // A lane's outputs go out in one store when they are 2 or 4 and every
  // output row starts on a multiple of them.
  p.vector_store = (shape.outputs == 2 || shape.outputs == 4) && wl.out_w() % shape.outputs == 0;
  p.min_blocks = std::max(1, 1024 / s.threads_per_block);
  p.alignment = 4 * std::max(s.vector_width, p.vector_store ? shape.outputs : 1);
  p.threads = s.threads_per_block;
  p.block_threads = s.threads_per_block;
  return p;
}

static KernelPlan plan_planes(const Workload& wl, const PlanOptions& options) {
  const ScheduleRequest& req = wl.schedule;
  const std::optional<Schedule> fit = fit_planes_schedule(wl, req.warps_per_block, options);
  if (!fit) {
    const SourceLocation& at = req.warps_where.line ? req.warps_where : req.where;
    throw SpecError({{at, "the planes algorithm cannot run this workload: " +
                              planes_misfit(wl, req.warps_per_block.value_or(1), options) +
                              "; use algorithm: rows or tiles"}});
  }
  const PlanesShape shape = planes_shape(wl);
  KernelPlan p;
  p.schedule = *fit;
  p.in_stride = shape.in_stride;
  p.out_stride = shape.out_stride;
  p.vector_copy_in = shape.in_stride == wl.h * wl.w;
  p.vector_copy_out = shape.out_stride == wl.multiplier * wl.out_h() * wl.out_w();
  p.smem_bytes = shape.warp_bytes * fit->warps_per_block;
  p.alignment = p.vector_copy_in || p.vector_copy_out ? 16 : 4;
  p.threads = 32 * fit->warps_per_block;
  p.block_threads = p.threads;
  return p;
}

// Fills unset knobs with defaults, checks the schedule and derives the plan.
KernelPlan plan_kernel(const Workload& wl, const PlanOptions& options) {
  const ScheduleRequest& req = wl.schedule;
  struct KnobSet {
    Algorithm algorithm;
    const std::string& key;  // the first knob of this algorithm the spec sets, or ""
    const SourceLocation& where;
    const char* knobs;
  };
  const KnobSet knob_sets[] = {
      {Algorithm::kTiles, req.tiles_key, req.tiles_key_where,
       "block_tile, threads, vthreads, shared_input, shared_filter, channels_per_block"},
      {Algorithm::kRows, req.rows_key, req.rows_key_where, "rows_per_thread, vector_width, threads_per_block"},
      {Algorithm::kPlanes, req.planes_key, req.planes_key_where, "warps_per_block"},
  };
  // The algorithm: as the spec says; else the one whose knobs the spec sets;
  // else the default rule's.
  std::optional<Algorithm> algorithm = req.algorithm;
  for (const KnobSet& set : knob_sets) {
    if (!algorithm && !set.key.empty()) algorithm = set.algorithm;
  }
  if (!algorithm) algorithm = default_schedule(wl, options).algorithm;
  std::vector<Diagnostic> errors;
  for (const KnobSet& set : knob_sets) {
    if (set.key.empty() || set.algorithm == *algorithm) continue;
    const KnobSet& used = *std::find_if(std::begin(knob_sets), std::end(knob_sets),
                                        [&](const KnobSet& k) { return k.algorithm == *algorithm; });
    errors.push_back({set.where, "'" + set.key + "' is a knob of algorithm '" + to_string(set.algorithm) +
                                     "'; this workload uses algorithm '" + to_string(*algorithm) +
                                     "', whose knobs are " + used.knobs});
  }
  if (!errors.empty()) throw SpecError(std::move(errors));

  KernelPlan p = *algorithm == Algorithm::kRows     ? plan_rows(wl)
                 : *algorithm == Algorithm::kPlanes ? plan_planes(wl, options)
                                                    : plan_tiles(wl, options);
  // Normal L2 priority unless the spec asks: evict-first loads measured no
  // faster cold on any MobileNetV2 layer at batch 64 and slowed the large
  // ones (docs/performance.md); the knobs stay for a tuner.
  p.schedule.input_cache = req.input_cache.value_or(CachePolicy::kNormal);
  p.schedule.output_cache = req.output_cache.value_or(CachePolicy::kNormal);
  p.name = kernel_name(wl);
  p.workload = wl;
  p.out_h = wl.out_h();
  p.out_w = wl.out_w();
  p.out_channels = wl.out_channels();
  p.cost_batch = wl.n == 0 ? 1 : wl.n;
  const long long n = p.cost_batch;
  p.bytes_read = 4LL * (n * wl.c * wl.h * wl.w + static_cast<long long>(p.out_channels) * wl.kh * wl.kw +
                        static_cast<long long>(p.out_channels) * epilogue_params(wl));
  p.bytes_written = 4LL * n * p.out_channels * p.out_h * p.out_w;
  p.floor_us = static_cast<double>(p.bytes_read + p.bytes_written) / (options.copy_bandwidth_tbps * 1e6);
  return p;
}

LibraryPlan plan_library(const std::vector<Spec>& specs, const std::string& name_override,
                         const PlanOptions& options, OnInvalidWorkload on_invalid) {
  LibraryPlan lib;
  std::vector<Diagnostic> errors;
  lib.name = name_override;
  if (!name_override.empty() && !is_c_identifier(name_override)) {
    errors.push_back(Diagnostic{SourceLocation{"--name", 0, 0}, "library name '" + name_override +
                                            "' must be a C identifier (letters, digits, '_'; not starting with a digit)"});
  }
  for (const Spec& spec : specs) {
    lib.spec_files.push_back(spec.file);
    if (!name_override.empty() || spec.library.empty()) continue;
    if (lib.name.empty()) {
      lib.name = spec.library;
    } else if (lib.name != spec.library) {
      errors.push_back({spec.library_where, "library '" + spec.library + "' differs from '" + lib.name +
                                                "' named by another spec; give one name with --name"});
    }
  }
  if (lib.name.empty() && errors.empty()) {
    const SourceLocation where{specs.empty() ? std::string("<no spec>") : specs.front().file, 1, 1};
    errors.push_back({where, "no library name: add 'library: <name>' to the spec or pass --name"});
  }

  std::map<std::string, KernelPlan> by_name;
  for (const Spec& spec : specs) {
    lib.skipped.insert(lib.skipped.end(), spec.skipped.begin(), spec.skipped.end());
    for (const Workload& wl : spec.workloads) {
      try {
        KernelPlan plan = plan_kernel(wl, options);
        auto [it, inserted] = by_name.emplace(plan.name, plan);
        if (!inserted && it->second.schedule != plan.schedule) {
          errors.push_back({wl.where, "this workload is the problem of " + it->second.workload.where.str() +
                                          " (" + plan.name + ") with a different schedule; a library holds one "
                                          "kernel per problem"});
        }
      } catch (const SpecError& e) {
        auto& sink = on_invalid == OnInvalidWorkload::kSkip ? lib.skipped : errors;
        sink.insert(sink.end(), e.diagnostics().begin(), e.diagnostics().end());
      }
    }
  }
  if (!errors.empty()) throw SpecError(std::move(errors));
  for (auto& [name, plan] : by_name) lib.kernels.push_back(std::move(plan));
  return lib;
}

}  // namespace convgen::gen
