// depthwise_conv2d, algorithm `window`, for large filters (5x5 and up): a
// block stages bands of input rows (with their halo and zero padding) in
// shared memory; each thread computes a register tile of rows_per_thread x
// columns_per_thread outputs, sliding down the input rows of its window so
// that every value it loads from shared memory feeds up to
// rows_per_thread x columns_per_thread x filter-width multiply-adds. With
// `pipelined`, blocks stay resident and copy the next tile while computing
// this one.
#include <algorithm>

#include "depthwise.hpp"

namespace convgen::gen::depthwise {

namespace {

// Values a thread keeps live (accumulators, taps, one window row, epilogue
// parameters). ptxas over the default schedules of 5x5 to 11x11 filters,
// multipliers 1 to 4, strides 1 to 3: none spills at this limit
// (tests/cpu/test_plan.cpp names the sweep).
constexpr int kMaxWindowValues = 100;
// And at most this many accumulators (multiplier x rows x columns): 56 at
// multiplier 4 spilled on a 23-wide plane of 5x5.
constexpr int kMaxAccumulators = 48;
// cp.async copies a thread issues per tile: the copy loop is unrolled and
// the compiler keeps its addresses live, so more spill. A forced window
// schedule of a 1x1 filter at stride 3 (105 copies a thread) spilled; the
// default schedules of the large-filter sweep issue at most 13.
constexpr int kMaxCopySteps = 32;
// With the taps read from shared memory (large multiplier x filter), the
// accumulators leave less room: 16 copies a thread spilled at multiplier 4
// (tests/cpu/window_register_sweep.yaml), 8 did not.
constexpr int kMaxCopyStepsSharedFilter = 8;
// The default rule's target: blocks of up to 224 threads (7 warps), and at
// most 8 bands per block (more measured slower on 7x7 and 14x14 planes).
constexpr int kDefaultBlockThreads = 224;
constexpr int kDefaultMaxBands = 8;
// Resident threads per SM the launch bounds ask the compiler to allow for
// (at most 168 registers a thread), unless the taps are read from shared memory.
constexpr int kResidentThreads = 384;

struct Window {
  int rows_per_thread = 0;     // output rows per thread
  int columns_per_thread = 0;  // adjacent output columns per thread
  int band_rows = 0;           // output rows per band (a multiple of rows_per_thread)
  int bands_per_block = 0;     // bands per block; a band is band_rows rows of one plane
  bool pipelined = false;      // persistent blocks, two buffers, next tile's copy in flight
  bool shared_filter = false;  // taps read from shared memory where used (else registers)
};

// Everything a window schedule derives: the template's numbers.
struct WindowShape {
  int bands = 0;               // bands per output plane
  int threads_x = 0;           // threads across an output row
  int threads_y = 0;           // threads down a band
  int work_threads = 0;        // threads that compute
  int threads = 0;             // rounded up to whole warps
  int staged_rows = 0;         // input rows a band stages
  int copy_elements = 0;       // elements per copy: 16 bytes when rows start 16-byte aligned, else 8, 4 or 2
  int copy_steps = 0;          // input copies per thread per tile
  int pad_columns = 0;         // shared column of input column 0 (pad_left, rounded up to copy_elements)
  int window_cols = 0;         // input columns of a thread's window
  bool vector_window = false;  // a thread's window read in 16-byte loads
  int window_offset = 0;       // shared column of thread 0's first read
  int window_skew = 0;         // its first used column within that read
  int read_cols = 0;           // columns a thread reads per input row
  int pitch = 0;               // elements per staged row
  int band_elements = 0;       // elements per staged band
  int tap_pitch = 0;           // floats per filter row in shared memory
  int param_floats = 0;        // taps and epilogue parameters of a tile, padded to 16 bytes
  int buffers = 0;             // 2 when pipelined
  int smem_bytes = 0;
  int thread_rows = 0;         // input rows a thread's window slides over
  int lane_values = 0;         // values a thread keeps live
};

// The input is staged as it is in memory (cp.async copies bytes): rows of
// elements of the workload's dtype, read back as floats. Taps and epilogue
// parameters are staged as floats.
WindowShape window_shape(const Workload& wl, const Window& s) {
  WindowShape r;
  const int element_bytes = ops::element_bytes(wl);
  const int vector = 16 / element_bytes;  // elements per 16 bytes
  const int out_h = wl.out_h(), out_w = wl.out_w();
  r.bands = ceil_div(out_h, s.band_rows);
  r.threads_x = ceil_div(out_w, s.columns_per_thread);
  r.threads_y = s.band_rows / std::max(1, s.rows_per_thread);
  r.work_threads = s.bands_per_block * r.threads_y * r.threads_x;
  r.threads = ceil_div(r.work_threads, 32) * 32;
  r.staged_rows = (s.band_rows - 1) * wl.stride_h + wl.kh;
  // The widest copy that divides a row: cp.async copies 16, 8 or 4 bytes; a
  // 2-byte element of an odd-width row is copied alone (a load and a store).
  // float32 rows take 16 or 4 bytes, as measured (docs/performance.md);
  // 8-byte copies halve a 2-byte row's copies where 16 do not divide it (a
  // float16 28-wide 5x5 kernel with 4-byte copies spilled at 128 registers).
  const int row_bytes = wl.w * element_bytes;
  r.copy_elements = row_bytes % 16 == 0                       ? vector
                    : row_bytes % 8 == 0 && element_bytes < 4 ? 8 / element_bytes
                    : row_bytes % 4 == 0                      ? 4 / element_bytes
                                                              : 1;
  r.copy_steps = ceil_div(s.bands_per_block * r.staged_rows * (wl.w / r.copy_elements), r.threads);
  r.pad_columns = ceil_div(wl.pad_left, r.copy_elements) * r.copy_elements;
  r.window_cols = (s.columns_per_thread - 1) * wl.stride_w + wl.kw;
  r.vector_window = (s.columns_per_thread * wl.stride_w) % 4 == 0;
  const int offset = r.pad_columns - wl.pad_left;
  r.window_offset = r.vector_window ? offset / 4 * 4 : offset;
  r.window_skew = offset - r.window_offset;
  r.read_cols = r.vector_window ? ceil_div(r.window_skew + r.window_cols, 4) * 4 : r.window_cols;
  const int cols_needed = std::max((r.threads_x - 1) * s.columns_per_thread * wl.stride_w + r.window_offset + r.read_cols,
                                   r.pad_columns + wl.w);
  r.pitch = ceil_div(cols_needed, vector) * vector;  // rows start 16-byte aligned
  // Rows a bank apart (not a multiple of 128 bytes): band rows read together do not conflict.
  if (r.pitch * element_bytes % 128 == 0) r.pitch += vector;
  r.band_elements = r.staged_rows * r.pitch;
  r.tap_pitch = s.shared_filter ? ceil_div(wl.kw, 4) * 4 : wl.kw;
  const int taps = s.bands_per_block * wl.multiplier * wl.kh * r.tap_pitch;
  const int params = s.bands_per_block * wl.multiplier * epilogue_params(wl);
  r.param_floats = ceil_div(taps + params, 4) * 4;
  r.buffers = s.pipelined ? 2 : 1;
  r.smem_bytes = r.buffers * (s.bands_per_block * r.band_elements * element_bytes + 4 * r.param_floats);
  r.thread_rows = (s.rows_per_thread - 1) * wl.stride_h + wl.kh;
  r.lane_values = wl.multiplier * s.rows_per_thread * s.columns_per_thread +
                  (s.shared_filter ? r.tap_pitch : wl.multiplier * wl.kh * wl.kw) + r.read_cols +
                  wl.multiplier * epilogue_params(wl);
  return r;
}

// Why the window algorithm cannot run this workload at all; "" if it can.
std::string workload_misfit(const Workload& wl) {
  if (wl.dilation_h != 1 || wl.dilation_w != 1) {
    return "dilation " + ops::pair_name(wl.dilation_h, wl.dilation_w) + " (the window algorithm needs dilation 1)";
  }
  return "";
}

// Why this schedule does not fit the workload, with the knob to blame; "" if it fits.
struct Misfit {
  std::string key, why;
};
Misfit schedule_misfit(const Workload& wl, const Window& s, const PlanOptions& options) {
  const int out_h = wl.out_h(), out_w = wl.out_w();
  if (s.rows_per_thread > out_h) {
    return {"rows_per_thread", "rows_per_thread " + num(s.rows_per_thread) + " is more than the " + num(out_h) +
                                   " output rows"};
  }
  if (s.columns_per_thread > out_w) {
    return {"columns_per_thread", "columns_per_thread " + num(s.columns_per_thread) + " is more than the " +
                                      num(out_w) + " output columns"};
  }
  if (s.band_rows % s.rows_per_thread != 0) {
    return {"band_rows", "band_rows " + num(s.band_rows) + " is not a multiple of rows_per_thread " +
                             num(s.rows_per_thread)};
  }
  if (s.band_rows > ceil_div(out_h, s.rows_per_thread) * s.rows_per_thread) {
    return {"band_rows", "band_rows " + num(s.band_rows) + " is more than the " + num(out_h) +
                             " output rows need (rows_per_thread " + num(s.rows_per_thread) + ")"};
  }
  const WindowShape r = window_shape(wl, s);
  if ((static_cast<long long>(wl.c) * r.bands) % s.bands_per_block != 0) {
    return {"bands_per_block", "bands_per_block " + num(s.bands_per_block) + " does not divide the " +
                                   num(static_cast<long long>(wl.c) * r.bands) + " bands of an image (" + num(wl.c) +
                                   " channels x " + num(r.bands) + " per plane)"};
  }
  if (r.threads > kMaxThreads) {
    return {"bands_per_block", "a block needs " + num(r.threads) + " threads (" + num(s.bands_per_block) +
                                   " band(s) x " + num(r.threads_y) + " x " + num(r.threads_x) + "); at most " +
                                   num(kMaxThreads)};
  }
  if (r.lane_values > kMaxWindowValues ||
      wl.multiplier * s.rows_per_thread * s.columns_per_thread > kMaxAccumulators) {
    return {"rows_per_thread",
            "each thread would keep " + num(r.lane_values) + " values in registers (" + num(wl.multiplier) + " x " +
                num(s.rows_per_thread) + " x " + num(s.columns_per_thread) + " accumulators, " +
                (s.shared_filter ? "a filter row" : num(wl.multiplier * wl.kh * wl.kw) + " taps") + ", " +
                num(r.read_cols) + " window columns, the epilogue parameters); at most " + num(kMaxWindowValues) + " values and " +
                num(kMaxAccumulators) + " accumulators fit: use fewer rows_per_thread or columns_per_thread" +
                (s.shared_filter ? std::string() : ", or shared_filter: true")};
  }
  const int max_copy_steps = s.shared_filter ? kMaxCopyStepsSharedFilter : kMaxCopySteps;
  if (r.copy_steps > max_copy_steps) {
    return {"band_rows", "each thread would issue " + num(r.copy_steps) + " input copies per tile (" +
                             num(s.bands_per_block) + " band(s) of " + num(r.staged_rows) + " rows of " +
                             num(wl.w / r.copy_elements) + " copies, over " + num(r.threads) + " threads); at most " +
                             num(max_copy_steps) + " fit in registers: use fewer band_rows or bands_per_block"};
  }
  if (r.smem_bytes > options.max_shared_bytes) {
    return {"band_rows", "the schedule stages " + num(r.smem_bytes) + " bytes of shared memory (" +
                             num(r.buffers) + " buffer(s) of " + num(s.bands_per_block) + " band(s) of " +
                             num(r.staged_rows) + " x " + num(r.pitch) + " elements, and the taps); at most " +
                             num(options.max_shared_bytes) + " fit: use fewer band_rows or bands_per_block" +
                             (s.pipelined ? ", or pipelined: false" : "")};
  }
  return {};
}

// The default schedule, with the knobs the spec sets kept as they are:
//  - a thread takes the whole output row where it is at most 8 wide (one
//    row per thread), else 2 adjacent columns and 7 rows (measured best on
//    ConvNeXt's and MobileNetV3's 14x14 to 56x56 planes: 5-9 FMAs per value
//    read from shared memory, against 2.8 at 2 rows x 4 columns);
//  - fewer rows, then columns, until the thread's values fit in registers;
//    the taps are read from shared memory where the filter has more than 64;
//  - a band is the whole plane up to 56 rows, else 4 threads' rows;
//  - bands per block: the most that divide an image's bands, up to 8 and 224 threads;
//  - pipelined where rows start 16-byte aligned and the plane has 28x28 or
//    more outputs (measured +16-21% of the copy rate on 28x28 and 56x56
//    7x7; slower on 7x7 and 14x14 planes);
//  - then fewer bands per block, band rows, and no pipelining, until the
//    shared memory fits.
//  - and if nothing fits, the same with fewer rows per thread (at most
//    `most_rows`: fit_window tries 7, then fewer).
// False when nothing fits; `s` is then the last schedule tried.
bool fit_window_rows(const Workload& wl, const ScheduleRequest& req, const PlanOptions& options, int most_rows,
                     Window& s) {
  const int out_h = wl.out_h(), out_w = wl.out_w();
  s.shared_filter = req.value("shared_filter").value_or(wl.multiplier * wl.kh * wl.kw > 64);
  const bool narrow = out_w <= 8;
  s.columns_per_thread = req.value("columns_per_thread").value_or(narrow ? out_w : std::min(2, out_w));
  s.rows_per_thread = req.value("rows_per_thread").value_or(narrow ? 1 : std::min(most_rows, out_h));
  s.band_rows = s.rows_per_thread;
  s.bands_per_block = 1;
  while (window_shape(wl, s).lane_values > kMaxWindowValues ||
         wl.multiplier * s.rows_per_thread * s.columns_per_thread > kMaxAccumulators) {
    if (!req.has("rows_per_thread") && s.rows_per_thread > 1) {
      --s.rows_per_thread;
    } else if (!req.has("columns_per_thread") && s.columns_per_thread > 1) {
      --s.columns_per_thread;
    } else {
      return false;
    }
    s.band_rows = s.rows_per_thread;
  }
  const int rows_needed = ceil_div(out_h, s.rows_per_thread) * s.rows_per_thread;
  const int default_band_rows =
      req.value("band_rows").value_or(out_h <= 56 ? rows_needed : std::min(rows_needed, 4 * s.rows_per_thread));
  s.band_rows = default_band_rows;
  if (s.band_rows % s.rows_per_thread != 0) return false;
  s.pipelined = req.value("pipelined").value_or(wl.w * ops::element_bytes(wl) % 16 == 0 && out_h * out_w >= 28 * 28);
  const WindowShape shape = window_shape(wl, s);
  const long long image_bands = static_cast<long long>(wl.c) * shape.bands;
  const int unit_threads = shape.threads_y * shape.threads_x;
  std::vector<int> bands_choices;  // most first
  if (req.has("bands_per_block")) {
    bands_choices = {*req.value("bands_per_block")};
  } else {
    for (int b = kDefaultMaxBands; b >= 1; --b) {
      if (image_bands % b == 0 && (b == 1 || b * unit_threads <= kDefaultBlockThreads)) bands_choices.push_back(b);
    }
  }
  // Shrink until the shared memory fits: bands per block, then band rows,
  // then pipelining (each only where the spec leaves it unset).
  for (;;) {
    for (int b : bands_choices) {
      s.bands_per_block = b;
      if (schedule_misfit(wl, s, options).key.empty()) return true;
    }
    if (!req.has("band_rows") && s.band_rows > s.rows_per_thread) {
      s.band_rows = std::max(s.rows_per_thread, s.band_rows / 2 / s.rows_per_thread * s.rows_per_thread);
      continue;
    }
    if (!req.has("pipelined") && s.pipelined) {
      s.pipelined = false;
      s.band_rows = default_band_rows;
      continue;
    }
    return false;
  }
}

bool fit_window(const Workload& wl, const ScheduleRequest& req, const PlanOptions& options, Window& s) {
  for (int most_rows = 7; most_rows >= 1; --most_rows) {
    if (fit_window_rows(wl, req, options, most_rows, s)) return true;
    if (req.has("rows_per_thread")) break;
  }
  fit_window_rows(wl, req, options, 7, s);  // the first schedule tried, for the message
  return false;
}

void plan(const Workload& wl, const PlanOptions& options, KernelPlan& p) {
  const ScheduleRequest& req = wl.schedule;
  if (std::string why = workload_misfit(wl); !why.empty()) {
    throw InputError({{req.at("algorithm"), "the window algorithm cannot run this workload: " + why +
                                               "; use algorithm: tiles"}});
  }
  Window s;
  if (!fit_window(wl, req, options, s)) {
    Misfit m = schedule_misfit(wl, s, options);
    if (m.key.empty()) m = {"algorithm", "no schedule fits with the knobs the spec sets"};
    throw InputError({{req.at(m.key), "the window algorithm cannot run this workload: " + m.why}});
  }

  p.schedule.values = {{"rows_per_thread", s.rows_per_thread},
                       {"columns_per_thread", s.columns_per_thread},
                       {"band_rows", s.band_rows},
                       {"bands_per_block", s.bands_per_block},
                       {"pipelined", s.pipelined ? 1 : 0},
                       {"shared_filter", s.shared_filter ? 1 : 0}};
  const WindowShape r = window_shape(wl, s);
  const int out_w = wl.out_w();
  // A thread's outputs of a row go out 4 or 2 elements at a store where
  // every row starts on a multiple of them.
  const int store_elements = s.columns_per_thread % 4 == 0 && out_w % 4 == 0   ? 4
                             : s.columns_per_thread % 2 == 0 && out_w % 2 == 0 ? 2
                                                                               : 1;
  const int element_bytes = ops::element_bytes(wl);
  p.alignment = element_bytes * std::max(r.copy_elements, store_elements);
  p.threads = r.threads;
  p.block_threads = r.threads;
  p.smem_bytes = r.smem_bytes;
  // The launch numbers tiles (bands_per_block bands) with an int.
  p.max_batch = batch_limit(static_cast<long long>(wl.c) * r.bands / s.bands_per_block);
  p.values = {
      {"bands", static_cast<long long>(r.bands)},
      {"threads_x", static_cast<long long>(r.threads_x)},
      {"threads_y", static_cast<long long>(r.threads_y)},
      {"work_threads", static_cast<long long>(r.work_threads)},
      {"threads_per_block", static_cast<long long>(r.threads)},
      {"idle_threads", r.threads != r.work_threads},
      {"staged_rows", static_cast<long long>(r.staged_rows)},
      {"copy_elements", static_cast<long long>(r.copy_elements)},
      {"copy_bytes", static_cast<long long>(element_bytes * r.copy_elements)},
      // cp.async copies 4, 8 or 16 bytes; 2-byte elements of odd-width rows are loaded and stored.
      {"async_copies", r.copy_elements * element_bytes >= 4},
      {"pad_columns", static_cast<long long>(r.pad_columns)},
      {"window_cols", static_cast<long long>(r.window_cols)},
      {"vector_window", r.vector_window},
      {"window_offset", static_cast<long long>(r.window_offset)},
      {"window_skew", static_cast<long long>(r.window_skew)},
      {"read_cols", static_cast<long long>(r.read_cols)},
      {"pitch", static_cast<long long>(r.pitch)},
      {"tap_pitch", static_cast<long long>(r.tap_pitch)},
      {"param_floats", static_cast<long long>(r.param_floats)},
      {"buffers", static_cast<long long>(r.buffers)},
      {"thread_rows", static_cast<long long>(r.thread_rows)},
      {"store_elements", static_cast<long long>(store_elements)},
      {"store_bytes", static_cast<long long>(element_bytes * store_elements)},
      {"ragged_rows", wl.out_h() % s.band_rows != 0},
      {"ragged_columns", out_w % s.columns_per_thread != 0},
      {"min_blocks", static_cast<long long>(s.shared_filter ? 1 : std::min(32, ceil_div(kResidentThreads, r.threads)))},
      {"epilogue_floats", static_cast<long long>(epilogue_params(wl))},
  };
}

std::string describe(const Schedule& s) {
  return "rows_per_thread " + num(s.at("rows_per_thread")) + ", columns_per_thread " +
         num(s.at("columns_per_thread")) + ", band_rows " + num(s.at("band_rows")) + ", bands_per_block " +
         num(s.at("bands_per_block")) + (s.at("pipelined") ? ", pipelined" : ", not pipelined") + ", filter " +
         (s.at("shared_filter") ? "in shared memory" : "in registers");
}

// A block per tile (bands_per_block bands of one plane); the kernel takes the
// tile count. A pipelined kernel's blocks stay resident and loop, so there
// are at most as many as fit on the device.
LaunchDescription launch(const KernelPlan& p) {
  LaunchDescription l;
  l.grid[0].per_image = p.workload.c * p.number("bands") / p.schedule.at("bands_per_block");
  l.block[0] = static_cast<int>(p.number("threads_per_block"));
  l.count_per_image = l.grid[0].per_image;
  l.count_of = "tiles";
  l.grid_capped_by_residency = p.schedule.at("pipelined") != 0;
  return l;
}

}  // namespace

bool window_fits_by_default(const Workload& wl, const PlanOptions& options) {
  Window s;
  return workload_misfit(wl).empty() && fit_window(wl, ScheduleRequest{}, options, s);
}

const Algorithm kWindow{
    "window",
    &kOperator,
    {Knob::integer("rows_per_thread", 1, 16, "output rows per thread"),
     Knob::integer("columns_per_thread", 1, 8, "adjacent output columns per thread"),
     Knob::integer("band_rows", 1, 256, "output rows of one plane a block stages and computes at once (a band)"),
     Knob::integer("bands_per_block", 1, 32, "bands per block; must divide the bands of an image"),
     Knob::flag("pipelined", "persistent blocks with two buffers: the next tile's copy in flight during this one's "
                             "arithmetic"),
     Knob::flag("shared_filter", "read the taps from shared memory where used (else copy them to registers)")},
    "depthwise_nchw_window.cu.mustache",
    &plan,
    &describe,
    &launch,
    {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16},
};

}  // namespace convgen::gen::depthwise
