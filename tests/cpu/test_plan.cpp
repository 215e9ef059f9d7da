// Stage 2: workload + schedule request -> KernelPlan. The numbers below are
// worked out by hand from the formulas in plan.hpp, not copied from a run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "convgen/gen/arch.hpp"
#include "convgen/gen/plan.hpp"
#include "test_util.h"

namespace convgen_test {
namespace {

// A schedule in one comparable line: the knobs of its algorithm.
std::string sched(const Schedule& s) {
  if (s.algorithm_name() == "rows") {
    return "rows " + std::to_string(s.at("rows_per_thread")) + " vector " + std::to_string(s.at("vector_width")) + " threads " +
           std::to_string(s.at("threads_per_block"));
  }
  if (s.algorithm_name() != "tiles") return s.summary();
  return "tile " + std::to_string(s.at("tile_h")) + "x" + std::to_string(s.at("tile_w")) + " threads " +
         std::to_string(s.at("threads_y")) + "x" + std::to_string(s.at("threads_x")) + " vthreads " +
         std::to_string(s.at("vthreads_y")) + "x" + std::to_string(s.at("vthreads_x")) + " input " +
         (s.at("shared_input") ? "shared" : "global") + " filter " + (s.at("shared_filter") ? "shared" : "registers") + " ch " +
         std::to_string(s.at("channels_per_block"));
}

// The one error planning a spec's workload for `options` gets: its message,
// or "(not one error)".
std::string only_error(const std::string& text, const PlanOptions& options) {
  const std::vector<Diagnostic> errors = spec_errors([&] { plan_kernel(workload(text), options); });
  return errors.size() == 1 ? errors[0].message : std::string("(not one error)");
}

// A workload built directly (no YAML), with `same` padding.
Workload same_workload(int n, int c, int h, int w, int k, int stride, int dilation, int multiplier) {
  Workload wl;
  wl.op = find_operator("depthwise_conv2d");
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

TEST(Plan, SeedWorkloadWithTheTilesDefaultSchedule) {
  const KernelPlan p = plan("{n: 1, c: 256, h: 96, w: 96, filter: 3, padding: same, schedule: {algorithm: tiles}}");
  EXPECT_EQ(sched(p.schedule), "tile 32x32 threads 8x32 vthreads 1x1 input shared filter registers ch 1");
  EXPECT_EQ(p.out_h, 96);
  EXPECT_EQ(p.out_w, 96);
  EXPECT_EQ(p.out_channels, 256);
  EXPECT_EQ(p.number("rows_per_thread"), 4);
  EXPECT_EQ(p.number("cols_per_thread"), 1);
  EXPECT_EQ(p.threads, 256);
  EXPECT_EQ(p.block_threads, 256);
  EXPECT_EQ(p.number("tiles_y"), 3);
  EXPECT_EQ(p.number("tiles_x"), 3);
  EXPECT_EQ(p.number("in_tile_h"), 34);
  EXPECT_EQ(p.number("in_tile_w"), 34);
  EXPECT_EQ(p.number("loads_per_thread"), 5);  // ceil(34*34 / 256)
  EXPECT_EQ(p.smem_bytes, 34 * 34 * 4);
  EXPECT_EQ(p.alignment, 4);  // scalar loads and stores
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
  // 9 depthwise kernels and the dense chapter's 5.
  ASSERT_EQ(lib.kernels.size(), 14u);
  auto find = [&](const std::string& name) -> const KernelPlan& {
    for (const KernelPlan& p : lib.kernels) {
      if (p.name == name) return p;
    }
    throw std::runtime_error("no kernel " + name);
  };

  const KernelPlan& k3 = find("dw_f32_nchw_n1_c256_h96_w96_k3x3_s1_p1_m1");
  EXPECT_EQ(sched(k3.schedule), "tile 32x32 threads 8x16 vthreads 1x2 input shared filter registers ch 1");
  EXPECT_EQ(k3.number("rows_per_thread"), 4);
  EXPECT_EQ(k3.number("cols_per_thread"), 1);
  EXPECT_EQ(k3.threads, 128);
  EXPECT_EQ(k3.number("tiles_y") * k3.number("tiles_x"), 9);
  EXPECT_EQ(k3.number("in_tile_h"), 34);
  EXPECT_EQ(k3.number("in_tile_w"), 34);
  EXPECT_EQ(k3.number("loads_per_thread"), 10);  // ceil(1156 / 128)
  EXPECT_EQ(k3.smem_bytes, 4624);
  EXPECT_EQ(k3.bytes_read, 4LL * (256 * 96 * 96 + 256 * 9));
  EXPECT_EQ(k3.bytes_written, 4LL * 256 * 96 * 96);
  EXPECT_NEAR(k3.floor_us, (9446400.0 + 9437184.0) / 3e6, 1e-12);

  const KernelPlan& k5m2 = find("dw_f32_nchw_n1_c256_h96_w96_k5x5_s1_p2_m2");
  EXPECT_EQ(k5m2.out_channels, 512);
  EXPECT_EQ(k5m2.number("in_tile_h"), 36);
  EXPECT_EQ(k5m2.smem_bytes, 36 * 36 * 4);
  EXPECT_EQ(k5m2.bytes_read, 4LL * (256 * 96 * 96 + 512 * 25));
  EXPECT_EQ(k5m2.bytes_written, 4LL * 512 * 96 * 96);

  // scale_shift reads two floats per output channel more.
  const KernelPlan& ss = find("dw_f32_nchw_n1_c256_h96_w96_k3x3_s1_p1_m1_ssrelu");
  EXPECT_EQ(ss.bytes_read, k3.bytes_read + 4LL * 2 * 256);

  // The T4 study: 3x4x16x32, 7x7, default schedule: the window algorithm,
  // 7 rows x 2 columns a thread, 16 rows in 3 thread rows (21, the last
  // ragged), the 4 planes of an image in one block.
  const KernelPlan& t4 = find("dw_f32_nchw_n3_c4_h16_w32_k7x7_s1_p3_m1");
  EXPECT_EQ(sched(t4.schedule),
            "window: rows_per_thread 7, columns_per_thread 2, band_rows 21, bands_per_block 4, not pipelined, filter in "
            "registers");
  EXPECT_EQ(t4.number("staged_rows"), 27);
  EXPECT_TRUE(t4.flag("ragged_rows"));
  EXPECT_EQ(t4.cost_batch, 3);
  EXPECT_EQ(t4.bytes_read, 4LL * (3 * 4 * 16 * 32 + 4 * 49));
  EXPECT_EQ(t4.bytes_written, 4LL * 3 * 4 * 16 * 32);

  // The one workload left to the default rule that the rows algorithm takes:
  // 21 columns (neither 4 nor 2 divides them) in 21 scalar lanes of a group of
  // 32; 21 rows in 11 bands of 2 (4 rows a lane would make 1,536 warps, under
  // 16 per SM), the last one ragged.
  const KernelPlan& k21 = find("dw_f32_nchw_n1_c256_h21_w21_k3x3_s1_p1_m1");
  EXPECT_EQ(sched(k21.schedule), "rows 2 vector 1 threads 128");
  EXPECT_EQ(k21.number("group_lanes"), 32);
  EXPECT_EQ(k21.number("bands"), 11);
  EXPECT_EQ(k21.alignment, 4);
}

// The shipped MobileNetV2 spec leaves every schedule to the default rule:
// its float16 NHWC layers run the staged algorithm (every channel count is
// a multiple of 8: whole 16-byte copies); every float32 NCHW
// layer runs the rows algorithm but the 7x7 one at batch 64 (61,440
// planes of 49 values), which runs the planes algorithm; 4 rows a lane at
// batch 64, 2 at batch 1 (where 4 would leave under 16 warps per SM).
TEST(Plan, ShippedMobileNetV2SpecRunsTheRowsAlgorithm) {
  const LibraryPlan lib =
      plan_library({parse_spec_file(std::string(CONVGEN_SOURCE_DIR) + "/specs/mobilenet_v2.yaml")}, "");
  // 20 depthwise kernels in float32 NCHW and 20 in float16 NHWC, and at each
  // batch 20 dense ones (the stem, 3 input channels, and the 19 1x1 layers).
  ASSERT_EQ(lib.kernels.size(), 80u);
  for (const KernelPlan& p : lib.kernels) {
    SCOPED_TRACE(p.name);
    if (p.workload.op->name == "conv2d") {
      EXPECT_EQ(p.schedule.algorithm_name(), p.workload.kh == 1 ? "gemm" : "stem");
      continue;
    }
    if (p.workload.layout == Layout::kNHWC) {
      EXPECT_EQ(p.workload.dtype, DataType::kFloat16);
      EXPECT_EQ(p.schedule.algorithm_name(), "staged");
      continue;
    }
    if (p.name == "dw_f32_nchw_n64_c960_h7_w7_k3x3_s1_p1_m1_ssrelu6") {
      EXPECT_EQ(p.schedule.algorithm_name(), "planes");
      continue;
    }
    EXPECT_EQ(p.schedule.algorithm_name(), "rows");
    EXPECT_EQ(p.schedule.at("rows_per_thread"), p.workload.n == 64 ? 4 : 2);
    EXPECT_EQ(p.schedule.at("threads_per_block"), 128);
  }
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
  const KernelPlan big = plan("{n: 32767, c: 4096, h: 64, w: 64, filter: 3, padding: same}");
  EXPECT_EQ(big.bytes_written, 4LL * 32767 * 4096 * 64 * 64);
}

TEST(Plan, DeclaredBatchMustFitOneLaunch) {
  // rows numbers its thread groups (4096 channels x 16 bands of 4 rows per
  // image) with an int: 32767 images fit, 32768 do not.
  EXPECT_EQ(plan("{n: runtime, c: 4096, h: 64, w: 64, filter: 3, padding: same}").max_batch, 32767);
  try {
    plan("{n: 32768, c: 4096, h: 64, w: 64, filter: 3, padding: same}");
    FAIL() << "a batch past one launch was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.diagnostics().at(0).str(),
              "test.yaml:3:5: error: one launch of this kernel (rows: rows_per_thread 4, vector_width 4, "
              "threads_per_block 128) covers at most 32767 image(s): its grid and 32-bit launch indices cannot "
              "number more; declare n of at most 32767");
  }
  // Tiles launch a grid.z slice per image: the runtime's own limit.
  EXPECT_EQ(plan("{n: 65535, c: 4, h: 64, w: 64, filter: 3, padding: same, schedule: {algorithm: tiles}}").max_batch,
            65535);
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
  EXPECT_EQ(p.number("in_tile_h"), 7 * 2 + 4 * 2 + 1);   // (tile-1)*stride + (k-1)*dilation + 1
  EXPECT_EQ(p.number("in_tile_w"), 15 * 2 + 4 * 2 + 1);
  EXPECT_EQ(p.smem_bytes, 23 * 39 * 4);
  EXPECT_EQ(p.number("loads_per_thread"), 8);  // ceil(897 / 128)
  EXPECT_EQ(p.number("tiles_y"), 4);
  EXPECT_EQ(p.number("tiles_x"), 2);
  EXPECT_EQ(p.number("rows_per_thread"), 1);
  EXPECT_EQ(p.number("cols_per_thread"), 1);
}

// ---------------------------------------------------------------------------
// The default schedule rule: the rows algorithm wherever it fits, else the
// tiles algorithm. A workload that pins `algorithm: tiles` gets the tiles
// algorithm's own default, which these tests check on shapes where the rule
// picks rows.

TEST(DefaultSchedule, TilesAcrossShapes) {
  struct Case {
    std::string workload, schedule;
    int smem_bytes, block_threads;
  };
  for (const Case& c : std::vector<Case>{
           // Small plane: the tile covers it; 4 channels per block make 256 threads.
           {"{n: 1, c: 960, h: 7, w: 7, filter: 3, padding: same, schedule: {algorithm: tiles}}",
            "tile 8x8 threads 8x8 vthreads 1x1 input shared filter registers ch 4", 10 * 10 * 4 * 4, 256},
           // Stride 2 reads through the cache.
           {"{n: 1, c: 96, h: 112, w: 112, filter: 3, stride: 2, padding: same, schedule: {algorithm: tiles}}",
            "tile 32x32 threads 8x32 vthreads 1x1 input global filter registers ch 1", 0, 256},
           {"{n: 1, c: 576, h: 14, w: 14, filter: 3, stride: 2, padding: same, schedule: {algorithm: tiles}}",
            "tile 8x8 threads 8x8 vthreads 1x1 input global filter registers ch 4", 0, 256},
           // 7x7, dilation 4: a 56x56 staged tile still fits. (The default
           // rule's own choice: the halo of 12 columns is wider than a lane's.)
           {"{n: 1, c: 16, h: 64, w: 64, filter: 7, dilation: 4, padding: same}",
            "tile 32x32 threads 8x32 vthreads 1x1 input shared filter registers ch 1", 56 * 56 * 4, 256},
           // 11x11, dilation 8: the halo is too big for a 32-row tile; threads_y halves.
           {"{n: 1, c: 16, h: 64, w: 64, filter: 11, dilation: 8, padding: same}",
            "tile 16x32 threads 4x32 vthreads 1x1 input shared filter shared ch 1", 96 * 112 * 4 + 121 * 4, 128},
           // Odd channel count: one channel per block.
           {"{n: 1, c: 3, h: 5, w: 5, filter: 3, padding: same, schedule: {algorithm: tiles}}",
            "tile 8x8 threads 8x8 vthreads 1x1 input shared filter registers ch 1", 400, 64},
           // 1x1 filter: nothing to stage.
           {"{n: 1, c: 64, h: 56, w: 56, filter: 1, padding: valid, schedule: {algorithm: tiles}}",
            "tile 32x32 threads 8x32 vthreads 1x1 input global filter registers ch 1", 0, 256},
           // Tall and narrow.
           {"{n: 1, c: 8, h: 128, w: 4, filter: 3, padding: same, schedule: {algorithm: tiles}}",
            "tile 128x4 threads 32x4 vthreads 1x1 input shared filter registers ch 1", 130 * 6 * 4, 128},
           // 200 filter taps go to shared memory. (The default rule's own
           // choice: 200 taps do not fit a lane's registers.)
           {"{n: 1, c: 16, h: 32, w: 32, filter: 5, multiplier: 8, padding: same, schedule: {algorithm: tiles}}",
            "tile 32x32 threads 8x32 vthreads 1x1 input shared filter shared ch 1", 36 * 36 * 4 + 200 * 4, 256},
           // Stride and dilation together.
           {"{n: 1, c: 32, h: 64, w: 64, filter: 5, stride: 2, dilation: 2, padding: same, schedule: {algorithm: tiles}}",
            "tile 32x32 threads 8x32 vthreads 1x1 input global filter registers ch 1", 0, 256},
           // Rows per thread: 2 for 8 <= out_h < 32.
           {"{n: 1, c: 256, h: 21, w: 21, filter: 3, padding: same, schedule: {algorithm: tiles}}",
            "tile 16x32 threads 8x32 vthreads 1x1 input shared filter registers ch 1", 18 * 34 * 4, 256},
       }) {
    SCOPED_TRACE(c.workload);
    const Workload wl = workload(c.workload);
    if (!wl.schedule.algorithm) {
      EXPECT_EQ(sched(default_schedule(wl)), c.schedule);
    }
    const KernelPlan p = plan_kernel(wl);
    EXPECT_EQ(sched(p.schedule), c.schedule);
    EXPECT_EQ(p.smem_bytes, c.smem_bytes);
    EXPECT_EQ(p.block_threads, c.block_threads);
    EXPECT_EQ(p.alignment, 4);
  }
}

// The layers of MobileNetV2 (batch 64): every one runs the rows algorithm.
// A row of W input columns needs ceil(W / vector_width) lanes, rounded up to
// a power of two for the group; a band reads (rows - 1) * stride + 3 input
// rows; a lane computes vector_width / stride outputs per row, needs the
// padding (1) from its left neighbour and (outputs - 1) * stride + 2 - 1 -
// (vector_width - 1) columns from its right one.
TEST(DefaultSchedule, RowsOnMobileNetV2Layers) {
  struct Case {
    std::string workload;
    int vector_width, group_lanes, bands, in_rows, outputs_per_lane, halo_left, halo_right;
    bool vector_store;
    int alignment;
  };
  for (const Case& c : std::vector<Case>{
           // 112 columns = 28 float4 loads; 4 outputs per lane, stored as one float4.
           {"{n: 64, c: 32, h: 112, w: 112, filter: 3, padding: same}", 4, 32, 28, 6, 4, 1, 1, true, 16},
           // Stride 2: 2 outputs per lane, whose windows end inside the lane's own 4 columns.
           {"{n: 64, c: 96, h: 112, w: 112, filter: 3, stride: 2, padding: same}", 4, 32, 14, 9, 2, 1, 0, true, 16},
           {"{n: 64, c: 144, h: 56, w: 56, filter: 3, padding: same}", 4, 16, 14, 6, 4, 1, 1, true, 16},
           {"{n: 64, c: 144, h: 56, w: 56, filter: 3, stride: 2, padding: same}", 4, 16, 7, 9, 2, 1, 0, true, 16},
           {"{n: 64, c: 192, h: 28, w: 28, filter: 3, padding: same}", 4, 8, 7, 6, 4, 1, 1, true, 16},
           // 14 output rows: the last of 4 bands has 2.
           {"{n: 64, c: 192, h: 28, w: 28, filter: 3, stride: 2, padding: same}", 4, 8, 4, 9, 2, 1, 0, true, 16},
           // 14 columns: 4 does not divide them, 2 does.
           {"{n: 64, c: 384, h: 14, w: 14, filter: 3, padding: same}", 2, 8, 4, 6, 2, 1, 1, true, 8},
           {"{n: 64, c: 576, h: 14, w: 14, filter: 3, padding: same}", 2, 8, 4, 6, 2, 1, 1, true, 8},
           // Stride 2 with float2 loads: one output per lane, stored alone.
           {"{n: 64, c: 576, h: 14, w: 14, filter: 3, stride: 2, padding: same}", 2, 8, 2, 9, 1, 1, 0, false, 8},
           // 7 columns: scalar loads, 7 lanes in a group of 8 (at batch 64, planes).
           {"{n: 8, c: 960, h: 7, w: 7, filter: 3, padding: same}", 1, 8, 2, 6, 1, 1, 1, false, 4},
       }) {
    SCOPED_TRACE(c.workload);
    const Workload wl = workload(c.workload);
    const KernelPlan p = plan_kernel(wl);
    EXPECT_EQ(sched(default_schedule(wl)), sched(p.schedule));
    EXPECT_EQ(sched(p.schedule), "rows 4 vector " + std::to_string(c.vector_width) + " threads 128");
    EXPECT_EQ(p.number("group_lanes"), c.group_lanes);
    EXPECT_EQ(p.number("bands"), c.bands);
    EXPECT_EQ(p.number("in_rows"), c.in_rows);
    EXPECT_EQ(p.number("outputs_per_lane"), c.outputs_per_lane);
    EXPECT_EQ(p.number("halo_left"), c.halo_left);
    EXPECT_EQ(p.number("halo_right"), c.halo_right);
    EXPECT_EQ(p.flag("vector_store"), c.vector_store);
    EXPECT_EQ(p.alignment, c.alignment);
    EXPECT_EQ(p.number("min_blocks"), 8);  // 8 blocks of 128 threads: 64 registers per thread
    EXPECT_EQ(p.threads, 128);
    EXPECT_EQ(p.block_threads, 128);
    EXPECT_EQ(p.smem_bytes, 0);
  }
}

// Many small planes get the planes algorithm: a lane per plane.
TEST(DefaultSchedule, PlanesForManySmallPlanes) {
  const KernelPlan p = plan("{n: 64, c: 960, h: 7, w: 7, filter: 3, padding: same, epilogue: scale_shift}");
  EXPECT_EQ(p.schedule.algorithm_name(), "planes");
  EXPECT_EQ(p.schedule.summary(), "planes: warps_per_block 2");
  EXPECT_EQ(p.schedule.at("warps_per_block"), 2);
  EXPECT_EQ(p.number("in_stride"), 49);  // odd already: no padding, 16-byte copies
  EXPECT_EQ(p.number("out_stride"), 49);
  EXPECT_TRUE(p.flag("vector_copy_in"));
  EXPECT_TRUE(p.flag("vector_copy_out"));
  EXPECT_EQ(p.smem_bytes, 2 * 32 * 4 * (49 + 49));
  EXPECT_EQ(p.alignment, 16);
  EXPECT_EQ(p.threads, 64);
  EXPECT_EQ(p.block_threads, 64);

  // Even planes are padded to an odd stride and copied a float at a time.
  const KernelPlan even = plan("{n: 64, c: 384, h: 8, w: 8, filter: 3, stride: 2, padding: same}");
  EXPECT_EQ(even.schedule.algorithm_name(), "planes");
  EXPECT_EQ(even.number("in_stride"), 65);
  EXPECT_EQ(even.number("out_stride"), 17);
  EXPECT_FALSE(even.flag("vector_copy_in"));
  EXPECT_FALSE(even.flag("vector_copy_out"));
  EXPECT_EQ(even.alignment, 4);

  // Too few planes to fill the GPU (32 x 4 warps x 132 SMs = 16896), or planes
  // over 64 values: rows.
  EXPECT_EQ(plan("{n: 1, c: 960, h: 7, w: 7, filter: 3, padding: same}").schedule.algorithm_name(), "rows");
  EXPECT_EQ(plan("{n: runtime, c: 960, h: 7, w: 7, filter: 3, padding: same}").schedule.algorithm_name(), "rows");
  EXPECT_EQ(plan("{n: 33, c: 512, h: 7, w: 7, filter: 3, padding: same}").schedule.algorithm_name(), "planes");
  EXPECT_EQ(plan("{n: 32, c: 512, h: 7, w: 7, filter: 3, padding: same}").schedule.algorithm_name(), "rows");
  EXPECT_EQ(plan("{n: 64, c: 960, h: 9, w: 9, filter: 3, padding: same}").schedule.algorithm_name(), "rows");
}

TEST(ScheduleOverride, PlanesKnobs) {
  const std::string base = "{n: 64, c: 960, h: 7, w: 7, filter: 3, padding: same";
  const KernelPlan three = plan(base + ", schedule: {warps_per_block: 3}}");
  EXPECT_EQ(three.schedule.algorithm_name(), "planes");
  EXPECT_EQ(three.smem_bytes, 3 * 12544);
  EXPECT_EQ(three.threads, 96);

  // Four warps stage more than 48 KiB: at warps_per_block.
  const Workload four = workload(base + ", schedule: {warps_per_block: 4}}");
  std::vector<Diagnostic> errors = spec_errors([&] { plan_kernel(four); });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].where.str(), four.schedule.at("warps_per_block").str());
  EXPECT_EQ(errors[0].message,
            "the planes algorithm cannot run this workload: 4 warp(s) of 32 planes (7x7 in, 1 x 7x7 out) stage "
            "50176 bytes of shared memory; at most 49152 fit; use algorithm: rows or tiles");

  // A large plane: at the schedule, whatever the warps.
  const Workload large = workload("{n: 1, c: 8, h: 56, w: 56, filter: 3, padding: same, schedule: {algorithm: planes}}");
  errors = spec_errors([&] { plan_kernel(large); });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].where.str(), large.schedule.where.str());
  EXPECT_EQ(errors[0].message,
            "the planes algorithm cannot run this workload: 1 warp(s) of 32 planes (56x56 in, 1 x 56x56 out) stage "
            "803072 bytes of shared memory; at most 49152 fit; use algorithm: rows or tiles");

  // A lane's registers: an input row, taps, epilogue parameters and an output row.
  const Workload wide =
      workload("{n: 1, c: 8, h: 1, w: 40, filter: [1, 5], multiplier: 2, padding: same, schedule: {algorithm: planes}}");
  errors = spec_errors([&] { plan_kernel(wide); });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].message,
            "the planes algorithm cannot run this workload: each lane would keep 130 values in registers (an input row "
            "of 40, 2 x (5 taps, 0 epilogue parameters and an output row of 40)); at most 54 fit; use algorithm: rows "
            "or tiles");

  // A knob of another algorithm beside a planes knob: without the algorithm
  // key, tiles knobs win over rows knobs, and rows knobs over planes knobs.
  const Workload mixed = workload(base + ", schedule: {warps_per_block: 2, vector_width: 4}}");
  errors = spec_errors([&] { plan_kernel(mixed); });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].message,
            "'warps_per_block' is a knob of algorithm 'planes'; this workload uses algorithm 'rows', whose knobs are "
            "rows_per_thread, vector_width, threads_per_block");
  const Workload named = workload(base + ", schedule: {algorithm: planes, vector_width: 4}}");
  errors = spec_errors([&] { plan_kernel(named); });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].message,
            "'vector_width' is a knob of algorithm 'rows'; this workload uses algorithm 'planes', whose knobs are "
            "warps_per_block");
}

// The cache knobs apply to every algorithm; their default is normal.
TEST(ScheduleOverride, CacheKnobs) {
  for (const std::string& wl : {std::string("{n: 64, c: 32, h: 112, w: 112, filter: 3, padding: same"),
                                std::string("{n: 1, c: 8, h: 21, w: 21, filter: 5, multiplier: 8, padding: same"),
                                std::string("{n: 64, c: 960, h: 7, w: 7, filter: 3, padding: same")}) {
    SCOPED_TRACE(wl);
    const KernelPlan plain = plan(wl + "}");
    EXPECT_EQ(plain.schedule.at("input_cache"), 0);
    EXPECT_EQ(plain.schedule.at("output_cache"), 0);
    EXPECT_EQ(plain.schedule.summary().find("cache"), std::string::npos);
    const KernelPlan hinted = plan(wl + ", schedule: {input_cache: evict_first, output_cache: evict_first}}");
    EXPECT_EQ(hinted.schedule.algorithm_name(), plain.schedule.algorithm_name());
    EXPECT_EQ(hinted.schedule.at("input_cache"), 1);
    EXPECT_EQ(hinted.schedule.at("output_cache"), 1);
    EXPECT_EQ(hinted.schedule.summary(),
              plain.schedule.summary() + ", input_cache evict_first, output_cache evict_first");
    EXPECT_NE(hinted.schedule, plain.schedule);
  }
}

// One rows plan, every derived number.
TEST(DefaultSchedule, RowsPlanOfTheFirstMobileNetV2Layer) {
  const KernelPlan p =
      plan("{n: 64, c: 32, h: 112, w: 112, filter: 3, padding: same, epilogue: scale_shift, activation: relu6}");
  EXPECT_EQ(p.schedule.algorithm_name(), "rows");
  EXPECT_EQ(p.schedule.at("rows_per_thread"), 4);
  EXPECT_EQ(p.schedule.at("vector_width"), 4);
  EXPECT_EQ(p.schedule.at("threads_per_block"), 128);
  EXPECT_EQ(p.schedule.summary(), "rows: rows_per_thread 4, vector_width 4, threads_per_block 128");
  EXPECT_EQ(p.out_h, 112);
  EXPECT_EQ(p.out_w, 112);
  EXPECT_EQ(p.number("group_lanes"), 32);  // 28 lanes of 4 columns
  EXPECT_EQ(p.number("bands"), 28);        // 112 rows / 4
  EXPECT_EQ(p.number("in_rows"), 6);       // 4 rows + the filter's 2
  EXPECT_EQ(p.number("outputs_per_lane"), 4);
  EXPECT_EQ(p.number("halo_left"), 1);
  EXPECT_EQ(p.number("halo_right"), 1);
  EXPECT_TRUE(p.flag("vector_store"));
  EXPECT_EQ(p.number("min_blocks"), 8);
  EXPECT_EQ(p.alignment, 16);
  EXPECT_EQ(p.threads, 128);
  EXPECT_EQ(p.block_threads, 128);
  EXPECT_EQ(p.smem_bytes, 0);
  // The plan holds no numbers of the tiles algorithm.
  EXPECT_EQ(p.values.count("tiles_y") + p.values.count("in_tile_h"), 0u);
  // The cost does not depend on the algorithm.
  EXPECT_EQ(p.cost_batch, 64);
  EXPECT_EQ(p.bytes_read, 4LL * (64 * 32 * 112 * 112 + 32 * 9 + 2 * 32));
  EXPECT_EQ(p.bytes_written, 4LL * 64 * 32 * 112 * 112);
}

// Fewer rows per lane, down to 1, then a narrower vector, until a lane's
// values fit: input rows x vector_width + halo + multiplier x (taps +
// epilogue parameters + outputs per lane) <= 54.
TEST(DefaultSchedule, RowsPerThreadShrinkUntilTheLaneFitsItsRegisters) {
  // 5x5: 4 rows read 8 input rows, 8 x 4 + 4 + 25 + 4 = 65 values; 3 rows
  // 61, 2 rows 57, 1 row 5 x 4 + 4 + 29 = 53.
  // (Batch 64: enough warps for 4 rows a lane to be the starting point.)
  // (The default rule gives this 5x5 layer the window algorithm: asked for rows.)
  const KernelPlan wide = plan("{n: 64, c: 32, h: 64, w: 64, filter: 5, padding: same, schedule: {algorithm: rows}}");
  EXPECT_EQ(sched(wide.schedule), "rows 1 vector 4 threads 128");
  EXPECT_EQ(wide.number("in_rows"), 5);
  EXPECT_EQ(wide.number("bands"), 64);
  EXPECT_EQ(wide.number("outputs_per_lane"), 4);
  EXPECT_EQ(wide.number("halo_left"), 2);
  EXPECT_EQ(wide.number("halo_right"), 2);
  EXPECT_EQ(wide.number("group_lanes"), 16);

  // Multiplier 2 with scale and shift: 4 rows make 6 x 4 + 2 + 2 x (9 + 2 +
  // 4) = 56 values; 3 rows make 52.
  const KernelPlan m2 = plan(
      "{n: 64, c: 32, h: 56, w: 56, filter: 3, multiplier: 2, padding: same, epilogue: scale_shift}");
  EXPECT_EQ(sched(m2.schedule), "rows 3 vector 4 threads 128");
  EXPECT_EQ(m2.number("in_rows"), 5);

  // Multiplier 4: even 1 row of vector_width 4 makes 3 x 4 + 2 + 4 x (9 +
  // 4) = 66; at vector_width 2 (2 outputs per lane), 2 rows make 4 x 2 + 2 +
  // 4 x (9 + 2) = 54.
  const KernelPlan m4 = plan("{n: 64, c: 32, h: 56, w: 56, filter: 3, multiplier: 4, padding: same}");
  EXPECT_EQ(sched(m4.schedule), "rows 2 vector 2 threads 128");
  EXPECT_EQ(m4.number("in_rows"), 4);

  // An output shorter than 4 rows: one band of all of them.
  const KernelPlan short_plane = plan("{n: 1, c: 32, h: 2, w: 16, filter: 3, padding: same}");
  EXPECT_EQ(sched(short_plane.schedule), "rows 2 vector 4 threads 128");
  EXPECT_EQ(short_plane.number("bands"), 1);
  EXPECT_EQ(short_plane.number("in_rows"), 4);
}

