# Sweep 11: the widest 1x1 layer alone (the default, pingpong 64 x 128), built with line information for a
# profile by Nsight Compute.
# On the GPU machine: ROWS=rows11 python3 make.py && CUDAFLAGS=-lineinfo ROWS=rows11 bash run.sh OUT; then
#   ncu --set full --import-source yes --kernel-name regex:n16_c384_co1536 --launch-count 1 -o ours /tmp/sweep-build/sweep
#   ncu --import ours.ncu-rep --page source --csv --print-source sass > sass.csv; python3 ncu_regions.py sass.csv
R = [  # (name, n, c, c_out, h, k, stride, act, variants); variant None is the default rule
    ("b16 384-1536 14 1x1", 16, 384, 1536, 14, 1, 1, "none", [None]),
]
