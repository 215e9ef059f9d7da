// Stage 4 of the generator: rendered files reach the disk. A file is written
// only when its text changed (so the build recompiles only what changed), and
// each write goes to a temporary file first and is renamed into place, so a
// reader never sees half a file.
#pragma once

#include <string>
#include <vector>

#include "convgen/gen/render.hpp"

namespace convgen::gen {

struct WriteReport {
  std::vector<std::string> written;    // new or changed
  std::vector<std::string> unchanged;  // left untouched
  std::vector<std::string> removed;    // stale files pruned
};

// Writes `files` under `dir` (created if needed). With `prune`, removes the
// .cu and .h files in `dir` that are not among `files`: kernels whose
// workloads left the spec. Throws std::runtime_error on an I/O failure.
WriteReport write_outputs(const std::string& dir, const std::vector<OutputFile>& files, bool prune);

}  // namespace convgen::gen
