#!/usr/bin/env python3
"""Checks that the documentation says what the code does.

    check_docs.py copies ROOT [--write]
        Every block that follows a comment `<!-- copy of PATH -->` in
        ROOT's README.md, docs/*.md and examples/*/README.md is the whole
        text of ROOT/PATH (the README shows examples/consumer/CMakeLists.txt
        so). --write copies each file into its block instead.

    check_docs.py keys CONVGEN DOC [--write]
        The part of DOC between `<!-- convgen keys: begin` and
        `<!-- convgen keys: end -->` is what `CONVGEN keys` prints now (the
        reference of every spec key, made from the generator's
        declarations). --write puts it there instead.

    check_docs.py limits CONVGEN DOC [--write]
        The same for the table of size limits: the part of DOC between
        `<!-- convgen limits: begin` and `<!-- convgen limits: end -->` is
        what `CONVGEN limits` prints (made from convgen/limits.h).

    check_docs.py contents DOC [--write]
        The part of DOC between `<!-- contents: begin -->` and
        `<!-- contents: end -->` lists DOC's sections (its `## ` headings
        outside code blocks), each a link to its heading, in order.
        --write puts the list there instead.

    check_docs.py yaml CONVGEN TEMPLATES ROOT
        Every ```yaml block of the same documents passes `CONVGEN check`
        (the real parser and planner). A block is one of:
          - a whole spec (no marker): checked as it is;
          - a tuning database (its first key is `convgen_tuning`): checked
            with `check --tuning` against a one-workload spec;
          - a fragment, marked by the comment `<!-- yaml fragment -->` or
            `<!-- yaml fragment; defaults: {<workload keys>} -->` on the
            line before its fence (blank lines between allowed): workloads
            (a block that starts with `- `) or the keys of one workload (a
            `schedule:`, say), checked inside a spec whose `defaults` are
            the marker's; `; archs: <list>` after them checks it for those
            GPUs (`check --archs`).

Exit status: 0 when everything matches, 1 when something does not (each
difference is printed with the document's file:line), 2 on bad arguments.
"""
import difflib
import glob
import os
import re
import subprocess
import sys
import tempfile
import textwrap

# The generated blocks: `convgen <command>`'s output between the markers
# `<!-- convgen <command>: begin ... -->` and `<!-- convgen <command>: end -->`,
# and what it is, for messages.
GENERATED = {"keys": "reference of the spec keys", "limits": "table of size limits"}


def generated_begin(command):
    return re.compile(r"^<!-- convgen " + command + r": begin\b.*-->$")


def generated_end(command):
    return f"<!-- convgen {command}: end -->"


COPY_MARKER = re.compile(r"^\s*<!-- copy of (\S+) -->\s*$")
FRAGMENT_MARKER = re.compile(r"^\s*<!-- yaml fragment(?:; defaults: (\{.*?\}))?(?:; archs: (\S+))? -->\s*$")
FENCE = re.compile(r"^(\s*)```(\S*)\s*$")


def documents(root):
    paths = [os.path.join(root, "README.md")]
    paths += sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    paths += sorted(glob.glob(os.path.join(root, "examples", "*", "README.md")))
    paths += sorted(glob.glob(os.path.join(root, "examples", "README.md")))
    return [p for p in paths if os.path.isfile(p)]


class Block:
    """A fenced code block: its language, its text (dedented by the fence's
    indent), the 1-based line of its opening fence, the lines (0-based,
    end exclusive) of its body, the comment line before it, if any, and the
    fence's indent."""

    def __init__(self, lang, text, fence_line, body, marker, indent):
        self.lang, self.text, self.fence_line, self.body, self.marker = lang, text, fence_line, body, marker
        self.indent = indent


def blocks(lines):
    found = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m or not m.group(2):
            i += 1
            continue
        indent, lang = m.group(1), m.group(2)
        j = i + 1
        while j < len(lines) and lines[j].rstrip() != indent + "```":
            j += 1
        if j == len(lines):
            raise SystemExit(f"line {i + 1}: the ```{lang} block is never closed")
        body = [line[len(indent):] if line.startswith(indent) else line.lstrip() for line in lines[i + 1:j]]
        k = i - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        marker = lines[k].strip() if k >= 0 and lines[k].strip().startswith("<!--") else ""
        found.append(Block(lang, "".join(body), i + 1, (i + 1, j), marker, len(indent)))
        i = j + 1
    return found


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return f.readlines()


def write_lines(path, lines):
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(lines)


def diff(expected, actual, expected_name, actual_name):
    return "".join(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True), expected_name,
                                        actual_name))


def run(cmd):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


# ---------------------------------------------------------------------------

