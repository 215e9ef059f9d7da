#!/usr/bin/env bash
# arch_matrix: every algorithm builds for every GPU architecture the local
# nvcc lists, from convgen's oldest (`convgen archs`) up. Needs nvcc, no GPU.
#
#   arch_matrix.sh CONVGEN NVCC TEMPLATES SCRATCH_DIR
#
# Generates tests/arch/arch_matrix.yaml (one kernel per algorithm and per
# branch of convgen/shared_copy.h) for the whole list, so its schedules fit
# the tightest GPU of it; checks that the kernels take every copy branch;
# then compiles the kernels, a few to a translation unit, one nvcc call
# each (a unit with a diagnostic again a kernel at a time): the front end once for the
# archs below sm_80 and once for sm_80 and up (the sources branch on the
# arch in one place, convgen/shared_copy.h's cp.async guard; the test fails
# if another guard appears), and ptxas for every arch. Any error or warning
# (e.g. ptxas ignoring launch bounds a GPU cannot honour) fails the test.
# Then scripts/check_sass.py reads the machine code of every kernel for
# every arch: local memory or a loop over taps fails the test.
# Prints the matrix: archs, kernels, seconds.
set -uo pipefail
if (( $# != 4 )); then
  sed -n '2,/^set -u/p' "$0" | sed '$d'
  exit 2
fi
convgen=$1 nvcc=$2 templates=$3 scratch=$4
here=$(cd "$(dirname "$0")" && pwd)
runtime_include=$(cd "$here/../../runtime/include" && pwd)
fail() { echo "FAIL: $*" >&2; exit 1; }

oldest=$("$convgen" archs --format json | sed -n 's/^ *"min_arch": *\([0-9]*\).*/\1/p')
[[ -n $oldest ]] || fail "convgen archs --format json names no min_arch"
archs=()
for a in $("$nvcc" --list-gpu-arch); do
  n=${a#compute_}
  [[ $n =~ ^[0-9]+$ ]] && (( n >= oldest )) && archs+=("$n")
done
(( ${#archs[@]} > 0 )) || fail "nvcc lists no architecture at or above sm_$oldest"
list=$(IFS=,; echo "${archs[*]}")

rm -rf "$scratch"
mkdir -p "$scratch"
"$convgen" generate "$here/arch_matrix.yaml" --archs "$list" --templates "$templates" --out "$scratch" -q ||
  fail "convgen generate failed"
kernels=("$scratch"/dw_*.cu "$scratch"/conv_*.cu)
(( ${#kernels[@]} >= 23 )) || fail "expected 23 kernels in $scratch, found ${#kernels[@]}"

# The spec must keep reaching every copy branch the arch guard touches.
for call in 'copy_to_shared_16(dst, src, inside, policy)' 'copy_to_shared_16(dst, src, inside)' \
            'copy_to_shared_4(dst, src, inside, policy)' 'copy_to_shared_4(dst, src, inside)' \
            'copy_to_shared_8(dst, src, inside)' 'copy_to_shared_2(dst, src, inside, policy)' \
            'copy_to_shared_16(&x_s' 'copy_to_shared_4(&in_s' 'commit_copies()' 'wait_copies<1>()'; do
  grep -qF "$call" "${kernels[@]}" || fail "no kernel of arch_matrix.yaml calls $call: add a workload that does"
done

# The kernels' sources see the arch only through convgen/shared_copy.h's
# cp.async guard (__CUDA_ARCH__ >= 800), so one front end for each side of
# it makes the PTX every arch of that side gets; ptxas then runs for each
# arch (arch=compute_80,code=[sm_80,sm_86,...]). A new guard needs its own
# front end here.
guards=$(grep -rhoE '__CUDA_ARCH__ *[<>=!]+ *[0-9]+' "$runtime_include" "$templates" | tr -d ' ' | sort -u)
[[ "$guards" == "__CUDA_ARCH__>=800" ]] ||
  fail "the sources branch on the arch other than at sm_80 ($(echo $guards)): give each side its own front end"
gencode=()
front_ends=0
for side in below at_or_above; do
  first="" codes=""
  for a in $(printf '%s\n' "${archs[@]}" | sort -n); do
    if [[ $side == below ]] && (( a >= 80 )); then continue; fi
    if [[ $side == at_or_above ]] && (( a < 80 )); then continue; fi
    first=${first:-$a}
    codes+="${codes:+,}sm_$a"
  done
  [[ -n $first ]] || continue
  gencode+=(-gencode "arch=compute_$first,code=[$codes]")
  front_ends=$((front_ends + 1))
done
compile() {  # compile SOURCE: one fat binary for every arch; any diagnostic fails
  local k=$1 log=$scratch/$(basename "$1" .cu).log
  if ! "$nvcc" -fatbin -std=c++17 -I"$runtime_include" "${gencode[@]}" -o "${k%.cu}.fatbin" "$k" >"$log" 2>&1 ||
     [[ -s $log ]]; then
    echo "FAIL: $(basename "$k"):"
    sed 's/^/  | /' "$log"
    return 1
  fi
  echo "ok   $(basename "$k")"
}
export -f compile
export nvcc runtime_include scratch
export gencode_text="${gencode[*]}"
start=$SECONDS
jobs=$(nproc 2>/dev/null || echo 2)
# The kernels compile in `jobs` batches, one translation unit each
# (tests/kernel_batches.sh). A batch with a diagnostic compiles again a
# kernel at a time, so that the failure names the kernel.
source "$here/../kernel_batches.sh"
mapfile -t batch_files < <(write_kernel_batches "$scratch" "$jobs" "${kernels[@]}")
batches=${#batch_files[@]}
failed=0
results=$(printf '%s\n' "${batch_files[@]}" | xargs -P "$jobs" -I{} bash -c 'set -f; gencode=($gencode_text); compile "$@"' _ {})
for ((b = 0; b < batches; b++)); do
  if grep -q "^ok   batch_$b.cu$" <<<"$results"; then
    for ((i = b; i < ${#kernels[@]}; i += batches)); do echo "ok   $(basename "${kernels[$i]}")"; done
  else
    rm -f "$scratch/batch_$b.fatbin"  # its kernels' code comes from their own fat binaries
    for ((i = b; i < ${#kernels[@]}; i += batches)); do
      (set -f; gencode=($gencode_text); compile "${kernels[$i]}") || failed=1
    done
  fi
done
echo "arch matrix: ${#kernels[@]} kernels x ${#archs[@]} archs (${list//,/ }; ${front_ends} front ends) in $((SECONDS - start)) s"
(( failed == 0 )) || fail "some kernels do not build for every arch (above)"

# Their machine code for every arch: no local memory, and no loop but a
# stage loop (the stem kernels' loops are by design), with every kernel
# disassembled for every arch.
start=$SECONDS
sass_log=$scratch/check_sass.log
python3 "$here/../../scripts/check_sass.py" "$scratch"/*.fatbin --sources "$scratch" >"$sass_log" 2>&1
sass_status=$?
grep -v '^ok ' "$sass_log"
(( sass_status == 0 )) || fail "check_sass.py exited $sass_status (above)"
checked=$(sed -n 's/^\([0-9]*\) kernels checked.*/\1/p' "$sass_log")
(( checked == ${#kernels[@]} * ${#archs[@]} )) ||
  fail "check_sass.py read $checked kernels' code, not ${#kernels[@]} kernels x ${#archs[@]} archs"
echo "machine code: $checked kernels' code checked in $((SECONDS - start)) s"
rm -rf "$scratch"
echo "PASS"