// 4 rows a lane by default; 2 where 4 would leave fewer than 16 warps per SM
// of an H100 (2,112 warps) at the declared batch.
TEST(DefaultSchedule, TwoRowsPerLaneForSmallGrids) {
  // 112x112: 28 bands of 4 rows, 32 lanes each: one warp per band.
  // 2,112 / 28 = 75.4 planes.
  EXPECT_EQ(plan("{n: 1, c: 76, h: 112, w: 112, filter: 3, padding: same}").schedule.at("rows_per_thread"), 4);
  EXPECT_EQ(plan("{n: 1, c: 75, h: 112, w: 112, filter: 3, padding: same}").schedule.at("rows_per_thread"), 2);
  EXPECT_EQ(plan("{n: 3, c: 25, h: 112, w: 112, filter: 3, padding: same}").schedule.at("rows_per_thread"), 2);
  EXPECT_EQ(plan("{n: 3, c: 26, h: 112, w: 112, filter: 3, padding: same}").schedule.at("rows_per_thread"), 4);
  // A runtime batch counts as 1.
  EXPECT_EQ(plan("{n: runtime, c: 32, h: 112, w: 112, filter: 3, padding: same}").schedule.at("rows_per_thread"), 2);
  // A knob the spec sets is kept.
  EXPECT_EQ(plan("{n: 1, c: 32, h: 112, w: 112, filter: 3, padding: same, schedule: {rows_per_thread: 4}}")
                .schedule.at("rows_per_thread"),
            4);
}

// Where the rows algorithm does not fit, the default is the tiles algorithm's.
TEST(DefaultSchedule, TilesWhereRowsDoNotFit) {
  struct Case {
    std::string workload, schedule, why_not_rows;
  };
  for (const Case& c : std::vector<Case>{
           // 130 columns: 4 does not divide them; 65 float2 lanes or 130
           // scalar lanes are more than a warp.
           {"{n: 1, c: 32, h: 64, w: 130, filter: 3, padding: same}",
            "tile 32x32 threads 8x32 vthreads 1x1 input shared filter registers ch 1",
            "vector_width 4 does not divide the input width 130"},
           // 132 columns: 33 float4 lanes.
           {"{n: 1, c: 32, h: 64, w: 132, filter: 3, padding: same}",
            "tile 32x32 threads 8x32 vthreads 1x1 input shared filter registers ch 1",
            "a row needs 33 lanes of vector_width 4"},
           // 7x7, dilation 2: the window reaches 6 columns either side of a lane's own.
           {"{n: 1, c: 32, h: 56, w: 56, filter: 7, dilation: 2, padding: same}",
            "tile 32x32 threads 8x32 vthreads 1x1 input shared filter registers ch 1",
            "the filter window reaches 6 columns past a lane's own 4"},
           // Stride 3: no vector_width is a multiple of it.
           {"{n: 1, c: 32, h: 64, w: 64, filter: 3, stride: 3, padding: valid}",
            "tile 16x32 threads 8x32 vthreads 1x1 input global filter registers ch 1",
            "vector_width 4 is not a multiple of the horizontal stride 3"},
           // 7x7 at multiplier 4: 4 x (49 + 4) values before any input row.
           // (7x7 with multiplier 4: the window algorithm by default.)
           {"{n: 1, c: 32, h: 64, w: 64, filter: 7, multiplier: 4, padding: same}",
            "window: rows_per_thread 6, columns_per_thread 2, band_rows 24, bands_per_block 1, pipelined, filter in "
            "shared memory",
            "each lane would keep 246 values in registers (7 input rows x vector_width 4"},
           // 5x5, stride 2, dilation 2: vector_width 4 would keep 9 x 4 + 7 +
           // 25 + 2 = 70 values; 2 is narrower than the window's reach.
           {"{n: 1, c: 32, h: 64, w: 64, filter: 5, stride: 2, dilation: 2, padding: same}",
            "tile 32x32 threads 8x32 vthreads 1x1 input global filter registers ch 1",
            "each lane would keep 70 values in registers"},
       }) {
    SCOPED_TRACE(c.workload);
    const Workload wl = workload(c.workload);
    EXPECT_EQ(sched(default_schedule(wl)), c.schedule);
    EXPECT_EQ(sched(plan_kernel(wl).schedule), c.schedule);
    // Asked for, the rows algorithm says why it cannot run the workload.
    Workload rows = wl;
    rows.schedule.algorithm = "rows";
    const std::vector<Diagnostic> errors = spec_errors([&] { plan_kernel(rows); });
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].message.rfind(
                  "the rows algorithm cannot run this workload with any vector_width, even at rows_per_thread 1:\n"
                  "  vector_width 4: " + c.why_not_rows, 0),
              0u)
        << errors[0].message;
    EXPECT_NE(errors[0].message.find("\n  use algorithm: tiles"), std::string::npos) << errors[0].message;
  }
}

TEST(DefaultSchedule, SmallerSharedMemoryLimitShrinksTheTile) {
  PlanOptions options;
  options.max_shared_bytes = 2048;
  const KernelPlan p =
      plan("{n: 1, c: 256, h: 96, w: 96, filter: 3, padding: same, schedule: {algorithm: tiles}}", options);
  EXPECT_EQ(sched(p.schedule), "tile 8x32 threads 2x32 vthreads 1x1 input shared filter registers ch 1");
  EXPECT_EQ(p.smem_bytes, 10 * 34 * 4);
}

// The rule's promises, over a spread of shapes.
// The rows algorithm is the default exactly where it can run (asked for
// elsewhere, it is refused), with 128 threads per block, the widest
// vector_width and then the most rows per lane (up to 4, or 2 for grids of
// under 16 warps per SM) that fit: a row
// within one warp, a halo within the neighbouring lanes, a lane's values
// within 64 registers.
// The tiles algorithm's default (algorithm: tiles) fits every shape: at most
// 256 threads per block, a tile that splits evenly over the threads, staged
// data that fits, channel groups that divide the channels, and a plan that
// passes its own checks.
TEST(DefaultSchedule, AlwaysFitsAcrossAGridOfShapes) {
  const PlanOptions options;
  int checked = 0, rows_defaults = 0;
  std::vector<std::string> failures;
  // Whether plan_kernel accepts the workload.
  const auto plans = [&](const Workload& wl) {
    try {
      plan_kernel(wl, options);
      return true;
    } catch (const InputError&) {
      return false;
    }
  };
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

                Workload rows = wl;
                rows.schedule.algorithm = "rows";
                if (s.algorithm_name() == "rows") {
                  ++rows_defaults;
                  try {
                    const KernelPlan p = plan_kernel(wl, options);
                    const int out_h = wl.out_h(), out_w = wl.out_w();
                    const int lane_values =
                        p.number("in_rows") * s.at("vector_width") + multiplier * (k * k + p.number("outputs_per_lane"));
                    if (p.schedule != s) why += " plan changed the default schedule;";
                    if (s.at("threads_per_block") != 128) why += " not 128 threads;";
                    if (s.at("rows_per_thread") < 1 || s.at("rows_per_thread") > std::min(4, out_h)) why += " rows out of range;";
                    if (w % s.at("vector_width") != 0 || s.at("vector_width") % stride != 0) why += " vector_width misfit;";
                    if (p.number("group_lanes") > 32 || (p.number("group_lanes") & (p.number("group_lanes") - 1)) != 0) why += " bad group;";
                    if (p.number("group_lanes") * s.at("vector_width") < w || p.number("group_lanes") * p.number("outputs_per_lane") < out_w)
                      why += " the group does not cover a row;";
                    if (p.number("halo_left") > s.at("vector_width") || p.number("halo_right") > s.at("vector_width")) why += " halo past the next lane;";
                    if (lane_values > 64) why += " over 64 values per lane;";
                    if (p.number("bands") * s.at("rows_per_thread") < out_h || (p.number("bands") - 1) * s.at("rows_per_thread") >= out_h)
                      why += " bands do not cover the output;";
                    if (p.flag("vector_store") && out_w % p.number("outputs_per_lane") != 0) why += " vector store off its alignment;";
                    if (p.alignment < 4 * s.at("vector_width") || p.alignment % 4 != 0) why += " alignment too small;";
                    if (p.smem_bytes != 0) why += " shared memory;";
                  } catch (const InputError& e) {
                    why += " plan_kernel refused it: " + e.diagnostics().front().message;
                  }
                  // Nothing wider, then nothing taller, fits.
                  for (int wider = s.at("vector_width") * 2; wider <= 4; wider *= 2) {
                    Workload v = rows;
                    v.schedule.values["vector_width"] = wider;
                    if (plans(v)) why += " vector_width " + std::to_string(wider) + " fits too;";
                  }
                  // The most rows the rule starts from: 4, or 2 where 4 rows a
                  // lane would make fewer than 2,112 warps (16 per SM of 132).
                  const long long warps_at_4 = static_cast<long long>(wl.n) * c *
                                               ((wl.out_h() + 3) / 4) * plan_kernel(wl, options).number("group_lanes") / 32;
                  const int most_rows = std::min(warps_at_4 < 2112 ? 2 : 4, wl.out_h());
                  if (s.at("rows_per_thread") < most_rows) {
                    Workload taller = rows;
                    taller.schedule.values["vector_width"] = s.at("vector_width");
                    taller.schedule.values["rows_per_thread"] = s.at("rows_per_thread") + 1;
                    if (plans(taller)) why += " one more row fits too;";
                  }
                } else if (plans(rows)) {
                  why += " tiles by default, but the rows algorithm fits;";
                }

                Workload tiles = wl;
                tiles.schedule.algorithm = "tiles";
                try {
                  const KernelPlan p = plan_kernel(tiles, options);
                  const Schedule& t = p.schedule;
                  if (t.algorithm_name() != "tiles") why += " algorithm: tiles ignored;";
                  if (s.algorithm_name() == "tiles" && t != s) why += " plan changed the default schedule;";
                  if (t.at("threads_y") * t.at("threads_x") * t.at("channels_per_block") > 256) why += " more than 256 threads;";
                  if (t.at("tile_h") % (t.at("threads_y") * t.at("vthreads_y")) || t.at("tile_w") % (t.at("threads_x") * t.at("vthreads_x")))
                    why += " tile does not split;";
                  if (c % t.at("channels_per_block")) why += " channels_per_block does not divide c;";
                  if (t.at("shared_input") != (k > 1 && stride == 1)) why += " shared_input against the rule;";
                  if (p.smem_bytes > options.max_shared_bytes) why += " shared memory over the limit;";
                } catch (const InputError& e) {
                  why += " plan_kernel refused algorithm: tiles: " + e.diagnostics().front().message;
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
  // Both algorithms are the default on many shapes of the grid (rows on
  // about 2000: the grid favours large strides and dilations).
  EXPECT_GT(rows_defaults, 1000);
  EXPECT_GT(checked - rows_defaults, 1000);
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
  EXPECT_EQ(s.at("threads_y") * s.at("threads_x"), 32);
  EXPECT_EQ(s.at("channels_per_block"), 4);
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
  EXPECT_EQ(a.number("rows_per_thread"), 4);
  EXPECT_EQ(a.number("tiles_y"), 6);

  const KernelPlan b = plan(
      "{n: 1, c: 256, h: 96, w: 96, filter: 3, padding: same, schedule: {threads: [4, 16], vthreads: [2, 1]}}");
  EXPECT_EQ(sched(b.schedule), "tile 32x16 threads 4x16 vthreads 2x1 input shared filter registers ch 1");
  EXPECT_EQ(b.number("rows_per_thread"), 4);
  EXPECT_EQ(b.number("cols_per_thread"), 1);
}

TEST(ScheduleOverride, BlockTileSharedInputSharedFilterChannels) {
  const std::string base = "{n: 1, c: 256, h: 96, w: 96, filter: 3, padding: same, schedule: ";
  const KernelPlan tile = plan(base + "{block_tile: [16, 64]}}");
  EXPECT_EQ(sched(tile.schedule), "tile 16x64 threads 8x32 vthreads 1x1 input shared filter registers ch 1");
  EXPECT_EQ(tile.number("rows_per_thread"), 2);
  EXPECT_EQ(tile.number("cols_per_thread"), 2);
  EXPECT_EQ(tile.number("tiles_y"), 6);
  EXPECT_EQ(tile.number("tiles_x"), 2);
  EXPECT_EQ(tile.number("in_tile_h"), 18);
  EXPECT_EQ(tile.number("in_tile_w"), 66);

  const KernelPlan global = plan(base + "{shared_input: false}}");
  EXPECT_FALSE(global.schedule.at("shared_input"));
  EXPECT_EQ(global.smem_bytes, 0);
  EXPECT_EQ(global.number("in_tile_h"), 34);  // still the input a block reads

  const KernelPlan filter = plan(base + "{shared_filter: true}}");
  EXPECT_TRUE(filter.schedule.at("shared_filter"));
  EXPECT_EQ(filter.smem_bytes, 34 * 34 * 4 + 9 * 4);

  const KernelPlan channels = plan(base + "{channels_per_block: 2}}");
  EXPECT_EQ(channels.schedule.at("channels_per_block"), 2);
  EXPECT_EQ(channels.block_threads, 512);
  EXPECT_EQ(channels.smem_bytes, 2 * 34 * 34 * 4);

  const KernelPlan one = plan("{n: 1, c: 960, h: 7, w: 7, filter: 3, padding: same, schedule: {channels_per_block: 1}}");
  EXPECT_EQ(one.block_threads, 64);
  EXPECT_EQ(one.smem_bytes, 400);

  // Stride 2 may still stage its input when the spec asks.
  const KernelPlan staged =
      plan("{n: 1, c: 8, h: 64, w: 64, filter: 3, stride: 2, padding: same, schedule: {shared_input: true}}");
  EXPECT_TRUE(staged.schedule.at("shared_input"));
  EXPECT_EQ(staged.smem_bytes, (31 * 2 + 3) * (31 * 2 + 3) * 4);
}

TEST(ScheduleOverride, ErrorsPointAtTheKeyAtFault) {
  const Workload wl = workload(
      "{n: 1, c: 8, h: 64, w: 64, filter: 3, padding: same, schedule: {block_tile: [32, 32], threads: [8, 12]}}");
  const std::vector<Diagnostic> errors = spec_errors([&] { plan_kernel(wl); });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].where.str(), wl.schedule.at("block_tile").str());
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
  EXPECT_EQ(plan(base + "{algorithm: tiles}}").schedule.at("channels_per_block"), 4);  // the tiles rule's own choice
  KernelPlan p;
  EXPECT_NO_THROW(p = plan(base + "{threads: [32, 32]}}"));
  EXPECT_EQ(p.block_threads, 1024);
  EXPECT_EQ(plan(base + "{threads: [16, 16]}}").block_threads, 256);
  EXPECT_EQ(plan(base + "{block_tile: [4, 4], threads: [4, 4]}}").schedule.at("channels_per_block"), 1);
}

// The rows knobs a spec sets replace the default's.
TEST(ScheduleOverride, RowsKnobs) {
  const std::string base = "{n: 1, c: 32, h: 112, w: 112, filter: 3, padding: same, schedule: ";
  // 7 rows per lane: 9 input rows x 4 + 2 halo + 9 taps + 4 accumulators = 51 values.
  const KernelPlan tall = plan(base + "{rows_per_thread: 7}}");
  EXPECT_EQ(sched(tall.schedule), "rows 7 vector 4 threads 128");
  EXPECT_EQ(tall.number("bands"), 16);
  EXPECT_EQ(tall.number("in_rows"), 9);

  // Larger blocks: fewer of them per SM in the launch bounds (64 registers).
  // (Batch 1 and 32 channels are under 16 warps per SM: 2 rows a lane.)
  const KernelPlan block = plan(base + "{threads_per_block: 256}}");
  EXPECT_EQ(sched(block.schedule), "rows 2 vector 4 threads 256");
  EXPECT_EQ(block.threads, 256);
  EXPECT_EQ(block.block_threads, 256);
  EXPECT_EQ(block.number("min_blocks"), 4);
  EXPECT_EQ(plan(base + "{threads_per_block: 1024}}").number("min_blocks"), 1);

  // float2 loads on 56 columns: 28 lanes of 2 outputs each, stored as float2.
  const KernelPlan narrow = plan("{n: 1, c: 32, h: 56, w: 56, filter: 3, padding: same, schedule: {vector_width: 2}}");
  EXPECT_EQ(sched(narrow.schedule), "rows 2 vector 2 threads 128");
  EXPECT_EQ(narrow.number("group_lanes"), 32);
  EXPECT_EQ(narrow.number("outputs_per_lane"), 2);
  EXPECT_EQ(narrow.number("halo_left"), 1);
  EXPECT_EQ(narrow.number("halo_right"), 1);
  EXPECT_TRUE(narrow.flag("vector_store"));
  EXPECT_EQ(narrow.alignment, 8);

  // All three.
  const KernelPlan all = plan(
      "{n: 1, c: 32, h: 28, w: 28, filter: 3, padding: same, "
      "schedule: {rows_per_thread: 2, vector_width: 1, threads_per_block: 64}}");
  EXPECT_EQ(sched(all.schedule), "rows 2 vector 1 threads 64");
  EXPECT_EQ(all.number("group_lanes"), 32);  // 28 lanes
  EXPECT_EQ(all.number("bands"), 14);
  EXPECT_EQ(all.number("in_rows"), 4);
  EXPECT_EQ(all.number("outputs_per_lane"), 1);
  EXPECT_FALSE(all.flag("vector_store"));
  EXPECT_EQ(all.alignment, 4);
  EXPECT_EQ(all.number("min_blocks"), 16);
}

// Rows knobs the spec leaves unset are the widest vector_width, then the most
// rows (up to 4), that fit with the ones it sets.
TEST(ScheduleOverride, UnsetRowsKnobsFitTheSetOnes) {
  // Multiplier 3: 2 halo values and 3 x (9 taps + outputs) besides the input
  // rows. (Batch 64: enough warps for 4 rows a lane to be the starting point.)
  const std::string base = "{n: 64, c: 32, h: 28, w: 28, filter: 3, multiplier: 3, padding: same, schedule: ";
  // float4 fits 1 row (3 x 4 + 2 + 3 x 13 = 53 values), not 2 (57).
  EXPECT_EQ(sched(plan(base + "{}}").schedule), "rows 1 vector 4 threads 128");
  // 4 rows: float4 does not fit (6 x 4 + 41 = 65), float2 does (6 x 2 + 2 + 3 x 11 = 47).
  EXPECT_EQ(sched(plan(base + "{rows_per_thread: 4}}").schedule), "rows 4 vector 2 threads 128");
  // Scalar loads: 4 rows fit (6 + 2 + 3 x 10 = 38).
  EXPECT_EQ(sched(plan(base + "{vector_width: 1}}").schedule), "rows 4 vector 1 threads 128");
  EXPECT_EQ(sched(plan(base + "{threads_per_block: 512}}").schedule), "rows 1 vector 4 threads 512");
}

// `algorithm` picks the algorithm; without it, the knobs a spec sets do;
// without those, the default rule.
TEST(ScheduleOverride, AlgorithmKey) {
  const std::string base = "{n: 64, c: 32, h: 112, w: 112, filter: 3, padding: same";
  EXPECT_EQ(sched(plan(base + "}").schedule), "rows 4 vector 4 threads 128");
  EXPECT_EQ(sched(plan(base + ", schedule: {algorithm: rows}}").schedule), "rows 4 vector 4 threads 128");

  // algorithm: tiles forces the tiles default on a shape whose default is rows.
  const KernelPlan tiles = plan(base + ", schedule: {algorithm: tiles}}");
  EXPECT_EQ(sched(tiles.schedule), "tile 32x32 threads 8x32 vthreads 1x1 input shared filter registers ch 1");
  EXPECT_EQ(tiles.schedule.summary(),
            "tiles: block_tile 32x32, threads 8x32, vthreads 1x1, input in shared memory, filter in registers");
  EXPECT_EQ(tiles.smem_bytes, 34 * 34 * 4);
  EXPECT_EQ(tiles.block_threads, 256);
  EXPECT_EQ(tiles.alignment, 4);
  EXPECT_EQ(tiles.values.count("group_lanes"), 0u);

  // With knobs of their own algorithm.
  EXPECT_EQ(sched(plan(base + ", schedule: {algorithm: tiles, threads: [8, 16]}}").schedule),
            "tile 32x16 threads 8x16 vthreads 1x1 input shared filter registers ch 1");
  EXPECT_EQ(sched(plan(base + ", schedule: {algorithm: rows, rows_per_thread: 2, vector_width: 4, "
                              "threads_per_block: 256}}")
                      .schedule),
            "rows 2 vector 4 threads 256");

  // Any tiles knob means tiles.
  for (const char* knob : {"{block_tile: [32, 32]}", "{threads: [8, 32]}", "{vthreads: [1, 1]}", "{shared_input: true}",
                           "{shared_filter: false}", "{channels_per_block: 1}"}) {
    SCOPED_TRACE(knob);
    EXPECT_EQ(plan(base + ", schedule: " + knob + "}").schedule.algorithm_name(), "tiles");
  }
}

// A workload of every operator in every dtype x layout, as spec text.
std::string storage_workload(const Operator& op, const std::string& dtype, const std::string& layout,
                             const std::string& schedule = "") {
  return "{op: " + op.name + (op.name == "conv2d" ? ", c_out: 32" : "") +
         ", n: 1, c: 32, h: 56, w: 56, filter: 3, padding: same, dtype: " + dtype + ", layout: " + layout +
         (schedule.empty() ? "" : ", schedule: " + schedule) + "}";
}

// The algorithms of `op` that serve a workload, as the plan's messages list them.
std::string serving(const Operator& op, const Workload& wl) {
  std::string names;
  for (const Algorithm* a : op.algorithms) {
    if (a->serves(wl)) names += (names.empty() ? "" : ", ") + a->name;
  }
  return names;
}

// The default rule picks among the algorithms that serve a workload's dtype
// and layout; where none does, the plan refuses it, naming each algorithm
// and what it serves, at the key that asked for the dtype (or the layout).
TEST(PlanStorage, TheDefaultRuleServesEveryDtypeAndLayoutSomeAlgorithmServes) {
  for (const Operator* op : operators()) {
    for (const char* dtype : {"float32", "float16", "bfloat16"}) {
      for (const char* layout : {"NCHW", "NHWC"}) {
        const std::string text = storage_workload(*op, dtype, layout);
        SCOPED_TRACE(text);
        const Workload wl = workload(text);
        if (!serving(*op, wl).empty()) {
          const KernelPlan p = plan_kernel(wl);
          EXPECT_TRUE(p.schedule.algorithm->serves(wl)) << p.schedule.algorithm_name();
          continue;
        }
        const std::vector<Diagnostic> errors = spec_errors([&] { plan_kernel(wl); });
        ASSERT_EQ(errors.size(), 1u);
        const std::string& m = errors[0].message;
        // float32 names its math where another math of it is served (math
        // tf32 in NHWC).
        const std::string math = std::string(dtype) == "float32" && op->name == "conv2d" ? " math fp32" : "";
        EXPECT_EQ(m.rfind("no algorithm of " + op->name + " serves " + dtype + math + " " + layout + " yet (", 0), 0u)
            << m;
        for (const Algorithm* a : op->algorithms) {
          EXPECT_NE(m.find(a->name + ": "), std::string::npos) << a->name << " not named in: " << m;
        }
        // At the dtype's key where it is not float32, else at the layout's.
        EXPECT_EQ(errors[0].where.str(), std::string(dtype) != "float32" ? wl.dtype_where.str() : wl.layout_where.str());
      }
    }
  }
}

// Dense convolution serves float32 NCHW in every math (direct, gemm,
// winograd, winograd_nonfused, stem), half precision in NHWC and float32 NHWC with math tf32
// or 3xtf32 (implicit_gemm): other storage is refused, the message in full.
TEST(PlanStorage, Conv2dRefusesOtherStorageByName) {
  const std::string served =
      "(direct: float32 in NCHW; gemm: float32 in NCHW; winograd: float32 in NCHW; winograd_nonfused: float32 in "
      "NCHW; stem: float32 in NCHW; "
      "implicit_gemm: float16, bfloat16 or float32 (math tf32 or 3xtf32) in NHWC; implicit_gemm_nchw: float32 (math tf32 or 3xtf32) in NCHW; implicit_gemm_sm90: float16, bfloat16 or float32 (math tf32) in NHWC; "
      "implicit_gemm_sm90_nchw: float32 (math tf32) in NCHW; pointwise: float16, bfloat16 or float32 (math tf32) in NHWC; tensor_stem: float16, bfloat16 or float32 (math tf32) in NHWC)";
  const Workload half = workload(
      "{op: conv2d, n: 1, c: 32, c_out: 16, h: 16, w: 16, filter: 3, padding: same, dtype: float16, layout: NCHW}");
  std::vector<Diagnostic> errors = spec_errors([&] { plan_kernel(half); });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].str(), "test.yaml:3:89: error: no algorithm of conv2d serves float16 NCHW yet " + served);
  const Workload nhwc =
      workload("{op: conv2d, n: 1, c: 32, c_out: 16, h: 16, w: 16, filter: 3, padding: same, layout: NHWC}");
  errors = spec_errors([&] { plan_kernel(nhwc); });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].str(), "test.yaml:3:90: error: no algorithm of conv2d serves float32 math fp32 NHWC yet " + served);
  const Workload gemm = workload(
      "{op: conv2d, n: 1, c: 32, c_out: 16, h: 16, w: 16, filter: 1, padding: valid, dtype: bfloat16, layout: NHWC, "
      "schedule: {algorithm: gemm}}");
  errors = spec_errors([&] { plan_kernel(gemm); });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].str(),
            "test.yaml:3:136: error: algorithm 'gemm' serves float32 in NCHW; this workload is bfloat16 NHWC; the "
            "algorithms of conv2d that serve it: implicit_gemm, implicit_gemm_sm90, pointwise, tensor_stem");
}

