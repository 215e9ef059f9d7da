// Runs the runtime's validate() on problems read from stdin and prints what
// it says, for tests/cpu/overflow_property.py. No GPU is needed: validate()
// touches no memory and makes no CUDA call.
//
//   validate_probe --limits   prints each limit the script models:
//                             `<name> <generic bound>`, one a line
//   validate_probe            reads one problem a line:
//     depthwise n c h w kh kw stride_h stride_w pad_top pad_bottom pad_left pad_right dilation_h dilation_w multiplier
//     conv2d n c c_out h w kh kw stride_h stride_w pad_top pad_bottom pad_left pad_right dilation_h dilation_w groups
//   and prints one line for each:
//     ok <out_channels> <out_h> <out_w>     (the problem's helpers, convgen.h)
//     rejected <validate()'s message>
// Exit status: 0, or 2 on a line it cannot read (named on stderr).
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "convgen/convgen.h"

namespace {

void print_limits() {
  const std::pair<const char*, const convgen::SizeLimit*> rows[] = {
      {"batch", &convgen::kBatchLimit},          {"channels", &convgen::kChannelsLimit},
      {"out_channels", &convgen::kOutChannelsLimit}, {"multiplier", &convgen::kMultiplierLimit},
      {"extent", &convgen::kExtentLimit},        {"filter", &convgen::kFilterLimit},
      {"stride", &convgen::kStrideLimit},        {"dilation", &convgen::kDilationLimit},
      {"padding", &convgen::kPaddingLimit},      {"groups", &convgen::kGroupsLimit},
      {"out_extent", &convgen::kOutExtentLimit}, {"plane", &convgen::kPlaneLimit},
      {"reduction", &convgen::kReductionLimit},  {"tensor_elements", &convgen::kTensorElementsLimit},
      {"tensor_bytes", &convgen::kTensorBytesLimit}};
  static_assert(sizeof(rows) / sizeof(rows[0]) == sizeof(convgen::kSizeLimits) / sizeof(convgen::kSizeLimits[0]),
                "the script models every row of the table");
  for (const auto& [name, limit] : rows) std::printf("%s %lld\n", name, limit->generic);
}

// The window fields both problems share, in the order of the line.
template <class Problem>
void read_window(std::istringstream& in, Problem& p) {
  in >> p.kh >> p.kw >> p.stride_h >> p.stride_w >> p.pad_top >> p.pad_bottom >> p.pad_left >> p.pad_right >>
      p.dilation_h >> p.dilation_w;
}

template <class Problem>
void report(const Problem& p, long long out_channels) {
  const convgen::Status s = convgen::validate(p);
  if (s.ok()) {
    std::printf("ok %lld %lld %lld\n", out_channels, static_cast<long long>(p.out_h()),
                static_cast<long long>(p.out_w()));
  } else {
    std::printf("rejected %s\n", s.message.c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--limits") {
    print_limits();
    return 0;
  }
  std::string line;
  long long number = 0;
  while (std::getline(std::cin, line)) {
    ++number;
    std::istringstream in(line);
    std::string op;
    in >> op;
    if (op == "depthwise") {
      convgen::DepthwiseProblem p;
      in >> p.n >> p.c >> p.h >> p.w;
      read_window(in, p);
      in >> p.multiplier;
      if (!in) break;
      report(p, p.out_channels());
    } else if (op == "conv2d") {
      convgen::Conv2dProblem p;
      in >> p.n >> p.c >> p.c_out >> p.h >> p.w;
      read_window(in, p);
      in >> p.groups;
      if (!in) break;
      report(p, p.c_out);
    } else {
      break;
    }
    line.clear();
  }
  if (!line.empty()) {
    std::fprintf(stderr, "validate_probe: line %lld is not a problem: %s\n", number, line.c_str());
    return 2;
  }
  std::fflush(stdout);
  return 0;
}
