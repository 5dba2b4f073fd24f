"""Checks of a table file before and after pandas parses it: its width (every format), and
for a text table (csv, tsv, txt) its header, binary content or UTF-16, a short row, a
number too large for a float64; each refusal names the file and what to do."""

from __future__ import annotations

import codecs
import csv
import os
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

from kbench.datasets.base import CLASSIFICATION, RawData
from kbench.datasets.text_numbers import overflow_error, parse_numbers
from kbench.spec import FLOAT, shown

#: the widest table kbench reads: 10 000 features is far beyond the data kernel
#: approximations are benchmarked on, and a wider file is refused from its header in
#: milliseconds, where pandas took 76 s to parse a million-column csv (of two rows)
MAX_COLUMNS = 10_000
#: the most of a csv's first line (its header) that is read to count its columns, so that a
#: file without a newline is not read whole: MAX_COLUMNS names of 100 bytes
HEADER_BYTES = 100 * MAX_COLUMNS
#: the largest text table read: a quarter of the machine's memory (pandas' parse takes a
#: few times the file's size)
MAX_TEXT_BYTES = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 4


def refuse_repeated(names, source: str) -> None:
    repeated = sorted(name for name, count in Counter(names).items() if count > 1)
    if "" in repeated:
        raise ValueError(f"{source}: the header has several empty column names: two separators in "
                         "a row (columns aligned with several spaces, say); name the separator as "
                         "a regular expression, e.g. sep=\\s+ for any run of spaces.")
    if repeated:
        raise ValueError(f"{source}: the column name(s) {', '.join(map(repr, repeated[:5]))} "
                         "appear more than once; name each column once (a target or feature of a "
                         "repeated name is ambiguous).")


def refuse_unnamed(frame, source: str, drop=None) -> None:
    """A text table's column that holds values under an empty header field (pandas names it
    ``Unnamed: <position>``): most often row labels, which pandas' ``to_csv`` writes unless
    ``index=False``; read as a feature they would be noise, or a leak when they follow the
    target."""
    dropped = {drop} if isinstance(drop, str) else set(drop or ())
    for position, name in enumerate(frame.columns):
        if name == f"Unnamed: {position}" and name not in dropped and frame[name].notna().any():
            raise ValueError(f"{source}: column {position + 1} holds values but has no name in the "
                             "header (row labels, as pandas' to_csv writes them without "
                             "index=False, say); name it in the header, or leave it out with "
                             f"drop=Unnamed%3A%20{position}.")


def check_header(path: Path, sep: str, source: str) -> None:
    """Refuse a csv wider than ``MAX_COLUMNS`` from its first non-blank line (the header, read
    by Python's csv module, quotes as pandas reads them) before pandas parses the file. At
    most ``HEADER_BYTES`` are read: a first line longer than that is refused too. The file is
    scanned for a NUL byte (binary data) in blocks, at disk speed."""
    import io

    size = path.stat().st_size
    if size > MAX_TEXT_BYTES:
        raise ValueError(f"{source}: {size / 2**30:.1f} GiB of text; parsing takes a few times "
                         "that in memory, and kbench reads text tables up to "
                         f"{MAX_TEXT_BYTES / 2**30:.1f} GiB (a quarter of this machine's memory): "
                         "convert it to .parquet or .npy, which are read typed.")
    with path.open("rb") as handle:
        head = handle.read(HEADER_BYTES + 1)
        nul = _first_nul(head, handle)
    if nul >= 0 and _utf16(head):
        raise ValueError(f"{source}: UTF-16 text (a NUL byte beside every character), and kbench "
                         "reads UTF-8: convert it, e.g. iconv -f UTF-16 -t UTF-8.")
    if nul >= 0:
        raise ValueError(f"{source}: a NUL byte at byte {nul}: binary data, not a text table; "
                         "check that the file is a csv.")
    # pandas drops a BOM too
    text = io.StringIO(head[:HEADER_BYTES].decode("utf-8-sig", "replace"), newline="")
    if len(sep) == 1:
        rows = (row for row in csv.reader(text, delimiter=sep) if row)
    else:  # pandas reads a longer separator as a regular expression
        rows = (re.split(sep, line.rstrip("\r\n")) for line in text if line.strip())
    header = _next_row(rows)
    complete = len(head) <= HEADER_BYTES or text.getvalue()[:text.tell()].endswith(("\n", "\r"))
    if header is not None and len(header) > MAX_COLUMNS:
        check_width(len(header), source, at_least=not complete)
    if not complete:
        raise ValueError(f"{source}: its first line (the header) is longer than {HEADER_BYTES} "
                         f"bytes; kbench reads tables of at most {MAX_COLUMNS} columns with names "
                         "of up to 100 bytes: shorten the names, or check that the file is a "
                         "table.")
    if header and all(FLOAT.match(name.strip()) for name in header):
        raise ValueError(f"{source}: its first line holds only numbers "
                         f"({shown(header[0].strip(), 24)}, …): a csv's first line names its "
                         "columns; add a header line.")
    if header:
        refuse_repeated(header, source)
        # cut short at the end of ``head``, it counts fewer fields, never more
        first = _next_row(rows)
        if first is not None and len(first) > len(header):
            raise ValueError(f"{source}: its first row has {len(first)} fields, its header "
                             f"{len(header)} names (pandas would read the first "
                             f"{len(first) - len(header)} field(s) as row labels and shift every "
                             "column); name every column in the header, or check sep=.")


