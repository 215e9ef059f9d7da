#!/usr/bin/env python3
"""tools/tune_cluster.py against a real Dask cluster on this machine, no GPU: a scheduler and worker
processes (`dask worker --resources GPU=1`) whose `convgen tune` runs under the fake-GPU test hook
(CONVGEN_TUNE_FAKE_GPU: the default schedule, a time drawn from the names, nothing measured).

1. Split and merge, two GPU kinds: every kernel tuned once per kind, and each entry equals what one
   `convgen tune` on one host writes for that kind. Resume: a run limited to some kernels, then the
   full run tunes only the rest; a third tunes none.
2. A killed task: the `convgen tune` of a task killed mid-kernel is retried, and nothing is lost.
3. A lost worker: one of two workers of a kind killed mid-run; the scheduler moves its tasks.
4. Ctrl-C: the driver interrupted mid-run exits 130 and leaves a valid database (every checksum
   and the end record verified); the same command then tunes exactly the kernels missing.

Skipped (77) where dask.distributed is not installed.
"""
import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

ARGS = None
KIND_A, KIND_B = "Fake GPU A", "Fake GPU B"

# Eight kernels the default rule schedules (no schedule in the spec).
SPEC = """library: cluster_test
defaults: {padding: same}
workloads:
  - {n: 1, c: 32, h: 28, w: 28, filter: 3}
  - {n: 1, c: 64, h: 28, w: 28, filter: 3}
  - {n: 1, c: 32, h: 56, w: 56, filter: 5}
  - {n: 2, c: 16, h: 14, w: 14, filter: 7}
  - {n: 1, c: 32, h: 28, w: 28, filter: 3, dtype: float16, layout: NHWC}
  - {n: 1, c: 64, h: 14, w: 14, filter: 3, stride: 2, dtype: float16, layout: NHWC}
  - {op: conv2d, n: 1, c: 16, c_out: 32, h: 16, w: 16, filter: 3}
  - {op: conv2d, n: 1, c: 32, c_out: 16, h: 8, w: 8, filter: 1}
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """A scheduler and workers, each worker a process with its own fake GPU kind and pace."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.port = free_port()
        self.address = f"tcp://127.0.0.1:{self.port}"
        self.procs = []
        self.workers = []
        self.logs = []
        log = self.log("scheduler.log")
        self.scheduler = subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port",
             str(self.port), "--no-dashboard"], stdout=log, stderr=log)
        self.procs.append(self.scheduler)

    def add_worker(self, kind, seconds=0.0):
        env = dict(os.environ, CONVGEN_TUNE_FAKE_GPU=kind, CONVGEN_TUNE_FAKE_SECONDS=str(seconds))
        log = self.log(f"worker{len(self.workers)}.log")
        w = subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_worker", self.address, "--nthreads", "1", "--nworkers",
             "1", "--no-nanny", "--resources", "GPU=1", "--no-dashboard", "--host", "127.0.0.1"],
            stdout=log, stderr=log, env=env)
        self.procs.append(w)
        self.workers.append(w)
        return w

    def log(self, name):
        self.logs.append(open(os.path.join(self.tmp, name), "w"))
        return self.logs[-1]

    def wait_for(self, n):
        from dask.distributed import Client
        with Client(self.address, timeout=30) as c:
            c.wait_for_workers(n, timeout=60)

    def close(self):
        for p in reversed(self.procs):
            if p.poll() is None:
                p.kill()
            p.wait()
        for log in self.logs:
            log.close()


