#!/usr/bin/env python3
"""The library names convgen_torch.load() accepts are those convgen accepts:
integrations/torch/library_name.py holds the same reserved words as the
spec reader (generator/src/spec.cpp), and, name by name, refuses what
`convgen check` refuses (a keyword, a reserved name, anything that is not a
C identifier: a path, a quote) and takes what it takes. No torch needed.

  test_library_names.py CONVGEN
"""
import os
import re
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "integrations", "torch"))
from library_name import RESERVED_LIBRARY_NAMES, check_library_name  # noqa: E402

CONVGEN = None
NAMES = ["mobilenet_v2", "_lib", "L", "a" * 64, "int", "std", "posix", "class", "co_await", "typeof", "__lib",
         "my__lib", "_Lib", "9lives", "a" * 65, "lib-a", "../lib", "lib\"); system(\"x", ""]


def spec_reader_words():
    with open(os.path.join(ROOT, "generator", "src", "spec.cpp")) as f:
        text = f.read()
    table = re.search(r"kReservedWords = \{(.*?)\};", text, re.S)
    return frozenset(re.findall(r'"([^"]+)"', table.group(1)))


class LibraryNames(unittest.TestCase):
    def test_the_same_reserved_words_as_the_spec_reader(self):
        self.assertEqual(RESERVED_LIBRARY_NAMES, spec_reader_words())

    def test_each_name_as_convgen_decides(self):
        with tempfile.TemporaryDirectory() as tmp:
            spec = os.path.join(tmp, "s.yaml")
            for name in NAMES:
                with self.subTest(name=name):
                    with open(spec, "w") as f:
                        f.write(f"library: {name!r}\nworkloads:\n  - {{n: 1, c: 8, h: 8, w: 8, filter: 3, padding: same}}\n")
                    convgen_takes = subprocess.run([CONVGEN, "check", spec], capture_output=True).returncode == 0
                    try:
                        check_library_name(name)
                        python_takes = True
                    except ValueError:
                        python_takes = False
                    self.assertEqual(python_takes, convgen_takes)
        self.assertRaises(ValueError, check_library_name, None)


if __name__ == "__main__":
    CONVGEN = sys.argv.pop(1) if len(sys.argv) > 1 else sys.exit(__doc__)
    unittest.main(verbosity=2)
