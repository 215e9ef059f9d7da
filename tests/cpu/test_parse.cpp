// Stage 1: YAML spec -> workloads (defaults, value forms, locations).
#include <gtest/gtest.h>

#include "convgen/gen/spec.hpp"
#include "test_util.h"

namespace convgen_test {
namespace {

TEST(Parse, DefaultsAreInheritedAndOverridden) {
  const Spec spec = parse(R"(library: lib
defaults:
  c: 32
  filter: 3
  padding: same
  stride: 2
  epilogue: bias
  activation: relu
workloads:
  - {n: 1, h: 16, w: 16}
  - {n: 4, c: 64, h: 8, w: 12, filter: 5, stride: 1, epilogue: none, activation: relu6, padding: valid}
)");
  EXPECT_EQ(spec.library, "lib");
  ASSERT_EQ(spec.workloads.size(), 2u);
  const Workload& a = spec.workloads[0];
  EXPECT_EQ(a.n, 1);
  EXPECT_EQ(a.c, 32);
  EXPECT_EQ(a.h, 16);
  EXPECT_EQ(a.w, 16);
  EXPECT_EQ(a.kh, 3);
  EXPECT_EQ(a.kw, 3);
  EXPECT_EQ(a.stride_h, 2);
  EXPECT_EQ(a.stride_w, 2);
  EXPECT_EQ(a.pad_top, 1);
  EXPECT_EQ(a.pad_left, 1);
  EXPECT_EQ(a.epilogue, Epilogue::kBias);
  EXPECT_EQ(a.activation, Activation::kRelu);
  EXPECT_EQ(a.multiplier, 1);   // neither default nor workload: the built-in 1
  EXPECT_EQ(a.dilation_h, 1);

  const Workload& b = spec.workloads[1];
  EXPECT_EQ(b.n, 4);
  EXPECT_EQ(b.c, 64);
  EXPECT_EQ(b.h, 8);
  EXPECT_EQ(b.w, 12);
  EXPECT_EQ(b.kh, 5);
  EXPECT_EQ(b.kw, 5);
  EXPECT_EQ(b.stride_h, 1);
  EXPECT_EQ(b.stride_w, 1);
  EXPECT_EQ(b.pad_top + b.pad_bottom + b.pad_left + b.pad_right, 0);
  EXPECT_EQ(b.epilogue, Epilogue::kNone);
  EXPECT_EQ(b.activation, Activation::kRelu6);
}

TEST(Parse, BuiltInDefaults) {
  const Workload wl = workload("{n: 2, c: 8, h: 16, w: 16, filter: 3, padding: valid}");
  EXPECT_EQ(wl.stride_h, 1);
  EXPECT_EQ(wl.stride_w, 1);
  EXPECT_EQ(wl.dilation_h, 1);
  EXPECT_EQ(wl.dilation_w, 1);
  EXPECT_EQ(wl.multiplier, 1);
  EXPECT_EQ(wl.epilogue, Epilogue::kNone);
  EXPECT_EQ(wl.activation, Activation::kNone);
  EXPECT_FALSE(wl.schedule.has("tile_h"));
  EXPECT_FALSE(wl.schedule.has("threads_y"));
  EXPECT_FALSE(wl.schedule.has("vthreads_y"));
  EXPECT_FALSE(wl.schedule.has("shared_input"));
  EXPECT_FALSE(wl.schedule.has("shared_filter"));
  EXPECT_FALSE(wl.schedule.has("channels_per_block"));
  EXPECT_FALSE(wl.schedule.algorithm.has_value());
  EXPECT_FALSE(wl.schedule.has("rows_per_thread"));
  EXPECT_FALSE(wl.schedule.has("vector_width"));
  EXPECT_FALSE(wl.schedule.has("threads_per_block"));
  EXPECT_TRUE(wl.schedule.keys.empty());
}

TEST(Parse, RuntimeBatchIsZero) {
  EXPECT_EQ(workload("{n: runtime, c: 8, h: 16, w: 16, filter: 3, padding: same}").n, 0);
  EXPECT_EQ(workload("{n: 7, c: 8, h: 16, w: 16, filter: 3, padding: same}").n, 7);
  EXPECT_EQ(workload("{n: 65535, c: 8, h: 16, w: 16, filter: 3, padding: same}").n, 65535);
}

TEST(Parse, OptionalKeysWithTheirOnlyValues) {
  const Workload wl =
      workload("{op: depthwise_conv2d, dtype: float32, layout: NCHW, n: 1, c: 8, h: 16, w: 16, filter: 3, padding: 1}");
  EXPECT_EQ(wl.c, 8);
}

TEST(Parse, FilterAsIntAndAsPair) {
  const Workload square = workload("{n: 1, c: 8, h: 16, w: 16, filter: 5, padding: valid}");
  EXPECT_EQ(square.kh, 5);
  EXPECT_EQ(square.kw, 5);
  const Workload rect = workload("{n: 1, c: 8, h: 16, w: 16, filter: [3, 7], padding: valid}");
  EXPECT_EQ(rect.kh, 3);
  EXPECT_EQ(rect.kw, 7);
  const Workload one = workload("{n: 1, c: 8, h: 16, w: 16, filter: [1, 11], padding: valid}");
  EXPECT_EQ(one.kh, 1);
  EXPECT_EQ(one.kw, 11);
}

TEST(Parse, StrideAndDilationAsIntAndAsPair) {
  const Workload a = workload("{n: 1, c: 8, h: 16, w: 16, filter: 3, padding: valid, stride: 2, dilation: 3}");
  EXPECT_EQ(a.stride_h, 2);
  EXPECT_EQ(a.stride_w, 2);
  EXPECT_EQ(a.dilation_h, 3);
  EXPECT_EQ(a.dilation_w, 3);
  const Workload b =
      workload("{n: 1, c: 8, h: 16, w: 16, filter: 3, padding: valid, stride: [2, 1], dilation: [1, 2]}");
  EXPECT_EQ(b.stride_h, 2);
  EXPECT_EQ(b.stride_w, 1);
  EXPECT_EQ(b.dilation_h, 1);
  EXPECT_EQ(b.dilation_w, 2);
}

TEST(Parse, MultiplierEpilogueActivation) {
  struct Case {
    std::string epilogue, activation;
    Epilogue e;
    Activation a;
  };
  for (const Case& c : std::vector<Case>{{"none", "none", Epilogue::kNone, Activation::kNone},
                                         {"bias", "relu", Epilogue::kBias, Activation::kRelu},
                                         {"scale_shift", "relu6", Epilogue::kScaleShift, Activation::kRelu6},
                                         {"scale_shift", "none", Epilogue::kScaleShift, Activation::kNone},
                                         {"none", "relu6", Epilogue::kNone, Activation::kRelu6}}) {
    SCOPED_TRACE(c.epilogue + " / " + c.activation);
    const Workload wl = workload("{n: 1, c: 8, h: 16, w: 16, filter: 3, padding: same, multiplier: 4, epilogue: " +
                                c.epilogue + ", activation: " + c.activation + "}");
    EXPECT_EQ(wl.multiplier, 4);
    EXPECT_EQ(wl.out_channels(), 32);
    EXPECT_EQ(wl.epilogue, c.e);
    EXPECT_EQ(wl.activation, c.a);
    EXPECT_EQ(to_string(wl.epilogue), c.epilogue);
    EXPECT_EQ(to_string(wl.activation), c.activation);
  }
}

// `same`: (k-1)*d/2 on top/left, the remainder on bottom/right.
TEST(Parse, PaddingSameForOddAndEvenFiltersAndDilations) {
  struct Case {
    int kh, kw, dh, dw;
    int top, bottom, left, right;
  };
  for (const Case& c : std::vector<Case>{
           {3, 3, 1, 1, 1, 1, 1, 1},   // odd k: k/2 everywhere
           {5, 5, 1, 1, 2, 2, 2, 2},
           {7, 7, 1, 1, 3, 3, 3, 3},
           {1, 1, 1, 1, 0, 0, 0, 0},
           {2, 2, 1, 1, 0, 1, 0, 1},   // even k: the extra row/column goes bottom/right
           {4, 4, 1, 1, 1, 2, 1, 2},
           {3, 3, 2, 2, 2, 2, 2, 2},   // dilation: window (k-1)*d
           {2, 2, 3, 3, 1, 2, 1, 2},   // window 3: 1 + 2
           {4, 4, 2, 2, 3, 3, 3, 3},   // window 6
           {5, 5, 3, 3, 6, 6, 6, 6},   // window 12
           {3, 4, 1, 1, 1, 1, 1, 2},   // each axis on its own
           {2, 3, 3, 1, 1, 2, 1, 1},
           {11, 11, 8, 8, 40, 40, 40, 40},
       }) {
    const std::string text = "{n: 1, c: 8, h: 96, w: 96, filter: [" + std::to_string(c.kh) + ", " +
                             std::to_string(c.kw) + "], dilation: [" + std::to_string(c.dh) + ", " +
                             std::to_string(c.dw) + "], padding: same}";
    SCOPED_TRACE(text);
    const Workload wl = workload(text);
    EXPECT_EQ(wl.pad_top, c.top);
    EXPECT_EQ(wl.pad_bottom, c.bottom);
    EXPECT_EQ(wl.pad_left, c.left);
    EXPECT_EQ(wl.pad_right, c.right);
    // With stride 1 the output keeps the input's size.
    EXPECT_EQ(wl.out_h(), 96);
    EXPECT_EQ(wl.out_w(), 96);
  }
}

TEST(Parse, PaddingSameWithStrideGivesCeilOfInputOverStride) {
  for (int h : {7, 8, 14, 15, 112, 113}) {
    for (int s : {2, 3, 4}) {
      for (int k : {2, 3, 4, 5, 7}) {
        const Workload wl = workload("{n: 1, c: 8, h: " + std::to_string(h) + ", w: " + std::to_string(h) +
                                     ", filter: " + std::to_string(k) + ", stride: " + std::to_string(s) +
                                     ", padding: same}");
        EXPECT_EQ(wl.out_h(), (h + s - 1) / s) << "h " << h << " s " << s << " k " << k;
      }
    }
  }
}

TEST(Parse, PaddingValidIntPairAndFourSides) {
  const Workload valid = workload("{n: 1, c: 8, h: 16, w: 16, filter: 5, padding: valid}");
  EXPECT_EQ(std::vector<int>({valid.pad_top, valid.pad_bottom, valid.pad_left, valid.pad_right}),
            std::vector<int>({0, 0, 0, 0}));
  const Workload one = workload("{n: 1, c: 8, h: 16, w: 16, filter: 5, padding: 2}");
  EXPECT_EQ(std::vector<int>({one.pad_top, one.pad_bottom, one.pad_left, one.pad_right}),
            std::vector<int>({2, 2, 2, 2}));
  const Workload pair = workload("{n: 1, c: 8, h: 16, w: 16, filter: 5, padding: [1, 3]}");
  EXPECT_EQ(std::vector<int>({pair.pad_top, pair.pad_bottom, pair.pad_left, pair.pad_right}),
            std::vector<int>({1, 1, 3, 3}));
  const Workload four = workload("{n: 1, c: 8, h: 16, w: 16, filter: 7, padding: [0, 1, 2, 3]}");
  EXPECT_EQ(std::vector<int>({four.pad_top, four.pad_bottom, four.pad_left, four.pad_right}),
            std::vector<int>({0, 1, 2, 3}));
  // A pad as wide as the window is allowed; one wider is not (corpus).
  const Workload widest = workload("{n: 1, c: 8, h: 16, w: 16, filter: 3, dilation: 2, padding: 4}");
  EXPECT_EQ(widest.pad_top, 4);
}

TEST(Parse, ScheduleKeys) {
  const Workload wl = workload(
      "{n: 1, c: 8, h: 64, w: 64, filter: 3, padding: same, schedule: {block_tile: [16, 32], threads: [4, 16], "
      "vthreads: [2, 1], shared_input: false, shared_filter: true, channels_per_block: 2}}");
  const ScheduleRequest& s = wl.schedule;
  EXPECT_EQ(s.value("tile_h"), 16);
  EXPECT_EQ(s.value("tile_w"), 32);
  EXPECT_EQ(s.value("threads_y"), 4);
  EXPECT_EQ(s.value("threads_x"), 16);
  EXPECT_EQ(s.value("vthreads_y"), 2);
  EXPECT_EQ(s.value("vthreads_x"), 1);
  EXPECT_EQ(s.value("shared_input"), false);
  EXPECT_EQ(s.value("shared_filter"), true);
  EXPECT_EQ(s.value("channels_per_block"), 2);

  const Workload square = workload(
      "{n: 1, c: 8, h: 64, w: 64, filter: 3, padding: same, schedule: {block_tile: 16, threads: 8, vthreads: 2}}");
  EXPECT_EQ(square.schedule.value("tile_h"), 16);
  EXPECT_EQ(square.schedule.value("tile_w"), 16);
  EXPECT_EQ(square.schedule.value("threads_y"), 8);
  EXPECT_EQ(square.schedule.value("threads_x"), 8);
  EXPECT_EQ(square.schedule.value("vthreads_y"), 2);
  EXPECT_EQ(square.schedule.value("vthreads_x"), 2);
  EXPECT_FALSE(square.schedule.has("shared_input"));
}

TEST(Parse, RowsScheduleKeys) {
  const Workload wl = workload(
      "{n: 1, c: 8, h: 64, w: 64, filter: 3, padding: same, schedule: {algorithm: rows, rows_per_thread: 16, "
      "vector_width: 2, threads_per_block: 1024}}");
  const ScheduleRequest& s = wl.schedule;
  EXPECT_EQ(s.algorithm, "rows");
  EXPECT_EQ(s.value("rows_per_thread"), 16);
  EXPECT_EQ(s.value("vector_width"), 2);
  EXPECT_EQ(s.value("threads_per_block"), 1024);
  EXPECT_EQ(keys_of(s), "rows_per_thread vector_width threads_per_block");
  EXPECT_FALSE(s.has("tile_h"));

  EXPECT_EQ(workload("{n: 1, c: 8, h: 64, w: 64, filter: 3, padding: same, schedule: {algorithm: tiles}}")
                .schedule.algorithm,
            "tiles");
  for (int width : {1, 2, 4}) {
    EXPECT_EQ(workload("{n: 1, c: 8, h: 64, w: 64, filter: 3, padding: same, schedule: {vector_width: " +
                       std::to_string(width) + "}}")
                  .schedule.value("vector_width"),
              width);
  }
  EXPECT_EQ(workload("{n: 1, c: 8, h: 64, w: 64, filter: 3, padding: same, schedule: {threads_per_block: 32}}")
                .schedule.value("threads_per_block"),
            32);
}

TEST(Parse, PlanesAndCacheKeys) {
  const Workload wl = workload(
      "{n: 64, c: 8, h: 7, w: 7, filter: 3, padding: same, schedule: {algorithm: planes, warps_per_block: 3, "
      "input_cache: evict_first, output_cache: normal}}");
  const ScheduleRequest& s = wl.schedule;
  EXPECT_EQ(s.algorithm, "planes");
  EXPECT_EQ(s.value("warps_per_block"), 3);
  EXPECT_EQ(keys_of(s), "warps_per_block input_cache output_cache");
  EXPECT_EQ(s.value("input_cache"), 1);
  EXPECT_EQ(s.value("output_cache"), 0);

  // The cache knobs belong to no algorithm.
  const Workload caches =
      workload("{n: 1, c: 8, h: 64, w: 64, filter: 3, padding: same, schedule: {output_cache: evict_first}}");
  EXPECT_EQ(caches.schedule.value("output_cache"), 1);
  EXPECT_FALSE(caches.schedule.has("input_cache"));
  EXPECT_EQ(keys_of(caches.schedule), "output_cache");
}

// The knobs set, in the spec's order, with where each key and value is: an
// error about mixing algorithms points at the first key of each.
TEST(Parse, KnobKeysInTheSpecsOrder) {
  const Workload wl = workload(
      "{n: 1, c: 8, h: 64, w: 64, filter: 3, padding: same, schedule: {algorithm: rows, vector_width: 2, "
      "threads: [8, 16], rows_per_thread: 4, block_tile: 16}}");
  const ScheduleRequest& s = wl.schedule;
  EXPECT_EQ(keys_of(s), "vector_width threads rows_per_thread block_tile");
  EXPECT_EQ(s.keys[0].key_where.str(), "test.yaml:3:86");
  EXPECT_EQ(s.keys[1].key_where.str(), "test.yaml:3:103");
  EXPECT_EQ(s.keys[1].value_where.str(), "test.yaml:3:112");
}

TEST(Parse, ScheduleInDefaultsIsInherited) {
  const Spec spec = parse(R"(library: lib
defaults:
  schedule: {threads: [4, 32]}
workloads:
  - {n: 1, c: 8, h: 64, w: 64, filter: 3, padding: same}
  - {n: 1, c: 8, h: 64, w: 64, filter: 5, padding: same, schedule: {threads: [8, 16]}}
)");
  ASSERT_EQ(spec.workloads.size(), 2u);
  EXPECT_EQ(spec.workloads[0].schedule.value("threads_y"), 4);
  EXPECT_EQ(spec.workloads[0].schedule.value("threads_x"), 32);
  EXPECT_EQ(spec.workloads[1].schedule.value("threads_y"), 8);
  EXPECT_EQ(spec.workloads[1].schedule.value("threads_x"), 16);
}

TEST(Parse, LocationsOfWorkloadsAndScheduleKeys) {
  const Spec spec = parse(R"(# a comment
library: lib
workloads:
  - {n: 1, c: 8, h: 16, w: 16, filter: 3, padding: same}
  - n: 1
    c: 8
    h: 64
    w: 64
    filter: 3
    padding: same
    schedule:
      block_tile: [32, 32]
      threads: [8, 16]
      vthreads: [1, 2]
      channels_per_block: 2
  -   {n: 1, c: 8, h: 32, w: 32, filter: 3, padding: same}
)",
                          "dir/my.yaml");
  EXPECT_EQ(spec.file, "dir/my.yaml");
  EXPECT_EQ(spec.library_where.str(), "dir/my.yaml:2:10");
  ASSERT_EQ(spec.workloads.size(), 3u);
  EXPECT_EQ(spec.workloads[0].where.str(), "dir/my.yaml:4:5");
  EXPECT_EQ(spec.workloads[1].where.str(), "dir/my.yaml:5:5");
  EXPECT_EQ(spec.workloads[2].where.str(), "dir/my.yaml:16:7");
  // Without a schedule, the schedule's location is the workload's.
  EXPECT_EQ(spec.workloads[0].schedule.where.str(), "dir/my.yaml:4:5");
  const ScheduleRequest& s = spec.workloads[1].schedule;
  EXPECT_EQ(s.where.str(), "dir/my.yaml:12:7");
  EXPECT_EQ(s.at("block_tile").str(), "dir/my.yaml:12:19");
  EXPECT_EQ(s.at("threads").str(), "dir/my.yaml:13:16");
  EXPECT_EQ(s.at("vthreads").str(), "dir/my.yaml:14:17");
  EXPECT_EQ(s.at("channels_per_block").str(), "dir/my.yaml:15:27");
  EXPECT_EQ(s.keys.front().key, "block_tile");
  EXPECT_EQ(s.keys.front().key_where.str(), "dir/my.yaml:12:7");
  // A knob the spec does not set is blamed on the schedule.
  EXPECT_EQ(s.at("shared_input").str(), "dir/my.yaml:12:7");
}

TEST(Parse, LocationsOfRowsScheduleKeys) {
  const Spec spec = parse(R"(library: lib
workloads:
  - n: 1
    c: 8
    h: 64
    w: 64
    filter: 3
    padding: same
    schedule:
      algorithm: rows
      threads_per_block: 256
      rows_per_thread: 2
      vector_width: 4
)",
                          "dir/my.yaml");
  ASSERT_EQ(spec.workloads.size(), 1u);
  const ScheduleRequest& s = spec.workloads[0].schedule;
  EXPECT_EQ(s.where.str(), "dir/my.yaml:10:7");
  EXPECT_EQ(s.algorithm_where.str(), "dir/my.yaml:10:18");
  EXPECT_EQ(s.at("threads_per_block").str(), "dir/my.yaml:11:26");
  EXPECT_EQ(s.at("rows_per_thread").str(), "dir/my.yaml:12:24");
  EXPECT_EQ(s.at("vector_width").str(), "dir/my.yaml:13:21");
  EXPECT_EQ(s.keys.front().key, "threads_per_block");
  EXPECT_EQ(s.keys.front().key_where.str(), "dir/my.yaml:11:7");
}

