#!/usr/bin/env python3
"""dwlist.py CONVGEN SPEC [--all]: the staged schedule each NHWC kernel of SPEC in $DW_DTYPE (default float32) gets (convgen list
--archs 90), one line a kernel: channels, tile, copy groups, threads, shared memory, blocks of the grid at
the workload's batch and per SM (132 SMs), copies a thread issues. --all: every kernel, any algorithm.
Exit 1 with convgen's message when the spec does not validate."""
import json
import math
import os
import subprocess
import sys

SMS = 132


def describe(k):
    s = k["schedule"]
    if s["algorithm"] != "staged":
        keys = [x for x in s if x not in ("algorithm", "alignment", "max_arch", "min_arch", "max_batch",
                                          "workspace_fixed", "workspace_per_image", "input_cache", "output_cache")]
        return s["algorithm"] + " " + ", ".join(f"{x} {s[x]}" for x in keys[:6])
    th, tw = s["block_tile"]
    cb = s["channels_per_block"]
    threads = s["threads_per_block"]
    group_copies = s["group_rows"] * s["staged_columns"] * (cb // s["copy_elements"])
    steps = s["copy_groups"] * math.ceil(group_copies / threads)
    grid = k["n"] * s["tiles_per_image"]
    run = cb * (2 if k["dtype"] != "float32" else 4)
    return (f"staged cpb {cb:3d} ({run} B run) tile [{th:2d},{tw:2d}] groups {s['copy_groups']} thr {threads:4d} "
            f"smem {s['smem_bytes']:5d} grid {grid:6d} ({grid / SMS:6.1f}/SM) copies/thr {steps}")


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    convgen, spec = sys.argv[1], sys.argv[2]
    templates = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "templates")
    r = subprocess.run([convgen, "list", spec, "--templates", templates, "--archs", "90", "--format", "json"],
                       capture_output=True, text=True)
    if r.returncode:
        sys.stderr.write(r.stderr)
        return 1
    for k in sorted(json.loads(r.stdout)["kernels"], key=lambda k: k["name"]):
        if "--all" in sys.argv or (k["layout"] == "NHWC" and k["dtype"] == os.environ.get("DW_DTYPE", "float32")):
            origin = k.get("origin", {}).get("source", "")
            print(f"{k['name']:52s} {origin:8s} {describe(k)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
