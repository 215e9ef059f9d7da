"""The benchmark CSVs' dtype and layout words, read from runtime/include/convgen/dtype.h.

A CSV's `dtype` and `layout` columns hold the spec's words ("float16",
"NHWC"), taken from dtype.h's two tables (CONVGEN_DTYPE_TABLE and
CONVGEN_LAYOUT_TABLE), so that no list of them is kept here. A CSV without
these columns is float32 NCHW, the spec's defaults.
"""

from pathlib import Path

from epilogue_words import table_words

HEADER = Path(__file__).resolve().parent.parent / "runtime" / "include" / "convgen" / "dtype.h"

DEFAULT_DTYPE, DEFAULT_LAYOUT = "float32", "NCHW"


def words(header=HEADER):
    """(dtype words, layout words), in table order."""
    text = Path(header).read_text()
    return table_words("CONVGEN_DTYPE_TABLE", text, header), table_words("CONVGEN_LAYOUT_TABLE", text, header)


def of_row(row):
    """(dtype, layout) of a CSV or result row; rows that do not say are float32 NCHW."""
    return (str(row.get("dtype") or DEFAULT_DTYPE), str(row.get("layout") or DEFAULT_LAYOUT))
