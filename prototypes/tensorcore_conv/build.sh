#!/usr/bin/env bash
# Builds tc_conv (sm_90a, cudart linked statically) against the CUTLASS headers.
# CUTLASS_ROOT: the CUTLASS source root, the folder holding include/ and
# tools/util/include/; by default that of the installed PyPI wheel
# (pip install nvidia-cutlass==4.2.0.0: <site-packages>/cutlass_library/source).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [[ -z "${CUTLASS_ROOT:-}" ]]; then
  CUTLASS_ROOT=$(python3 -c 'import cutlass_library, os; print(os.path.join(os.path.dirname(cutlass_library.__file__), "source"))' 2>/dev/null) || {
    echo "no CUTLASS: pip install nvidia-cutlass==4.2.0.0, or set CUTLASS_ROOT" >&2
    exit 1
  }
fi

if [[ ! -f "$CUTLASS_ROOT/include/cutlass/cutlass.h" ]]; then
  echo "CUTLASS headers not found under $CUTLASS_ROOT/include (set CUTLASS_ROOT)" >&2
  exit 1
fi

# sm_90a (not sm_90) enables the wgmma and TMA instructions of the 3.x kernels.
# NDEBUG drops CUTLASS's device-side asserts, as in its release builds.
nvcc -O3 -std=c++17 -arch=sm_90a --expt-relaxed-constexpr -DNDEBUG \
  -I"$CUTLASS_ROOT/include" -I"$CUTLASS_ROOT/tools/util/include" \
  -o "$here/tc_conv" "$here/tc_conv.cu"
