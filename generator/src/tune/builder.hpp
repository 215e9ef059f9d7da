// Compiling candidates: the core renders a kernel's source in memory and
// NVRTC compiles it for the device's own architecture, with the headers the
// kernels include handed to it in memory (embedded_headers.hpp). A kernel on
// CUTLASS's headers (TuneCompiler::kNvcc), which NVRTC does not compile, is
// built by nvcc instead, with its host launcher, as a shared object that the
// tuner loads and calls (tune/runner.cpp).
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "convgen/gen/plan.hpp"
#include "convgen/gen/render.hpp"
#include "tune/cuda_api.hpp"

namespace convgen::tune {

struct Compiled {
  bool ok = false;
  std::string log;       // the compiler's log on failure
  std::string cubin;     // NVRTC's
  std::string lowered;   // the kernel's mangled name (NVRTC)
  std::string shared_object;  // nvcc's: the path of the kernel and its launcher, built as a shared object
  double seconds = 0;
};

// Compiles `source` for sm_<arch>; `name_expression` names the kernel whose
// lowered name the result carries.
Compiled compile(const CudaApi& api, const std::string& source, const std::string& name_expression, int arch);

// The symbol a shared object built by nvcc exports: the kernel's launcher
// (its registry entry's signature, the stream as a void*), returning null
// on success, else the CUDA runtime's message.
constexpr const char* kSharedObjectLauncher = "convgen_tune_launch";
using SharedObjectLauncher = const char* (*)(const void* input, const void* filter, const void* epilogue_a,
                                             const void* epilogue_b, const void* residual, void* output,
                                             void* workspace, int batch, void* stream);

// What nvcc builds need: nvcc, and the folder holding cutlass/cutlass.h.
struct NvccToolchain {
  std::string nvcc;             // empty: not found
  std::string cutlass_include;  // empty: not found
  std::string cutlass_given;    // --cutlass-include, or empty
  // "" when both are found, else what is missing and how to give it.
  std::string missing() const;
};

// nvcc: $CUDA_HOME/bin/nvcc, else the toolkit convgen was built with, else
// the PATH's. CUTLASS: `cutlass_include` where given, else
// $CONVGEN_CUTLASS_INCLUDE_DIR, else the folder convgen's build was
// configured with (CMake's CONVGEN_CUTLASS_INCLUDE_DIR), else the
// nvidia-cutlass Python package's (as cmake/Convgen.cmake finds it).
NvccToolchain find_nvcc_toolchain(const std::string& cutlass_include);

// The source nvcc builds for a kernel: its source, and the launcher the
// tuner calls (kSharedObjectLauncher), forwarding to the registry's entry
// `launch_<name>` in namespace `library`.
std::string shared_object_source(const std::string& kernel_source, const std::string& library,
                                 const std::string& kernel_name);

// Builds `source` with nvcc as the shared object `out` for sm_<arch>
// (sm_<arch>a where `arch_specific`), the headers convgen's kernels include
// under `headers`, CUTLASS's from the toolchain; its log on failure.
Compiled compile_shared_object(const NvccToolchain& toolchain, const std::string& source, const std::string& headers,
                               const std::string& out, int arch, bool arch_specific);

// Writes the headers convgen's kernels include (embedded_headers.hpp) under
// `dir`, by the names they are included under.
void write_embedded_headers(const std::string& dir);

// At most one compilation per core across every worker.
class CompileSlots {
 public:
  explicit CompileSlots(unsigned n) : free_(n) {}
  void acquire();
  void release();

 private:
  std::mutex m_;
  std::condition_variable cv_;
  unsigned free_;
};

// Renders and compiles candidates' kernels. One builder serves every
// device's worker, so that together they run one compilation per core.
class Builder {
 public:
  Builder(const CudaApi& api, const gen::Templates& templates, const std::string& cutlass_include);
  ~Builder();
  Builder(const Builder&) = delete;
  Builder& operator=(const Builder&) = delete;

  // "" when the builder can compile `algorithm`'s kernels, else why not.
  std::string cannot_build(const gen::Algorithm& algorithm) const;

  // One plan's kernel, compiled at once (outside the slots); a failure of
  // any kind is the result's log.
  Compiled build(const gen::KernelPlan& plan, int arch) const;
  // Every plan's kernel, compiled at once, one per free core.
  std::vector<Compiled> build_all(const std::vector<const gen::KernelPlan*>& plans, int arch);

 private:
  Compiled build_or_throw(const gen::KernelPlan& plan, int arch) const;

  const CudaApi& api_;
  const gen::Templates& templates_;
  gen::LibraryPlan render_lib_;
  CompileSlots slots_;
  // Found on first need: a run of NVRTC kernels only looks for neither.
  const NvccToolchain& nvcc() const;
  std::string cutlass_include_;
  mutable std::once_flag nvcc_found_;
  mutable NvccToolchain nvcc_;
  // nvcc's folder: the headers, the sources and the shared objects (made on
  // the first nvcc build, removed with the builder).
  mutable std::mutex work_mutex_;
  mutable std::string work_dir_;
  mutable std::atomic<int> builds_{0};
};

}  // namespace convgen::tune
