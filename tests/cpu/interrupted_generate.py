#!/usr/bin/env python3
"""An interrupted `convgen generate` leaves no half-written file, and the next
run with --prune cleans up after it.

Generates SPEC once, whole, into a reference folder. Then, ROUNDS times, starts
the same generation into a fresh folder and kills it (SIGKILL: no cleanup
runs) after a delay drawn across the run's length. After each kill, every
file in the folder must be byte-identical to its reference (writes go to
temporary files, .convgen-tmp-*, renamed into place once all are whole); only
those may be partial. A rerun must then remove them and leave exactly the
reference folder.

  interrupted_generate.py --convgen PATH --templates DIR --spec SPEC [--rounds N]
"""
import argparse
import filecmp
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

TEMP_PREFIX = ".convgen-tmp-"
LOCK = ".convgen.lock"


def generate(convgen, templates, spec, out, prune=False):
    command = [convgen, "generate", spec, "--name", "interrupted", "--templates", templates, "--out", out]
    return command + (["--prune"] if prune else [])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--convgen", required=True)
    parser.add_argument("--templates", required=True)
    parser.add_argument("--spec", required=True, help="a spec of many kernels, so that a kill lands mid-run")
    parser.add_argument("--rounds", type=int, default=12)
    args = parser.parse_args()

    scratch = tempfile.mkdtemp(prefix="convgen_interrupted_")
    failures = []
    try:
        reference = os.path.join(scratch, "reference")
        start = time.monotonic()
        subprocess.run(generate(args.convgen, args.templates, args.spec, reference), check=True,
                       stdout=subprocess.DEVNULL)
        whole = time.monotonic() - start
        names = sorted(n for n in os.listdir(reference) if n != LOCK)
        rng = random.Random(11)
        partial_files = killed_mid_run = 0
        for round_ in range(args.rounds):
            out = os.path.join(scratch, f"run{round_}")
            proc = subprocess.Popen(generate(args.convgen, args.templates, args.spec, out),
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(rng.uniform(0.05, 0.95) * whole)
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            present = sorted(os.listdir(out)) if os.path.isdir(out) else []
            finals = [n for n in present if not n.startswith(TEMP_PREFIX) and n != LOCK]
            if len(finals) < len(names):
                killed_mid_run += 1
            for name in present:
                if name == LOCK:
                    continue
                if name.startswith(TEMP_PREFIX):
                    partial_files += 1
                    continue
                if name not in names:
                    failures.append(f"round {round_}: {name} is not a file the run makes")
                elif not filecmp.cmp(os.path.join(out, name), os.path.join(reference, name), shallow=False):
                    failures.append(f"round {round_}: {name} is half-written or wrong")
            subprocess.run(generate(args.convgen, args.templates, args.spec, out, prune=True), check=True,
                           stdout=subprocess.DEVNULL)
            after = sorted(n for n in os.listdir(out) if n != LOCK)
            if after != names:
                extra = sorted(set(after) - set(names))
                missing = sorted(set(names) - set(after))
                failures.append(f"round {round_}: after the rerun with --prune, extra {extra[:5]}, missing {missing[:5]}")
            else:
                for name in names:
                    if not filecmp.cmp(os.path.join(out, name), os.path.join(reference, name), shallow=False):
                        failures.append(f"round {round_}: after the rerun, {name} differs")
        print(f"{args.rounds} runs killed at random points of a {whole:.2f} s generation of {len(names)} files "
              f"({killed_mid_run} before the last file, {partial_files} temporary file(s) left): "
              f"every finished file whole, every rerun complete")
        if killed_mid_run == 0:
            failures.append("no kill landed before the run finished: the test proved nothing")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if failures:
        print("\n".join(failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