// Half precision NHWC dense convolution takes the tensor-core algorithm by
// default; its default rule, worked by hand for three layers on the H100
// (sm_90 only: 132 SMs, so 88 blocks are "enough"):
TEST(PlanImplicitGemm, DefaultRuleWorkedByHand) {
  PlanOptions h100;
  h100.target = parse_arch_list("90");
  // ResNet 3x3 at batch 32, 28x28, 128 -> 128: M = 25088 pixels makes 196
  // tiles of 128 x 128 (>= 88): the widest tile, 64 deep, 3 stages.
  KernelPlan p = plan_kernel(workload("{op: conv2d, n: 32, c: 128, c_out: 128, h: 28, w: 28, filter: 3, "
                                      "padding: same, dtype: float16, layout: NHWC}"),
                             h100);
  EXPECT_EQ(p.schedule.algorithm_name(), "implicit_gemm");
  EXPECT_EQ(p.schedule.summary(), "implicit_gemm: cta_tile 128x128x64, warp_tile 64x64, 3 stages");
  EXPECT_EQ(p.min_arch, 80);
  EXPECT_EQ(p.alignment, 16);
  EXPECT_EQ(p.smem_bytes, 3 * (128 + 128) * 64 * 2);  // the main loop's stages outweigh the epilogue's tile
  // The same at batch 8: 49 tiles of 128 x 128, 98 of 64 x 128.
  p = plan_kernel(workload("{op: conv2d, n: 8, c: 128, c_out: 128, h: 28, w: 28, filter: 3, padding: same, "
                           "dtype: bfloat16, layout: NHWC}"),
                  h100);
  EXPECT_EQ(p.schedule.summary(), "implicit_gemm: cta_tile 64x128x64, warp_tile 32x64, 4 stages");
  // 1024 -> 1024 on 7x7 at batch 1: M = 49 makes 16 tiles even of 64 x 64;
  // split K doubles while 16 x split <= 132 blocks (one wave), each part
  // keeps >= 8 of the 9 x 16 = 144 steps of K, up to 4 parts (sm_90: min_arch 90).
  p = plan_kernel(workload("{op: conv2d, n: 1, c: 1024, c_out: 1024, h: 7, w: 7, filter: 3, padding: same, "
                           "dtype: float16, layout: NHWC}"),
                  h100);
  EXPECT_EQ(p.schedule.summary(), "implicit_gemm: cta_tile 64x64x64, warp_tile 32x32, 5 stages, split_k 4");
  EXPECT_EQ(p.min_arch, 90);
  // 1024 -> 256 1x1 on 14x14: 16 tiles, 16 steps of K: 2 parts of 8.
  p = plan_kernel(workload("{op: conv2d, n: 1, c: 1024, c_out: 256, h: 14, w: 14, filter: 1, padding: valid, "
                           "dtype: float16, layout: NHWC}"),
                  h100);
  EXPECT_EQ(p.schedule.at("split_k"), 2);
  // 512 -> 512 3x3 on 7x7 at batch 8: 7 x 8 = 56 tiles, so 2 parts (112 blocks).
  p = plan_kernel(workload("{op: conv2d, n: 8, c: 512, c_out: 512, h: 7, w: 7, filter: 3, padding: same, "
                           "dtype: float16, layout: NHWC}"),
                  h100);
  EXPECT_EQ(p.schedule.at("split_k"), 2);
  // Built for sm_80 too, the default does not split (no clusters there).
  PlanOptions mixed;
  mixed.target = parse_arch_list("80;90");
  p = plan_kernel(workload("{op: conv2d, n: 1, c: 1024, c_out: 1024, h: 7, w: 7, filter: 3, padding: same, "
                           "dtype: float16, layout: NHWC}"),
                  mixed);
  EXPECT_EQ(p.schedule.at("split_k"), 1);
  EXPECT_EQ(p.min_arch, 80);
  // A spec's split is still taken there: the cluster is set at launch, so
  // the kernel compiles for sm_80 too and runs on sm_90 only (the generic
  // kernel elsewhere). A library with no GPU of clusters refuses it.
  const char* split_spec = "{op: conv2d, n: 1, c: 1024, c_out: 1024, h: 7, w: 7, filter: 3, padding: same, "
                           "dtype: float16, layout: NHWC, schedule: {split_k: 2}}";
  p = plan_kernel(workload(split_spec), mixed);
  EXPECT_EQ(p.schedule.at("split_k"), 2);
  EXPECT_EQ(p.min_arch, 90);
  PlanOptions ampere;
  ampere.target = parse_arch_list("80;86");
  const std::vector<Diagnostic> errors = spec_errors([&] { plan_kernel(workload(split_spec), ampere); });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].message.find("built for sm_86 at most"), std::string::npos) << errors[0].message;
  // No more stages than K's steps fill, plus the one the prologue leaves
  // free, and at least the cp.async loop's 3: MobileNetV2's thin
  // projections at batch 64 take 128 x 32 tiles of 6 stages, but 32 -> 16
  // (one 32-deep step) needs 3, 96 -> 24 (3 steps) 4; 144 -> 24 (5 steps)
  // keeps 6. (These take pointwise by default: implicit_gemm forced.)
  p = plan_kernel(workload("{op: conv2d, n: 64, c: 32, c_out: 16, h: 112, w: 112, filter: 1, padding: valid, "
                           "dtype: float16, layout: NHWC, schedule: {algorithm: implicit_gemm}}"),
                  h100);
  EXPECT_EQ(p.schedule.summary(), "implicit_gemm: cta_tile 128x32x32, warp_tile 32x32, 3 stages");
  EXPECT_EQ(p.smem_bytes, 3 * (128 + 32) * 32 * 2);  // was 6 stages' 61,440 bytes
  p = plan_kernel(workload("{op: conv2d, n: 64, c: 96, c_out: 24, h: 56, w: 56, filter: 1, padding: valid, "
                           "dtype: float16, layout: NHWC, schedule: {algorithm: implicit_gemm}}"),
                  h100);
  EXPECT_EQ(p.schedule.summary(), "implicit_gemm: cta_tile 128x32x32, warp_tile 32x32, 4 stages");
  p = plan_kernel(workload("{op: conv2d, n: 64, c: 144, c_out: 24, h: 56, w: 56, filter: 1, padding: valid, "
                           "dtype: float16, layout: NHWC, schedule: {algorithm: implicit_gemm}}"),
                  h100);
  EXPECT_EQ(p.schedule.summary(), "implicit_gemm: cta_tile 128x32x32, warp_tile 32x32, 6 stages");
  // Stems (which take tensor_stem by default; implicit_gemm forced): 3
  // channels walk K as one run of 7 x 7 x 3 = 147 (5 steps of 32, the last
  // zero-padded in registers); odd, so single-element copies through
  // registers in 2 stages, in as many warps as the tile holds up to 8:
  // 128 x 64 in warp tiles of 32 x 32.
  p = plan_kernel(workload("{op: conv2d, n: 8, c: 3, c_out: 64, h: 224, w: 224, filter: 7, stride: 2, "
                           "padding: same, dtype: float16, layout: NHWC, schedule: {algorithm: implicit_gemm}}"),
                  h100);
  EXPECT_EQ(p.schedule.summary(),
            "implicit_gemm: cta_tile 128x64x32, warp_tile 32x32, 2 stages, iterator few_channels");
  EXPECT_EQ(p.block_threads, 256);
  EXPECT_EQ(p.number("k_steps"), 5);
  EXPECT_EQ(p.number("in_vec"), 1);
  EXPECT_EQ(p.alignment, 16);  // the output's 8-channel vectors
  // ConvNeXt's 4x4 stride-4 stem on 3 channels at batch 64: the wide tile,
  // whose 8 warps of 64 x 32 stay.
  p = plan_kernel(workload("{op: conv2d, n: 64, c: 3, c_out: 96, h: 224, w: 224, filter: 4, stride: 4, "
                           "padding: valid, dtype: float16, layout: NHWC, schedule: {algorithm: implicit_gemm}}"),
                  h100);
  EXPECT_EQ(p.schedule.summary(),
            "implicit_gemm: cta_tile 128x128x32, warp_tile 64x32, 2 stages, iterator few_channels");
  // The 4x4 stride-4 patchify stem at 4 channels: one run of 64, 2 steps;
  // even, so cp.async (8-byte copies) and the multistage loop.
  p = plan_kernel(workload("{op: conv2d, n: 8, c: 4, c_out: 96, h: 224, w: 224, filter: 4, stride: 4, "
                           "padding: valid, dtype: bfloat16, layout: NHWC, schedule: {algorithm: implicit_gemm}}"),
                  h100);
  EXPECT_EQ(p.schedule.at("iterator"), 1);
  EXPECT_EQ(p.number("k_steps"), 2);
  EXPECT_EQ(p.number("in_vec"), 4);
  // Float32 stems (math tf32) forced to implicit_gemm: one float a copy,
  // cp.async in 3 stages, in warp tiles of 32 x 32 on tiles of 128 x 64 or
  // 64 x 128 (8 warps, 8 copies a thread of each operand's step), 64 x 64
  // where those make too few blocks, and 128 x 32 where c_out <= 32 (4
  // warps). (Up to 4 channels take tensor_stem by default, below.)
  p = plan_kernel(workload("{op: conv2d, n: 8, c: 3, c_out: 64, h: 224, w: 224, filter: 7, stride: 2, "
                           "padding: same, dtype: float32, math: tf32, layout: NHWC, "
                           "schedule: {algorithm: implicit_gemm}}"),
                  h100);
  EXPECT_EQ(p.schedule.summary(),
            "implicit_gemm: cta_tile 128x64x16, warp_tile 32x32, 3 stages, iterator few_channels");
  EXPECT_EQ(p.block_threads, 256);
  EXPECT_EQ(p.number("in_vec"), 1);
  p = plan_kernel(workload("{op: conv2d, n: 8, c: 3, c_out: 96, h: 224, w: 224, filter: 4, stride: 4, "
                           "padding: valid, dtype: float32, math: tf32, layout: NHWC, "
                           "schedule: {algorithm: implicit_gemm}}"),
                  h100);
  EXPECT_EQ(p.schedule.summary(),
            "implicit_gemm: cta_tile 64x128x16, warp_tile 32x32, 3 stages, iterator few_channels");
  p = plan_kernel(workload("{op: conv2d, n: 1, c: 7, c_out: 126, h: 20, w: 20, filter: 1, padding: valid, "
                           "dtype: float32, math: 3xtf32, layout: NHWC}"),
                  h100);
  EXPECT_EQ(p.schedule.summary(), "implicit_gemm: cta_tile 64x64x16, warp_tile 32x32, 3 stages, iterator few_channels");
  p = plan_kernel(workload("{op: conv2d, n: 8, c: 3, c_out: 32, h: 224, w: 224, filter: 3, stride: 2, "
                           "padding: same, dtype: float32, math: tf32, layout: NHWC, "
                           "schedule: {algorithm: implicit_gemm}}"),
                  h100);
  EXPECT_EQ(p.schedule.summary(),
            "implicit_gemm: cta_tile 128x32x16, warp_tile 32x32, 3 stages, iterator few_channels");
  // 3xtf32 stems stay with implicit_gemm (tensor_stem makes one product).
  p = plan_kernel(workload("{op: conv2d, n: 8, c: 3, c_out: 64, h: 224, w: 224, filter: 7, stride: 2, "
                           "padding: same, dtype: float32, math: 3xtf32, layout: NHWC}"),
                  h100);
  EXPECT_EQ(p.schedule.at("iterator"), 1);
  // Output channels not a multiple of 8: the epilogue's vectors shrink (c_out 12: 4 channels, 8 bytes),
  // the input's copies stay 16 bytes (c 16): every tensor aligned to the wider.
  p = plan_kernel(workload("{op: conv2d, n: 4, c: 16, c_out: 12, h: 9, w: 9, filter: 3, padding: same, "
                           "dtype: float16, layout: NHWC}"),
                  h100);
  EXPECT_EQ(p.number("in_vec"), 8);
  EXPECT_EQ(p.number("out_vec"), 4);
  EXPECT_EQ(p.alignment, 16);
}

// The tensor_stem algorithm's default rule and plan, worked by hand on the
// H100 for the benchmark's three stems at batch 8.
TEST(PlanTensorStem, DefaultRuleWorkedByHand) {
  PlanOptions h100;
  h100.target = parse_arch_list("90");
  // ResNet's 7x7 stride-2 stem, 3 -> 64, 224 -> 112: a filter row's run is
  // 7 x 3 = 21 elements; left padding 3 x 3 channels is odd, so the run
  // starts one element early: 22, in 3 chunks of 8; 7 rows make 21 chunks,
  // 22 with the zero one: K = 176, 11 steps. 448 pixels a block as 4 rows
  // of 112 in 14 warps of 64 x 32 (32 x 32 would take 28).
  KernelPlan p = plan_kernel(workload("{op: conv2d, n: 8, c: 3, c_out: 64, h: 224, w: 224, filter: 7, stride: 2, "
                                      "padding: same, epilogue: scale_shift, activation: relu, dtype: float16, "
                                      "layout: NHWC}"),
                             h100);
  EXPECT_EQ(p.schedule.summary(), "tensor_stem: block_outputs 64x4x112 (channels x rows x columns), warp_outputs "
                                  "64x32 (pixels x channels)");
  EXPECT_EQ(p.number("lead"), 1);
  EXPECT_EQ(p.number("row_chunks"), 3);
  EXPECT_EQ(p.number("k_pad"), 176);
  EXPECT_EQ(p.number("k_steps"), 11);
  EXPECT_EQ(p.block_threads, 14 * 32);
  EXPECT_EQ(p.min_arch, 80);
  EXPECT_EQ(p.alignment, 16);
  // The window: (4 - 1) x 2 + 7 = 13 rows of 111 x 2 + 7 = 229 pixels, 688
  // elements with the lead (344 pairs); the last pixel's last chunk reads to
  // 111 x 2 x 3 + 24 = 690: rows of 696. Shared memory: the filter's 64 rows
  // of 176 + 8, fp32 parameters (2 x 64 x 4), two windows, and 14 warps'
  // staging tiles of 16 rows of 32 + 8 floats.
  EXPECT_EQ(p.number("window_rows"), 13);
  EXPECT_EQ(p.number("span"), 229);
  EXPECT_EQ(p.number("row_copies"), 344);
  EXPECT_EQ(p.number("window_pitch"), 696);
  EXPECT_EQ(p.number("tiles_per_image"), 28);  // 112 / 4 rows of tiles x 1
  EXPECT_EQ(p.smem_bytes, 64 * 184 * 2 + 2 * 64 * 4 + 2 * 13 * 696 * 2 + 14 * 16 * 40 * 4);
  // MobileNetV2's 3x3 stride-2 stem, 3 -> 32: runs of 9, led by one: 2
  // chunks, 6 in all: K = 48, 3 steps. 4 rows of 112 in warp tiles of
  // 32 x 32: 14 warps.
  p = plan_kernel(workload("{op: conv2d, n: 8, c: 3, c_out: 32, h: 224, w: 224, filter: 3, stride: 2, "
                           "padding: same, dtype: bfloat16, layout: NHWC}"),
                  h100);
  EXPECT_EQ(p.schedule.summary(), "tensor_stem: block_outputs 32x4x112 (channels x rows x columns), warp_outputs "
                                  "32x32 (pixels x channels)");
  EXPECT_EQ(p.number("k_pad"), 48);
  EXPECT_EQ(p.block_threads, 14 * 32);
  // ConvNeXt's 4x4 stride-4 patchify stem, 3 -> 96, 224 -> 56: no padding,
  // no lead; runs of 12 in 2 chunks, 8 in all: K = 64. 8 rows of 56 would
  // take 14 x 3 warps of 32 x 32, then 7 x 3 of 64 x 32: 5 rows (15 warps).
  p = plan_kernel(workload("{op: conv2d, n: 8, c: 3, c_out: 96, h: 224, w: 224, filter: 4, stride: 4, "
                           "padding: valid, epilogue: bias, dtype: float16, layout: NHWC}"),
                  h100);
  EXPECT_EQ(p.schedule.summary(), "tensor_stem: block_outputs 96x5x56 (channels x rows x columns), warp_outputs "
                                  "64x32 (pixels x channels)");
  EXPECT_EQ(p.number("lead"), 0);
  EXPECT_EQ(p.number("k_pad"), 64);
  EXPECT_EQ(p.block_threads, 15 * 32);
  // What it refuses, by name: an odd row of pairs (w x c odd), a dilation
  // along rows, output channels past 16-byte vectors, more than 4 channels.
  const auto refusal = [&](const std::string& text) { return only_error(text, h100); };
  EXPECT_EQ(refusal("{op: conv2d, n: 1, c: 3, c_out: 32, h: 15, w: 15, filter: 3, stride: 2, padding: same, "
                    "dtype: float16, layout: NHWC, schedule: {algorithm: tensor_stem}}"),
            "algorithm 'tensor_stem' reads pairs of elements, which needs w x c (15 x 3) and stride_w x c (2 x 3) "
            "even: use implicit_gemm");
  EXPECT_EQ(refusal("{op: conv2d, n: 1, c: 4, c_out: 32, h: 16, w: 16, filter: 3, dilation: 2, padding: same, "
                    "dtype: float16, layout: NHWC, schedule: {algorithm: tensor_stem}}"),
            "algorithm 'tensor_stem' reads a filter row's taps as one run of the input row, which a dilation along "
            "the row (2) breaks: use implicit_gemm");
  EXPECT_EQ(refusal("{op: conv2d, n: 1, c: 4, c_out: 30, h: 16, w: 16, filter: 3, padding: same, "
                    "dtype: float16, layout: NHWC, schedule: {algorithm: tensor_stem}}"),
            "algorithm 'tensor_stem' stores 16-byte vectors of 8 output channels: c_out (30) must be a multiple of "
            "8; use implicit_gemm");
  EXPECT_EQ(refusal("{op: conv2d, n: 1, c: 8, c_out: 32, h: 16, w: 16, filter: 3, padding: same, "
                    "dtype: float16, layout: NHWC, schedule: {algorithm: tensor_stem}}"),
            "algorithm 'tensor_stem' runs layers of at most 4 input channels (a network's first layer); this one "
            "has 8: use implicit_gemm");
  // Odd widths and strides keep implicit_gemm by default.
  p = plan_kernel(workload("{op: conv2d, n: 1, c: 3, c_out: 32, h: 15, w: 15, filter: 3, stride: 2, "
                           "padding: same, dtype: float16, layout: NHWC}"),
                  h100);
  EXPECT_EQ(p.schedule.algorithm_name(), "implicit_gemm");
  // The window's edge pixels, zeroed where they lie outside the image: the
  // left edge's are the padding's 2, the right edge's those of the last
  // tile's window past w. In windows of 3 pixels over an image 1 wide with 2
  // of padding each side, the last of 3 tiles' window runs 2 past w; the
  // right edge keeps to the 1 pixel the left edge leaves, so that no pixel
  // is zeroed by two threads.
  p = plan_kernel(workload("{op: conv2d, n: 2, c: 4, c_out: 16, h: 8, w: 1, filter: 3, padding: [1, 1, 2, 2], "
                           "dtype: float16, layout: NHWC, schedule: {algorithm: tensor_stem, block_outputs: [16, 4, 1], "
                           "warp_outputs: [16, 8]}}"),
                  h100);
  EXPECT_EQ(p.number("span"), 3);
  EXPECT_EQ(p.number("left_edge"), 2);
  EXPECT_EQ(p.number("right_edge"), 1);

  // Float32 with math tf32: a word is one float, so no lead and chunks of
  // 4. ResNet's stem: runs of 21 in 6 chunks (the last holds one tap), 42
  // in all: K = 168, 21 steps of 8. Warp tiles of 32 pixels x 64 channels,
  // at most 12 warps: 3 rows of 112 (11 warps; the last one's pixels past
  // the tile are not stored). The window: (3 - 1) x 2 + 7 = 11 rows of 229
  // pixels, 687 floats copied one a word; the last pixel's last chunk reads
  // to 111 x 2 x 3 + 24 = 690: rows of 692. Shared memory: the filter's 64
  // rows of 168 + 4 floats, the parameters, two windows, 11 staging tiles
  // of 16 rows of 64 + 8 floats.
  p = plan_kernel(workload("{op: conv2d, n: 8, c: 3, c_out: 64, h: 224, w: 224, filter: 7, stride: 2, "
                           "padding: same, epilogue: scale_shift, activation: relu, dtype: float32, math: tf32, "
                           "layout: NHWC}"),
                  h100);
  EXPECT_EQ(p.schedule.summary(), "tensor_stem: block_outputs 64x3x112 (channels x rows x columns), warp_outputs "
                                  "32x64 (pixels x channels)");
  EXPECT_EQ(p.number("chunk"), 4);
  EXPECT_EQ(p.number("lead"), 0);
  EXPECT_EQ(p.number("row_chunks"), 6);
  EXPECT_EQ(p.number("k_pad"), 168);
  EXPECT_EQ(p.number("k_steps"), 21);
  EXPECT_EQ(p.number("mma_k"), 8);
  EXPECT_EQ(p.block_threads, 11 * 32);
  EXPECT_EQ(p.number("window_rows"), 11);
  EXPECT_EQ(p.number("row_copies"), 687);
  EXPECT_EQ(p.number("window_pitch"), 692);
  EXPECT_EQ(p.smem_bytes, 64 * 172 * 4 + 2 * 64 * 4 + 2 * 11 * 692 * 4 + 11 * 16 * 72 * 4);
  // The 4x4 stem: 96 channels are not a multiple of 64, so warp tiles of
  // 32 x 32; 5 rows of 56 would take 9 x 3 warps: 2 rows (4 x 3 = 12).
  p = plan_kernel(workload("{op: conv2d, n: 8, c: 3, c_out: 96, h: 224, w: 224, filter: 4, stride: 4, "
                           "padding: valid, epilogue: bias, dtype: float32, math: tf32, layout: NHWC}"),
                  h100);
  EXPECT_EQ(p.schedule.summary(), "tensor_stem: block_outputs 96x2x56 (channels x rows x columns), warp_outputs "
                                  "32x32 (pixels x channels)");
  // Odd widths and strides are no obstacle to floats; output channels
  // come in vectors of 4.
  p = plan_kernel(workload("{op: conv2d, n: 1, c: 3, c_out: 36, h: 15, w: 15, filter: 3, stride: 1, "
                           "padding: same, dtype: float32, math: tf32, layout: NHWC}"),
                  h100);
  EXPECT_EQ(p.schedule.algorithm_name(), "tensor_stem");
  EXPECT_EQ(refusal("{op: conv2d, n: 1, c: 3, c_out: 30, h: 16, w: 16, filter: 3, padding: same, "
                    "dtype: float32, math: tf32, layout: NHWC, schedule: {algorithm: tensor_stem}}"),
            "algorithm 'tensor_stem' stores 16-byte vectors of 4 output channels: c_out (30) must be a multiple of "
            "4; use implicit_gemm");
}

// Wide stems on a GPU of 99 KiB a block: the default narrows the block's
// channels until the filter's rows fit. 1024 channels of a 9x9 filter
// narrowed 128, 120, 104, 96, 88, 80, and there the rounding of "one part
// more" gave 80 again: planning never ended. Now a step narrower (72), in
// 15 tiles. Over a sweep of such stems, every plan ends: a schedule that
// fits, or an error.
TEST(PlanTensorStem, WideStemsNarrowTheirChannelsUntilTheyFit) {
  PlanOptions ampere;
  ampere.target = parse_arch_list("86");
  const KernelPlan p = plan_kernel(workload("{op: conv2d, n: 8, c: 4, c_out: 1024, h: 224, w: 224, filter: 9, "
                                            "stride: 2, padding: same, dtype: float16, layout: NHWC}"),
                                   ampere);
  EXPECT_EQ(p.schedule.algorithm_name(), "tensor_stem");
  EXPECT_EQ(p.schedule.at("tile_co"), 72);
  EXPECT_EQ(p.number("channel_tiles"), 15);
  EXPECT_LE(p.smem_bytes, 99 * 1024);
  int planned = 0;
  for (const char* archs : {"86", "89", "120", "75-real;80-real;86-real;89-real;90"}) {
    PlanOptions options;
    options.target = parse_arch_list(archs);
    for (const char* dtype : {"float16", "float32, math: tf32"}) {
      for (int c : {2, 4}) {
        for (int c_out : {64, 256, 512, 1000, 1024, 2048, 4096}) {
          for (int filter : {5, 7, 9, 11}) {
            const std::string text = "{op: conv2d, n: 8, c: " + std::to_string(c) + ", c_out: " +
                                     std::to_string(c_out) + ", h: 224, w: 224, filter: " + std::to_string(filter) +
                                     ", stride: 2, padding: same, dtype: " + dtype + ", layout: NHWC}";
            SCOPED_TRACE(std::string(archs) + " " + text);
            try {
              const KernelPlan k = plan_kernel(workload(text), options);
              EXPECT_LE(k.smem_bytes, 99 * 1024);
              ++planned;
            } catch (const InputError&) {
              // refused with a message: also an end
            }
          }
        }
      }
    }
  }
  EXPECT_GT(planned, 0);
}

// An algorithm forced on a dtype or layout it does not serve: refused at
// the `algorithm` key, saying what it serves, what the workload is, and
// which algorithms would serve it. Every algorithm of every operator, in
// every dtype x layout: one that serves the workload is never refused so.
TEST(PlanStorage, AForcedAlgorithmRefusesWhatItDoesNotServe) {
  int refused = 0;
  for (const Operator* op : operators()) {
    for (const Algorithm* a : op->algorithms) {
      for (const char* dtype : {"float32", "float16", "bfloat16"}) {
        for (const char* layout : {"NCHW", "NHWC"}) {
          const std::string text = storage_workload(*op, dtype, layout, "{algorithm: " + a->name + "}");
          SCOPED_TRACE(text);
          const Workload wl = workload(text);
          const std::string refusal = "algorithm '" + a->name + "' serves ";
          if (a->serves(wl)) {
            // It may refuse the shape for reasons of its own, never for this.
            try {
              plan_kernel(wl);
            } catch (const InputError& e) {
              for (const Diagnostic& d : e.diagnostics()) EXPECT_EQ(d.message.find(refusal), std::string::npos) << d.str();
            }
            continue;
          }
          ++refused;
          const std::vector<Diagnostic> errors = spec_errors([&] { plan_kernel(wl); });
          ASSERT_EQ(errors.size(), 1u);
          const std::string& m = errors[0].message;
          EXPECT_EQ(m.rfind(refusal, 0), 0u) << m;
          // float32 names its math (fp32) where the math alone is refused:
          // an algorithm of that dtype and layout for tf32 and 3xtf32 only.
          const bool math_alone = std::string(dtype) == "float32" &&
                                  std::count(a->dtypes.begin(), a->dtypes.end(), DataType::kFloat32) != 0 &&
                                  std::count(a->layouts.begin(), a->layouts.end(), wl.layout) != 0;
          EXPECT_NE(m.find(std::string("; this workload is ") + dtype + (math_alone ? " math fp32 " : " ") + layout + "; "),
                    std::string::npos)
              << m;
          const std::string others = serving(*op, wl);
          EXPECT_NE(m.find(others.empty() ? "; no algorithm of " + op->name + " serves it yet"
                                          : "; the algorithms of " + op->name + " that serve it: " + others),
                    std::string::npos)
              << m;
          EXPECT_EQ(errors[0].where.str(), wl.schedule.algorithm_where.str());
        }
      }
    }
  }
  EXPECT_GT(refused, 0);
}

// The rows algorithm in NHWC, in full as far as it is fixed: whatever else
// serves NHWC, rows reads NCHW planes.
TEST(PlanStorage, RowsRefusesChannelsLast) {
  const Workload wl = workload(
      "{n: 1, c: 32, h: 112, w: 112, filter: 3, padding: same, layout: NHWC, schedule: {algorithm: rows}}");
  const std::vector<Diagnostic> errors = spec_errors([&] { plan_kernel(wl); });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].where.str(), "test.yaml:3:97");
  EXPECT_EQ(errors[0].message.rfind("algorithm 'rows' serves ", 0), 0u) << errors[0].message;
  EXPECT_NE(errors[0].message.find(" in NCHW; this workload is float32 NHWC; "), std::string::npos)
      << errors[0].message;
}

// A knob of the other algorithm is an error at the first such key.
TEST(ScheduleOverride, KnobsOfTheOtherAlgorithm) {
  const Workload rows = workload(
      "{n: 1, c: 8, h: 64, w: 64, filter: 3, padding: same, "
      "schedule: {algorithm: rows, vector_width: 4, vthreads: [1, 2], threads: [8, 16]}}");
  std::vector<Diagnostic> errors = spec_errors([&] { plan_kernel(rows); });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].str(),
            "test.yaml:3:103: error: 'vthreads' is a knob of algorithm 'tiles'; this workload uses algorithm 'rows', "
            "whose knobs are rows_per_thread, vector_width, threads_per_block");

  // Without the algorithm key, a tiles knob means tiles, and a rows knob beside it is the error.
  const Workload mixed = workload(
      "{n: 1, c: 8, h: 64, w: 64, filter: 3, padding: same, schedule: {rows_per_thread: 2, threads: [8, 16]}}");
  errors = spec_errors([&] { plan_kernel(mixed); });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].str(),
            "test.yaml:3:69: error: 'rows_per_thread' is a knob of algorithm 'rows' or 'window'; this workload uses "
            "algorithm 'tiles', whose knobs are block_tile, threads, vthreads, shared_input, shared_filter, channels_per_block");
}

TEST(ScheduleOverride, RowsErrorsPointAtTheKeyAtFault) {
  // rows_per_thread more than the output rows: at rows_per_thread.
  const Workload tall = workload("{n: 1, c: 8, h: 6, w: 16, filter: 3, padding: same, schedule: {rows_per_thread: 8}}");
  std::vector<Diagnostic> errors = spec_errors([&] { plan_kernel(tall); });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].where.str(), tall.schedule.at("rows_per_thread").str());
  EXPECT_EQ(errors[0].message, "rows_per_thread 8 is more than the 6 output rows");

  // A vector_width that does not fit: at vector_width.
  const Workload wide = workload("{n: 1, c: 8, h: 16, w: 132, filter: 3, padding: same, schedule: {vector_width: 4}}");
  errors = spec_errors([&] { plan_kernel(wide); });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].where.str(), wide.schedule.at("vector_width").str());
  EXPECT_EQ(errors[0].message,
            "the rows algorithm cannot run this workload: a row needs 33 lanes of vector_width 4; a row is owned by "
            "one warp (32 lanes); use algorithm: tiles");

  // Where another width would do, the message names it.
  const Workload odd = workload("{n: 1, c: 8, h: 16, w: 54, filter: 3, padding: same, schedule: {vector_width: 4}}");
  errors = spec_errors([&] { plan_kernel(odd); });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].message,
            "the rows algorithm cannot run this workload: vector_width 4 does not divide the input width 54 (each "
            "lane's load must start on a multiple of vector_width elements); use vector_width 2 or algorithm: tiles");

  // Nothing set that could be at fault: at the schedule.
  const Workload any = workload("{n: 1, c: 8, h: 16, w: 132, filter: 3, padding: same, schedule: {algorithm: rows}}");
  errors = spec_errors([&] { plan_kernel(any); });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].where.str(), any.schedule.where.str());
}

// ---------------------------------------------------------------------------
// Libraries.

