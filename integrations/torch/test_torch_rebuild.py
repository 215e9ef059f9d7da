#!/usr/bin/env python3
"""convgen_torch.load() after a schedule-only rebuild runs the new kernel;
and load() over a library built against an installed convgen.

  test_torch_rebuild.py SOURCE_DIR SCRATCH_DIR CMAKE CUDA_COMPILER CXX_COMPILER CONVGEN [BUILD_DIR]
                                               (exits 77, skipped, without torch or a GPU)

Builds a one-kernel library `rebuilt` (a depthwise layer with a `rows`
schedule) in a scratch CMake project, and in a fresh Python process loads it
with convgen_torch.load(), checks the result against ATen and reads which
kernel serves the call and its schedule
(torch.ops.convgen.explain_depthwise_conv2d: the KernelChoice, and the
schedule the linked archive's registry holds). Then changes only the
schedule in the spec and rebuilds: the library's header is byte for byte
the same, its archive is not. load() in a new process must link the new
archive: the explanation names the new schedule, and the extension's name
differs. A loader that keeps the extension it built before (torch's
cpp_extension tracks its sources and flags, not the archives it links)
reports the old schedule, and the test fails. With BUILD_DIR (convgen's
build), a third round installs it to a prefix, builds the same library in a
project that finds convgen with find_package (its build folder holds no
runtime archive), and loads it with load(..., prefix=PREFIX): the runtime
and its headers come from the installed convgen. SCRATCH_DIR is removed at
the end (kept when CONVGEN_KEEP_SCRATCH=1).
"""
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LIBRARY = "rebuilt"
# Two schedules of one kernel that differ in every knob, and a problem only
# that kernel serves (batch 2 of a kernel made for a runtime batch).
SCHEDULES = ("rows: rows_per_thread 1, vector_width 1, threads_per_block 64",
             "rows: rows_per_thread 2, vector_width 2, threads_per_block 128")
SPEC = """library: {library}
workloads:
  - {{n: runtime, c: 32, h: 28, w: 28, filter: 3, padding: same, epilogue: scale_shift, activation: relu6,
     schedule: {{algorithm: rows, {knobs}}}}}
"""
PROJECT = """cmake_minimum_required(VERSION 3.22)
project(convgen_torch_rebuild LANGUAGES CXX CUDA)
# convgen_torch.load() finds the archives at the top of the build folder.
set(CMAKE_ARCHIVE_OUTPUT_DIRECTORY "${{CMAKE_BINARY_DIR}}")
add_subdirectory("{source}" convgen)
set(CONVGEN_EXECUTABLE "{convgen}")
convgen_add_library(convgen_{library} SPECS rebuilt.yaml NAME {library} ARCHS native)
"""
INSTALLED_PROJECT = """cmake_minimum_required(VERSION 3.22)
project(convgen_torch_installed LANGUAGES CXX CUDA)
set(CMAKE_ARCHIVE_OUTPUT_DIRECTORY "${{CMAKE_BINARY_DIR}}")
find_package(convgen CONFIG REQUIRED)
convgen_add_library(convgen_{library} SPECS rebuilt.yaml NAME {library} ARCHS native)
"""
# Run in a fresh process each time: torch registers the operators once per process.
PROBE = """
import sys, torch, torch.nn.functional as F
sys.path.insert(0, {here!r})
import convgen_torch
print("extension", convgen_torch.load({build!r}, {library!r}, prefix={prefix!r}))
g = torch.Generator(device="cuda").manual_seed(7)
x = torch.randn(2, 32, 28, 28, device="cuda", generator=g)
w = torch.randn(32, 1, 3, 3, device="cuda", generator=g)
scale, shift = torch.randn(32, device="cuda", generator=g), torch.randn(32, device="cuda", generator=g)
args = (x, w, None, scale, shift, [1, 1], [1, 1, 1, 1], [1, 1], "relu6")
print("explain", torch.ops.convgen.explain_depthwise_conv2d(*args))
y = torch.ops.convgen.depthwise_conv2d(*args)
want = F.relu6(F.conv2d(x, w, None, 1, 1, 1, 32) * scale.view(1, -1, 1, 1) + shift.view(1, -1, 1, 1))
print("error", ((y - want).abs().max() / want.abs().max()).item())
print("fallbacks", torch.ops.convgen.fallbacks())
"""


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def run(command, log):
    with open(log, "w") as out:
        if subprocess.run(command, stdout=out, stderr=subprocess.STDOUT).returncode != 0:
            fail(f"{' '.join(command)} failed:\n{open(log).read()[-4000:]}")


def knobs(summary):
    """"rows: rows_per_thread 1, vector_width 1, ..." as the spec's keys."""
    return ", ".join(": ".join(kv.split(" ")) for kv in summary.split(": ", 1)[1].split(", "))


