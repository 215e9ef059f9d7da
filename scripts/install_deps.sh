#!/usr/bin/env bash
# Installs the Debian packages convgen builds with, where missing. The CUDA
# toolkit (nvcc 12 or later) must already be installed and on PATH.
set -euo pipefail
packages=(cmake g++ ninja-build python3 libyaml-cpp-dev libkainjow-mustache-dev libcli11-dev
          nlohmann-json3-dev libgtest-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}"
fi
if ! command -v nvcc >/dev/null 2>&1; then
  for dir in /usr/local/cuda/bin /usr/local/cuda-*/bin; do
    [ -x "$dir/nvcc" ] && { echo "nvcc is in $dir: add it to PATH"; break; }
  done
  echo "error: nvcc not found; install the CUDA toolkit (12 or later)" >&2
  exit 1
fi
