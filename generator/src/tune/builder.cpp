#include "tune/builder.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <sys/wait.h>
#include <thread>

#include "tune/embedded_headers.hpp"

// The CUTLASS headers of the build that made convgen (the top-level
// CMakeLists.txt defines it; a generator built alone has none).
#ifndef CONVGEN_CUTLASS_INCLUDE
#define CONVGEN_CUTLASS_INCLUDE ""
#endif

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

namespace {

namespace fs = std::filesystem;

// A command's exit status and its output (stdout and stderr together).
int run_command(const std::string& command, std::string& output) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) {
    output = "cannot run: " + command;
    return -1;
  }
  std::array<char, 4096> chunk;
  size_t n = 0;
  while ((n = std::fread(chunk.data(), 1, chunk.size(), pipe)) > 0) output.append(chunk.data(), n);
  const int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// A command's output without its line end.
std::string chomped(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

bool is_file(const std::string& path) {
  std::error_code ec;
  return !path.empty() && fs::is_regular_file(path, ec);
}

std::string find_nvcc() {
  if (const char* home = std::getenv("CUDA_HOME"); home != nullptr && *home != '\0') {
    if (is_file(std::string(home) + "/bin/nvcc")) return std::string(home) + "/bin/nvcc";
  }
  if (is_file(CONVGEN_NVCC)) return CONVGEN_NVCC;
  std::string out;
  if (run_command("command -v nvcc", out) == 0 && is_file(chomped(out))) return chomped(out);
  return "";
}

bool holds_cutlass(const std::string& dir) { return is_file(dir + "/cutlass/cutlass.h"); }

std::string find_cutlass(const std::string& given) {
  if (!given.empty()) return holds_cutlass(given) ? given : "";
  if (const char* env = std::getenv("CONVGEN_CUTLASS_INCLUDE_DIR"); env != nullptr && *env != '\0') {
    return holds_cutlass(env) ? env : "";
  }
  if (holds_cutlass(CONVGEN_CUTLASS_INCLUDE)) return CONVGEN_CUTLASS_INCLUDE;
  std::string out;
  if (run_command("python3 -c \"import cutlass_library, os; print(os.path.join(os.path.dirname("
                  "cutlass_library.__file__), 'source', 'include'))\"",
                  out) == 0 &&
      holds_cutlass(chomped(out))) {
    return chomped(out);
  }
  return "";
}

}  // namespace

std::string NvccToolchain::missing() const {
  if (nvcc.empty()) return "nvcc was not found (set CUDA_HOME or put nvcc on the PATH)";
  if (cutlass_include.empty() && !cutlass_given.empty()) {
    return "CUTLASS's headers were not found: --cutlass-include " + cutlass_given + " holds no cutlass/cutlass.h";
  }
  if (cutlass_include.empty()) {
    return "CUTLASS's headers were not found (give --cutlass-include, or set CONVGEN_CUTLASS_INCLUDE_DIR, or "
           "install them: scripts/install_deps.sh)";
  }
  return "";
}

NvccToolchain find_nvcc_toolchain(const std::string& cutlass_include) {
  NvccToolchain t;
  t.nvcc = find_nvcc();
  t.cutlass_include = find_cutlass(cutlass_include);
  t.cutlass_given = cutlass_include;
  return t;
}

std::string shared_object_source(const std::string& kernel_source, const std::string& library,
                                 const std::string& kernel_name) {
  return kernel_source + "\n"
         "// The entry point `convgen tune` calls (tune/runner.cpp): the launcher\n"
         "// above, under a name it looks up, with the runtime's message on failure.\n"
         "extern \"C\" const char* " + std::string(kSharedObjectLauncher) +
         "(const void* input, const void* filter, const void* epilogue_a,\n"
         "    const void* epilogue_b, const void* residual, void* output, void* workspace, int batch,\n"
         "    void* stream) {\n"
         "  const cudaError_t e = convgen_" + library + "::launch_" + kernel_name +
         "(input, filter, epilogue_a, epilogue_b, residual, output,\n"
         "      workspace, batch, static_cast<cudaStream_t>(stream));\n"
         "  return e == cudaSuccess ? nullptr : cudaGetErrorString(e);\n"
         "}\n";
}

void write_embedded_headers(const std::string& dir) {
  for (const EmbeddedHeader& h : embedded_headers()) {
    const fs::path path = fs::path(dir) / h.name;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << h.text;
  }
}

