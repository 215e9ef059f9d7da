// libFuzzer entry point: every input is a candidate spec, and a candidate
// tuning database (tests/fuzz/README.md).
#include <cstddef>
#include <cstdint>
#include <string>

#include "spec_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  convgen::fuzz::check_input(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
