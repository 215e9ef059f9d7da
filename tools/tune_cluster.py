#!/usr/bin/env python3
"""Tune the kernels of convgen specs on a Dask cluster: one database for many GPUs and GPU kinds.

Each kernel becomes one task per GPU kind that asks for one GPU (Dask resource `GPU`). The task runs
`convgen tune SPECS --kernel NAME` on the worker the scheduler places it on, into a database of its
own, and returns that database's text. The driver merges each into --db as it arrives with
`convgen tune merge` (read-merge-write under the folder's lock, written whole: the database is valid
after every kernel, after Ctrl-C, after a kill). Rerunning the same command tunes only the kernels
the database does not yet hold for each GPU kind (with the current generator's fingerprint).

The cluster: a scheduler (`dask scheduler`) and one worker per GPU, each started with the GPU it
owns and the resource the tasks ask for:

    CUDA_VISIBLE_DEVICES=0 dask worker tcp://HOST:8786 --nthreads 1 --resources GPU=1

A worker's GPU kind is what `convgen tune gpus` prints there (the name the database records). Each
worker needs convgen (built with the CUDA toolkit's headers, so that it can tune), the GPU driver
and NVRTC; the spec files travel with the tasks. --convgen names the binary's path on the workers
(a shared path, or the same install on every node).

Exit status: 0 when every kernel was tuned (or already held), 1 when some failed after their
retries, 2 on a usage error, 130 when interrupted (what finished is in the database).
"""
import argparse
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

# Seconds between progress lines where stderr is not a terminal.
LOG_EVERY_S = 10.0


def parse_args(argv):
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="Options after `--` go to `convgen tune` on the workers as they are (e.g. -- --budget-s 10 "
               "--objective cold).",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("specs", nargs="+", help="spec files (YAML)")
    p.add_argument("--db", required=True, help="the tuning database to write (created, or continued)")
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--scheduler", metavar="ADDRESS", help="the Dask scheduler, e.g. tcp://host:8786")
    where.add_argument("--local-workers", type=int, metavar="N",
                       help="start a local cluster of N workers, one GPU each (worker i gets CUDA_VISIBLE_DEVICES=i "
                            "unless --share-gpu)")
    p.add_argument("--share-gpu", action="store_true",
                   help="with --local-workers: every worker uses GPU 0 (their timings then disturb each other)")
    p.add_argument("--convgen", default=shutil.which("convgen") or "convgen",
                   help="convgen's path on the driver and, unless --worker-convgen, on the workers "
                        "(default: convgen on PATH)")
    p.add_argument("--worker-convgen", help="convgen's path on the workers, where it differs")
    p.add_argument("--kernels", default="", help="tune only the kernels whose name contains this")
    p.add_argument("--retries", type=int, default=2,
                   help="times a failed task (its convgen killed or failing) is run again (default 2); a task whose "
                        "worker is lost is moved to another by the scheduler")
    p.add_argument("--progress", choices=["auto", "line", "log"], default="auto",
                   help="line: one line rewritten in place; log: a line every %gs and per kernel; auto: line on a "
                        "terminal" % LOG_EVERY_S)
    # Only what follows `--` is convgen tune's: a misspelt driver option is an
    # error here, not an argument every worker's convgen refuses.
    split = argv.index("--") if "--" in argv else len(argv)
    args = p.parse_args(argv[:split])
    tune_args = argv[split + 1:]
    for a in tune_args:
        if a in ("--db", "--devices", "--kernel", "--kernels", "--retune") or a.startswith(("--db=", "--devices=")):
            p.error(f"`{a}` is the driver's to set; give --kernels to the driver, and retune with a new --db")
    args.tune_args = tune_args
    if args.local_workers is not None and args.local_workers < 1:
        p.error("--local-workers must be at least 1")
    return args


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def kernels_of(convgen, specs, db, gpu, kernels):
    """The kernels to tune on `gpu`: every kernel of the specs whose name contains `kernels`, less those the
    spec schedules and those `db` holds a current entry for on `gpu`."""
    cmd = [convgen, "list", *specs, "--format", "json"]
    if db and os.path.exists(db):
        cmd += ["--tuning", db, "--tuning-gpu", gpu, "--allow-untuned", "--allow-unverified-tuning"]
    r = run(cmd)
    if r.returncode != 0:
        raise SystemExit(f"tune_cluster: error: {' '.join(cmd)} failed:\n{r.stderr.strip()}")
    todo = []
    for k in json.loads(r.stdout)["kernels"]:
        origin = k["origin"]
        if kernels not in k["name"] or origin["source"] == "spec":
            continue
        if origin["source"] == "tuned" and origin.get("gpu") == gpu:
            continue
        todo.append(k["name"])
    return todo


