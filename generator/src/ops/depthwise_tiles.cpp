// depthwise_conv2d, algorithm `tiles`: TVM's schedule. A block stages a 2-D
// input tile with its halo in shared memory; threads and virtual threads
// split the output tile. Serves every shape.
#include <algorithm>

#include "depthwise.hpp"

namespace convgen::gen::depthwise {

namespace {

// Accumulators a thread keeps live at once (rows x cols x multiplier): above
// this the compiler starts to spill.
constexpr int kMaxAccumulators = 32;
// Filter taps kept in registers when the filter is not staged in shared memory.
constexpr int kMaxRegisterTaps = 128;

// The knobs, in TVM's vocabulary. Whatever the dtype, the staged input and
// filter are floats in shared memory (converted as they are loaded, one
// element at a time).
struct Tiles {
  int tile_h = 0, tile_w = 0;        // outputs per block (blocking_h, blocking_w)
  int threads_y = 0, threads_x = 0;  // threads per block (num_thread_y, num_thread_x)
  int vthreads_y = 1, vthreads_x = 1;
  bool shared_input = true;    // stage the input tile (with halo) in shared memory
  bool shared_filter = false;  // stage the filter in shared memory (else registers)
  int channels_per_block = 1;  // input channels per block, one per threadIdx.z
};

int shared_bytes(const Workload& wl, const Tiles& s) {
  int bytes = 0;
  if (s.shared_input) {
    const int in_h = (s.tile_h - 1) * wl.stride_h + (wl.kh - 1) * wl.dilation_h + 1;
    const int in_w = (s.tile_w - 1) * wl.stride_w + (wl.kw - 1) * wl.dilation_w + 1;
    bytes += in_h * in_w * 4;
  }
  if (s.shared_filter) bytes += wl.multiplier * wl.kh * wl.kw * 4;
  return bytes * s.channels_per_block;
}

// A block of fewer than 128 threads whose tile covers the whole plane of a
// small image does little work for its start-up cost (filter and tile loads,
// a barrier): give it several channels, up to 256 threads, in a count that
// divides the channels. (Measured on the H100: 4 channels of 7x7 cut
// 64x960x7x7 from 41 to 28 us; 2 channels of 14x14 at 128 threads each made
// 64x576x14x14 12% slower, hence the 128-thread condition.)
int default_channels_per_block(const Workload& wl, const Tiles& s, const PlanOptions& options) {
  const bool whole_plane = s.tile_h >= wl.out_h() && s.tile_w >= wl.out_w();
  if (!whole_plane || s.threads_y * s.threads_x >= 128) return 1;
  Tiles one_channel = s;
  one_channel.channels_per_block = 1;
  const int bytes_per_channel = shared_bytes(wl, one_channel);
  int channels = 1;
  while (channels * 2 * s.threads_y * s.threads_x <= 256 && wl.c % (channels * 2) == 0 &&
         bytes_per_channel * channels * 2 <= options.max_shared_bytes) {
    channels *= 2;
  }
  return channels;
}

// The default schedule, in words: a warp's worth of threads along the output
// width (fewer when the output is narrower), so that a warp reads and writes
// consecutive addresses; up to 4 output rows per thread, so that each input
// row staged in shared memory is reused by the filter rows of several
// outputs; at most 256 threads per block; the input tile (with its halo) in
// shared memory when the filter has more than one tap and the stride is 1;
// the filter in registers unless it has more taps than registers
// comfortably hold; several channels per block for small whole planes.
Tiles default_tiles(const Workload& wl, const PlanOptions& options) {
  const int out_h = wl.out_h();
  const int out_w = wl.out_w();
  Tiles s;
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

void plan(const Workload& wl, const PlanOptions& options, KernelPlan& p) {
  const ScheduleRequest& req = wl.schedule;
  Tiles s = default_tiles(wl, options);
  // Keys the spec sets replace the defaults. When the spec sets threads but
  // not the tile, the tile follows the threads (one output per thread per
  // virtual thread times the default rows per thread).
  const int default_rows = s.tile_h / s.threads_y;
  s.threads_y = req.value("threads_y").value_or(s.threads_y);
  s.threads_x = req.value("threads_x").value_or(s.threads_x);
  s.vthreads_y = req.value("vthreads_y").value_or(s.vthreads_y);
  s.vthreads_x = req.value("vthreads_x").value_or(s.vthreads_x);
  if (req.has("tile_h")) {
    s.tile_h = *req.value("tile_h");
    s.tile_w = *req.value("tile_w");
  } else {
    s.tile_h = s.threads_y * s.vthreads_y * default_rows;
    s.tile_w = s.threads_x * s.vthreads_x;
  }
  s.shared_input = req.value("shared_input").value_or(s.shared_input);
  s.shared_filter = req.value("shared_filter").value_or(s.shared_filter);
  // The channel count follows the final threads and tile, unless set.
  s.channels_per_block = req.value("channels_per_block").value_or(default_channels_per_block(wl, s, options));

  std::vector<Diagnostic> errors;
  const SourceLocation& threads_at = req.at("threads");
  const SourceLocation& tile_at = req.at("block_tile");

  const int threads = s.threads_y * s.threads_x;
  if (threads * s.channels_per_block > kMaxThreads) {
    errors.push_back({threads_at, "threads " + num(s.threads_y) + "x" + num(s.threads_x) + " x channels_per_block " +
                                      num(s.channels_per_block) + " = " + num(threads * s.channels_per_block) +
                                      " per block; CUDA allows at most " + num(kMaxThreads)});
  }
  if (wl.c % s.channels_per_block != 0) {
    errors.push_back({req.at("channels_per_block"), "channels_per_block " + num(s.channels_per_block) +
                                                        " does not divide the " + num(wl.c) + " input channels"});
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
  if (!errors.empty()) throw InputError(std::move(errors));

  p.schedule.values = {{"tile_h", s.tile_h},
                       {"tile_w", s.tile_w},
                       {"threads_y", s.threads_y},
                       {"threads_x", s.threads_x},
                       {"vthreads_y", s.vthreads_y},
                       {"vthreads_x", s.vthreads_x},
                       {"shared_input", s.shared_input},
                       {"shared_filter", s.shared_filter},
                       {"channels_per_block", s.channels_per_block}};
  const int out_h = wl.out_h(), out_w = wl.out_w();
  const int tiles_y = ceil_div(out_h, s.tile_h);
  const int tiles_x = ceil_div(out_w, s.tile_w);
  const int in_tile_h = (s.tile_h - 1) * wl.stride_h + (wl.kh - 1) * wl.dilation_h + 1;
  const int in_tile_w = (s.tile_w - 1) * wl.stride_w + (wl.kw - 1) * wl.dilation_w + 1;
  p.threads = threads;
  p.block_threads = threads * s.channels_per_block;
  p.alignment = ops::element_bytes(wl);  // one element at a time
  p.smem_bytes = smem;
  // Each thread computes vthreads_y*vthreads_x groups of rows_per_thread x
  // cols_per_thread outputs, for each of the `multiplier` output channels.
  // Launch: grid (tiles_y*tiles_x, c / channels_per_block, batch), block
  // (threads_x, threads_y, channels_per_block).
  p.values = {
      {"rows_per_thread", static_cast<long long>(s.tile_h / split_h)},
      {"cols_per_thread", static_cast<long long>(s.tile_w / split_w)},
      {"needs_sync", s.shared_input || s.shared_filter},
      {"channel_blocks", static_cast<long long>(wl.c / s.channels_per_block)},
      {"tiles_y", static_cast<long long>(tiles_y)},
      {"tiles_x", static_cast<long long>(tiles_x)},
      {"grid_x", static_cast<long long>(tiles_y) * tiles_x},
      // Input a block reads, halo included, and the loads per thread that
      // stage it (rounded up).
      {"in_tile_h", static_cast<long long>(in_tile_h)},
      {"in_tile_w", static_cast<long long>(in_tile_w)},
      {"loads_per_thread", static_cast<long long>(ceil_div(in_tile_h * in_tile_w, threads))},
      {"ragged_loads", in_tile_h * in_tile_w % threads != 0},
      // Output bounds checks are emitted only where the tiles overhang the output.
      {"ragged", out_h % s.tile_h != 0 || out_w % s.tile_w != 0},
      {"smem_note", s.shared_input ? " (input tile " + num(in_tile_h) + "x" + num(in_tile_w) + " floats" +
                                         (s.shared_filter ? ", plus the filter)" : ")")
                                   : (s.shared_filter ? " (the filter)" : "")},
  };
}

std::string describe(const Schedule& s) {
  return "block_tile " + num(s.at("tile_h")) + "x" + num(s.at("tile_w")) + ", threads " + num(s.at("threads_y")) +
         "x" + num(s.at("threads_x")) + ", vthreads " + num(s.at("vthreads_y")) + "x" + num(s.at("vthreads_x")) +
         ", input " + (s.at("shared_input") ? "in shared memory" : "from global memory") + ", filter " +
         (s.at("shared_filter") ? "in shared memory" : "in registers") +
         (s.at("channels_per_block") > 1 ? ", " + num(s.at("channels_per_block")) + " channels per block" : "");
}




// Grid (tiles, channel groups, batch), block (threads_x, threads_y,
// channels_per_block).
LaunchDescription launch(const KernelPlan& p) {
  const int channels_per_block = p.schedule.at("channels_per_block");
  LaunchDescription l;
  l.grid[0].blocks = p.number("grid_x");
  l.grid[1].blocks = p.workload.c / channels_per_block;
  l.grid[2].per_image = 1;
  l.block[0] = p.schedule.at("threads_x");
  l.block[1] = p.schedule.at("threads_y");
  l.block[2] = channels_per_block;
  return l;
}

}  // namespace

const Algorithm kTiles{
    "tiles",
    &kOperator,
    {Knob::tuple("block_tile", {"tile_h", "tile_w"}, 1, 256, "[blocking_h, blocking_w]", "outputs per block"),
     Knob::tuple("threads", {"threads_y", "threads_x"}, 1, 1024, "[num_thread_y, num_thread_x]", "threads per block"),
     Knob::tuple("vthreads", {"vthreads_y", "vthreads_x"}, 1, 16, "[num_vthread_y, num_vthread_x]",
          "virtual threads: each thread computes this many spread groups of outputs"),
     Knob::flag("shared_input", "stage the input tile and its halo in shared memory"),
     Knob::flag("shared_filter", "stage the filter in shared memory (else registers)"),
     channels_per_block_knob()},
    "depthwise_nchw.cu.mustache",
    &plan,
    &describe,
    &launch,
    {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16},
};

}  // namespace convgen::gen::depthwise
