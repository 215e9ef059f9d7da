#include "tune/builder.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "tune/embedded_headers.hpp"

namespace convgen::tune {

void CompileSlots::acquire() {
  std::unique_lock<std::mutex> lock(m_);
  cv_.wait(lock, [&] { return free_ > 0; });
  --free_;
}

void CompileSlots::release() {
  {
    std::lock_guard<std::mutex> lock(m_);
    ++free_;
  }
  cv_.notify_one();
}

// Where NVRTC finds the toolkit's headers the kernels include (cuda_fp16.h,
// cuda_bf16.h): $CUDA_HOME/include where it is set and holds them, else the
// folder convgen was built against.
std::string toolkit_headers() {
  if (const char* home = std::getenv("CUDA_HOME"); home != nullptr && *home != '\0') {
    const std::string dir = std::string(home) + "/include";
    if (std::ifstream(dir + "/cuda_fp16.h").good()) return dir;
  }
  return CONVGEN_CUDA_HEADERS;
}

Compiled compile(const CudaApi& api, const std::string& source, const std::string& name_expression, int arch) {
  const auto start = std::chrono::steady_clock::now();
  Compiled out;
  nvrtcProgram program = nullptr;
  std::vector<const char*> header_names, header_texts;
  for (const EmbeddedHeader& h : embedded_headers()) {
    header_names.push_back(h.name);
    header_texts.push_back(h.text);
  }
  if (api.nvrtcCreateProgram(&program, source.c_str(), "kernel.cu", static_cast<int>(header_texts.size()),
                             header_texts.data(), header_names.data()) != NVRTC_SUCCESS) {
    out.log = "nvrtcCreateProgram failed";
    return out;
  }
  api.nvrtcAddNameExpression(program, name_expression.c_str());
  const std::string arch_option = "--gpu-architecture=sm_" + std::to_string(arch);
  const std::string include_option = "--include-path=" + toolkit_headers();
  // nvcc's defaults for device code, as the library build compiles it.
  const char* options[] = {arch_option.c_str(), "-std=c++17", include_option.c_str()};
  const nvrtcResult result = api.nvrtcCompileProgram(program, 3, options);
  size_t log_size = 0;
  api.nvrtcGetProgramLogSize(program, &log_size);
  if (result != NVRTC_SUCCESS) {
    out.log.resize(log_size);
    api.nvrtcGetProgramLog(program, out.log.data());
    while (!out.log.empty() && (out.log.back() == '\0' || out.log.back() == '\n')) out.log.pop_back();
    if (out.log.empty()) out.log = api.nvrtcGetErrorString(result);
  } else {
    size_t size = 0;
    api.nvrtcGetCUBINSize(program, &size);
    out.cubin.resize(size);
    api.nvrtcGetCUBIN(program, out.cubin.data());
    const char* lowered = nullptr;
    if (api.nvrtcGetLoweredName(program, name_expression.c_str(), &lowered) == NVRTC_SUCCESS && lowered) {
      out.lowered = lowered;
      out.ok = true;
    } else {
      out.log = "NVRTC does not know the kernel " + name_expression;
    }
  }
  api.nvrtcDestroyProgram(&program);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

Builder::Builder(const CudaApi& api, const gen::Templates& templates)
    : api_(api), templates_(templates), slots_(std::max(1u, std::thread::hardware_concurrency())) {
  render_lib_.name = "tune";
}

Compiled Builder::build(const gen::KernelPlan& plan, int arch) const {
  return compile(api_, gen::render_kernel(templates_, render_lib_, plan), "convgen_tune::" + plan.name, arch);
}

std::vector<Compiled> Builder::build_all(const std::vector<const gen::KernelPlan*>& plans, int arch) {
  std::vector<Compiled> compiled(plans.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < plans.size(); ++i) {
    threads.emplace_back([&, i] {
      const std::string source = gen::render_kernel(templates_, render_lib_, *plans[i]);
      slots_.acquire();
      compiled[i] = compile(api_, source, "convgen_tune::" + plans[i]->name, arch);
      slots_.release();
    });
  }
  for (std::thread& t : threads) t.join();
  return compiled;
}

}  // namespace convgen::tune
