#!/usr/bin/env python3
# Sums Nsight Compute's warp-stall samples of one kernel over the parts of its SASS: reads the CSV of
#   ncu --import REPORT.ncu-rep --page source --csv --print-source sass > sass.csv
# and prints, for every WINDOW instructions (default 25), the samples and the notable opcodes there (barriers,
# TMA, wgmma, loads and stores), then the instructions of most samples.
#   python3 ncu_regions.py sass.csv [WINDOW]
import csv
import sys

NOTABLE = ("HGMMA", "SYNCS", "UTMA", "BAR", "STG", "LDG", "STS", "LDS", "EXIT", "USETMAXREG", "DEPBAR")
rows = list(csv.reader(open(sys.argv[1])))
window = int(sys.argv[2]) if len(sys.argv) > 2 else 25
header, sass = rows[1], [r for r in rows[2:] if len(r) > 3]
source, samples = header.index("Source"), header.index("Warp Stall Sampling (All Samples)")
executed = header.index("Instructions Executed")


def opcode(text):
    words = text.split()
    return words[1] if words[0].startswith("@") else words[0]


total = sum(int(r[samples] or 0) for r in sass)
print(f"{total} samples over {len(sass)} instructions")
for first in range(0, len(sass), window):
    part = sass[first:first + window]
    count = sum(int(r[samples] or 0) for r in part)
    ops = sorted({opcode(r[source].strip()) for r in part if any(n in r[source] for n in NOTABLE)})
    print(f"{first:5d}-{first + len(part) - 1:<5d} {count:5d} {100 * count / total:5.1f}%  {' '.join(ops)}")
print("most samples:")
for i, r in sorted(enumerate(sass), key=lambda x: -int(x[1][samples] or 0))[:12]:
    print(f"{i:5d} {r[samples]:>5} executed {r[executed]:>7}  {r[source].strip()[:80]}")