Compiled compile_shared_object(const NvccToolchain& toolchain, const std::string& source, const std::string& headers,
                               const std::string& out, int arch, bool arch_specific) {
  const auto start = std::chrono::steady_clock::now();
  Compiled result;
  const std::string cu = out + ".cu";
  std::ofstream(cu) << source;
  const std::string sm = std::to_string(arch) + (arch_specific ? "a" : "");
  // The flags a library's build gives these kernels (cmake/Convgen.cmake),
  // and those of a shared object.
  std::string command = quoted(toolchain.nvcc) +
                        " -std=c++17 -O3 -DNDEBUG -shared -Xcompiler -fPIC --expt-relaxed-constexpr" +
                        " -gencode arch=compute_" + sm + ",code=sm_" + sm + " -I" + quoted(headers) + " -isystem " +
                        quoted(toolchain.cutlass_include);
  const std::string util = toolchain.cutlass_include + "/../tools/util/include";
  if (is_file(util + "/cutlass/util/packed_stride.hpp")) command += " -isystem " + quoted(util);
  command += " -o " + quoted(out) + " " + quoted(cu);
  std::string log;
  if (run_command(command, log) == 0 && is_file(out)) {
    result.ok = true;
    result.shared_object = out;
  } else {
    result.log = log.empty() ? "nvcc failed: " + command : log;
  }
  std::error_code ec;
  fs::remove(cu, ec);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

Builder::Builder(const CudaApi& api, const gen::Templates& templates, const std::string& cutlass_include)
    : api_(api),
      templates_(templates),
      slots_(std::max(1u, std::thread::hardware_concurrency())),
      cutlass_include_(cutlass_include) {
  render_lib_.name = "tune";
}

Builder::~Builder() {
  if (!work_dir_.empty()) {
    std::error_code ec;
    fs::remove_all(work_dir_, ec);
  }
}

const NvccToolchain& Builder::nvcc() const {
  std::call_once(nvcc_found_, [&] { nvcc_ = find_nvcc_toolchain(cutlass_include_); });
  return nvcc_;
}

std::string Builder::cannot_build(const gen::Algorithm& algorithm) const {
  return algorithm.tune_compiler == gen::TuneCompiler::kNvcc ? nvcc().missing() : "";
}

Compiled Builder::build(const gen::KernelPlan& plan, int arch) const {
  // It runs on the batch's threads: what goes wrong (a template, the temp
  // folder, a full disk) is this candidate's log, not the end of the run.
  try {
    return build_or_throw(plan, arch);
  } catch (const std::exception& e) {
    Compiled c;
    c.log = e.what();
    return c;
  }
}

Compiled Builder::build_or_throw(const gen::KernelPlan& plan, int arch) const {
  const std::string source = gen::render_kernel(templates_, render_lib_, plan);
  if (plan.schedule.algorithm->tune_compiler == gen::TuneCompiler::kNvrtc) {
    return compile(api_, source, "convgen_" + render_lib_.name + "::" + plan.name, arch);
  }
  if (const std::string why = nvcc().missing(); !why.empty()) {
    Compiled c;
    c.log = why;
    return c;
  }
  {
    std::lock_guard<std::mutex> lock(work_mutex_);
    if (work_dir_.empty()) {
      std::string pattern = (fs::temp_directory_path() / "convgen-tune-XXXXXX").string();
      if (mkdtemp(pattern.data()) == nullptr) {
        Compiled c;
        c.log = "cannot make a folder for nvcc under " + fs::temp_directory_path().string();
        return c;
      }
      write_embedded_headers(pattern + "/include");
      work_dir_ = pattern;
    }
  }
  const std::string out = work_dir_ + "/candidate_" + std::to_string(++builds_) + ".so";
  // sm_90a where the kernel runs on sm_90 only (its wgmma and TMA).
  const bool arch_specific = plan.max_arch != 0 && plan.max_arch == arch;
  return compile_shared_object(nvcc(), shared_object_source(source, render_lib_.name, plan.name), work_dir_ + "/include",
                               out, arch, arch_specific);
}

std::vector<Compiled> Builder::build_all(const std::vector<const gen::KernelPlan*>& plans, int arch) {
  std::vector<Compiled> compiled(plans.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < plans.size(); ++i) {
    threads.emplace_back([&, i] {
      slots_.acquire();
      compiled[i] = build(*plans[i], arch);  // throws nothing
      slots_.release();
    });
  }
  for (std::thread& t : threads) t.join();
  return compiled;
}

}  // namespace convgen::tune
