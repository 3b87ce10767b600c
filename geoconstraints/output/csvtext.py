"""The CSV files' text, byte for byte as ``DataFrame.to_csv(index=False, lineterminator="\\r\\n")``
writes it, built with pyarrow's compute functions (C++) instead of Python's csv writer.

pandas hands every cell to the standard library's csv writer as a Python object: a county's
parcels table (1,000,000 rows, 25 columns) takes 10 s. Here each column becomes its cells'
text as one Arrow array (floats as Python's ``repr``, text quoted where the csv writer quotes
it), the columns are joined into rows with ``binary_join_element_wise`` and the rows written as
one buffer, a block of :data:`CHUNK_ROWS` rows at a time. A column of any other type (dates,
mixed objects, nullable integers ...), a table of one column (the csv writer quotes an empty
row) or of no rows is written by pandas, as before.

``pyarrow.csv.write_csv`` itself cannot write these bytes: it quotes every text value (or
refuses one holding a quote) and prints ``100.0`` as ``100`` and ``1e-05`` as ``0.00001``.
"""

from __future__ import annotations

import csv
import io
from typing import IO

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

CHUNK_ROWS = 65_536
"""Rows joined and written at a time (bounds the memory of the text to a few tens of MB)."""

_QUOTE_CHARS = '[,"\r\n]'
"""A cell holding one of these is quoted (QUOTE_MINIMAL with CR LF rows)."""
_QUOTE_BYTES = b',"\r\n'

PLAIN_FLOAT = (1e-4, 1e10)
"""Magnitudes (zero too) whose Python ``repr`` is fixed-point and Arrow's text (fixed-point from
1e-6 to 1e10) the same digits: Arrow's text is used, with ``.0`` added where it has no decimal
point. Other floats (``1e-05``, ``10000000000.0``, ``inf``) are formatted by numpy."""


def _chunks(cells: pa.Array | pa.ChunkedArray) -> list[pa.Array]:
    return list(cells.chunks) if isinstance(cells, pa.ChunkedArray) else [cells]


