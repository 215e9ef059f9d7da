#!/usr/bin/env python3
"""Hostile inputs to `convgen check`, and hostile tuning databases to
`convgen list SPEC --tuning DB`: each must end in a clear error, quickly, in
bounded memory, and write nothing (list: nothing on stdout).

Every case is made in a scratch folder (some are megabytes, or not files at
all), run with a limit on its CPU time and a guard against blocking, and
checked for its exit status and message.
The peak memory (the child's own maximum resident set) is checked against
--max-rss-mb. With --table, writes the measured table as Markdown.

  hostile_inputs.py --convgen PATH [--max-rss-mb N] [--max-seconds S] [--table FILE]
"""
import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading

WORKLOAD = "{n: 1, c: 8, h: 8, w: 8, filter: 3, padding: same}"


def billion_laughs(path, first_line, list_key):
    # Nine levels of nine aliases: 9^9 (387 million) items in the list under
    # `list_key` if anything expanded them.
    lines = [first_line, "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i in range(1, 10):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    lines.append(f"{list_key}: *a9")
    write(path, "\n".join(lines) + "\n")


def write(path, text, mode="w"):
    """Writes text, or an iterable of pieces: big inputs go out piece by piece,
    so that this script's memory (which its children start from) stays small."""
    with open(path, mode) as f:
        if isinstance(text, (str, bytes)):
            f.write(text)
        else:
            for piece in text:
                f.write(piece)


def repeat(piece, times):
    chunk = 4096
    for _ in range(times // chunk):
        yield piece * chunk
    yield piece * (times % chunk)


class Makers:
    """Makers of hostile inputs in the scratch folder, shared by specs and
    tuning databases; each returns a function that makes the input and
    returns its path."""

    def __init__(self, scratch):
        self.scratch = scratch

    def path(self, name):
        return os.path.join(self.scratch, name)

    def file(self, name, text):
        def make():
            write(self.path(name), text() if callable(text) else text)
            return self.path(name)
        return make

    def bomb(self, name, first_line, list_key):
        def make():
            billion_laughs(self.path(name), first_line, list_key)
            return self.path(name)
        return make

    def binary(self, name, seed):
        def make():
            write(self.path(name), random.Random(seed).randbytes(64 * 1024), "wb")
            return self.path(name)
        return make

    def fifo(self, name):
        def make():
            os.mkfifo(self.path(name))
            return self.path(name)
        return make


def make_tuning_cases(scratch):
    """Tuning databases given to `convgen list SPEC --tuning DB`, as make_cases' tuples."""
    m = Makers(scratch)
    file = m.file
    return [
        ("tuning_billion_laughs", "a database whose entries are 9 levels of 9 aliases",
         m.bomb("tuning_billion_laughs.yaml", "convgen_tuning: 2", "entries"), 1,
         "each entry must be a mapping", False),
        ("tuning_deep_nesting", "a database of 10,000 nested '['",
         file("tuning_deep.yaml", "convgen_tuning: 2\nentries: " + "[" * 10000), 1,
         "YAML nested more than 500 levels deep", False),
        ("tuning_huge_file", "a 64 MiB database", file("tuning_huge.yaml", lambda: repeat("#", 64 << 20)), 1,
         "one is at most 1048576 bytes (1 MiB)", False),
        ("tuning_binary", "a database of 64 KiB of random bytes", m.binary("tuning_binary.yaml", 11), 1, "error:", False),
        ("tuning_many_errors", "a database of 200,000 empty entries (1 MiB)",
         file("tuning_many.yaml", lambda: ["convgen_tuning: 2\nentries:\n", *repeat("- {}\n", 200_000)]), 1,
         "too many errors: stopped reading after the first 100", False),
        ("tuning_widest_list", "a database whose entries are a flow list of 500,000 zeros (1 MiB)",
         file("tuning_wide.yaml", lambda: ["convgen_tuning: 2\nentries: [", *repeat("0,", 500_000), "0]\n"]), 1,
         "too many errors: stopped reading after the first 100", False),
        ("tuning_fifo", "a FIFO as the database (no writer)", m.fifo("tuning_fifo.yaml"), 2, "tuning database: ", False),
    ]


def make_cases(scratch):
    """(name, what it is, path maker, expected exit status, expected text in stderr, run as nobody)"""
    m = Makers(scratch)
    file = m.file

    def directory():
        path = m.path("directory.yaml")
        os.mkdir(path)
        return path

    def unreadable():
        path = m.path("unreadable.yaml")
        write(path, f"library: x\nworkloads: [{WORKLOAD}]\n")
        os.chmod(path, 0)
        return path

    return [
        ("billion_laughs", "9 levels of 9 aliases (9^9 items expanded)",
         m.bomb("billion_laughs.yaml", "library: bomb", "workloads"), 1,
         "each workload must be a mapping", False),
        ("deep_flow_nesting", "10,000 nested '['", file("deep_flow.yaml", "library: x\nworkloads: " + "[" * 10000),
         1, "YAML nested more than 500 levels deep", False),
        ("deep_block_nesting", "1,000 nested block lists",
         file("deep_block.yaml", lambda: ["library: x\nworkloads:\n", *(" " * i + "-\n" for i in range(1000))]),
         1, "YAML nested more than 500 levels deep", False),
        ("huge_scalar", "a 1,000,000-character library name",
         file("huge_scalar.yaml", lambda: ["library: ", *repeat("a", 1_000_000), f"\nworkloads: [{WORKLOAD}]\n"]),
         1, "(1000000 characters)", False),
        ("huge_integer", "c: a 100,000-digit number",
         file("huge_integer.yaml", lambda: ["library: x\nworkloads: [{n: 1, c: ", *repeat("9", 100_000),
                                            ", h: 8, w: 8, filter: 3, padding: same}]\n"]),
         1, "(100000 characters)", False),
        ("huge_file", "a 64 MiB spec", file("huge_file.yaml", lambda: repeat("#", 64 << 20)), 1,
         "a spec is at most 1048576 bytes", False),
        ("many_errors", "200,000 empty workloads (1 MiB)",
         file("many_errors.yaml", lambda: ["library: x\nworkloads:\n", *repeat("- {}\n", 200_000)]), 1,
         "too many errors: stopped reading after the first 100", False),
        ("widest_list", "a flow list of 500,000 zeros (1 MiB)",
         file("widest_list.yaml", lambda: ["library: x\nworkloads: [", *repeat("0,", 500_000), "0]\n"]), 1,
         "too many errors: stopped reading after the first 100", False),
        ("binary", "64 KiB of random bytes", m.binary("binary.yaml", 7), 1, "error:", False),
        ("stray_comma", "a ',' outside a flow collection (hangs yaml-cpp 0.7's LoadAll)",
         file("stray_comma.yaml", "    library: x\n  , workloads: []\n"), 1,
         "YAML syntax: unexpected ',' here", False),
        ("duplicate_keys", "a workload setting c twice",
         file("duplicate_keys.yaml", "library: x\nworkloads:\n  - {n: 1, c: 8, c: 16, h: 8, w: 8, filter: 3, "
              "padding: same}\n"), 1, "duplicate key 'c' in a workload", False),
        ("merge_keys", "'<<: *anchor' in a workload",
         file("merge_keys.yaml", "library: x\nworkloads:\n  - &base " + WORKLOAD + "\n  - {<<: *base, c: 16}\n"), 1,
         "YAML merge keys ('<<: *anchor') are not supported", False),
        ("two_documents", "a second YAML document",
         file("two_documents.yaml", f"library: x\nworkloads: [{WORKLOAD}]\n---\nlibrary: y\n"), 1,
         "a spec is one YAML document", False),
        ("directory", "a directory as the spec", directory, 2, "is not a regular file", False),
        ("fifo", "a FIFO as the spec (no writer)", m.fifo("fifo.yaml"), 2, "is not a regular file", False),
        ("device", "/dev/zero as the spec", lambda: "/dev/zero", 2, "is not a regular file", False),
        ("unreadable", "a file its reader may not read (mode 000)", unreadable, 2, "Permission denied", True),
    ]


# The machine the tests run on may be shared by other work: a case's time is
# the CPU time it used, and the wall clock only stops a child that blocks
# without computing (a read from a FIFO with no writer, say), after this many
# times the limit.
BLOCKED_FACTOR = 4


def run(command, cpu_limit):
    """Runs `command`; returns (status, stderr, stdout, CPU seconds, peak RSS in MB), or raises
    TimeoutError when it used `cpu_limit` seconds of CPU or blocked."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(command, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        blocked = threading.Event()

        def stop():
            blocked.set()
            proc.kill()

        timer = threading.Timer(cpu_limit * BLOCKED_FACTOR, stop)
        timer.start()
        _, status, usage = os.wait4(proc.pid, 0)
        timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        text = err.read().decode(errors="replace")
        out.seek(0)
        printed = out.read().decode(errors="replace")
    seconds = usage.ru_utime + usage.ru_stime
    if blocked.is_set():
        raise TimeoutError(f"{' '.join(command)} was still running after {cpu_limit * BLOCKED_FACTOR:g} s "
                           f"(blocked, having used {seconds:.1f} s of CPU)")
    if seconds >= cpu_limit:
        raise TimeoutError(f"{' '.join(command)} used more than {cpu_limit:g} s of CPU")
    return proc.returncode, text, printed, seconds, usage.ru_maxrss / 1024


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--convgen", required=True, help="the convgen executable")
    parser.add_argument("--max-rss-mb", type=float, default=300, help="peak memory allowed per case (MB)")
    parser.add_argument("--max-seconds", type=float, default=5,
                        help="CPU time allowed per case (s); the table records the measured time")
    parser.add_argument("--table", help="write the measured table here (Markdown)")
    args = parser.parse_args()

    scratch = tempfile.mkdtemp(prefix="convgen_hostile_")
    os.chmod(scratch, 0o755)  # the unreadable case runs as nobody, who must reach the file
    failures, rows = [], []
    # The tuning databases are applied to a small valid spec: any error is the database's.
    spec = os.path.join(scratch, "spec.yaml")
    write(spec, f"library: x\nworkloads: [{WORKLOAD}]\n")
    cases = make_cases(scratch) + make_tuning_cases(scratch)
    try:
        for name, what, make, want_status, want_text, as_nobody in cases:
            path = make()
            tuning = name.startswith("tuning_")
            command = [args.convgen, "list", spec, "--tuning", path] if tuning else [args.convgen, "check", path]
            if as_nobody and os.geteuid() == 0:
                # root reads any file: drop to nobody, as a user would be.
                setpriv = shutil.which("setpriv")
                if setpriv is None:
                    print(f"{name}: skipped (running as root without setpriv)")
                    continue
                command = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"] + command
            try:
                status, stderr, stdout, seconds, rss = run(command, args.max_seconds)
            except TimeoutError as e:
                failures.append(f"{name}: {e}")
                continue
            first = next((line for line in stderr.splitlines() if want_text in line), stderr.splitlines()[:1])
            message = first if isinstance(first, str) else (first[0] if first else "")
            problems = []
            if status != want_status:
                problems.append(f"exit status {status}, expected {want_status}")
            if want_text not in stderr:
                problems.append(f"stderr lacks {want_text!r}: {stderr[:300]!r}")
            if rss > args.max_rss_mb:
                problems.append(f"peak memory {rss:.0f} MB > {args.max_rss_mb:.0f} MB")
            if tuning and stdout:
                problems.append(f"a failed list printed on stdout: {stdout[:200]!r}")
            status_text = "ok" if not problems else "FAILED: " + "; ".join(problems)
            print(f"{name:22} {seconds:6.3f} s {rss:7.1f} MB  exit {status}  {status_text}")
            if problems:
                failures.append(f"{name}: " + "; ".join(problems))
            shown = message.replace(scratch + "/", "")
            if len(shown) > 160:
                shown = shown[:157] + "..."
            rows.append((name, what, status, shown, seconds, rss))
    finally:
        for root, dirs, _ in os.walk(scratch):
            for d in dirs:
                os.chmod(os.path.join(root, d), 0o755)
        shutil.rmtree(scratch, ignore_errors=True)

    if args.table:
        with open(args.table, "w") as f:
            f.write("| input | what it is | exit | message (first line) | time s | peak MB |\n")
            f.write("|---|---|---:|---|---:|---:|\n")
            for name, what, status, message, seconds, rss in rows:
                cell = message.replace("|", "\\|")
                f.write(f"| {name} | {what} | {status} | `{cell}` | {seconds:.3f} | {rss:.0f} |\n")
    if failures:
        print("\n".join(["hostile inputs that were not handled:"] + failures), file=sys.stderr)
        return 1
    print(f"{len(rows)} hostile inputs: each a clear error, within {args.max_seconds:g} s of CPU and "
          f"{args.max_rss_mb:g} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
