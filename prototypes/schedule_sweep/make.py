#!/usr/bin/env python3
# Writes one spec per schedule variant index (library v<i> holds the i-th variant of every row of
# $ROWS: rows1.py to rows33.py), CMakeLists.txt and main.cu, which times each variant beside the default's output.
# A rows module's DTYPE ("float16", the default, or "bfloat16", in NHWC; or "float32", in NCHW) is every row's; its TEMPLATES
# ({variant index: folder}, optional) generates that variant's library from other templates. LAYOUT (optional)
# overrides the layout, MATH (optional: "tf32", "3xtf32") a float32 row's math. A row's act is "plain", "bias"
# (the bias epilogue, no activation) or an activation after scale/shift; a tenth field, when present, is the
# row's padding (else (k - 1) / 2 on every side).
import importlib
import os

rows = importlib.import_module(os.environ.get("ROWS", "rows1"))
R = rows.R
DTYPE = getattr(rows, "DTYPE", "float16")
LAYOUT = getattr(rows, "LAYOUT", "NCHW" if DTYPE == "float32" else "NHWC")
MATH = getattr(rows, "MATH", None)
TEMPLATES = getattr(rows, "TEMPLATES", {})  # variant index: the templates folder its library is generated from
nlib = max(len(r[8]) for r in R)


def epilogue(act):
    """A row's epilogue: scale/shift and the activation, or none for a row whose act is "plain"."""
    if act == "plain":
        return "epilogue: none, activation: none"
    return "epilogue: bias, activation: none" if act == "bias" else f"epilogue: scale_shift, activation: {act}"


def pad(row):
    """A row's padding: its tenth field, or (k - 1) / 2."""
    return row[9] if len(row) > 9 else (row[5] - 1) // 2


cm = ["cmake_minimum_required(VERSION 3.22)", "project(sweep LANGUAGES CXX CUDA)", "find_package(convgen REQUIRED)"]
for i in range(nlib):
    math = f", math: {MATH}" if MATH else ""
    lines = [f"library: v{i}", f"defaults: {{dtype: {DTYPE}, layout: {LAYOUT}{math}}}", "workloads:"]
    for row in R:
        (name, n, c, co, h, k, s, act, vs) = row[:9]
        if i >= len(vs):
            continue
        sch = "" if vs[i] is None else f", schedule: {{{vs[i]}}}"
        lines.append(f"  - {{op: conv2d, n: {n}, c: {c}, c_out: {co}, h: {h}, w: {h}, filter: {k}, stride: {s}, "
                     f"padding: {pad(row)}, {epilogue(act)}{sch}}}  # {name}")
    open(f"v{i}.yaml", "w").write("\n".join(lines) + "\n")
    add = f"convgen_add_library(convgen_v{i} SPECS ${{CMAKE_CURRENT_SOURCE_DIR}}/v{i}.yaml)"
    if i in TEMPLATES:  # this variant's kernels from other templates (an A/B of a template change)
        add = (f"set(kept_templates ${{CONVGEN_TEMPLATE_DIR}})\nset(CONVGEN_TEMPLATE_DIR {TEMPLATES[i]})\n{add}\n"
               "set(CONVGEN_TEMPLATE_DIR ${kept_templates})")
    cm.append(add)
cm.append("add_executable(sweep main.cu)")
cm.append("target_link_libraries(sweep PRIVATE " + " ".join(f"convgen_v{i}" for i in range(nlib)) + ")")
open("CMakeLists.txt", "w").write("\n".join(cm) + "\n")
inc = "\n".join(f'#include "v{i}.h"' for i in range(nlib))
calls = ",\n".join(f"  [](const convgen::Conv2dProblem& p, const convgen::Conv2dArgs& a, cudaStream_t s) {{ return convgen::v{i}::conv2d(p, a, s, convgen::Dispatch::kStrict); }}" for i in range(nlib))
def label(i, variant):
    return (variant or "default") + (f" [templates {TEMPLATES[i]}]" if i in TEMPLATES else "")


ws = ",\n".join(f'  {{"{r[0]}", {r[1]}, {r[2]}, {r[3]}, {r[4]}, {r[5]}, {r[6]}, {pad(r)}, convgen::Activation::k{"None" if r[7] in ("plain", "bias") else r[7].capitalize()}, {str(r[7] == "plain").lower()}, {str(r[7] == "bias").lower()}, {len(r[8])}, {{{", ".join(chr(34) + label(i, v) + chr(34) for i, v in enumerate(r[8]))}}}}}' for r in R)
elem = {"float16": ("__half", "kFloat16"), "bfloat16": ("__nv_bfloat16", "kBFloat16"), "float32": ("float", "kFloat32")}[DTYPE]
math = {None: "kFloat32", "tf32": "kTF32", "3xtf32": "k3xTF32"}[MATH]
src = open("main.cu.in").read().replace("@ELEM@", elem[0]).replace("@DTYPE@", elem[1]).replace("@LAYOUT@", "k" + LAYOUT)
src = src.replace("@MATH@", math)
src = src.replace("@INCLUDES@", inc).replace("@CALLS@", calls).replace("@WORKLOADS@", ws)
open("main.cu", "w").write(src)
