"""The benchmark CSVs' epilogue words, read from runtime/include/convgen/epilogue.h.

A CSV's `epilogue` column names an epilogue and an activation: the
epilogue's spec word, the activation's, or both joined by '_' ("bias_relu",
"scale_shift_hardswish"); "none" is neither. The words are the spec's, taken
from the two tables of epilogue.h (CONVGEN_EPILOGUE_TABLE and
CONVGEN_ACTIVATION_TABLE), so that no list of them is kept here.
"""

import re
from pathlib import Path

HEADER = Path(__file__).resolve().parent.parent / "runtime" / "include" / "convgen" / "epilogue.h"


def table_body(macro, text, header=HEADER):
    """The rows of one X-macro table in `text` (the file `header`), as one string."""
    body = re.search(r"#define " + macro + r"\(X\)(.*?)\n\n", text, re.S)
    if not body:
        raise SystemExit(f"{header}: no {macro}")
    return body.group(1)


def table_words(macro, text, header=HEADER):
    """The spec words (second column) of the rows of one X-macro table in `text` (the file `header`)."""
    return re.findall(r'X\(\s*\w+\s*,\s*"(\w+)"', table_body(macro, text, header))


def words(header=HEADER):
    """(epilogue words, activation words), "none" first in each."""
    text = Path(header).read_text()
    return table_words("CONVGEN_EPILOGUE_TABLE", text), table_words("CONVGEN_ACTIVATION_TABLE", text)


def split(word, header=HEADER):
    """(epilogue, activation) spec words of a CSV epilogue word, or None if it names none."""
    epilogues, activations = words(header)
    for e in epilogues:
        for a in activations:
            spelled = e if a == "none" else a if e == "none" else f"{e}_{a}"
            if word == spelled:
                return e, a
    return None


def short(word):
    """A short code for a CSV epilogue word: each part's initial and digits ("scale_shift_relu6" -> "ssr6")."""
    if word == "none":
        return ""
    return "".join(part[0] + "".join(ch for ch in part if ch.isdigit()) for part in word.split("_") if part)
