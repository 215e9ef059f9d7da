#!/usr/bin/env bash
# golden_generated_fresh: generated/ must be what the shipped specs (and
# tests/gpu/tensor_core.yaml, the tensor-core kernels on show) produce with
# the current generator and templates.
#
#   golden_fresh.sh SOURCE_DIR CONVGEN SCRATCH_DIR
#
# Regenerates each spec into SCRATCH_DIR/<lib> (run from SOURCE_DIR,
# since the paths written into the files are relative to it) and compares
# with generated/<lib>: any differing, missing or extra file fails (the lock
# file every run leaves, .convgen.lock, is not compared).
set -u
export LC_ALL=C
if [[ $# -lt 3 ]]; then
  sed -n '2,/^set -u/p' "$0" | sed '$d'
  exit 2
fi
src=$1 convgen=$2 scratch=$3
cleanup() {
  if [[ "${CONVGEN_KEEP_SCRATCH:-0}" == 1 ]]; then
    echo "scratch kept: $scratch"
  else
    rm -rf "$scratch"
  fi
}
rm -rf "$scratch"
mkdir -p "$scratch"
trap cleanup EXIT
cd "$src" || exit 1

stale=0
# spec:library[:archs] (the tensor-core kernels as made for the H100).
for entry in specs/seeds.yaml:seeds specs/mobilenet_v2.yaml:mobilenet_v2 tests/gpu/tensor_core.yaml:tensor_core:90; do
  IFS=: read -r spec lib archs <<<"$entry"
  if ! "$convgen" generate "$spec" ${archs:+--archs "$archs"} --templates "$src/templates" --out "$scratch/$lib" -q; then
    echo "FAIL: convgen generate $spec failed"
    exit 1
  fi
  if [[ ! -d "generated/$lib" ]]; then
    echo "generated/$lib: missing"
    stale=1
    continue
  fi
  differ=() missing=() extra=()
  while IFS= read -r f; do
    if [[ ! -f "generated/$lib/$f" ]]; then
      missing+=("$f")
    elif ! cmp -s "$scratch/$lib/$f" "generated/$lib/$f"; then
      differ+=("$f")
    fi
  done < <(cd "$scratch/$lib" && find . -type f ! -name .convgen.lock | sed 's|^\./||' | sort)
  while IFS= read -r f; do
    [[ -f "$scratch/$lib/$f" ]] || extra+=("$f")
  done < <(cd "generated/$lib" && find . -type f ! -name .convgen.lock | sed 's|^\./||' | sort)
  n=$(find "$scratch/$lib" -type f ! -name .convgen.lock | wc -l)
  if [[ ${#differ[@]} -eq 0 && ${#missing[@]} -eq 0 && ${#extra[@]} -eq 0 ]]; then
    echo "generated/$lib: fresh ($n files)"
    continue
  fi
  stale=1
  echo "generated/$lib: STALE (${#differ[@]} differ, ${#missing[@]} missing, ${#extra[@]} extra, of $n generated)"
  for f in "${differ[@]}"; do
    echo "  differs: $f ($(diff "generated/$lib/$f" "$scratch/$lib/$f" | grep -c '^[<>]') lines changed)"
  done
  for f in "${missing[@]}"; do echo "  missing from generated/$lib: $f"; done
  for f in "${extra[@]}"; do echo "  extra in generated/$lib (the spec no longer makes it): $f"; done
  if [[ ${#differ[@]} -gt 0 ]]; then
    echo "  first difference (generated/$lib/${differ[0]} -> fresh output):"
    diff -u "generated/$lib/${differ[0]}" "$scratch/$lib/${differ[0]}" | sed -n '3,30p' | sed 's/^/    /'
  fi
done

if [[ $stale -ne 0 ]]; then
  echo
  echo "FAIL: generated/ is stale; run \`cmake --build build --target refresh_generated\` and commit generated/"
  exit 1
fi
echo "PASS: generated/ matches the shipped specs"
