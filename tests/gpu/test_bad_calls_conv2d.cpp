// Dense conv2d: a bad call returns a status with a message and launches
// nothing (the poisoned output must stay as it was), strict dispatch refuses a
// problem with no kernel, and `find` says which kernel serves a problem and
// why. Runs against the shipped mobilenet_v2 library, on one of its dense
// (pointwise) kernels; the workspace checks on seeds' winograd_nonfused
// kernel. Needs no GPU (see OperandBuffer); on one, the
// operands are device memory.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "harness.h"
#include "mobilenet_v2.h"
#include "seeds.h"

namespace {

using convgen::Conv2dArgs;
using convgen::Conv2dKernelInfo;
using convgen::Conv2dProblem;
using convgen::Dispatch;
using convgen::Epilogue;
using convgen::Status;
using convgen::StatusCode;
using convgen::testing::OperandBuffer;

// The dense kernel of mobilenet_v2 with the fewest output elements per
// image, one made for batch 1 where there is a tie, or null when the library
// has none.
const Conv2dKernelInfo* pick_kernel() {
  const Conv2dKernelInfo* best = nullptr;
  auto key = [](const Conv2dProblem& p) {
    return std::make_pair(1LL * p.c_out * p.out_h() * p.out_w(), p.n == 1 ? 0 : 1);
  };
  for (const Conv2dKernelInfo& k : convgen::mobilenet_v2::conv2d_kernels()) {
    if (best == nullptr || key(k.problem) < key(best->problem)) best = &k;
  }
  return best;
}

// The kernel named `name`, or null.
const Conv2dKernelInfo* kernel_named(const std::string& name) {
  for (const Conv2dKernelInfo& k : convgen::mobilenet_v2::conv2d_kernels()) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

// The picked kernel's problem at batch 1; a one-element 1x1 problem when the library has no
// dense kernel (the fixture then fails, saying so).
Conv2dProblem picked_problem() {
  Conv2dProblem p;
  if (pick_kernel() == nullptr) {
    p.kh = p.kw = 1;
    return p;
  }
  p = pick_kernel()->problem;
  p.n = 1;
  return p;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A problem of the same size as `p` (so that the fixture's buffers hold it)
// that no kernel of the library was made for.
Conv2dProblem unserved_like(const Conv2dProblem& p) {
  Conv2dProblem q = p;
  for (int c_out = p.c_out - 1; c_out >= 1; --c_out) {
    q.c_out = c_out;
    if (!convgen::mobilenet_v2::find(q).specialized) return q;
  }
  q = p;
  q.activation = q.activation == convgen::Activation::kRelu ? convgen::Activation::kRelu6 : convgen::Activation::kRelu;
  return q;
}

constexpr std::uint32_t kPoison = 0xffffffffu;

// Every word of `buffer` still holds the poison.
void expect_all_poison(const OperandBuffer& buffer) {
  const std::vector<std::uint32_t> words = buffer.words();
  ASSERT_EQ(words.size(), buffer.size()) << "reading the buffer back failed";
  for (size_t i = 0; i < words.size(); ++i) ASSERT_EQ(words[i], kPoison) << "element " << i << " was written";
}

// The pointers problem `p` takes: those its epilogue and residual use, the
// scale and shift `channel_stride` floats apart in `channels` (bias, scale,
// shift).
Conv2dArgs operand_args(const Conv2dProblem& p, float* input, float* filter, float* channels, int channel_stride,
                        float* residual, float* output) {
  Conv2dArgs a;
  a.input = input;
  a.filter = filter;
  a.output = output;
  if (p.epilogue == Epilogue::kBias) a.bias = channels;
  if (p.epilogue == Epilogue::kScaleShift) {
    a.scale = channels + channel_stride;
    a.shift = channels + 2 * channel_stride;
  }
  if (p.residual) a.residual = residual;
  return a;
}

class BadConv2dCall : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(pick_kernel(), nullptr) << "mobilenet_v2 has no dense (conv2d) kernels";
    for (const auto* buffer : {&input_, &filter_, &channels_, &residual_, &output_}) {
      ASSERT_NE(buffer->get(), nullptr) << "allocation failed";
    }
  }
  // Every word of the output buffer still holds the poison.
  void expect_output_untouched() { expect_all_poison(output_); }
  // The right pointers for problem `p`: those its epilogue and residual use.
  Conv2dArgs args(const Conv2dProblem& p) const {
    return operand_args(p, input_.get(), filter_.get(), channels_.get(), p_.c_out, residual_.get(), output_.get());
  }
  Conv2dArgs args() const { return args(p_); }
  // Calls the library (generic fallback allowed) and expects `code`, a
  // message that names `mention`, and no launch.
  void expect_refused(const Conv2dProblem& p, const Conv2dArgs& a, StatusCode code, const std::string& mention) {
    const Status s = convgen::mobilenet_v2::conv2d(p, a, nullptr);
    EXPECT_EQ(s.code, code) << convgen::to_string(s.code) << ": " << s.message;
    EXPECT_FALSE(s.message.empty());
    if (!mention.empty()) {
      EXPECT_TRUE(contains(s.message, mention)) << "'" << mention << "' not in: " << s.message;
    }
    // The generic kernel validates the same way.
    const Status g = convgen::generic_conv2d(p, a, nullptr);
    EXPECT_EQ(g.code, code) << "generic_conv2d: " << convgen::to_string(g.code) << ": " << g.message;
    expect_output_untouched();
  }

  // kSlack more floats than the problem needs, so that a pointer shifted by
  // a float stays inside its buffer.
  static constexpr size_t kSlack = 4;
  const Conv2dProblem p_ = picked_problem();
  const size_t in_count_ = static_cast<size_t>(p_.n) * p_.c * p_.h * p_.w;
  const size_t out_count_ = static_cast<size_t>(p_.n) * p_.c_out * p_.out_h() * p_.out_w();
  OperandBuffer input_{in_count_ + kSlack, 0};
  OperandBuffer filter_{static_cast<size_t>(p_.c_out) * p_.c * p_.kh * p_.kw, 0};
  OperandBuffer channels_{3 * static_cast<size_t>(p_.c_out), 0};  // bias, scale, shift
  OperandBuffer residual_{out_count_ + kSlack, 0};
  OperandBuffer output_{out_count_ + kSlack, kPoison};
};

template <class T>
T* shifted(T* ptr, int bytes) {
  using Byte = std::conditional_t<std::is_const_v<T>, const char, char>;
  return reinterpret_cast<T*>(reinterpret_cast<Byte*>(ptr) + bytes);
}

// The control: the fixture's call itself is good, so the refusals below are
// the bad pointer's doing. It passes every check and reaches the launch,
// which writes the output on a GPU and fails without one.
TEST_F(BadConv2dCall, TheGoodCallReachesTheLaunch) {
  const Status s = convgen::mobilenet_v2::conv2d(p_, args(), nullptr, Dispatch::kStrict);
  if (!OperandBuffer::on_device()) {
    EXPECT_EQ(s.code, StatusCode::kCudaError) << s.message;
    EXPECT_TRUE(contains(s.message, "launching " + convgen::mobilenet_v2::find(p_).kernel)) << s.message;
    return;
  }
  ASSERT_TRUE(s.ok()) << s.message;
  const std::vector<std::uint32_t> words = output_.words();
  ASSERT_EQ(words.size(), output_.size()) << "reading the output back failed";
  for (size_t i = 0; i < out_count_; ++i) {
    float value = 0;
    std::memcpy(&value, &words[i], sizeof(value));
    ASSERT_FALSE(std::isnan(value)) << "element " << i << " not written";
  }
}

// A dense call made over an error an earlier call left unread (a failed
// cudaMalloc) launches nothing, the library's kernel and generic_conv2d
// alike, and leaves the error pending (test_bad_calls.cpp: depthwise).
TEST_F(BadConv2dCall, AnErrorLeftUnreadLaunchesNothing) {
  if (!OperandBuffer::on_device()) GTEST_SKIP() << "needs a GPU: without one every CUDA call fails";
  const std::vector<std::pair<std::string, std::function<Status()>>> calls = {
      {convgen::mobilenet_v2::find(p_).kernel, [&] { return convgen::mobilenet_v2::conv2d(p_, args(), nullptr); }},
      {convgen::generic_kernel_name(p_), [&] { return convgen::generic_conv2d(p_, args(), nullptr); }},
  };
  for (const auto& [kernel, call] : calls) {
    SCOPED_TRACE(kernel);
    void* huge = nullptr;
    ASSERT_EQ(cudaMalloc(&huge, std::size_t{1} << 60), cudaErrorMemoryAllocation);
    const Status s = call();
    EXPECT_EQ(s.code, StatusCode::kCudaError) << s.message;
    EXPECT_TRUE(contains(s.message, "launching " + kernel + ": nothing was launched")) << s.message;
    EXPECT_TRUE(contains(s.message, "cudaErrorMemoryAllocation")) << s.message;
    expect_output_untouched();
    EXPECT_EQ(cudaGetLastError(), cudaErrorMemoryAllocation) << "the caller's error was read by the call";
  }
}

TEST_F(BadConv2dCall, NullInputFilterOrOutputLaunchesNothing) {
  Conv2dArgs a = args();
  a.input = nullptr;
  expect_refused(p_, a, StatusCode::kInvalidPointer, "input is null");
  a = args();
  a.filter = nullptr;
  expect_refused(p_, a, StatusCode::kInvalidPointer, "filter is null");
  a = args();
  a.output = nullptr;
  expect_refused(p_, a, StatusCode::kInvalidPointer, "output is null");
}

TEST_F(BadConv2dCall, EpiloguePointersThatDoNotMatchTheEpilogueLaunchNothing) {
  for (Epilogue e : {Epilogue::kNone, Epilogue::kBias, Epilogue::kScaleShift}) {
    SCOPED_TRACE(std::string("epilogue ") + convgen::to_string(e));
    Conv2dProblem p = p_;
    p.epilogue = e;
    const Conv2dArgs good = args(p);
    Conv2dArgs a = good;
    // A pointer the epilogue does not use.
    if (e != Epilogue::kBias) {
      a.bias = channels_.get();
      expect_refused(p, a, StatusCode::kInvalidPointer, "bias");
    }
    if (e != Epilogue::kScaleShift) {
      a = good;
      a.scale = channels_.get() + p_.c_out;
      expect_refused(p, a, StatusCode::kInvalidPointer, "scale");
      a = good;
      a.shift = channels_.get() + 2 * p_.c_out;
      expect_refused(p, a, StatusCode::kInvalidPointer, "shift");
    }
    // A pointer the epilogue needs, missing.
    if (e == Epilogue::kBias) {
      a = good;
      a.bias = nullptr;
      expect_refused(p, a, StatusCode::kInvalidPointer, "bias is null");
    }
    if (e == Epilogue::kScaleShift) {
      a = good;
      a.scale = nullptr;
      expect_refused(p, a, StatusCode::kInvalidPointer, "scale is null");
      a = good;
      a.shift = nullptr;
      expect_refused(p, a, StatusCode::kInvalidPointer, "shift is null");
    }
  }
}

TEST_F(BadConv2dCall, ResidualPointerMustMatchTheProblem) {
  Conv2dProblem p = p_;
  p.residual = false;
  Conv2dArgs a = args(p);
  a.residual = residual_.get();  // present, but the problem adds no residual
  expect_refused(p, a, StatusCode::kInvalidPointer, "residual");
  p.residual = true;
  a = args(p);
  a.residual = nullptr;  // the problem adds one, and none is given
  expect_refused(p, a, StatusCode::kInvalidPointer, "residual is null");
}

TEST_F(BadConv2dCall, MisalignedPointersLaunchNothing) {
  Conv2dProblem p = p_;
  p.epilogue = Epilogue::kScaleShift;
  p.residual = true;
  const Conv2dArgs good = args(p);
  Conv2dArgs a = good;
  a.input = shifted(input_.get(), 2);
  expect_refused(p, a, StatusCode::kInvalidPointer, "aligned");
  a = good;
  a.filter = shifted(filter_.get(), 2);
  expect_refused(p, a, StatusCode::kInvalidPointer, "aligned");
  a = good;
  a.scale = shifted(good.scale, 1);
  expect_refused(p, a, StatusCode::kInvalidPointer, "aligned");
  a = good;
  a.shift = shifted(good.shift, 3);
  expect_refused(p, a, StatusCode::kInvalidPointer, "aligned");
  a = good;
  a.residual = shifted(residual_.get(), 2);
  expect_refused(p, a, StatusCode::kInvalidPointer, "aligned");
  a = good;
  a.output = shifted(output_.get(), 2);
  expect_refused(p, a, StatusCode::kInvalidPointer, "aligned");
  p.epilogue = Epilogue::kBias;
  a = args(p);
  a.bias = shifted(channels_.get(), 2);
  expect_refused(p, a, StatusCode::kInvalidPointer, "aligned");
}

TEST_F(BadConv2dCall, OverlappingInputAndOutputLaunchNothing) {
  Conv2dArgs a = args();
  a.input = output_.get();  // in place
  expect_refused(p_, a, StatusCode::kInvalidPointer, "overlap");
  a = args();
  a.input = output_.get() + out_count_ / 2;  // the input starts inside the output
  expect_refused(p_, a, StatusCode::kInvalidPointer, "overlap");
}

TEST_F(BadConv2dCall, OverlappingResidualAndOutputLaunchNothing) {
  Conv2dProblem p = p_;
  p.residual = true;
  Conv2dArgs a = args(p);
  a.residual = output_.get();  // in place
  expect_refused(p, a, StatusCode::kInvalidPointer, "overlap");
  a = args(p);
  a.residual = output_.get() + 1;  // one element off
  expect_refused(p, a, StatusCode::kInvalidPointer, "overlap");
}

TEST_F(BadConv2dCall, BatchBelowOneLaunchesNothing) {
  for (int n : {0, -1}) {
    Conv2dProblem p = p_;
    p.n = n;
    expect_refused(p, args(p), StatusCode::kInvalidProblem, "");
  }
}

TEST_F(BadConv2dCall, GroupsOtherThanOneLaunchNothing) {
  for (int groups : {0, 2, -1}) {
    Conv2dProblem p = p_;
    p.groups = groups;
    expect_refused(p, args(p), StatusCode::kInvalidProblem, "groups");
  }
  // groups equal to the channel count is a depthwise convolution: still not
  // a dense problem.
  Conv2dProblem p = p_;
  p.groups = p.c;
  if (p.c != 1) expect_refused(p, args(p), StatusCode::kInvalidProblem, "groups");
}

TEST_F(BadConv2dCall, ImpossibleShapesLaunchNothing) {
  std::vector<std::pair<std::string, Conv2dProblem>> cases;
  auto add = [&](const std::string& what, auto change) {
    Conv2dProblem p = p_;
    change(p);
    cases.emplace_back(what, p);
  };
  add("c 0", [](Conv2dProblem& p) { p.c = 0; });
  add("c_out 0", [](Conv2dProblem& p) { p.c_out = 0; });
  add("h 0", [](Conv2dProblem& p) { p.h = 0; });
  add("w -3", [](Conv2dProblem& p) { p.w = -3; });
  add("kh 0", [](Conv2dProblem& p) { p.kh = 0; });
  add("stride_w 0", [](Conv2dProblem& p) { p.stride_w = 0; });
  add("dilation_h 0", [](Conv2dProblem& p) { p.dilation_h = 0; });
  add("pad_left -1", [](Conv2dProblem& p) { p.pad_left = -1; });
  add("filter taller than the padded input", [](Conv2dProblem& p) {
    p.kh = p.h + p.pad_top + p.pad_bottom + 1;
    p.kw = 1;
  });
  add("dilated filter wider than the padded input", [](Conv2dProblem& p) {
    p.kw = 3;
    p.dilation_w = p.w;
    p.pad_left = p.pad_right = 0;
  });
  for (const auto& [what, p] : cases) {
    SCOPED_TRACE(what);
    expect_refused(p, args(p), StatusCode::kInvalidProblem, "");
    EXPECT_EQ(convgen::validate(p).code, StatusCode::kInvalidProblem);
    EXPECT_EQ(convgen::mobilenet_v2::find(p).status.code, StatusCode::kInvalidProblem);
  }
}

TEST_F(BadConv2dCall, StrictDispatchWithNoKernelLaunchesNothing) {
  const Conv2dProblem q = unserved_like(p_);
  ASSERT_FALSE(convgen::mobilenet_v2::find(q).specialized) << convgen::describe(q);
  const Status s = convgen::mobilenet_v2::conv2d(q, args(q), nullptr, Dispatch::kStrict);
  EXPECT_EQ(s.code, StatusCode::kNoSpecializedKernel) << s.message;
  EXPECT_TRUE(contains(s.message, "no kernel for")) << s.message;
  expect_output_untouched();
}

// A kernel that loads and stores vectors refuses, under strict dispatch,
// pointers aligned to 4 bytes only (the generic kernel would serve them).
// The fixture's kernel has planes of 49 pixels and needs only 4-byte
// alignment, so this test takes the smallest batch-1 kernel of 16-byte
// vectors (H x W % 4 == 0) and buffers of its own.
TEST_F(BadConv2dCall, StrictDispatchRefusesPointersLessAlignedThanTheKernel) {
  const Conv2dKernelInfo* k = nullptr;
  for (const Conv2dKernelInfo& info : convgen::mobilenet_v2::conv2d_kernels()) {
    const auto outputs = [](const Conv2dProblem& p) { return 1LL * p.c_out * p.out_h() * p.out_w(); };
    if (info.alignment > 4 && info.problem.n == 1 && (k == nullptr || outputs(info.problem) < outputs(k->problem))) {
      k = &info;
    }
  }
  ASSERT_NE(k, nullptr) << "mobilenet_v2 has no batch-1 dense kernel of 16-byte vectors";
  const Conv2dProblem& p = k->problem;
  ASSERT_EQ(convgen::mobilenet_v2::find(p).kernel, k->name);
  const size_t out_count = static_cast<size_t>(p.c_out) * p.out_h() * p.out_w();
  OperandBuffer input(static_cast<size_t>(p.c) * p.h * p.w + kSlack, 0);
  OperandBuffer filter(static_cast<size_t>(p.c_out) * p.c * p.kh * p.kw, 0);
  OperandBuffer channels(3 * static_cast<size_t>(p.c_out), 0);
  OperandBuffer residual(out_count + kSlack, 0);
  OperandBuffer output(out_count + kSlack, kPoison);
  for (int which = 0; which < 2; ++which) {
    // 4-byte aligned, not more (the buffers have slack).
    const Conv2dArgs a = operand_args(p, input.get() + (which == 0 ? 1 : 0), filter.get(), channels.get(), p.c_out,
                                      residual.get(), output.get() + (which == 1 ? 1 : 0));
    const Status s = convgen::mobilenet_v2::conv2d(p, a, nullptr, Dispatch::kStrict);
    EXPECT_EQ(s.code, StatusCode::kInvalidPointer) << k->name << ": " << s.message;
    EXPECT_TRUE(contains(s.message, "aligned")) << s.message;
    expect_all_poison(output);
  }
}

// A dtype or layout that names no enumerator (a cast from a bad integer)
// is refused with a message that names the number, by the library, the
// generic kernel and `find` alike.
TEST_F(BadConv2dCall, DtypeOrLayoutOutsideTheirEnumeratorsLaunchNothing) {
  Conv2dProblem p = p_;
  p.dtype = static_cast<convgen::DataType>(7);
  expect_refused(p, args(p), StatusCode::kInvalidProblem, "dtype must be one of");
  EXPECT_TRUE(contains(convgen::mobilenet_v2::conv2d(p, args(p), nullptr).message, "conv2d dtype 7 NCHW"));
  EXPECT_EQ(convgen::mobilenet_v2::find(p).status.code, StatusCode::kInvalidProblem);
  p = p_;
  p.layout = static_cast<convgen::Layout>(-1);
  expect_refused(p, args(p), StatusCode::kInvalidProblem, "layout must be one of");
  EXPECT_TRUE(contains(convgen::mobilenet_v2::conv2d(p, args(p), nullptr).message, "conv2d f32 layout -1"));
  EXPECT_EQ(convgen::mobilenet_v2::find(p).status.code, StatusCode::kInvalidProblem);
}

// float16 and bfloat16 elements are 2 bytes: every pointer must be aligned
// to 2, and the message says so.
TEST_F(BadConv2dCall, HalfPointersAlignedToOneByteLaunchNothing) {
  for (convgen::DataType dtype : {convgen::DataType::kFloat16, convgen::DataType::kBFloat16}) {
    SCOPED_TRACE(convgen::to_string(dtype));
    Conv2dProblem p = p_;
    p.dtype = dtype;
    p.epilogue = Epilogue::kScaleShift;
    p.residual = true;
    const std::pair<std::string, std::function<void(Conv2dArgs&)>> misalignments[] = {
        {"input", [](Conv2dArgs& a) { a.input = shifted(a.input, 1); }},
        {"filter", [](Conv2dArgs& a) { a.filter = shifted(a.filter, 3); }},
        {"scale", [](Conv2dArgs& a) { a.scale = shifted(a.scale, 1); }},
        {"shift", [](Conv2dArgs& a) { a.shift = shifted(a.shift, 1); }},
        {"residual", [](Conv2dArgs& a) { a.residual = shifted(a.residual, 1); }},
        {"output", [](Conv2dArgs& a) { a.output = shifted(a.output, 1); }},
    };
    for (const auto& [name, misalign] : misalignments) {
      Conv2dArgs a = args(p);
      misalign(a);
      expect_refused(p, a, StatusCode::kInvalidPointer, name + " is not 2-byte aligned");
    }
  }
}

// A problem whose dtype or layout no kernel of the library has: the generic
// kernel of that dtype and layout serves it, and the reason names them;
// strict dispatch refuses it, naming them too, and launches nothing.
TEST_F(BadConv2dCall, ADtypeOrLayoutNoKernelHasRunsTheGenericKernel) {
  const auto unserved = convgen::testing::storages_without_kernels(convgen::mobilenet_v2::conv2d_kernels());
  ASSERT_FALSE(unserved.empty()) << "mobilenet_v2 has dense kernels of every dtype and layout";
  for (const auto& [dtype, layout] : unserved) {
    Conv2dProblem p = p_;  // a shape the library serves in its own dtype and layout
    p.dtype = dtype;
    p.layout = layout;
    const std::string storage = std::string(convgen::row(dtype).name_part) + " " + convgen::row(layout).word;
    SCOPED_TRACE(storage);
    const convgen::KernelChoice choice = convgen::mobilenet_v2::find(p);
    ASSERT_TRUE(choice.status.ok()) << choice.status.message;
    EXPECT_FALSE(choice.specialized) << choice.kernel;
    EXPECT_EQ(choice.kernel, std::string("generic_conv2d_") + convgen::row(dtype).name_part + "_" +
                                 convgen::row(layout).name_part);
    EXPECT_TRUE(contains(choice.reason, "no kernel for conv2d " + storage + " n1")) << choice.reason;
    const Status s = convgen::mobilenet_v2::conv2d(p, args(p), nullptr, Dispatch::kStrict);
    EXPECT_EQ(s.code, StatusCode::kNoSpecializedKernel) << s.message;
    EXPECT_TRUE(contains(s.message, "conv2d " + storage)) << s.message;
    expect_output_untouched();
  }
}

// `find` is host code: these run without a GPU.
TEST(Conv2dFind, SaysSpecializedOrGenericAndWhy) {
  const Conv2dKernelInfo* k = pick_kernel();
  ASSERT_NE(k, nullptr) << "mobilenet_v2 has no dense (conv2d) kernels";
  Conv2dProblem p = k->problem;
  if (p.n == 0) p.n = 1;
  auto choice = convgen::mobilenet_v2::find(p);
  ASSERT_TRUE(choice.status.ok()) << choice.status.message;
  EXPECT_TRUE(choice.specialized) << choice.reason;
  EXPECT_EQ(choice.kernel, k->name);
  EXPECT_TRUE(contains(choice.reason, "made for this problem")) << choice.reason;
  EXPECT_TRUE(contains(choice.reason, k->spec_location)) << choice.reason;
  EXPECT_TRUE(contains(k->spec_location, "mobilenet_v2.yaml:")) << k->spec_location;

  // Another batch: the same kernel, which takes the batch at launch.
  Conv2dProblem other = p;
  other.n = p.n == 3 ? 5 : 3;
  bool declared_other = false;
  for (const Conv2dKernelInfo& i : convgen::mobilenet_v2::conv2d_kernels()) {
    Conv2dProblem q = i.problem;
    q.n = other.n;
    if (i.problem.n == other.n && convgen::describe(q) == convgen::describe(other)) declared_other = true;
  }
  if (!declared_other) {
    choice = convgen::mobilenet_v2::find(other);
    EXPECT_TRUE(choice.specialized) << choice.reason;
    if (k->problem.n != 0) {
      EXPECT_TRUE(contains(choice.reason, "runs any batch")) << choice.reason;
    }
  }

  // A miss: the generic kernel serves it, and the reason says so.
  const Conv2dProblem q = unserved_like(p);
  choice = convgen::mobilenet_v2::find(q);
  ASSERT_TRUE(choice.status.ok()) << choice.status.message;
  EXPECT_FALSE(choice.specialized);
  EXPECT_TRUE(contains(choice.kernel, "generic")) << choice.kernel;
  EXPECT_TRUE(contains(choice.reason, "generic kernel serves it")) << choice.reason;

  // The epilogue and the residual are part of the key.
  Conv2dProblem r = p;
  r.residual = !r.residual;
  bool served = false;
  for (const Conv2dKernelInfo& i : convgen::mobilenet_v2::conv2d_kernels()) {
    Conv2dProblem q2 = i.problem;
    q2.n = r.n;
    if (convgen::describe(q2) == convgen::describe(r)) served = true;
  }
  if (!served) {
    EXPECT_FALSE(convgen::mobilenet_v2::find(r).specialized) << convgen::describe(r);
  }

  // An invalid problem: find reports the status and chooses nothing.
  Conv2dProblem bad = p;
  bad.groups = 2;
  choice = convgen::mobilenet_v2::find(bad);
  EXPECT_EQ(choice.status.code, StatusCode::kInvalidProblem);
  EXPECT_FALSE(choice.specialized);
}

TEST(Conv2dFind, EveryKernelIsFoundForItsOwnProblem) {
  for (const Conv2dKernelInfo& k : convgen::mobilenet_v2::conv2d_kernels()) {
    Conv2dProblem p = k.problem;
    if (p.n == 0) p.n = 2;
    const auto choice = convgen::mobilenet_v2::find(p);
    EXPECT_TRUE(choice.specialized) << k.name << ": " << choice.reason;
    EXPECT_EQ(choice.kernel, k.name);
    EXPECT_TRUE(convgen::validate(p).ok()) << k.name;
  }
}

// A kernel that computes through a workspace (seeds' winograd_nonfused
// kernel) says in find() how many bytes it needs, and refuses a call that
// gives none, too few, a misaligned one or one over a tensor:
// kInvalidPointer naming what it needs, and nothing launched.
TEST(BadConv2dWorkspace, MissingShortMisalignedOrOverlappingWorkspaceLaunchesNothing) {
  const Conv2dKernelInfo* kernel = nullptr;
  for (const Conv2dKernelInfo& k : convgen::seeds::conv2d_kernels()) {
    if (k.workspace_fixed > 0) kernel = &k;
  }
  ASSERT_NE(kernel, nullptr) << "seeds has no kernel that takes a workspace";
  Conv2dProblem p = kernel->problem;
  p.n = std::max(p.n, 1);
  const convgen::KernelChoice choice = convgen::seeds::find(p);
  ASSERT_EQ(choice.kernel, kernel->name);
  const size_t need = static_cast<size_t>(kernel->workspace_bytes(p.n));
  EXPECT_EQ(choice.workspace_bytes, need);
  EXPECT_GT(need, 0u);
  const size_t outputs = static_cast<size_t>(p.n) * p.c_out * p.out_h() * p.out_w();
  OperandBuffer input(static_cast<size_t>(p.n) * p.c * p.h * p.w, 0);
  OperandBuffer filter(static_cast<size_t>(p.c_out) * p.c * p.kh * p.kw, 0);
  OperandBuffer output(outputs, kPoison);
  OperandBuffer workspace(need / sizeof(float) + 4, 0);
  Conv2dArgs a;
  a.input = input.get();
  a.filter = filter.get();
  a.output = output.get();
  const auto expect_refused = [&](const Conv2dArgs& call, const std::string& mention) {
    const Status s = convgen::seeds::conv2d(p, call, nullptr);
    EXPECT_EQ(s.code, StatusCode::kInvalidPointer) << convgen::to_string(s.code) << ": " << s.message;
    EXPECT_TRUE(contains(s.message, "workspace of " + std::to_string(need) + " bytes")) << s.message;
    EXPECT_TRUE(contains(s.message, mention)) << "'" << mention << "' not in: " << s.message;
    EXPECT_TRUE(contains(s.message, "nothing was launched")) << s.message;
    expect_all_poison(output);
  };
  expect_refused(a, "gives none");
  a.workspace = workspace.get();
  a.workspace_bytes = need - 1;
  expect_refused(a, "gives " + std::to_string(need - 1) + " bytes");
  a.workspace = shifted(workspace.get(), 4);
  a.workspace_bytes = need;
  expect_refused(a, "at 4 past a multiple of 16");
  // Large enough and aligned, but over the output.
  OperandBuffer shared((need + outputs * sizeof(float)) / sizeof(float) + 4, kPoison);
  Conv2dArgs over = a;
  over.output = shared.get();
  over.workspace = shared.get();
  const Status s = convgen::seeds::conv2d(p, over, nullptr);
  EXPECT_EQ(s.code, StatusCode::kInvalidPointer) << s.message;
  EXPECT_TRUE(contains(s.message, "the workspace overlaps a tensor of the call; nothing was launched")) << s.message;
  expect_all_poison(shared);
}

}  // namespace
