#!/usr/bin/env python3
"""Concurrent, killed and attacked `convgen` writes: nothing lost, nothing escapes.

  chaos.py --convgen PATH --templates DIR --source-dir DIR [--rounds N] [--seed S]

0. A run beside a lock held (as another run would hold it) past its
   --lock-timeout exits 1 with the lock-timeout message and writes nothing:
   so the timeout is proved on every run, whatever the rounds' timing.
1. Rounds of 4-8 concurrent `generate` runs of different small specs (whose
   libraries share some kernel file names, with different bytes) into one
   folder. Every run exits 0, or 1 with the lock-timeout message (some rounds
   use a short --lock-timeout to provoke it), or 1 refused because another
   library's manifest lists a kernel file it would change. Every file in the folder then
   equals, byte for byte, that file of a clean generation of one of the
   specs; no temporary file is left.
2. The same rounds with random SIGKILLs. No final file is ever truncated;
   one clean run afterwards leaves the folder consistent.
3. A symlink to a sentinel file outside the folder at every name convgen
   writes (each output, the manifest, the lock file, temporary-file names):
   the sentinel's bytes and mtime never change; a link at a final name fails
   the run with an error naming it.
4. --prune with two libraries in one folder, an edited stale file and a user
   file carrying the marker sentence; a third library sharing a kernel with
   the first is refused and changes nothing. A run under a file-size limit fails
   naming EFBIG and leaves the folder as it was.
5. Concurrent `convgen tune merge` runs of different databases into one: the
   result holds every entry of every source.
Prints its counts; exits 1 listing every failure.
"""
import argparse
import fcntl
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import yaml

TEMP_PREFIX = ".convgen-tmp-"
LOCK = ".convgen.lock"
LOCK_MESSAGE = "waiting for another convgen run writing"
# A run that would overwrite a kernel file another library's manifest lists.
OTHERS_MESSAGE = "belongs to another library"

# Six libraries of two or three depthwise workloads. Some share a workload,
# so two libraries make one kernel file name with different bytes (the
# header names the spec, the code the library's namespace): a torn or mixed
# write would show, and the second library into a folder is refused.
WORKLOADS = [
    "{h: 16, w: 16, filter: 3}",
    "{h: 24, w: 24, filter: 3}",
    "{h: 32, w: 32, filter: 5}",
    "{h: 12, w: 20, filter: 3, stride: 2}",
    "{h: 40, w: 40, filter: 7}",
    "{h: 28, w: 28, filter: 3, multiplier: 2}",
]
LIBRARIES = {f"chaos{i}": [WORKLOADS[i], WORKLOADS[(i + 1) % 6]] + ([WORKLOADS[(i + 3) % 6]] if i % 2 else [])
             for i in range(6)}


def spec_text(library, workloads):
    return (f"library: {library}\ndefaults:\n  op: depthwise_conv2d\n  dtype: float32\n  n: 1\n  c: 32\n"
            f"  padding: same\nworkloads:\n" + "".join(f"  - {w}\n" for w in workloads))


