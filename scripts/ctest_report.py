#!/usr/bin/env python3
"""Summarizes a ctest run from its JUnit file (ctest --output-junit FILE).

Prints one line: the counts of passed, failed and skipped tests. When tests
failed, then their names and the last lines of the first one's output.
Exits 0 when the file reads; 2 when it does not.

usage: ctest_report.py [--tail N] JUNIT_XML
"""
import argparse
import sys
import xml.etree.ElementTree as ET


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("junit", help="the file ctest --output-junit wrote")
    parser.add_argument("--tail", type=int, default=40, help="lines of the first failed test's output to show")
    args = parser.parse_args()
    if args.tail < 1:
        parser.error(f"--tail must be at least 1, got {args.tail}")
    try:
        suite = ET.parse(args.junit).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"ctest_report: cannot read {args.junit}: {e}", file=sys.stderr)
        return 2

    # ctest's statuses: "run" (passed), "fail", "notrun" (skipped, by a skip
    # return code or skip regular expression, or not run) and "disabled".
    passed, failed, skipped = [], [], []
    for case in suite.iter("testcase"):
        status = case.get("status")
        if status == "run":
            passed.append(case)
        elif status in ("notrun", "disabled"):
            skipped.append(case)
        else:
            failed.append(case)
    print(f"{len(passed)} passed, {len(failed)} failed, {len(skipped)} skipped")
    if failed:
        print("failed: " + " ".join(case.get("name", "?") for case in failed))
        first = failed[0]
        output = (first.findtext("system-out") or "").rstrip("\n").split("\n")
        print(f"--- the last {args.tail} lines of {first.get('name', '?')}'s output:")
        print("\n".join(output[-args.tail:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
