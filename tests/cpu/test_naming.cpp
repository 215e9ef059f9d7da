// Kernel names: one name per problem, used for the file, the symbol, the
// registry key, the CLI filter and the benchmark row.
#include <gtest/gtest.h>

#include <array>
#include <cctype>
#include <map>
#include <tuple>

#include "convgen/gen/plan.hpp"
#include "test_util.h"

namespace convgen_test {
namespace {

TEST(KernelName, ExactStrings) {
  struct Case {
    std::string workload, name;
  };
  for (const Case& c : std::vector<Case>{
           {"{n: 1, c: 256, h: 96, w: 96, filter: 3, padding: same, epilogue: scale_shift, activation: relu}",
            "dw_f32_nchw_n1_c256_h96_w96_k3x3_s1_p1_m1_ssrelu"},
           {"{n: 1, c: 256, h: 96, w: 96, filter: 3, padding: same}", "dw_f32_nchw_n1_c256_h96_w96_k3x3_s1_p1_m1"},
           {"{n: runtime, c: 32, h: 16, w: 16, filter: 3, padding: same}", "dw_f32_nchw_nany_c32_h16_w16_k3x3_s1_p1_m1"},
           {"{n: 64, c: 96, h: 112, w: 112, filter: 3, stride: 2, padding: same, epilogue: scale_shift, "
            "activation: relu6}",
            "dw_f32_nchw_n64_c96_h112_w112_k3x3_s2_p1_m1_ssrelu6"},
           // Even filter, `same`: the extra row and column go bottom/right.
           {"{n: 1, c: 8, h: 16, w: 16, filter: 2, padding: same}", "dw_f32_nchw_n1_c8_h16_w16_k2x2_s1_pt0b1l0r1_m1"},
           {"{n: 1, c: 8, h: 16, w: 16, filter: 5, padding: [1, 2]}", "dw_f32_nchw_n1_c8_h16_w16_k5x5_s1_pt1b1l2r2_m1"},
           {"{n: 1, c: 8, h: 16, w: 16, filter: 7, padding: [0, 1, 2, 3]}",
            "dw_f32_nchw_n1_c8_h16_w16_k7x7_s1_pt0b1l2r3_m1"},
           {"{n: 1, c: 8, h: 16, w: 32, filter: [3, 5], padding: valid}", "dw_f32_nchw_n1_c8_h16_w32_k3x5_s1_p0_m1"},
           {"{n: 1, c: 8, h: 16, w: 16, filter: 3, stride: [2, 1], padding: valid}",
            "dw_f32_nchw_n1_c8_h16_w16_k3x3_s2x1_p0_m1"},
           {"{n: 1, c: 8, h: 16, w: 16, filter: 3, stride: [2, 2], padding: valid}",
            "dw_f32_nchw_n1_c8_h16_w16_k3x3_s2_p0_m1"},
           // Dilation appears only when it is not 1.
           {"{n: 1, c: 8, h: 16, w: 16, filter: 3, dilation: 2, padding: same}",
            "dw_f32_nchw_n1_c8_h16_w16_k3x3_s1_p2_d2_m1"},
           {"{n: 1, c: 8, h: 16, w: 16, filter: 3, dilation: [2, 1], padding: same}",
            "dw_f32_nchw_n1_c8_h16_w16_k3x3_s1_pt2b2l1r1_d2x1_m1"},
           {"{n: 1, c: 8, h: 16, w: 16, filter: 3, padding: same, multiplier: 2}",
            "dw_f32_nchw_n1_c8_h16_w16_k3x3_s1_p1_m2"},
           // Epilogue and activation suffixes.
           {"{n: 1, c: 8, h: 16, w: 16, filter: 3, padding: same, epilogue: bias}",
            "dw_f32_nchw_n1_c8_h16_w16_k3x3_s1_p1_m1_bias"},
           {"{n: 1, c: 8, h: 16, w: 16, filter: 3, padding: same, epilogue: bias, activation: relu6}",
            "dw_f32_nchw_n1_c8_h16_w16_k3x3_s1_p1_m1_biasrelu6"},
           {"{n: 1, c: 8, h: 16, w: 16, filter: 3, padding: same, activation: relu}",
            "dw_f32_nchw_n1_c8_h16_w16_k3x3_s1_p1_m1_relu"},
           {"{n: 1, c: 8, h: 16, w: 16, filter: 3, padding: same, activation: relu6}",
            "dw_f32_nchw_n1_c8_h16_w16_k3x3_s1_p1_m1_relu6"},
           {"{n: 1, c: 8, h: 16, w: 16, filter: 3, padding: same, epilogue: scale_shift}",
            "dw_f32_nchw_n1_c8_h16_w16_k3x3_s1_p1_m1_ss"},
       }) {
    SCOPED_TRACE(c.workload);
    const Workload wl = workload(c.workload);
    EXPECT_EQ(kernel_name(wl), c.name);
    EXPECT_EQ(plan_kernel(wl).name, c.name);
  }
}

TEST(KernelName, TheScheduleIsNotPartOfTheName) {
  EXPECT_EQ(plan("{n: 1, c: 8, h: 64, w: 64, filter: 3, padding: same, schedule: {threads: [4, 16]}}").name,
            plan("{n: 1, c: 8, h: 64, w: 64, filter: 3, padding: same}").name);
  // Nor the algorithm.
  EXPECT_EQ(plan("{n: 1, c: 8, h: 64, w: 64, filter: 3, padding: same, schedule: {algorithm: tiles}}").name,
            plan("{n: 1, c: 8, h: 64, w: 64, filter: 3, padding: same, schedule: {vector_width: 2}}").name);
}

// Every field of a problem shows in the name: distinct problems, distinct
// names, over a product of small values of every field.
TEST(KernelName, DistinctProblemsGetDistinctNames) {
  using Key = std::tuple<int, int, int, int, int, int, int, int, int, int, int, int, int, int, int, int, int>;
  std::map<std::string, Key> seen;
  const std::vector<std::array<int, 4>> pads = {{0, 0, 0, 0}, {1, 1, 1, 1}, {0, 1, 0, 1}, {1, 0, 1, 0},
                                                {1, 1, 0, 0}, {0, 0, 1, 1}, {11, 1, 1, 1}, {1, 11, 1, 1}};
  int count = 0;
  for (int n : {0, 1, 11})
    for (int c : {1, 11})
      for (int h : {1, 11})
        for (int w : {1, 11})
          for (int kh : {1, 3})
            for (int kw : {1, 3})
              for (int sh : {1, 2})
                for (int sw : {1, 2})
                  for (const auto& p : pads)
                    for (int dh : {1, 2})
                      for (int dw : {1, 2})
                        for (int m : {1, 2})
                          for (Epilogue e : {Epilogue::kNone, Epilogue::kBias, Epilogue::kScaleShift})
                            for (Activation a : {Activation::kNone, Activation::kRelu, Activation::kRelu6}) {
                              Workload wl;
                              wl.op = find_operator("depthwise_conv2d");
                              wl.n = n, wl.c = c, wl.h = h, wl.w = w, wl.kh = kh, wl.kw = kw;
                              wl.stride_h = sh, wl.stride_w = sw, wl.dilation_h = dh, wl.dilation_w = dw;
                              wl.pad_top = p[0], wl.pad_bottom = p[1], wl.pad_left = p[2], wl.pad_right = p[3];
                              wl.multiplier = m, wl.epilogue = e, wl.activation = a;
                              const Key key{n,    c,    h,    w,    kh, kw, sh, sw, p[0], p[1], p[2],
                                            p[3], dh,   dw,   m,    static_cast<int>(e), static_cast<int>(a)};
                              const std::string name = kernel_name(wl);
                              ++count;
                              auto [it, inserted] = seen.emplace(name, key);
                              ASSERT_TRUE(inserted || it->second == key) << "two problems named " << name;
                            }
  EXPECT_EQ(seen.size(), static_cast<size_t>(count));
}

// The dtype and layout follow the operator's prefix: dw_f16_nhwc_...,
// conv_bf16_nchw_... (the name parts of convgen/dtype.h's tables).
TEST(KernelName, DtypeAndLayoutParts) {
  struct Case {
    std::string workload, name;
  };
  for (const Case& c : std::vector<Case>{
           {"{n: 1, c: 32, h: 112, w: 112, filter: 3, padding: same, dtype: float16, layout: NHWC}",
            "dw_f16_nhwc_n1_c32_h112_w112_k3x3_s1_p1_m1"},
           {"{n: 64, c: 96, h: 112, w: 112, filter: 3, stride: 2, padding: same, epilogue: scale_shift, "
            "activation: relu6, dtype: float16, layout: NHWC}",
            "dw_f16_nhwc_n64_c96_h112_w112_k3x3_s2_p1_m1_ssrelu6"},
           {"{n: runtime, c: 8, h: 16, w: 16, filter: 7, padding: same, dtype: bfloat16, layout: NHWC}",
            "dw_bf16_nhwc_nany_c8_h16_w16_k7x7_s1_p3_m1"},
           {"{n: 1, c: 8, h: 16, w: 16, filter: 3, padding: same, multiplier: 2, dtype: bfloat16}",
            "dw_bf16_nchw_n1_c8_h16_w16_k3x3_s1_p1_m2"},
           {"{n: 1, c: 8, h: 16, w: 16, filter: 3, padding: same, epilogue: bias, dtype: float16, layout: NCHW}",
            "dw_f16_nchw_n1_c8_h16_w16_k3x3_s1_p1_m1_bias"},
           {"{n: 1, c: 8, h: 16, w: 16, filter: 3, padding: same, layout: NHWC}",
            "dw_f32_nhwc_n1_c8_h16_w16_k3x3_s1_p1_m1"},
           {"{op: conv2d, n: 2, c: 3, c_out: 5, h: 9, w: 11, filter: [3, 5], stride: 2, padding: valid, "
            "epilogue: bias, residual: true, activation: relu, dtype: bfloat16}",
            "conv_bf16_nchw_n2_c3_co5_h9_w11_k3x5_s2_p0_bias_res_relu"},
           {"{op: conv2d, n: 1, c: 64, c_out: 64, h: 64, w: 64, filter: 3, padding: same, dtype: float16, "
            "layout: NHWC}",
            "conv_f16_nhwc_n1_c64_co64_h64_w64_k3x3_s1_p1"},
           {"{op: conv2d, n: 1, c: 64, c_out: 64, h: 64, w: 64, filter: 3, padding: same, layout: NHWC}",
            "conv_f32_nhwc_n1_c64_co64_h64_w64_k3x3_s1_p1"},
       }) {
    SCOPED_TRACE(c.workload);
    EXPECT_EQ(kernel_name(workload(c.workload)), c.name);
  }
}

// One problem in every dtype x layout: as many names, each a C identifier.
TEST(KernelName, EveryDtypeAndLayoutGetsItsOwnName) {
  for (const char* op : {"depthwise_conv2d", "conv2d"}) {
    std::map<std::string, std::string> seen;
    for (const char* dtype : {"float32", "float16", "bfloat16"}) {
      for (const char* layout : {"NCHW", "NHWC"}) {
        const std::string text = std::string("{op: ") + op + (std::string(op) == "conv2d" ? ", c_out: 8" : "") +
                                 ", n: 1, c: 8, h: 16, w: 16, filter: 3, padding: same, dtype: " + dtype +
                                 ", layout: " + layout + "}";
        const std::string name = kernel_name(workload(text));
        const auto [it, inserted] = seen.emplace(name, text);
        EXPECT_TRUE(inserted) << name << " for " << text << " and " << it->second;
        for (char ch : name) EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_') << name;
      }
    }
    EXPECT_EQ(seen.size(), 6u);
  }
}

TEST(KernelName, IsACIdentifier) {
  const std::string name = kernel_name(workload(
      "{n: runtime, c: 8, h: 16, w: 16, filter: [2, 3], stride: [2, 1], dilation: [1, 2], padding: same, "
      "multiplier: 3, epilogue: bias, activation: relu6}"));
  ASSERT_FALSE(name.empty());
  EXPECT_FALSE(std::isdigit(static_cast<unsigned char>(name[0])));
  for (char ch : name) EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_') << name;
}

}  // namespace
}  // namespace convgen_test
