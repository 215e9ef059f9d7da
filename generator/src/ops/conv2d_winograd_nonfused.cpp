// conv2d, algorithm `winograd_nonfused`: Winograd F(4x4, 3x3) for 3x3
// convolutions with stride 1 and dilation 1 (any padding), float32 NCHW, in
// four launches through a workspace the caller passes (Conv2dArgs::workspace),
// as cuDNN's WINOGRAD_NONFUSED:
//   U[e] = G g G^T   the filter transform, 36 elements e per filter pair
//   V[e] = B^T d B   the input transform, per input channel and 4x4 output tile
//   M[e] = U[e] V[e] 36 GEMMs (output channels x tiles, over the input
//                    channels): CUTLASS's batched SIMT GEMM, fp32 FMA; or,
//                    with math tf32 or 3xtf32 and `products: tensor_cores`
//                    (a spec's, never the default's: see kDefaultProducts),
//                    its tensor-core GEMM of TF32 operands (one product, or
//                    three for 3xtf32's fp32 accuracy; sm_80 and newer)
//   y = A^T M A      the output transform, with the fused epilogue.
// F(4x4) takes 36 multiply-adds per input channel for 16 outputs, 2.25 an
// output against the fused `winograd` kernel's 4 and the direct sum's 9; the
// transforms pass through memory instead of shared memory, which pays where
// the GEMMs are large. The fused F(4x4) lost to F(2x2) because its block
// tile was small (docs/performance.md, "Winograd F(4x4, 3x3), fused"); here
// each GEMM has the whole layer. The prototype and its measurements:
// docs/performance.md, "Winograd, non-fused".
#include <algorithm>
#include <iterator>
#include <string>

#include "conv2d.hpp"

