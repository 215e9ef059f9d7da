// The problem of the seeds' 1x256x96x96 3x3 kernel, shared by the tests that
// exercise dispatch and bad calls against the seeds library.
#pragma once

#include <convgen/convgen.h>

namespace convgen::testing {

inline DepthwiseProblem seed_96() {
  DepthwiseProblem p;
  p.n = 1, p.c = 256, p.h = 96, p.w = 96, p.kh = 3, p.kw = 3;
  p.pad_top = p.pad_bottom = p.pad_left = p.pad_right = 1;
  return p;
}

}  // namespace convgen::testing
