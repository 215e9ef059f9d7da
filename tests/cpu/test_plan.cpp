// Stage 2: workload + schedule request -> KernelPlan. The numbers below are
// worked out by hand from the formulas in plan.hpp, not copied from a run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "convgen/gen/plan.hpp"
#include "test_util.h"

namespace convgen_test {
namespace {

// A schedule in one comparable line.
std::string sched(const Schedule& s) {
  return "tile " + std::to_string(s.tile_h) + "x" + std::to_string(s.tile_w) + " threads " +
         std::to_string(s.threads_y) + "x" + std::to_string(s.threads_x) + " vthreads " +
         std::to_string(s.vthreads_y) + "x" + std::to_string(s.vthreads_x) + " input " +
         (s.shared_input ? "shared" : "global") + " filter " + (s.shared_filter ? "shared" : "registers") + " ch " +
         std::to_string(s.channels_per_block);
}

// A workload built directly (no YAML), with `same` padding.
Workload same_workload(int n, int c, int h, int w, int k, int stride, int dilation, int multiplier) {
  Workload wl;
  wl.n = n;
  wl.c = c;
  wl.h = h;
  wl.w = w;
  wl.kh = wl.kw = k;
  wl.stride_h = wl.stride_w = stride;
  wl.dilation_h = wl.dilation_w = dilation;
  wl.multiplier = multiplier;
  const int window = dilation * (k - 1);
  wl.pad_top = wl.pad_left = window / 2;
  wl.pad_bottom = wl.pad_right = window - window / 2;
  return wl;
}

// ---------------------------------------------------------------------------
// Output size.

TEST(Plan, OutputSizeForStrideDilationAndPadding) {
  struct Case {
    std::string workload;
    int out_h, out_w;
  };
  for (const Case& c : std::vector<Case>{
           {"{n: 1, c: 8, h: 112, w: 112, filter: 3, stride: 2, padding: same}", 56, 56},
           {"{n: 1, c: 8, h: 7, w: 7, filter: 3, stride: 2, padding: same}", 4, 4},
           {"{n: 1, c: 8, h: 16, w: 16, filter: 5, padding: valid}", 12, 12},
           {"{n: 1, c: 8, h: 16, w: 16, filter: 5, stride: 3, padding: valid}", 4, 4},
           {"{n: 1, c: 8, h: 16, w: 16, filter: 3, dilation: 2, padding: valid}", 12, 12},
           {"{n: 1, c: 8, h: 16, w: 16, filter: 3, dilation: 2, stride: 2, padding: 1}", 7, 7},
           {"{n: 1, c: 8, h: 20, w: 20, filter: 7, dilation: 3, stride: 4, padding: same}", 5, 5},
           {"{n: 1, c: 8, h: 10, w: 10, filter: 7, padding: [0, 1, 2, 3]}", 5, 9},
           {"{n: 1, c: 8, h: 9, w: 9, filter: 3, stride: [2, 1], padding: same}", 5, 9},
           {"{n: 1, c: 8, h: 15, w: 17, filter: [3, 5], stride: [2, 3], dilation: [2, 1], padding: valid}", 6, 5},
           {"{n: 1, c: 8, h: 1, w: 1, filter: 1, padding: valid}", 1, 1},
       }) {
    SCOPED_TRACE(c.workload);
    const KernelPlan p = plan(c.workload);
    EXPECT_EQ(p.out_h, c.out_h);
    EXPECT_EQ(p.out_w, c.out_w);
    EXPECT_EQ(p.out_h, p.workload.out_h());
    EXPECT_EQ(p.out_w, p.workload.out_w());
  }
  // A window that does not fit is refused, even where C's truncating
  // division would give a positive "size" ((4 - 4 - 1) / 2 + 1 = 1).
  EXPECT_FALSE(spec_errors([] { workload("{n: 1, c: 8, h: 4, w: 8, filter: 5, padding: valid, stride: 2}"); }).empty());
}

// ---------------------------------------------------------------------------
// The seed workloads: every derived number.

TEST(Plan, SeedWorkloadWithTheDefaultSchedule) {
  const KernelPlan p = plan("{n: 1, c: 256, h: 96, w: 96, filter: 3, padding: same}");
  EXPECT_EQ(sched(p.schedule), "tile 32x32 threads 8x32 vthreads 1x1 input shared filter registers ch 1");
  EXPECT_EQ(p.out_h, 96);
  EXPECT_EQ(p.out_w, 96);
  EXPECT_EQ(p.out_channels, 256);
  EXPECT_EQ(p.rows_per_thread, 4);
  EXPECT_EQ(p.cols_per_thread, 1);
  EXPECT_EQ(p.threads, 256);
  EXPECT_EQ(p.block_threads, 256);
  EXPECT_EQ(p.tiles_y, 3);
  EXPECT_EQ(p.tiles_x, 3);
  EXPECT_EQ(p.in_tile_h, 34);
  EXPECT_EQ(p.in_tile_w, 34);
  EXPECT_EQ(p.loads_per_thread, 5);  // ceil(34*34 / 256)
  EXPECT_EQ(p.smem_bytes, 34 * 34 * 4);
  EXPECT_EQ(p.cost_batch, 1);
  EXPECT_EQ(p.bytes_read, 4LL * (256 * 96 * 96 + 256 * 9));
  EXPECT_EQ(p.bytes_written, 4LL * 256 * 96 * 96);
  EXPECT_DOUBLE_EQ(p.floor_us, (4.0 * (256 * 96 * 96 + 256 * 9) + 4.0 * 256 * 96 * 96) / 3e6);
  EXPECT_NEAR(p.floor_us, 6.294528, 1e-9);
}

// The shipped seeds spec, with the tutorial's schedules.
TEST(Plan, ShippedSeedsSpec) {
  const LibraryPlan lib = plan_library({parse_spec_file(std::string(CONVGEN_SOURCE_DIR) + "/specs/seeds.yaml")}, "");
  EXPECT_EQ(lib.name, "seeds");
  ASSERT_EQ(lib.kernels.size(), 9u);
  auto find = [&](const std::string& name) -> const KernelPlan& {
    for (const KernelPlan& p : lib.kernels) {
      if (p.name == name) return p;
    }
    throw std::runtime_error("no kernel " + name);
  };

  const KernelPlan& k3 = find("dw_f32_nchw_n1_c256_h96_w96_k3x3_s1_p1_m1");
  EXPECT_EQ(sched(k3.schedule), "tile 32x32 threads 8x16 vthreads 1x2 input shared filter registers ch 1");
  EXPECT_EQ(k3.rows_per_thread, 4);
  EXPECT_EQ(k3.cols_per_thread, 1);
  EXPECT_EQ(k3.threads, 128);
  EXPECT_EQ(k3.tiles_y * k3.tiles_x, 9);
  EXPECT_EQ(k3.in_tile_h, 34);
  EXPECT_EQ(k3.in_tile_w, 34);
  EXPECT_EQ(k3.loads_per_thread, 10);  // ceil(1156 / 128)
  EXPECT_EQ(k3.smem_bytes, 4624);
  EXPECT_EQ(k3.bytes_read, 4LL * (256 * 96 * 96 + 256 * 9));
  EXPECT_EQ(k3.bytes_written, 4LL * 256 * 96 * 96);
  EXPECT_NEAR(k3.floor_us, (9446400.0 + 9437184.0) / 3e6, 1e-12);

  const KernelPlan& k5m2 = find("dw_f32_nchw_n1_c256_h96_w96_k5x5_s1_p2_m2");
  EXPECT_EQ(k5m2.out_channels, 512);
  EXPECT_EQ(k5m2.in_tile_h, 36);
  EXPECT_EQ(k5m2.smem_bytes, 36 * 36 * 4);
  EXPECT_EQ(k5m2.bytes_read, 4LL * (256 * 96 * 96 + 512 * 25));
  EXPECT_EQ(k5m2.bytes_written, 4LL * 512 * 96 * 96);

  // scale_shift reads two floats per output channel more.
  const KernelPlan& ss = find("dw_f32_nchw_n1_c256_h96_w96_k3x3_s1_p1_m1_ssrelu");
  EXPECT_EQ(ss.bytes_read, k3.bytes_read + 4LL * 2 * 256);

  // The T4 study: 3x4x16x32, 7x7, default schedule.
  const KernelPlan& t4 = find("dw_f32_nchw_n3_c4_h16_w32_k7x7_s1_p3_m1");
  EXPECT_EQ(sched(t4.schedule), "tile 16x32 threads 8x32 vthreads 1x1 input shared filter registers ch 1");
  EXPECT_EQ(t4.in_tile_h, 22);
  EXPECT_EQ(t4.in_tile_w, 38);
  EXPECT_EQ(t4.smem_bytes, 22 * 38 * 4);
  EXPECT_EQ(t4.cost_batch, 3);
  EXPECT_EQ(t4.bytes_read, 4LL * (3 * 4 * 16 * 32 + 4 * 49));
  EXPECT_EQ(t4.bytes_written, 4LL * 3 * 4 * 16 * 32);
}

TEST(Plan, BytesMovedByEpilogueBatchAndStride) {
  const KernelPlan bias = plan("{n: 2, c: 8, h: 16, w: 16, filter: 3, padding: same, multiplier: 2, epilogue: bias}");
  EXPECT_EQ(bias.out_channels, 16);
  EXPECT_EQ(bias.bytes_read, 4LL * (2 * 8 * 256 + 16 * 9 + 16));
  EXPECT_EQ(bias.bytes_written, 4LL * 2 * 16 * 256);

  const KernelPlan runtime = plan("{n: runtime, c: 8, h: 16, w: 16, filter: 3, padding: same}");
  EXPECT_EQ(runtime.cost_batch, 1);
  EXPECT_EQ(runtime.bytes_read, 4LL * (8 * 256 + 8 * 9));
  EXPECT_EQ(runtime.bytes_written, 4LL * 8 * 256);

  const KernelPlan strided = plan("{n: 1, c: 4, h: 15, w: 15, filter: 3, stride: 2, padding: valid}");
  EXPECT_EQ(strided.out_h, 7);
  EXPECT_EQ(strided.bytes_read, 4LL * (4 * 225 + 4 * 9));
  EXPECT_EQ(strided.bytes_written, 4LL * 4 * 49);

  // Large problems do not overflow.
  const KernelPlan big = plan("{n: 65535, c: 4096, h: 64, w: 64, filter: 3, padding: same}");
  EXPECT_EQ(big.bytes_written, 4LL * 65535 * 4096 * 64 * 64);
}

TEST(Plan, CopyBandwidthOption) {
  PlanOptions options;
  options.copy_bandwidth_tbps = 1.5;
  const KernelPlan p = plan("{n: 1, c: 256, h: 96, w: 96, filter: 3, padding: same}", options);
  EXPECT_NEAR(p.floor_us, 2 * 6.294528, 1e-9);
}

TEST(Plan, HaloOfStridedAndDilatedTiles) {
  const KernelPlan p = plan(
      "{n: 1, c: 8, h: 64, w: 64, filter: 5, stride: 2, dilation: 2, padding: same, "
      "schedule: {block_tile: [8, 16], threads: [8, 16], shared_input: true}}");
  EXPECT_EQ(p.out_h, 32);
  EXPECT_EQ(p.in_tile_h, 7 * 2 + 4 * 2 + 1);   // (tile-1)*stride + (k-1)*dilation + 1
  EXPECT_EQ(p.in_tile_w, 15 * 2 + 4 * 2 + 1);
  EXPECT_EQ(p.smem_bytes, 23 * 39 * 4);
  EXPECT_EQ(p.loads_per_thread, 8);  // ceil(897 / 128)
  EXPECT_EQ(p.tiles_y, 4);
  EXPECT_EQ(p.tiles_x, 2);
  EXPECT_EQ(p.rows_per_thread, 1);
  EXPECT_EQ(p.cols_per_thread, 1);
}

// ---------------------------------------------------------------------------
// The default schedule rule.

TEST(DefaultSchedule, AcrossShapes) {
  struct Case {
    std::string workload, schedule;
    int smem_bytes, block_threads;
  };
  for (const Case& c : std::vector<Case>{
           // Small plane: the tile covers it; 4 channels per block make 256 threads.
           {"{n: 1, c: 960, h: 7, w: 7, filter: 3, padding: same}",
            "tile 8x8 threads 8x8 vthreads 1x1 input shared filter registers ch 4", 10 * 10 * 4 * 4, 256},
           // Stride 2 reads through the cache.
           {"{n: 1, c: 96, h: 112, w: 112, filter: 3, stride: 2, padding: same}",
            "tile 32x32 threads 8x32 vthreads 1x1 input global filter registers ch 1", 0, 256},
           {"{n: 1, c: 576, h: 14, w: 14, filter: 3, stride: 2, padding: same}",
            "tile 8x8 threads 8x8 vthreads 1x1 input global filter registers ch 4", 0, 256},
           // 7x7, dilation 4: a 56x56 staged tile still fits.
           {"{n: 1, c: 16, h: 64, w: 64, filter: 7, dilation: 4, padding: same}",
            "tile 32x32 threads 8x32 vthreads 1x1 input shared filter registers ch 1", 56 * 56 * 4, 256},
           // 11x11, dilation 8: the halo is too big for a 32-row tile; threads_y halves.
           {"{n: 1, c: 16, h: 64, w: 64, filter: 11, dilation: 8, padding: same}",
            "tile 16x32 threads 4x32 vthreads 1x1 input shared filter shared ch 1", 96 * 112 * 4 + 121 * 4, 128},
           // Odd channel count: one channel per block.
           {"{n: 1, c: 3, h: 5, w: 5, filter: 3, padding: same}",
            "tile 8x8 threads 8x8 vthreads 1x1 input shared filter registers ch 1", 400, 64},
           // 1x1 filter: nothing to stage.
           {"{n: 1, c: 64, h: 56, w: 56, filter: 1, padding: valid}",
            "tile 32x32 threads 8x32 vthreads 1x1 input global filter registers ch 1", 0, 256},
           // Tall and narrow.
           {"{n: 1, c: 8, h: 128, w: 4, filter: 3, padding: same}",
            "tile 128x4 threads 32x4 vthreads 1x1 input shared filter registers ch 1", 130 * 6 * 4, 128},
           // 200 filter taps go to shared memory.
           {"{n: 1, c: 16, h: 32, w: 32, filter: 5, multiplier: 8, padding: same}",
            "tile 32x32 threads 8x32 vthreads 1x1 input shared filter shared ch 1", 36 * 36 * 4 + 200 * 4, 256},
           // Stride and dilation together.
           {"{n: 1, c: 32, h: 64, w: 64, filter: 5, stride: 2, dilation: 2, padding: same}",
            "tile 32x32 threads 8x32 vthreads 1x1 input global filter registers ch 1", 0, 256},
           // Rows per thread: 2 for 8 <= out_h < 32.
           {"{n: 1, c: 256, h: 21, w: 21, filter: 3, padding: same}",
            "tile 16x32 threads 8x32 vthreads 1x1 input shared filter registers ch 1", 18 * 34 * 4, 256},
       }) {
    SCOPED_TRACE(c.workload);
    const Workload wl = workload(c.workload);
    EXPECT_EQ(sched(default_schedule(wl)), c.schedule);
    const KernelPlan p = plan_kernel(wl);
    EXPECT_EQ(sched(p.schedule), c.schedule);
    EXPECT_EQ(p.smem_bytes, c.smem_bytes);
    EXPECT_EQ(p.block_threads, c.block_threads);
  }
}

TEST(DefaultSchedule, SmallerSharedMemoryLimitShrinksTheTile) {
  PlanOptions options;
  options.max_shared_bytes = 2048;
  const KernelPlan p = plan("{n: 1, c: 256, h: 96, w: 96, filter: 3, padding: same}", options);
  EXPECT_EQ(sched(p.schedule), "tile 8x32 threads 2x32 vthreads 1x1 input shared filter registers ch 1");
  EXPECT_EQ(p.smem_bytes, 10 * 34 * 4);
}

// The rule's promises, over a spread of shapes: at most 256 threads per
// block, a tile that splits evenly over the threads, staged data that fits,
// channel groups that divide the channels, and a plan that passes its own
// checks.
TEST(DefaultSchedule, AlwaysFitsAcrossAGridOfShapes) {
  const PlanOptions options;
  int checked = 0;
  std::vector<std::string> failures;
  for (int h : {1, 3, 7, 14, 56, 224, 513}) {
    for (int w : {1, 3, 7, 14, 56, 224, 513}) {
      for (int k : {1, 3, 5, 7, 11}) {
        for (int stride : {1, 2, 4, 8}) {
          for (int dilation : {1, 2, 4, 8}) {
            for (int multiplier : {1, 2, 8}) {
              for (int c : {6, 64}) {
                const Workload wl = same_workload(1, c, h, w, k, stride, dilation, multiplier);
                const std::string what = kernel_name(wl);
                ++checked;
                const Schedule s = default_schedule(wl, options);
                std::string why;
                if (s.threads_y * s.threads_x * s.channels_per_block > 256) why += " more than 256 threads;";
                if (s.tile_h % (s.threads_y * s.vthreads_y) || s.tile_w % (s.threads_x * s.vthreads_x))
                  why += " tile does not split;";
                if (c % s.channels_per_block) why += " channels_per_block does not divide c;";
                if (s.shared_input != (k > 1 && stride == 1)) why += " shared_input against the rule;";
                try {
                  const KernelPlan p = plan_kernel(wl, options);
                  if (p.schedule != s) why += " plan changed the default schedule;";
                  if (p.smem_bytes > options.max_shared_bytes) why += " shared memory over the limit;";
                } catch (const SpecError& e) {
                  why += " plan_kernel refused it: " + e.diagnostics().front().message;
                }
                if (!why.empty()) failures.push_back(what + " (" + sched(s) + "):" + why);
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 10000);
  std::string first;
  for (size_t i = 0; i < std::min<size_t>(failures.size(), 8); ++i) first += "  " + failures[i] + "\n";
  EXPECT_TRUE(failures.empty()) << failures.size() << " of " << checked << " default schedules break the rule, e.g.\n"
                                << first;
}

// Regression: channel groups must fit shared memory even on a small plane with
// a large halo (the check once counted two channels' bytes at every step):
//   {n: 1, c: 64, h: 8, w: 8, filter: 5, dilation: 8, padding: same}
//   -> "the schedule needs 51200 bytes of shared memory per block; the limit is 49152 bytes"
// (threads 4x8, one channel stages 40x40 floats = 6400 bytes, 8 channels are
// picked; at most 7 fit, so 4 is the right power of two).
TEST(DefaultSchedule, ChannelGroupsFitSharedMemory) {
  const Workload wl = workload("{n: 1, c: 64, h: 8, w: 8, filter: 5, dilation: 8, padding: same}");
  const Schedule s = default_schedule(wl);
  EXPECT_EQ(s.threads_y * s.threads_x, 32);
  EXPECT_EQ(s.channels_per_block, 4);
  KernelPlan p;
  ASSERT_NO_THROW(p = plan_kernel(wl));
  EXPECT_LE(p.smem_bytes, 48 * 1024);
}

// ---------------------------------------------------------------------------
// Schedule keys in the spec replace the defaults.

TEST(ScheduleOverride, ThreadsAloneCarryTheTile) {
  // Default rows per thread for a 96-row output: 4.
  const KernelPlan a = plan("{n: 1, c: 256, h: 96, w: 96, filter: 3, padding: same, schedule: {threads: [4, 16]}}");
  EXPECT_EQ(sched(a.schedule), "tile 16x16 threads 4x16 vthreads 1x1 input shared filter registers ch 1");
  EXPECT_EQ(a.threads, 64);
  EXPECT_EQ(a.rows_per_thread, 4);
  EXPECT_EQ(a.tiles_y, 6);

  const KernelPlan b = plan(
      "{n: 1, c: 256, h: 96, w: 96, filter: 3, padding: same, schedule: {threads: [4, 16], vthreads: [2, 1]}}");
  EXPECT_EQ(sched(b.schedule), "tile 32x16 threads 4x16 vthreads 2x1 input shared filter registers ch 1");
  EXPECT_EQ(b.rows_per_thread, 4);
  EXPECT_EQ(b.cols_per_thread, 1);
}

TEST(ScheduleOverride, BlockTileSharedInputSharedFilterChannels) {
  const std::string base = "{n: 1, c: 256, h: 96, w: 96, filter: 3, padding: same, schedule: ";
  const KernelPlan tile = plan(base + "{block_tile: [16, 64]}}");
  EXPECT_EQ(sched(tile.schedule), "tile 16x64 threads 8x32 vthreads 1x1 input shared filter registers ch 1");
  EXPECT_EQ(tile.rows_per_thread, 2);
  EXPECT_EQ(tile.cols_per_thread, 2);
  EXPECT_EQ(tile.tiles_y, 6);
  EXPECT_EQ(tile.tiles_x, 2);
  EXPECT_EQ(tile.in_tile_h, 18);
  EXPECT_EQ(tile.in_tile_w, 66);

  const KernelPlan global = plan(base + "{shared_input: false}}");
  EXPECT_FALSE(global.schedule.shared_input);
  EXPECT_EQ(global.smem_bytes, 0);
  EXPECT_EQ(global.in_tile_h, 34);  // still the input a block reads

  const KernelPlan filter = plan(base + "{shared_filter: true}}");
  EXPECT_TRUE(filter.schedule.shared_filter);
  EXPECT_EQ(filter.smem_bytes, 34 * 34 * 4 + 9 * 4);

  const KernelPlan channels = plan(base + "{channels_per_block: 2}}");
  EXPECT_EQ(channels.schedule.channels_per_block, 2);
  EXPECT_EQ(channels.block_threads, 512);
  EXPECT_EQ(channels.smem_bytes, 2 * 34 * 34 * 4);

  const KernelPlan one = plan("{n: 1, c: 960, h: 7, w: 7, filter: 3, padding: same, schedule: {channels_per_block: 1}}");
  EXPECT_EQ(one.block_threads, 64);
  EXPECT_EQ(one.smem_bytes, 400);

  // Stride 2 may still stage its input when the spec asks.
  const KernelPlan staged =
      plan("{n: 1, c: 8, h: 64, w: 64, filter: 3, stride: 2, padding: same, schedule: {shared_input: true}}");
  EXPECT_TRUE(staged.schedule.shared_input);
  EXPECT_EQ(staged.smem_bytes, (31 * 2 + 3) * (31 * 2 + 3) * 4);
}

TEST(ScheduleOverride, ErrorsPointAtTheKeyAtFault) {
  const Workload wl = workload(
      "{n: 1, c: 8, h: 64, w: 64, filter: 3, padding: same, schedule: {block_tile: [32, 32], threads: [8, 12]}}");
  const std::vector<Diagnostic> errors = spec_errors([&] { plan_kernel(wl); });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].where.str(), wl.schedule.tile_where.str());
  EXPECT_EQ(errors[0].message,
            "block_tile 32x32 does not split evenly over threads x vthreads = 8x12; each tile side must be a multiple "
            "of its split");
}

// Regression: the default channels_per_block must follow the threads and
// tile a spec sets. On a 7x7 plane the default rule picks 8x8 threads and 4
// channels per block; it once kept them when the spec set other threads or a
// smaller tile (blaming a knob the spec never set for a 4096-thread block).
TEST(ScheduleOverride, DefaultChannelsPerBlockFollowsRequestedThreadsAndTile) {
  const std::string base = "{n: 1, c: 64, h: 7, w: 7, filter: 3, padding: same, schedule: ";
  EXPECT_EQ(default_schedule(workload(base + "{}}")).channels_per_block, 4);  // the rule's own choice
  KernelPlan p;
  EXPECT_NO_THROW(p = plan(base + "{threads: [32, 32]}}"));
  EXPECT_EQ(p.block_threads, 1024);
  EXPECT_EQ(plan(base + "{threads: [16, 16]}}").block_threads, 256);
  EXPECT_EQ(plan(base + "{block_tile: [4, 4], threads: [4, 4]}}").schedule.channels_per_block, 1);
}

// ---------------------------------------------------------------------------
// Libraries.

TEST(PlanLibrary, DuplicatesWithTheSameScheduleMerge) {
  const Spec spec = parse(R"(library: lib
workloads:
  - {n: 1, c: 8, h: 16, w: 16, filter: 3, padding: same}
  - {n: 1, c: 8, h: 16, w: 16, filter: 3, padding: 1}
  - {n: 1, c: 8, h: 16, w: 16, filter: [3, 3], padding: [1, 1, 1, 1], stride: 1, schedule: {threads: [8, 16]}}
  - {n: 1, c: 8, h: 16, w: 16, filter: 5, padding: same}
)");
  const LibraryPlan lib = plan_library({spec}, "");
  ASSERT_EQ(lib.kernels.size(), 2u);
  EXPECT_EQ(lib.kernels[0].name, "dw_f32_nchw_n1_c8_h16_w16_k3x3_s1_p1_m1");
  EXPECT_EQ(lib.kernels[0].workload.where.line, 3);  // the first one is kept
  EXPECT_EQ(lib.kernels[1].name, "dw_f32_nchw_n1_c8_h16_w16_k5x5_s1_p2_m1");
}

TEST(PlanLibrary, DuplicateWithAnotherScheduleIsAnError) {
  const Spec spec = parse(R"(library: lib
workloads:
  - {n: 1, c: 8, h: 64, w: 64, filter: 3, padding: same}
  - {n: 1, c: 8, h: 64, w: 64, filter: 3, padding: same, schedule: {threads: [4, 32]}}
)");
  const std::vector<Diagnostic> errors = spec_errors([&] { plan_library({spec}, ""); });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].str(),
            "test.yaml:4:5: error: this workload is the problem of test.yaml:3:5 "
            "(dw_f32_nchw_n1_c8_h64_w64_k3x3_s1_p1_m1) with a different schedule; a library holds one kernel per "
            "problem");
}

TEST(PlanLibrary, KernelsAreSortedByName) {
  const Spec spec = parse(R"(library: lib
workloads:
  - {n: 1, c: 96, h: 16, w: 16, filter: 3, padding: same}
  - {n: 1, c: 16, h: 16, w: 16, filter: 3, padding: same}
  - {n: runtime, c: 8, h: 16, w: 16, filter: 3, padding: same}
  - {n: 1, c: 8, h: 16, w: 16, filter: 3, padding: same}
)");
  const LibraryPlan lib = plan_library({spec}, "");
  std::vector<std::string> names;
  for (const KernelPlan& p : lib.kernels) names.push_back(p.name);
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_EQ(names.size(), 4u);
  EXPECT_EQ(lib.spec_files, std::vector<std::string>{"test.yaml"});
}

TEST(PlanLibrary, LibraryNames) {
  const std::string body = "workloads:\n  - {n: 1, c: 8, h: 16, w: 16, filter: 3, padding: same}\n";
  const Spec a = parse("library: alpha\n" + body, "a.yaml");
  const Spec b = parse("library: beta\n" + body, "b.yaml");
  const Spec unnamed = parse(body, "u.yaml");

  EXPECT_EQ(plan_library({a, unnamed}, "").name, "alpha");
  EXPECT_EQ(plan_library({unnamed}, "gamma").name, "gamma");
  EXPECT_EQ(plan_library({a, b}, "gamma").name, "gamma");  // --name settles a disagreement

  std::vector<Diagnostic> errors = spec_errors([&] { plan_library({a, b}, ""); });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].str(),
            "b.yaml:1:10: error: library 'beta' differs from 'alpha' named by another spec; give one name with --name");

  errors = spec_errors([&] { plan_library({unnamed}, ""); });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].str(), "u.yaml:1:1: error: no library name: add 'library: <name>' to the spec or pass --name");

