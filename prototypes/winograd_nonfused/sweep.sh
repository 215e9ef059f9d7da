#!/usr/bin/env bash
# sweep.sh BUILD_DIR OUT_DIR ROWS_CSV VARIANT...: the dense benchmark on the
# rows of ROWS_CSV, once per VARIANT, each a build of convgen_bench_dense
# whose spec forces the variant's schedules (force.py). VARIANT is
# "name|RULE|RULE...", force.py's rules; "name" alone keeps the default rule.
# BUILD_DIR must be configured with -DCONVGEN_BUILD_BENCH=ON. Writes
# OUT_DIR/NAME.json (the benchmark's JSON) and prints each run's table.
set -u
if [[ $# -lt 4 || "$1" == "-h" || "$1" == "--help" ]]; then
  sed -n '2,/^set/p' "$0" | sed 's/^# \{0,1\}//' | grep -v '^set'
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=$1 out=$2 rows=$3
shift 3
spec=$repo/bench/dense_bench.yaml
python3 "$repo/bench/make_bench_spec.py" --csv "$repo/bench/depthwise.csv" --out /tmp/sweep_dw.yaml \
  --dense-csv "$rows" --dense-out /tmp/sweep_dense.yaml || exit 1
status=0
for variant in "$@"; do
  IFS='|' read -r -a parts <<< "$variant"
  name=${parts[0]}
  if [[ ${#parts[@]} -gt 1 ]]; then
    python3 "$here/force.py" /tmp/sweep_dense.yaml "$spec" "${parts[@]:1}" || exit 1
  else
    cp /tmp/sweep_dense.yaml "$spec"
  fi
  echo "== $name: $variant"
  start=$(date +%s)
  if ! ninja -C "$build" convgen_bench_dense > "/tmp/sweep_$name.build.log" 2>&1; then
    tail -30 "/tmp/sweep_$name.build.log"
    status=1
    continue
  fi
  echo "built in $(( $(date +%s) - start )) s"
  "$build/bench/convgen_bench_dense" --csv "$rows" --json "$out/$name.json" || status=1
done
exit $status