def _next_row(rows) -> list[str] | None:
    """The next row of a csv reader, None at the end or where it cannot be read (a field
    longer than 128 kB, a bad separator: pandas says what is wrong)."""
    try:
        return next(rows, None)
    except (csv.Error, re.error):
        return None


def _readable(rows):
    """The rows of a csv reader up to one it cannot read (pandas read the file: a field longer
    than 128 kB)."""
    while (row := _next_row(rows)) is not None:
        yield row


def _utf16(head: bytes) -> bool:
    """Whether a file's first bytes are UTF-16 text: a byte-order mark, or (ASCII text without
    one) a NUL at every other byte."""
    start = head[:64]
    return start[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE) or (
        len(start) >= 8 and (not any(start[1::2]) or not any(start[0::2])))


def _first_nul(head: bytes, handle, block: int = 1 << 24) -> int:
    """The offset of the first NUL byte of a file whose first bytes ``head`` were read from
    ``handle``, -1 if there is none; the rest is read in blocks, never whole."""
    offset, chunk = 0, head
    while chunk:
        nul = chunk.find(bytes(1))
        if nul >= 0:
            return offset + nul
        offset += len(chunk)
        chunk = handle.read(block)
    return -1


def check_overflow(frame, path: Path, sep: str, source: str) -> None:
    """pandas reads a number too large for a float64 (``1e400``) as infinity: a numeric
    column with an infinity is read again as text (only then), and an infinity that was not
    written ``inf`` is an error naming the column, the row and the value."""

    infinite = [j for j, dtype in enumerate(frame.dtypes) if pd.api.types.is_float_dtype(dtype)
                and np.isinf(frame.iloc[:, j].to_numpy(dtype=float, na_value=np.nan)).any()]
    if not infinite:
        return
    # as read before: the same columns
    text = pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False)
    for j in infinite:
        column = text[frame.columns[j]]
        _, overflow = parse_numbers(column)
        if overflow.any():
            row = int(np.argmax(overflow))
            raise overflow_error(source, str(frame.columns[j]), row, column.iloc[row])


def check_short_rows(frame, path: Path, sep: str, source: str) -> None:
    """A row with fewer fields than the header names, which pandas reads as missing values,
    is an error that names its line. The file is read again only when the last column misses a
    value (a short row always leaves it empty)."""
    # (a longer sep is a regex)
    if len(sep) > 1 or frame.shape[1] == 0 or not frame.iloc[:, -1].isna().any():
        return
    with path.open(newline="", encoding="utf-8-sig") as handle:
        rows = csv.reader(handle, delimiter=sep)
        # the header: the first line not blank
        width = len(next((row for row in _readable(rows) if row), []))
        short = next((row for row in _readable(rows) if len(row) < width and "".join(row).strip()),
                     None)
        if short is not None:  # (a line of blanks is skipped, as pandas skips it)
            raise ValueError(f"{source}: line {rows.line_num} has {len(short)} field(s), the "
                             f"header names {width} columns: a short row (pandas would read its "
                             "missing fields as missing values); complete the row, or write its "
                             "empty fields with separators.")


def check_class_texts(raw: RawData, path: Path, sep: str, source: str) -> None:
    """Class labels written differently that read as one number (``01`` and ``1``) would be
    one class: an error naming them. The target column is read again as text, only for a
    classification target read as numbers."""
    if (raw.task_type not in CLASSIFICATION or raw.y is None
            or np.asarray(raw.y).dtype.kind not in "iuf"):
        return
    target = raw.meta["preprocessing"]["target"]
    texts = pd.read_csv(path, sep=sep, usecols=[target], dtype=str, keep_default_na=False,
                        engine="python" if len(sep) > 1 else "c")[target].str.strip()
    spellings = texts.groupby(pd.to_numeric(texts, errors="coerce")).unique()
    merged = next((values for values in spellings if len(values) > 1), None)
    if merged is not None:
        raise ValueError(f"{source}: the target's labels {', '.join(map(repr, sorted(merged)))} "
                         "read as one number, so as classes they would be one; write each class "
                         "one way in the file (or as text that is not a number, such as c01).")


def check_width(columns: int, source: str, at_least: bool = False) -> None:
    if columns > MAX_COLUMNS:
        count = (f"at least {columns} columns (counted in its first {HEADER_BYTES} bytes)"
                 if at_least else f"{columns} columns")
        raise ValueError(f"{source}: the file has {count}, more than kbench's limit of "
                         f"{MAX_COLUMNS} (kbench.datasets.table_checks.MAX_COLUMNS); write the "
                         "columns you need to a smaller file.")