# --- What runs on the workers (shipped to them by value: no import of this file is needed there).

def worker_gpu(convgen):
    """The GPU kind of this worker, as the database names it."""
    import json as _json
    import subprocess as _subprocess
    try:
        r = _subprocess.run([convgen, "tune", "gpus", "--devices", "0"], capture_output=True, text=True)
    except OSError as e:  # no convgen at that path on this worker
        return {"error": f"{convgen}: {e.strerror}"}
    if r.returncode != 0:
        return {"error": (r.stderr or r.stdout).strip()[-500:]}
    return {"gpu": _json.loads(r.stdout)[0]["name"]}


def tune_task(convgen, specs, kernel, tune_args):
    """Tunes one kernel on this worker's GPU into a database of its own; returns that database's text."""
    import os as _os
    import subprocess as _subprocess
    import tempfile as _tempfile
    with _tempfile.TemporaryDirectory(prefix="convgen-tune-task-") as tmp:
        paths = []
        for i, (name, text) in enumerate(specs):
            path = _os.path.join(tmp, f"{i}_{name}")
            with open(path, "w") as f:
                f.write(text)
            paths.append(path)
        db = _os.path.join(tmp, "tuning.yaml")
        cmd = [convgen, "tune", *paths, "--db", db, "--devices", "0", "--kernel", kernel, *tune_args]
        r = _subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0 or not _os.path.exists(db):
            raise RuntimeError(f"convgen tune exited {r.returncode} for {kernel}: {r.stderr.strip()[-800:]}")
        with open(db) as f:
            return f.read()


# --- The driver.

class Progress:
    """Kernels done / total, per GPU kind, with an ETA, on one line (or as log lines)."""

    def __init__(self, totals, mode):
        self.totals = totals
        self.done = {g: 0 for g in totals}
        self.failed = 0
        self.start = time.monotonic()
        self.last_log = 0.0
        self.mode = mode if mode != "auto" else ("line" if sys.stderr.isatty() else "log")

    def text(self):
        done, total = sum(self.done.values()), sum(self.totals.values())
        elapsed = time.monotonic() - self.start
        eta = "--" if done == 0 else fmt_s(elapsed / done * (total - done))
        kinds = ", ".join(f"{g}: {self.done[g]}/{self.totals[g]}" for g in self.totals)
        failed = f" | {self.failed} failed" if self.failed else ""
        return f"tune_cluster: {done}/{total} kernels ({kinds}){failed} | {fmt_s(elapsed)} | ETA {eta}"

    def show(self, event=None):
        if self.mode == "line":
            if event:
                sys.stderr.write("\r\033[K" + event + "\n")
            sys.stderr.write("\r\033[K" + self.text())
            sys.stderr.flush()
            return
        now = time.monotonic()
        if event:
            print(event, file=sys.stderr)
        if event or now - self.last_log >= LOG_EVERY_S:
            print(self.text(), file=sys.stderr, flush=True)
            self.last_log = now

    def close(self):
        if self.mode == "line":
            sys.stderr.write("\n")


def fmt_s(s):
    s = int(round(s))
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


def merge(convgen, db, text, label):
    """Merges one task's database into `db` (convgen tune merge: locked, written whole)."""
    folder = os.path.dirname(os.path.abspath(db))
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", prefix=".tune-cluster-", dir=folder, delete=False) as f:
        f.write(text)
        part = f.name
    try:
        r = run([convgen, "tune", "merge", db, part, "--quiet"])
    finally:
        os.unlink(part)
    if r.returncode != 0:
        raise RuntimeError(f"merging {label} into {db}: {r.stderr.strip()}")
    return [line for line in r.stderr.splitlines() if line.strip()]


