// What the conv2d (dense) algorithms share. Internal to the generator.
#pragma once

#include <algorithm>
#include <initializer_list>
#include <string>
#include <vector>

#include "convgen/gen/operator.hpp"
#include "convgen/gen/plan.hpp"
#include "common.hpp"

namespace convgen::gen::conv2d {

extern const Operator kOperator;
extern const Algorithm kDirect;  // conv2d_direct.cpp
extern const Algorithm kGemm;    // conv2d_gemm.cpp
extern const Algorithm kImplicitGemm;  // conv2d_implicit_gemm.cpp
extern const Algorithm kImplicitGemmNchw;  // conv2d_implicit_gemm.cpp: float32 NCHW through a workspace
// The NCHW algorithms (implicit_gemm_nchw, implicit_gemm_sm90_nchw) run the
// NHWC main loops on channels-last copies of the input and filter in the
// workspace (conv2d_implicit_gemm.cpp): the workload their main loop sees
// (the input channels padded with zeros to 16 bytes); the floats of padding
// per row of their epilogue's tile (NHWC: rows 8 words apart put the rows
// a warp's accumulator stores touch on distinct banks; NCHW: the lanes read
// down a column, which an odd pitch spreads over every bank); and the
// plan's part for the copies, given the main loop's workload and the
// call's input channels: the
// workspace, the call's alignment, the copies' template values, and the
// images a launch takes within the copies' grid (lowering the plan's
// images_per_launch).
Workload implicit_gemm_main_loop_workload(const Workload& wl);
// An algorithm of those four (conv2d_implicit_gemm.cpp): they share the
// launch description, the tuner's compiler (nvcc) and compile units.
Algorithm implicit_gemm_family(std::string name, std::vector<Knob> knobs, std::string template_file,
                               void (*plan)(const Workload&, const PlanOptions&, KernelPlan&),
                               std::string (*describe)(const Schedule&), std::vector<DataType> dtypes, Layout layout,
                               std::vector<Math> float32_maths);
int implicit_gemm_epilogue_pad(const Workload& wl);
void plan_channels_last_copies(const Workload& main_loop, int call_channels, KernelPlan& p);
// Whether the default rule gives a float32 NCHW workload implicit_gemm_nchw.
bool implicit_gemm_nchw_by_default(const Workload& wl, const PlanOptions& options);
extern const Algorithm kImplicitGemmSm90;  // conv2d_implicit_gemm_sm90.cpp
extern const Algorithm kImplicitGemmSm90Nchw;  // conv2d_implicit_gemm_sm90.cpp: float32 NCHW through a workspace
// Whether the default rule gives a workload that implicit_gemm serves to
// implicit_gemm_sm90 (a library with an sm_90a image; the layers where it
// measured faster).
bool implicit_gemm_sm90_by_default(const Workload& wl, const PlanOptions& options);
// What the two implicit-GEMM algorithms share (conv2d_implicit_gemm.cpp):
// the widest vector (in elements of `element_bytes`, at most 16 bytes) that
// divides `channels`; the images one launch may take (their main loops
// address tensors of less than 2^31 bytes), or an InputError naming
// `algorithm` where even the filter or one image is larger; and their
// launch: a block per cta_m pixels of the batch (grid.x), per cta_n output
// channels (grid.y) and per part of K (grid.z: split_k blocks of a cluster).
int vector_elements(int channels, int element_bytes);
long long implicit_gemm_images_per_launch(const Workload& wl, const std::string& algorithm);
LaunchDescription implicit_gemm_launch(const KernelPlan& p);
// Their reduction steps: 64 or 128 bytes of a row (32 or 64 half elements,
// 16 or 32 floats). The tiles of rows x cols that cover the GEMM's output:
// `pixels` rows (M) by the workload's output channels.
bool is_cta_k(int cta_k, int element_bytes);
long long output_tiles(const Workload& wl, long long pixels, int rows, int cols);
// The template values both plans set alike, from their main loop's
// workload: the GEMM's extents, the dtype, the epilogue's vectors and
// padding, and the figures of the schedule below (implicit_gemm_launch
// reads pixels and n_tiles of them).
struct ImplicitGemmValues {
  long long images_per_launch;
  int out_vec;  // elements per epilogue load and store
  int mainloop_bytes, epilogue_bytes;
  int n_tiles;  // tiles across c_out
  int k_steps;  // main-loop steps along K
  int split_k;
};
TemplateValues implicit_gemm_values(const Workload& main_loop, const ImplicitGemmValues& v);
// The order in which the blocks of an implicit GEMM take the output's tiles
// (blocks start, in practice, in the order of their linear index: x, then
// y). The tiles are cut into panels `swizzle` tiles wide, and the blocks
// take one panel after another: down its pixel tiles, each pixel tile's
// `swizzle` output-channel tiles in turn (raster pixels), or along its
// output-channel tiles, each one's `swizzle` pixel tiles in turn (raster
// channels). The blocks that run at once then read a compact patch of
// input rows and filter columns. raster pixels with swizzle 1 is the
// grid's own order: blockIdx.x walks the pixels.
enum TileRaster { kRasterPixels = 0, kRasterChannels = 1 };
struct TileOrder {
  int raster = kRasterPixels;
  int swizzle = 1;
};
Knob raster_knob();
Knob swizzle_knob();
// The spec's order (else the grid's own) on a grid of `n_tiles` columns of
// output-channel tiles, written as the one order it is there.
TileOrder requested_tile_order(const ScheduleRequest& req, int n_tiles);
// The template's values for the order (the tile_raster partial: a
// persistent kernel takes every tile through its function, another only
// where the order is not the grid's own), and the words a schedule summary
// adds where it is not the grid's own.
void add_tile_order_values(const TileOrder& order, bool persistent, TemplateValues& values);
std::string describe_tile_order(const Schedule& s);
extern const Algorithm kPointwise;  // conv2d_pointwise.cpp
// Whether the default rule gives a workload pointwise: a 1x1 stride-1 NHWC
// layer of half elements, or float32 in math tf32, with few input channels
// (at most 40; float32 only where its tiles fill the GPU), a narrow output,
// or (half elements) an expansion of at most 96 input channels to 6 times
// as many or more where implicit_gemm_sm90's rule does not take it; both
// channel counts in 16-byte vectors, in a library whose newest GPU has
// mma.sync.
bool pointwise_by_default(const Workload& wl, const PlanOptions& options);
extern const Algorithm kTensorStem;  // conv2d_tensor_stem.cpp
// Whether the default rule gives a workload tensor_stem: an NHWC stem of
// half elements (whose pairs it reads whole) or float32 in math tf32, in a
// library whose newest GPU has mma.sync.
bool tensor_stem_by_default(const Workload& wl, const PlanOptions& options);
// mma.sync's K in the kernels whose fragments templates/partials/
// mma_fragments takes (pointwise, tensor_stem): 32 bytes of elements,
// m16n8k16 of fp16 and bf16, m16n8k8 of float32 rounded to TF32.
int mma_sync_k(const Workload& wl);
// The values that partial prints: the operands' type and mma_sync_k.
void add_mma_fragment_values(const Workload& wl, TemplateValues& values);
extern const Algorithm kWinograd;      // conv2d_winograd.cpp
extern const Algorithm kWinogradNonfused;  // conv2d_winograd_nonfused.cpp
// Whether the default rule gives a 3x3 stride-1 float32 NCHW workload the
// non-fused Winograd (its GEMMs large enough to pay for the workspace's
// round trips).
bool winograd_nonfused_by_default(const Workload& wl);
extern const Algorithm kStem;          // conv2d_stem.cpp

using ops::kMaxThreads;
// Whether v is one of the values a knob takes.
inline bool is_one_of(int v, std::initializer_list<int> allowed) {
  return std::find(allowed.begin(), allowed.end(), v) != allowed.end();
}
// Accumulators a thread may keep: beyond 64 a thread needs about 250
// registers, and such schedules never won in the sweep.
constexpr int kMaxAccumulators = 64;
// Shared-memory buffers of a main loop's ring (the `stages` knob of gemm,
// implicit_gemm and implicit_gemm_sm90): one range for all, since a spec
// that names no algorithm has its knobs read before the algorithm is
// chosen.
constexpr int kMinPipelineStages = 2, kMaxPipelineStages = 8;

// 1x1 convolutions with stride 1 and no padding: per image, out[c_out x
// HW] = filter[c_out x c] x input[c x HW], the GEMM algorithm's own shape
// (it runs any other as the GEMM over im2col(input)).
bool is_pointwise(const Workload& wl);
// Whether the GEMM algorithm's 32-bit filter offsets reach the whole
// filter, [c_out x c*kh*kw]: at most 2^31 - 1 elements (the direct
// algorithm offsets it with 64 bits).
bool gemm_filter_fits(const Workload& wl);
// Strided 3x3 convolutions (stride above 1 along either side, dilation 1),
// which the default rule gives the GEMM algorithm (im2col).
bool is_strided_3x3(const Workload& wl);
// The winograd algorithm serves 3x3 convolutions with stride 1 and dilation 1.
bool is_winograd_shape(const Workload& wl);
// The stem algorithm serves layers of at most this many input channels (an
// image's: RGB, or RGBA).
constexpr int kMaxStemChannels = 4;
bool is_stem_shape(const Workload& wl);

// The shared memory a block may have on every GPU of the library (the
// opt-in maximum of dynamic shared memory); with min_arch, on those of them
// that run a kernel of that arch and newer (0 where none does).
int library_shared_limit(const PlanOptions& options, int min_arch = 0);
// The oldest GPU of the library (its compute capability x 10, e.g. 75).
int oldest_arch(const PlanOptions& options);
// The registers of an SM on every GPU of the library.
int library_registers_per_sm(const PlanOptions& options);

// Split K over a thread-block cluster (implicit_gemm and gemm): the blocks
// of a cluster compute one tile, each summing part of the reduction, and
// add their partial tiles through distributed shared memory in rank order
// (deterministic, no atomics, no workspace). Clusters need sm_90.
constexpr int kMinSplitArch = 90;
constexpr int kMaxSplitK = 8;  // CUDA's portable cluster size
// The oldest GPU with mma.sync on fp16, bf16 (m16n8k16) and TF32 operands
// (m16n8k8, cvt.rna.tf32), and with cp.async: sm_80. The tensor-core
// algorithms (pointwise, tensor_stem, implicit_gemm, gemm's and
// winograd_nonfused's tensor_cores products) run from it; on older GPUs of
// a library their kernels compile an empty body and the runtime runs the
// generic kernel.
constexpr int kMinMmaSyncArch = 80;
// An InputError at `where` when no GPU of the library is that new: `what`
// (an algorithm, or its tensor-core products) would compile to an empty
// body for every one of them, and every call run the generic kernel.
void check_mma_sync_gpu(const std::string& what, const SourceLocation& where, const PlanOptions& options);
// How a float32 kernel's products are computed (knob `products`, the gemm
// and winograd_nonfused algorithms; its words in this order): fp32 FMA, or
// TF32 tensor cores where the workload's math allows it (tf32, 3xtf32).
enum Products { kFma = 0, kTensorCores = 1 };
Knob products_knob();
// The error a spec gets for products tensor_cores under math fp32, or in a
// library of no GPU with tensor cores (check_mma_sync_gpu).
void check_products_math(const ScheduleRequest& req, int products, const Workload& wl, const PlanOptions& options);
// The maths an fp32 FMA kernel serves: all of them, since it computes each
// product in fp32, within the bounds of tf32 and 3xtf32 too (their
// permission to round, which it does not take).
inline const std::vector<Math> kEveryMath = {Math::kFloat32, Math::kTF32, Math::k3xTF32};
// The knob: 1, 2, 4 or 8 blocks of a cluster.
Knob split_k_knob();
// The default split K of a kernel of `blocks` blocks over `stages` stages,
// whose tiles have `tile_channels` output channels: 1 unless every GPU of
// the library has clusters and the blocks fill less than one wave; then
// doubled (to kMaxSplitK at most) while the blocks stay within
// `max_blocks_per_sm` an SM, each part keeps `min_stages` stages and the
// tile's channels split evenly.
int default_split_k(long long blocks, int stages, int tile_channels, int max_blocks_per_sm, int min_stages,
                    const PlanOptions& options);
// What is wrong with split_k for a tile of `tile_channels` output channels
// (each block of the cluster finishes an equal share) over `stages`
// stages of `stage_channels` input channels, in this library.
void check_split_k(const ScheduleRequest& req, int split_k, int stages, int stage_channels, int tile_channels,
                   const PlanOptions& options, std::vector<Diagnostic>& errors);

using ops::ceil_div;
using ops::round_up;
using ops::num;

// Output channels a tile when `parts` equal tiles cover c_out, each a
// multiple of `step` channels; the fewest equal tiles of at most `widest`
// channels, in multiples of 8 (16-byte vectors of half elements).
inline int channel_tile_of_parts(int c_out, int parts, int step) { return round_up(ceil_div(c_out, parts), step); }
inline int equal_channel_tile(int c_out, int widest) {
  return channel_tile_of_parts(c_out, ceil_div(c_out, widest), 8);
}

// Blocks per SM that __launch_bounds__ asks for: as many as the register
// file holds when each thread has the registers it is estimated to need, so
// that the compiler's cap (65536 / (threads x blocks), threads counted in
// whole warps) stays above the need.
inline int min_blocks(int threads, int registers) {
  return std::max(1, 65536 / (ceil_div(threads, 32) * 32 * registers));
}

}  // namespace convgen::gen::conv2d
