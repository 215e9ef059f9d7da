// Stage 2 of the generator: a workload and its schedule request become a
// KernelPlan, the plain numbers that the templates print. Every derived
// quantity (launch shape, tiles, halo, shared memory, bytes moved) is
// computed here and nowhere else.
#pragma once

#include <string>
#include <vector>

#include "convgen/gen/spec.hpp"

namespace convgen::gen {

// A complete schedule: every knob of its algorithm has a value.
struct Schedule {
  Algorithm algorithm = Algorithm::kTiles;
  // The tiles algorithm.
  int tile_h = 0, tile_w = 0;        // outputs per block
  int threads_y = 0, threads_x = 0;  // threads per block
  int vthreads_y = 1, vthreads_x = 1;
  bool shared_input = true;
  bool shared_filter = false;
  int channels_per_block = 1;  // input channels per block, one per threadIdx.z
  // The rows algorithm.
  int rows_per_thread = 0;    // output rows per lane (per band)
  int vector_width = 0;       // input columns per lane, loaded at once
  int threads_per_block = 0;
  // The planes algorithm.
  int warps_per_block = 0;  // warps per block, 32 planes each
  // Every algorithm.
  CachePolicy input_cache = CachePolicy::kNormal;
  CachePolicy output_cache = CachePolicy::kNormal;

  bool operator==(const Schedule& o) const;
  bool operator!=(const Schedule& o) const { return !(*this == o); }
  std::string summary() const;  // one line, e.g. "tiles: block_tile 32x32, threads 8x16, ..."
};

struct KernelPlan {
  std::string name;  // the kernel's one name: file, symbol, registry key, CLI filter, bench row
  Workload workload;
  Schedule schedule;

  // Output shape.
  int out_h = 0, out_w = 0, out_channels = 0;
  // Each thread computes vthreads_y*vthreads_x groups of rows_per_thread x
  // cols_per_thread outputs, for each of the `multiplier` output channels.
  int rows_per_thread = 0, cols_per_thread = 0;
  int threads = 0;        // per channel: threads_y * threads_x
  int block_threads = 0;  // threads * channels_per_block
  // Launch: grid (tiles_y*tiles_x, c / channels_per_block, batch),
  // block (threads_x, threads_y, channels_per_block).
  int tiles_y = 0, tiles_x = 0;
  // Input a block reads, halo included.
  int in_tile_h = 0, in_tile_w = 0;
  int loads_per_thread = 0;  // shared-memory staging: loads per thread, rounded up
  int smem_bytes = 0;
  // The rows algorithm: a group of group_lanes lanes owns one band of
  // rows_per_thread output rows of one channel; each lane loads in_rows rows
  // of vector_width columns, takes halo_left/halo_right columns from its
  // neighbours and computes outputs_per_lane columns per row.
  int group_lanes = 0, bands = 0, in_rows = 0, outputs_per_lane = 0, halo_left = 0, halo_right = 0;
  bool vector_store = false;  // outputs written with one store per row
  // The planes algorithm: a lane's input and output planes sit in shared
  // memory at strides made odd (conflict-free); the copies in and out use
  // 16-byte vectors when the plane needs no such padding.
  int in_stride = 0, out_stride = 0;
  bool vector_copy_in = false, vector_copy_out = false;
  int min_blocks = 0;         // __launch_bounds__ minimum blocks per SM (caps registers at 64)
  int alignment = 4;          // bytes the input and output pointers must be aligned to
  // Cost at the declared batch (1 when the batch is runtime).
  int cost_batch = 1;
  long long bytes_read = 0, bytes_written = 0;
  double floor_us = 0;  // (bytes_read + bytes_written) / copy bandwidth
};

struct PlanOptions {
  double copy_bandwidth_tbps = 3.0;  // used for the floor in the kernel headers
  int max_shared_bytes = 48 * 1024;  // static shared memory a block may use
};

// The name that encodes the problem, e.g. dw_f32_nchw_n1_c256_h96_w96_k3x3_s1_p1_m1_ssrelu.
std::string kernel_name(const Workload& wl);

// The schedule a workload gets when the spec leaves a knob unset.
Schedule default_schedule(const Workload& wl, const PlanOptions& options = {});

// Fills unset knobs with defaults, checks that the schedule fits (tiles
// divisible, threads <= 1024, shared memory under the limit, registers) and
// derives the plan. Throws SpecError pointing at the offending spec key.
KernelPlan plan_kernel(const Workload& wl, const PlanOptions& options = {});

struct LibraryPlan {
  std::string name;  // C identifier: header <name>.h, namespace convgen::<name>
  std::vector<std::string> spec_files;
  std::vector<KernelPlan> kernels;  // sorted by name, duplicates merged
  std::vector<Diagnostic> skipped;  // with OnInvalidWorkload::kSkip: workloads left out, and why
};

// Plans every workload of the specs. The library is named `name_override`
// when given, else by the specs' `library` key (which must then agree).
// Throws SpecError with every problem found.
// With OnInvalidWorkload::kSkip, a workload whose schedule does not fit is
// left out and listed in `skipped` (with the specs' own skipped workloads).
LibraryPlan plan_library(const std::vector<Spec>& specs, const std::string& name_override,
                         const PlanOptions& options = {},
                         OnInvalidWorkload on_invalid = OnInvalidWorkload::kFail);

}  // namespace convgen::gen