def check_copies(root, write):
    failures = 0
    copies = 0
    for doc in documents(root):
        lines = read_lines(doc)
        rel_doc = os.path.relpath(doc, root)
        # Bottom up, so that rewriting one block keeps the line numbers of those above.
        for block in reversed(blocks(lines)):
            m = COPY_MARKER.match(block.marker)
            if not m:
                continue
            copies += 1
            source = os.path.join(root, m.group(1))
            if not os.path.isfile(source):
                print(f"{rel_doc}:{block.fence_line}: the block is marked as a copy of {m.group(1)}, "
                      "which does not exist")
                failures += 1
                continue
            with open(source, encoding="utf-8") as f:
                text = f.read()
            if block.text == text:
                continue
            if write:
                indent = FENCE.match(lines[block.fence_line - 1]).group(1)
                lines[block.body[0]:block.body[1]] = [indent + l if l.strip() else l for l in text.splitlines(True)]
                write_lines(doc, lines)
                print(f"{rel_doc}:{block.fence_line}: copied {m.group(1)}")
                continue
            print(f"{rel_doc}:{block.fence_line}: the block differs from {m.group(1)}, which it shows whole:")
            print(diff(text, block.text, m.group(1), f"{rel_doc}:{block.fence_line}"))
            failures += 1
    if copies == 0:
        print(f"no `<!-- copy of PATH -->` block in {', '.join(documents(root))}: "
              "the README must show examples/consumer/CMakeLists.txt")
        return 1
    if failures:
        print(f"FAIL: {failures} block(s) differ from the files they show; update the document, or run\n"
              f"  {sys.argv[0]} copies {root} --write")
        return 1
    print(f"ok: {copies} block(s) are the files they show")
    return 0


def check_block(doc, begin_re, begin_text, end_line, expected, source, write, why, refresh):
    """DOC's lines between the one line matching begin_re (`begin_text` shows it) and the one equal to end_line
    against `expected` (`source` says what it is); --write puts `expected` there. `why` says what a difference
    means, `refresh` how to mend it."""
    lines = read_lines(doc)
    begin = [i for i, line in enumerate(lines) if begin_re.match(line.strip())]
    end = [i for i, line in enumerate(lines) if line.strip() == end_line]
    if len(begin) != 1 or len(end) != 1 or end[0] < begin[0]:
        print(f"{doc}: expected one `{begin_text}` line and, after it, one `{end_line}` line")
        return 1
    current = "".join(lines[begin[0] + 1:end[0]])
    if current == expected:
        print(f"ok: {doc} holds {source}")
        return 0
    if write:
        lines[begin[0] + 1:end[0]] = expected.splitlines(True)
        write_lines(doc, lines)
        print(f"{doc}: wrote {source}")
        return 0
    print(diff(expected, current, source, f"{doc}:{begin[0] + 2}"))
    print(f"FAIL: {doc} does not hold {source} as it is now ({why}). Refresh it:\n{refresh}")
    return 1


def check_generated(command, convgen, doc, write):
    out = run([convgen, command])
    if out.returncode != 0:
        print(f"`{convgen} {command}` failed (exit {out.returncode}):\n{out.stdout}")
        return 1
    return check_block(doc, generated_begin(command), f"<!-- convgen {command}: begin ... -->", generated_end(command),
                       out.stdout,
                       f"the {GENERATED[command]} `convgen {command}` prints", write,
                       "the generator's declarations changed",
                       f"  cmake --build <build dir> --target refresh_docs\n"
                       f"or\n  {sys.argv[0]} {command} {convgen} {doc} --write")


def heading_anchor(title, seen):
    """The anchor GitHub gives a heading: lower case, punctuation and symbols dropped, spaces as hyphens; a
    repeated one numbered."""
    kept = (ch for ch in title.strip().lower() if ch.isalpha() or ch.isdecimal() or ch in " -_")
    anchor = "".join(kept).replace(" ", "-")
    count = seen.get(anchor, 0)
    seen[anchor] = count + 1
    return anchor if count == 0 else f"{anchor}-{count}"


def contents(lines):
    """The list of a document's `## ` sections, each a link to its heading (headings inside code blocks are
    not headings)."""
    items, seen, fence = [], {}, False
    for line in lines:
        if line.lstrip().startswith("```"):
            fence = not fence
        elif not fence and line.startswith("#"):
            level, _, title = line.rstrip("\n").partition(" ")
            if set(level) != {"#"}:
                continue
            anchor = heading_anchor(title, seen)
            if level == "##":
                items.append(f"- [{title}](#{anchor})\n")
    return "".join(items)


def check_contents(doc, write):
    begin = "<!-- contents: begin -->"
    return check_block(doc, re.compile("^" + re.escape(begin) + "$"), begin, "<!-- contents: end -->",
                       contents(read_lines(doc)), "the list of its sections", write,
                       "a section was added, renamed or moved", f"  {sys.argv[0]} contents {doc} --write")


