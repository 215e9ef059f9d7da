#!/usr/bin/env python3
"""Checks generated kernels' machine code: no local memory (LDL/STL) and no
backward branch (a loop the compiler did not unroll, such as one over filter
taps or over a thread's outputs). Dense kernels (conv_*) loop over their
input-channel stages, and depthwise kernels of the window algorithm over
their tiles, each step ending at a block barrier: a loop whose body holds a
barrier (BAR) is that loop and is allowed there. Hopper's pipelines
(implicit_gemm_sm90) synchronize their stages on shared-memory barriers
instead (SYNCS: the copying warp's waits for an empty buffer, the
multiplying warpgroups' for a full one): a loop holding one is a stage loop
too. So is a loop that waits for its own cp.async copies (DEPBAR, with no
barrier: the pointwise algorithm's warps each walk their tiles through a
ring of their own, synchronized by the warp alone). A loop that touches no
memory at all is allowed too: the tensor-core kernels' CUTLASS iterators
build their copy predicates in loops over the filter's rows and columns
(runtime values to them) before the main loop, pure register arithmetic.
Dense kernels of the stem algorithm have no stages; they loop by design
over their cooperative copies and over the rows of their filter taps, each
row unrolled (unrolled whole, ptxas kept too much live and spilled,
templates/conv2d_nchw_stem.cu.mustache): in a kernel named with
--designed-loops only local memory is an error. Any other loop is.

    scripts/check_sass.py LIBRARY.a... [--designed-loops KERNEL...] [--cuobjdump PATH]

Prints one line per kernel and a summary; exits 1 if any kernel fails.
"""
import argparse
import re
import subprocess
import sys

FUNCTION = re.compile(r"^\s*Function : (\S+)")
INSTRUCTION = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?);")
BRANCH = re.compile(r"\b(BRA|BRX|JMP)\b[^;]*?0x([0-9a-f]+)")
# Instructions that read or write memory (global, shared, local, constant
# loads aside: those are parameters), or wait for such copies.
MEMORY = re.compile(r"\b(LD|LDG|LDS|LDL|LDSM|ST|STG|STS|STL|LDGSTS|ATOM|ATOMS|RED|LDGDEPBAR)\b")


def kernels(sass):
    """Yields (name, [(address, text)]) per function."""
    name, body = None, []
    for line in sass.splitlines():
        m = FUNCTION.match(line)
        if m:
            if name:
                yield name, body
            name, body = m.group(1), []
            continue
        m = INSTRUCTION.search(line)
        if m and name:
            body.append((int(m.group(1), 16), m.group(2).strip()))
    if name:
        yield name, body


def problems(body, designed_loops=False):
    found = []
    for address, text in body:
        if re.search(r"\b(LDL|STL)\b", text):
            found.append("local memory at 0x%x: %s" % (address, text))
        m = BRANCH.search(text)
        # A branch to itself closes every kernel (the trap after EXIT): not a loop.
        if m and int(m.group(2), 16) < address:
            target = int(m.group(2), 16)
            loop = [t for a, t in body if target <= a <= address]
            synchronized = any(re.search(r"\b(BAR|SYNCS|DEPBAR)\b", t) for t in loop)
            touches_memory = any(MEMORY.search(t) for t in loop)
            if not synchronized and touches_memory and not designed_loops:
                opcodes = sorted({t.split()[0] if not t.startswith("@") else t.split()[1] for t in loop})
                found.append("backward branch (loop) at 0x%x: %s; the loop's opcodes: %s"
                             % (address, text, " ".join(opcodes)))
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("libraries", nargs="+")
    parser.add_argument("--designed-loops", nargs="*", default=[], metavar="KERNEL",
                        help="kernels (their generated names) whose loops are by design (the stem algorithm's)")
    parser.add_argument("--cuobjdump", default="cuobjdump")
    args = parser.parse_args()
    checked, failed = 0, 0
    for library in args.libraries:
        sass = subprocess.run([args.cuobjdump, "-sass", library], check=True, capture_output=True,
                              text=True).stdout
        for name, body in kernels(sass):
            if not body:
                continue
            checked += 1
            found = problems(body, any(k in name for k in args.designed_loops))
            failed += bool(found)
            print("%-4s %s (%d instructions)" % ("FAIL" if found else "ok", name, len(body)))
            for p in found[:5]:
                print("       " + p)
    print("%d kernels checked, %d with local memory or loops" % (checked, failed))
    return 1 if failed or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
