// Two libraries (seeds and mobilenet_v2) in one program, called from 8 host
// threads on 8 streams at once, and the same call made twice.
//
// Every kernel of both libraries, specialized and generic, runs once alone
// (its "solo" output) on fixed random inputs. Determinism: a second solo call
// gives the same bits. Concurrency: 8 threads, each with its own stream and
// output, start together and run every case twice, each thread in its own
// order; every output must equal the solo output bit for bit. (Each kernel's
// solo output is checked against the float64 reference by
// test_shipped_kernels; here the question is whether concurrent calls change
// anything.) The comparison runs on the GPU, on each thread's stream.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "harness.h"
#include "mobilenet_v2.h"
#include "seeds.h"

namespace {

using convgen::Conv2dArgs;
using convgen::Conv2dProblem;
using convgen::DepthwiseArgs;
using convgen::DepthwiseProblem;
using convgen::Dispatch;
using convgen::Epilogue;
using convgen::Status;

constexpr int kThreads = 8;
constexpr int kRounds = 2;

// Counts the words of `got` that differ from `want`.
__global__ void count_differences(const unsigned* got, const unsigned* want, long long count,
                                  unsigned long long* differences) {
  unsigned long long local = 0;
  for (long long i = blockIdx.x * 1LL * blockDim.x + threadIdx.x; i < count; i += 1LL * gridDim.x * blockDim.x) {
    local += got[i] != want[i];
  }
  if (local != 0) atomicAdd(differences, local);
}

float* device_random(size_t count, std::mt19937_64& rng, float lo, float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> host(count);
  for (float& x : host) x = dist(rng);
  float* d = nullptr;
  if (cudaMalloc(&d, count * sizeof(float)) != cudaSuccess) return nullptr;
  cudaMemcpy(d, host.data(), count * sizeof(float), cudaMemcpyHostToDevice);
  return d;
}

// One call: a kernel (or the generic kernel) on its own inputs, into any output.
struct Case {
  std::string name;
  long long out_count = 0;
  // The call, into `output`, through `workspace` (at least workspace_bytes).
  std::function<Status(float* output, void* workspace, cudaStream_t)> run;
  float* solo = nullptr;  // the output of the call made alone
  long long workspace_bytes = 0;  // what its kernel computes through (winograd_nonfused's)
};

// A call's workspace: dense kernels take it from Conv2dArgs, depthwise ones take none.
void give_workspace(Conv2dArgs& a, void* workspace, long long bytes) {
  a.workspace = workspace;
  a.workspace_bytes = static_cast<size_t>(bytes);
}
void give_workspace(DepthwiseArgs&, void*, long long) {}

class Concurrency : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string why;
    if (!convgen::testing::gpu_available(&why)) {
      skip_reason_ = "no GPU: " + why;
      return;
    }
    add_depthwise("seeds", convgen::seeds::depthwise_kernels(), &convgen::seeds::depthwise_conv2d);
    add_depthwise("mobilenet_v2", convgen::mobilenet_v2::depthwise_kernels(), &convgen::mobilenet_v2::depthwise_conv2d);
    add_conv2d("seeds", convgen::seeds::conv2d_kernels(), &convgen::seeds::conv2d);
    add_conv2d("mobilenet_v2", convgen::mobilenet_v2::conv2d_kernels(), &convgen::mobilenet_v2::conv2d);
    void* workspace = keep_bytes(largest_workspace());
    for (Case& c : cases_) {
      ASSERT_EQ(cudaMalloc(&c.solo, c.out_count * sizeof(float)), cudaSuccess) << c.name;
      ASSERT_EQ(cudaMemset(c.solo, 0xff, c.out_count * sizeof(float)), cudaSuccess);
      const Status s = c.run(c.solo, workspace, nullptr);
      ASSERT_TRUE(s.ok()) << c.name << ": " << s.message;
    }
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  }
  static void TearDownTestSuite() {
    for (void* p : allocations_) cudaFree(p);
    for (Case& c : cases_) cudaFree(c.solo);
  }
  void SetUp() override {
    if (!skip_reason_.empty()) GTEST_SKIP() << skip_reason_;
  }

  template <class Info, class Problem, class Args>
  static void add_cases(const std::string& library, const std::vector<Info>& kernels,
                        Status (*call)(const Problem&, const Args&, cudaStream_t, Dispatch),
                        Status (*generic)(const Problem&, const Args&, cudaStream_t),
                        const std::function<Args(const Problem&, std::mt19937_64)>& make_args,
                        const std::function<long long(const Problem&)>& out_count) {
    for (const Info& k : kernels) {
      Problem p = k.problem;
      if (p.n == 0) p.n = 2;  // a runtime batch
      const Args args = make_args(p, rng_of(library, k.name));
      const long long workspace = k.workspace_bytes(p.n);
      cases_.push_back({library + "/" + k.name, out_count(p),
                        [=](float* out, void* scratch, cudaStream_t s) {
                          Args a = args;
                          a.output = out;
                          give_workspace(a, scratch, workspace);
                          return call(p, a, s, Dispatch::kStrict);
                        },
                        nullptr, workspace});
      cases_.push_back({library + "/" + k.name + " (generic)", out_count(p),
                        [=](float* out, void*, cudaStream_t s) {
                          Args a = args;
                          a.output = out;
                          return generic(p, a, s);
                        }});
    }
  }

  // Fixed inputs per kernel.
  static std::mt19937_64 rng_of(const std::string& library, const std::string& kernel) {
    return std::mt19937_64(std::hash<std::string>{}(library + kernel));
  }

  static float* keep(float* p) {
    allocations_.push_back(p);
    return p;
  }
  // Device memory of `bytes` (at least one), freed with the suite.
  static void* keep_bytes(long long bytes) {
    void* p = nullptr;
    if (cudaMalloc(&p, static_cast<size_t>(std::max(bytes, 1LL))) != cudaSuccess) return nullptr;
    allocations_.push_back(p);
    return p;
  }

  static void add_depthwise(const std::string& library, const std::vector<convgen::DepthwiseKernelInfo>& kernels,
                            Status (*call)(const DepthwiseProblem&, const DepthwiseArgs&, cudaStream_t, Dispatch)) {
    add_cases<convgen::DepthwiseKernelInfo, DepthwiseProblem, DepthwiseArgs>(
        library, kernels, call, &convgen::generic_depthwise_conv2d,
        [](const DepthwiseProblem& p, std::mt19937_64 rng) {
          DepthwiseArgs a;
          a.input = keep(device_random(1ULL * p.n * p.c * p.h * p.w, rng, -1, 1));
          a.filter = keep(device_random(1ULL * p.out_channels() * p.kh * p.kw, rng, -1, 1));
          if (p.epilogue == Epilogue::kBias) a.bias = keep(device_random(p.out_channels(), rng, -1, 1));
          if (p.epilogue == Epilogue::kScaleShift) {
            a.scale = keep(device_random(p.out_channels(), rng, -2, 2));
            a.shift = keep(device_random(p.out_channels(), rng, -1, 3));
          }
          return a;
        },
        [](const DepthwiseProblem& p) { return 1LL * p.n * p.out_channels() * p.out_h() * p.out_w(); });
  }

  static void add_conv2d(const std::string& library, const std::vector<convgen::Conv2dKernelInfo>& kernels,
                         Status (*call)(const Conv2dProblem&, const Conv2dArgs&, cudaStream_t, Dispatch)) {
    add_cases<convgen::Conv2dKernelInfo, Conv2dProblem, Conv2dArgs>(
        library, kernels, call, &convgen::generic_conv2d,
        [](const Conv2dProblem& p, std::mt19937_64 rng) {
          Conv2dArgs a;
          a.input = keep(device_random(1ULL * p.n * p.c * p.h * p.w, rng, -1, 1));
          a.filter = keep(device_random(1ULL * p.c_out * p.c * p.kh * p.kw, rng, -1, 1));
          if (p.epilogue == Epilogue::kBias) a.bias = keep(device_random(p.c_out, rng, -1, 1));
          if (p.epilogue == Epilogue::kScaleShift) {
            a.scale = keep(device_random(p.c_out, rng, -2, 2));
            a.shift = keep(device_random(p.c_out, rng, -1, 3));
          }
          if (p.residual) a.residual = keep(device_random(1ULL * p.n * p.c_out * p.out_h() * p.out_w(), rng, -1, 1));
          return a;
        },
        [](const Conv2dProblem& p) { return 1LL * p.n * p.c_out * p.out_h() * p.out_w(); });
  }

  // Runs every case into `out` on `stream` and counts its differences from
  // the solo output into differences[case].
  static std::vector<std::string> run_all(int first, float* out, void* workspace, cudaStream_t stream,
                                          unsigned long long* differences) {
    std::vector<std::string> errors;
    const int count = static_cast<int>(cases_.size());
    for (int k = 0; k < count; ++k) {
      const int i = (first + k) % count;
      const Case& c = cases_[i];
      cudaMemsetAsync(out, 0xff, c.out_count * sizeof(float), stream);
      const Status s = c.run(out, workspace, stream);
      if (!s.ok()) {
        errors.push_back(c.name + ": " + s.message);
        continue;
      }
      count_differences<<<256, 256, 0, stream>>>(reinterpret_cast<const unsigned*>(out),
                                                 reinterpret_cast<const unsigned*>(c.solo), c.out_count,
                                                 differences + i);
    }
    return errors;
  }

  static long long largest_output() {
    long long most = 0;
    for (const Case& c : cases_) most = std::max(most, c.out_count);
    return most;
  }
  static long long largest_workspace() {
    long long most = 0;
    for (const Case& c : cases_) most = std::max(most, c.workspace_bytes);
    return most;
  }

  static inline std::vector<Case> cases_;
  static inline std::vector<void*> allocations_;
  static inline std::string skip_reason_;
};

