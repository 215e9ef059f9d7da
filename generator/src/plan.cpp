// Planning: schedule defaults, schedule checks, and every derived number.
#include "convgen/gen/plan.hpp"

#include <algorithm>
#include <map>
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

}  // namespace

bool Schedule::operator==(const Schedule& o) const {
  return std::tie(tile_h, tile_w, threads_y, threads_x, vthreads_y, vthreads_x, shared_input, shared_filter,
                  channels_per_block) == std::tie(o.tile_h, o.tile_w, o.threads_y, o.threads_x, o.vthreads_y,
                                                  o.vthreads_x, o.shared_input, o.shared_filter,
                                                  o.channels_per_block);
}

std::string Schedule::summary() const {
  return "block_tile " + num(tile_h) + "x" + num(tile_w) + ", threads " + num(threads_y) + "x" + num(threads_x) +
         ", vthreads " + num(vthreads_y) + "x" + num(vthreads_x) + ", input " +
         (shared_input ? "in shared memory" : "from global memory") + ", filter " +
         (shared_filter ? "in shared memory" : "in registers") +
         (channels_per_block > 1 ? ", " + num(channels_per_block) + " channels per block" : "");
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

// The default rule, in words: a warp's worth of threads along the output
// width (fewer when the output is narrower), so that a warp reads and writes
// consecutive addresses; up to 4 output rows per thread, so that each input
// row staged in shared memory is reused by the filter rows of several
// outputs; at most 256 threads per block; the input tile (with its halo) in
// shared memory when the filter has more than one tap and the stride is 1;
// the filter in registers unless it has more taps than registers
// comfortably hold; several channels per block for small whole planes.
Schedule default_schedule(const Workload& wl, const PlanOptions& options) {
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

KernelPlan plan_kernel(const Workload& wl, const PlanOptions& options) {
  const ScheduleRequest& req = wl.schedule;
  Schedule s = default_schedule(wl, options);
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
  p.name = kernel_name(wl);
  p.workload = wl;
  p.schedule = s;
  p.out_h = wl.out_h();
  p.out_w = wl.out_w();
  p.out_channels = wl.out_channels();
  p.rows_per_thread = s.tile_h / split_h;
  p.cols_per_thread = s.tile_w / split_w;
  p.threads = threads;
  p.block_threads = threads * s.channels_per_block;
  p.tiles_y = ceil_div(p.out_h, s.tile_h);
  p.tiles_x = ceil_div(p.out_w, s.tile_w);
  p.in_tile_h = (s.tile_h - 1) * wl.stride_h + (wl.kh - 1) * wl.dilation_h + 1;
  p.in_tile_w = (s.tile_w - 1) * wl.stride_w + (wl.kw - 1) * wl.dilation_w + 1;
  p.loads_per_thread = ceil_div(p.in_tile_h * p.in_tile_w, threads);
  p.smem_bytes = smem;
  p.cost_batch = wl.n == 0 ? 1 : wl.n;
  const long long n = p.cost_batch;
  const int epilogue_params = wl.epilogue == Epilogue::kNone ? 0 : wl.epilogue == Epilogue::kBias ? 1 : 2;
  p.bytes_read = 4LL * (n * wl.c * wl.h * wl.w + static_cast<long long>(p.out_channels) * wl.kh * wl.kw +
                        static_cast<long long>(p.out_channels) * epilogue_params);
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
