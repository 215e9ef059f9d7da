# variants.sh: the variants of results/h200_f32_nhwc_sweep.txt (sourced; defines VARIANTS).
# Each is "name|RULE|..." for dwsweep.sh / dwforce.py; a rule's key is
# n,c,h,k,stride of a float32 NHWC row of rows.csv (its plain twin too).
# The seven rows and what the default rule gave them before this sweep changed it (convgen list --archs 90):
#   R1 seed      1x256x96x96  k5 s1  cpb 16 (64 B run)  [28,8] g4  768 blocks, last row tile 12 of 28 rows
#   R2 mnv2_b1   1x144x56x56  k3 s2  cpb 24 (96 B run)  [2,7]  g1  336 blocks
#   R3 mnv2_b64 64x144x56x56  k3 s1  cpb 24 (96 B run)  [14,8] g4  10752 blocks
#   R4 mnv2_b64 64x144x56x56  k3 s2  cpb 24 (96 B run)  [7,7]  g4  6144 blocks
#   R5 mnv3_b64 64x120x28x28  k5 s1  cpb 20 (80 B run)  [28,8] g4  1536 blocks, 4 column tiles of 8 for 28
#   R6 mnv3_b64 64x960x7x7    k5 s1  cpb 20 (80 B run)  [7,7]  g4  3072 blocks
#   R7 convnext 16x256x28x28  k7 s1  cpb 16 (64 B run)  [28,8] g4  1024 blocks, 4 column tiles of 8 for 28
# A block's run of a pixel is channels_per_block x 4 bytes; a run of 80 bytes
# (R5, R6) starts 16 bytes into a 32-byte sector in every other block.
S="algorithm: staged"
R1="1,256,96,5,1" R2="1,144,56,3,2" R3="64,144,56,3,1" R4="64,144,56,3,2"
R5="64,120,28,5,1" R6="64,960,7,5,1" R7="16,256,28,7,1"
VARIANTS=(
  # The default rule, unforced.
  "head"
  # A: wider runs, 128-192 bytes, sector-aligned; tiles as the rule sizes them, whole where it would not.
  "A_wide|$R1=$S, channels_per_block: 32|$R2=$S, channels_per_block: 48|$R3=$S, channels_per_block: 48|$R4=$S, channels_per_block: 48|$R5=$S, channels_per_block: 40, block_tile: [28, 4]|$R6=$S, channels_per_block: 32, block_tile: [7, 7]|$R7=$S, channels_per_block: 32, block_tile: [28, 4]"
  # B: one 32-byte sector a pixel (8 channels); 28-wide planes in 2 tiles of 14 columns.
  "B_narrow8|$R1=$S, channels_per_block: 8|$R2=$S, channels_per_block: 8|$R3=$S, channels_per_block: 8|$R4=$S, channels_per_block: 8|$R5=$S, channels_per_block: 8, block_tile: [28, 14]|$R6=$S, channels_per_block: 8|$R7=$S, channels_per_block: 8, block_tile: [28, 14]"
  # C: runs of 240-288 bytes (64 / 72 / 60 channels); R3 and R4 in float16's best bytes and tiles
  # (288-byte runs: whole float16 pixels, [28, 3] at stride 1 and [7, 4] at stride 2).
  "C_wide64|$R1=$S, channels_per_block: 64, block_tile: [28, 2]|$R2=$S, channels_per_block: 72|$R3=$S, channels_per_block: 72, block_tile: [28, 3]|$R4=$S, channels_per_block: 72, block_tile: [7, 4]|$R5=$S, channels_per_block: 60, block_tile: [28, 2]|$R6=$S, channels_per_block: 64, block_tile: [7, 7]|$R7=$S, channels_per_block: 64, block_tile: [14, 2]"
  # D: the default channels, tiles without ragged edges (R1 rows, R5 and R7 columns) or taller
  # (R3, R4), more blocks at batch 1 (R2); R6 24 channels (a 96-byte, aligned run) on its 7x7 plane.
  "D_tiles|$R1=$S, channels_per_block: 16, block_tile: [24, 8]|$R2=$S, channels_per_block: 24, block_tile: [1, 7]|$R3=$S, channels_per_block: 24, block_tile: [28, 8]|$R4=$S, channels_per_block: 24, block_tile: [14, 7]|$R5=$S, channels_per_block: 20, block_tile: [28, 7]|$R6=$S, channels_per_block: 24, block_tile: [7, 7]|$R7=$S, channels_per_block: 16, block_tile: [28, 7]"
  # E: whole 576-byte pixels for the 144-channel rows (one run a staged row, as the float16 rule
  # does for pixels of up to 288 bytes); aligned runs with exact tiles for the large filters.
  "E_whole|$R1=$S, channels_per_block: 32, block_tile: [24, 4]|$R2=$S, channels_per_block: 144, block_tile: [1, 4]|$R3=$S, channels_per_block: 144, block_tile: [14, 2]|$R4=$S, channels_per_block: 144, block_tile: [4, 4]|$R5=$S, channels_per_block: 24, block_tile: [28, 7]|$R6=$S, channels_per_block: 40, block_tile: [7, 7]|$R7=$S, channels_per_block: 32, block_tile: [14, 4]"
  # F: the default schedules, output stores with evict-first priority (__stcs: written once, not read
  # again here), which the tuned NCHW window kernels often chose.
  "F_out_evict|*,*,*,*,*=$S, output_cache: evict_first"
)