TEST(Parse, LibraryKeyIsOptional) {
  const Spec spec = parse("workloads:\n  - {n: 1, c: 8, h: 16, w: 16, filter: 3, padding: same}\n");
  EXPECT_EQ(spec.library, "");
  EXPECT_EQ(spec.workloads.size(), 1u);
}

TEST(Parse, SpecFileFromDisk) {
  TempDir tmp;
  const fs::path path = tmp / "lib.yaml";
  write_file(path, "library: from_disk\nworkloads:\n  - {n: 1, c: 8, h: 16, w: 16, filter: 3, padding: same}\n");
  const Spec spec = parse_spec_file(path.string());
  EXPECT_EQ(spec.file, path.string());
  EXPECT_EQ(spec.library, "from_disk");
  ASSERT_EQ(spec.workloads.size(), 1u);
  EXPECT_EQ(spec.workloads[0].where.str(), path.string() + ":3:5");
}

TEST(Parse, MissingFileIsAFileLevelError) {
  TempDir tmp;
  const std::string path = (tmp / "nope.yaml").string();
  const std::vector<Diagnostic> errors = spec_errors([&] { parse_spec_file(path); });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].where.line, 0);
  EXPECT_EQ(errors[0].str(), path + ": error: cannot open the spec file: no such file");
}

