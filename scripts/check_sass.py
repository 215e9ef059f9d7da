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
--designed-loops, or found a stem kernel among the generated sources of
--sources, only local memory is an error. Any other loop is.

    scripts/check_sass.py BINARY... [--sources DIR...] [--designed-loops KERNEL...] [--cuobjdump PATH]
    scripts/check_sass.py --which

BINARY is anything cuobjdump reads: a static library, an object, a cubin or
a fat binary (every architecture it holds is checked). cuobjdump (and the
nvdisasm it runs) is looked for on PATH, beside nvcc, then in the
nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm wheels that
scripts/install_deps.sh installs; --which prints the two found, or exits 2.

Prints one line per kernel and a summary; exits 1 if any kernel fails, 2
when cuobjdump or nvdisasm is not found.
"""
import argparse
import glob
import importlib.util
import os
import re
import shutil
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


def find_tool(name):
    """The CUDA binary utility `name`: on PATH, beside nvcc, or from its pip
    wheel (nvidia/cu*/bin in site-packages, the newest first); None if none."""
    found = shutil.which(name)
    if found:
        return found
    nvcc = shutil.which("nvcc")
    if nvcc and os.access(os.path.join(os.path.dirname(nvcc), name), os.X_OK):
        return os.path.join(os.path.dirname(nvcc), name)
    spec = importlib.util.find_spec("nvidia")
    for root in (spec.submodule_search_locations or []) if spec else []:
        for candidate in sorted(glob.glob(os.path.join(root, "cu*", "bin", name)), reverse=True):
            if os.access(candidate, os.X_OK):
                return candidate
    return None


# How the generated sources name a stem kernel's schedule (its header's
# "// Schedule (origin): stem: ..." line).
STEM_SCHEDULE = re.compile(r"^// Schedule \(.*\): stem:", re.MULTILINE)


def stem_kernels(directories):
    """The names of the stem kernels among the generated sources (*.cu) of `directories`."""
    names = []
    for directory in directories:
        for path in sorted(glob.glob(os.path.join(directory, "conv_*.cu"))):
            with open(path, encoding="utf-8") as f:
                if STEM_SCHEDULE.search(f.read()):
                    names.append(os.path.splitext(os.path.basename(path))[0])
    return names


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binaries", nargs="*", metavar="BINARY",
                        help="static libraries, objects or executables with device code (cuobjdump reads them)")
    parser.add_argument("--sources", nargs="*", default=[], metavar="DIR",
                        help="folders of generated kernels: their stem kernels' loops are by design")
    parser.add_argument("--designed-loops", nargs="*", default=[], metavar="KERNEL",
                        help="kernels (their generated names) whose loops are by design (the stem algorithm's)")
    parser.add_argument("--cuobjdump", help="cuobjdump to run (default: on PATH, beside nvcc, or from its pip wheel)")
    parser.add_argument("--which", action="store_true", help="print the cuobjdump and nvdisasm found, and exit")
    args = parser.parse_args()
    # cuobjdump -sass runs nvdisasm, from PATH: both are needed.
    tools = {"cuobjdump": args.cuobjdump or find_tool("cuobjdump"), "nvdisasm": find_tool("nvdisasm")}
    for name, path in tools.items():
        if path is None:
            print("check_sass: %s not found (on PATH, beside nvcc, or from the nvidia-cuda-%s wheel): install "
                  "the CUDA toolkit's, or run scripts/install_deps.sh" % (name, name), file=sys.stderr)
            return 2
    if args.which:
        print("\n".join(tools.values()))
        return 0
    if not args.binaries:
        parser.error("no BINARY to check")
    cuobjdump = tools["cuobjdump"]
    path = [os.path.dirname(tools["nvdisasm"])]
    env = dict(os.environ, PATH=os.pathsep.join(path + [os.environ.get("PATH", "")]))
    designed = args.designed_loops + stem_kernels(args.sources)
    checked, failed = 0, 0
    for binary in args.binaries:
        dump = subprocess.run([cuobjdump, "-sass", binary], capture_output=True, text=True, env=env)
        if dump.returncode != 0:
            print("check_sass: cuobjdump could not read %s (exit %d): %s" %
                  (binary, dump.returncode, dump.stderr.strip() or "no message"), file=sys.stderr)
            return 2
        sass = dump.stdout
        for name, body in kernels(sass):
            if not body:
                continue
            checked += 1
            found = problems(body, any(k in name for k in designed))
            failed += bool(found)
            print("%-4s %s (%d instructions)" % ("FAIL" if found else "ok", name, len(body)))
            for p in found[:5]:
                print("       " + p)
    print("%d kernels checked, %d with local memory or loops" % (checked, failed))
    return 1 if failed or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
