#!/usr/bin/env python3
"""Variant table for the dwlarge prototype. `gen.py list` prints: NAME N COPY DEFINES..."""
import sys

# name, N, C, H, W, K, S, M, EPI, ACT
ROWS = [
    ("mnv3_56s2", 64, 72, 56, 56, 5, 2, 1, 2, 1),
    ("mnv3_28s1", 64, 120, 28, 28, 5, 1, 1, 2, 1),
    ("mnv3_14s2", 64, 672, 14, 14, 5, 2, 1, 2, 1),
    ("mnv3_7s1", 64, 960, 7, 7, 5, 1, 1, 2, 1),
    ("cnx_56", 16, 128, 56, 56, 7, 1, 1, 1, 0),
    ("cnx_28", 16, 256, 28, 28, 7, 1, 1, 1, 0),
    ("cnx_14", 16, 512, 14, 14, 7, 1, 1, 1, 0),
    ("cnx_7", 16, 1024, 7, 7, 7, 1, 1, 1, 0),
    ("seed_96k5", 1, 256, 96, 96, 5, 1, 1, 0, 0),
    ("seed_96k5m2", 1, 256, 96, 96, 5, 1, 2, 0, 0),
    ("seed_16x32k7", 3, 4, 16, 32, 7, 1, 1, 0, 0),
]

# schedules per row: (R, V, TH, CB, MINB, TAPS_SMEM, PIPE); MINB 0 = auto (OCC threads/SM).
# Run 3: shapes whose computing threads fill whole warps (CB units of TY x TX threads, a multiple
# of 32), each with PIPE 0 and 1; plus run 2's best.
def both(*shapes):
    return [s + (0, 0, p) for s in shapes for p in (0, 1)]
SCHED = {
    "mnv3_56s2": both((7,2,14,8), (4,2,16,4), (7,2,28,4), (2,4,8,8), (4,4,16,8)) + [(2,4,14,1,0,0,0)],
    "mnv3_28s1": both((7,4,28,8), (7,4,14,16), (7,2,28,4), (4,4,16,8)) + [(2,4,28,2,0,0,1)],
    "mnv3_14s2": both((1,7,7,32), (7,1,7,32), (1,7,7,16)) + [(1,7,7,8,0,0,0)],
    "mnv3_7s1": both((1,7,7,32), (7,1,7,32), (1,7,7,16)) + [(1,7,7,8,0,0,0)],
    "cnx_56": both((7,4,28,4), (7,4,14,8), (7,4,56,2), (7,2,56,1), (7,2,28,2)) + [(4,8,28,1,0,0,1)],
    "cnx_28": both((7,4,28,8), (7,4,14,16), (7,2,28,4)) + [(4,4,28,1,0,0,1)],
    "cnx_14": both((7,2,14,16), (7,4,14,16), (7,2,14,8)) + [(7,2,14,2,0,0,0)],
    "cnx_7": both((7,1,7,32), (1,7,7,32), (7,1,7,16)) + [(7,1,7,16,0,0,0)],
    "seed_96k5": [(4,8,32,1,0,0,1), (4,8,16,1,0,0,1), (4,8,16,2,0,0,1), (4,8,16,2,0,0,0)],
    "seed_96k5m2": [(4,4,16,1,1,1,1), (2,4,16,1,0,0,1), (4,4,16,2,0,0,1), (2,4,16,2,0,0,0)],
    "seed_16x32k7": [(2,4,16,2,0,0,1), (2,4,16,2,0,0,0)],
}

# Ragged / odd tests: name, N, C, H, W, K, S, M, EPI, ACT, sched
TESTS = [
    ("t_k7_17x23_ss6", 2, 6, 17, 23, 7, 1, 1, 2, 2, (4,4,8,1,0,0,1)),
    ("t_k11_20x36_s2m3", 2, 5, 20, 36, 11, 2, 3, 1, 0, (2,4,4,1,1,1,1)),
    ("t_k9_19x19_m4", 3, 8, 19, 19, 9, 1, 4, 0, 0, (4,2,8,1,1,1,1)),
    ("t_k9_19x19_m4cb", 3, 8, 19, 19, 9, 1, 4, 2, 1, (4,2,20,2,1,1,1)),
    ("t_k5_13x9_s2m2", 2, 12, 13, 9, 5, 2, 2, 2, 1, (3,4,9,3,0,0,1)),
    ("t_k9_31x64_s2", 2, 6, 31, 64, 9, 2, 1, 1, 1, (2,8,6,1,0,0,1)),
    ("t_k11_24x24_m4", 2, 4, 24, 24, 11, 1, 4, 2, 2, (2,4,8,1,1,1,1)),
    ("t_k7_30x30_s2m2", 2, 6, 30, 30, 7, 2, 2, 1, 2, (4,4,16,2,0,0,1)),
    ("t_k5_7x7_cb", 5, 12, 7, 7, 5, 1, 1, 0, 0, (7,7,7,4,0,0,1)),
    ("t_k5_10x10_v3", 2, 4, 10, 10, 5, 1, 3, 0, 0, (3,3,12,2,0,0,1)),
    ("t_k7_17x23_p0", 2, 6, 17, 23, 7, 1, 1, 2, 2, (4,4,8,1,0,0,0)),
    ("t_k11_24x24_m4_p0", 2, 4, 24, 24, 11, 1, 4, 2, 2, (2,4,8,1,1,1,0)),
    ("t_k7_big_many_tiles", 9, 40, 33, 44, 7, 1, 2, 2, 2, (4,4,8,1,0,0,1)),
    ("t_k7_units_cb", 3, 6, 33, 44, 7, 1, 1, 2, 2, (4,4,8,3,0,0,1)),   # CB units across bands and planes
    ("t_k5_units_s2", 3, 5, 29, 36, 5, 2, 2, 1, 1, (2,2,6,3,0,0,0)),
    ("t_k9_units_ts", 2, 3, 21, 20, 9, 1, 3, 2, 1, (2,4,4,2,1,1,1)),
]

def defines(C, H, W, K, S, M, EPI, ACT, sch):
    R, V, TH, CB, MINB, TS, PIPE = sch
    return f"-DC={C} -DH={H} -DW={W} -DKH={K} -DKW={K} -DS={S} -DM={M} -DEPI={EPI} -DACT={ACT} -DR={R} -DV={V} -DTH={TH} -DCB={CB} -DMINB={MINB} -DTAPS_SMEM={TS} -DPIPE={PIPE}"

def jobs():
    out = []
    for (name, N, C, H, W, K, S, M, EPI, ACT) in ROWS:
        for i, sch in enumerate(SCHED[name]):
            out.append((f"{name}__{i}", name, N, 1 if i == 0 else 0, defines(C, H, W, K, S, M, EPI, ACT, sch)))
    for (name, N, C, H, W, K, S, M, EPI, ACT, sch) in TESTS:
        out.append((f"{name}__0", name, N, 0, defines(C, H, W, K, S, M, EPI, ACT, sch)))
    return out

if __name__ == "__main__":
    for j in jobs():
        print(*j)