TEST(Parse, SpecErrorWhatListsEveryDiagnostic) {
  try {
    parse("library: lib\nworkloads:\n  - {n: 0, c: 8, h: 16, w: 16, filter: 3, padding: same, stride: 9}\n");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    ASSERT_EQ(e.diagnostics().size(), 2u);
    EXPECT_EQ(std::string(e.what()), e.diagnostics()[0].str() + "\n" + e.diagnostics()[1].str() + "\n");
    EXPECT_EQ(e.diagnostics()[0].str(),
              "test.yaml:3:9: error: 'n' must be an integer from 1 to 65535, got 0 (or 'runtime')");
    EXPECT_EQ(e.diagnostics()[1].str(), "test.yaml:3:66: error: 'stride' must be an integer from 1 to 8, got 9");
  }
}

TEST(Parse, SkipModeLeavesBadWorkloadsOutAndSaysWhy) {
  const std::string text = R"(library: lib
workloads:
  - {n: 1, c: 8, h: 16, w: 16, filter: 3, padding: same}
  - {n: 1, c: 8, h: 16, w: 16, filter: 13, padding: same}
  - {n: 1, c: 8, h: 2, w: 16, filter: 5, padding: valid}
  - {n: 1, c: 16, h: 16, w: 16, filter: 3, padding: same}
)";
  const Spec spec = parse_spec_text(text, "skip.yaml", OnInvalidWorkload::kSkip);
  ASSERT_EQ(spec.workloads.size(), 2u);
  EXPECT_EQ(spec.workloads[0].c, 8);
  EXPECT_EQ(spec.workloads[1].c, 16);
  ASSERT_EQ(spec.skipped.size(), 2u);
  EXPECT_EQ(spec.skipped[0].where.str(), "skip.yaml:4:40");
  EXPECT_EQ(spec.skipped[1].where.str(), "skip.yaml:5:5");
  // The same text without kSkip fails with the same two diagnostics.
  const std::vector<Diagnostic> errors = spec_errors([&] { parse_spec_text(text, "skip.yaml"); });
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].str(), spec.skipped[0].str());
  EXPECT_EQ(errors[1].str(), spec.skipped[1].str());
}