  errors = spec_errors([&] { plan_library({a}, "9lives"); });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].str(),
            "--name: error: library name '9lives' must be a C identifier (letters, digits, '_'; not starting with a "
            "digit)");
}

TEST(PlanLibrary, EveryPlanErrorOfEverySpecIsReported) {
  const Spec a = parse(
      "library: lib\nworkloads:\n  - {n: 1, c: 8, h: 64, w: 64, filter: 3, padding: same, schedule: {threads: [64, 32]}}\n",
      "a.yaml");
  const Spec b = parse(
      "library: lib\nworkloads:\n  - {n: 1, c: 8, h: 64, w: 64, filter: 3, padding: same, schedule: {block_tile: [64, 64], "
      "threads: [8, 8]}}\n",
      "b.yaml");
  const std::vector<Diagnostic> errors = spec_errors([&] { plan_library({a, b}, ""); });
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].where.file, "a.yaml");
  EXPECT_EQ(errors[1].where.file, "b.yaml");
}

TEST(PlanLibrary, SkipModeKeepsTheValidKernels) {
  const std::string text = R"(library: lib
workloads:
  - {n: 1, c: 8, h: 64, w: 64, filter: 3, padding: same, schedule: {threads: [64, 32]}}
  - {n: 1, c: 8, h: 64, w: 64, filter: 13, padding: same}
  - {n: 1, c: 8, h: 32, w: 32, filter: 3, padding: same}
)";
  const Spec spec = parse_spec_text(text, "s.yaml", OnInvalidWorkload::kSkip);
  const LibraryPlan lib = plan_library({spec}, "", {}, OnInvalidWorkload::kSkip);
  ASSERT_EQ(lib.kernels.size(), 1u);
  EXPECT_EQ(lib.kernels[0].workload.h, 32);
  ASSERT_EQ(lib.skipped.size(), 2u);
  // The spec's own skips come first, then the planner's.
  EXPECT_EQ(lib.skipped[0].where.line, 4);
  EXPECT_EQ(lib.skipped[1].where.line, 3);
  EXPECT_NE(lib.skipped[1].message.find("CUDA allows at most 1024"), std::string::npos);
}

}  // namespace
}  // namespace convgen_test
