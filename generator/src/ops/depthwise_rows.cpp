// depthwise_conv2d, algorithm `rows`: a group of lanes of one warp owns a
// band of output rows of one channel; each lane keeps its input columns in
// registers and trades the halo with its neighbours by warp shuffle. No
// shared memory, no barrier.
#include <algorithm>
#include <optional>

#include "depthwise.hpp"

namespace convgen::gen::depthwise {

namespace {

constexpr int kDefaultRowsPerThread = 4;
constexpr int kDefaultThreadsPerBlock = 128;
constexpr int kRowsMinWarpsPerSm = 16;

struct Rows {
  int rows_per_thread = 0;    // output rows per lane (the band height)
  int vector_width = 0;       // input columns (elements) per lane, loaded at once
  int threads_per_block = 0;  // a multiple of 32
};

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

// The most bytes one load moves (a 16-byte word).
constexpr int kMaxVectorBytes = 16;

// The widths a lane's load may have, widest first: 4 floats, or 8 2-byte
// elements, in one 16-byte load.
std::vector<int> vector_widths(const Workload& wl) {
  std::vector<int> widths;
  for (int vector : {8, 4, 2, 1}) {
    if (vector * ops::element_bytes(wl) <= kMaxVectorBytes) widths.push_back(vector);
  }
  return widths;
}

// Why lanes of `vector` columns cannot cover this workload's rows; "" if they can.
std::string rows_vector_misfit(const Workload& wl, int vector) {
  const RowsShape r = rows_shape(wl, 1, vector);
  if (vector * ops::element_bytes(wl) > kMaxVectorBytes) {
    return "vector_width " + num(vector) + " is " + num(vector * ops::element_bytes(wl)) + " bytes of " +
           to_string(wl.dtype) + " elements; one load moves at most " + num(kMaxVectorBytes) + " bytes";
  }
  if (wl.w % vector != 0) {
    return "vector_width " + num(vector) + " does not divide the input width " + num(wl.w) +
           " (each lane's load must start on a multiple of vector_width elements)";
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
// kRowsMinWarpsPerSm warps per SM of the newest GPU of the library's list
// (an H100 for sm_90) at the declared batch. Such a grid is one short wave,
// whose time is each lane's serial chain of instructions after its loads
// arrive; halving that chain and doubling the warps measured 5-11% faster at batch 1 on MobileNetV2's stride-2 and
// 28x28 layers (docs/performance.md), and made their fused epilogue cheap.
int default_rows_per_thread(const Workload& wl, int vector, const PlanOptions& options) {
  const RowsShape shape = rows_shape(wl, kDefaultRowsPerThread, vector);
  const long long lanes_per_band = pow2_at_least(shape.lanes);
  const long long warps = static_cast<long long>(wl.n == 0 ? 1 : wl.n) * wl.c *
                          ceil_div(wl.out_h(), kDefaultRowsPerThread) * lanes_per_band / 32;
  const long long few_warps = static_cast<long long>(kRowsMinWarpsPerSm) * options.target.newest.sm_count;
  const int rows = warps < few_warps ? 2 : kDefaultRowsPerThread;
  return std::min(rows, wl.out_h());
}

// The rows schedule with the widest load that covers the row (up to 16
// bytes: 4 floats, 8 2-byte elements), then the most output rows per lane (4,
// or fewer down to 1) whose values fit in registers (a lane's values are
// floats whatever the dtype), and 128 threads per block; knobs given are kept
// as they are. None when nothing fits.
std::optional<Rows> fit_rows(const Workload& wl, const PlanOptions& options, std::optional<int> vector_width,
                             std::optional<int> rows_per_thread) {
  for (int vector : vector_widths(wl)) {
    if (vector_width && vector != *vector_width) continue;
    if (!rows_vector_misfit(wl, vector).empty()) continue;
    const int most_rows = rows_per_thread ? *rows_per_thread : default_rows_per_thread(wl, vector, options);
    const int fewest_rows = rows_per_thread ? *rows_per_thread : 1;
    for (int rows = most_rows; rows >= fewest_rows; --rows) {
      if (!rows_register_misfit(wl, rows, vector).empty()) continue;
      return Rows{rows, vector, kDefaultThreadsPerBlock};
    }
  }
  return std::nullopt;
}

void plan(const Workload& wl, const PlanOptions& options, KernelPlan& p) {
  const ScheduleRequest& req = wl.schedule;
  const SourceLocation& vector_at = req.at("vector_width");
  const SourceLocation& rows_at = req.at("rows_per_thread");
  // Unset knobs: the widest vector, then the most rows (up to 4), that fit
  // with the knobs the spec sets.
  const std::optional<Rows> fit = fit_rows(wl, options, req.value("vector_width"), req.value("rows_per_thread"));
  Rows s = fit.value_or(Rows{});
  if (!fit) {  // kept for the messages below
    s.vector_width = req.value("vector_width").value_or(4);
    s.rows_per_thread = req.value("rows_per_thread").value_or(1);
  }
  s.threads_per_block = req.value("threads_per_block").value_or(kDefaultThreadsPerBlock);

  std::vector<Diagnostic> errors;
  if (!fit && !req.has("vector_width")) {
    // No width fits: say why for each.
    const int rows = req.value("rows_per_thread").value_or(1);
    std::string why;
    for (int vector : vector_widths(wl)) {
      std::string misfit = rows_vector_misfit(wl, vector);
      if (misfit.empty()) misfit = rows_register_misfit(wl, rows, vector);
      why += "\n  vector_width " + num(vector) + ": " + misfit;
    }
    errors.push_back({rows_at, "the rows algorithm cannot run this workload with any vector_width" +
                                   (req.has("rows_per_thread") ? " at rows_per_thread " + num(rows)
                                                               : std::string(", even at rows_per_thread 1")) +
                                   ":" + why + "\n  use algorithm: tiles"});
  } else if (std::string why = rows_vector_misfit(wl, s.vector_width); !why.empty()) {
    std::string other;  // a width that would cover the row
    for (int vector : vector_widths(wl)) {
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
  if (!errors.empty()) throw InputError(std::move(errors));

  p.schedule.values = {{"rows_per_thread", s.rows_per_thread},
                       {"vector_width", s.vector_width},
                       {"threads_per_block", s.threads_per_block}};
  // A group of group_lanes lanes owns one band of rows_per_thread output rows
  // of one channel; each lane loads in_rows rows of vector_width columns,
  // takes halo_left/halo_right columns from its neighbours and computes
  // outputs_per_lane columns per row.
  const RowsShape shape = rows_shape(wl, s.rows_per_thread, s.vector_width);
  const int group_lanes = pow2_at_least(shape.lanes);
  // A lane's outputs (2, 4 or 8: vector_width / stride) go out in one
  // store when every output row starts on a multiple of them.
  const bool vector_store = shape.outputs > 1 && wl.out_w() % shape.outputs == 0;
  const int element_bytes = ops::element_bytes(wl);
  p.alignment = element_bytes * std::max(s.vector_width, vector_store ? shape.outputs : 1);
  p.threads = s.threads_per_block;
  p.block_threads = s.threads_per_block;
  // The launch numbers thread groups, one per band of each plane, with an int.
  p.max_batch = batch_limit(static_cast<long long>(wl.c) * ceil_div(wl.out_h(), s.rows_per_thread));
  p.values = {
      {"group_lanes", static_cast<long long>(group_lanes)},
      {"bands", static_cast<long long>(ceil_div(wl.out_h(), s.rows_per_thread))},
      {"in_rows", static_cast<long long>(shape.in_rows)},
      {"outputs_per_lane", static_cast<long long>(shape.outputs)},
      {"halo_left", static_cast<long long>(shape.halo_left)},
      {"halo_right", static_cast<long long>(shape.halo_right)},
      {"vector_store", vector_store},
      // __launch_bounds__ minimum blocks per SM: caps registers at 64.
      {"min_blocks", static_cast<long long>(std::max(1, 1024 / s.threads_per_block))},
      {"vector_width_bytes", static_cast<long long>(element_bytes * s.vector_width)},
      // Some lane of the group reads no input: its zeros serve as the padding.
      {"idle_edge_lane", ceil_div(wl.w, s.vector_width) < group_lanes},
      {"groups_per_block", static_cast<long long>(s.threads_per_block / group_lanes)},
      {"output_vector_bytes", static_cast<long long>(element_bytes * shape.outputs)},
      {"ragged_rows", wl.out_h() % s.rows_per_thread != 0},
  };
}

std::string describe(const Schedule& s) {
  return "rows_per_thread " + num(s.at("rows_per_thread")) + ", vector_width " + num(s.at("vector_width")) +
         ", threads_per_block " + num(s.at("threads_per_block"));
}


Knob vector_width_knob() {
  Knob k = Knob::integer("vector_width", 1, 8,
                         "input columns (elements) per lane and load: 1, 2 or 4; 8 for 2-byte elements (16 bytes)");
  k.allowed = {1, 2, 4, 8};
  k.rule_note = "(elements per load)";
  return k;
}

Knob threads_per_block_knob() {
  Knob k = Knob::integer("threads_per_block", 32, 1024, "threads per block");
  k.multiple_of = 32;
  k.rule_note = "(whole warps)";
  return k;
}

// A group of lanes per band of a plane, groups_per_block groups per block;
// the kernel takes the group count.
LaunchDescription launch(const KernelPlan& p) {
  LaunchDescription l;
  l.grid[0].per_image = p.workload.c * p.number("bands");
  l.grid[0].per_block = p.number("groups_per_block");
  l.block[0] = p.block_threads;
  l.count_per_image = l.grid[0].per_image;
  l.count_of = "thread groups";
  return l;
}

}  // namespace

bool rows_fits_by_default(const Workload& wl, const PlanOptions& options) {
  return fit_rows(wl, options, std::nullopt, std::nullopt).has_value();
}

const Algorithm kRows{
    "rows",
    &kOperator,
    {Knob::integer("rows_per_thread", 1, 16, "output rows per lane (the band height)"), vector_width_knob(),
     threads_per_block_knob()},
    "depthwise_nchw_rows.cu.mustache",
    &plan,
    &describe,
    &launch,
    {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16},
};

}  // namespace convgen::gen::depthwise