// An invalid value in `defaults` is the spec's error, not a workload's: one
// diagnostic at its own line, and the spec fails even where invalid
// workloads are skipped (else every workload would be skipped for it).
TEST(Parse, AnInvalidDefaultFailsTheSpecOnceInEitherMode) {
  const std::string text = R"(library: lib
defaults: {filter: 13, padding: same}
workloads:
  - {n: 1, c: 8, h: 16, w: 16}
  - {n: 1, c: 16, h: 16, w: 16}
  - {n: 1, c: 32, h: 16, w: 16, filter: 3}
)";
  for (const OnInvalidWorkload mode : {OnInvalidWorkload::kFail, OnInvalidWorkload::kSkip}) {
    const std::vector<Diagnostic> errors = spec_errors([&] { parse_spec_text(text, "d.yaml", mode); });
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].str(), "d.yaml:2:20: error: 'filter' must be an integer from 1 to 11, got 13");
  }
}

// dtype and layout: per workload, or in `defaults` where a workload may
// override them; each remembers where it was written (the plan's refusals
// point there), float32 NCHW where nothing says otherwise.
TEST(Parse, DtypeAndLayoutFromDefaultsAndWorkloads) {
  const Spec spec = parse(R"(library: lib
defaults: {c: 8, h: 16, w: 16, filter: 3, padding: same, dtype: float16, layout: NHWC}
workloads:
  - {n: 1}
  - {n: 2, dtype: bfloat16}
  - {n: 3, layout: NCHW}
  - {n: 4, dtype: float32, layout: NCHW}
)");
  ASSERT_EQ(spec.workloads.size(), 4u);
  struct Expected {
    DataType dtype;
    Layout layout;
    std::string dtype_where, layout_where;
  };
  const Expected expected[] = {
      {DataType::kFloat16, Layout::kNHWC, "test.yaml:2:65", "test.yaml:2:82"},
      {DataType::kBFloat16, Layout::kNHWC, "test.yaml:5:19", "test.yaml:2:82"},
      {DataType::kFloat16, Layout::kNCHW, "test.yaml:2:65", "test.yaml:6:20"},
      {DataType::kFloat32, Layout::kNCHW, "test.yaml:7:19", "test.yaml:7:36"},
  };
  for (size_t i = 0; i < 4; ++i) {
    SCOPED_TRACE("workload " + std::to_string(i));
    const Workload& wl = spec.workloads[i];
    EXPECT_EQ(wl.dtype, expected[i].dtype);
    EXPECT_EQ(wl.layout, expected[i].layout);
    EXPECT_EQ(wl.dtype_where.str(), expected[i].dtype_where);
    EXPECT_EQ(wl.layout_where.str(), expected[i].layout_where);
  }
  const Workload plain = workload("{n: 1, c: 8, h: 16, w: 16, filter: 3, padding: same}");
  EXPECT_EQ(plain.dtype, DataType::kFloat32);
  EXPECT_EQ(plain.layout, Layout::kNCHW);
  // Dense workloads take them alike.
  const Workload dense =
      workload("{op: conv2d, n: 1, c: 8, c_out: 4, h: 8, w: 8, filter: 1, padding: valid, dtype: bfloat16, layout: NHWC}");
  EXPECT_EQ(dense.dtype, DataType::kBFloat16);
  EXPECT_EQ(dense.layout, Layout::kNHWC);
}