TEST_F(Concurrency, SameCallTwiceGivesTheSameBits) {
  float* out = nullptr;
  unsigned long long* differences = nullptr;
  ASSERT_EQ(cudaMalloc(&out, largest_output() * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&differences, cases_.size() * sizeof(unsigned long long)), cudaSuccess);
  cudaMemset(differences, 0, cases_.size() * sizeof(unsigned long long));
  const std::vector<std::string> errors = run_all(0, out, keep_bytes(largest_workspace()), nullptr, differences);
  EXPECT_TRUE(errors.empty()) << errors.front();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<unsigned long long> host(cases_.size());
  cudaMemcpy(host.data(), differences, host.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost);
  for (size_t i = 0; i < cases_.size(); ++i) {
    EXPECT_EQ(host[i], 0u) << cases_[i].name << ": the second call differs in " << host[i] << " of "
                           << cases_[i].out_count << " words";
  }
  std::printf("  %zu calls (every kernel of two libraries, and the generic kernel on each problem) repeated: "
              "bitwise identical\n", cases_.size());
  cudaFree(out);
  cudaFree(differences);
}

TEST_F(Concurrency, EightThreadsOnEightStreamsIntoTwoLibraries) {
  const long long most = largest_output();
  std::vector<float*> outputs(kThreads);
  std::vector<cudaStream_t> streams(kThreads);
  unsigned long long* differences = nullptr;
  const size_t counters = static_cast<size_t>(kThreads) * cases_.size();
  ASSERT_EQ(cudaMalloc(&differences, counters * sizeof(unsigned long long)), cudaSuccess);
  cudaMemset(differences, 0, counters * sizeof(unsigned long long));
  std::vector<void*> workspaces(kThreads);  // each stream its own
  for (int t = 0; t < kThreads; ++t) {
    workspaces[t] = keep_bytes(largest_workspace());
    ASSERT_NE(workspaces[t], nullptr);
    ASSERT_EQ(cudaMalloc(&outputs[t], most * sizeof(float)), cudaSuccess);
    ASSERT_EQ(cudaStreamCreateWithFlags(&streams[t], cudaStreamNonBlocking), cudaSuccess);
  }
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);

  std::atomic<int> ready{0};
  std::vector<std::vector<std::string>> errors(kThreads);
  std::vector<std::thread> pool;
  const int count = static_cast<int>(cases_.size());
  for (int t = 0; t < kThreads; ++t) {
    pool.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < kThreads) std::this_thread::yield();  // start together
      for (int round = 0; round < kRounds; ++round) {
        // Each thread starts at its own place in the list, so different
        // kernels of both libraries run at the same time.
        const int first = (t * count / kThreads + round * 7) % count;
        auto e = run_all(first, outputs[t], workspaces[t], streams[t], differences + static_cast<size_t>(t) * count);
        errors[t].insert(errors[t].end(), e.begin(), e.end());
      }
      cudaStreamSynchronize(streams[t]);
    });
  }
  for (std::thread& th : pool) th.join();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);

  std::vector<unsigned long long> host(counters);
  cudaMemcpy(host.data(), differences, counters * sizeof(unsigned long long), cudaMemcpyDeviceToHost);
  int wrong = 0;
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_TRUE(errors[t].empty()) << "thread " << t << ": " << errors[t].front();
    for (int i = 0; i < count; ++i) {
      const unsigned long long d = host[static_cast<size_t>(t) * count + i];
      if (d != 0) {
        ++wrong;
        ADD_FAILURE() << "thread " << t << ", " << cases_[i].name << ": " << d << " of " << cases_[i].out_count
                      << " words differ from the call made alone";
      }
    }
  }
  std::printf("  %d threads x %d streams x %d rounds x %d calls: %d outputs differ from the solo calls\n", kThreads,
              kThreads, kRounds, count, wrong);
  for (int t = 0; t < kThreads; ++t) {
    cudaFree(outputs[t]);
    cudaStreamDestroy(streams[t]);
  }
  cudaFree(differences);
}

}  // namespace
