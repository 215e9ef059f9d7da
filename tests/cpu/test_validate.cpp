// The runtime's validate() on sizes past the 32-bit range: the problems
// that once passed with wrapped sizes are rejected naming the size, the
// helpers return the true 64-bit values, and the overlap checks see the
// true extents. No GPU: validate() touches no memory (the pointers below are
// addresses never dereferenced).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>

#include "convgen/convgen.h"

namespace {

using convgen::Conv2dProblem;
using convgen::DepthwiseArgs;
using convgen::DepthwiseProblem;
using convgen::StatusCode;

DepthwiseProblem depthwise_3x3(int c, int h, int w) {
  DepthwiseProblem p;
  p.c = c, p.h = h, p.w = w;
  p.pad_top = p.pad_bottom = p.pad_left = p.pad_right = 1;
  return p;
}

// Rejected as an invalid problem with a message that holds `mention`.
template <class Problem>
void expect_rejected(const Problem& p, const std::string& mention) {
  const convgen::Status s = convgen::validate(p);
  EXPECT_EQ(s.code, StatusCode::kInvalidProblem) << convgen::describe(p);
  EXPECT_NE(s.message.find(mention), std::string::npos) << "'" << mention << "' not in: " << s.message;
}

TEST(Validate, DepthwiseMultiplierWhoseOutputChannelsWrapIsRejected) {
  // c x multiplier = 4,294,967,298: 2 in 32-bit int.
  DepthwiseProblem p = depthwise_3x3(3, 8, 8);
  p.multiplier = 1431655766;
  EXPECT_EQ(p.out_channels(), 4294967298LL);
  expect_rejected(p, "multiplier is 1431655766; at most 16777216");
  // The same product within the multiplier's bound is caught as output channels.
  p.c = 1 << 20;
  p.multiplier = 1 << 12;
  expect_rejected(p, "the output channels c x multiplier is 4294967296; at most 16777216");
}

TEST(Validate, DilationWhoseWindowWrapsIsRejected) {
  // dilation_h * (kh - 1) = 4,294,967,298: 2 in 32-bit int, so out_h once
  // said 8; the true output is empty.
  DepthwiseProblem p;
  p.h = 10, p.w = 10, p.kh = 4, p.kw = 3;
  p.dilation_h = 1431655766;
  EXPECT_LT(p.out_h(), 1);
  EXPECT_EQ(p.out_h(), (10 - 1431655766LL * 3 - 1) / 1 + 1);
  expect_rejected(p, "dilation_h is 1431655766");
  // Within the dilation's bound, the window is still larger than the input.
  p.dilation_h = 1 << 24;
  expect_rejected(p, "output would be empty");
}

TEST(Validate, DenseReductionPastTheLimitIsRejected) {
  // c * kh * kw = 2,415,919,104: negative in 32-bit int, and the generic
  // kernel's reduction loop never ran.
  Conv2dProblem p;
  p.c = 1 << 28, p.h = 1, p.w = 1, p.c_out = 1;
  p.pad_top = p.pad_bottom = p.pad_left = p.pad_right = 1;
  expect_rejected(p, "c is 268435456; at most 16777216");
  // Within c's bound: the reduction itself.
  p.c = 1 << 24;
  p.kh = p.kw = 9, p.h = p.w = 9;
  p.pad_top = p.pad_bottom = p.pad_left = p.pad_right = 0;
  expect_rejected(p, "the reduction length is 1358954496; at most 1073741824");
}

// A dense problem's math: a Math enumerator, and fp32 for half dtypes
// (their products are exact in fp32); tf32 and 3xtf32 for float32.
TEST(Validate, DenseMathIsAnEnumeratorAndFloat32Only) {
  Conv2dProblem p;
  p.c = 8, p.c_out = 8, p.h = p.w = 8;
  p.pad_top = p.pad_bottom = p.pad_left = p.pad_right = 1;
  for (convgen::Math m : {convgen::Math::kFloat32, convgen::Math::kTF32, convgen::Math::k3xTF32}) {
    p.math = m;
    EXPECT_TRUE(convgen::validate(p).ok()) << convgen::describe(p);
  }
  p.math = static_cast<convgen::Math>(7);
  expect_rejected(p, "math must be one of Math's enumerators (fp32, tf32, 3xtf32)");
  EXPECT_NE(convgen::describe(p).find(" math 7"), std::string::npos) << convgen::describe(p);
  p.math = convgen::Math::kTF32;
  p.dtype = convgen::DataType::kFloat16;
  expect_rejected(p, "math tf32 rounds float32 operands for tensor cores; float16 and bfloat16 products are exact "
                     "in fp32: use Math::kFloat32");
  EXPECT_NE(convgen::describe(p).find(" math tf32"), std::string::npos) << convgen::describe(p);
}

// Every enum field is one of its enumerators before any rule reads it: a
// value cast from another integer is refused with the list, and messages,
// names and to_string() show its number rather than index past a table.
TEST(Validate, EveryEnumFieldIsAnEnumerator) {
  DepthwiseProblem p = depthwise_3x3(8, 8, 8);
  ASSERT_TRUE(convgen::validate(p).ok());
  p.epilogue = static_cast<convgen::Epilogue>(3);
  expect_rejected(p, "epilogue must be one of Epilogue's enumerators (none, bias, scale_shift)");
  EXPECT_NE(convgen::describe(p).find(" epilogue 3 "), std::string::npos) << convgen::describe(p);
  EXPECT_STREQ(convgen::to_string(p.epilogue), "not an enumerator");
  p.c = 0;  // another mistake too: the message is still made
  expect_rejected(p, "epilogue must be one of Epilogue's enumerators");
  p = depthwise_3x3(8, 8, 8);
  p.activation = static_cast<convgen::Activation>(1000000);
  expect_rejected(p, "activation must be one of Activation's enumerators (none, relu, relu6, silu, hardswish)");

  Conv2dProblem d;
  d.c = 8, d.c_out = 8, d.h = d.w = 8;
  d.dtype = static_cast<convgen::DataType>(7);
  d.math = convgen::Math::kTF32;  // a rule that reads the dtype: the dtype is named first
  expect_rejected(d, "dtype must be one of DataType's enumerators (float32, float16, bfloat16)");
  EXPECT_EQ(convgen::generic_kernel_name(d), "generic_conv2d_dtype7_nchw");
  d.dtype = convgen::DataType::kFloat32;
  d.layout = static_cast<convgen::Layout>(-100000);
  EXPECT_EQ(convgen::generic_kernel_name(d), "generic_conv2d_f32_layout-100000");
  expect_rejected(d, "layout must be one of Layout's enumerators (NCHW, NHWC)");
}

// The output overlaps no tensor the call reads: the kernels read the
// filter and the epilogue's vectors through __restrict__ pointers while
// they write the output.
TEST(Validate, OutputOverlapsNoTensorTheCallReads) {
  const std::uintptr_t base = std::uintptr_t{1} << 40;
  DepthwiseProblem p = depthwise_3x3(8, 8, 8);  // 512 outputs, 72 filter taps
  p.epilogue = convgen::Epilogue::kScaleShift;
  DepthwiseArgs a;
  a.input = reinterpret_cast<const float*>(base);
  a.filter = reinterpret_cast<const float*>(base + 65536);
  a.scale = reinterpret_cast<const float*>(base + 2 * 65536);
  a.shift = reinterpret_cast<const float*>(base + 3 * 65536);
  a.output = reinterpret_cast<float*>(base + 4 * 65536);
  ASSERT_TRUE(convgen::validate(p, a).ok()) << convgen::validate(p, a).message;
  const void* inside = reinterpret_cast<const float*>(base + 4 * 65536 + 4 * 511);  // the output's last element
  const std::pair<std::string, const void* DepthwiseArgs::*> read[] = {
      {"filter", &DepthwiseArgs::filter}, {"scale", &DepthwiseArgs::scale}, {"shift", &DepthwiseArgs::shift}};
  for (const auto& [name, field] : read) {
    DepthwiseArgs b = a;
    b.*field = inside;
    const convgen::Status s = convgen::validate(p, b);
    EXPECT_EQ(s.code, StatusCode::kInvalidPointer) << name;
    EXPECT_NE(s.message.find(name + " and output overlap"), std::string::npos) << s.message;
  }
  // The filter's 72 floats end just before the output: apart.
  a.filter = reinterpret_cast<const float*>(base + 4 * 65536 - 4 * 72);
  EXPECT_TRUE(convgen::validate(p, a).ok()) << convgen::validate(p, a).message;

  Conv2dProblem d;
  d.c = 8, d.c_out = 16, d.h = d.w = 8, d.kh = d.kw = 1;
  d.epilogue = convgen::Epilogue::kBias;
  convgen::Conv2dArgs c;
  c.input = reinterpret_cast<const float*>(base);
  c.filter = reinterpret_cast<const float*>(base + 65536);
  c.output = reinterpret_cast<float*>(base + 2 * 65536);
  c.bias = reinterpret_cast<const float*>(base + 2 * 65536 + 400);
  const convgen::Status s = convgen::validate(d, c);
  EXPECT_EQ(s.code, StatusCode::kInvalidPointer);
  EXPECT_NE(s.message.find("bias and output overlap"), std::string::npos) << s.message;
}

TEST(Validate, LargestSizesWithinTheLimitsAreAccepted) {
  DepthwiseProblem p = depthwise_3x3(2, 17, 17);
  p.multiplier = 1 << 23;  // 2^24 output channels, 4,848,615,424 output elements
  EXPECT_TRUE(convgen::validate(p).ok()) << convgen::validate(p).message;
  EXPECT_EQ(p.n * p.out_channels() * p.out_h() * p.out_w(), 4848615424LL);

  Conv2dProblem d;
  d.c = 1 << 23, d.h = d.w = 16, d.kh = d.kw = 1, d.c_out = 64;  // 2^31 input elements, reduction 2^23
  EXPECT_TRUE(convgen::validate(d).ok()) << convgen::validate(d).message;
  d.c = 1 << 24, d.h = d.w = 256, d.n = 256;  // 2^48 input elements
  expect_rejected(d, "the input's element count is 281474976710656; at most 1099511627776");
}

TEST(Validate, OutputExtentIsTheTrueFloor) {
  DepthwiseProblem p;
  p.h = 1 << 24, p.w = 8, p.kh = 3, p.kw = 1;
  p.dilation_h = 1 << 23;
  p.pad_top = p.pad_bottom = 1 << 23;
  EXPECT_EQ(p.out_h(), 1LL << 24);
  EXPECT_TRUE(convgen::validate(p).ok()) << convgen::validate(p).message;
  p.pad_bottom += 1;  // one row more: past the output extent's bound
  expect_rejected(p, "the output height is 16777217; at most 16777216");
}

TEST(Validate, OverlapUsesTheTrueExtents) {
  // 2^32 output floats (16 GiB) from the output pointer, a count that wraps
  // to 0 in 32 bits: an input just under 16 GiB past it lies inside the
  // output, one exactly 16 GiB past it does not.
  DepthwiseProblem p = depthwise_3x3(1, 4, 4);
  p.multiplier = 1 << 24;
  p.h = p.w = 16;
  p.n = 1;
  ASSERT_TRUE(convgen::validate(p).ok()) << convgen::validate(p).message;
  const long long out_floats = p.n * p.out_channels() * p.out_h() * p.out_w();
  ASSERT_EQ(out_floats, 1LL << 32);
  const std::uintptr_t base = std::uintptr_t{1} << 44;
  DepthwiseArgs a;
  a.output = reinterpret_cast<float*>(base);
  a.input = reinterpret_cast<const float*>(base + (std::uintptr_t{1} << 34) - 256);  // inside the output's 16 GiB
  a.filter = reinterpret_cast<const float*>(base - (std::uintptr_t{1} << 32));
  const convgen::Status s = convgen::validate(p, a);
  EXPECT_EQ(s.code, StatusCode::kInvalidPointer) << s.message;
  EXPECT_NE(s.message.find("overlap"), std::string::npos) << s.message;
  a.input = reinterpret_cast<const float*>(base + (std::uintptr_t{1} << 34));  // just past it
  EXPECT_TRUE(convgen::validate(p, a).ok()) << convgen::validate(p, a).message;
}

}  // namespace