// Words the keys do not take (case matters: PyTorch's and NumPy's
// spellings are not the spec's), at the value's line and column, in a
// workload or in `defaults`.
TEST(Parse, DtypeAndLayoutRefuseOtherWords) {
  const std::string dtypes = "'dtype' must be one of float32, float16, bfloat16, got ";
  const std::string layouts = "'layout' must be one of NCHW, NHWC, got ";
  struct Case {
    std::string value, message;
  };
  for (const Case& c : std::vector<Case>{
           {"dtype: half", dtypes + "'half'"},
           {"dtype: fp16", dtypes + "'fp16'"},
           {"dtype: Float16", dtypes + "'Float16'"},
           {"dtype: torch.float16", dtypes + "'torch.float16'"},
           {"dtype: float64", dtypes + "'float64'"},
           {"dtype: 16", dtypes + "'16'"},
           {"layout: nhwc", layouts + "'nhwc'"},
           {"layout: channels_last", layouts + "'channels_last'"},
           {"layout: NWHC", layouts + "'NWHC'"},
           {"layout: CHW", layouts + "'CHW'"},
       }) {
    SCOPED_TRACE(c.value);
    const std::vector<Diagnostic> in_workload = spec_errors(
        [&] { parse("library: t\nworkloads:\n  - {n: 1, c: 8, h: 16, w: 16, filter: 3, padding: same, " + c.value + "}\n"); });
    ASSERT_EQ(in_workload.size(), 1u);
    const int column = 58 + static_cast<int>(c.value.find(':')) + 2;
    EXPECT_EQ(in_workload[0].str(), "test.yaml:3:" + std::to_string(column) + ": error: " + c.message);
    const std::vector<Diagnostic> in_defaults = spec_errors([&] {
      parse("library: t\ndefaults:\n  " + c.value + "\nworkloads:\n  - {n: 1, c: 8, h: 16, w: 16, filter: 3, padding: same}\n");
    });
    ASSERT_EQ(in_defaults.size(), 1u);
    const int default_column = 3 + static_cast<int>(c.value.find(':')) + 2;
    EXPECT_EQ(in_defaults[0].str(), "test.yaml:3:" + std::to_string(default_column) + ": error: " + c.message);
  }
  // Not a word at all.
  for (const char* text : {"dtype: [float16]", "dtype: {a: 1}", "layout: [NHWC]", "dtype:", "layout: ~"}) {
    const std::string value = text;
    SCOPED_TRACE(value);
    const std::vector<Diagnostic> errors = spec_errors(
        [&] { parse("library: t\nworkloads:\n  - {n: 1, c: 8, h: 16, w: 16, filter: 3, padding: same, " + value + "}\n"); });
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].where.line, 3);
    EXPECT_NE(errors[0].message.find(value[0] == 'd' ? dtypes : layouts), std::string::npos) << errors[0].message;
  }
}

