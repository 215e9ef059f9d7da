#!/usr/bin/env bash
# Installs the Debian packages convgen builds with, where missing. The CUDA
# toolkit (nvcc 12 or later) must already be installed and on PATH.
#   scripts/install_deps.sh   (no arguments)
set -euo pipefail
case "${1:-}" in
  "") ;;
  -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "scripts/install_deps.sh: takes no arguments, got '$1' (--help says what it does)" >&2; exit 2 ;;
esac
packages=(cmake g++ ninja-build python3 libyaml-cpp-dev libkainjow-mustache-dev libcli11-dev
          nlohmann-json3-dev libgtest-dev libssl-dev python3-yaml)
sudo_cmd=""
[ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}"
fi
# pip_install ARGS...: python3's pip, quietly, into a system Python too
# (PEP 668's marker refuses that unless told, where pip knows the flag).
pip_install() {
  local flags=()
  python3 -m pip install --help 2>/dev/null | grep -q -- --break-system-packages && flags+=(--break-system-packages)
  python3 -m pip install -q "${flags[@]}" "$@"
}
# The onnx package, for tools/spec_from_model.py and its tests: from Debian
# for the system's python3 (pip may not install there), else from PyPI.
if ! python3 -c "import onnx" >/dev/null 2>&1; then
  echo "installing the onnx Python package"
  if [ "$(command -v python3)" = /usr/bin/python3 ]; then
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq python3-onnx
  else
    pip_install onnx
  fi
fi
# dask.distributed, for tools/tune_cluster.py (tuning on a cluster) and its
# test: pinned, from PyPI (pure Python; Debian's is three years older).
dask_version=2025.11.0
if ! python3 -c "import distributed, sys; sys.exit(distributed.__version__ != '$dask_version')" >/dev/null 2>&1; then
  echo "installing dask.distributed $dask_version"
  pip_install "dask==$dask_version" "distributed==$dask_version"
fi
# CUTLASS's headers (the nvidia-cutlass wheel carries them), for the
# tensor-core kernels of the implicit_gemm algorithm: pinned, since a
# kernel's main loop is CUTLASS's template and its tests vouch for this one
# (the version is cmake/Convgen.cmake's, which checks the headers a build takes).
cutlass_version=$(sed -n 's/^set(CONVGEN_CUTLASS_VERSION \([0-9.]*\))$/\1/p' "$(dirname "$0")/../cmake/Convgen.cmake")
[ -n "$cutlass_version" ] || { echo "cmake/Convgen.cmake sets no CONVGEN_CUTLASS_VERSION" >&2; exit 1; }
if ! python3 -c "import importlib.metadata as m, sys; sys.exit(m.version('nvidia-cutlass') != '$cutlass_version')" >/dev/null 2>&1; then
  echo "installing the CUTLASS headers (nvidia-cutlass $cutlass_version)"
  pip_install --no-deps "nvidia-cutlass==$cutlass_version"
fi
# cuobjdump and the nvdisasm it runs, for scripts/check_sass.py (the machine
# code of every kernel for every arch, in the arch_matrix test), where the
# CUDA toolkit at hand has none: pinned, from their PyPI wheels. A newer
# disassembler reads the code of an older nvcc.
cuda_binutils_version=13.5.37
if ! python3 "$(dirname "$0")/check_sass.py" --which >/dev/null 2>&1; then
  echo "installing cuobjdump and nvdisasm (nvidia-cuda-cuobjdump, nvidia-cuda-nvdisasm $cuda_binutils_version)"
  pip_install --no-deps "nvidia-cuda-cuobjdump==$cuda_binutils_version" \
    "nvidia-cuda-nvdisasm==$cuda_binutils_version"
fi
if ! command -v nvcc >/dev/null 2>&1; then
  for dir in /usr/local/cuda/bin /usr/local/cuda-*/bin; do
    [ -x "$dir/nvcc" ] && { echo "nvcc is in $dir: add it to PATH"; break; }
  done
  echo "error: nvcc not found; install the CUDA toolkit (12 or later)" >&2
  exit 1
fi
