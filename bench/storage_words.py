"""The benchmark CSVs' dtype, layout and math words, read from runtime/include/convgen/dtype.h.

A CSV's `dtype`, `layout` and `math` columns hold the spec's words
("float16", "NHWC", "tf32"), taken from dtype.h's tables
(CONVGEN_DTYPE_TABLE, CONVGEN_LAYOUT_TABLE and CONVGEN_MATH_TABLE), so that
no list of them is kept here. A CSV without these columns is float32 NCHW
with math fp32, the spec's defaults.
"""

import functools
import re
from pathlib import Path

from epilogue_words import table_body, table_words

HEADER = Path(__file__).resolve().parent.parent / "runtime" / "include" / "convgen" / "dtype.h"

DEFAULT_DTYPE, DEFAULT_LAYOUT, DEFAULT_MATH = "float32", "NCHW", "fp32"


def words(header=HEADER):
    """(dtype words, layout words), in table order."""
    text = Path(header).read_text()
    return table_words("CONVGEN_DTYPE_TABLE", text, header), table_words("CONVGEN_LAYOUT_TABLE", text, header)


@functools.lru_cache(maxsize=None)
def element_bytes(header=HEADER):
    """{dtype word: bytes of an element} (the table's fourth column), for every dtype of the table."""
    text = Path(header).read_text()
    body = table_body("CONVGEN_DTYPE_TABLE", text, header)
    sizes = {word: int(size) for word, size in re.findall(r'X\(\s*\w+\s*,\s*"(\w+)"\s*,\s*"\w*"\s*,\s*(\d+)', body)}
    if sorted(sizes) != sorted(table_words("CONVGEN_DTYPE_TABLE", text, header)):
        raise SystemExit(f"{header}: CONVGEN_DTYPE_TABLE's rows do not all give an element size in their fourth column")
    return sizes


def math_words(header=HEADER):
    """The math words (fp32, tf32, 3xtf32), in table order."""
    return table_words("CONVGEN_MATH_TABLE", Path(header).read_text(), header)


def math_of(row):
    """The math of a CSV or result row; fp32 where it does not say."""
    return str(row.get("math") or DEFAULT_MATH)


def of_row(row):
    """(dtype, layout) of a CSV or result row; rows that do not say are float32 NCHW."""
    return (str(row.get("dtype") or DEFAULT_DTYPE), str(row.get("layout") or DEFAULT_LAYOUT))