// `math` (conv2d, float32): each word of the table, from a workload or
// from `defaults`, fp32 when unset; other words and half dtypes refused at
// the value.
TEST(Parse, MathWords) {
  const std::string dense = "{op: conv2d, n: 1, c: 8, c_out: 4, h: 8, w: 8, filter: 3, padding: same";
  EXPECT_EQ(workload(dense + "}").math, Math::kFloat32);
  EXPECT_EQ(workload(dense + ", math: fp32}").math, Math::kFloat32);
  EXPECT_EQ(workload(dense + ", math: tf32}").math, Math::kTF32);
  EXPECT_EQ(workload(dense + ", math: 3xtf32}").math, Math::k3xTF32);
  const Spec spec = parse("library: t\ndefaults: {math: 3xtf32}\nworkloads:\n  - " + dense + "}\n  - " + dense +
                          ", math: tf32}\n");
  ASSERT_EQ(spec.workloads.size(), 2u);
  EXPECT_EQ(spec.workloads[0].math, Math::k3xTF32);
  EXPECT_EQ(spec.workloads[1].math, Math::kTF32);
  for (const char* word : {"TF32", "tf-32", "bf16x3", "fp16", "true"}) {
    SCOPED_TRACE(word);
    const std::vector<Diagnostic> errors = spec_errors([&] { workload(dense + ", math: " + word + "}"); });
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].message, std::string("'math' must be one of fp32, tf32, 3xtf32, got '") + word + "'");
  }
  const std::vector<Diagnostic> half =
      spec_errors([&] { workload(dense + ", dtype: bfloat16, layout: NHWC, math: tf32}"); });
  ASSERT_EQ(half.size(), 1u);
  EXPECT_EQ(half[0].message,
            "math tf32 rounds float32 operands for tensor cores; this workload is bfloat16, whose products are "
            "exact in fp32: leave math at fp32 (or drop it)");
}