# The spec a tuning database is checked against: the database is read whole
# (each entry's schedule by the spec's own parser) whatever kernels it names.
TUNING_SPEC = """library: docs_tuning_example
workloads:
  - {n: 1, c: 8, h: 8, w: 8, filter: 3, padding: same}
"""


def first_key(text):
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            return line.split(":", 1)[0].strip()
    return ""


def fragment_spec(text, defaults):
    spec = "library: docs_example\n"
    if defaults:
        spec += f"defaults: {defaults}\n"
    spec += "workloads:\n"
    lines = textwrap.dedent(text).splitlines(True)
    first = next((i for i, l in enumerate(lines) if l.strip() and not l.lstrip().startswith("#")), 0)
    if lines and lines[first].startswith("- "):  # workloads
        items = ["  " + l if l.strip() else l for l in lines]
    else:  # the keys of one workload: one list item
        items = [(("  - " if i == first else "    ") + l) if l.strip() else l for i, l in enumerate(lines)]
    return spec + "".join(items)


def check_yaml(convgen, templates, root):
    failures = 0
    counts = {"spec": 0, "tuning database": 0, "fragment": 0}
    with tempfile.TemporaryDirectory(prefix="convgen_docs_") as tmp:
        for doc in documents(root):
            rel_doc = os.path.relpath(doc, root)
            for block in blocks(read_lines(doc)):
                if block.lang != "yaml":
                    continue
                where = f"{rel_doc}:{block.fence_line}"
                name = re.sub(r"[^A-Za-z0-9]+", "_", rel_doc) + f"_line{block.fence_line}"
                fragment = FRAGMENT_MARKER.match(block.marker)
                extra = []
                if fragment:
                    kind = "fragment"
                    text = fragment_spec(block.text, fragment.group(1))
                    if fragment.group(2):
                        extra = ["--archs", fragment.group(2)]
                elif first_key(block.text) == "convgen_tuning":
                    kind = "tuning database"
                    db = os.path.join(tmp, name + ".tuning.yaml")
                    with open(db, "w", encoding="utf-8") as f:
                        f.write(block.text)
                    text = TUNING_SPEC
                    extra = ["--tuning", db]
                else:
                    kind = "spec"
                    if block.marker.startswith("<!-- yaml"):
                        print(f"{where}: the comment before the block, {block.marker}, is not "
                              "`<!-- yaml fragment -->` or `<!-- yaml fragment; defaults: {...} -->`")
                        failures += 1
                        continue
                    text = block.text
                spec = os.path.join(tmp, name + ".yaml")
                with open(spec, "w", encoding="utf-8") as f:
                    f.write(text)
                out = run([convgen, "check", spec, "--templates", templates] + extra)
                counts[kind] += 1
                if out.returncode != 0:
                    failures += 1
                    print(f"{where}: the ```yaml block ({kind}) does not pass `convgen check` "
                          f"(exit {out.returncode}):")
                    message = out.stdout.replace(tmp + os.sep, "")
                    if kind == "fragment":
                        # Its lines moved: show the spec it was checked in.
                        print("  " + message.rstrip().replace("\n", "\n  "))
                        print(f"  the fragment, checked as {name}.yaml:")
                        for n, line in enumerate(text.splitlines(), 1):
                            print(f"  {n:4} | {line}")
                    else:
                        # The block's own lines: name them in the document.
                        checked = name + (".tuning" if kind == "tuning database" else "")
                        print("  " + re.sub(re.escape(checked) + r"\.yaml:(\d+):(\d+)",
                                            lambda m: f"{rel_doc}:{block.fence_line + int(m.group(1))}:"
                                                      f"{int(m.group(2)) + block.indent}",
                                            message).rstrip().replace("\n", "\n  "))
    summary = ", ".join(f"{n} {kind}(s)" for kind, n in counts.items())
    if failures:
        print(f"FAIL: {failures} ```yaml block(s) of the documents fail; checked {summary}")
        return 1
    print(f"ok: every ```yaml block passes `convgen check`: {summary}")
    return 0


def main(argv):
    args = [a for a in argv if a != "--write"]
    write = "--write" in argv
    if len(args) == 2 and args[0] == "copies":
        return check_copies(args[1], write)
    if len(args) == 2 and args[0] == "contents":
        return check_contents(args[1], write)
    if len(args) == 3 and args[0] in GENERATED:
        return check_generated(args[0], args[1], args[2], write)
    if len(args) == 4 and args[0] == "yaml" and not write:
        return check_yaml(args[1], args[2], args[3])
    print(__doc__.strip())
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
