import sys, re
res, torch = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None
best_only = len(sys.argv) > 3 and sys.argv[3] == "best"
rows = {}; copy = {}; fails = []; cur = None; ptx = {}
th = {}
if torch:
    for l in open(torch):
        m = re.match(r"TORCH row=(\S+) plain_hot_us=(\S+)", l)
        if m: th[m.group(1)] = float(m.group(2))
for l in open(res):
    if l.startswith("VARIANT"):
        p = l.split(); cur = p[1]; ptx[cur] = " ".join(p[2:]); continue
    if "FAILED" in l or "MISSING" in l: fails.append(l.strip()); continue
    if not l.startswith("RESULT"): continue
    d = dict(re.findall(r'(\w+)=("[^"]*"|\S+)', l))
    row = d["row"]; d["v"] = cur; d["ptx"] = ptx.get(cur, "")
    if float(d["copy_cold_us"]) > 0: copy[row] = (float(d["copy_cold_us"]), float(d["ceil_tbps"]))
    rows.setdefault(row, []).append(d)
print("failures:", fails if fails else "none")
ceil = max([c[1] for c in copy.values()] or [3.0])
print(f"ceiling (1 GiB copy) {ceil:.3f} TB/s")
print("| row | variant | schedule | regs/spill | thr | smem | ok | hot us | cold us | % ceil | copy % ceil | ratio | torch hot | hot/torch |")
for row, ds in rows.items():
    cc = copy.get(row, (float('nan'), ceil))[0]
    for d in sorted(ds, key=lambda d: float(d["cold_us"]))[: (2 if best_only else None)]:
        b = float(d["bytes"]); cold = float(d["cold_us"]); hot = float(d["hot_us"])
        fl = b / (ceil * 1e12) * 1e6
        t = th.get(row, float('nan'))
        ptx = re.sub(r"Used (\d+) registers (\d+) bytes spill stores (\d+) bytes stack frame", r"\1r/\2s/\3st", d['ptx'])
        print(f"| {row} | {d['v']} | {d['sched'].strip(chr(34)).replace('MINB=0 ','').replace('TAPS_SMEM=','TS=')} | {ptx} | {d['threads']} | {d['smem']} | {d['ok']} | {hot:.2f} | {cold:.2f} | {100*fl/cold:.1f} | {100*fl/cc:.1f} | {cc/cold:.2f} | {t:.2f} | {hot/t:.2f} |")
if len(sys.argv) > 3 and sys.argv[3] == "best":
    pass