class Chaos:
    def __init__(self, args, scratch):
        self.args = args
        self.scratch = scratch
        self.rng = random.Random(args.seed)
        self.failures = []
        self.counts = dict(rounds=0, runs=0, lock_timeouts=0, refused=0, kills=0, symlinks=0, files_checked=0,
                           tune_merges=0, entries_checked=0)
        self.specs = {}
        for library, workloads in LIBRARIES.items():
            path = os.path.join(scratch, f"{library}.yaml")
            with open(path, "w") as f:
                f.write(spec_text(library, workloads))
            self.specs[library] = path
        # The reference: each library generated alone into a clean folder.
        self.reference = {}  # file name -> the set of byte strings some library makes
        self.files_of = {}
        for library, spec in self.specs.items():
            out = os.path.join(scratch, "reference", library)
            self.run_ok(self.generate(spec, out))
            self.files_of[library] = sorted(n for n in os.listdir(out) if n != LOCK)
            for name in self.files_of[library]:
                with open(os.path.join(out, name), "rb") as f:
                    self.reference.setdefault(name, set()).add(f.read())

    def fail(self, message):
        self.failures.append(message)

    def generate(self, spec, out, *extra):
        return [self.args.convgen, "generate", spec, "--templates", self.args.templates, "--out", out, "-q", *extra]

    def run_ok(self, command):
        r = subprocess.run(command, capture_output=True, text=True, cwd=self.scratch)
        if r.returncode != 0:
            self.fail(f"{' '.join(command)}: exit {r.returncode}: {r.stderr.strip()}")
        return r

    # Every file in `out` equals a reference file of that name; no temporary file.
    def check_folder(self, out, where, temps_allowed=False, planted=None):
        if not os.path.isdir(out):  # every run killed before it made the folder
            return
        for name in sorted(os.listdir(out)):
            if name in (LOCK, planted):
                continue
            if name.startswith(TEMP_PREFIX):
                if not temps_allowed:
                    self.fail(f"{where}: temporary file {name} left")
                continue
            path = os.path.join(out, name)
            if os.path.islink(path) or not os.path.isfile(path):
                self.fail(f"{where}: {name} is not a regular file")
                continue
            with open(path, "rb") as f:
                data = f.read()
            self.counts["files_checked"] += 1
            if name not in self.reference:
                self.fail(f"{where}: {name} is no file any spec makes")
            elif data not in self.reference[name]:
                self.fail(f"{where}: {name} ({len(data)} bytes) equals no clean generation of it")

    def concurrent_round(self, out, kill):
        libraries = self.rng.sample(sorted(self.specs), self.rng.randint(4, 6))
        libraries += self.rng.sample(libraries, self.rng.randint(0, 2))  # some run twice: 4-8 runs
        short_wait = self.rng.random() < 0.5
        procs = []
        for library in libraries:
            extra = ["--lock-timeout", "0.02"] if short_wait else []
            if self.rng.random() < 0.3:
                extra.append("--prune")
            procs.append(subprocess.Popen(self.generate(self.specs[library], out, *extra), cwd=self.scratch,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True))
        killed = set()
        if kill:
            # A run takes some 0.1 s when it has the folder to itself.
            for i in self.rng.sample(range(len(procs)), self.rng.randint(len(procs) // 2, len(procs))):
                time.sleep(self.rng.uniform(0, 0.04))
                procs[i].send_signal(signal.SIGKILL)
                killed.add(i)
        for i, p in enumerate(procs):
            _, err = p.communicate()
            self.counts["runs"] += 1
            if i in killed and p.returncode == -signal.SIGKILL:
                self.counts["kills"] += 1
            elif p.returncode == 1 and LOCK_MESSAGE in err and "timed out" in err:
                self.counts["lock_timeouts"] += 1
            elif p.returncode == 1 and OTHERS_MESSAGE in err and "nothing was written" in err:
                self.counts["refused"] += 1
            elif p.returncode != 0:
                self.fail(f"round {self.counts['rounds']}: {libraries[i]}: exit {p.returncode}: {err.strip()}")
        self.counts["rounds"] += 1
        self.check_folder(out, f"round {self.counts['rounds']}", temps_allowed=kill)

    # A run that finds the folder's lock held past its --lock-timeout exits 1
    # with the lock message and writes nothing. The concurrent rounds provoke
    # that only when their timing happens to (a loaded machine may never
    # wait 0.02 s), so this holds the lock itself, as another run would.
    def held_lock(self):
        out = os.path.join(self.scratch, "held_lock")
        os.makedirs(out, exist_ok=True)
        library = sorted(self.specs)[0]
        with open(os.path.join(out, LOCK), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            r = subprocess.run(self.generate(self.specs[library], out, "--lock-timeout", "0.05"),
                               capture_output=True, text=True, cwd=self.scratch)
        self.counts["runs"] += 1
        if r.returncode == 1 and LOCK_MESSAGE in r.stderr and "timed out" in r.stderr:
            self.counts["lock_timeouts"] += 1
        else:
            self.fail(f"a run beside a held lock: exit {r.returncode}, expected 1 and the lock-timeout message: "
                      f"{r.stderr.strip()}")
        self.check_folder(out, "beside a held lock")
        if any(name != LOCK for name in os.listdir(out)):
            self.fail(f"a run that timed out on the lock wrote {sorted(set(os.listdir(out)) - {LOCK})}")

    def concurrent_rounds(self):
        for kill in (False, True):
            for r in range(self.args.rounds):
                out = os.path.join(self.scratch, f"{'killed' if kill else 'plain'}{r}")
                for _ in range(2):  # the second round finds the first's files
                    self.concurrent_round(out, kill)
                if kill:
                    # One clean run repairs what the kills left: of a library
                    # whose manifest is there, if any (another library that
                    # shares a kernel with it would be refused).
                    present = [lib for lib in sorted(self.specs)
                               if os.path.exists(os.path.join(out, f"{lib}.manifest"))]
                    library = self.rng.choice(present or sorted(self.specs))
                    self.run_ok(self.generate(self.specs[library], out))
                    self.check_folder(out, f"after the clean run of round {r}")
                    try:
                        with open(os.path.join(out, f"{library}.manifest")) as f:
                            listed = [line.split("  ", 1)[1].rstrip("\n") for line in f]
                    except OSError as e:
                        self.fail(f"killed round {r}: {e}")
                        continue
                    if sorted(listed) != sorted(n for n in self.files_of[library] if not n.endswith(".manifest")):
                        self.fail(f"killed round {r}: {library}.manifest lists {listed}")

    def symlinks(self):
        sentinel = os.path.join(self.scratch, "sentinel")
        with open(sentinel, "w") as f:
            f.write("outside the folder\n")
        os.utime(sentinel, (1_000_000_000, 1_000_000_000))
        before = (open(sentinel, "rb").read(), os.stat(sentinel).st_mtime_ns)
        library = "chaos1"
        # The old writer's temporary name (<file>.tmp), too: now a name convgen never opens.
        old_temp = self.files_of[library][0] + ".tmp"
        names = (self.files_of[library] + [LOCK, old_temp] +
                 [TEMP_PREFIX + s for s in ("a", "zzzzzzzzzzzz", "000000000000")])
        for name in names:
            for existing in (False, True):  # into an empty folder, and over a whole generation
                out = os.path.join(self.scratch, "links", f"{name}-{existing}")
                if existing:
                    self.run_ok(self.generate(self.specs[library], out))
                os.makedirs(out, exist_ok=True)
                if os.path.lexists(os.path.join(out, name)):
                    os.remove(os.path.join(out, name))
                os.symlink(sentinel, os.path.join(out, name))
                self.counts["symlinks"] += 1
                r = subprocess.run(self.generate(self.specs[library], out), capture_output=True, text=True,
                                   cwd=self.scratch)
                if name.startswith(TEMP_PREFIX):
                    # A stale temporary name: removed (the link itself), the run goes on.
                    if r.returncode != 0 or os.path.lexists(os.path.join(out, name)):
                        self.fail(f"link at {name}: exit {r.returncode}, still there: "
                                  f"{os.path.lexists(os.path.join(out, name))}: {r.stderr.strip()}")
                elif name == old_temp:
                    if r.returncode != 0 or not os.path.islink(os.path.join(out, name)):
                        self.fail(f"link at {name}: exit {r.returncode}: {r.stderr.strip()}")
                elif r.returncode != 1 or os.path.join(out, name) not in r.stderr or "symbolic link" not in r.stderr:
                    self.fail(f"link at {name}: exit {r.returncode}, error not naming it: {r.stderr.strip()}")
                elif not os.path.islink(os.path.join(out, name)):
                    self.fail(f"link at {name} was replaced")
                if (open(sentinel, "rb").read(), os.stat(sentinel).st_mtime_ns) != before:
                    self.fail(f"link at {name}: the sentinel outside the folder changed")
                    with open(sentinel, "w") as f:
                        f.write("outside the folder\n")
                    os.utime(sentinel, (1_000_000_000, 1_000_000_000))
                self.check_folder(out, f"link at {name}", planted=name)

    def prune(self):
        # Library a makes workloads 0-1; library b 2-4, then only 2: its
        # stale 3 is edited by hand, 4 goes. Library c shares workload 1
        # with a: it is refused, and changes nothing.
        out = os.path.join(self.scratch, "prune")
        os.makedirs(out)
        marker = "// Generated by convgen from a spec, says this file of mine\n"
        with open(os.path.join(out, "mine.cu"), "w") as f:
            f.write(marker)
        specs = {}
        for name, library, workloads in (("a", "prunea", WORKLOADS[0:2]), ("b", "pruneb", WORKLOADS[2:5]),
                                         ("b_smaller", "pruneb", WORKLOADS[2:3]), ("c", "prunec", WORKLOADS[1:3])):
            specs[name] = os.path.join(self.scratch, f"{name}.yaml")
            with open(specs[name], "w") as f:
                f.write(spec_text(library, workloads))
        files = {}
        for name in ("a", "b", "b_smaller"):
            alone = os.path.join(self.scratch, f"prune_{name}")
            self.run_ok(self.generate(specs[name], alone))
            files[name] = set(os.listdir(alone)) - {LOCK}
        self.run_ok(self.generate(specs["a"], out))
        self.run_ok(self.generate(specs["b"], out))
        before = {n: open(os.path.join(out, n), "rb").read() for n in os.listdir(out) if n != LOCK}
        r = subprocess.run(self.generate(specs["c"], out), capture_output=True, text=True, cwd=self.scratch)
        after = {n: open(os.path.join(out, n), "rb").read() for n in os.listdir(out) if n != LOCK}
        if r.returncode != 1 or OTHERS_MESSAGE not in r.stderr or "prunea.manifest" not in r.stderr:
            self.fail(f"prune: library c, sharing a kernel with a, was not refused naming a's manifest: "
                      f"exit {r.returncode}: {r.stderr.strip()}")
        if after != before:
            self.fail("prune: the refused library c changed the folder")
        stale = sorted(n for n in files["b"] - files["b_smaller"] if n not in files["a"])
        if len(stale) != 2:
            self.fail(f"prune: the test needs two stale files of library b alone, has {stale}")
            return
        edited = os.path.join(out, stale[0])
        with open(edited, "a") as f:
            f.write("// edited\n")
        r = self.run_ok(self.generate(specs["b_smaller"], out, "--prune"))
        for name in files["a"]:
            if not os.path.exists(os.path.join(out, name)):
                self.fail(f"prune: library b's --prune removed library a's {name}")
        if not os.path.exists(edited) or stale[0] not in r.stderr or "warning" not in r.stderr:
            self.fail(f"prune: the edited {stale[0]} was removed or kept without a warning: {r.stderr.strip()}")
        if os.path.exists(os.path.join(out, stale[1])):
            self.fail(f"prune: the stale {stale[1]} was not removed")
        mine = os.path.join(out, "mine.cu")
        if not os.path.exists(mine) or open(mine).read() != marker:
            self.fail("prune: the user's file with the marker sentence was touched")
        self.counts["files_checked"] += len(files["a"]) + len(stale) + 1

    def file_size_limit(self):
        # The same library from a spec of another name: every file's header
        # changes. Under a 4 KiB file-size limit the run must fail with EFBIG
        # named, not die of SIGXFSZ, and leave the old files as they were.
        out = os.path.join(self.scratch, "fsize")
        self.run_ok(self.generate(self.specs["chaos1"], out))
        old = {n: open(os.path.join(out, n), "rb").read() for n in os.listdir(out)}
        renamed = os.path.join(self.scratch, "chaos1_renamed.yaml")
        shutil.copy(self.specs["chaos1"], renamed)

        def limit():
            resource.setrlimit(resource.RLIMIT_FSIZE, (4096, resource.RLIM_INFINITY))

        r = subprocess.run(self.generate(renamed, out), capture_output=True, text=True, cwd=self.scratch,
                           preexec_fn=limit)
        if r.returncode != 1 or "File too large" not in r.stderr or out not in r.stderr:
            self.fail(f"file-size limit: exit {r.returncode} (1 expected, with EFBIG named): {r.stderr.strip()}")
        now = {n: open(os.path.join(out, n), "rb").read() for n in os.listdir(out)}
        if now != old:
            self.fail(f"file-size limit: the folder changed: {sorted(set(now) ^ set(old))} "
                      f"{sorted(n for n in old if now.get(n) != old[n])}")
        self.counts["files_checked"] += len(old)

    def tune_merges(self):
        sources = [os.path.join(self.args.source_dir, p) for p in
                   ("specs/mobilenet_v2.tuning.yaml", "specs/seeds.tuning.yaml", "bench/depthwise_bench.tuning.yaml")]
        # Each source through convgen's own writer first, so that the check
        # below compares what convgen writes with what convgen writes.
        copies = []
        for i, src in enumerate(sources):
            copy = os.path.join(self.scratch, f"source{i}.tuning.yaml")
            self.run_ok([self.args.convgen, "tune", "merge", copy, src, "-q"])
            copies.append(copy)

        def entries(path):
            with open(path) as f:
                return {(e["kernel"], e["gpu"]): e for e in yaml.safe_load(f)["entries"]}

        by_source = [entries(c) for c in copies]
        for r in range(self.args.rounds):
            target = os.path.join(self.scratch, "db", f"round{r}.tuning.yaml")
            os.makedirs(os.path.dirname(target), exist_ok=True)
            writers = copies + [self.rng.choice(copies)]  # one database twice: a writer that replaces
            procs = [subprocess.Popen([self.args.convgen, "tune", "merge", target, c, "-q"], stderr=subprocess.PIPE,
                                      text=True) for c in writers]
            for p in procs:
                _, err = p.communicate()
                self.counts["tune_merges"] += 1
                if p.returncode != 0:
                    self.fail(f"tune merge round {r}: exit {p.returncode}: {err.strip()}")
            merged = entries(target)
            for source in by_source:
                for key, entry in source.items():
                    self.counts["entries_checked"] += 1
                    if key not in merged:
                        self.fail(f"tune merge round {r}: the entry of {key} was lost")
                    elif not any(s.get(key) == merged[key] for s in by_source):
                        self.fail(f"tune merge round {r}: the entry of {key} equals no source's")
            if len(merged) != len(set().union(*by_source)):
                self.fail(f"tune merge round {r}: {len(merged)} entries, expected {len(set().union(*by_source))}")
            leftovers = [n for n in os.listdir(os.path.dirname(target)) if n.startswith(TEMP_PREFIX)]
            if leftovers:
                self.fail(f"tune merge round {r}: temporary files left: {leftovers}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--convgen", required=True, help="the convgen executable under test")
    parser.add_argument("--templates", required=True, help="its template folder")
    parser.add_argument("--source-dir", required=True, help="the source tree, for its tuning databases")
    parser.add_argument("--rounds", type=int, default=12, help="rounds of each kind (plain, killed, merges)")
    parser.add_argument("--seed", type=int, default=28, help="seed of the random choices and kill times")
    args = parser.parse_args()
    args.convgen, args.templates, args.source_dir = map(os.path.abspath, (args.convgen, args.templates,
                                                                          args.source_dir))
    scratch = tempfile.mkdtemp(prefix="convgen_chaos_")
    start = time.monotonic()
    try:
        chaos = Chaos(args, scratch)
        chaos.held_lock()
        chaos.concurrent_rounds()
        chaos.symlinks()
        chaos.prune()
        chaos.file_size_limit()
        chaos.tune_merges()
    finally:
        if os.environ.get("CONVGEN_KEEP_SCRATCH") == "1":
            print(f"scratch kept: {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    c = chaos.counts
    print(f"chaos: {c['rounds']} rounds, {c['runs']} generate runs ({c['kills']} killed, {c['lock_timeouts']} lock "
          f"timeouts, {c['refused']} refused: another library's file), {c['symlinks']} symlinks planted, {c['files_checked']} files checked, {c['tune_merges']} "
          f"concurrent tune merges ({c['entries_checked']} entries checked), {len(chaos.failures)} failures, "
          f"{time.monotonic() - start:.1f} s")
    if c["kills"] == 0 or c["lock_timeouts"] == 0:
        chaos.fail("no run was killed or none timed out on the lock: the test proved less than it says")
    if chaos.failures:
        print("\n".join(chaos.failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
