#!/usr/bin/env bash
# dwsweep.sh BUILD_DIR OUT_DIR VARIANT...: the depthwise benchmark on the rows
# of prototypes/depthwise_nhwc_sweep/rows.csv (DW_ROWS), once per VARIANT, each a build of
# convgen_bench_depthwise whose spec (bench/depthwise_bench.yaml, generated
# from those rows alone by bench/make_bench_spec.py) forces the variant's
# schedules (dwforce.py). VARIANT is "name|RULE|RULE...", dwforce.py's rules
# ("n,c,h,k,s[,dtype[,layout]]=SCHEDULE"; without dtype and layout a rule
# touches the float32 NHWC workloads only); "name" alone keeps the default rule.
#
# BUILD_DIR must be configured with -DCONVGEN_BUILD_BENCH=ON
# -DCONVGEN_BENCH_TUNING=OFF -DCONVGEN_BENCH_DENSE=OFF keep each rebuild to the one library).
# Per variant it writes to OUT_DIR:
#   NAME.yaml            the forced spec          NAME.schedules.txt  the schedule of each NHWC kernel (DW_DTYPE)
#   NAME.build.log       ninja's output           NAME.check.txt      dwcheck: each float32 NHWC kernel
#   NAME.json            the benchmark's JSON                          against the generic kernel
#   NAME.bench.log       the benchmark's output
# and prints each run's table and, at the end, the summary (dwtable.py). The
# benchmark runs without cuDNN (--no-cudnn; DW_CUDNN=1: with it, and then it
# checks every row's output against cuDNN's), under `timeout ${DW_TIMEOUT:-90}`,
# with --trials ${DW_TRIALS:-100} --hot-replays ${DW_REPLAYS:-20}.
# DW_DTYPE (float32, float16 or bfloat16; default float32): the dtype of the
# NHWC kernels listed, compiled in the dry run and summed up by dwtable.py.
# bench/depthwise_bench.yaml is put back as it was when the script ends.
#
# BUILD_DIR "--dry": no build, no GPU: each variant forced, checked (convgen check
# --archs 90) and listed with the generator $CONVGEN (default build/generator/convgen),
# and its float32 NHWC kernels compiled with nvcc -arch=sm_90 -cubin (registers,
# spills) when DW_NVCC=1.
# DW_DEADLINE (seconds since the script started, default none): variants not
# started by then are skipped (named in the output).
set -u
if [[ $# -lt 3 || "$1" == "-h" || "$1" == "--help" ]]; then
  sed -n '2,/^set/p' "$0" | sed 's/^# \{0,1\}//' | grep -v '^set'
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=$1 out=$2
shift 2
rows=${DW_ROWS:-$here/rows.csv}
trials=${DW_TRIALS:-100} replays=${DW_REPLAYS:-20} limit=${DW_TIMEOUT:-90}
deadline=${DW_DEADLINE:-0}
export DW_DTYPE=${DW_DTYPE:-float32}
case $DW_DTYPE in
  float32) short=f32 ;; float16) short=f16 ;; bfloat16) short=bf16 ;;
  *) echo "dwsweep.sh: DW_DTYPE must be float32, float16 or bfloat16, not '$DW_DTYPE'"; exit 2 ;;
esac
cudnn=--no-cudnn
[[ "${DW_CUDNN:-0}" == 1 ]] && cudnn=
spec=$repo/bench/depthwise_bench.yaml
t_start=$(date +%s)
mkdir -p "$out" || exit 1
out=$(cd "$out" && pwd)
python3 "$repo/bench/make_bench_spec.py" --csv "$rows" --out "$out/base.yaml" --no-dense || exit 1

dry=0
if [[ "$build" == "--dry" ]]; then
  dry=1
  gen=${CONVGEN:-$repo/build/generator/convgen}
else
  build=$(cd "$build" && pwd) || exit 1
  gen=$build/convgen-host/convgen  # the configure-time generator: there before the first build
  [[ -x "$gen" ]] || gen=$build/generator/convgen
  [[ -x "$gen" ]] || { echo "dwsweep.sh: no generator in $build (configure it first)"; exit 1; }
  # Put the committed spec back however the script ends.
  orig=$(mktemp)
  cp "$spec" "$orig"
  trap 'cmp -s "$orig" "$spec" || cp "$orig" "$spec"; rm -f "$orig"' EXIT
  # The checker: compiled once against the library's header (the same in every variant),
  # linked against each variant's library.
  checker_obj=$build/dwcheck.o
  nvcc=$(grep -m1 '^CMAKE_CUDA_COMPILER:' "$build/CMakeCache.txt" 2>/dev/null | cut -d= -f2)
  [[ -x "$nvcc" ]] || nvcc=nvcc
fi

