#include "common.hpp"

#include <algorithm>

namespace convgen::gen::ops {

int batch_limit(long long units_per_image) {
  const long long most = 0x7fffffffLL / std::max(1LL, units_per_image);
  return static_cast<int>(std::min<long long>(most, kMaxBatch));
}

int epilogue_params(const Workload& wl) {
  switch (wl.epilogue) {
    case Epilogue::kNone: return 0;
    case Epilogue::kBias: return 1;
    case Epilogue::kScaleShift: return 2;
  }
  return 0;
}

std::string pair_name(int a, int b) { return a == b ? num(a) : num(a) + "x" + num(b); }

std::string padding_name(const Workload& wl) {
  if (wl.pad_top == wl.pad_bottom && wl.pad_top == wl.pad_left && wl.pad_top == wl.pad_right) {
    return num(wl.pad_top);
  }
  return "t" + num(wl.pad_top) + "b" + num(wl.pad_bottom) + "l" + num(wl.pad_left) + "r" + num(wl.pad_right);
}

const char* epilogue_enum(Epilogue e) {
  switch (e) {
    case Epilogue::kNone: return "Epilogue::kNone";
    case Epilogue::kBias: return "Epilogue::kBias";
    case Epilogue::kScaleShift: return "Epilogue::kScaleShift";
  }
  return "?";
}

const char* activation_enum(Activation a) {
  switch (a) {
    case Activation::kNone: return "Activation::kNone";
    case Activation::kRelu: return "Activation::kRelu";
    case Activation::kRelu6: return "Activation::kRelu6";
    case Activation::kSilu: return "Activation::kSilu";
    case Activation::kHardswish: return "Activation::kHardswish";
  }
  return "?";
}

}  // namespace convgen::gen::ops