class TuneCluster(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="convgen-tune-cluster-")
        self.spec = os.path.join(self.tmp, "spec.yaml")
        with open(self.spec, "w") as f:
            f.write(SPEC)
        self.db = os.path.join(self.tmp, "tuning.yaml")
        self.cluster = Cluster(self.tmp)

    def tearDown(self):
        self.cluster.close()
        if os.environ.get("CONVGEN_KEEP_SCRATCH") != "1":
            shutil.rmtree(self.tmp, ignore_errors=True)

    def driver(self, *extra, wait=True):
        cmd = [sys.executable, ARGS.tool, self.spec, "--db", self.db, "--scheduler", self.cluster.address,
               "--convgen", ARGS.convgen, "--progress", "log", *extra, "--", "--templates", ARGS.templates]
        if not wait:
            return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        return subprocess.run(cmd, capture_output=True, text=True, timeout=240)

    def entries(self, path=None):
        """{(kernel, gpu): (schedule, time)} of a database, read and verified by convgen itself (every checksum
        and the end record: `convgen list` refuses a database that fails them)."""
        path = path or self.db
        out = {}
        for gpu in (KIND_A, KIND_B):
            r = subprocess.run([ARGS.convgen, "list", self.spec, "--format", "json", "--tuning", path,
                                "--tuning-gpu", gpu, "--allow-untuned", "--templates", ARGS.templates],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            for k in json.loads(r.stdout)["kernels"]:
                if k["origin"]["source"] == "tuned":
                    out[(k["name"], gpu)] = (json.dumps(k["schedule"], sort_keys=True), k["origin"]["tuned_us"])
        return out

    def kernel_names(self):
        r = subprocess.run([ARGS.convgen, "list", self.spec, "--format", "json", "--templates", ARGS.templates],
                           capture_output=True, text=True, check=True)
        return [k["name"] for k in json.loads(r.stdout)["kernels"]]

    def single_host(self, kind):
        """What one `convgen tune` on one host writes for `kind`."""
        path = os.path.join(self.tmp, f"single_{kind[-1]}.yaml")
        r = subprocess.run([ARGS.convgen, "tune", self.spec, "--db", path, "--templates", ARGS.templates],
                           capture_output=True, text=True, env=dict(os.environ, CONVGEN_TUNE_FAKE_GPU=kind))
        self.assertEqual(r.returncode, 0, r.stderr)
        return {k: v for k, v in self.entries(path).items() if k[1] == kind}

    def wait_until(self, predicate, timeout=60):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if predicate():
                return True
            time.sleep(0.05)
        return False

    def held(self):
        """Entries in the database now (0 while it does not exist)."""
        if not os.path.exists(self.db):
            return 0
        with open(self.db) as f:
            return sum(1 for line in f if line.startswith("  - kernel:"))

    def test_split_and_merge_over_two_gpu_kinds_then_resume(self):
        self.cluster.add_worker(KIND_A)
        self.cluster.add_worker(KIND_B)
        self.cluster.wait_for(2)
        # First the dense kernels only, then the rest: the second run tunes only what is missing.
        r = self.driver("--kernels", "conv_")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"{KIND_A}: 1 worker(s), 2 kernel(s) to tune", r.stderr)
        r = self.driver()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"{KIND_A}: 1 worker(s), 6 kernel(s) to tune", r.stderr)
        self.assertIn(f"{KIND_B}: 1 worker(s), 6 kernel(s) to tune", r.stderr)
        self.assertIn(f"12/12 kernels ({KIND_A}: 6/6, {KIND_B}: 6/6)", r.stderr)
        names = self.kernel_names()
        self.assertEqual(len(names), 8)
        got = self.entries()
        self.assertEqual(set(got), {(k, g) for k in names for g in (KIND_A, KIND_B)})
        expected = {**self.single_host(KIND_A), **self.single_host(KIND_B)}
        self.assertEqual(got, expected)
        leftovers = [n for n in os.listdir(self.tmp) if n.startswith((".tune-cluster-", ".convgen-tmp"))]
        self.assertEqual(leftovers, [])
        r = self.driver()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"{KIND_A}: 1 worker(s), 0 kernel(s) to tune", r.stderr)

    def test_a_killed_task_is_retried(self):
        self.cluster.add_worker(KIND_A, seconds=0.3)
        self.cluster.wait_for(1)
        p = self.driver(wait=False)
        # Kill the first `convgen tune` a task starts, mid-kernel.
        def tune_pid():
            r = subprocess.run(["pgrep", "-f", "convgen-tune-task-"], capture_output=True, text=True)
            pids = [int(x) for x in r.stdout.split()]
            return pids[0] if pids else None
        self.assertTrue(self.wait_until(lambda: tune_pid() is not None), "no task started")
        os.kill(tune_pid(), signal.SIGKILL)
        out, err = p.communicate(timeout=240)
        self.assertEqual(p.returncode, 0, err)
        self.assertEqual(len(self.entries()), 8)
        self.assertIn("8/8 kernels", err)

    def test_a_lost_worker_moves_its_tasks(self):
        self.cluster.add_worker(KIND_A, seconds=0.3)
        doomed = self.cluster.add_worker(KIND_A, seconds=0.3)
        self.cluster.wait_for(2)
        p = self.driver(wait=False)
        self.assertTrue(self.wait_until(lambda: self.held() >= 1), "nothing merged")
        doomed.kill()
        out, err = p.communicate(timeout=240)
        self.assertEqual(p.returncode, 0, err)
        self.assertEqual(len(self.entries()), 8)

    def test_ctrl_c_leaves_a_valid_database(self):
        self.cluster.add_worker(KIND_A, seconds=0.3)
        self.cluster.wait_for(1)
        p = self.driver(wait=False)
        self.assertTrue(self.wait_until(lambda: self.held() >= 2), "nothing merged")
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 130, err)
        self.assertIn("interrupted", err)
        held = len(self.entries())  # verified by convgen: checksums and the end record
        self.assertGreaterEqual(held, 2)
        self.assertLess(held, 8)
        r = self.driver()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"{KIND_A}: 1 worker(s), {8 - held} kernel(s) to tune", r.stderr)
        self.assertEqual(len(self.entries()), 8)


def main():
    global ARGS
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--convgen", required=True)
    p.add_argument("--templates", required=True)
    p.add_argument("--tool", required=True, help="tools/tune_cluster.py")
    ARGS, rest = p.parse_known_args()
    try:
        import distributed  # noqa: F401
    except ImportError:
        print("skipped: dask.distributed is not installed (scripts/install_deps.sh installs it)")
        return 77
    result = unittest.main(argv=[sys.argv[0], *rest], exit=False, verbosity=2).result
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
