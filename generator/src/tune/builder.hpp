// Compiling candidates: the core renders a kernel's source in memory and
// NVRTC compiles it for the device's own architecture, with the headers the
// kernels include handed to it in memory (embedded_headers.hpp).
#pragma once

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
  std::string log;       // NVRTC's log on failure
  std::string cubin;
  std::string lowered;   // the kernel's mangled name
  double seconds = 0;
};

// Compiles `source` for sm_<arch>; `name_expression` names the kernel whose
// lowered name the result carries.
Compiled compile(const CudaApi& api, const std::string& source, const std::string& name_expression, int arch);

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
  Builder(const CudaApi& api, const gen::Templates& templates);

  // One plan's kernel, compiled at once (outside the slots).
  Compiled build(const gen::KernelPlan& plan, int arch) const;
  // Every plan's kernel, compiled at once, one per free core.
  std::vector<Compiled> build_all(const std::vector<const gen::KernelPlan*>& plans, int arch);

 private:
  const CudaApi& api_;
  const gen::Templates& templates_;
  gen::LibraryPlan render_lib_;
  CompileSlots slots_;
};

}  // namespace convgen::tune
