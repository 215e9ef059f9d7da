// The GPUs convgen builds for: one table of per-architecture facts, and the
// target of a library (the architectures it is compiled for).
//
// The facts drive the fit rules (a schedule must fit the tightest GPU of the
// library's list) and the default schedule rule (sized for the newest GPU of
// the list). CMake asks `convgen archs` for the minimum and the default list,
// so these facts live here only.
#pragma once

#include <string>
#include <vector>

namespace convgen::gen {

// What one compute capability offers, as the CUDA C++ Programming Guide's
// "Technical Specifications per Compute Capability" states it.
struct ArchFacts {
  int sm = 0;                  // 75 for sm_75
  const char* family = "";     // "Turing"
  const char* example_gpu = "";  // the GPU whose SM count is given
  int shared_per_block = 0;    // bytes a block may use (with the opt-in to dynamic shared memory)
  int shared_per_sm = 0;       // bytes of shared memory per SM
  int shared_reserved = 0;     // bytes of it the system reserves per resident block
  int registers_per_sm = 0;    // 32-bit registers per SM
  int threads_per_sm = 0;      // resident threads per SM
  int blocks_per_sm = 0;       // resident blocks per SM
  int sm_count = 0;            // SMs of example_gpu; 0 where no one GPU stands for the arch
  bool cp_async = false;       // asynchronous copies into shared memory (sm_80+)
  const char* tensor_cores = "";  // the tensor-core instructions, in words
  int first_cuda = 0;          // the first CUDA toolkit that compiles for it, as 10 x major + minor
  int last_cuda = 0;           // the last one (0: still supported)
};

// Every architecture convgen knows, ascending.
const std::vector<ArchFacts>& arch_table();
// The facts of `sm`, or nullptr when the table does not hold it.
const ArchFacts* find_arch(int sm);

// The lowest architecture convgen builds for (sm_70; CUDA 13 starts at sm_75).
int min_arch();
// The architectures a library is built for when nothing names them (no
// ARCHS, no CMAKE_CUDA_ARCHITECTURES, no GPU to detect), in CMake's words:
// machine code for each, and PTX of the newest for GPUs after it.
const char* default_archs();

// One entry of a CMake architecture list: 75, 75-real, 75-virtual, 90a, ...
struct ArchEntry {
  std::string text;  // as written
  int sm = 0;        // 75
};

// A library's architectures, and the facts its schedules are made for.
struct ArchTarget {
  std::vector<ArchEntry> entries;  // as CMake names them (CUDA_ARCHITECTURES)
  std::vector<ArchFacts> facts;    // of each distinct architecture, ascending; a schedule fits them all
  // The newest architecture of the list: the default rule sizes for it.
  ArchFacts newest;
  // Entries the table does not hold (their facts count as the table's tightest).
  std::vector<int> unknown;

  std::string list() const;  // "75;80-real;90", as given
  // Blocks of `threads` threads and `shared_bytes` of shared memory that
  // every GPU of the list keeps resident on one SM (at least 1).
  int resident_blocks(int threads, int shared_bytes) const;
};

// Parses a CMake architecture list ("75;80-real;90", commas also separate).
// Throws std::invalid_argument naming the entry and what is allowed: a
// malformed entry, one below min_arch(), one that CUDA `cuda_version`
// (10 x major + minor; 0: do not check) cannot compile for, or an empty list.
ArchTarget parse_arch_list(const std::string& list, int cuda_version = 0);

// The target of default_archs().
const ArchTarget& default_target();

}  // namespace convgen::gen