def _utf8(cells: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """The bytes and the ``len + 1`` value offsets (into those bytes) of a string array."""
    buffers = cells.buffers()
    width = np.int64 if pa.types.is_large_string(cells.type) else np.int32
    offsets = np.frombuffer(buffers[1], dtype=width)[cells.offset: cells.offset + len(cells) + 1]
    data = np.frombuffer(buffers[2], dtype=np.uint8) if buffers[2] is not None else np.zeros(0, np.uint8)
    return data, offsets


def _byte_table(chars: bytes) -> np.ndarray:
    table = np.zeros(256, dtype=bool)
    table[np.frombuffer(chars, dtype=np.uint8)] = True
    return table


def arrow_text(values: pd.Series) -> pa.Array | pa.ChunkedArray:
    """A column of pandas' string dtype as Arrow strings (without a copy when pyarrow holds it)."""
    return pa.array(values.array, type=pa.string())


def holds_any(cells: pa.Array | pa.ChunkedArray, chars: bytes) -> bool:
    """Whether any text of ``cells`` holds one of the (ASCII) ``chars`` (a scan of its bytes).

    Examples
    --------
    >>> holds_any(pa.array(["ab", None, "c,d"]), b","), holds_any(pa.array(["ab", None]), b",")
    (True, False)
    """
    table = _byte_table(chars)
    for chunk in _chunks(cells):
        data, offsets = _utf8(chunk)
        if len(offsets) > 1 and table[data[offsets[0]: offsets[-1]]].any():
            return True
    return False


def starts_with_any(cells: pa.Array | pa.ChunkedArray, chars: bytes) -> np.ndarray:
    """Whether each text of ``cells`` begins with one of the (ASCII) ``chars``; False where missing.

    Examples
    --------
    >>> starts_with_any(pa.array(["=1", "", None, "a=", "@x"]), b"=@").tolist()
    [True, False, False, False, True]
    """
    table = _byte_table(chars)
    out = []
    for chunk in _chunks(cells):
        data, offsets = _utf8(chunk)
        first = offsets[:-1]
        hit = np.zeros(len(chunk), dtype=bool)
        filled = offsets[1:] > first
        hit[filled] = table[data[first[filled]]]
        if chunk.null_count:
            hit &= chunk.is_valid().to_numpy(zero_copy_only=False)
        out.append(hit)
    return np.concatenate(out) if out else np.zeros(0, dtype=bool)


def quoted(cells: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """Text cells as Python's csv writer writes them: a cell holding a comma, a quote, CR or LF
    in quotes, its quotes doubled; others as they are (missing values stay missing).

    Examples
    --------
    >>> quoted(pa.array(["a", 'b"c', "x,y", None])).to_pylist()
    ['a', '"b""c"', '"x,y"', None]
    """
    if not holds_any(cells, _QUOTE_BYTES):
        return cells
    needs = pc.match_substring_regex(cells, _QUOTE_CHARS)
    wrapped = pc.binary_join_element_wise('"', pc.replace_substring(cells, '"', '""'), '"', "")
    return pc.if_else(needs, wrapped, cells)


def float_text(values: np.ndarray) -> pa.Array:
    """numpy's ``str`` of each float64 (what pandas writes: Python's ``repr``, ``100.0``,
    ``1e-05``), missing for NaN.

    Examples
    --------
    >>> float_text(np.array([100.0, 0.25, -0.0, 1e-05, 1e16, np.inf, np.nan])).to_pylist()
    ['100.0', '0.25', '-0.0', '1e-05', '1e+16', 'inf', None]
    """
    v = np.asarray(values, dtype=np.float64)
    nan = np.isnan(v)
    text = pa.array(v, mask=nan).cast(pa.string())  # shortest round-trip digits, as repr
    a = np.abs(v)
    plain = ((a >= PLAIN_FLOAT[0]) & (a < PLAIN_FLOAT[1])) | (a == 0)
    whole = plain.copy()  # whole numbers: Arrow writes them without a decimal point
    whole[plain] = v[plain] == np.trunc(v[plain])
    if whole.any():  # 100 -> 100.0, -0 -> -0.0
        text = pc.if_else(pa.array(whole), pc.binary_join_element_wise(text, ".0", ""), text)
    odd = ~plain & ~nan
    if odd.any():  # 1e-05, 1e+16, inf: numpy's text
        numpy_text = pa.chunked_array([pa.array(v[odd].astype(str), type=pa.string())]).combine_chunks()
        text = pc.replace_with_mask(text, pa.array(odd), numpy_text)
    return text


def cell_text(col: pd.Series) -> pa.Array | pa.ChunkedArray | None:
    """The CSV text of each cell of ``col`` as pandas writes it (missing values missing), or
    None for a column of a type not handled here."""
    dtype = col.dtype
    if isinstance(dtype, np.dtype):
        if dtype == np.float64:
            return float_text(col.to_numpy())
        if dtype.kind in "iu":
            return pa.array(col.to_numpy()).cast(pa.string())
        if dtype.kind == "b":
            return pc.if_else(pa.array(col.to_numpy()), "True", "False")
        if dtype != object or pd.api.types.infer_dtype(col, skipna=True) not in ("string", "empty"):
            return None
        return quoted(pa.array(col.to_numpy(), type=pa.string(), from_pandas=True))
    if isinstance(dtype, pd.StringDtype):
        return quoted(arrow_text(col))
    return None


def header_line(columns: pd.Index) -> str:
    """The header row as pandas writes it (through Python's csv writer)."""
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL).writerow(list(columns))
    return buf.getvalue()


def _rows(table: pd.DataFrame, start: int, stop: int) -> pa.Array | None:
    """Rows ``start:stop`` of ``table`` as one text array, each row ending in CR LF; None when a
    column is of a type not handled here."""
    cells = []
    for j in range(table.shape[1]):
        text = cell_text(table.iloc[start:stop, j])
        if text is None:
            return None
        cells.append(pc.fill_null(text, ""))
    cells[-1] = pc.binary_join_element_wise(cells[-1], "\r\n", "")  # the row's end on its last cell
    return pc.binary_join_element_wise(*cells, ",")


def write_table(table: pd.DataFrame, fh: IO[bytes]) -> bool:
    """Write ``table`` to the binary file ``fh`` as ``table.to_csv(fh, index=False,
    lineterminator="\\r\\n")`` would (UTF-8); False, with nothing written, when pandas must
    write it (a column of another type, one column, no rows).

    Examples
    --------
    >>> buf = io.BytesIO()
    >>> write_table(pd.DataFrame({"id": ["P-1", 'a "b", c'], "acres": [1.0, np.nan]}), buf)
    True
    >>> buf.getvalue()
    b'id,acres\\r\\nP-1,1.0\\r\\n"a ""b"", c",\\r\\n'
    """
    n = len(table)
    if table.shape[1] < 2 or not n:
        return False
    first = _rows(table, 0, min(n, CHUNK_ROWS))  # every column's type checked before a byte is written
    if first is None:
        return False
    fh.write(header_line(table.columns).encode("utf-8"))
    for start in range(0, n, CHUNK_ROWS):
        rows = first if start == 0 else _rows(table, start, min(n, start + CHUNK_ROWS))
        fh.write(_text_bytes(rows))  # type: ignore[arg-type]
    return True


def _text_bytes(rows: pa.Array | pa.ChunkedArray) -> bytes | memoryview:
    """The UTF-8 bytes of every value of ``rows`` one after the other."""
    if isinstance(rows, pa.ChunkedArray):
        return b"".join(bytes(_text_bytes(c)) for c in rows.chunks)
    offsets = np.frombuffer(rows.buffers()[1], dtype=np.int32 if rows.type == pa.string() else np.int64)
    lo, hi = int(offsets[rows.offset]), int(offsets[rows.offset + len(rows)])
    return memoryview(rows.buffers()[2])[lo:hi] if hi > lo else b""
