#include "tune/cuda_api.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <vector>

namespace convgen::tune {

namespace {

void* open_first(const std::vector<std::string>& names, std::string& tried) {
  for (const std::string& name : names) {
    if (void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) return handle;
    tried += "\n  " + name + ": " + dlerror();
  }
  return nullptr;
}

CudaApi load() {
  CudaApi api;
  std::string tried;
  void* driver = open_first({"libcuda.so.1"}, tried);
  if (driver == nullptr) {
    throw CudaError("convgen tune needs a GPU and its driver: cannot load the CUDA driver (libcuda.so.1):" + tried);
  }
  // The driver resolves each function for the CUDA version of our headers
  // (cuMemAlloc -> cuMemAlloc_v2, ...).
  using GetProcAddress = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
  const auto get_proc = reinterpret_cast<GetProcAddress>(dlsym(driver, "cuGetProcAddress_v2"));
  if (get_proc == nullptr) throw CudaError("the CUDA driver is too old: it has no cuGetProcAddress_v2 (CUDA 12+)");
#define CONVGEN_RESOLVE(name)                                                                                   \
  {                                                                                                           \
    void* fn = nullptr;                                                                                       \
    CUdriverProcAddressQueryResult found{};                                                                   \
    if (get_proc(#name, &fn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &found) != CUDA_SUCCESS || !fn) {     \
      throw CudaError("the CUDA driver has no " #name " for CUDA " + std::to_string(CUDA_VERSION) +             \
                      ": update the driver");                                                                 \
    }                                                                                                         \
    api.name = reinterpret_cast<decltype(api.name)>(fn);                                                      \
  }
  CONVGEN_CUDA_FUNCTIONS(CONVGEN_RESOLVE)
#undef CONVGEN_RESOLVE

  // NVRTC: $CONVGEN_NVRTC, the loader's path, then the toolkit's usual places.
  std::vector<std::string> names;
  if (const char* env = std::getenv("CONVGEN_NVRTC")) names.push_back(env);
  const std::string soname = "libnvrtc.so." + std::to_string(CUDA_VERSION / 1000);
  names.push_back(soname);
  if (const char* home = std::getenv("CUDA_HOME")) names.push_back(std::string(home) + "/lib64/" + soname);
  names.push_back("/usr/local/cuda/lib64/" + soname);
  names.push_back("/usr/lib/x86_64-linux-gnu/" + soname);
  void* nvrtc = open_first(names, tried);
  if (nvrtc == nullptr) {
    throw CudaError("convgen tune compiles candidates with NVRTC (part of the CUDA toolkit): cannot load " + soname +
                    "; set CONVGEN_NVRTC to its path. Tried:" + tried);
  }
#define CONVGEN_RESOLVE(name)                                                                     \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(nvrtc, #name));                           \
  if (api.name == nullptr) throw CudaError("NVRTC has no " #name ": it is older than CUDA 12");
  CONVGEN_NVRTC_FUNCTIONS(CONVGEN_RESOLVE)
#undef CONVGEN_RESOLVE
  api.check(api.cuInit(0), "cuInit");
  return api;
}

}  // namespace

const CudaApi& CudaApi::get() {
  static std::once_flag once;
  static CudaApi api;
  static std::string failure;
  std::call_once(once, [] {
    try {
      api = load();
    } catch (const CudaError& e) {
      failure = e.what();
    }
  });
  if (!failure.empty()) throw CudaError(failure);
  return api;
}

void CudaApi::check(CUresult r, const char* what) const {
  if (r == CUDA_SUCCESS) return;
  const char* message = nullptr;
  if (cuGetErrorString == nullptr || cuGetErrorString(r, &message) != CUDA_SUCCESS || message == nullptr) {
    message = "unknown error";
  }
  throw CudaError(std::string(what) + ": " + message + " (CUresult " + std::to_string(static_cast<int>(r)) + ")");
}

}  // namespace convgen::tune
