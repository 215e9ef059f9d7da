#!/usr/bin/env bash
# tests/gpu/tune_cluster_gpu.sh CONVGEN OUT [BUDGET_S]: the cluster path on this machine's GPU
# against one host. Tunes specs/seeds.yaml's tunable kernels three ways, each into a database of its
# own: `convgen tune --devices 0`; tools/tune_cluster.py on a local Dask cluster of one worker (the
# engine's cost: throughput against the first); and of two workers sharing GPU 0. Writes
# OUT/tune_cluster.json (kernels per minute of each, the winners compared) and exits non-zero where
# the one-worker cluster runs under 0.9x the single host's kernels per minute, or a database differs
# in its kernels. Winners that differ are listed with both times: whether that is timing noise is
# read from the times (two workers time on one GPU at once).
# Skipped (77) without dask.distributed or a GPU convgen can tune on.
set -euo pipefail
convgen=$1 out=$2 budget=${3:-10}
root=$(cd "$(dirname "$0")/../.." && pwd)
python3 -c "import distributed" 2>/dev/null || { echo "skipped: dask.distributed is not installed"; exit 77; }
"$convgen" tune gpus >/dev/null 2>&1 || { echo "skipped: no GPU to tune on (convgen tune gpus failed)"; exit 77; }
spec=$root/specs/seeds.yaml
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

timed() {  # timed NAME COMMAND...: runs it, records its wall seconds in $work/NAME.s
  local name=$1 start
  shift
  start=$(date +%s.%N)
  "$@" > "$out/$name.log" 2>&1 || { echo "$name failed:"; tail -20 "$out/$name.log"; exit 1; }
  python3 -c "import sys; print(float(sys.argv[1]) - float(sys.argv[2]))" "$(date +%s.%N)" "$start" > "$work/$name.s"
}

timed single "$convgen" tune "$spec" --db "$work/single.yaml" --devices 0 --budget-s "$budget"
timed cluster1 python3 "$root/tools/tune_cluster.py" "$spec" --db "$work/cluster1.yaml" --local-workers 1 \
  --convgen "$convgen" --progress log -- --budget-s "$budget"
timed cluster2 python3 "$root/tools/tune_cluster.py" "$spec" --db "$work/cluster2.yaml" --local-workers 2 \
  --share-gpu --convgen "$convgen" --progress log -- --budget-s "$budget"

python3 - "$convgen" "$spec" "$work" "$out" <<'EOF'
import json, subprocess, sys
convgen, spec, work, out = sys.argv[1:]
gpu = json.loads(subprocess.run([convgen, "tune", "gpus"], capture_output=True, text=True, check=True).stdout)[0]["name"]

def winners(name):
    r = subprocess.run([convgen, "list", spec, "--format", "json", "--tuning", f"{work}/{name}.yaml",
                        "--tuning-gpu", gpu], capture_output=True, text=True, check=True)
    return {k["name"]: (k["schedule"], k["origin"]["tuned_us"]) for k in json.loads(r.stdout)["kernels"]
            if k["origin"]["source"] == "tuned"}

runs = {}
for name in ("single", "cluster1", "cluster2"):
    w = winners(name)
    seconds = float(open(f"{work}/{name}.s").read())
    runs[name] = {"kernels": len(w), "wall_s": round(seconds, 1), "kernels_per_min": round(len(w) / seconds * 60, 2),
                  "winners": w}
single = runs["single"]
report = {"gpu": gpu, "runs": {n: {k: v for k, v in r.items() if k != "winners"} for n, r in runs.items()}}
ok = True
for name in ("cluster1", "cluster2"):
    r = runs[name]
    r_rep = report["runs"][name]
    r_rep["throughput_vs_single"] = round(r["kernels_per_min"] / single["kernels_per_min"], 3)
    if set(r["winners"]) != set(single["winners"]):
        ok = False
        r_rep["kernels_differ"] = sorted(set(r["winners"]) ^ set(single["winners"]))
    same, differ = 0, []
    for k, (schedule, us) in single["winners"].items():
        if k not in r["winners"]:
            continue
        if r["winners"][k][0] == schedule:
            same += 1
        else:
            differ.append({"kernel": k, "single_us": us, "cluster_us": r["winners"][k][1],
                           "ratio": round(r["winners"][k][1] / us, 3)})
    r_rep["same_winner"] = same
    r_rep["other_winner"] = differ
if report["runs"]["cluster1"]["throughput_vs_single"] < 0.9:
    ok = False
report["ok"] = ok
json.dump(report, open(f"{out}/tune_cluster.json", "w"), indent=1)
print(json.dumps(report, indent=1))
sys.exit(0 if ok else 1)
EOF
