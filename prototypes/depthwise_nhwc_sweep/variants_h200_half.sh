# variants_h200_half.sh: the sweep (results/h200_half_sweep.txt) of the six half-type rows of MobileNetV2 at batch 64 that
# reach less than 0.95 of a copy's rate on an H200 (docs/benchmarks_h200.md; 0.86-0.935, where the
# H100 ran them at 0.96-1.01). Sourced by run.sh (DW_VARIANTS=variants_h200_half.sh); defines VARIANTS
# (dwsweep.sh's form) and what the sweep needs: its rows, the dtype listed (bfloat16 gets float16's
# schedules) and the benchmark with cuDNN, which checks every row's output.
# The default rule gives float16 and bfloat16 the same schedules (convgen list --archs 90):
#   R1 64x32x112x112  k3 s1  cpb 32  [14,8] g4   staged input / outputs 16x10 / 14x8 = 1.43
#   R2 64x144x56x56   k3 s1  cpb 144 [28,3] g4                       30x5 / 28x3  = 1.79
#   R3 64x144x56x56   k3 s2  cpb 144 [7,4]  g4                       15x9 / (7x4x4) = 1.21
# The copy of these rows' bytes ran 1.29-1.33x faster than on the H100, the kernels 1.18-1.22x.
# Two guesses, each a variant family: the halo rows and columns a tile reads again (from L2) weigh
# more where DRAM is faster (A, B: larger tiles, fewer re-reads); and the copies in flight a block
# keeps (C, D: the rows copied in fewer or more groups).
export DW_ROWS=${DW_ROWS:-$(dirname "${BASH_SOURCE[0]}")/rows_h200_half.csv}
export DW_DTYPE=${DW_DTYPE:-float16} DW_CUDNN=${DW_CUDNN:-1}
S="algorithm: staged"
R1="64,32,112,3,1,*,NHWC" R2="64,144,56,3,1,*,NHWC" R3="64,144,56,3,2,*,NHWC"
# A staged tile holds at most 48 KiB and 1024 threads (144 channels: 170 pixels of 288 bytes), so
# the larger tiles of the 144-channel rows take fewer channels or fewer columns.
VARIANTS=(
  "head"
  "A_wide|$R1=$S, channels_per_block: 32, block_tile: [14, 16]|$R2=$S, channels_per_block: 144, block_tile: [14, 6]|$R3=$S, channels_per_block: 72, block_tile: [14, 4]"
  "B_tall|$R1=$S, channels_per_block: 32, block_tile: [28, 8]|$R2=$S, channels_per_block: 144, block_tile: [12, 7]|$R3=$S, channels_per_block: 72, block_tile: [7, 8]"
  "C_groups2|$R1=$S, channels_per_block: 32, block_tile: [14, 8], copy_groups: 2|$R2=$S, channels_per_block: 144, block_tile: [28, 3], copy_groups: 2|$R3=$S, channels_per_block: 144, block_tile: [7, 4], copy_groups: 2"
  "D_groups8|$R1=$S, channels_per_block: 32, block_tile: [14, 8], copy_groups: 8|$R2=$S, channels_per_block: 144, block_tile: [28, 3], copy_groups: 8|$R3=$S, channels_per_block: 144, block_tile: [7, 4], copy_groups: 8"
  "E_largest|$R1=$S, channels_per_block: 32, block_tile: [28, 16]|$R2=$S, channels_per_block: 72, block_tile: [28, 8]|$R3=$S, channels_per_block: 48, block_tile: [14, 4]"
  "F_half_runs|$R1=$S, channels_per_block: 16, block_tile: [14, 16]|$R2=$S, channels_per_block: 72, block_tile: [28, 6]|$R3=$S, channels_per_block: 72, block_tile: [7, 8]"
)
