"""Predicts the racecheck hazards of the pointwise template before the fix.

A warp's tile past the batch copied its residual rows (zeros) into the
warp's staging tile and was skipped before the wait for them; the warp's
next tile copied its own into the same bytes with the first copies still
in flight. Per generated kernel (a .cu of the draw): the pairs of such
copies over the grid and the bytes they write twice (16 rows x
channel_tile x the element's bytes a pair, once per block along c_out).

Usage: python3 pointwise_race_predict.py KERNEL.cu...
"""
import re, sys, math
def predict(path):
    src = open(path).read()
    n = int(re.search(r'spec declares N = (\d+)', src)[1]) if 'spec declares' in src else int(re.search(r'_n(\d+)_', path)[1])
    h, w = map(int, re.search(r'_h(\d+)_w(\d+)_', path).groups())
    co = int(re.search(r'_co(\d+)_', path)[1])
    ct = int(re.search(r'channel_tile (\d+)', src)[1]); warps = int(re.search(r'warps_per_block (\d+)', src)[1])
    tpw = int(re.search(r'tiles_per_warp (\d+)', src)[1])
    tiles = math.ceil(n * h * w / 16); block_tiles = warps * tpw; blocks = math.ceil(tiles / block_tiles)
    pairs = 0
    for b in range(blocks):
        for wp in range(warps):
            skipped = sum(1 for t in range(tpw) if (b * block_tiles + t * warps + wp) >= tiles)
            pairs += max(0, skipped - 1)
    ytiles = math.ceil(co / ct)
    element = 4 if path.split('/')[-1].startswith('conv_f32') else 2
    return dict(n=n, tiles=tiles, block=f'{warps}x{tpw}', ct=ct, pairs=pairs, ytiles=ytiles,
                bytes=pairs * ytiles * 16 * ct * element)
for p in sys.argv[1:]:
    print(p.split('/')[-1], predict(p))
