// The limits that the spec parser, the planner and the runtime's validation
// share, and convgen's version: each stated once, here.
#pragma once

// convgen's version: `convgen --version`, the tuning database's fingerprints
// and the CMake package's version (CMakeLists.txt reads it from this line).
#define CONVGEN_VERSION "0.2.0"

namespace convgen {

// The largest batch a spec declares and one call runs: CUDA's grid.y/z limit.
inline constexpr int kMaxBatch = 65535;
// The most elements of any one tensor (input, filter, output): kernels index
// with 64-bit offsets below this, and the generator's cost arithmetic stays
// far from overflow.
inline constexpr long long kMaxTensorElements = 1LL << 40;
// Static shared memory one block may use without the opt-in for more.
inline constexpr int kMaxStaticSharedBytes = 48 * 1024;

}  // namespace convgen
