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

std::string problem_fields(const Workload& wl, const ProblemFields& own) {
  ProblemFields fields;
  for (const auto& [name, value] :
       {std::pair<const char*, int>{"n", wl.n}, {"c", wl.c}, {"h", wl.h}, {"w", wl.w}, {"kh", wl.kh}, {"kw", wl.kw},
        {"stride_h", wl.stride_h}, {"stride_w", wl.stride_w}, {"pad_top", wl.pad_top}, {"pad_bottom", wl.pad_bottom},
        {"pad_left", wl.pad_left}, {"pad_right", wl.pad_right}, {"dilation_h", wl.dilation_h},
        {"dilation_w", wl.dilation_w}}) {
    fields.emplace_back(name, num(value));
  }
  fields.insert(fields.end(), own.begin(), own.end());
  fields.emplace_back("epilogue", std::string("Epilogue::") + row(wl.epilogue).enumerator);
  fields.emplace_back("activation", std::string("Activation::") + row(wl.activation).enumerator);
  fields.emplace_back("dtype", std::string("DataType::") + row(wl.dtype).enumerator);
  fields.emplace_back("layout", std::string("Layout::") + row(wl.layout).enumerator);
  std::string text;
  for (const auto& [name, value] : fields) text += "p." + name + " = " + value + "; ";
  return text;
}

std::string storage_name(const Workload& wl) {
  const std::string math = row(wl.math).name_part;
  return std::string(row(wl.dtype).name_part) + (math.empty() ? "" : "_" + math) + "_" + row(wl.layout).name_part;
}

int element_bytes(const Workload& wl) { return convgen::element_bytes(wl.dtype); }

std::string epilogue_name_part(const Workload& wl) { return row(wl.epilogue).name_part; }

}  // namespace convgen::gen::ops