// A math in `defaults` is a permission for the whole spec, as PyTorch's
// allow_tf32 is for a model: half-precision workloads and depthwise ones
// (no tensor-core kernels) keep fp32, exact; float32 dense ones take it.
TEST(Parse, MathFromDefaultsAppliesWhereItCan) {
  const Spec spec = parse(
      "library: t\ndefaults: {math: tf32, n: 1, h: 8, w: 8, filter: 3, padding: same}\nworkloads:\n"
      "  - {op: conv2d, c: 8, c_out: 4}\n"
      "  - {op: conv2d, c: 8, c_out: 8, dtype: float16, layout: NHWC}\n"
      "  - {op: depthwise_conv2d, c: 8}\n"
      "  - {op: depthwise_conv2d, c: 8, dtype: bfloat16}\n"
      // Its knobs read with the range of channels, the NHWC algorithm (rows takes 1..16).
      "  - {op: depthwise_conv2d, c: 8, h: 64, layout: NHWC, schedule: {rows_per_thread: 20}}\n");
  ASSERT_EQ(spec.workloads.size(), 5u);
  EXPECT_EQ(spec.workloads[4].schedule.values.at("rows_per_thread"), 20);
  EXPECT_EQ(spec.workloads[0].math, Math::kTF32);
  EXPECT_EQ(spec.workloads[1].math, Math::kFloat32);
  EXPECT_EQ(spec.workloads[2].math, Math::kFloat32);
  EXPECT_EQ(spec.workloads[3].math, Math::kFloat32);
  // Set on a depthwise workload itself it is kept, and planning refuses it
  // at its line (tests/bad_specs/depthwise_math_tf32.yaml).
  EXPECT_EQ(workload("{op: depthwise_conv2d, n: 1, c: 8, h: 8, w: 8, filter: 3, padding: same, math: 3xtf32}").math,
            Math::k3xTF32);
}

}  // namespace
}  // namespace convgen_test