status=0
names=()
for variant in "$@"; do
  IFS='|' read -r -a parts <<< "$variant"
  name=${parts[0]}
  if (( deadline > 0 && $(date +%s) - t_start > deadline )); then
    echo "== $name: SKIPPED (past DW_DEADLINE=${deadline}s)"
    status=1
    continue
  fi
  echo "== $name: $variant"
  if [[ ${#parts[@]} -gt 1 ]]; then
    if ! python3 "$here/dwforce.py" "$out/base.yaml" "$out/$name.yaml" "${parts[@]:1}" 2> "$out/$name.force.log"; then
      cat "$out/$name.force.log"
      status=1
      continue
    fi
  else
    cp "$out/base.yaml" "$out/$name.yaml"
  fi
  if ! "$gen" check "$out/$name.yaml" --templates "$repo/templates" --archs 90 > "$out/$name.check.log" 2>&1; then
    echo "invalid spec:"; tail -5 "$out/$name.check.log"
    status=1
    continue
  fi
  python3 "$here/dwlist.py" "$gen" "$out/$name.yaml" > "$out/$name.schedules.txt" || { status=1; continue; }
  if (( dry )); then
    grep -v "_ss\|_bias" "$out/$name.schedules.txt" | sed 's/^/  /'
    if [[ "${DW_NVCC:-0}" == 1 ]]; then
      rm -rf "$out/$name.gen"
      "$gen" generate "$out/$name.yaml" --templates "$repo/templates" --archs 90 -o "$out/$name.gen" -q || { status=1; continue; }
      for cu in "$out/$name.gen"/dw_${short}_nhwc_*.cu; do
        k=$(basename "$cu" .cu)
        info=$(nvcc -arch=sm_90 -cubin -O3 -std=c++17 -I"$repo/runtime/include" -I"$out/$name.gen" \
                 -o /dev/null "$cu" -Xptxas -v 2>&1) || { echo "  $k: nvcc FAILED"; echo "$info" | tail -5; status=1; continue; }
        regs=$(echo "$info" | grep -o "Used [0-9]* registers" | head -1)
        spill=$(echo "$info" | grep -o "[0-9]* bytes spill stores" | head -1)
        echo "  $k: $regs, $spill"
      done
    fi
    continue
  fi

  cmp -s "$out/$name.yaml" "$spec" || cp "$out/$name.yaml" "$spec"
  start=$(date +%s)
  if ! ninja -C "$build" convgen_bench_depthwise > "$out/$name.build.log" 2>&1; then
    tail -30 "$out/$name.build.log"
    status=1
    continue
  fi
  echo "built in $(( $(date +%s) - start )) s"
  # Each forced kernel against the generic kernel (the benchmark without cuDNN checks nothing).
  if [[ ! -f "$checker_obj" ]]; then
    "$nvcc" -std=c++17 -O2 -arch=sm_90 -c "$here/dwcheck.cu" -I"$repo/runtime/include" \
      -I"$build/bench/convgen_bench.convgen" -o "$checker_obj" > "$out/dwcheck.build.log" 2>&1 ||
      { tail -20 "$out/dwcheck.build.log"; rm -f "$checker_obj"; }
  fi
  if [[ -f "$checker_obj" ]] && "$nvcc" -arch=sm_90 "$checker_obj" "$build/bench/libconvgen_bench.a" \
       "$build/libconvgen_runtime.a" -o "$build/dwcheck" >> "$out/dwcheck.build.log" 2>&1; then
    if timeout 60 "$build/dwcheck" > "$out/$name.check.txt" 2>&1; then
      tail -1 "$out/$name.check.txt"
    else
      grep -v " ok$" "$out/$name.check.txt"
      status=1
    fi
  else
    echo "dwcheck: not built (see $out/dwcheck.build.log); no correctness check for $name"
  fi
  start=$(date +%s)
  timeout "$limit" "$build/bench/convgen_bench_depthwise" --csv "$rows" $cudnn --json "$out/$name.json" \
    --trials "$trials" --hot-replays "$replays" > "$out/$name.bench.log" 2>&1
  rc=$?
  echo "bench: exit $rc in $(( $(date +%s) - start )) s"
  if [[ $rc -ne 0 ]]; then
    status=1
    [[ $rc -eq 124 ]] && echo "bench: TIMED OUT after ${limit} s"
    grep -i "warning\|error" "$out/$name.bench.log" | head -10
  fi
  grep -i "GENERIC" "$out/$name.bench.log" | head -5
  names+=("$name")
  python3 "$here/dwtable.py" "$out" "$name"
done
if (( ! dry && ${#names[@]} > 1 )); then
  echo "== summary"
  python3 "$here/dwtable.py" "$out" "${names[@]}" --summary-only
fi
echo "dwsweep.sh: $(( $(date +%s) - t_start )) s"
exit $status