def probe(build, scratch, round_, prefix=None):
    script = os.path.join(scratch, f"probe{round_}.py")
    with open(script, "w") as f:
        f.write(PROBE.format(here=HERE, build=build, library=LIBRARY, prefix=prefix))
    result = subprocess.run([sys.executable, script], capture_output=True, text=True)
    if result.returncode != 0:
        fail(f"loading the library failed:\n{result.stdout}\n{result.stderr[-4000:]}")
    lines = dict(line.split(" ", 1) for line in result.stdout.splitlines() if " " in line)
    print(f"round {round_}: extension {lines['extension']}; {lines['explain']}; max error {lines['error']}")
    if float(lines["error"]) > 1e-5:
        fail(f"round {round_}: the result differs from ATen's by {lines['error']}")
    if lines["fallbacks"] != "0":
        fail(f"round {round_}: the call ran on ATen, not on the library's kernel")
    return lines


def installed(scratch, cmake, cuda, cxx, convgen_build, spec):
    """Round 3: the library of a find_package project, loaded with the installed runtime."""
    prefix, app, build = (os.path.join(scratch, d) for d in ("prefix", "installed_app", "installed_build"))
    run([cmake, "--install", convgen_build, "--prefix", prefix], os.path.join(scratch, "install.log"))
    os.makedirs(app)
    shutil.copy(spec, os.path.join(app, "rebuilt.yaml"))
    with open(os.path.join(app, "CMakeLists.txt"), "w") as f:
        f.write(INSTALLED_PROJECT.format(library=LIBRARY))
    run([cmake, "-S", app, "-B", build, f"-DCMAKE_CUDA_COMPILER={cuda}", f"-DCMAKE_CXX_COMPILER={cxx}",
         "-DCMAKE_BUILD_TYPE=Release", f"-DCMAKE_PREFIX_PATH={prefix}"], os.path.join(scratch, "configure2.log"))
    run([cmake, "--build", build, "--target", f"convgen_{LIBRARY}"], os.path.join(scratch, "build2.log"))
    if os.path.exists(os.path.join(build, "libconvgen_runtime.a")):
        fail("the find_package project built a runtime archive of its own: the test wants the installed one")
    lines = probe(build, scratch, 2, prefix=prefix)
    if not lines["explain"].startswith("dw_"):
        fail(f"the installed round's call is not served by the library: {lines['explain']}")
    print("PASS: load() over a find_package project took the installed convgen's runtime")


def main():
    if len(sys.argv) not in (7, 8):
        print(__doc__)
        sys.exit(2)
    # The probes need torch and a GPU; this process needs neither.
    ready = subprocess.run([sys.executable, "-c", "import torch; print(torch.cuda.is_available())"],
                           capture_output=True, text=True)
    if ready.stdout.strip() != "True":
        print(f"SKIPPED: needs torch and a CUDA device ({(ready.stderr.strip().splitlines() or ['no device'])[-1]})")
        sys.exit(77)
    source, scratch, cmake, cuda, cxx, convgen = sys.argv[1:7]
    convgen_build = sys.argv[7] if len(sys.argv) == 8 else None
    shutil.rmtree(scratch, ignore_errors=True)
    app, build = os.path.join(scratch, "app"), os.path.join(scratch, "build")
    os.makedirs(app)
    with open(os.path.join(app, "CMakeLists.txt"), "w") as f:
        f.write(PROJECT.format(source=source, convgen=convgen, library=LIBRARY))
    spec = os.path.join(app, "rebuilt.yaml")
    header = os.path.join(build, f"convgen_{LIBRARY}.convgen", f"{LIBRARY}.h")
    archive = os.path.join(build, f"libconvgen_{LIBRARY}.a")
    seen = []
    for round_, schedule in enumerate(SCHEDULES):
        with open(spec, "w") as f:
            f.write(SPEC.format(library=LIBRARY, knobs=knobs(schedule)))
        if round_ == 0:
            run([cmake, "-S", app, "-B", build, f"-DCMAKE_CUDA_COMPILER={cuda}", f"-DCMAKE_CXX_COMPILER={cxx}",
                 "-DCMAKE_BUILD_TYPE=Release", f"-DCONVGEN_HOST_EXECUTABLE={convgen}"],
                os.path.join(scratch, "configure.log"))
        run([cmake, "--build", build, "--target", f"convgen_{LIBRARY}", "convgen_runtime"],
            os.path.join(scratch, f"build{round_}.log"))
        seen.append({"header": open(header, "rb").read(), "archive": open(archive, "rb").read(),
                     **probe(build, scratch, round_)})
        if not seen[-1]["explain"].endswith(": " + schedule):
            fail(f"round {round_}: the kernel that serves the call has schedule "
                 f"'{seen[-1]['explain'].split(': ', 1)[-1]}', the spec says '{schedule}'")
    first, second = seen
    if first["header"] != second["header"]:
        fail("the schedule change changed the library's header: the test wants a rebuild that leaves it")
    if first["archive"] == second["archive"]:
        fail("the schedule change left the archive as it was")
    if first["extension"] == second["extension"]:
        fail("load() gave the rebuilt archive the extension of the first build")
    print("PASS: after a schedule-only rebuild, load() linked the new archive and ran the new kernel")
    if convgen_build:
        installed(scratch, cmake, cuda, cxx, convgen_build, spec)
    if os.environ.get("CONVGEN_KEEP_SCRATCH") != "1":
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