namespace convgen::gen::conv2d {

namespace {

constexpr int kElements = 36;         // of the 6x6 transform
constexpr int kTransformThreads = 256;  // a block of each transform kernel
// The tile is 4x4 outputs: each of U, V and M holds 36 floats per pair.
constexpr long long kBytesPerPair = 4LL * kElements;

// The GEMM's tiles (output channels x tiles per block) and the warp tile
// each takes: CUTLASS's SIMT configurations of 4 and 8 warps, which its
// tensor-core GEMM takes too (warp tiles of 16 x 8 products).
struct GemmTile {
  const char* word;
  int m, n, warp_m, warp_n;
};
constexpr GemmTile kGemmTiles[] = {
    {"128x128", 128, 128, 32, 64},
    {"128x64", 128, 64, 64, 32},
    {"64x128", 64, 128, 32, 64},
    {"64x64", 64, 64, 32, 32},
};
// The default, from the prototype's sweep of the four on ten 3x3 layers
// (H200): 64x128 is the fastest, or within 2.2%, on every layer the
// default rule gives the algorithm but ResNet-34's 28x28 at batch 8 (9.8%).
constexpr const char* kDefaultGemmTile = "64x128";
// cp.async stages from sm_80 (CUTLASS's multistage SIMT main loop); a
// library that also runs on older GPUs takes the two-stage loop through
// registers (CUTLASS's sm_70 one).
constexpr int kMinMultistageArch = kMinMmaSyncArch;
// Rows of K a stage: 8 in the SIMT GEMM; 32 on tensor cores (four
// m16n8k8 steps a stage, CUTLASS's TF32 configurations).
constexpr int kSimtStageK = 8;
constexpr int kTensorStageK = 32;
// The tensor-core GEMM reads its operands in 16-byte vectors: its K (the
// input channels of a part) and its N (the batch's tiles) must be multiples
// of 4 floats. N is padded (V's and M's rows hold tiles rounded up to 4;
// the input transform zeroes the padding), K is the workload's.
constexpr int kTensorVector = 4;
constexpr int kTwoStageArch = 70;
constexpr long long kMaxInt = 0x7fffffffLL;
constexpr int kMaxSplit = 8;
constexpr long long kMaxGridY = 65535;

int default_gemm_tile() {
  for (size_t i = 0; i < std::size(kGemmTiles); ++i) {
    if (std::string(kGemmTiles[i].word) == kDefaultGemmTile) return static_cast<int>(i);
  }
  return 0;
}

long long tiles_per_image(const Workload& wl) { return 1LL * ceil_div(wl.out_h(), 4) * ceil_div(wl.out_w(), 4); }

// The most tiles one launch takes: the GEMMs' N is an int; CUTLASS's
// batched GEMM puts its tiles along N on grid.y (at most 65535); a
// transform's grid, a thread per channel and tile, has at most 2^31 - 1 blocks.
long long max_tiles(const Workload& wl, const GemmTile& tile) {
  return std::min({kMaxInt, kMaxGridY * tile.n, kMaxInt * kTransformThreads / std::max(wl.c, wl.c_out)});
}

// The workspace's bytes: U, 36 floats per filter pair; for each of the
// batch's tiles, V's 36 floats per input channel and M's per output channel
// and part of the input channels.
// On tensor cores the rows of V and M hold up to kTensorVector - 1 tiles more.
long long workspace_per_tile(const Workload& wl, int split) { return kBytesPerPair * (wl.c + 1LL * split * wl.c_out); }
long long workspace_fixed(const Workload& wl, int split, int products) {
  return kBytesPerPair * wl.c_out * wl.c + (products == kTensorCores ? (kTensorVector - 1) * workspace_per_tile(wl, split) : 0);
}

// The default split: in 2 where the batch's GEMMs make fewer blocks than
// kSplitBelowBlocksPerSm an SM and each part keeps kMinPartChannels input
// channels (16 steps of the GEMM's main loop). From a sweep on the H200 of
// ResNet's 3x3 layers at batches 8 to 64 (docs/performance.md, "Winograd,
// non-fused: split K, 16-byte stores, and cuDNN's best of three"): split
// in 2, 512 channels on 7x7 at batch 32 went from 109.6 to 100.1 us and 256
// on 14x14 at batch 8 from 40.3 to 34.4; 128 channels (64 a part) lost at
// every batch, and so did 256 at batch 64 (1,152 blocks); a split in 4 lost
// to the split in 2 everywhere.
constexpr int kSplitBelowBlocksPerSm = 5;
constexpr int kMinPartChannels = 128;

int default_split(const Workload& wl, const GemmTile& tile, const PlanOptions& options) {
  if (wl.n == 0 || wl.c % 2 != 0 || wl.c / 2 < kMinPartChannels) return 1;
  const long long tiles = wl.n * tiles_per_image(wl);
  const long long blocks = 1LL * kElements * ceil_div(wl.c_out, tile.m) * ((tiles + tile.n - 1) / tile.n);
  return blocks < 1LL * kSplitBelowBlocksPerSm * options.target.newest.sm_count ? 2 : 1;
}

// The default rule's cap on the workspace a call needs at the declared
// batch: past it a caller would rather run the fused kernel than find the
// memory (ResNet's layers at batch 32 take 60 to 116 MB with the default split).
constexpr long long kMaxDefaultWorkspaceBytes = 1LL << 30;

// The default products: FMA, whatever the math. On TF32 tensor cores the
// GEMMs ran 1.3 to 1.9 times faster on ResNet's layers (H200, at cuDNN's
// TF32 speed), but TF32 rounds the transformed operands, which the output
// transform then amplifies: the outputs were 7.4e-3 to 9.0e-3 (relative)
// from cuDNN's TF32 convolution, against 2.4e-4 for TF32 direct sums
// (docs/performance.md, "Math tf32 in NCHW: Winograd's GEMMs on TF32 tensor
// cores"). Math tf32 allows rounding the convolution's operands, not that:
// a spec that accepts it asks for products: tensor_cores.
constexpr int kDefaultProducts = kFma;

void plan(const Workload& wl, const PlanOptions& options, KernelPlan& p) {
  const ScheduleRequest& req = wl.schedule;
  if (!is_winograd_shape(wl)) {
    throw InputError({{req.algorithm ? req.algorithm_where : req.where,
                       "the winograd_nonfused algorithm runs 3x3 convolutions with stride 1 and dilation 1; this "
                       "one is " + num(wl.kh) + "x" + num(wl.kw) + " with stride " +
                           ops::pair_name(wl.stride_h, wl.stride_w) + " and dilation " +
                           ops::pair_name(wl.dilation_h, wl.dilation_w) + ": use algorithm: direct"}});
  }
  const int tile_index = req.value("gemm_tile").value_or(default_gemm_tile());
  const GemmTile& tile = kGemmTiles[tile_index];
  const int split = req.value("split_k").value_or(default_split(wl, tile, options));
  if (wl.c % split != 0) {
    std::string divisors;
    for (int d = 1; d <= kMaxSplit; d *= 2) {
      if (wl.c % d == 0) divisors += (divisors.empty() ? "" : ", ") + num(d);
    }
    throw InputError({{req.at("split_k"), "split_k " + num(split) + " does not divide the " + num(wl.c) +
                                              " input channels into equal parts (each part's GEMMs share one K): "
                                              "use one of " + divisors}});
  }
  const int part_channels = wl.c / split;
  const int products = req.value("products").value_or(kDefaultProducts);
  check_products_math(req, products, wl, options);
  const bool tensor = products == kTensorCores;
  if (tensor && part_channels % kTensorVector != 0) {
    throw InputError({{req.at("products"), "products tensor_cores reads the GEMM's K, the " + num(part_channels) +
                                               " input channels of a part, in vectors of " + num(kTensorVector) +
                                               ": needs a multiple of " + num(kTensorVector) +
                                               " (split_k permitting), or products: fma"}});
  }
  // The multistage main loop where every GPU that runs the kernel has
  // cp.async: the library's, or on tensor cores sm_80 and newer (an older
  // GPU runs the generic kernel instead).
  const bool multistage = tensor || oldest_arch(options) >= kMinMultistageArch;
  const int stages = req.value("gemm_stages").value_or(multistage ? 3 : 2);
  if (tensor && stages < 3) {
    throw InputError({{req.at("gemm_stages"), "gemm_stages " + num(stages) + ": the tensor-core GEMM is CUTLASS's "
                                                  "multistage one (cp.async, sm_80 and newer): use 3 or 4"}});
  }
  if (stages > 2 && !multistage) {
    throw InputError({{req.at("gemm_stages"), "gemm_stages " + num(stages) +
                                                  " copies the GEMM's operands with cp.async, which needs sm_" +
                                                  num(kMinMultistageArch) + " or newer; this library is built for sm_" +
                                                  num(oldest_arch(options)) + " too: use gemm_stages: 2"}});
  }
  // The tensor-core GEMM's stages of both operands, in shared memory (CUTLASS
  // asks for more than 48 KB itself); the SIMT GEMM's take at most 32 KB.
  const long long tensor_smem = tensor ? 4LL * (tile.m + tile.n) * kTensorStageK * stages : 0;
  const int tensor_limit = library_shared_limit(options, kMinMmaSyncArch);
  if (tensor_smem > tensor_limit) {
    throw InputError({{req.at("gemm_stages"), "the tensor-core GEMM's " + num(stages) + " stages of " +
                                                  std::string(tile.word) + " tiles take " + num(tensor_smem) +
                                                  " bytes of shared memory per block; the GPUs of this library "
                                                  "from sm_80 allow " + num(tensor_limit) +
                                                  ": use fewer gemm_stages or a smaller gemm_tile"}});
  }
  const long long per_image = tiles_per_image(wl);
  const long long most_tiles = max_tiles(wl, tile);
  if (per_image > most_tiles) {
    throw InputError({{req.algorithm ? req.algorithm_where : req.where,
                       "the winograd_nonfused algorithm takes at most " + num(most_tiles) +
                           " 4x4 output tiles in one launch (an int, and the grids of its GEMM and transforms); "
                           "one image of this output has " + num(per_image) + ": use algorithm: winograd"}});
  }

  p.schedule.values = {{"gemm_tile", tile_index}, {"gemm_stages", stages}, {"split_k", split}, {"products", products}};
  if (tensor) p.min_arch = kMinMmaSyncArch;
  p.threads = kTransformThreads;
  p.block_threads = kTransformThreads;
  // The transforms use no shared memory; CUTLASS's GEMM sets its own (SIMT:
  // 16 to 32 KB, within what every GPU gives a block without opting in;
  // tensor cores: up to tensor_smem, opted into by CUTLASS).
  p.smem_bytes = 0;
  p.max_batch = static_cast<int>(std::min<long long>(kMaxBatch, most_tiles / per_image));
  p.alignment = 4;
  p.workspace_fixed = workspace_fixed(wl, split, products);
  p.workspace_per_image = workspace_per_tile(wl, split) * per_image;
  auto n = [](long long v) { return TemplateValue(v); };
  p.values = {
      {"tiles_h", n(ceil_div(wl.out_h(), 4))},
      {"tiles_w", n(ceil_div(wl.out_w(), 4))},
      {"tiles_per_image", n(per_image)},
      {"transform_threads", n(kTransformThreads)},
      {"gemm_m", n(tile.m)},
      {"gemm_n", n(tile.n)},
      {"warp_m", n(tile.warp_m)},
      {"warp_n", n(tile.warp_n)},
      {"gemm_warps", n((tile.m / tile.warp_m) * (tile.n / tile.warp_n))},
      {"gemm_stages", n(stages)},
      {"gemm_k", n(tensor ? kTensorStageK : kSimtStageK)},
      {"tensor_cores", tensor},
      {"three_products", tensor && wl.math == Math::k3xTF32},
      {"tile_vector", n(tensor ? kTensorVector : 1)},
      {"gemm_kind", TemplateValue(std::string(!tensor ? "CUTLASS's batched SIMT GEMM, fp32 FMA"
                                              : wl.math == Math::k3xTF32
                                                  ? "CUTLASS's batched tensor-core GEMM, 3xTF32: three TF32 products a term"
                                                  : "CUTLASS's batched tensor-core GEMM, TF32 operands"))},
      {"gemm_arch", n(stages > 2 ? kMinMultistageArch : kTwoStageArch)},
      {"gemm_m_tiles", n(ceil_div(wl.c_out, tile.m))},
      {"split_k", n(split)},
      {"split", split > 1},
      {"part_channels", n(part_channels)},
      {"last_part", n(split - 1)},
      {"gemms", n(1LL * kElements * split)},
  };
}

std::string describe(const Schedule& s) {
  return "F(4x4, 3x3) through a workspace; batched GEMM tile " + std::string(kGemmTiles[s.at("gemm_tile")].word) +
         " (channels x tiles), " + num(s.at("gemm_stages")) + " stages" +
         (s.at("split_k") > 1 ? ", split_k " + num(s.at("split_k")) : "") +
         (s.at("products") == kTensorCores ? ", products tensor_cores" : "");
}

// What the tuner's nvcc build calls is the template's own launcher (four
// launches); this is the transforms' shape, for the kernel's header.
LaunchDescription launch(const KernelPlan& p) {
  LaunchDescription l;
  l.grid[0].blocks = 1;
  l.grid[0].per_image = 1LL * p.workload.c * p.number("tiles_per_image");
  l.grid[0].per_block = kTransformThreads;
  l.block[0] = kTransformThreads;
  return l;
}

Knob gemm_tile_knob() {
  std::vector<std::string> words;
  for (const GemmTile& t : kGemmTiles) words.push_back(t.word);
  return Knob::choice("gemm_tile", words, "the batched GEMM's block tile: output channels x 4x4 output tiles");
}

Knob split_knob() {
  Knob k = Knob::integer("split_k", 1, kMaxSplit,
                         "parts of the input channels, each its own GEMMs into its own slice of M; the output "
                         "transform adds the parts in order (more GEMM blocks where a layer makes few)");
  k.allowed = {1, 2, 4, 8};
  k.rule_note = "(and a divisor of the input channels)";
  // The split changes the transforms' indices and the GEMM's arguments, not
  // the GEMM's type: kernels that differ only in it share a compile unit.
  k.default_value = 1;
  k.per_kernel = true;
  return k;
}

// The products knob of gemm, which TF32 rounds after the transforms here:
// never the tuner's choice (kDefaultProducts says why).
Knob products_knob_of_transforms() {
  Knob k = products_knob();
  k.meaning += "; here TF32 rounds the transformed operands (about 2^-7 of the output on ResNet's layers): "
               "a spec's choice, the tuner keeps fma";
  k.default_value = kDefaultProducts;
  k.searched = false;
  return k;
}

}  // namespace

bool winograd_nonfused_by_default(const Workload& wl) {
  // Where the prototype measured it faster than the fused kernel (ResNet's
  // 3x3 layers at batches 8 and 32): both channel counts of 64 and up, at
  // least a GEMM tile's width of output tiles in the batch, and GEMMs of at
  // least 0.4 GFLOP in all, with a workspace of at most 1 GiB. Deep layers
  // on small planes at small batches (too few tiles to fill the GEMM's
  // tiles) and runtime batches stay fused. The cap is checked unsplit: the
  // default splits only GEMMs of fewer than 5 blocks an SM, whose second
  // slice of M holds fewer than 660 tiles of 64 x 128 floats (21.6 MB).
  if (wl.n == 0 || wl.c < 64 || wl.c_out < 64) return false;
  const long long tiles = 1LL * wl.n * tiles_per_image(wl);
  const double gemm_flops = 2.0 * kElements * wl.c_out * wl.c * static_cast<double>(tiles);
  const double workspace = workspace_fixed(wl, 1, kFma) + static_cast<double>(workspace_per_tile(wl, 1)) * tiles;
  return tiles >= 128 && tiles <= max_tiles(wl, kGemmTiles[default_gemm_tile()]) && gemm_flops >= 0.4e9 &&
         workspace <= kMaxDefaultWorkspaceBytes;
}

const Algorithm kWinogradNonfused{
    "winograd_nonfused",
    &kOperator,
    {gemm_tile_knob(),
     Knob::integer("gemm_stages", 2, 4,
                   "shared-memory stages of the batched GEMM's main loop (3 and 4: cp.async, sm_80 and newer)"),
     split_knob(), products_knob_of_transforms()},
    "conv2d_nchw_winograd_nonfused.cu.mustache",
    &plan,
    &describe,
    &launch,
    {DataType::kFloat32},
    {Layout::kNCHW},
    TuneCompiler::kNvcc,
    &is_winograd_shape,
    kEveryMath,
    // Most of a kernel's compile time is CUTLASS's headers and its GEMM's
    // instantiation, the same for every kernel of one GEMM schedule.
    true,
    // F(4x4)'s transforms round: its own bound.
    true,
};

}  // namespace convgen::gen::conv2d