// The third workload states the default schedule (rows, 2 rows per lane at batch 1).
TEST(PlanLibrary, DuplicatesWithTheSameScheduleMerge) {
  const Spec spec = parse(R"(library: lib
workloads:
  - {n: 1, c: 8, h: 16, w: 16, filter: 3, padding: same}
  - {n: 1, c: 8, h: 16, w: 16, filter: 3, padding: 1}
  - {n: 1, c: 8, h: 16, w: 16, filter: [3, 3], padding: [1, 1, 1, 1], stride: 1, schedule: {rows_per_thread: 2}}
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
            "--name: error: library name must be a C identifier (letters, digits, '_'; not starting with a "
            "digit) of at most 64 characters, got '9lives'");

  // A keyword or a reserved name fails here, not in nvcc.
  for (const std::string name : {"int", "std", "class", "__lib", "_Lib", "my__lib"}) {
    errors = spec_errors([&] { plan_library({a}, name); });
    ASSERT_EQ(errors.size(), 1u) << name;
    EXPECT_EQ(errors[0].str().rfind("--name: error: library name '" + name + "' is ", 0), 0u) << errors[0].str();
  }
  EXPECT_NO_THROW(plan_library({a}, "_lib"));  // '_' and a lower-case letter: the program's to use
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

namespace convgen_test {
namespace {

// The default rule gives every valid dense workload a schedule that fits:
// a sweep of channels, sizes (H x W a multiple of 4 and not), filters,
// strides, paddings and dilations, with and without epilogue and residual.
TEST(DefaultSchedule, EveryValidDenseWorkloadGetsOne) {
  // For the default list of GPUs, and for the H100 alone (where split K
  // and the largest tiles come into the defaults).
  PlanOptions every_gpu, h100;
  h100.target = parse_arch_list("90");
  int planned = 0;
  std::vector<std::string> failures;
  for (const PlanOptions* options : {&every_gpu, &h100}) {
    for (int c : {1, 3, 16, 24, 150, 512}) {
      for (int c_out : {1, 7, 24, 64, 96, 1280}) {
        for (int hw : {1, 5, 7, 14, 17, 56}) {
          for (int k : {1, 2, 3, 5, 7}) {
            for (int stride : {1, 2, 3}) {
              for (const char* padding : {"same", "valid"}) {
                for (int dilation : {1, 2}) {
                  const std::string text = "{op: conv2d, n: 4, c: " + std::to_string(c) + ", c_out: " +
                                           std::to_string(c_out) + ", h: " + std::to_string(hw) + ", w: " +
                                           std::to_string(hw + 1) + ", filter: " + std::to_string(k) + ", stride: " +
                                           std::to_string(stride) + ", padding: " + padding + ", dilation: " +
                                           std::to_string(dilation) + ", epilogue: scale_shift, residual: true}";
                  Workload wl;
                  try {
                    wl = workload(text);
                  } catch (const InputError&) {
                    continue;  // not a valid workload (the window is larger than the input)
                  }
                  try {
                    plan_kernel(wl, *options);
                    ++planned;
                  } catch (const InputError& e) {
                    failures.push_back(text + ": " + e.diagnostics().front().message);
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  // 11,556 valid workloads of the 12,960 drawn, for each list of GPUs.
  EXPECT_EQ(planned, 2 * 11556);
  EXPECT_TRUE(failures.empty()) << failures.size() << " valid workloads got no schedule, e.g.\n  " << failures.front();
}

// Stems: few input channels over wide images at large strides (7x7 stride
// 2, 3x3 stride 2, 4x4 stride 4 patchify, 11x11 stride 4), at batch 1 and
// 8, get the stem algorithm with shared memory that a T4 (64 KiB a block,
// the tightest of the default GPUs) gives. The patchify stem {n: 1, c: 3,
// c_out: 96, 224^2, 4x4 stride 4, valid} once got a direct default staging
// 58,368 bytes (its limit is 49,152).
TEST(DefaultSchedule, EveryStemGetsOne) {
  constexpr int kT4SharedPerBlock = 64 * 1024;
  int planned = 0;
  std::vector<std::string> failures;
  for (int n : {1, 8}) {
    for (int c : {1, 3, 4}) {
      for (int c_out : {16, 64, 96}) {
        for (int hw : {160, 224, 227, 299}) {
          for (int k : {2, 3, 4, 5, 7, 11}) {
            for (int stride : {1, 2, 3, 4}) {
              for (const char* padding : {"same", "valid"}) {
                const std::string text = "{op: conv2d, n: " + std::to_string(n) + ", c: " + std::to_string(c) +
                                         ", c_out: " + std::to_string(c_out) + ", h: " + std::to_string(hw) +
                                         ", w: " + std::to_string(hw) + ", filter: " + std::to_string(k) +
                                         ", stride: " + std::to_string(stride) + ", padding: " + padding + "}";
                try {
                  const KernelPlan p = plan_kernel(workload(text));
                  EXPECT_EQ(p.schedule.algorithm_name(), "stem") << text;
                  EXPECT_LE(p.smem_bytes, kT4SharedPerBlock) << text;
                  ++planned;
                } catch (const InputError& e) {
                  failures.push_back(text + ": " + e.diagnostics().front().message);
                }
              }
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(planned, 2 * 3 * 3 * 4 * 6 * 4 * 2);
  EXPECT_TRUE(failures.empty()) << failures.size() << " stems got no schedule, e.g.\n  " << failures.front();
}

// Every half-precision NHWC dense workload of a sweep gets a default
// schedule that fits (implicit_gemm; pointwise on thin 1x1 layers,
// tensor_stem on stems), for the H100 alone and for the default
// list of GPUs (sm_75 to sm_90: the tightest shared memory, and no split K):
// channels 1 to 1024 (odd, the stems' 3 and 4, up to 8 and beyond), output
// channels not multiples of 8, planes 1 to 224, filters 1 to 7, strides.
// With an sm_90a image the default may be implicit_gemm_sm90 (its tiles and
// split K), which must fit too.
TEST(DefaultSchedule, EveryHalfPrecisionNhwcDenseWorkloadGetsOne) {
  PlanOptions h100;
  h100.target = parse_arch_list("90");
  PlanOptions every_gpu;
  PlanOptions h100_sm90a;
  h100_sm90a.target = parse_arch_list("90a-real;90-virtual");
  int planned = 0, sm90 = 0, pointwise = 0, tensor_stem = 0;
  std::vector<std::string> failures;
  for (const char* dtype : {"float16", "bfloat16"}) {
    for (int c : {1, 2, 3, 4, 6, 8, 16, 27, 64, 256, 1024}) {
      for (int c_out : {1, 13, 32, 64, 96, 512}) {
        for (int hw : {1, 14, 224}) {
          for (int k : {1, 3, 7}) {
            for (int stride : {1, 2}) {
              for (int n : {1, 8}) {
                const std::string text = "{op: conv2d, n: " + std::to_string(n) + ", c: " + std::to_string(c) +
                                         ", c_out: " + std::to_string(c_out) + ", h: " + std::to_string(hw) +
                                         ", w: " + std::to_string(hw) + ", filter: " + std::to_string(k) +
                                         ", stride: " + std::to_string(stride) + ", padding: same, dtype: " + dtype +
                                         ", layout: NHWC}";
                for (const PlanOptions* options : {&h100, &every_gpu, &h100_sm90a}) {
                  try {
                    const KernelPlan p = plan_kernel(workload(text), *options);
                    if (c <= 4 && c_out % 8 == 0 && hw * c % 2 == 0 && stride * c % 2 == 0) {
                      EXPECT_EQ(p.schedule.algorithm_name(), "tensor_stem") << text;  // stems read in pairs
                      ++tensor_stem;
                    } else if (options == &h100_sm90a && p.schedule.algorithm_name() == "implicit_gemm_sm90") {
                      ++sm90;
                    } else if (k == 1 && stride == 1 && c % 8 == 0 && c_out % 8 == 0 &&
                               (c <= 40 || (c <= 240 && c_out <= 40) || (c == 64 && c_out == 512 && hw == 224))) {
                      // thin, narrow or expanding 1x1 layers (64 -> 512 where every warp gets a tile)
                      EXPECT_EQ(p.schedule.algorithm_name(), "pointwise") << text;
                      ++pointwise;
                    } else {
                      EXPECT_EQ(p.schedule.algorithm_name(), "implicit_gemm") << text;
                    }
                    ++planned;
                  } catch (const InputError& e) {
                    failures.push_back(text + ": " + e.diagnostics().front().message);
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(planned, 2 * 11 * 6 * 3 * 3 * 2 * 2 * 3);
  EXPECT_GT(sm90, 100);
  // (c 8, 16 x c_out 32, 64, 96, 512, and 64 -> 32) x planes 3 x batches 2
  // x dtypes 2 x 3 libraries; and 64 -> 512 on 224^2 x batches 2 x dtypes 2
  // in the 2 libraries without an sm_90a image (implicit_gemm_sm90 there).
  EXPECT_EQ(pointwise, (2 * 4 + 1) * 3 * 2 * 2 * 3 + 2 * 2 * 2);
  // c 1 to 4 x c_out 32, 64, 96, 512 x filters 3 x batches 2 x dtypes 2 x 3
  // libraries, where w x c and stride x c are even: c 2 and 4 at every
  // plane (3) and stride (2), c 1 and 3 on even planes (2) at stride 2.
  EXPECT_EQ(tensor_stem, (6 + 6 + 2 + 2) * 4 * 3 * 2 * 2 * 3);
  EXPECT_TRUE(failures.empty()) << failures.size() << " workloads got no schedule, e.g.\n  " << failures.front();
}

// One row of tests/cpu/torchvision_convs.csv as a workload's fields: the
// window of one convolution of a torchvision classification model.
struct ModelConv {
  std::string where;  // "model module", for messages
  int c, c_out, h, w, kh, kw, stride_h, stride_w, dilation_h, dilation_w, pad_top, pad_bottom, pad_left, pad_right,
      groups;
};

std::vector<ModelConv> torchvision_convs() {
  std::ifstream in(std::string(CONVGEN_SOURCE_DIR) + "/tests/cpu/torchvision_convs.csv");
  std::vector<ModelConv> convs;
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (header) {  // the column names
      header = false;
      continue;
    }
    std::istringstream fields(line);
    std::string model, module, value;
    std::getline(fields, model, ',');
    std::getline(fields, module, ',');
    std::vector<int> v;
    while (std::getline(fields, value, ',')) v.push_back(std::stoi(value));
    if (v.size() != 15) throw std::runtime_error("torchvision_convs.csv: 17 columns expected: " + line);
    convs.push_back({model + " " + module, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11],
                     v[12], v[13], v[14]});
  }
  return convs;
}

// Every convolution of torchvision's classification models (the committed
// list tools/torchvision_convs.py writes) gets a default schedule that fits,
// at batch 1 and 64, in every dtype and layout an algorithm of its operator
// serves, with the heaviest epilogue (a folded batch norm, a residual add),
// for the H100 alone, for the default list of GPUs, and for that list as
// convgen_add_library builds it for a library of Hopper's implicit GEMM
// (sm_90 as sm_90a: its tiles and split K). Grouped convolutions
// (neither dense nor depthwise) are convgen's to leave out, and filters or
// strides past a spec's limits the generic kernel's.
TEST(DefaultSchedule, EveryTorchvisionConvolutionGetsOne) {
  const std::vector<ModelConv> convs = torchvision_convs();
  ASSERT_GT(convs.size(), 1000u);
  PlanOptions h100;
  h100.target = parse_arch_list("90");
  PlanOptions every_gpu;
  PlanOptions every_gpu_sm90a;
  every_gpu_sm90a.target = parse_arch_list("75-real;80-real;86-real;89-real;90a-real;90-virtual");
  int planned = 0, grouped = 0, beyond_limits = 0;
  std::vector<std::string> failures;
  const auto pair = [](int a, int b) { return "[" + std::to_string(a) + ", " + std::to_string(b) + "]"; };
  for (const ModelConv& k : convs) {
    const bool dense = k.groups == 1;
    if (!dense && !(k.groups == k.c && k.c_out % k.c == 0)) {
      ++grouped;
      continue;
    }
    for (int n : {1, 64}) {
      for (const char* dtype : {"float32", "float16", "bfloat16"}) {
        for (const char* layout : {"NCHW", "NHWC"}) {
          std::string text = std::string("{op: ") + (dense ? "conv2d" : "depthwise_conv2d") +
                             ", n: " + std::to_string(n) + ", c: " + std::to_string(k.c) +
                             (dense ? ", c_out: " + std::to_string(k.c_out) : "") + ", h: " + std::to_string(k.h) +
                             ", w: " + std::to_string(k.w) + ", filter: " + pair(k.kh, k.kw) +
                             ", stride: " + pair(k.stride_h, k.stride_w) + ", dilation: " +
                             pair(k.dilation_h, k.dilation_w) + ", padding: [" + std::to_string(k.pad_top) + ", " +
                             std::to_string(k.pad_bottom) + ", " + std::to_string(k.pad_left) + ", " +
                             std::to_string(k.pad_right) + "]" +
                             (dense ? "" : ", multiplier: " + std::to_string(k.c_out / k.c)) +
                             ", epilogue: scale_shift" + (dense ? ", residual: true" : "") +
                             ", activation: relu, dtype: " + dtype + ", layout: " + layout + "}";
          Workload wl;
          try {
            wl = workload(text);
          } catch (const InputError& e) {
            // Past a spec's limits (ViT's 16x16 stride-16 patches: filters
            // to 11, strides to 8): the generic kernel serves it at run time.
            const std::string& m = e.diagnostics().front().message;
            EXPECT_NE(m.find("must be an integer from 1 to"), std::string::npos) << k.where << ": " << m;
            ++beyond_limits;
            continue;
          }
          if (serving(*wl.op, wl).empty()) continue;  // no algorithm serves this storage: the generic kernel does
          for (const PlanOptions* options : {&h100, &every_gpu, &every_gpu_sm90a}) {
            try {
              plan_kernel(wl, *options);
              ++planned;
            } catch (const InputError& e) {
              failures.push_back(k.where + ": " + text + ": " + e.diagnostics().front().message);
            }
          }
        }
      }
    }
  }
  std::cout << "planned " << planned << " workloads of " << convs.size() << " convolutions (" << grouped
            << " grouped left out; " << beyond_limits << " workloads past a spec's limits)\n";
  EXPECT_GT(planned, 10000);
  EXPECT_TRUE(failures.empty()) << failures.size() << " workloads got no schedule, e.g.\n  " << failures.front();
}

}  // namespace
}  // namespace convgen_test

namespace convgen_test {
namespace {

// The parser reads a schedule key before it knows the algorithm, so a key
// must mean one thing within an operator: knobs of the same key in two of
// its algorithms have the same values and kind (their ranges may differ:
// the parser checks the range of the algorithm the spec names).
TEST(Operators, ASchedulesKeyMeansOneThingWithinAnOperator) {
  for (const Operator* op : operators()) {
    std::map<std::string, const Knob*> seen;
    for (const Algorithm* a : op->algorithms) {
      EXPECT_EQ(a->op, op) << a->name;
      for (const Knob& k : a->knobs) {
        const auto [it, inserted] = seen.emplace(k.key, &k);
        if (inserted) continue;
        EXPECT_EQ(it->second->values, k.values) << op->name << ": " << k.key;
        EXPECT_EQ(it->second->kind, k.kind) << op->name << ": " << k.key;

      }
    }
  }
}

}  // namespace
}  // namespace convgen_test

namespace convgen_test {
namespace {

// A key that several algorithms own is checked against the range of the
// algorithm the spec names, wherever `algorithm` stands in the mapping:
// rows_per_thread is 1..16 for rows and window, 1..32 for channels.
TEST(Conv2dParse, ASharedKeyTakesTheNamedAlgorithmsRange) {
  EXPECT_NO_THROW(workload("{n: 1, c: 32, h: 64, w: 64, filter: 3, padding: same, layout: NHWC, "
                           "schedule: {rows_per_thread: 20, algorithm: channels}}"));
  const std::vector<Diagnostic> errors = spec_errors([] {
    workload("{n: 1, c: 32, h: 64, w: 64, filter: 3, padding: same, schedule: {rows_per_thread: 20, algorithm: rows}}");
  });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].message.find("16"), std::string::npos) << errors[0].message;
}

// The d2l-tvm chapter's C = 64 layer with the direct algorithm (the default
// rule gives it winograd), worked out by hand from the direct default
// (batch 1: 4 channels x 1 row x 4 columns a thread, threads 2x8x8) and the
// formulas of conv2d_direct.cpp.
TEST(Conv2dPlan, DirectDefaultOfTheSeedLayer) {
  const KernelPlan p = plan(
      "{op: conv2d, n: 1, c: 64, c_out: 64, h: 64, w: 64, filter: 3, padding: same, schedule: {algorithm: direct}}");
  EXPECT_EQ(p.name, "conv_f32_nchw_n1_c64_co64_h64_w64_k3x3_s1_p1");
  EXPECT_EQ(p.schedule.summary(), "direct: threads 2x8x8, thread_tile 4x1x4, column_groups 1, ci_step 8");
  EXPECT_EQ(p.number("tile_co"), 8);
  EXPECT_EQ(p.number("tile_h"), 8);
  EXPECT_EQ(p.number("tile_w"), 32);
  EXPECT_EQ(p.number("grid_x"), 8 * 8 * 2);  // channel blocks x row tiles x column tiles
  EXPECT_EQ(p.number("in_tile_h"), 10);
  EXPECT_EQ(p.number("in_tile_w"), 34);
  EXPECT_EQ(p.number("vec"), 4);           // 4 columns a thread, 32 a row of threads: 16-byte reads
  EXPECT_EQ(p.number("in_pitch"), 36);     // the last thread's 2 float4 reads end at column 36
  EXPECT_EQ(p.smem_bytes, 2 * (8 * 10 * 36 + 8 * 9 * 8) * 4);
  EXPECT_EQ(p.block_threads, 128);
  EXPECT_EQ(p.alignment, 16);              // float4 stores: 4 columns a thread, 64 a row
  EXPECT_EQ(p.flops, 2LL * 64 * 64 * 64 * 64 * 9);
  EXPECT_EQ(p.bytes_read, 4LL * (64 * 64 * 64 + 64 * 64 * 9));
  EXPECT_EQ(p.bytes_written, 4LL * 64 * 64 * 64);
}

// ResNet-50's stride-2 3x3 layers by the default rule: the GEMM over
// im2col, worked out by hand. 128 -> 128 on 56x56 at batch 32: K = 128 x 9
// = 1152 rows in 72 stages of 16; 28 x 28 x 32 / 64 = 392 pixel blocks of
// one 128-channel block make two waves of the H100's 132 SMs (264), so the
// tile is 128 x 64 with 4x1 groups of 4x4 a thread: (128 / 16) x (64 / 4)
// = 128 threads, one gathered pixel column each (plenty of blocks: no
// split). 128 -> 256 on 28x28 makes 98 x 2 = 196 blocks of 128 x 64, under
// two waves: 64 x 64 with 2x1 groups, (64 / 8) x (64 / 4) = 128 threads. A
// strided 5x5 keeps direct, a 3x3 with 4 input channels the stem algorithm.
TEST(Conv2dPlan, GemmOverIm2colForStrided3x3) {
  const KernelPlan p = plan(
      "{op: conv2d, n: 32, c: 128, c_out: 128, h: 56, w: 56, filter: 3, stride: 2, padding: same, "
      "epilogue: scale_shift, activation: relu}");
  EXPECT_EQ(p.schedule.summary(), "gemm: block_tile 128x64, k_step 16, vthreads 4x1 (4x4 outputs each)");
  EXPECT_EQ(p.number("gemm_k"), 1152);
  EXPECT_EQ(p.number("k_steps"), 72);
  EXPECT_EQ(p.number("pixels"), 28 * 28);
  EXPECT_EQ(p.number("x_vec"), 1);
  EXPECT_EQ(p.block_threads, 128);
  EXPECT_EQ(p.number("m_blocks"), 1);
  EXPECT_EQ(p.alignment, 4);
  EXPECT_EQ(p.smem_bytes, 2 * (16 * (128 + 4) + 16 * 64) * 4);
  const KernelPlan deeper = plan(
      "{op: conv2d, n: 32, c: 128, c_out: 256, h: 28, w: 28, filter: 3, stride: 2, padding: same, "
      "epilogue: scale_shift, activation: relu}");
  EXPECT_EQ(deeper.schedule.summary(), "gemm: block_tile 64x64, k_step 16, vthreads 2x1 (4x4 outputs each)");
  EXPECT_EQ(deeper.block_threads, 128);
  EXPECT_EQ(deeper.number("m_blocks"), 4);
  EXPECT_EQ(deeper.smem_bytes, 2 * (16 * (64 + 4) + 16 * 64) * 4);
  // 64 output channels would leave half of a 128-channel tile idle: 64 x 64
  // however many blocks (3,136 here).
  EXPECT_EQ(plan("{op: conv2d, n: 64, c: 64, c_out: 64, h: 112, w: 112, filter: 3, stride: 2, padding: same}")
                .schedule.at("block_co"),
            64);
  EXPECT_EQ(plan("{op: conv2d, n: 8, c: 64, c_out: 64, h: 56, w: 56, filter: 5, stride: 2, padding: same}")
                .schedule.algorithm_name(),
            "direct");
  EXPECT_EQ(plan("{op: conv2d, n: 8, c: 4, c_out: 64, h: 56, w: 56, filter: 3, stride: 2, padding: same}")
                .schedule.algorithm_name(),
            "stem");
}

// The gemm algorithm's ring of shared-memory buffers: 3 for 1x1 layers
// whose stages hold 8 rows of K, 2 for deeper stages and for im2col; a
// spec's count is the kernel's, and the buffers count in its shared memory.
TEST(Conv2dPlan, GemmRingOfStages) {
  PlanOptions h100;  // (a T4's 64 KiB of shared memory would hold 4 blocks)
  h100.target = parse_arch_list("90");
  const std::string thin = "{op: conv2d, n: 64, c: 24, c_out: 144, h: 56, w: 56, filter: 1, padding: valid";
  const KernelPlan p = plan(thin + "}", h100);
  EXPECT_EQ(p.schedule.summary(), "gemm: block_tile 32x128, k_step 8, 3 stages, vthreads 2x2 (4x4 outputs each)");
  EXPECT_EQ(p.smem_bytes, 3 * (8 * (32 + 4) + 8 * 128) * 4);
  // 64 sums, 2 x (4 + 4) fragments and 48: 144 registers, 7 blocks of 64 threads.
  EXPECT_EQ(p.number("min_blocks"), 7);
  const KernelPlan deep = plan("{op: conv2d, n: 64, c: 320, c_out: 1280, h: 7, w: 7, filter: 1, padding: valid}");
  EXPECT_EQ(deep.schedule.at("k_step"), 16);
  EXPECT_EQ(deep.schedule.at("stages"), 2);
  EXPECT_EQ(deep.schedule.summary().find("stages"), std::string::npos) << deep.schedule.summary();
  EXPECT_EQ(deep.smem_bytes, 2 * (16 * (32 + 4) + 16 * 128) * 4);
  const KernelPlan strided = plan("{op: conv2d, n: 8, c: 24, c_out: 64, h: 56, w: 56, filter: 3, stride: 2, "
                                  "padding: same, schedule: {algorithm: gemm, k_step: 8}}");
  EXPECT_EQ(strided.schedule.at("stages"), 2);
  const KernelPlan forced = plan(thin + ", schedule: {algorithm: gemm, k_step: 16, stages: 4}}");
  EXPECT_EQ(forced.schedule.at("stages"), 4);
  EXPECT_EQ(forced.smem_bytes, 4 * (16 * (32 + 4) + 16 * 128) * 4);
}

// The tile order (raster, swizzle) of both implicit GEMMs: the default is
// the grid's own (raster pixels, swizzle 1), which the summary leaves
// unsaid; a spec's order is the kernel's and is said, written as the one
// order it is on the grid: panels of raster pixels as wide as the columns
// of channel tiles are raster channels in panels of 1, and a grid of one
// column has only its own order.
TEST(PlanImplicitGemm, TileOrderIsTheSpecsOrTheGridsOwn) {
  PlanOptions h100a;
  h100a.target = parse_arch_list("90a-real;90-virtual");
  const std::string layer = "{op: conv2d, n: 8, c: 128, c_out: 1024, h: 28, w: 28, filter: 3, padding: same, "
                            "dtype: float16, layout: NHWC";
  const std::string one_column = "{op: conv2d, n: 8, c: 128, c_out: 64, h: 28, w: 28, filter: 3, padding: same, "
                                 "dtype: float16, layout: NHWC";
  // raster's words in order: pixels 0, channels 1.
  for (const std::string algorithm : {"implicit_gemm", "implicit_gemm_sm90"}) {
    SCOPED_TRACE(algorithm);
    const auto planned = [&](const std::string& shape, const std::string& order) {
      return plan_kernel(workload(shape + ", schedule: {algorithm: " + algorithm + order + "}}"), h100a);
    };
    KernelPlan p = planned(layer, "");
    EXPECT_EQ(p.schedule.at("raster"), 0);
    EXPECT_EQ(p.schedule.at("swizzle"), 1);
    EXPECT_EQ(p.schedule.summary().find("raster"), std::string::npos) << p.schedule.summary();
    const std::string plain = p.schedule.summary();
    const long long columns = p.number("n_tiles");
    ASSERT_GE(columns, 4);
    p = planned(layer, ", raster: channels, swizzle: 4");
    EXPECT_EQ(p.schedule.at("raster"), 1);
    EXPECT_EQ(p.schedule.at("swizzle"), 4);
    EXPECT_EQ(p.schedule.summary(), plain + ", raster channels, swizzle 4");
    p = planned(layer, ", swizzle: 2");
    EXPECT_EQ(p.schedule.summary(), plain + ", raster pixels, swizzle 2");
    // Panels as wide as the columns (or wider).
    p = planned(layer, ", raster: pixels, swizzle: 8");
    EXPECT_EQ(p.schedule.summary(), plain + (columns <= 8 ? ", raster channels, swizzle 1" : ", raster pixels, swizzle 8"));
    // One column of channel tiles: every order is the grid's.
    for (const std::string order : {", raster: channels, swizzle: 8", ", raster: pixels, swizzle: 4", ", raster: channels"}) {
      p = planned(one_column, order);
      EXPECT_EQ(p.number("n_tiles"), 1);
      EXPECT_EQ(p.schedule.at("raster"), 0) << order;
      EXPECT_EQ(p.schedule.at("swizzle"), 1) << order;
    }
  }
}

// Hopper's implicit GEMM (TMA and wgmma): only a library with an sm_90a
// image takes it; its default rule worked by hand on the H100 (132 SMs).
TEST(PlanImplicitGemmSm90, DefaultRuleAndLimitsWorkedByHand) {
  PlanOptions h100a;
  h100a.target = parse_arch_list("90a-real;90-virtual");
  // ResNet 3x3 at batch 32, 28x28, 128 -> 128: M = 25088. 256 x 128 tiles
  // make 98 blocks (one wave: 1 x 32768 / 1.18 = 27769), 128 x 128 make 196
  // (two waves: 32768), 128 x 64 392 (three: 44680): 256 x 128 in two
  // warpgroups, steps of 64 channels (128 bytes), 4 stages of 48 KiB. (By
  // default this layer is taken in turns, below; the spec turns that off.)
  KernelPlan p = plan_kernel(workload("{op: conv2d, n: 32, c: 128, c_out: 128, h: 28, w: 28, filter: 3, "
                                      "padding: same, dtype: float16, layout: NHWC, schedule: "
                                      "{algorithm: implicit_gemm_sm90, pingpong: false}}"),
                             h100a);
  EXPECT_EQ(p.schedule.summary(), "implicit_gemm_sm90: cta_tile 256x128x64, 2 warpgroup(s), 4 stages");
  EXPECT_EQ(p.min_arch, 90);
  EXPECT_EQ(p.max_arch, 90);
  EXPECT_EQ(p.block_threads, 384);
  // The ring (4 x (256 + 128) x 64 halves) outweighs the epilogue's tile
  // (256 x 136 floats); then 4 x 16 bytes of barriers, rounded to 128.
  EXPECT_EQ(p.smem_bytes, 4 * (256 + 128) * 64 * 2 + 128);
  // 256 -> 256 on 14x14: 50 blocks of 256 x 128 or 98 of 128 x 128 both
  // make one wave; 128 x 128's is the least work: one warpgroup, 6 stages.
  p = plan_kernel(workload("{op: conv2d, n: 32, c: 256, c_out: 256, h: 14, w: 14, filter: 3, padding: same, "
                           "dtype: bfloat16, layout: NHWC}"),
                  h100a);
  EXPECT_EQ(p.schedule.summary(), "implicit_gemm_sm90: cta_tile 128x128x64, 1 warpgroup(s), 6 stages");
  // A deep layer at batch 1: 128 x 64 tiles would make 16 blocks, fewer
  // than the SMs, so the tile and the split of K's 144 steps are the ones
  // of least predicted time, waves x (1 + steps x a step's time) + the
  // split's 0.5 + 0.2 x split_k x the tile's size in 64 x 64 tiles: 64 x
  // 64 (0.156 a step) split 8 makes 128 blocks, 1 + 18 x 0.156 + 2.1 = 5.91
  // us, ahead of 64 x 128 split 8 (1 + 18 x 0.17 + 3.7 = 7.76), 64 x 64
  // split 4 (1 + 36 x 0.156 + 1.3 = 7.92) and 128 x 128 split 8 (1 + 18 x
  // 0.31 + 6.9 = 13.48).
  p = plan_kernel(workload("{op: conv2d, n: 1, c: 1024, c_out: 1024, h: 7, w: 7, filter: 3, padding: same, "
                           "dtype: float16, layout: NHWC}"),
                  h100a);
  EXPECT_EQ(p.schedule.summary(), "implicit_gemm_sm90: cta_tile 64x64x64, 1 warpgroup(s), 6 stages, split_k 8");
  EXPECT_EQ(p.schedule.at("split_k"), 8);
  // 6 stages of (64 + 64) x 64 halves, then 6 x 16 bytes of barriers.
  EXPECT_EQ(p.smem_bytes, 6 * (64 + 64) * 64 * 2 + 128);
  // The split is the default tile's: a spec's own tile runs unsplit unless
  // it splits too.
  p = plan_kernel(workload("{op: conv2d, n: 1, c: 1024, c_out: 1024, h: 7, w: 7, filter: 3, padding: same, "
                           "dtype: float16, layout: NHWC, schedule: {algorithm: implicit_gemm_sm90, "
                           "cta_tile: [128, 64, 64]}}"),
                  h100a);
  EXPECT_EQ(p.schedule.summary(), "implicit_gemm_sm90: cta_tile 128x64x64, 1 warpgroup(s), 6 stages");
  p = plan_kernel(workload("{op: conv2d, n: 1, c: 1024, c_out: 1024, h: 7, w: 7, filter: 3, padding: same, "
                           "dtype: float16, layout: NHWC, schedule: {algorithm: implicit_gemm_sm90, cta_tile: [128, 64, 64], "
                           "split_k: 2}}"),
                  h100a);
  EXPECT_EQ(p.schedule.summary(), "implicit_gemm_sm90: cta_tile 128x64x64, 1 warpgroup(s), 6 stages, split_k 2");
  // A tile without warpgroups takes the count whose rows it fits: the
  // default's two warpgroups (ResNet's 28^2 layer at batch 32, above) for
  // 64 rows become one (the default's 4 stages kept); the default's one
  // (at batch 1) for 256 rows, two.
  p = plan_kernel(workload("{op: conv2d, n: 32, c: 128, c_out: 128, h: 28, w: 28, filter: 3, padding: same, "
                           "dtype: float16, layout: NHWC, schedule: {algorithm: implicit_gemm_sm90, "
                           "cta_tile: [64, 128, 64]}}"),
                  h100a);
  EXPECT_EQ(p.schedule.summary(), "implicit_gemm_sm90: cta_tile 64x128x64, 1 warpgroup(s), 4 stages");
  p = plan_kernel(workload("{op: conv2d, n: 1, c: 1024, c_out: 1024, h: 7, w: 7, filter: 3, padding: same, "
                           "dtype: float16, layout: NHWC, schedule: {algorithm: implicit_gemm_sm90, "
                           "cta_tile: [256, 32, 64]}}"),
                  h100a);
  EXPECT_EQ(p.schedule.summary(), "implicit_gemm_sm90: cta_tile 256x32x64, 2 warpgroup(s), 6 stages");
  // Two warpgroups without a tile: the default's 64 rows become 128, 64 a
  // warpgroup.
  p = plan_kernel(workload("{op: conv2d, n: 1, c: 1024, c_out: 1024, h: 7, w: 7, filter: 3, padding: same, "
                           "dtype: float16, layout: NHWC, schedule: {algorithm: implicit_gemm_sm90, warpgroups: 2}}"),
                  h100a);
  EXPECT_EQ(p.schedule.summary(), "implicit_gemm_sm90: cta_tile 128x64x64, 2 warpgroup(s), 6 stages");
  // ResNet's 7x7 layer at batch 32 (M = 1568): 104 blocks of 128 x 64, one
  // wave unsplit; 64 x 128 makes 100 blocks, 1 + 72 x 0.17 = 13.24 us,
  // against 128 x 128 split 2 (104 blocks: 1 + 36 x 0.31 + 2.1 = 14.26),
  // 64 x 64's two waves (2 x (1 + 72 x 0.156) = 24.46) and 128 x 128
  // unsplit (1 + 72 x 0.31 = 23.32): 64 x 128, unsplit.
  p = plan_kernel(workload("{op: conv2d, n: 32, c: 512, c_out: 512, h: 7, w: 7, filter: 3, padding: same, "
                           "dtype: float16, layout: NHWC}"),
                  h100a);
  EXPECT_EQ(p.schedule.summary(), "implicit_gemm_sm90: cta_tile 64x128x64, 1 warpgroup(s), 6 stages");
  // Two blocks an SM where the grid outnumbers the SMs and 4 stages or more
  // let them share one. ResNet's 64-channel 3x3 layer at batch 8 (M =
  // 25088): 196 blocks of 128 x 64. 6 stages of (128 + 64) x 64 halves take
  // 147,584 bytes, one block of the H100's 233,472 an SM (1 KiB reserved a
  // block); 4 take 98,432, two blocks (2 x 99,456 = 198,912). (By default
  // this layer is taken in turns, below; the spec turns that off.)
  p = plan_kernel(workload("{op: conv2d, n: 8, c: 64, c_out: 64, h: 56, w: 56, filter: 3, padding: same, "
                           "dtype: float16, layout: NHWC, schedule: {algorithm: implicit_gemm_sm90, pingpong: false}}"),
                  h100a);
  EXPECT_EQ(p.schedule.summary(), "implicit_gemm_sm90: cta_tile 128x64x64, 1 warpgroup(s), 4 stages");
  EXPECT_EQ(p.smem_bytes, 4 * (128 + 64) * 64 * 2 + 128);
  // Grids of no more blocks than SMs keep theirs (above: 98 blocks of 256 x
  // 128, 4 stages; of 128 x 128, 6); where 128 x 128 tiles outnumber the
  // SMs (ResNet's 128-channel 3x3 at batch 64 on 28^2: 392 blocks), two
  // blocks would need 3 stages: it keeps 6, unless pingpong (below).
  p = plan_kernel(workload("{op: conv2d, n: 64, c: 128, c_out: 128, h: 28, w: 28, filter: 3, padding: same, "
                           "dtype: float16, layout: NHWC, schedule: {algorithm: implicit_gemm_sm90, pingpong: false}}"),
                  h100a);
  EXPECT_EQ(p.schedule.summary(), "implicit_gemm_sm90: cta_tile 128x128x64, 1 warpgroup(s), 6 stages");
  // Those 392 tiles are 2.97 an SM, at least 2: by default, the tile is
  // taken in turns by two warpgroups of persistent blocks (pingpong), with
  // the most stages that fit beside the warpgroups' rows of outputs: 4 of
  // (128 + 128) x 64 halves, 2 x 64 x 136 floats, 4 x 16 + 16 bytes of
  // barriers.
  p = plan_kernel(workload("{op: conv2d, n: 64, c: 128, c_out: 128, h: 28, w: 28, filter: 3, padding: same, "
                           "dtype: float16, layout: NHWC}"),
                  h100a);
  EXPECT_EQ(p.schedule.summary(),
            "implicit_gemm_sm90: cta_tile 128x128x64, 2 warpgroup(s) in turns (pingpong, persistent), 4 stages");
  EXPECT_EQ(p.schedule.at("pingpong"), 1);
  EXPECT_EQ(p.smem_bytes, 4 * (128 + 128) * 64 * 2 + 2 * 64 * 136 * 4 + 128);
  // Pingpong's tiles are of 64 rows where a block's tiles, times 0.55,
  // are fewer than with 128 rows. 16 x 14^2 pixels, 384 -> 1536: 25 x 12 =
  // 300 tiles of 128 rows, 3 a block (of 132); 49 x 12 = 588 of 64, 5 a
  // block, and 5 x 0.55 = 2.75 < 3: 64 x 128 in turns, with 6 stages of
  // (64 + 128) x 64 halves beside 2 x 64 x 136 floats. 320 -> 1280 on 7^2
  // at batch 64: 250 tiles of 128 (2 a block), 490 of 64 (4 x 0.55 = 2.2):
  // 128 rows, 1.89 tiles an SM, not in turns. Batch 32's 28^2 layer above:
  // 196 tiles of 128 (2 a block), 392 of 64 (3 x 0.55 = 1.65), 2.97 an SM:
  // 64 x 128 in turns; batch 8's 64 -> 64 on 56^2: 196 of 128 x 64 (2),
  // 392 of 64 x 64 (3): 64 x 64 in turns. Float32 (tf32) is not taken in
  // turns by default; a spec may ask.
  p = plan_kernel(workload("{op: conv2d, n: 16, c: 384, c_out: 1536, h: 14, w: 14, filter: 1, padding: valid, "
                           "dtype: float16, layout: NHWC}"),
                  h100a);
  EXPECT_EQ(p.schedule.summary(),
            "implicit_gemm_sm90: cta_tile 64x128x64, 2 warpgroup(s) in turns (pingpong, persistent), 6 stages");
  EXPECT_EQ(p.smem_bytes, 6 * (64 + 128) * 64 * 2 + 2 * 64 * 136 * 4 + 128);
  p = plan_kernel(workload("{op: conv2d, n: 64, c: 320, c_out: 1280, h: 7, w: 7, filter: 1, padding: valid, "
                           "dtype: float16, layout: NHWC}"),
                  h100a);
  EXPECT_EQ(p.schedule.summary(), "implicit_gemm_sm90: cta_tile 256x128x64, 2 warpgroup(s), 4 stages");
  p = plan_kernel(workload("{op: conv2d, n: 32, c: 128, c_out: 128, h: 28, w: 28, filter: 3, padding: same, "
                           "dtype: float16, layout: NHWC}"),
                  h100a);
  EXPECT_EQ(p.schedule.summary(),
            "implicit_gemm_sm90: cta_tile 64x128x64, 2 warpgroup(s) in turns (pingpong, persistent), 6 stages");
  p = plan_kernel(workload("{op: conv2d, n: 8, c: 64, c_out: 64, h: 56, w: 56, filter: 3, padding: same, "
                           "dtype: float16, layout: NHWC}"),
                  h100a);
  EXPECT_EQ(p.schedule.summary(),
            "implicit_gemm_sm90: cta_tile 64x64x64, 2 warpgroup(s) in turns (pingpong, persistent), 6 stages");
  p = plan_kernel(workload("{op: conv2d, n: 64, c: 128, c_out: 128, h: 28, w: 28, filter: 3, padding: same, "
                           "dtype: float32, math: tf32, layout: NHWC}"),
                  h100a);
  EXPECT_EQ(p.schedule.at("pingpong"), 0);
  p = plan_kernel(workload("{op: conv2d, n: 64, c: 128, c_out: 128, h: 28, w: 28, filter: 3, padding: same, "
                           "dtype: float32, math: tf32, layout: NHWC, schedule: {algorithm: implicit_gemm_sm90, "
                           "pingpong: true}}"),
                  h100a);
  EXPECT_EQ(p.schedule.at("pingpong"), 1);
  EXPECT_EQ(p.schedule.at("cta_m"), 128);
  // A spec's own tile, split or stages is not taken in turns unless it asks
  // (6 stages of 128 x 128 fit one tile a block, not beside pingpong's rows
  // of outputs).
  p = plan_kernel(workload("{op: conv2d, n: 64, c: 128, c_out: 128, h: 28, w: 28, filter: 3, padding: same, "
                           "dtype: float16, layout: NHWC, schedule: {algorithm: implicit_gemm_sm90, stages: 6}}"),
                  h100a);
  EXPECT_EQ(p.schedule.summary(), "implicit_gemm_sm90: cta_tile 128x128x64, 1 warpgroup(s), 6 stages");
  // A spec's pingpong tile gets the most stages that fit beside it (6 of
  // 64 x 128, where the default's 128 x 128 took 4).
  p = plan_kernel(workload("{op: conv2d, n: 64, c: 128, c_out: 128, h: 28, w: 28, filter: 3, padding: same, "
                           "dtype: float16, layout: NHWC, schedule: {algorithm: implicit_gemm_sm90, pingpong: true, "
                           "cta_tile: [64, 128, 64]}}"),
                  h100a);
  EXPECT_EQ(p.schedule.summary(),
            "implicit_gemm_sm90: cta_tile 64x128x64, 2 warpgroup(s) in turns (pingpong, persistent), 6 stages");
  p = plan_kernel(workload("{op: conv2d, n: 64, c: 128, c_out: 128, h: 28, w: 28, filter: 3, padding: same, "
                           "dtype: float16, layout: NHWC, schedule: {algorithm: implicit_gemm_sm90, cta_tile: [128, 128, 64]}}"),
                  h100a);
  EXPECT_EQ(p.schedule.summary(), "implicit_gemm_sm90: cta_tile 128x128x64, 1 warpgroup(s), 6 stages");
  // With the epilogue in turns too, one tile of floats serves both
  // warpgroups: 64 x 192 in turns, a stage 256 x 64 halves (32,768 bytes),
  // two tiles of 64 x (192 + 8) floats (102,400) leave 3 stages of the
  // 232,448 bytes; one (51,200) leaves 5: 163,840 + 51,200 + 16 x 5 for the
  // ring's barriers + 32 for the turns' = 215,152, rounded to 215,168.
  p = plan_kernel(workload("{op: conv2d, n: 16, c: 384, c_out: 1536, h: 14, w: 14, filter: 1, padding: valid, "
                           "dtype: float16, layout: NHWC, schedule: {algorithm: implicit_gemm_sm90, pingpong: true, "
                           "cta_tile: [64, 192, 64]}}"),
                  h100a);
  EXPECT_EQ(p.schedule.summary(),
            "implicit_gemm_sm90: cta_tile 64x192x64, 2 warpgroup(s) in turns (pingpong, persistent), 3 stages");
  EXPECT_EQ(p.schedule.at("epilogue_turns"), 0);
  p = plan_kernel(workload("{op: conv2d, n: 16, c: 384, c_out: 1536, h: 14, w: 14, filter: 1, padding: valid, "
                           "dtype: float16, layout: NHWC, schedule: {algorithm: implicit_gemm_sm90, pingpong: true, "
                           "cta_tile: [64, 192, 64], epilogue_turns: true}}"),
                  h100a);
  EXPECT_EQ(p.schedule.summary(),
            "implicit_gemm_sm90: cta_tile 64x192x64, 2 warpgroup(s) in turns (pingpong, persistent), the epilogue in "
            "turns too, 5 stages");
  EXPECT_EQ(p.schedule.at("epilogue_turns"), 1);
  EXPECT_EQ(p.smem_bytes, 215168);
  // A one-warpgroup tile 128 channels wide becomes 96 wide where 96 covers
  // c_out in as many tiles: MobileNetV2's 960 -> 160 1x1 on 7^2 at batch 64
  // (M = 3136: 25 x 3 = 75 tiles of 128 x 64, fewer than the SMs) takes the
  // latency rule's 64 x 128, two tiles across 160 channels, and so 64 x 96;
  // 384 -> 96 on 14^2 (98 x 2 = 196 tiles of 128 x 64) takes the
  // throughput rule's 128 x 128, one tile, and so 128 x 96; 112 channels
  // would need two tiles of 96, one of 128: 128 x 128 stays. In half
  // precision the 64-row tile over 160 channels narrows on to two of 80
  // (one wgmma of N = 80 each); TF32 tiles are 16, 32 or a multiple of 32
  // wide, and keep 96.
  p = plan_kernel(workload("{op: conv2d, n: 64, c: 960, c_out: 160, h: 7, w: 7, filter: 1, padding: valid, "
                           "dtype: float16, layout: NHWC}"),
                  h100a);
  EXPECT_EQ(p.schedule.summary(), "implicit_gemm_sm90: cta_tile 64x80x64, 1 warpgroup(s), 6 stages");
  p = plan_kernel(workload("{op: conv2d, n: 64, c: 960, c_out: 160, h: 7, w: 7, filter: 1, padding: valid, "
                           "dtype: float32, math: tf32, layout: NHWC, schedule: {algorithm: implicit_gemm_sm90}}"),
                  h100a);
  EXPECT_EQ(p.schedule.at("cta_n"), 96);
  // 192 channels are two tiles of 96 already; 176 would be two of 88, not a
  // multiple of 16: both keep 96.
  for (const int c_out : {176, 192}) {
    p = plan_kernel(workload("{op: conv2d, n: 64, c: 960, c_out: " + std::to_string(c_out) +
                             ", h: 7, w: 7, filter: 1, padding: valid, dtype: bfloat16, layout: NHWC}"),
                    h100a);
    EXPECT_EQ(p.schedule.at("cta_n"), 96) << c_out;
  }
  p = plan_kernel(workload("{op: conv2d, n: 64, c: 384, c_out: 96, h: 14, w: 14, filter: 1, padding: valid, "
                           "dtype: bfloat16, layout: NHWC}"),
                  h100a);
  EXPECT_EQ(p.schedule.summary(), "implicit_gemm_sm90: cta_tile 128x96x64, 1 warpgroup(s), 6 stages");
  p = plan_kernel(workload("{op: conv2d, n: 64, c: 480, c_out: 112, h: 14, w: 14, filter: 1, padding: valid, "
                           "dtype: float16, layout: NHWC}"),
                  h100a);
  EXPECT_EQ(p.schedule.summary(), "implicit_gemm_sm90: cta_tile 128x128x64, 1 warpgroup(s), 6 stages");
  // The ring holds no more buffers than the block's steps of K (at least
  // 2): 96 -> 576 1x1 on 14^2 at batch 64 (2 steps of 64 channels) takes 2
  // where it took 4; its bytes are then the epilogue's tile of 256 x 136
  // floats, and 2 x 16 of barriers. 1024 -> 256 1x1 on 14^2 at batch 1:
  // 16 steps split 4 ways, 4 buffers a block.
  p = plan_kernel(workload("{op: conv2d, n: 64, c: 96, c_out: 576, h: 14, w: 14, filter: 1, padding: valid, "
                           "dtype: float16, layout: NHWC, schedule: {algorithm: implicit_gemm_sm90, pingpong: false}}"),
                  h100a);
  EXPECT_EQ(p.schedule.summary(), "implicit_gemm_sm90: cta_tile 256x128x64, 2 warpgroup(s), 2 stages");
  EXPECT_EQ(p.smem_bytes, 256 * 136 * 4 + 128);
  // Taken in turns (by default: 98 x 5 = 490 tiles of 128 x 128, 3.7 an
  // SM), the ring is not capped at a tile's steps: the copying warp runs
  // on into the next tile. 4 stages fit beside the rows of outputs.
  p = plan_kernel(workload("{op: conv2d, n: 64, c: 96, c_out: 576, h: 14, w: 14, filter: 1, padding: valid, "
                           "dtype: float16, layout: NHWC}"),
                  h100a);
  EXPECT_EQ(p.schedule.summary(),
            "implicit_gemm_sm90: cta_tile 128x128x64, 2 warpgroup(s) in turns (pingpong, persistent), 4 stages");
  p = plan_kernel(workload("{op: conv2d, n: 1, c: 1024, c_out: 256, h: 14, w: 14, filter: 1, padding: valid, "
                           "dtype: float16, layout: NHWC}"),
                  h100a);
  EXPECT_EQ(p.schedule.summary(), "implicit_gemm_sm90: cta_tile 64x64x64, 1 warpgroup(s), 4 stages, split_k 4");
  // Thin 1x1 layers take neither (32 input channels: a step of mostly
  // zeros) but pointwise.
  p = plan_kernel(workload("{op: conv2d, n: 64, c: 32, c_out: 192, h: 28, w: 28, filter: 1, padding: valid, "
                           "dtype: float16, layout: NHWC}"),
                  h100a);
  EXPECT_EQ(p.schedule.algorithm_name(), "pointwise");
  // Float32 with math tf32 takes the same tiles in steps of 32 floats (128
  // bytes); 3xtf32 is implicit_gemm's alone.
  p = plan_kernel(workload("{op: conv2d, n: 32, c: 128, c_out: 128, h: 28, w: 28, filter: 3, padding: same, "
                           "dtype: float32, math: tf32, layout: NHWC}"),
                  h100a);
  EXPECT_EQ(p.schedule.summary(), "implicit_gemm_sm90: cta_tile 256x128x32, 2 warpgroup(s), 4 stages");
  p = plan_kernel(workload("{op: conv2d, n: 32, c: 128, c_out: 128, h: 28, w: 28, filter: 3, padding: same, "
                           "dtype: float32, math: 3xtf32, layout: NHWC}"),
                  h100a);
  EXPECT_EQ(p.schedule.algorithm_name(), "implicit_gemm");
  // A library whose sm_90 code is plain sm_90 (no 90a image) never takes it,
  // and a spec that asks for it is told why.
  PlanOptions h100;
  h100.target = parse_arch_list("90");
  p = plan_kernel(workload("{op: conv2d, n: 32, c: 128, c_out: 128, h: 28, w: 28, filter: 3, padding: same, "
                           "dtype: float16, layout: NHWC}"),
                  h100);
  EXPECT_EQ(p.schedule.algorithm_name(), "implicit_gemm");
  std::vector<Diagnostic> errors = spec_errors([&] {
    plan_kernel(workload("{op: conv2d, n: 1, c: 64, c_out: 64, h: 8, w: 8, filter: 3, padding: same, "
                         "dtype: float16, layout: NHWC, schedule: {algorithm: implicit_gemm_sm90}}"),
                h100);
  });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].str().find("only an sm_90a image holds; this library is built for 90"), std::string::npos);
  // Input channels that do not fill 16-byte rows; tiles wgmma does not take.
  errors = spec_errors([&] {
    plan_kernel(workload("{op: conv2d, n: 1, c: 12, c_out: 64, h: 8, w: 8, filter: 3, padding: same, "
                         "dtype: float16, layout: NHWC, schedule: {algorithm: implicit_gemm_sm90}}"),
                h100a);
  });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].str().find("c must be a multiple of 8"), std::string::npos);
  errors = spec_errors([&] {
    plan_kernel(workload("{op: conv2d, n: 1, c: 64, c_out: 64, h: 8, w: 8, filter: 3, padding: same, "
                         "dtype: float16, layout: NHWC, schedule: {algorithm: implicit_gemm_sm90, "
                         "cta_tile: [128, 256, 64], warpgroups: 1, stages: 3}}"),
                h100a);
  });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].str().find("256 accumulators; at most 128"), std::string::npos);
  // Every block of a split sums at least one step of K (a 1x1 layer of 64
  // channels has one).
  errors = spec_errors([&] {
    plan_kernel(workload("{op: conv2d, n: 1, c: 64, c_out: 64, h: 8, w: 8, filter: 1, padding: valid, "
                         "dtype: float16, layout: NHWC, schedule: {algorithm: implicit_gemm_sm90, split_k: 2}}"),
                h100a);
  });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].str().find("split_k 2 splits K into more parts than its 1 steps of 64 channels"),
            std::string::npos);
  // Pingpong: two warpgroups, each a whole tile of 64 or 128 rows, unsplit.
  // The errors of a 28x28 layer's implicit_gemm_sm90 schedule with `knobs` added.
  const auto sm90_errors = [&](const std::string& knobs) {
    return spec_errors([&] {
      plan_kernel(workload("{op: conv2d, n: 4, c: 64, c_out: 64, h: 28, w: 28, filter: 3, padding: same, "
                           "dtype: float16, layout: NHWC, schedule: {algorithm: implicit_gemm_sm90" +
                           knobs + "}}"),
                  h100a);
    });
  };
  const auto pingpong_errors = [&](const std::string& knobs) { return sm90_errors(", pingpong: true" + knobs); };
  errors = pingpong_errors(", warpgroups: 1");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].str().find("warpgroups 1 with pingpong: its two warpgroups take turns"), std::string::npos);
  errors = pingpong_errors(", cta_tile: [256, 64, 64]");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].str().find("cta_tile 256 pixels with pingpong: a warpgroup takes a whole tile, 64 or 128 rows"),
            std::string::npos);
  errors = pingpong_errors(", split_k: 2");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].str().find("split_k 2 with pingpong"), std::string::npos);
  // The epilogue in turns is pingpong's alone.
  errors = sm90_errors(", pingpong: false, epilogue_turns: true");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].str().find("epilogue_turns without pingpong: only pingpong's two warpgroups take turns"),
            std::string::npos);
  errors = pingpong_errors(", cta_tile: [128, 256, 64]");  // (and its shared memory)
  ASSERT_FALSE(errors.empty());
  EXPECT_NE(errors[0].str().find("in one warpgroup (pingpong) gives a thread 256 accumulators; at most 128 fit its "
                                 "registers: use a smaller tile (cta_m x cta_n at most 16384)"),
            std::string::npos);
  EXPECT_NO_THROW(plan_kernel(workload("{op: conv2d, n: 4, c: 64, c_out: 64, h: 28, w: 28, filter: 3, padding: same, "
                                       "dtype: float16, layout: NHWC, schedule: {algorithm: implicit_gemm_sm90, "
                                       "pingpong: true, cta_tile: [64, 256, 64]}}"),
                              h100a));
  // Float32 filter tiles CUTLASS's layouts divide: 16, 32 or multiples of 32.
  errors = spec_errors([&] {
    plan_kernel(workload("{op: conv2d, n: 4, c: 64, c_out: 64, h: 28, w: 28, filter: 3, padding: same, "
                         "dtype: float32, math: tf32, layout: NHWC, schedule: {algorithm: implicit_gemm_sm90, "
                         "cta_tile: [128, 80, 32], warpgroups: 1}}"),
                h100a);
  });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].str().find("cta_tile 80 channels in float32: 16, 32, or a multiple of 32"), std::string::npos);
}

// Thin 1x1 layers of half elements take the pointwise algorithm; its
// default rule and limits, worked by hand on the H100 (132 SMs: the fewest
// tiles a warp, up to 32, that make at most 264 blocks, two an SM, of 4
// warps, or of 3 where 4 need more than one tile a warp and 3 leave the
// busiest SM fewer tiles).
TEST(PlanPointwise, DefaultRuleAndLimitsWorkedByHand) {
  PlanOptions h100;
  h100.target = parse_arch_list("90");
  // MobileNetV2's 16 -> 96 on 112^2 at batch 64: 802,816 pixels make 50,176
  // tiles of 16 x 96; 4 warps of 32 (the most) make 392 blocks, 384 tiles
  // on the busiest SM; 3 warps of 32 523 blocks and the same 384: 4 warps.
  // Shared memory: the filter's 96 rows of 16 + 8 channels, 2 x 96 floats,
  // and per warp 2 input tiles of 16 x 24 and a staging tile of 16 x (96 + 8).
  KernelPlan p = plan_kernel(workload("{op: conv2d, n: 64, c: 16, c_out: 96, h: 112, w: 112, filter: 1, "
                                      "padding: valid, epilogue: scale_shift, activation: relu6, dtype: float16, "
                                      "layout: NHWC}"),
                             h100);
  EXPECT_EQ(p.schedule.summary(), "pointwise: channel_tile 96, warps_per_block 4, tiles_per_warp 32, 2 stages");
  EXPECT_EQ(p.smem_bytes, 96 * 24 * 2 + 2 * 96 * 4 + 4 * (2 * 16 * 24 + 16 * 104) * 2);
  EXPECT_EQ(p.block_threads, 128);
  EXPECT_EQ(p.min_arch, 80);
  EXPECT_EQ(p.alignment, 16);
  EXPECT_EQ(p.number("block_pixels"), 16 * 4 * 32);
  EXPECT_EQ(p.number("channel_tiles"), 1);
  // 32 -> 192 on 28^2: three equal tiles of 64 (more than 144 channels, a
  // thin layer without a residual, and 3 x 64 covers no more columns than
  // 2 x 96); 3,136 tiles of pixels x 3: 4 warps of 9 make 88 blocks of
  // pixels x 3 channel tiles (264 blocks, 2 an SM). At batch 1 (49 tiles of
  // pixels) one tile a warp: 4 warps, 13 blocks of pixels x 3.
  p = plan_kernel(workload("{op: conv2d, n: 64, c: 32, c_out: 192, h: 28, w: 28, filter: 1, padding: valid, "
                           "dtype: float16, layout: NHWC}"),
                  h100);
  EXPECT_EQ(p.schedule.summary(), "pointwise: channel_tile 64, warps_per_block 4, tiles_per_warp 9, 2 stages");
  EXPECT_EQ(p.number("channel_tiles"), 3);
  EXPECT_EQ(plan_kernel(workload("{op: conv2d, n: 1, c: 32, c_out: 192, h: 28, w: 28, filter: 1, padding: valid, "
                                 "dtype: float16, layout: NHWC}"),
                        h100)
                .schedule.summary(),
            "pointwise: channel_tile 64, warps_per_block 4, tiles_per_warp 1, 2 stages");
  // The default's channel tile of a 1x1 NHWC layer on 28^2 at batch 64.
  const auto channel_tile = [&](const std::string& layer) {
    return plan_kernel(workload("{op: conv2d, n: 64, h: 28, w: 28, filter: 1, padding: valid, layout: NHWC, " +
                                layer + "}"),
                       h100)
        .schedule.at("channel_tile");
  };
  // With a residual, two tiles of 96 (4 warps of 6: 131 x 2 blocks); in
  // float32, two of 96 too (tiles of at most 144).
  EXPECT_EQ(plan_kernel(workload("{op: conv2d, n: 64, c: 32, c_out: 192, h: 28, w: 28, filter: 1, padding: valid, "
                                 "residual: true, dtype: float16, layout: NHWC}"),
                        h100)
                .schedule.summary(),
            "pointwise: channel_tile 96, warps_per_block 4, tiles_per_warp 6, 2 stages");
  EXPECT_EQ(channel_tile("c: 32, c_out: 192, math: tf32"), 96);
  // 32 -> 256: four of 64 (three of 96 would be 88 wide, 264 columns).
  EXPECT_EQ(channel_tile("c: 32, c_out: 256, dtype: float16"), 64);
  // 40 -> 240 in bfloat16: three tiles of 80 (four of 64 would cover 256
  // columns); 40 -> 120 one of 120 (15 mma tiles of 8, odd: staging rows of
  // 120 + 16), K padded to 48. In float32 (math tf32) 240 channels make two
  // tiles of 120.
  p = plan_kernel(workload("{op: conv2d, n: 64, c: 40, c_out: 240, h: 28, w: 28, filter: 1, padding: valid, "
                           "dtype: bfloat16, layout: NHWC}"),
                  h100);
  EXPECT_EQ(p.schedule.at("channel_tile"), 80);
  EXPECT_EQ(p.number("output_pitch"), 88);
  p = plan_kernel(workload("{op: conv2d, n: 64, c: 40, c_out: 120, h: 28, w: 28, filter: 1, padding: valid, "
                           "dtype: bfloat16, layout: NHWC}"),
                  h100);
  EXPECT_EQ(p.schedule.at("channel_tile"), 120);
  EXPECT_EQ(p.number("k_pad"), 48);
  EXPECT_EQ(p.number("output_pitch"), 136);
  EXPECT_EQ(channel_tile("c: 40, c_out: 240, dtype: float32, math: tf32"), 120);
  // Expansions of 6 from up to 96 channels, where each of 132 x 8 warps
  // gets a tile. 64 -> 384 on 14^2: 784 x 4 tiles of 96; 4 warps of 3 make
  // 264 blocks (3 warps of 4 too, 24 tiles on the busiest SM either way).
  // 96 -> 576: 6 tiles of 96; 4 warps need 5 tiles for 240 blocks (40 on
  // the busiest SM), 3 warps 6 for 264 (36): 3 warps.
  p = plan_kernel(workload("{op: conv2d, n: 64, c: 64, c_out: 384, h: 14, w: 14, filter: 1, padding: valid, "
                           "dtype: float16, layout: NHWC}"),
                  h100);
  EXPECT_EQ(p.schedule.summary(), "pointwise: channel_tile 96, warps_per_block 4, tiles_per_warp 3, 2 stages");
  p = plan_kernel(workload("{op: conv2d, n: 64, c: 96, c_out: 576, h: 14, w: 14, filter: 1, padding: valid, "
                           "dtype: bfloat16, layout: NHWC}"),
                  h100);
  EXPECT_EQ(p.schedule.summary(), "pointwise: channel_tile 96, warps_per_block 3, tiles_per_warp 6, 2 stages");
  EXPECT_EQ(p.block_threads, 96);
  // At batch 22, 270 x 4 tiles: 1.02 for each of 132 x 8 warps. 4 warps of
  // 2 make 136 blocks (16 tiles on an SM with two), 3 warps of 2 make 180
  // (12): 3 warps.
  p = plan_kernel(workload("{op: conv2d, n: 22, c: 64, c_out: 384, h: 14, w: 14, filter: 1, padding: valid, "
                           "dtype: float16, layout: NHWC}"),
                  h100);
  EXPECT_EQ(p.schedule.summary(), "pointwise: channel_tile 96, warps_per_block 3, tiles_per_warp 2, 2 stages");
  // Not: at batch 21 (0.98 tiles a warp) or 8, from 104 or 160 channels, an
  // expansion of 5 or 4, or in float32.
  for (const char* text : {"{op: conv2d, n: 21, c: 64, c_out: 384, h: 14, w: 14, filter: 1, padding: valid, "
                           "dtype: float16, layout: NHWC}",
                           "{op: conv2d, n: 8, c: 64, c_out: 384, h: 14, w: 14, filter: 1, padding: valid, "
                           "dtype: float16, layout: NHWC}",
                           "{op: conv2d, n: 64, c: 104, c_out: 624, h: 14, w: 14, filter: 1, padding: valid, "
                           "dtype: float16, layout: NHWC}",
                           "{op: conv2d, n: 64, c: 160, c_out: 960, h: 7, w: 7, filter: 1, padding: valid, "
                           "dtype: float16, layout: NHWC}",
                           "{op: conv2d, n: 64, c: 64, c_out: 320, h: 14, w: 14, filter: 1, padding: valid, "
                           "dtype: float16, layout: NHWC}",
                           "{op: conv2d, n: 64, c: 64, c_out: 256, h: 14, w: 14, filter: 1, padding: valid, "
                           "dtype: float16, layout: NHWC}",
                           "{op: conv2d, n: 64, c: 64, c_out: 384, h: 14, w: 14, filter: 1, padding: valid, "
                           "dtype: float32, math: tf32, layout: NHWC}"}) {
    EXPECT_NE(plan_kernel(workload(text), h100).schedule.algorithm_name(), "pointwise") << text;
  }
  // Narrow outputs from deeper inputs: 96 -> 24 on 56^2, one tile of 24
  // (3 mma tiles of 8, odd: staging rows of 24 + 16), K of 96 in rows of
  // 96 + 8; 12,544 tiles over 8 warps an SM (132 SMs): 11.9 a warp, 12, in
  // blocks of 8 warps.
  p = plan_kernel(workload("{op: conv2d, n: 64, c: 96, c_out: 24, h: 56, w: 56, filter: 1, padding: valid, "
                           "dtype: float16, layout: NHWC}"),
                  h100);
  EXPECT_EQ(p.schedule.summary(), "pointwise: channel_tile 24, warps_per_block 8, tiles_per_warp 12, 2 stages");
  EXPECT_EQ(p.smem_bytes, 24 * 104 * 2 + 2 * 24 * 4 + 8 * (2 * 16 * 104 + 16 * 40) * 2);
  // In float32 it keeps the power of two nearest to 16 warps an SM: 5.9 a
  // warp, 8, in blocks of 4.
  EXPECT_EQ(plan_kernel(workload("{op: conv2d, n: 64, c: 96, c_out: 24, h: 56, w: 56, filter: 1, padding: valid, "
                                 "dtype: float32, math: tf32, layout: NHWC}"),
                        h100)
                .schedule.summary(),
            "pointwise: channel_tile 24, warps_per_block 4, tiles_per_warp 8, 2 stages");
  // Thin inputs keep it in half precision too: 32 -> 16 on 112^2, 50,176
  // tiles, 23.8 a warp: 32.
  EXPECT_EQ(plan_kernel(workload("{op: conv2d, n: 64, c: 32, c_out: 16, h: 112, w: 112, filter: 1, "
                                 "padding: valid, dtype: float16, layout: NHWC}"),
                        h100)
                .schedule.summary(),
            "pointwise: channel_tile 16, warps_per_block 4, tiles_per_warp 32, 2 stages");
  EXPECT_EQ(plan_kernel(workload("{op: conv2d, n: 1, c: 144, c_out: 24, h: 56, w: 56, filter: 1, padding: valid, "
                                 "dtype: bfloat16, layout: NHWC}"),
                        h100)
                .schedule.algorithm_name(),
            "pointwise");
  // Up to 40 outputs from up to 240 channels: tiles a warp the count
  // nearest to the tiles over 132 x 8 warps, in one block of 8 warps an SM
  // where that is 3 or more. MobileNetV2's 144 -> 32 on 28^2 at batch 64:
  // 3,136 tiles, 2.97 a warp: 3 (not a power of two), 8 warps (131 blocks
  // of 384 pixels); at batch 1, 49 tiles: 1, 4 warps. EfficientNet-B0's
  // 240 -> 40 in bfloat16: one tile of 40 (5 mma tiles, odd: staging rows
  // of 40 + 16), 8 warps; in a library for sm_86 too (99 KiB of shared
  // memory; the filter's 40 rows of 240 + 8 channels and 8 warps' rings of
  // 2 x 16 such rows and staging tiles take 161,472 bytes) the warps halve
  // back to 4.
  p = plan_kernel(workload("{op: conv2d, n: 64, c: 144, c_out: 32, h: 28, w: 28, filter: 1, padding: valid, "
                           "dtype: float16, layout: NHWC}"),
                  h100);
  EXPECT_EQ(p.schedule.summary(), "pointwise: channel_tile 32, warps_per_block 8, tiles_per_warp 3, 2 stages");
  EXPECT_EQ(p.number("block_pixels"), 16 * 8 * 3);
  EXPECT_EQ(p.block_threads, 256);
  EXPECT_TRUE(p.flag("one_block_an_sm"));  // its launch bounds say so to ptxas
  // 8 warps set by hand on a grid of many blocks an SM: ptxas's default bounds.
  EXPECT_FALSE(plan_kernel(workload("{op: conv2d, n: 64, c: 144, c_out: 32, h: 56, w: 56, filter: 1, padding: valid, "
                                    "dtype: float16, layout: NHWC, schedule: {warps_per_block: 8, tiles_per_warp: 1}}"),
                           h100)
                   .flag("one_block_an_sm"));
  p = plan_kernel(workload("{op: conv2d, n: 1, c: 144, c_out: 32, h: 28, w: 28, filter: 1, padding: valid, "
                           "dtype: float16, layout: NHWC}"),
                  h100);
  EXPECT_EQ(p.schedule.summary(), "pointwise: channel_tile 32, warps_per_block 4, tiles_per_warp 1, 2 stages");
  EXPECT_FALSE(p.flag("one_block_an_sm"));
  const Workload effnet_240_to_40 = workload(
      "{op: conv2d, n: 64, c: 240, c_out: 40, h: 28, w: 28, filter: 1, padding: valid, dtype: bfloat16, layout: NHWC}");
  p = plan_kernel(effnet_240_to_40, h100);
  EXPECT_EQ(p.schedule.summary(), "pointwise: channel_tile 40, warps_per_block 8, tiles_per_warp 3, 2 stages");
  EXPECT_EQ(p.number("output_pitch"), 56);
  PlanOptions with_sm86;
  with_sm86.target = parse_arch_list("80;86;90");
  p = plan_kernel(effnet_240_to_40, with_sm86);
  EXPECT_EQ(p.schedule.summary(), "pointwise: channel_tile 40, warps_per_block 4, tiles_per_warp 3, 2 stages");
  // Deeper than 40 channels with more than 40 outputs, deeper than 240, or
  // channel counts off 16-byte vectors: implicit_gemm.
  for (const char* text : {"{op: conv2d, n: 64, c: 48, c_out: 96, h: 56, w: 56, filter: 1, padding: valid, "
                           "dtype: float16, layout: NHWC}",
                           "{op: conv2d, n: 64, c: 144, c_out: 48, h: 28, w: 28, filter: 1, padding: valid, "
                           "dtype: float16, layout: NHWC}",
                           "{op: conv2d, n: 64, c: 248, c_out: 32, h: 28, w: 28, filter: 1, padding: valid, "
                           "dtype: float16, layout: NHWC}",
                           "{op: conv2d, n: 64, c: 248, c_out: 24, h: 56, w: 56, filter: 1, padding: valid, "
                           "dtype: float16, layout: NHWC}",
                           "{op: conv2d, n: 64, c: 12, c_out: 96, h: 56, w: 56, filter: 1, padding: valid, "
                           "dtype: float16, layout: NHWC}",
                           "{op: conv2d, n: 64, c: 16, c_out: 90, h: 56, w: 56, filter: 1, padding: valid, "
                           "dtype: float16, layout: NHWC}"}) {
    EXPECT_EQ(plan_kernel(workload(text), h100).schedule.algorithm_name(), "implicit_gemm") << text;
  }
  // Forced on deep inputs, the default narrows the tile and drops warps
  // until it fits the tightest GPU of the library (sm_86: 101,376 bytes).
  PlanOptions ampere;
  ampere.target = parse_arch_list("80;86");
  p = plan_kernel(workload("{op: conv2d, n: 2, c: 512, c_out: 256, h: 7, w: 7, filter: 1, padding: valid, "
                           "dtype: float16, layout: NHWC, schedule: {algorithm: pointwise}}"),
                  ampere);
  EXPECT_LE(p.smem_bytes, 101376);
  EXPECT_EQ(p.schedule.summary(), "pointwise: channel_tile 56, warps_per_block 1, tiles_per_warp 1, 2 stages");
  // Blocks of 3 warps drop to 2, not 1: 256 -> 576 on 14^2 at batch 64
  // takes 3 warps of 6 tiles of 96 channels for the H100; in a library for
  // sm_86 too (99 KiB) 3 warps need 112,128 bytes, 2 warps 91,904.
  p = plan_kernel(workload("{op: conv2d, n: 64, c: 256, c_out: 576, h: 14, w: 14, filter: 1, padding: valid, "
                           "dtype: float16, layout: NHWC, schedule: {algorithm: pointwise}}"),
                  with_sm86);
  EXPECT_EQ(p.schedule.summary(), "pointwise: channel_tile 96, warps_per_block 2, tiles_per_warp 6, 2 stages");
  EXPECT_EQ(p.smem_bytes, 91904);
  // What it refuses, at the key to blame.
  const auto refusal = [&](const std::string& text) {
    const std::vector<Diagnostic> errors = spec_errors([&] { plan_kernel(workload(text), h100); });
    return errors.empty() ? std::string("(accepted)") : errors[0].str();
  };
  EXPECT_NE(refusal("{op: conv2d, n: 1, c: 16, c_out: 16, h: 8, w: 8, filter: 3, padding: same, dtype: float16, "
                    "layout: NHWC, schedule: {algorithm: pointwise}}")
                .find("error: algorithm 'pointwise' computes 1x1 convolutions with stride 1 and no padding; this one "
                      "is 3x3, stride 1x1, padded: use implicit_gemm"),
            std::string::npos);
  EXPECT_NE(refusal("{op: conv2d, n: 1, c: 12, c_out: 16, h: 8, w: 8, filter: 1, padding: valid, dtype: float16, "
                    "layout: NHWC, schedule: {algorithm: pointwise}}")
                .find("c (12) and c_out (16) must be multiples of 8; use implicit_gemm"),
            std::string::npos);
  EXPECT_NE(refusal("{op: conv2d, n: 1, c: 16, c_out: 96, h: 8, w: 8, filter: 1, padding: valid, dtype: float16, "
                    "layout: NHWC, schedule: {algorithm: pointwise, channel_tile: 104}}")
                .find("channel_tile 104 is wider than the 96 output channels: at most 96"),
            std::string::npos);
  EXPECT_NE(refusal("{op: conv2d, n: 1, c: 256, c_out: 256, h: 8, w: 8, filter: 1, padding: valid, dtype: float16, "
                    "layout: NHWC, schedule: {algorithm: pointwise, channel_tile: 256, warps_per_block: 16, "
                    "stages: 4}}")
                .find("bytes of shared memory per block"),
            std::string::npos);
  EXPECT_NE(refusal("{op: conv2d, n: 1, c: 16, c_out: 96, h: 8, w: 8, filter: 1, padding: valid, dtype: float16, "
                    "layout: NHWC, schedule: {algorithm: pointwise, channel_tile: 12}}"),
            "(accepted)");
  // Its own knobs alone choose it.
  p = plan_kernel(workload("{op: conv2d, n: 1, c: 16, c_out: 96, h: 8, w: 8, filter: 1, padding: valid, "
                           "dtype: float16, layout: NHWC, schedule: {tiles_per_warp: 3}}"),
                  h100);
  EXPECT_EQ(p.schedule.summary(), "pointwise: channel_tile 96, warps_per_block 4, tiles_per_warp 3, 2 stages");
}

// Float32 with math tf32: the same tiles in m16n8k8 steps of 8 floats (K
// padded to 8, channel counts in vectors of 4); thin layers only where
// every warp of the rule gets a tile, narrow outputs at any batch; no
// 3xtf32.
TEST(PlanPointwise, Float32InMathTf32WorkedByHand) {
  PlanOptions h100;
  h100.target = parse_arch_list("90");
  // MobileNetV2's 16 -> 96 on 112^2 at batch 64: the half rule's tile and
  // 32 tiles a warp. Shared memory: the filter's 96 rows of 16 + 4 floats,
  // 2 x 96 parameters, and per warp 2 input tiles of 16 x 20 floats and a
  // staging tile of 16 x (96 + 8).
  KernelPlan p = plan_kernel(workload("{op: conv2d, n: 64, c: 16, c_out: 96, h: 112, w: 112, filter: 1, "
                                      "padding: valid, epilogue: scale_shift, activation: relu6, dtype: float32, "
                                      "math: tf32, layout: NHWC}"),
                             h100);
  EXPECT_EQ(p.schedule.summary(), "pointwise: channel_tile 96, warps_per_block 4, tiles_per_warp 32, 2 stages");
  EXPECT_EQ(p.smem_bytes, 96 * 20 * 4 + 2 * 96 * 4 + 4 * (2 * 16 * 20 + 16 * 104) * 4);
  EXPECT_EQ(p.number("k_pad"), 16);
  EXPECT_EQ(p.number("k_steps"), 2);
  EXPECT_EQ(p.number("mma_k"), 8);
  EXPECT_EQ(p.alignment, 16);
  // 20 channels: K padded to 24 (3 steps of 8), rows of 24 + 4.
  p = plan_kernel(workload("{op: conv2d, n: 64, c: 20, c_out: 44, h: 56, w: 56, filter: 1, padding: valid, "
                           "dtype: float32, math: tf32, layout: NHWC}"),
                  h100);
  EXPECT_EQ(p.schedule.algorithm_name(), "pointwise");
  EXPECT_EQ(p.number("k_pad"), 24);
  EXPECT_EQ(p.number("k_steps"), 3);
  EXPECT_EQ(p.number("input_pitch"), 28);
  // At batch 1, 16 -> 96 on 112^2 makes 784 tiles, 0.37 for each of 132 x
  // 16 warps: implicit_gemm; 96 -> 24 on 56^2 (narrow) stays pointwise.
  EXPECT_EQ(plan_kernel(workload("{op: conv2d, n: 1, c: 16, c_out: 96, h: 112, w: 112, filter: 1, "
                                 "padding: valid, dtype: float32, math: tf32, layout: NHWC}"),
                        h100)
                .schedule.algorithm_name(),
            "implicit_gemm");
  EXPECT_EQ(plan_kernel(workload("{op: conv2d, n: 1, c: 96, c_out: 24, h: 56, w: 56, filter: 1, "
                                 "padding: valid, dtype: float32, math: tf32, layout: NHWC}"),
                        h100)
                .schedule.algorithm_name(),
            "pointwise");
  // Outputs of 32 and 40 channels from deeper inputs stay with implicit_gemm
  // in float32.
  EXPECT_EQ(plan_kernel(workload("{op: conv2d, n: 64, c: 144, c_out: 32, h: 28, w: 28, filter: 1, "
                                 "padding: valid, dtype: float32, math: tf32, layout: NHWC}"),
                        h100)
                .schedule.algorithm_name(),
            "implicit_gemm");
  // A batch the call gives counts as 1.
  EXPECT_EQ(plan_kernel(workload("{op: conv2d, n: runtime, c: 16, c_out: 96, h: 112, w: 112, filter: 1, "
                                 "padding: valid, dtype: float32, math: tf32, layout: NHWC}"),
                        h100)
                .schedule.algorithm_name(),
            "implicit_gemm");
  // Channel counts off vectors of 4, 3xtf32 and strict fp32: not pointwise.
  EXPECT_EQ(plan_kernel(workload("{op: conv2d, n: 64, c: 18, c_out: 96, h: 56, w: 56, filter: 1, padding: valid, "
                                 "dtype: float32, math: tf32, layout: NHWC}"),
                        h100)
                .schedule.algorithm_name(),
            "implicit_gemm");
  EXPECT_EQ(plan_kernel(workload("{op: conv2d, n: 64, c: 16, c_out: 96, h: 112, w: 112, filter: 1, "
                                 "padding: valid, dtype: float32, math: 3xtf32, layout: NHWC}"),
                        h100)
                .schedule.algorithm_name(),
            "implicit_gemm");
  const auto refusal = [&](const std::string& text) { return only_error(text, h100); };
  EXPECT_NE(refusal("{op: conv2d, n: 1, c: 18, c_out: 16, h: 8, w: 8, filter: 1, padding: valid, dtype: float32, "
                    "math: tf32, layout: NHWC, schedule: {algorithm: pointwise}}")
                .find("16-byte vectors of 4 float32 channels: c (18) and c_out (16) must be multiples of 4"),
            std::string::npos);
  EXPECT_EQ(refusal("{op: conv2d, n: 1, c: 16, c_out: 16, h: 8, w: 8, filter: 1, padding: valid, dtype: float32, "
                    "math: 3xtf32, layout: NHWC, schedule: {algorithm: pointwise}}"),
            "algorithm 'pointwise' serves float16, bfloat16 or float32 (math tf32) in NHWC; this workload is "
            "float32 math 3xtf32 NHWC; the algorithms of conv2d that serve it: implicit_gemm");
  EXPECT_EQ(refusal("{op: conv2d, n: 1, c: 16, c_out: 16, h: 8, w: 8, filter: 1, padding: valid, dtype: float32, "
                    "layout: NHWC, schedule: {algorithm: pointwise}}"),
            "algorithm 'pointwise' serves float16, bfloat16 or float32 (math tf32) in NHWC; this workload is "
            "float32 math fp32 NHWC; no algorithm of conv2d serves it yet");
}

// Math tf32 and 3xtf32 (float32 on tensor cores allowed), worked out by
// hand from conv2d.cpp, conv2d_gemm.cpp and conv2d_implicit_gemm.cpp. NCHW,
// the fp32 algorithms' own choices (the default rule gives math tf32
// implicit_gemm_nchw in a library for sm_80 and newer, the test above):
// the gemm algorithm's TF32 tensor cores where they measured faster (tf32
// on strided 3x3 layers and 1x1 layers of 32 channels or more); NHWC:
// implicit_gemm with float steps of K (32 floats: the 64 halves' bytes).
// The math is in the name either way.
TEST(Conv2dPlan, MathTf32AndTensorCores) {
  PlanOptions h100;
  h100.target = parse_arch_list("90");
  const KernelPlan strided = plan(
      "{op: conv2d, n: 32, c: 64, c_out: 128, h: 56, w: 56, filter: 3, stride: 2, padding: same, math: tf32, "
      "schedule: {algorithm: gemm}}",
      h100);
  EXPECT_EQ(strided.name, "conv_f32_tf32_nchw_n32_c64_co128_h56_w56_k3x3_s2_p1");
  // 64 x 128 tiles: 2 x 196 = 392 blocks, two waves of 132 SMs.
  EXPECT_EQ(strided.schedule.summary(),
            "gemm: block_tile 64x128, k_step 16, vthreads 2x2 (4x4 outputs each), products tensor_cores");
  EXPECT_TRUE(strided.flag("tensor_cores"));
  EXPECT_FALSE(strided.flag("three_products"));
  EXPECT_EQ(strided.min_arch, 80);
  // Rows 8 floats apart (mod 32) in both operands' stages. Without split K
  // the epilogue reads the accumulators (no tile of sums in shared memory),
  // a pixel at a time: im2col's columns make no 16-byte aligned pairs.
  EXPECT_EQ(strided.number("a_pitch"), 72);
  EXPECT_EQ(strided.number("x_pitch"), 136);
  EXPECT_EQ(strided.smem_bytes, 2 * (16 * 72 + 16 * 136) * 4);
  EXPECT_FALSE(strided.flag("finish_from_tile"));
  EXPECT_FALSE(strided.flag("pair_stores"));
  EXPECT_EQ(strided.number("warp_co"), 32);
  EXPECT_EQ(strided.number("warp_pixels"), 64);
  // At batch 8 the wide tiles would make 98 blocks: 64 x 64.
  EXPECT_EQ(plan("{op: conv2d, n: 8, c: 64, c_out: 128, h: 56, w: 56, filter: 3, stride: 2, padding: same, "
                 "math: tf32, schedule: {algorithm: gemm}}",
                 h100)
                .schedule.summary(),
            "gemm: block_tile 64x64, k_step 16, vthreads 2x1 (4x4 outputs each), products tensor_cores");
  // The compute floor at the TF32 rate: half the fp16 peak of 762, 381 TFLOP/s.
  EXPECT_NEAR(strided.compute_floor_us, static_cast<double>(strided.flops) / 381e6, 1e-9);

  // The non-fused Winograd of a stride-1 3x3 layer computes its GEMMs on
  // FMA (on tensor cores they round the transformed operands), the math in
  // its name; 3xtf32 on a strided one keeps the fp32 kernels.
  const KernelPlan winograd =
      plan("{op: conv2d, n: 32, c: 64, c_out: 64, h: 56, w: 56, filter: 3, padding: same, math: tf32, "
           "schedule: {algorithm: winograd_nonfused}}",
           h100);
  EXPECT_EQ(winograd.name, "conv_f32_tf32_nchw_n32_c64_co64_h56_w56_k3x3_s1_p1");
  EXPECT_EQ(winograd.schedule.algorithm_name(), "winograd_nonfused");
  EXPECT_FALSE(winograd.flag("tensor_cores"));
  EXPECT_NEAR(winograd.compute_floor_us, static_cast<double>(winograd.flops) / 51.6e6, 1e-9);
  EXPECT_FALSE(plan("{op: conv2d, n: 32, c: 64, c_out: 128, h: 56, w: 56, filter: 3, stride: 2, padding: same, "
                    "math: 3xtf32}",
                    h100)
                   .flag("tensor_cores"));

  // 1x1: tensor cores from 32 input channels; a thinner one stays on FMA.
  EXPECT_TRUE(plan("{op: conv2d, n: 64, c: 960, c_out: 160, h: 7, w: 7, filter: 1, padding: valid, math: tf32, "
                   "schedule: {algorithm: gemm}}",
                   h100)
                  .flag("tensor_cores"));
  const KernelPlan projection = plan(
      "{op: conv2d, n: 64, c: 96, c_out: 24, h: 28, w: 28, filter: 1, padding: valid, math: tf32, "
      "schedule: {algorithm: gemm}}",
      h100);
  // A tensor-core warp takes 16 x vthreads_co channels, so the block 32, not 24.
  EXPECT_EQ(projection.schedule.summary(),
            "gemm: block_tile 32x128, k_step 8, 3 stages, vthreads 1x2 (4x4 outputs each), products tensor_cores");
  // 28 x 28 % 4 == 0: 16-byte aligned tensors, each lane's pair of pixels
  // stored as one 8-byte vector; the stages alone in shared memory.
  EXPECT_TRUE(projection.flag("pair_stores"));
  EXPECT_EQ(projection.smem_bytes, 3 * (8 * 40 + 8 * 136) * 4);
  const KernelPlan thin = plan(
      "{op: conv2d, n: 64, c: 24, c_out: 144, h: 56, w: 56, filter: 1, padding: valid, math: tf32, "
      "schedule: {algorithm: gemm}}",
      h100);
  EXPECT_EQ(thin.schedule.summary(), "gemm: block_tile 32x128, k_step 8, 3 stages, vthreads 2x2 (4x4 outputs each)");
  // Split K adds the blocks' partial tiles through shared memory: the tile
  // of sums, in the stages' bytes once the main loop is done.
  const KernelPlan split = plan(
      "{op: conv2d, n: 1, c: 1024, c_out: 256, h: 14, w: 14, filter: 1, padding: valid, math: 3xtf32, "
      "schedule: {algorithm: gemm, products: tensor_cores, split_k: 2}}",
      h100);
  EXPECT_TRUE(split.flag("finish_from_tile"));
  EXPECT_EQ(split.smem_bytes, std::max(split.schedule.at("stages") *
                                           (split.schedule.at("k_step") * (split.schedule.at("block_co") + 8) +
                                            split.schedule.at("k_step") * (split.schedule.at("block_pixels") + 8)) *
                                           4,
                                       split.schedule.at("block_co") * (split.schedule.at("block_pixels") + 8) * 4));
  // Forced: a tensor-core warp takes 16 x vthreads_co channels, so the block 32.
  const KernelPlan forced = plan(
      "{op: conv2d, n: 64, c: 96, c_out: 24, h: 28, w: 28, filter: 1, padding: valid, math: 3xtf32, "
      "schedule: {products: tensor_cores}}",
      h100);
  EXPECT_EQ(forced.name, "conv_f32_3xtf32_nchw_n64_c96_co24_h28_w28_k1x1_s1_p0");
  EXPECT_EQ(forced.schedule.summary(),
            "gemm: block_tile 32x128, k_step 8, 3 stages, vthreads 1x2 (4x4 outputs each), products tensor_cores");
  EXPECT_TRUE(forced.flag("three_products"));
  EXPECT_NEAR(forced.compute_floor_us, static_cast<double>(forced.flops) / 127e6, 1e-9);
  // Tensor cores need a math that allows them.
  const std::vector<Diagnostic> errors = spec_errors([&] {
    plan("{op: conv2d, n: 1, c: 96, c_out: 24, h: 28, w: 28, filter: 1, padding: valid, "
         "schedule: {algorithm: gemm, products: tensor_cores}}",
         h100);
  });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].message,
            "products tensor_cores rounds the operands to TF32, which math fp32 does not allow: set math: tf32 or "
            "3xtf32, or products: fma");

  const KernelPlan nhwc = plan(
      "{op: conv2d, n: 32, c: 64, c_out: 64, h: 56, w: 56, filter: 3, padding: same, layout: NHWC, math: 3xtf32}",
      h100);
  EXPECT_EQ(nhwc.name, "conv_f32_3xtf32_nhwc_n32_c64_co64_h56_w56_k3x3_s1_p1");
  // 3xtf32's warp tiles are 32 pixels high (at 64 x 64 ptxas spilled).
  EXPECT_EQ(nhwc.schedule.summary(), "implicit_gemm: cta_tile 256x64x16, warp_tile 32x64, 5 stages");
  EXPECT_EQ(plan("{op: conv2d, n: 32, c: 64, c_out: 64, h: 56, w: 56, filter: 3, padding: same, layout: NHWC, "
                 "math: tf32}",
                 h100)
                .schedule.summary(),
            "implicit_gemm: cta_tile 256x64x16, warp_tile 64x64, 5 stages");
  EXPECT_TRUE(nhwc.flag("float32"));
  EXPECT_TRUE(nhwc.flag("fast_f32"));
  EXPECT_EQ(nhwc.number("mma_k"), 8);
  EXPECT_EQ(nhwc.number("in_vec"), 4);  // 16 bytes of floats
  EXPECT_EQ(nhwc.alignment, 16);
  EXPECT_EQ(nhwc.smem_bytes, 5 * (256 + 64) * 16 * 4);
  EXPECT_NEAR(nhwc.compute_floor_us, static_cast<double>(nhwc.flops) / 127e6, 1e-9);
}

// implicit_gemm_nchw: float32 NCHW with math tf32 on the implicit GEMM's
// main loop, through channels-last copies in the workspace, worked out by
// hand from conv2d_implicit_gemm.cpp. ResNet's strided 3x3 layer at batch
// 32: the NHWC rule's tile (128 x 128, 32 floats of K, 196 blocks), the
// filter's copy [128, 3, 3, 64] fixed and an image's [56, 56, 64] per
// image in the workspace; the call's tensors one float at a time.
TEST(Conv2dPlan, ImplicitGemmNchwThroughChannelsLastCopies) {
  PlanOptions h100;
  h100.target = parse_arch_list("90");
  const std::string strided =
      "{op: conv2d, n: 32, c: 64, c_out: 128, h: 56, w: 56, filter: 3, stride: 2, padding: same, math: tf32";
  const KernelPlan p = plan(strided + "}", h100);
  EXPECT_EQ(p.name, "conv_f32_tf32_nchw_n32_c64_co128_h56_w56_k3x3_s2_p1");
  EXPECT_EQ(p.schedule.summary(), "implicit_gemm_nchw: cta_tile 128x128x32, warp_tile 64x64, 3 stages");
  EXPECT_TRUE(p.flag("nchw"));
  EXPECT_TRUE(p.flag("tensor_cores"));
  EXPECT_FALSE(p.flag("fast_f32"));
  EXPECT_EQ(p.number("gemm_c"), 64);
  EXPECT_EQ(p.number("k_steps"), 18);
  EXPECT_EQ(p.alignment, 4);
  EXPECT_EQ(p.min_arch, 80);
  EXPECT_EQ(p.workspace_fixed, 128 * 9 * 64 * 4);
  EXPECT_EQ(p.workspace_per_image, 56 * 56 * 64 * 4);
  // The main loop's 3 stages of (128 + 128) x 32 floats; the epilogue's
  // tile of 128 rows of 129 floats (an odd pitch) fits in them.
  EXPECT_EQ(p.smem_bytes, 3 * 256 * 32 * 4);
  EXPECT_EQ(p.number("epilogue_bytes"), 128 * 129 * 4);

  // With an sm_90a image, Hopper's main loop on the same copies (the NHWC
  // rule's choice between the two main loops, on the copies' channels).
  PlanOptions hopper;
  hopper.target = parse_arch_list("90a");
  const KernelPlan sm90 = plan(strided + "}", hopper);
  EXPECT_EQ(sm90.schedule.algorithm_name(), "implicit_gemm_sm90_nchw");
  EXPECT_TRUE(sm90.flag("nchw"));
  EXPECT_EQ(sm90.alignment, 4);
  EXPECT_EQ(sm90.workspace_fixed, p.workspace_fixed);
  EXPECT_EQ(sm90.workspace_per_image, p.workspace_per_image);
  EXPECT_EQ(sm90.number("epilogue_pad"), 1);
  // 18 channels become 20 in the copies: 80 bytes a row, which the TMA
  // takes (the NHWC algorithm refuses 18 floats: 72 bytes).
  EXPECT_EQ(plan("{op: conv2d, n: 4, c: 18, c_out: 64, h: 28, w: 28, filter: 3, padding: same, math: tf32, "
                 "schedule: {algorithm: implicit_gemm_sm90_nchw}}",
                 hopper)
                .number("gemm_c"),
            20);

  // Channels padded to 16 bytes in the copies: 6 become 8, which the
  // optimized iterator takes a tap at a time (the NHWC rule's few_channels
  // spilled here); the filter's copy [16, 5, 5, 8].
  const KernelPlan six = plan(
      "{op: conv2d, n: 2, c: 6, c_out: 16, h: 20, w: 20, filter: 5, padding: valid, math: 3xtf32, "
      "schedule: {algorithm: implicit_gemm_nchw}}",
      h100);
  EXPECT_EQ(six.number("gemm_c"), 8);
  EXPECT_EQ(six.schedule.at("iterator"), 0);
  EXPECT_TRUE(six.flag("fast_f32"));
  EXPECT_EQ(six.workspace_fixed, 16 * 25 * 8 * 4);
  EXPECT_EQ(six.workspace_per_image, 20 * 20 * 8 * 4);

  EXPECT_FALSE(p.flag("filter_channels_last"));
  EXPECT_FALSE(six.flag("filter_channels_last"));

  // A 1x1 filter's copy, its rows padded (6 channels to 8).
  const KernelPlan padded = plan(
      "{op: conv2d, n: 4, c: 6, c_out: 64, h: 14, w: 14, filter: 1, padding: valid, math: tf32, "
      "schedule: {algorithm: implicit_gemm_nchw}}",
      h100);
  EXPECT_EQ(padded.workspace_fixed, 64 * 8 * 4);
  EXPECT_FALSE(padded.flag("filter_channels_last"));
  // A 1x1 filter of unpadded rows is channels-last already: the call reads
  // it in place where its pointer is 16-byte aligned, and copies it where
  // not (the workspace keeps room for the copy).
  const KernelPlan pointwise = plan(
      "{op: conv2d, n: 1, c: 2048, c_out: 512, h: 7, w: 7, filter: 1, padding: valid, math: tf32}", hopper);
  EXPECT_EQ(pointwise.schedule.algorithm_name(), "implicit_gemm_sm90_nchw");
  EXPECT_TRUE(pointwise.flag("filter_channels_last"));
  EXPECT_EQ(pointwise.alignment, 4);
  EXPECT_EQ(pointwise.workspace_fixed, 512 * 2048 * 4);

  // Not the default: for 3xtf32 (three products a term: the fp32 kernels),
  // for stems (the stem algorithm), nor in a library that also runs on a
  // T4 (no tensor cores with TF32: the fp32 kernels run there).
  EXPECT_EQ(plan("{op: conv2d, n: 32, c: 64, c_out: 128, h: 56, w: 56, filter: 3, stride: 2, padding: same, "
                 "math: 3xtf32}",
                 h100)
                .schedule.algorithm_name(),
            "gemm");
  EXPECT_EQ(plan("{op: conv2d, n: 8, c: 3, c_out: 64, h: 224, w: 224, filter: 7, stride: 2, padding: same, "
                 "math: tf32}",
                 h100)
                .schedule.algorithm_name(),
            "stem");
  EXPECT_NE(plan(strided + "}").schedule.algorithm_name(), "implicit_gemm_nchw");
  // Nor below 64 input channels, nor on thin 1x1 layers (c x c_out / (c +
  // c_out) under 40): MobileNetV2's 32 -> 192 at 27, against 384 -> 64 at 55.
  const auto algorithm = [&](const std::string& shape) {
    return plan("{op: conv2d, n: 64, " + shape + ", math: tf32}", h100).schedule.algorithm_name();
  };
  EXPECT_NE(algorithm("c: 32, c_out: 32, h: 64, w: 64, filter: 3, padding: same"), "implicit_gemm_nchw");
  EXPECT_EQ(algorithm("c: 64, c_out: 64, h: 64, w: 64, filter: 3, padding: same"), "implicit_gemm_nchw");
  EXPECT_NE(algorithm("c: 32, c_out: 192, h: 28, w: 28, filter: 1, padding: valid"), "implicit_gemm_nchw");
  EXPECT_EQ(algorithm("c: 384, c_out: 64, h: 14, w: 14, filter: 1, padding: valid"), "implicit_gemm_nchw");
  // A spec's tile takes the default's split only where its step leaves the
  // chunks: at batch 1 the default splits 4 ways; 2 chunks of 32 of 64
  // channels take 2.
  EXPECT_EQ(plan("{op: conv2d, n: 1, c: 64, c_out: 64, h: 14, w: 14, filter: 3, padding: same, math: tf32, "
                 "schedule: {algorithm: implicit_gemm_nchw, cta_tile: [64, 64, 32], warp_tile: [32, 32]}}",
                 h100)
                .schedule.at("split_k"),
            2);
  // Math fp32 is not its to serve.
  EXPECT_NE(only_error("{op: conv2d, n: 1, c: 64, c_out: 64, h: 14, w: 14, filter: 3, padding: same, "
                       "schedule: {algorithm: implicit_gemm_nchw}}",
                       h100)
                .find("implicit_gemm_nchw"),
            std::string::npos);
}

// The same layer by the default rule: winograd, worked out by hand from
// conv2d_winograd.cpp. 32 x 32 tiles of 2x2 = 1,024 tiles; the large tile
// makes 32 blocks, the medium 64, the small 128: each one wave on 132 SMs,
// so the small one (relative block time 665, against 1250 and 2048).
TEST(Conv2dPlan, WinogradDefaultOfTheSeedLayer) {
  const std::string text = "{op: conv2d, n: 1, c: 64, c_out: 64, h: 64, w: 64, filter: 3, padding: same}";
  PlanOptions h100;
  h100.target = parse_arch_list("90");
  const KernelPlan p = plan(text, h100);
  EXPECT_EQ(p.name, "conv_f32_nchw_n1_c64_co64_h64_w64_k3x3_s1_p1");
  EXPECT_EQ(p.schedule.summary(),
            "winograd: block 32x16 (channels x 2x2 tiles), k_step 8, thread_groups 2x1 (4x4 of one element's GEMM each)");
  EXPECT_EQ(p.number("tiles_per_image"), 32 * 32);
  EXPECT_EQ(p.block_threads, 16 * (32 / 8) * (16 / 4));  // 16 elements x 4x4 threads
  EXPECT_EQ(p.number("m_blocks"), 2);
  EXPECT_EQ(p.number("k_steps"), 8);
  EXPECT_EQ(p.number("patch_loaders"), 128);  // 16 tiles x 8 channels: one patch each
  EXPECT_EQ(p.number("patch_passes"), 1);
  EXPECT_EQ(p.number("k_per_pass"), 8);
  EXPECT_EQ(p.number("filter_passes"), 1);  // 32 x 8 pairs, 256 threads
  // Two stages of U and V (16 x 8 x (32 + 16) floats each), two buffers of
  // raw taps (32 rows of 8 x 9 + 1 floats).
  EXPECT_EQ(p.smem_bytes, 4 * (2 * 16 * 8 * 48 + 2 * 32 * 73));
  EXPECT_EQ(p.number("min_blocks"), 2);  // 32 sums + a patch + 80: 128 registers
  EXPECT_EQ(p.alignment, 8);             // float2 stores
  EXPECT_EQ(p.flops, 2LL * 64 * 64 * 64 * 64 * 9);  // counted as the direct convolution's
  // The default list of GPUs holds a T4 (64 KiB a block): 67,840 bytes do
  // not fit, so the stage halves to 4 input channels.
  const KernelPlan every_gpu = plan(text);
  EXPECT_EQ(every_gpu.schedule.at("k_step"), 4);
  EXPECT_EQ(every_gpu.smem_bytes, 4 * (2 * 16 * 4 * 48 + 2 * 32 * 37));
}

// Deep layers at small batch take the small tile with 16 input channels a
// stage; few tiles of many channels at batch 32 the large one; the medium
// one where its waves are fuller (ResNet's 14x14 layer at batch 32: 1,568
// tiles make 196 large blocks, 2 waves of 2048, against 392 medium ones,
// 3 waves of 1250).
TEST(Conv2dPlan, WinogradDefaultTiles) {
  PlanOptions h100;
  h100.target = parse_arch_list("90");
  const auto tile = [&](const std::string& shape) {
    const KernelPlan p = plan("{op: conv2d, " + shape + ", filter: 3, padding: same}", h100);
    return std::to_string(p.schedule.at("block_co")) + "x" + std::to_string(p.schedule.at("block_tiles")) + " k" +
           std::to_string(p.schedule.at("k_step"));
  };
  EXPECT_EQ(tile("n: 1, c: 1024, c_out: 1024, h: 7, w: 7"), "32x16 k16");
  // ResNet's layers at batch 32 run the non-fused kernel by default; the
  // fused one's tiles, forced there.
  const std::string fused = ", schedule: {algorithm: winograd}";
  EXPECT_EQ(tile("n: 32, c: 512, c_out: 512, h: 7, w: 7" + fused), "64x32 k8");
  EXPECT_EQ(tile("n: 32, c: 256, c_out: 256, h: 14, w: 14" + fused), "32x32 k8");
  EXPECT_EQ(tile("n: 32, c: 64, c_out: 64, h: 56, w: 56" + fused), "64x32 k8");
  EXPECT_EQ(tile("n: 1, c: 16, c_out: 16, h: 64, w: 64"), "32x16 k16");
  EXPECT_EQ(tile("n: 1, c: 5, c_out: 16, h: 64, w: 64, schedule: {algorithm: winograd}"), "32x16 k8");
  // Under 16 input channels the default rule keeps the direct algorithm;
  // under 32 in a library that also runs on a T4 (the default list).
  EXPECT_EQ(plan("{op: conv2d, n: 1, c: 8, c_out: 16, h: 64, w: 64, filter: 3, padding: same}", h100)
                .schedule.algorithm_name(),
            "direct");
  EXPECT_EQ(plan("{op: conv2d, n: 1, c: 16, c_out: 16, h: 64, w: 64, filter: 3, padding: same}")
                .schedule.algorithm_name(),
            "direct");
  EXPECT_EQ(plan("{op: conv2d, n: 1, c: 32, c_out: 16, h: 64, w: 64, filter: 3, padding: same}")
                .schedule.algorithm_name(),
            "winograd");
}

// The non-fused Winograd by the default rule on ResNet's 256-channel 14x14
// layer at batch 32, its workspace worked by hand: 14x14 in 4x4 tiles is
// 4 x 4 = 16 tiles an image; U holds 36 x 256 x 256 floats (9,437,184
// bytes), V and M 36 x (256 + 256) x 16 floats an image (1,179,648 bytes).
TEST(Conv2dPlan, WinogradNonfusedWorkspaceAndDefaultRule) {
  PlanOptions h100;
  h100.target = parse_arch_list("90");
  const KernelPlan p = plan("{op: conv2d, n: 32, c: 256, c_out: 256, h: 14, w: 14, filter: 3, padding: same}", h100);
  // 4 x 4 x 36 = 576 GEMM blocks, under 5 an SM of the H100's 132, and
  // 128 channels a part: split in 2.
  EXPECT_EQ(p.schedule.summary(),
            "winograd_nonfused: F(4x4, 3x3) through a workspace; batched GEMM tile 64x128 (channels x tiles), 3 stages, "
            "split_k 2");
  EXPECT_EQ(p.number("gemms"), 72);
  EXPECT_EQ(p.number("part_channels"), 128);
  // U: 36 x 256 x 256 floats; an image's 16 tiles: V 36 x 256 floats, M 36
  // x 256 floats a part.
  EXPECT_EQ(p.workspace_fixed, 36 * 256 * 256 * 4);
  EXPECT_EQ(p.workspace_per_image, 16 * 36 * (256 + 2 * 256) * 4);
  EXPECT_EQ(p.number("tiles_per_image"), 16);
  EXPECT_EQ(p.smem_bytes, 0);
  EXPECT_EQ(p.max_batch, 65535);
  // Other kernels need no workspace.
  const KernelPlan fused =
      plan("{op: conv2d, n: 32, c: 256, c_out: 256, h: 14, w: 14, filter: 3, padding: same, "
           "schedule: {algorithm: winograd}}",
           h100);
  EXPECT_EQ(fused.workspace_fixed + fused.workspace_per_image, 0);
  // A library that also runs on a T4 takes CUTLASS's two-stage loop.
  EXPECT_EQ(plan("{op: conv2d, n: 32, c: 256, c_out: 256, h: 14, w: 14, filter: 3, padding: same}")
                .schedule.at("gemm_stages"),
            2);
  // The rule: 64 channels and more in and out, 128 tiles or more in the
  // batch, GEMMs of 0.4 GFLOP or more, a declared batch, a workspace of at
  // most 1 GiB.
  const auto algorithm = [&](const std::string& shape) {
    return plan("{op: conv2d, " + shape + ", filter: 3, padding: same}", h100).schedule.algorithm_name();
  };
  EXPECT_EQ(algorithm("n: 8, c: 256, c_out: 256, h: 14, w: 14"), "winograd_nonfused");  // 128 tiles, 0.60 GFLOP
  EXPECT_EQ(algorithm("n: 8, c: 512, c_out: 512, h: 7, w: 7"), "winograd");             // 32 tiles
  EXPECT_EQ(algorithm("n: 1, c: 256, c_out: 256, h: 64, w: 64"), "winograd_nonfused");  // 256 tiles, 1.21 GFLOP
  EXPECT_EQ(algorithm("n: 1, c: 128, c_out: 128, h: 64, w: 64"), "winograd");           // 0.30 GFLOP
  EXPECT_EQ(algorithm("n: 32, c: 32, c_out: 256, h: 28, w: 28"), "winograd");           // 32 channels in
  EXPECT_EQ(algorithm("n: runtime, c: 256, c_out: 256, h: 14, w: 14"), "winograd");     // a runtime batch
  // 50,176 tiles of 1,024 channels and 512 x 512 filters: a 7.4 GB workspace.
  EXPECT_EQ(algorithm("n: 256, c: 512, c_out: 512, h: 56, w: 56"), "winograd");
  // The split: in 2 under 5 GEMM blocks an SM (660) where each part keeps
  // 128 channels or more.
  const auto split = [&](const std::string& shape) {
    return plan("{op: conv2d, " + shape + ", filter: 3, padding: same, schedule: {algorithm: winograd_nonfused}}",
                h100)
        .schedule.at("split_k");
  };
  EXPECT_EQ(split("n: 32, c: 512, c_out: 512, h: 7, w: 7"), 2);     // 8 x 1 x 36 = 288 blocks
  EXPECT_EQ(split("n: 64, c: 256, c_out: 256, h: 14, w: 14"), 1);   // 4 x 8 x 36 = 1,152
  EXPECT_EQ(split("n: 8, c: 128, c_out: 128, h: 28, w: 28"), 1);    // 64 channels a part
  EXPECT_EQ(split("n: runtime, c: 512, c_out: 512, h: 7, w: 7"), 1);  // a runtime batch
  // A spec's split: 4 parts of 64 channels, 144 GEMMs, M four times over.
  const KernelPlan four =
      plan("{op: conv2d, n: 2, c: 256, c_out: 128, h: 14, w: 14, filter: 3, padding: same, "
           "schedule: {algorithm: winograd_nonfused, split_k: 4}}",
           h100);
  EXPECT_EQ(four.number("gemms"), 144);
  EXPECT_EQ(four.number("part_channels"), 64);
  EXPECT_EQ(four.workspace_fixed, 36 * 128 * 256 * 4);
  EXPECT_EQ(four.workspace_per_image, 16 * 36 * (256 + 4 * 128) * 4);
}

// winograd_nonfused with math tf32 and products tensor_cores (a spec's
// choice, never the default's): its GEMMs on TF32 tensor cores (CUTLASS's,
// 32 rows of K a stage, 16-byte operands), worked out by hand from
// conv2d_winograd_nonfused.cpp. 56x56 in 4x4 tiles is 14 x 14 = 196 tiles
// an image; V's and M's rows hold the batch's tiles rounded up to 4, at
// most 3 tiles more: 3 x 36 x (64 + 64) floats more in the fixed part.
TEST(Conv2dPlan, WinogradNonfusedOnTensorCores) {
  PlanOptions h100;
  h100.target = parse_arch_list("90");
  const std::string layer = "{op: conv2d, n: 32, c: 64, c_out: 64, h: 56, w: 56, filter: 3, padding: same";
  const KernelPlan p = plan(layer + ", math: tf32, schedule: {products: tensor_cores}}", h100);
  EXPECT_EQ(p.schedule.summary(),
            "winograd_nonfused: F(4x4, 3x3) through a workspace; batched GEMM tile 64x128 (channels x tiles), 3 stages, "
            "products tensor_cores");
  EXPECT_TRUE(p.flag("tensor_cores"));
  EXPECT_FALSE(p.flag("three_products"));
  EXPECT_EQ(p.number("gemm_k"), 32);
  EXPECT_EQ(p.number("tile_vector"), 4);
  EXPECT_EQ(p.min_arch, 80);
  EXPECT_EQ(p.workspace_fixed, 36 * 64 * 64 * 4 + 3 * 36 * (64 + 64) * 4);
  EXPECT_EQ(p.workspace_per_image, 196 * 36 * (64 + 64) * 4);
  // On FMA (the default, whatever the math) the rows are the tiles.
  const KernelPlan fma = plan(layer + ", math: tf32, schedule: {algorithm: winograd_nonfused}}", h100);
  EXPECT_FALSE(fma.flag("tensor_cores"));
  EXPECT_EQ(fma.number("gemm_k"), 8);
  EXPECT_EQ(fma.number("tile_vector"), 1);
  EXPECT_EQ(fma.workspace_fixed, 36 * 64 * 64 * 4);
  // 3xtf32 on tensor cores when a spec asks: three products a term.
  const KernelPlan three = plan(layer + ", math: 3xtf32, schedule: {products: tensor_cores}}", h100);
  EXPECT_TRUE(three.flag("three_products"));
  // In a library that also runs on a T4 (the default list) the kernel takes
  // the multistage loop all the same: it runs from sm_80 (the T4 runs the
  // generic kernel).
  const KernelPlan every_gpu = plan(layer + ", math: tf32, schedule: {products: tensor_cores}}");
  EXPECT_EQ(every_gpu.schedule.at("gemm_stages"), 3);
  EXPECT_EQ(every_gpu.min_arch, 80);
  // What a spec cannot ask.
  const auto refusal = [&](const std::string& text) { return only_error(text, h100); };
  EXPECT_NE(refusal(layer + ", schedule: {algorithm: winograd_nonfused, products: tensor_cores}}")
                .find("products tensor_cores rounds the operands to TF32, which math fp32 does not allow"),
            std::string::npos);
  EXPECT_NE(refusal("{op: conv2d, n: 32, c: 66, c_out: 64, h: 56, w: 56, filter: 3, padding: same, math: tf32, "
                    "schedule: {algorithm: winograd_nonfused, products: tensor_cores}}")
                .find("the 66 input channels of a part, in vectors of 4: needs a multiple of 4"),
            std::string::npos);
  EXPECT_NE(refusal(layer + ", math: tf32, schedule: {algorithm: winograd_nonfused, products: tensor_cores, "
                    "gemm_stages: 2}}")
                .find("gemm_stages 2: the tensor-core GEMM is CUTLASS's multistage one"),
            std::string::npos);
  // 128 x 128 tiles in 4 stages: 4 x 256 x 32 floats, 131,072 bytes, past
  // the 101,376 of an sm_86 in the default list; 3 stages (98,304) fit, and
  // on an H100 alone 4 do.
  const std::string wide = layer + ", math: tf32, schedule: {algorithm: winograd_nonfused, products: tensor_cores, "
                                   "gemm_tile: 128x128, gemm_stages: ";
  EXPECT_EQ(only_error(wide + "4}}", PlanOptions{}),
            "the tensor-core GEMM's 4 stages of 128x128 tiles take 131072 bytes of shared memory per block; the GPUs "
            "of this library from sm_80 allow 101376: use fewer gemm_stages or a smaller gemm_tile");
  EXPECT_NO_THROW(plan_kernel(workload(wide + "3}}"), PlanOptions{}));
  EXPECT_NO_THROW(plan_kernel(workload(wide + "4}}"), h100));
}

// ResNet's stem at batch 8 by the default rule: the stem algorithm, worked
// out by hand from conv2d_stem.cpp. 16 channels x 4 columns a thread; a
// 7x7 filter takes tiles 16 threads (64 columns) wide; all 64 channels (4
// groups); 147 taps a thread: rows for 448 threads, 448 / 64 = 7, which
// divides the 112 output rows. 256 blocks fill the 132 SMs.
TEST(Conv2dPlan, StemDefaultOfTheResNetStem) {
  const std::string text =
      "{op: conv2d, n: 8, c: 3, c_out: 64, h: 224, w: 224, filter: 7, stride: 2, padding: same, "
      "epilogue: scale_shift, activation: relu}";
  PlanOptions h100;
  h100.target = parse_arch_list("90");
  const KernelPlan p = plan(text, h100);
  EXPECT_EQ(p.schedule.summary(),
            "stem: block_outputs 64x7x64 (channels x rows x columns), thread_outputs 16x4 (channels x columns a "
            "thread row apart)");
  EXPECT_EQ(p.block_threads, 16 * 7 * 4);
  EXPECT_EQ(p.number("grid_x"), 1 * 16 * 2);  // channel blocks x row tiles x column tiles
  // The window: 6 x 2 + 7 = 19 rows, 63 x 2 + 7 = 133 columns in 2 phases of
  // 67. A warp is 16 columns of 2 rows, 2 x 2 x pitch words apart: pitch
  // 68 puts the second row's 16 lanes on the other 16 banks.
  EXPECT_EQ(p.number("in_tile_h"), 19);
  EXPECT_EQ(p.number("in_tile_w"), 133);
  EXPECT_EQ(p.number("phase_w"), 67);
  EXPECT_EQ(p.number("pitch"), 68);
  EXPECT_EQ(p.number("conflict"), 1);
  EXPECT_EQ(p.smem_bytes, 4 * (3 * 19 * 2 * 68 + 3 * 49 * 64));
  EXPECT_EQ(p.number("min_blocks"), 1);  // 448 threads of 64 + 2 x 20 + 24 registers
  // The default list of GPUs holds a T4 (64 KiB a block): 68,640 bytes do
  // not fit, so the block takes 32 channels.
  const KernelPlan every_gpu = plan(text);
  EXPECT_EQ(every_gpu.schedule.at("tile_co"), 32);
  EXPECT_EQ(every_gpu.smem_bytes, 4 * (3 * 19 * 2 * 68 + 3 * 49 * 32));
  EXPECT_EQ(every_gpu.block_threads, 16 * 7 * 2);
  // At batch 1 the 32 blocks would fill under half the SMs: 16 channels a
  // block would leave 112 threads (under 128), so 4 rows instead: 112 blocks.
  const KernelPlan one = plan(
      "{op: conv2d, n: 1, c: 3, c_out: 64, h: 224, w: 224, filter: 7, stride: 2, padding: same}", h100);
  EXPECT_EQ(one.schedule.at("tile_co"), 32);
  EXPECT_EQ(one.schedule.at("tile_h"), 4);
  EXPECT_EQ(one.number("grid_x"), 2 * 28 * 2);
}

// The two stems of few taps at batch 8 by the default rule, worked out by
// hand from conv2d_stem.cpp. EfficientNet's 3x3 stride-2 stem sums 3 x 9 =
// 27 taps a thread (under 96): 8 channels x 4 columns a thread, a tile 28
// threads (112 columns) wide, all 32 channels (4 groups): 112 threads a row,
// rows for 448 threads, 448 / 112 = 4, which divides the 112 output rows:
// 8 x 28 = 224 blocks. The 4x4 stride-4 patchify stem (48 taps): 56
// columns (14 threads) x 96 channels (12 groups) = 168 threads a row, 448 /
// 168 = 2 rows, which divide the 56: 336 threads, 8 x 28 = 224 blocks.
TEST(Conv2dPlan, StemDefaultOfTheStemsOfFewTaps) {
  PlanOptions h100;
  h100.target = parse_arch_list("90");
  // 8 RGB images of 224 x 224, as the H100 plans them.
  const auto stem = [&](const std::string& layer) {
    return plan("{op: conv2d, n: 8, c: 3, h: 224, w: 224, " + layer + "}", h100);
  };
  const KernelPlan three =
      stem("c_out: 32, filter: 3, stride: 2, padding: same, epilogue: scale_shift, activation: silu");
  EXPECT_EQ(three.schedule.summary(),
            "stem: block_outputs 32x4x112 (channels x rows x columns), thread_outputs 8x4 (channels x columns a "
            "thread row apart)");
  EXPECT_EQ(three.block_threads, 28 * 4 * 4);
  EXPECT_EQ(three.number("grid_x"), 1 * 28 * 1);  // channel blocks x row tiles x column tiles
  const KernelPlan patchify = stem("c_out: 96, filter: 4, stride: 4, padding: valid, epilogue: bias");
  EXPECT_EQ(patchify.schedule.at("thread_co"), 8);
  EXPECT_EQ(patchify.schedule.at("tile_h"), 2);
  EXPECT_EQ(patchify.schedule.at("tile_w"), 56);
  EXPECT_EQ(patchify.block_threads, 14 * 2 * 12);
  EXPECT_EQ(patchify.number("grid_x"), 1 * 28 * 1);
}

// Split K by the default rule, worked by hand from conv2d_gemm.cpp and
// conv2d_direct.cpp, on the H100 (132 SMs, clusters) and not where the
// library also runs on older GPUs. ResNet-50's 2048 -> 512 1x1 on 7x7 at
// batch 1: 49 pixels take 64-pixel blocks, 16 tiles of 32 channels; 128
// stages of 16 channels split 2, 4, 8 (128 blocks, 16 stages each).
// ResNet-34's 256 -> 512 stride-2 3x3 at batch 8: 128 blocks of 32
// channels (64 threads), 64 stages of 4 channels: 2 and 4 keep 512 blocks
// within 4 per SM, 8 would not.
TEST(Conv2dPlan, SplitKDefaults) {
  PlanOptions h100;
  h100.target = parse_arch_list("90");
  const std::string deep = "{op: conv2d, n: 1, c: 2048, c_out: 512, h: 7, w: 7, filter: 1, padding: valid}";
  const KernelPlan gemm = plan(deep, h100);
  EXPECT_EQ(gemm.schedule.summary(),
            "gemm: block_tile 32x64, k_step 16, vthreads 2x1 (4x4 outputs each), split_k 8");
  EXPECT_EQ(gemm.min_arch, 90);
  // The partial tile (32 x 64 floats) beside the two stages.
  EXPECT_EQ(gemm.smem_bytes, 4 * (2 * (16 * 36 + 16 * 64) + 32 * 64));
  EXPECT_EQ(plan(deep).schedule.at("split_k"), 1);  // a T4 and an A100 have no clusters
  // A tile the spec sets gets the split that fits it: 1024 -> 256 on 14x14
  // in 20 x 64 tiles makes 13 x 4 = 52 blocks, split in 2 (4 would pass one
  // wave); the split sized for the default tile (8) would not divide 20.
  const KernelPlan narrow = plan("{op: conv2d, n: 1, c: 1024, c_out: 256, h: 14, w: 14, filter: 1, padding: valid, "
                                 "schedule: {block_tile: [20, 64], vthreads: [1, 1]}}",
                                 h100);
  EXPECT_EQ(narrow.schedule.at("split_k"), 2);
  // ResNet-34's stride-2 layer at batch 8 takes the GEMM over im2col: K =
  // 256 x 9 = 2304, 64 x 64 tiles over 512 channels x 392 pixels make 8 x 7
  // = 56 blocks, split in 2 (4 would pass one wave).
  const std::string strided =
      "{op: conv2d, n: 8, c: 256, c_out: 512, h: 14, w: 14, filter: 3, stride: 2, padding: same}";
  const KernelPlan im2col = plan(strided, h100);
  EXPECT_EQ(im2col.schedule.summary(),
            "gemm: block_tile 64x64, k_step 16, vthreads 2x1 (4x4 outputs each), split_k 2");
  EXPECT_EQ(im2col.number("gemm_k"), 2304);
  EXPECT_EQ(im2col.number("k_steps"), 144);
  EXPECT_EQ(im2col.block_threads, 128);
  EXPECT_EQ(plan(strided).schedule.at("split_k"), 1);
  // The same forced to direct: its 128 blocks of 64 threads split in 4.
  const std::string strided_direct =
      "{op: conv2d, n: 8, c: 256, c_out: 512, h: 14, w: 14, filter: 3, stride: 2, padding: same, "
      "schedule: {algorithm: direct}}";
  const KernelPlan direct = plan(strided_direct, h100);
  EXPECT_EQ(direct.schedule.at("split_k"), 4);
  EXPECT_EQ(direct.block_threads, 64);
  EXPECT_EQ(plan(strided_direct).schedule.at("split_k"), 1);
  // Winograd on 1024 channels of 7x7 at batch 1: 16 tiles of 2x2 make one
  // block of 16 tiles for each of 32 channel blocks, 32 blocks; two of its
  // 256 threads fit an SM (an estimated 128 registers a thread: 32 sums, a
  // patch, 80 others), so the split doubles while 32 x split <= 2 x 132 and
  // each part keeps 4 of the 64 stages of 16 channels: 8. Its chunks of 16
  // rows split evenly in 8.
  const std::string deep3x3 = "{op: conv2d, n: 1, c: 1024, c_out: 1024, h: 7, w: 7, filter: 3, padding: same}";
  const KernelPlan winograd = plan(deep3x3, h100);
  EXPECT_EQ(winograd.schedule.summary(),
            "winograd: block 32x16 (channels x 2x2 tiles), k_step 16, thread_groups 2x1 (4x4 of one element's GEMM "
            "each), split_k 8");
  EXPECT_EQ(winograd.min_arch, 90);
  EXPECT_EQ(plan(deep3x3).schedule.at("split_k"), 1);
  // 384 channels of 13x13 at batch 1: 4 tile blocks x 12 channel blocks =
  // 48 blocks, split in 4 (8 would pass 2 an SM).
  EXPECT_EQ(plan("{op: conv2d, n: 1, c: 384, c_out: 384, h: 13, w: 13, filter: 3, padding: same}", h100)
                .schedule.at("split_k"),
            4);
  // ResNet-34's 512 channels of 7x7 at batch 8: 8 tile blocks x 16 channel
  // blocks = 128 blocks, more than half of the 132 SMs: no split (2 was
  // slower). Nor at batch 32, whose large tile makes 128 blocks too.
  EXPECT_EQ(plan("{op: conv2d, n: 8, c: 512, c_out: 512, h: 7, w: 7, filter: 3, padding: same}", h100)
                .schedule.at("split_k"),
            1);
  EXPECT_EQ(plan("{op: conv2d, n: 32, c: 512, c_out: 512, h: 7, w: 7, filter: 3, padding: same, "
                 "schedule: {algorithm: winograd}}",
                 h100)
                .schedule.at("split_k"),
            1);
  // Enough tiles: no split (MobileNetV2's 1x1 layers at batch 64).
  EXPECT_EQ(plan("{op: conv2d, n: 64, c: 96, c_out: 576, h: 14, w: 14, filter: 1, padding: valid}", h100)
                .schedule.at("split_k"),
            1);
}

// MobileNetV2's 7x7 project layer with its residual: the gemm algorithm,
// scalar copies (49 pixels), so a block covers 32 channels with one group
// of 4 along the pixels per thread.
TEST(Conv2dPlan, GemmOfASevenBySevenProjectLayer) {
  const KernelPlan p = plan(
      "{op: conv2d, n: 64, c: 960, c_out: 160, h: 7, w: 7, filter: 1, padding: same, epilogue: scale_shift, "
      "residual: true}");
  EXPECT_EQ(p.name, "conv_f32_nchw_n64_c960_co160_h7_w7_k1x1_s1_p0_ss_res");
  EXPECT_EQ(p.schedule.summary(), "gemm: block_tile 32x128, k_step 16, vthreads 2x1 (4x4 outputs each)");
  EXPECT_EQ(p.number("x_vec"), 1);
  EXPECT_EQ(p.block_threads, (32 / 8) * (128 / 4));
  EXPECT_EQ(p.alignment, 4);
  EXPECT_EQ(p.smem_bytes, 2 * (16 * 36 + 16 * 128) * 4);
  // The residual is read once more: as many bytes as the output.
  EXPECT_EQ(p.bytes_read, 4LL * (64 * 960 * 49 + 160 * 960 + 2 * 160 + 64 * 160 * 49));
}

TEST(Conv2dParse, KeysAndDefaults) {
  const Workload wl = workload(
      "{op: conv2d, n: 2, c: 3, c_out: 5, h: 9, w: 11, filter: [3, 5], stride: 2, padding: valid, groups: 1, "
      "epilogue: bias, residual: true, activation: relu}");
  EXPECT_EQ(wl.op->name, "conv2d");
  EXPECT_EQ(wl.c_out, 5);
  EXPECT_EQ(wl.out_channels(), 5);
  EXPECT_TRUE(wl.residual);
  EXPECT_EQ(wl.out_h(), 4);
  EXPECT_EQ(wl.out_w(), 4);
  EXPECT_EQ(kernel_name(wl), "conv_f32_nchw_n2_c3_co5_h9_w11_k3x5_s2_p0_bias_res_relu");
  // A depthwise workload keeps c * multiplier output channels and no residual.
  const Workload dw = workload("{n: 1, c: 8, h: 8, w: 8, filter: 3, padding: same, multiplier: 2}");
  EXPECT_EQ(dw.out_channels(), 16);
  EXPECT_FALSE(dw.residual);
  // Keys of the other operator set in `defaults` are not inherited.
  const Spec spec = parse(R"(library: lib
defaults: {multiplier: 2, residual: true, c_out: 7}
workloads:
  - {n: 1, c: 8, h: 8, w: 8, filter: 3, padding: same}
  - {op: conv2d, n: 1, c: 8, h: 8, w: 8, filter: 3, padding: same}
)");
  EXPECT_EQ(spec.workloads[0].out_channels(), 16);
  EXPECT_FALSE(spec.workloads[0].residual);
  EXPECT_EQ(spec.workloads[1].out_channels(), 7);
  EXPECT_TRUE(spec.workloads[1].residual);
}

}  // namespace
}  // namespace convgen_test

namespace convgen_test {
namespace {

// ConvNeXt-B's first 7x7 layer, worked out by hand from the default rule and
// window_shape (generator/src/ops/depthwise_window.cpp): 7 rows x 2 columns a
// thread, the whole 56-row plane one band, 28 x 8 = 224 threads; 62 staged
// rows of 68 floats (63 columns needed, padded to 64, made not a multiple of
// 32); two buffers of 62 x 68 floats plus 49 taps and 1 bias padded to 52.
TEST(WindowPlan, DefaultOfTheConvNextRow) {
  const KernelPlan p = plan("{n: 16, c: 128, h: 56, w: 56, filter: 7, padding: same, epilogue: bias}");
  EXPECT_EQ(p.schedule.summary(),
            "window: rows_per_thread 7, columns_per_thread 2, band_rows 56, bands_per_block 1, pipelined, filter in "
            "registers");
  EXPECT_EQ(p.block_threads, 224);
  EXPECT_EQ(p.number("staged_rows"), 62);
  EXPECT_EQ(p.number("pad_columns"), 4);
  EXPECT_EQ(p.number("window_offset"), 1);
  EXPECT_EQ(p.number("read_cols"), 8);
  EXPECT_EQ(p.number("pitch"), 68);
  EXPECT_EQ(p.smem_bytes, 4 * 2 * (62 * 68 + 52));
  EXPECT_EQ(p.alignment, 16);
  EXPECT_FALSE(p.flag("vector_window"));
}

// The default rule among the depthwise algorithms for 5x5 and 7x7 filters
// (measured choices: docs/performance.md, "Large filters").
TEST(WindowPlan, DefaultRuleForLargeFilters) {
  const auto algorithm = [](const std::string& workload) { return plan(workload).schedule.algorithm_name(); };
  EXPECT_EQ(algorithm("{n: 16, c: 512, h: 14, w: 14, filter: 7, padding: same}"), "window");
  EXPECT_EQ(algorithm("{n: 1, c: 256, h: 96, w: 96, filter: 5, padding: same}"), "window");
  // Rows holds a 5x5 band in registers and wins on 28x28.
  EXPECT_EQ(algorithm("{n: 64, c: 120, h: 28, w: 28, filter: 5, padding: same}"), "rows");
  // Strided: rows where it fits.
  EXPECT_EQ(algorithm("{n: 64, c: 72, h: 56, w: 56, filter: 5, stride: 2, padding: same}"), "rows");
  // Many 7x7 planes of a 5x5 filter: planes.
  EXPECT_EQ(algorithm("{n: 64, c: 960, h: 7, w: 7, filter: 5, padding: same}"), "planes");
  // Dilated: the window algorithm does not serve it.
  EXPECT_EQ(algorithm("{n: 1, c: 64, h: 32, w: 32, filter: 7, dilation: 2, padding: same}"), "tiles");
}

// A key two algorithms share (rows_per_thread: rows and window) picks the
// one that owns every knob the spec sets.
TEST(WindowPlan, SharedKnobPicksTheAlgorithmOwningAllKnobs) {
  EXPECT_EQ(plan("{n: 1, c: 32, h: 28, w: 28, filter: 7, padding: same, schedule: {rows_per_thread: 4, band_rows: 8}}")
                .schedule.algorithm_name(),
            "window");
  EXPECT_EQ(plan("{n: 1, c: 32, h: 28, w: 28, filter: 3, padding: same, schedule: {rows_per_thread: 2}}")
                .schedule.algorithm_name(),
            "rows");
}

// ---------------------------------------------------------------------------
// The staged algorithm (NHWC, large filters).

// ConvNeXt's first 7x7 layer in float16: a run of 32 channels (64 bytes;
// 40 does not divide 128), 128 / 32 = 4 columns, 28 rows, copied in 4
// groups of rows. The window is
// (28 - 1) + 7 = 34 rows by (4 - 1) + 7 = 10 columns of 32 2-byte channels:
// 21,760 bytes, copied 16 bytes (8 channels) at a time, 34 x 10 x 4 = 1,360
// copies over 128 threads. Tiles: 128 / 32 = 4 channel blocks x 56 / 4 = 14
// columns x 56 / 28 = 2 rows.
TEST(StagedPlan, DefaultOfTheConvNextRowInFloat16) {
  const KernelPlan p =
      plan("{n: 16, c: 128, h: 56, w: 56, filter: 7, padding: same, epilogue: bias, dtype: float16, layout: NHWC}");
  EXPECT_EQ(p.schedule.summary(), "staged: channels_per_block 32, block_tile [28, 4], copy_groups 4");
  EXPECT_EQ(p.block_threads, 128);
  EXPECT_EQ(p.number("staged_rows"), 34);
  EXPECT_EQ(p.number("staged_columns"), 10);
  EXPECT_EQ(p.smem_bytes, 34 * 10 * 32 * 2);
  EXPECT_EQ(p.number("copy_bytes"), 16);
  EXPECT_EQ(p.number("copy_elements"), 8);
  EXPECT_TRUE(p.flag("async_copies"));
  EXPECT_EQ(p.number("copy_groups"), 4);
  EXPECT_EQ(p.number("group_rows"), 9);  // 34 rows: 9, 9, 9 and 7
  EXPECT_EQ(p.number("tiles_per_image"), 4 * 14 * 2);
  EXPECT_FALSE(p.flag("ragged_tiles"));
  EXPECT_EQ(p.alignment, 16);
}

// Rows written in pairs, rounded and clamped as one (convgen::PairClamp):
// half types whose activation is a clamp to bounds they hold exactly (relu,
// relu6), in tiles of two rows or more; never float32 (no rounding to share),
// silu or hardswish (no such bounds), or one-row tiles. MobileNetV2's
// 192-channel 28^2 layer takes 14 rows at stride 1 (pairs) and, at batch 1,
// 1 row (the grid's halving: 1 x 4 x 4 tiles of 7 columns by 64 channels).
TEST(StagedPlan, PairsOfRowsWhereTheActivationClampsAfterTheRounding) {
  const std::string shape = "{n: 64, c: 192, h: 28, w: 28, filter: 3, padding: same, layout: NHWC, ";
  for (const char* dtype : {"float16", "bfloat16"}) {
    for (const char* activation : {"relu", "relu6"}) {
      const KernelPlan p = plan(shape + "dtype: " + dtype + ", epilogue: scale_shift, activation: " + activation + "}");
      EXPECT_TRUE(p.flag("pair_rows")) << dtype << " " << activation;
      EXPECT_EQ(p.schedule.values.at("tile_h"), 14);
    }
    for (const char* activation : {"none", "silu", "hardswish"}) {
      EXPECT_FALSE(plan(shape + "dtype: " + dtype + ", activation: " + activation + "}").flag("pair_rows"))
          << dtype << " " << activation;
    }
  }
  EXPECT_FALSE(plan(shape + "activation: relu6}").flag("pair_rows"));  // float32
  const KernelPlan one_row = plan(
      "{n: 1, c: 192, h: 28, w: 28, filter: 3, padding: same, layout: NHWC, dtype: float16, activation: relu6}");
  EXPECT_EQ(one_row.schedule.values.at("tile_h"), 1);
  EXPECT_FALSE(one_row.flag("pair_rows"));
}

// The same in float32, whose runs are longer: 32 channels (128 bytes), 128 /
// 32 = 4 columns; the window of 34 x 10 pixels of 32 floats is 43,520
// bytes. 96 rows take 4 tiles of 24 (28 would leave the last 12), and at
// stride 1 a plane narrower than two tiles of columns is one (7 for 4; at
// stride 2 it stays 4). A 5x5 layer of
// 72 float16 channels on 56x56: they run 24 (48 bytes; 40 and 36 do not
// divide 72 in whole 16-byte copies), 128 / 24 = 5.3 columns, nearest power
// of two 4; window 28 + 4 = 32 rows by 4 + 4 = 8 columns: 32 x 8 x 48 =
// 12,288 bytes.
TEST(StagedPlan, ChannelsAndColumnsFollowTheRunAndTheThreads) {
  const KernelPlan f32 = plan("{n: 16, c: 128, h: 56, w: 56, filter: 7, padding: same, layout: NHWC}");
  EXPECT_EQ(f32.schedule.summary(), "staged: channels_per_block 32, block_tile [28, 4], copy_groups 4");
  EXPECT_EQ(f32.smem_bytes, 34 * 10 * 32 * 4);
  EXPECT_EQ(plan("{n: 1, c: 256, h: 96, w: 96, filter: 5, padding: same, layout: NHWC}").schedule.summary(),
            "staged: channels_per_block 32, block_tile [24, 4], copy_groups 4");
  EXPECT_EQ(plan("{n: 64, c: 960, h: 7, w: 7, filter: 5, padding: same, layout: NHWC}").schedule.summary(),
            "staged: channels_per_block 32, block_tile [7, 7], copy_groups 4");
  EXPECT_EQ(plan("{n: 64, c: 672, h: 14, w: 14, filter: 5, stride: 2, padding: same, layout: NHWC}")
                .schedule.summary(),
            "staged: channels_per_block 32, block_tile [7, 4], copy_groups 4");
  // 120 channels: 24 (96 bytes; 32 does not divide 120, 30 is no multiple of 16 bytes).
  EXPECT_EQ(plan("{n: 64, c: 120, h: 28, w: 28, filter: 5, padding: same, layout: NHWC}").schedule.summary(),
            "staged: channels_per_block 24, block_tile [28, 4], copy_groups 4");
  const KernelPlan p =
      plan("{n: 64, c: 72, h: 56, w: 56, filter: 5, padding: same, dtype: float16, layout: NHWC}");
  EXPECT_EQ(p.schedule.summary(), "staged: channels_per_block 24, block_tile [28, 4], copy_groups 4");
  EXPECT_EQ(p.number("staged_rows"), 32);
  EXPECT_EQ(p.number("staged_columns"), 8);
  EXPECT_EQ(p.smem_bytes, 32 * 8 * 48);
  EXPECT_EQ(p.block_threads, 96);
}

// Where a pixel's run of the block's channels is no multiple of 4 bytes (7
// channels of float16: 14 bytes), each copy is one 2-byte element, a load
// and a store; and where a tile does not divide the plane, its last tiles
// are ragged. 7 channels take 128 / 7 = 18.3 columns: 16, and the 28-wide
// plane, narrower than two such tiles, is one of 28 columns; the 28 rows
// copy 34 x 32 x 7 = 7,616 elements over 196 threads, 39 a thread, over
// the 32 that fit, so the tile shrinks to 21 rows (25 x 32 x 7 / 196 = 29).
TEST(StagedPlan, TwoByteCopiesAndRaggedTiles) {
  const KernelPlan p =
      plan("{n: 8, c: 7, h: 28, w: 28, filter: 5, padding: same, epilogue: bias, dtype: float16, layout: NHWC}");
  EXPECT_EQ(p.schedule.summary(), "staged: channels_per_block 7, block_tile [21, 28]");
  EXPECT_EQ(p.number("copy_bytes"), 2);
  EXPECT_FALSE(p.flag("async_copies"));
  EXPECT_EQ(p.number("copy_groups"), 1);  // loads and stores: nothing lands later
  EXPECT_TRUE(p.flag("ragged_tiles"));
  EXPECT_EQ(p.number("tiles_per_image"), 1 * 2 * 1);
  EXPECT_EQ(p.alignment, 2);
}

// NHWC: staged for filters of 25 taps and more where it fits, and for
// smaller ones where its copies move 16 bytes; channels for the rest (a 3x3
// filter of 36 float16 channels, whose 72-byte pixels take 8-byte copies,
// and a 7x7 filter of 2 output channels a channel, whose 98 taps do not fit
// a thread's registers).
TEST(StagedPlan, DefaultRuleInNhwc) {
  const auto algorithm = [](const std::string& workload) { return plan(workload).schedule.algorithm_name(); };
  EXPECT_EQ(algorithm("{n: 16, c: 128, h: 56, w: 56, filter: 7, padding: same, dtype: float16, layout: NHWC}"),
            "staged");
  EXPECT_EQ(algorithm("{n: 64, c: 960, h: 7, w: 7, filter: 5, padding: same, dtype: bfloat16, layout: NHWC}"),
            "staged");
  EXPECT_EQ(algorithm("{n: 64, c: 144, h: 56, w: 56, filter: 3, padding: same, dtype: float16, layout: NHWC}"),
            "staged");
  EXPECT_EQ(algorithm("{n: 64, c: 36, h: 28, w: 28, filter: 3, padding: same, dtype: float16, layout: NHWC}"),
            "channels");
  EXPECT_EQ(algorithm("{n: 1, c: 16, h: 28, w: 28, filter: 7, multiplier: 2, padding: same, layout: NHWC}"),
            "channels");
  // NCHW is not staged's.
  EXPECT_EQ(algorithm("{n: 16, c: 512, h: 14, w: 14, filter: 7, padding: same}"), "window");
}

// Small filters: the most channels in runs of up to 128 bytes, in multiples
// of 32; in float32, where that run is no multiple of 64 bytes, up to 192
// bytes in multiples of 64 where their grid still holds two blocks an SM
// (144 channels at batch 64: 48, 192 bytes, not 24, 96 bytes; at batch 1,
// 84 blocks: 24; 192 channels keep 32, 128 bytes); 7 or
// 8 columns, whichever leaves fewer ragged (56 columns: 8, none ragged; 28:
// 7); 14 rows at stride 1, 7 at stride 2. At batch 1 the rows halve while
// the grid holds fewer than two blocks for each of the H100's 132 SMs: 960
// channels of 7 x 7 at 64 a block, 15 x 1 x 1 tiles of 7 rows, then 4, 2,
// 1 row (15 x 7 = 105 blocks, as many as it gets), copied in one group:
// groups only where the grid holds 4 blocks an SM (528 on the H100). The
// batch-64 layers' grids do (64 x 3 x 4 x 7 = 5,376 blocks for the first).
TEST(StagedPlan, SmallFilterDefaults) {
  const KernelPlan p = plan("{n: 64, c: 144, h: 56, w: 56, filter: 3, padding: same, layout: NHWC}");
  EXPECT_EQ(p.schedule.summary(), "staged: channels_per_block 48, block_tile [14, 8], copy_groups 4");
  EXPECT_EQ(p.block_threads, 48 * 8);
  EXPECT_EQ(p.smem_bytes, 16 * 10 * 48 * 4);
  EXPECT_EQ(p.number("tiles_per_image"), 3 * 4 * 7);
  EXPECT_EQ(plan("{n: 1, c: 144, h: 56, w: 56, filter: 3, padding: same, layout: NHWC}").schedule.summary(),
            "staged: channels_per_block 24, block_tile [7, 8]");
  EXPECT_EQ(plan("{n: 64, c: 192, h: 56, w: 56, filter: 3, stride: 2, padding: same, dtype: bfloat16, "
                 "layout: NHWC}")
                .schedule.summary(),
            "staged: channels_per_block 64, block_tile [7, 7], copy_groups 4");
  EXPECT_EQ(plan("{n: 64, c: 192, h: 28, w: 28, filter: 3, padding: same, layout: NHWC}").schedule.summary(),
            "staged: channels_per_block 32, block_tile [14, 7], copy_groups 4");
  EXPECT_EQ(plan("{n: 1, c: 960, h: 7, w: 7, filter: 3, padding: same, dtype: float16, layout: NHWC}")
                .schedule.summary(),
            "staged: channels_per_block 64, block_tile [1, 7]");
}

// Strided layers of pixels of at most 288 bytes: a block takes every
// channel of a pixel, 4 columns (144 float16 channels, 288 bytes: 576
// threads; the window of 7 rows at stride 2 is 15 x 9 pixels, 38,880
// bytes). 5x5 at stride 2: the large-filter rows (28) shrink until the
// window fits 48 KiB: 21, 15, then 11 rows (25 x 11 pixels of 72 float16
// channels, 39,600 bytes). 384-byte pixels: the usual rule. A 3x3 filter at
// stride 1 whose pixels hold 129-288 bytes: whole pixels, 3 columns, 28
// rows (30 x 5 pixels of 288 bytes, 43,200), where the grid holds two blocks
// an SM: 64 x 2 x 19 = 2,432 tiles; at batch 1, 38, so the usual rule (48
// channels, 8 columns, rows halved to 4).
TEST(StagedPlan, StridedLayersTakeWholePixels) {
  const KernelPlan p =
      plan("{n: 64, c: 144, h: 56, w: 56, filter: 3, stride: 2, padding: same, dtype: float16, layout: NHWC}");
  EXPECT_EQ(p.schedule.summary(), "staged: channels_per_block 144, block_tile [7, 4], copy_groups 4");
  EXPECT_EQ(p.block_threads, 576);
  EXPECT_EQ(p.smem_bytes, 15 * 9 * 288);
  const KernelPlan large =
      plan("{n: 64, c: 72, h: 56, w: 56, filter: 5, stride: 2, padding: same, dtype: float16, layout: NHWC}");
  EXPECT_EQ(large.schedule.summary(), "staged: channels_per_block 72, block_tile [11, 4], copy_groups 4");
  EXPECT_EQ(large.smem_bytes, 25 * 11 * 144);
  const KernelPlan stride1 =
      plan("{n: 64, c: 144, h: 56, w: 56, filter: 3, padding: same, dtype: float16, layout: NHWC}");
  EXPECT_EQ(stride1.schedule.summary(), "staged: channels_per_block 144, block_tile [28, 3], copy_groups 4");
  EXPECT_EQ(stride1.smem_bytes, 30 * 5 * 288);
  EXPECT_EQ(stride1.number("tiles_per_image"), 2 * 19);
  EXPECT_EQ(plan("{n: 1, c: 144, h: 56, w: 56, filter: 3, padding: same, dtype: float16, layout: NHWC}")
                .schedule.summary(),
            "staged: channels_per_block 48, block_tile [4, 8]");
  EXPECT_EQ(plan("{n: 64, c: 96, h: 56, w: 56, filter: 3, stride: 2, padding: same, layout: NHWC}")
                .schedule.summary(),
            "staged: channels_per_block 32, block_tile [7, 7], copy_groups 4");
}

// copy_groups splits the staged rows into groups of ceil(rows / groups):
// 16 rows in 3 groups are 6, 6 and 4; asking for more groups than make
// rows of their own gets as many as there are (6 rows, 8 asked: 6 groups
// of 1 row; 7 asked of 16 rows: groups of 3, so 6). Tiles of [14, 8] stage
// 16 rows.
TEST(StagedPlan, CopyGroupsSplitTheRows) {
  const std::string shape = "{n: 64, c: 144, h: 56, w: 56, filter: 3, padding: same, dtype: float16, layout: NHWC, ";
  const KernelPlan three = plan(shape + "schedule: {algorithm: staged, channels_per_block: 48, block_tile: [14, 8], copy_groups: 3}}");
  EXPECT_EQ(three.number("staged_rows"), 16);
  EXPECT_EQ(three.number("group_rows"), 6);
  EXPECT_EQ(three.number("copy_groups"), 3);
  EXPECT_EQ(three.schedule.summary(), "staged: channels_per_block 48, block_tile [14, 8], copy_groups 3");
  const KernelPlan seven = plan(shape + "schedule: {algorithm: staged, channels_per_block: 48, block_tile: [14, 8], copy_groups: 7}}");
  EXPECT_EQ(seven.number("group_rows"), 3);
  EXPECT_EQ(seven.number("copy_groups"), 6);
  const KernelPlan one = plan(shape + "schedule: {algorithm: staged, channels_per_block: 48, block_tile: [14, 8], copy_groups: 1}}");
  EXPECT_EQ(one.schedule.summary(), "staged: channels_per_block 48, block_tile [14, 8]");
  EXPECT_FALSE(one.flag("grouped_copies"));
  const KernelPlan tiny = plan(shape + "schedule: {algorithm: staged, channels_per_block: 48, block_tile: [4, 8], copy_groups: 8}}");
  EXPECT_EQ(tiny.number("staged_rows"), 6);
  EXPECT_EQ(tiny.number("copy_groups"), 6);
  EXPECT_EQ(tiny.number("group_rows"), 1);
}

// A forced schedule that cannot run names the knob to change.
TEST(StagedPlan, MisfitsNameTheKnob) {
  const auto error = [](const std::string& schedule) {
    const std::vector<Diagnostic> errors = spec_errors([&] {
      plan("{n: 1, c: 120, h: 28, w: 28, filter: 5, padding: same, dtype: float16, layout: NHWC, schedule: " +
           schedule + "}");
    });
    return errors.size() == 1 ? errors[0].message : "";
  };
  EXPECT_EQ(error("{algorithm: staged, channels_per_block: 48}"),
            "the staged algorithm cannot run this workload: channels_per_block 48 does not divide the 120 channels");
  EXPECT_EQ(error("{algorithm: staged, block_tile: [29, 4]}"),
            "the staged algorithm cannot run this workload: block_tile [29, 4] is larger than the 28 x 28 outputs of "
            "a plane");
  EXPECT_EQ(error("{algorithm: staged, channels_per_block: 60, block_tile: [28, 28]}"),
            "the staged algorithm cannot run this workload: a block needs 1680 threads (channels_per_block 60 x 28 "
            "tile columns); at most 1024");
}

// ---------------------------------------------------------------------------
// float16 and bfloat16 in NCHW: the same four algorithms, vector widths in
// elements, alignments in bytes (element bytes x elements per vector).

// Rows: the widest load is 16 bytes, 8 2-byte elements. At 8 a lane the
// 3x3 band of 4 rows needs 6 x 8 + 2 halo + 9 taps + 8 accumulators = 67
// values, 3 rows 59: 2 rows (51) fit the 54.
TEST(HalfPlan, RowsLoadEightTwoByteElements) {
  const KernelPlan p = plan("{n: 64, c: 144, h: 56, w: 56, filter: 3, padding: same, dtype: float16}");
  EXPECT_EQ(p.name, "dw_f16_nchw_n64_c144_h56_w56_k3x3_s1_p1_m1");
  EXPECT_EQ(sched(p.schedule), "rows 2 vector 8 threads 128");
  EXPECT_EQ(p.number("group_lanes"), 8);  // 7 lanes of 8 columns
  EXPECT_EQ(p.number("outputs_per_lane"), 8);
  EXPECT_EQ(p.number("vector_width_bytes"), 16);
  EXPECT_TRUE(p.flag("vector_store"));
  EXPECT_EQ(p.number("output_vector_bytes"), 16);
  EXPECT_EQ(p.alignment, 16);
  EXPECT_EQ(p.bytes_read, 2LL * (64 * 144 * 56 * 56 + 144 * 9));

  // 28 columns: 4 elements a lane (8 bytes), 4 rows fit.
  const KernelPlan b = plan("{n: 64, c: 240, h: 28, w: 28, filter: 3, padding: same, dtype: bfloat16}");
  EXPECT_EQ(b.name, "dw_bf16_nchw_n64_c240_h28_w28_k3x3_s1_p1_m1");
  EXPECT_EQ(sched(b.schedule), "rows 4 vector 4 threads 128");
  EXPECT_EQ(b.alignment, 8);
  // Stride 2 on 14 columns: 2 elements a lane, one output each: 4 bytes.
  const KernelPlan s2 = plan("{n: 1, c: 96, h: 14, w: 14, filter: 3, stride: 2, padding: same, dtype: float16}");
  EXPECT_EQ(s2.schedule.at("vector_width"), 2);
  EXPECT_FALSE(s2.flag("vector_store"));
  EXPECT_EQ(s2.alignment, 4);
  // The same workload in float32 keeps its 4-float loads.
  EXPECT_EQ(sched(plan("{n: 64, c: 144, h: 56, w: 56, filter: 3, padding: same}").schedule),
            "rows 4 vector 4 threads 128");

  // 8 float32 elements are 32 bytes: refused at the knob, naming the limit.
  const Workload wide = workload("{n: 1, c: 8, h: 56, w: 56, filter: 3, padding: same, schedule: {vector_width: 8}}");
  const std::vector<Diagnostic> errors = spec_errors([&] { plan_kernel(wide); });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].where.str(), wide.schedule.at("vector_width").str());
  EXPECT_EQ(errors[0].message,
            "the rows algorithm cannot run this workload: vector_width 8 is 32 bytes of float32 elements; one load "
            "moves at most 16 bytes; use vector_width 4 or algorithm: tiles");
}

// Tiles stage floats whatever the dtype: the same schedule and shared memory
// as float32, one element per load and store.
TEST(HalfPlan, TilesAlignToOneElement) {
  const std::string shape = "n: 1, c: 32, h: 33, w: 33, filter: 5, multiplier: 2, dilation: 2, padding: same, ";
  const KernelPlan f32 = plan("{" + shape + "schedule: {algorithm: tiles}}");
  const KernelPlan bf16 = plan("{" + shape + "dtype: bfloat16, schedule: {algorithm: tiles}}");
  EXPECT_EQ(bf16.name, "dw_bf16_nchw_n1_c32_h33_w33_k5x5_s1_p4_d2_m2");
  EXPECT_EQ(bf16.schedule, f32.schedule);
  EXPECT_EQ(bf16.smem_bytes, f32.smem_bytes);
  EXPECT_EQ(bf16.alignment, 2);
  EXPECT_EQ(f32.alignment, 4);
  EXPECT_EQ(bf16.bytes_written * 2, f32.bytes_written);
}

// Planes: 16-byte copies of 8 2-byte elements where the planes are one run
// (odd planes), else one element at a time; the staged planes are floats, as
// in float32.
TEST(HalfPlan, PlanesCopySixteenBytesOrOneElement) {
  const KernelPlan p = plan("{n: 64, c: 960, h: 7, w: 7, filter: 3, padding: same, dtype: float16}");
  EXPECT_EQ(p.name, "dw_f16_nchw_n64_c960_h7_w7_k3x3_s1_p1_m1");
  EXPECT_EQ(p.schedule.summary(), "planes: warps_per_block 2");
  EXPECT_EQ(p.number("in_copy"), 8);
  EXPECT_EQ(p.number("in_copies_per_lane"), 7);  // ceil(49 / 8)
  EXPECT_EQ(p.number("out_copy"), 8);
  EXPECT_EQ(p.smem_bytes, 2 * 32 * 4 * (49 + 49));
  EXPECT_EQ(p.alignment, 16);

  const KernelPlan even = plan("{n: 64, c: 384, h: 8, w: 8, filter: 3, stride: 2, padding: same, dtype: bfloat16}");
  EXPECT_EQ(even.schedule.algorithm_name(), "planes");
  EXPECT_FALSE(even.flag("vector_copy_in"));
  EXPECT_EQ(even.number("in_copy"), 1);
  EXPECT_EQ(even.number("in_copies_per_lane"), 64);
  EXPECT_EQ(even.number("out_copy"), 1);
  EXPECT_EQ(even.number("out_copies_per_lane"), 16);
  EXPECT_EQ(even.alignment, 2);
  EXPECT_EQ(plan("{n: 64, c: 384, h: 8, w: 8, filter: 3, stride: 2, padding: same}").alignment, 4);
}

// Window: the input is staged as the tensor holds it (cp.async moves bytes),
// rows of 2-byte elements 16-byte aligned; taps and bias as floats. ConvNeXt's
// row in float16: 16-byte copies of 8 elements, pad_columns 8 (3 rounded up to
// a copy), 67 columns needed, pitch 72 (144 bytes: not a multiple of 128);
// two buffers of 62 x 72 elements and 52 floats.
TEST(HalfPlan, WindowStagesTwoByteElements) {
  const KernelPlan p = plan("{n: 16, c: 128, h: 56, w: 56, filter: 7, padding: same, epilogue: bias, dtype: float16}");
  EXPECT_EQ(p.name, "dw_f16_nchw_n16_c128_h56_w56_k7x7_s1_p3_m1_bias");
  EXPECT_EQ(p.schedule.summary(),
            "window: rows_per_thread 7, columns_per_thread 2, band_rows 56, bands_per_block 1, pipelined, filter in "
            "registers");
  EXPECT_EQ(p.number("copy_elements"), 8);
  EXPECT_EQ(p.number("copy_bytes"), 16);
  EXPECT_EQ(p.number("pad_columns"), 8);
  EXPECT_EQ(p.number("window_offset"), 5);
  EXPECT_EQ(p.number("pitch"), 72);
  EXPECT_EQ(p.smem_bytes, 2 * (62 * 72 * 2 + 4 * 52));
  EXPECT_EQ(p.alignment, 16);
  EXPECT_EQ(p.number("store_bytes"), 4);  // 2 columns a thread

  // 28 columns are 56 bytes: 8-byte copies of 4 elements (float32 rows take
  // 16 or 4 bytes), not pipelined by default; 14 columns, 28 bytes: 4-byte
  // copies of pairs.
  const KernelPlan b = plan("{n: 1, c: 64, h: 28, w: 28, filter: 5, padding: same, dtype: bfloat16, "
                            "schedule: {algorithm: window}}");
  EXPECT_EQ(b.number("copy_elements"), 4);
  EXPECT_EQ(b.number("copy_bytes"), 8);
  EXPECT_TRUE(b.flag("async_copies"));
  EXPECT_EQ(b.schedule.at("pipelined"), 0);
  EXPECT_EQ(b.alignment, 8);
  const KernelPlan narrow = plan("{n: 1, c: 64, h: 14, w: 14, filter: 7, padding: same, dtype: float16, "
                                 "schedule: {algorithm: window}}");
  EXPECT_EQ(narrow.number("copy_bytes"), 4);
  EXPECT_EQ(plan("{n: 1, c: 64, h: 14, w: 14, filter: 7, padding: same, schedule: {algorithm: window}}")
                .number("copy_bytes"),
            4);
  // Odd widths: one element a copy (no cp.async of 2 bytes), 2-byte alignment.
  const KernelPlan odd = plan("{n: 1, c: 64, h: 27, w: 27, filter: 7, padding: same, dtype: float16, "
                              "schedule: {algorithm: window}}");
  EXPECT_EQ(odd.number("copy_bytes"), 2);
  EXPECT_FALSE(odd.flag("async_copies"));
  EXPECT_EQ(odd.alignment, 2);
}

// Every NCHW algorithm serves the three dtypes; the default rule picks among
// them as in float32.
TEST(HalfPlan, EveryNchwAlgorithmServesHalfTypes) {
  for (const char* dtype : {"float16", "bfloat16"}) {
    for (const char* algorithm : {"tiles", "rows", "planes", "window"}) {
      SCOPED_TRACE(std::string(dtype) + " " + algorithm);
      const KernelPlan p = plan(std::string("{n: 64, c: 64, h: 8, w: 8, filter: 5, padding: same, dtype: ") + dtype +
                                ", schedule: {algorithm: " + algorithm + "}}");
      EXPECT_EQ(p.schedule.algorithm_name(), algorithm);
      EXPECT_EQ(p.workload.dtype, std::string(dtype) == "float16" ? DataType::kFloat16 : DataType::kBFloat16);
    }
  }
  EXPECT_EQ(plan("{n: 16, c: 512, h: 14, w: 14, filter: 7, padding: same, dtype: float16}").schedule.algorithm_name(),
            "window");
  EXPECT_EQ(plan("{n: 64, c: 960, h: 7, w: 7, filter: 3, padding: same, dtype: bfloat16}").schedule.algorithm_name(),
            "planes");
  EXPECT_EQ(plan("{n: 1, c: 64, h: 32, w: 32, filter: 7, dilation: 2, padding: same, dtype: float16}")
                .schedule.algorithm_name(),
            "tiles");
}

}  // namespace
}  // namespace convgen_test
