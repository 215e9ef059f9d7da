// The headers a kernel's source includes beyond CUDA's own, by the name it
// includes them under, with their text: NVRTC is handed them in memory.
#pragma once

#include <vector>

namespace convgen::tune {

struct EmbeddedHeader {
  const char* name;  // as included, e.g. "convgen/epilogue.h"
  const char* text;
};

const std::vector<EmbeddedHeader>& embedded_headers();

}  // namespace convgen::tune
