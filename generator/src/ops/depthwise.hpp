// What the depthwise_conv2d algorithms share: the operator they belong to,
// the register budget of a lane, and small arithmetic helpers. Internal to
// the generator (generator/src/ops/).
#pragma once

#include <string>

#include "convgen/gen/operator.hpp"
#include "convgen/gen/plan.hpp"
#include "common.hpp"

namespace convgen::gen::depthwise {

extern const Operator kOperator;
extern const Algorithm kTiles;   // depthwise_tiles.cpp
extern const Algorithm kRows;    // depthwise_rows.cpp
extern const Algorithm kPlanes;  // depthwise_planes.cpp
extern const Algorithm kWindow;  // depthwise_window.cpp
extern const Algorithm kChannels;  // depthwise_channels.cpp: NHWC
extern const Algorithm kStaged;    // depthwise_staged.cpp: NHWC, input tiles staged in shared memory

// The rows and planes algorithms keep a lane's values in registers. Their
// launch bounds allow 64 registers a lane and indices and pointers take
// about 10 of them. ptxas over the default schedules of 1x1 to 7x7 filters,
// multipliers 1 to 8, strides 1 and 2, with and without epilogue: none
// spills at this limit; the first spill is at 56 values (1x1, multiplier 8).
constexpr int kMaxLaneValues = 54;

using ops::batch_limit;
using ops::ceil_div;
using ops::kMaxThreads;
using ops::epilogue_params;
using ops::num;
using ops::pow2_at_least;

// The knob of the tiles and staged algorithms: the adjacent input channels a
// block takes (tiles: one per threadIdx.z, at most 64 in CUDA).
Knob channels_per_block_knob();

// Whether the default rule gives the workload the planes or the rows
// algorithm (each true only where that algorithm fits).
bool default_is_planes(const Workload& wl, const PlanOptions& options);
bool rows_fits_by_default(const Workload& wl, const PlanOptions& options);
bool window_fits_by_default(const Workload& wl, const PlanOptions& options);
// Whether the NHWC default rule gives the workload the staged algorithm
// (only where its default schedule fits).
bool staged_is_default(const Workload& wl, const PlanOptions& options);

}  // namespace convgen::gen::depthwise
