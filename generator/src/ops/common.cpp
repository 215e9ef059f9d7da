#include "common.hpp"

#include <algorithm>

namespace convgen::gen::ops {

int batch_limit(long long units_per_image) {
  const long long most = 0x7fffffffLL / std::max(1LL, units_per_image);
  return static_cast<int>(std::min<long long>(most, kMaxBatch));
}

int epilogue_params(const Workload& wl) { return row(wl.epilogue).params; }

std::string pair_name(int a, int b) { return a == b ? num(a) : num(a) + "x" + num(b); }

std::string padding_name(const Workload& wl) {
  if (wl.pad_top == wl.pad_bottom && wl.pad_top == wl.pad_left && wl.pad_top == wl.pad_right) {
    return num(wl.pad_top);
  }
  return "t" + num(wl.pad_top) + "b" + num(wl.pad_bottom) + "l" + num(wl.pad_left) + "r" + num(wl.pad_right);
}

std::string epilogue_enum(Epilogue e) { return std::string("Epilogue::") + row(e).enumerator; }

std::string activation_enum(Activation a) { return std::string("Activation::") + row(a).enumerator; }

std::string epilogue_name_part(const Workload& wl) { return row(wl.epilogue).name_part; }

}  // namespace convgen::gen::ops
