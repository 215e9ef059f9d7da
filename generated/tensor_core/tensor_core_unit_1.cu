// tensor_core: one compile unit of 2 kernels, float16,
// of one main loop (implicit_gemm: cta_tile 64x64x64, warp_tile 32x32, 5 stages, split_k 4).
//
// Most of a kernel's compile time goes to CUTLASS's headers and the
// instantiation of its main loop, which the schedule and data type
// determine (all but the knobs that change only a kernel's own code, such
// as the order its blocks take their tiles in): compiled together, the
// compiler reads the headers once and makes each instantiation once for all
// of them. Each kernel's source is its own file, included here; its names
// are in a namespace of its own.
#include "conv_f16_nhwc_n1_c256_co512_h14_w14_k3x3_s2_p1_ssrelu.cuh"
#include "conv_f16_nhwc_n1_c512_co256_h7_w7_k3x3_s1_p1_ss_res_silu.cuh"