def main(argv):
    args = parse_args(argv)
    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError:
        print("tune_cluster: error: needs dask.distributed (scripts/install_deps.sh installs it)", file=sys.stderr)
        return 2
    if not os.path.isdir(os.path.dirname(os.path.abspath(args.db))):
        print(f"tune_cluster: error: --db {args.db}: its folder does not exist", file=sys.stderr)
        return 2
    specs = []
    for path in args.specs:
        try:
            with open(path) as f:
                specs.append((os.path.basename(path), f.read()))
        except OSError as e:
            print(f"tune_cluster: error: cannot read the spec {path}: {e.strerror}", file=sys.stderr)
            return 2
    worker_convgen = args.worker_convgen or args.convgen

    cluster = None
    if args.local_workers:
        # One worker process per GPU, one thread each (a worker tunes one kernel at a time), each declaring
        # its GPU as the cluster's workers would.
        from dask.distributed import Nanny, Scheduler, SpecCluster
        workers = {
            f"gpu{i}": {"cls": Nanny, "options": {
                "nthreads": 1, "resources": {"GPU": 1}, "silence_logs": logging.ERROR,
                "env": {"CUDA_VISIBLE_DEVICES": "0" if args.share_gpu else str(i)}}}
            for i in range(args.local_workers)}
        cluster = SpecCluster(workers=workers, scheduler={"cls": Scheduler, "options": {"dashboard_address": None}},
                              silence_logs=logging.ERROR)
        client = Client(cluster)
        client.wait_for_workers(args.local_workers)
    else:
        client = Client(args.scheduler)

    interrupted = False
    futures = None
    progress = None
    try:
        workers = client.scheduler_info()["workers"]
        gpu_workers = [a for a, w in workers.items() if w.get("resources", {}).get("GPU", 0) >= 1]
        if not gpu_workers:
            print("tune_cluster: error: no worker declares the resource GPU (start workers with --resources GPU=1)",
                  file=sys.stderr)
            return 2
        kinds = {}
        for addr, answer in client.run(worker_gpu, worker_convgen, workers=gpu_workers).items():
            if "error" in answer:
                print(f"tune_cluster: error: worker {addr}: convgen tune gpus failed: {answer['error']}",
                      file=sys.stderr)
                return 1
            kinds.setdefault(answer["gpu"], []).append(addr)

        kinds = dict(sorted(kinds.items()))
        todo = {gpu: kernels_of(args.convgen, args.specs, args.db, gpu, args.kernels) for gpu in kinds}
        for gpu, addrs in kinds.items():
            print(f"tune_cluster: {gpu}: {len(addrs)} worker(s), {len(todo[gpu])} kernel(s) to tune",
                  file=sys.stderr)
        progress = Progress({g: len(k) for g, k in todo.items()}, args.progress)
        futures = {}
        for gpu, names in todo.items():
            for name in names:
                f = client.submit(tune_task, worker_convgen, specs, name, args.tune_args, key=f"tune-{gpu}-{name}",
                                  resources={"GPU": 1}, workers=kinds[gpu], allow_other_workers=False,
                                  retries=args.retries, pure=False)
                futures[f] = (gpu, name)
        progress.show()
        for f in as_completed(list(futures)):
            gpu, name = futures[f]
            try:
                text = f.result()
                notes = merge(args.convgen, args.db, text, f"{name} on {gpu}")
                progress.done[gpu] += 1
                progress.show(f"  {name} on {gpu}: merged" + "".join("\n    " + n for n in notes))
            except KeyboardInterrupt:
                raise
            except Exception as e:  # the task failed after its retries, or its merge did
                progress.failed += 1
                progress.show(f"  {name} on {gpu}: failed: {str(e).strip()[-600:]}")
    except KeyboardInterrupt:
        interrupted = True
    finally:
        if progress:
            progress.close()
        if futures:
            client.cancel(list(futures))
        client.close()
        if cluster:
            cluster.close()
    done = sum(progress.done.values()) if progress else 0
    if interrupted:
        print(f"tune_cluster: interrupted; {done} kernel(s) finished are in {args.db}; run the same command to go on",
              file=sys.stderr)
        return 130
    print(f"tune_cluster: {done} kernel(s) tuned, {progress.failed} failed; database {args.db}", file=sys.stderr)
    return 1 if progress.failed else 0


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.exit(main(sys.argv[1:]))
