"""Local files: csv, parquet, npz, npy and svmlight/libsvm (``file:<path>[:target=col,...]``).

A ``.npy`` file (a 2-D numeric array, the target in its last column unless ``target=<column
index>``) is memory-mapped: the rows of the split are the only copy of the data in memory.
An ``.npz`` file holds ``X`` and, for a target, ``y``. Without a target (an npz without
``y``, a table with ``task_type=unlabeled``, a ``y`` of a single value) the data is
unlabeled: the tasks that need no target (kpca, approximation) run on it, the others
refuse it by design. Tables are preprocessed by kbench.datasets.tabular.

A file means what it says, or is refused in one line before it is parsed where it can be:
only a regular file is read (a device, a FIFO, a socket or a directory is refused as what it
is, without opening it); a table is at most ``MAX_COLUMNS`` wide, counted from its header
(csv, tsv: the first line, read up to ``HEADER_BYTES``), schema (parquet) or array header
(npy, npz); in a table's text column that holds numbers, a stray value is an error, not a
categorical level (``categorical=a;b`` declares columns categorical), and so is a number
too large for a float64 (kbench.datasets.tabular.check_text_numbers).
"""

from __future__ import annotations

import csv
import os
import re
import stat
from collections import Counter
from pathlib import Path

import numpy as np

from kbench._files import expand_home
from kbench.datasets.base import DatasetProvider, RawData, file_version, infer_task_type
from kbench.datasets.tabular import (
    default_target_of,
    frame_to_raw,
    overflow_error,
    parse_numbers,
    task_type_of,
)
from kbench.hookspecs import hookimpl
from kbench.spec import FLOAT, INTEGER, escape, shown

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

#: the file types kbench reads, by suffix
TEXT_TABLES, PARQUET, SVMLIGHT = (".csv", ".tsv", ".txt"), (".parquet", ".pq"), (".svm", ".svmlight", ".libsvm")
FORMATS = (*TEXT_TABLES, *PARQUET, ".npz", ".npy", *SVMLIGHT)
#: the formats that take each option; the others hold their target in their own way
_TAKES = {"sep": TEXT_TABLES, "categorical": TEXT_TABLES + PARQUET, "drop": TEXT_TABLES + PARQUET,
          "target": TEXT_TABLES + PARQUET + (".npy",)}
_OWN_TARGET = {".npz": "its array 'y'", **dict.fromkeys(SVMLIGHT, "the first field of each line")}

_SPECIAL_FILES = ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
                  (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"))


class FileProvider(DatasetProvider):
    """Local csv, parquet, npz (arrays X, y), npy (memory-mapped) and svmlight/libsvm files."""

    name = "file"

    def check_name(self, name: str, spec: str) -> None:
        """A regular file, or a ValueError saying what the path is instead (its status only:
        a FIFO or a device is never opened)."""
        try:
            path = expand_home(name)
        except ValueError as exc:  # an unknown ~user
            raise ValueError(f"{spec}: {exc}") from None
        try:
            mode = path.stat().st_mode
        except (FileNotFoundError, NotADirectoryError, ValueError):  # ValueError: a NUL in the path
            shown = shown_path(path.resolve() if "\0" not in name else path)
            raise ValueError(f"{spec}: no such file ({shown}); check the path.") from None
        except OSError as exc:
            raise ValueError(f"{spec}: cannot read {shown_path(path)} ({exc.strerror or exc}); check the path and its "
                             "permissions.") from None
        kind = next((kind for test, kind in _SPECIAL_FILES if test(mode)), None if stat.S_ISREG(mode) else
                    "a special file")
        if kind:
            raise ValueError(f"{spec}: {shown_path(path)} is not a regular file ({kind}); name a data file (.csv, "
                             ".tsv, .parquet, .npz, .npy or .svmlight).")

    def files(self, name: str) -> list[Path]:
        return [expand_home(name)]

    def canonical(self, name: str) -> str:
        """The absolute path (``~`` expanded, ``..`` folded; a symlink kept as written)."""
        try:
            return os.path.abspath(expand_home(name)) if "\0" not in name else name
        except ValueError:  # an unknown ~user: check_name says so
            return name

    def resolved(self, name: str, params: dict) -> dict:
        """A table's default target named (``y`` is ``target=y``), read from its header or schema;
        an .npy's target as its column index from 0 (the last by default: ``target=-1``); a
        text table's ``sep`` left out when it is the format's own."""
        path, suffix = expand_home(name), Path(name).suffix.lower()
        if params.get("sep") == separator(suffix, None):
            params = {key: value for key, value in params.items() if key != "sep"}
        if suffix == ".npy" and params.get("task_type") != "unlabeled":
            try:
                d = np.load(path, mmap_mode="r").shape[-1]
                column = d - 1 if params.get("target") is None else int(params["target"])
                return {**params, "target": column % d if -d <= column < d else column}
            except (OSError, ValueError, TypeError, IndexError):  # loading says what is wrong
                return params
        if params.get("target") is not None or params.get("task_type") == "unlabeled" or suffix not in \
                (*TEXT_TABLES, *PARQUET):
            return params
        try:
            if suffix in PARQUET:
                import pyarrow.parquet as pq

                columns = pq.read_schema(path).names
            else:
                with path.open(newline="", encoding="utf-8-sig") as handle:
                    columns = next(csv.reader(handle, delimiter=separator(suffix, params.get("sep"))), [])
            return {**params, "target": default_target_of([str(c) for c in columns], f"file:{name}")}
        except (OSError, ValueError, TypeError, csv.Error):  # (a regex separator, a bad file): loading says
            return params

    def load(self, name: str, n: int | None, seed: int, target: str | None = None,
             task_type: str | None = None, sep: str | None = None,
             categorical: list[str] | str | None = None, drop: list[str] | str | None = None) -> RawData:
        """``categorical=a;b`` (a single one: ``categorical=a``) one-hot encodes these columns
        of a table whatever they hold, ``drop=a;b`` leaves these out; a text column that holds numbers is otherwise refused
        when a value is not a number (tabular.check_text_numbers)."""
        import pandas as pd
        from sklearn.datasets import load_svmlight_file
        source = f"file:{shown_path(name)}"
        self.check_name(name, source)
        path = expand_home(name)
        suffix = path.suffix.lower()
        if suffix not in FORMATS:
            raise ValueError(f"{source}: unknown file type {suffix!r}; kbench reads .csv, .tsv, .parquet, .npz, .npy "
                             "and .svm/.svmlight/.libsvm.")
        _check_options(suffix, source, target=target, sep=sep, categorical=categorical, drop=drop)
        meta = {"source": str(path.resolve()), "format": suffix.lstrip("."), "version": file_version([path])}
        table = {"categorical": [] if categorical is None else categorical, "drop": drop, "check_text": True}
        try:
            if suffix in TEXT_TABLES:
                sep = separator(suffix, sep)
                check_header(path, sep, source)
                frame = pd.read_csv(path, sep=sep)
                check_overflow(frame, path, sep, source)
                check_short_rows(frame, path, sep, source)
                return frame_to_raw(frame, target, task_type, meta, source, **table)
            if suffix in PARQUET:
                import pyarrow.parquet as pq

                names = pq.read_schema(path).names
                _check_width(len(names), source)
                _refuse_repeated(names, source)
                return frame_to_raw(pd.read_parquet(path), target, task_type, meta, source, **table)
            if suffix == ".npz":
                return _npz(path, task_type, meta, source)
            if suffix == ".npy":
                return _npy(path, target, task_type, meta, source)
            X, y = load_svmlight_file(str(path))
            _check_width(X.shape[1], source)  # before the dense copy
            return RawData(X.toarray(), y, task_type or infer_task_type(y), None, meta)
        except UnicodeDecodeError as exc:
            raise ValueError(f"{source}: not UTF-8 text (byte {exc.object[exc.start:exc.start + 1]!r} cannot be "
                             "decoded); convert the file to UTF-8 (e.g. iconv -f latin1 -t utf-8).") from None
        except ValueError as exc:
            if str(exc).startswith(source):
                raise
            if "allow_pickle" in str(exc):  # numpy's advice to unpickle: never followed (it runs code)
                raise ValueError(f"{source}: the file holds Python objects (pickled) or is not a NumPy array file; "
                                 "kbench reads arrays of numbers only: save one with numpy.save.") from None
            raise ValueError(f"{source}: could not parse the file: {exc}") from None
        except (pd.errors.ParserError, OSError, OverflowError) as exc:
            raise ValueError(f"{source}: could not parse the file: {exc}") from None
        except re.error as exc:  # a sep of more than one character is a regular expression
            raise ValueError(f"{source}: sep={sep!r} is not a valid regular expression ({exc}); a separator of "
                             "more than one character is read as one.") from None


def separator(suffix: str, sep: str | None) -> str:
    """A text table's separator: ``sep``, else a tab for .tsv and a comma for the others."""
    return sep if sep else ("\t" if suffix == ".tsv" else ",")


def shown_path(path: Path) -> str:
    """A path for a message: its control and invisible formatting characters percent-escaped
    (a right-to-left override or a terminal escape is not printed raw)."""
    return escape(str(path), reserved="")


def _check_options(suffix: str, source: str, **given) -> None:
    """A format's own options only (:data:`_TAKES`): an option the format has no use for is
    refused, not ignored."""
    if given.get("sep") == "":
        raise ValueError(f"{source}: sep= is empty; name the separator (sep=%3B for ';', sep=%09 for a tab), or drop "
                         "it for the format's own.")
    for option, value in given.items():
        if value is not None and suffix not in _TAKES[option]:
            why = {"sep": "is the separator of a text table (.csv, .tsv, .txt)",
                   "categorical": "names columns of a table (.csv, .tsv, .txt, .parquet)",
                   "drop": "names columns of a table (.csv, .tsv, .txt, .parquet)",
                   "target": f"names a column of a table or of an .npy array; a {suffix} file's target is "
                             f"{_OWN_TARGET.get(suffix)}"}[option]
            raise ValueError(f"{source}: {option}= {why}; a {suffix} file has no use for it: drop it.")


def _refuse_repeated(names, source: str) -> None:
    repeated = sorted(name for name, count in Counter(names).items() if count > 1)
    if repeated:
        raise ValueError(f"{source}: the column name(s) {', '.join(map(repr, repeated[:5]))} appear more than once; "
                         "name each column once (a target or feature of a repeated name is ambiguous).")


def check_header(path: Path, sep: str, source: str) -> None:
    """Refuse a csv wider than ``MAX_COLUMNS`` from its first non-blank line (the header, read
    by Python's csv module, quotes as pandas reads them) before pandas parses the file. At
    most ``HEADER_BYTES`` are read: a first line longer than that is refused too. The file is
    scanned for a NUL byte (binary data) in blocks, at disk speed."""
    import io

    size = path.stat().st_size
    if size > MAX_TEXT_BYTES:
        raise ValueError(f"{source}: {size / 2**30:.1f} GiB of text; parsing takes a few times that in memory, "
                         f"and kbench reads text tables up to {MAX_TEXT_BYTES / 2**30:.1f} GiB (a quarter of this "
                         f"machine's memory): convert it to .parquet or .npy, which are read typed.")
    with path.open("rb") as handle:
        head = handle.read(HEADER_BYTES + 1)
        nul = _first_nul(head, handle)
    if nul >= 0:
        raise ValueError(f"{source}: a NUL byte at byte {nul}: binary data, not a text table; check that the file "
                         "is a csv.")
    text = io.StringIO(head[:HEADER_BYTES].decode("utf-8-sig", "replace"), newline="")  # pandas drops a BOM too
    if len(sep) == 1:
        rows = (row for row in csv.reader(text, delimiter=sep) if row)
    else:  # pandas reads a longer separator as a regular expression
        rows = (re.split(sep, line.rstrip("\r\n")) for line in text if line.strip())
    header = _next_row(rows)
    complete = len(head) <= HEADER_BYTES or text.getvalue()[:text.tell()].endswith(("\n", "\r"))
    if header is not None and len(header) > MAX_COLUMNS:
        _check_width(len(header), source, at_least=not complete)
    if not complete:
        raise ValueError(f"{source}: its first line (the header) is longer than {HEADER_BYTES} bytes; kbench "
                         f"reads tables of at most {MAX_COLUMNS} columns with names of up to 100 bytes: shorten "
                         "the names, or check that the file is a table.")
    if header and all(FLOAT.match(name.strip()) for name in header):
        raise ValueError(f"{source}: its first line holds only numbers ({shown(header[0].strip(), 24)}, …): a "
                         "csv's first line names its columns; add a header line.")
    if header:
        _refuse_repeated(header, source)
        first = _next_row(rows)  # cut short at the end of ``head``, it counts fewer fields, never more
        if first is not None and len(first) > len(header):
            raise ValueError(f"{source}: its first row has {len(first)} fields, its header {len(header)} names (pandas "
                             f"would read the first {len(first) - len(header)} field(s) as row labels and shift every "
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
    import pandas as pd

    infinite = [j for j, dtype in enumerate(frame.dtypes) if pd.api.types.is_float_dtype(dtype)
                and np.isinf(frame.iloc[:, j].to_numpy(dtype=float, na_value=np.nan)).any()]
    if not infinite:
        return
    text = pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False)  # as read before: the same columns
    for j in infinite:
        column = text[frame.columns[j]]
        _, overflow = parse_numbers(column)
        if overflow.any():
            row = int(np.argmax(overflow))
            raise overflow_error(source, str(frame.columns[j]), row, column.iloc[row])


def check_short_rows(frame, path: Path, sep: str, source: str) -> None:
    """A row with fewer fields than the header names, which pandas reads as missing values,
    is an error that names its line. The file is read again (only when a value is missing)."""
    if len(sep) > 1 or not frame.isna().to_numpy().any():  # (pandas reads a longer separator as a regex)
        return
    with path.open(newline="", encoding="utf-8-sig") as handle:
        rows = csv.reader(handle, delimiter=sep)
        width = len(next((row for row in _readable(rows) if row), []))  # the header: the first line not blank
        short = next((row for row in _readable(rows) if len(row) < width and "".join(row).strip()), None)
        if short is not None:  # (a line of blanks is skipped, as pandas skips it)
            raise ValueError(f"{source}: line {rows.line_num} has {len(short)} field(s), the header names {width} "
                             "columns: a short row (pandas would read its missing fields as missing values); "
                             "complete the row, or write its empty fields with separators.")


def _check_width(columns: int, source: str, at_least: bool = False) -> None:
    if columns > MAX_COLUMNS:
        count = f"at least {columns} columns (counted in its first {HEADER_BYTES} bytes)" if at_least else \
            f"{columns} columns"
        raise ValueError(f"{source}: the file has {count}, more than kbench's limit of {MAX_COLUMNS} "
                         "(kbench.datasets.files.MAX_COLUMNS); write the columns you need to a smaller file.")


def _npz_columns(archive, key: str) -> int:
    """The number of columns of the array ``key`` of an npz archive, from its .npy header
    (the data is not read; 0 when the header is of a version numpy reads only whole)."""
    from numpy.lib import format as npy

    member = f"{key}.npy" if f"{key}.npy" in archive.zip.namelist() else key
    with archive.zip.open(member) as handle:
        version = npy.read_magic(handle)
        read = {(1, 0): npy.read_array_header_1_0, (2, 0): npy.read_array_header_2_0}.get(version)
        shape = read(handle)[0] if read else ()
    return int(shape[1]) if len(shape) >= 2 else 0


def _npz(path: Path, task_type: str | None, meta: dict, source: str) -> RawData:
    """Arrays ``X`` (numbers) and, for a target, ``y`` (numbers or text labels)."""
    with np.load(path, allow_pickle=False) as archive:
        if "X" not in archive or set(archive.files) - {"X", "y"}:
            raise ValueError(f"{source}: an npz file holds an array named 'X' (and 'y' for a target), nothing else; "
                             f"found {sorted(archive.files)[:10]}.")
        _check_width(_npz_columns(archive, "X"), source)
        X, y = archive["X"], (archive["y"] if "y" in archive else None)
    for key, array, kinds in (("X", X, "biuf"), ("y", y, "biufUS")):
        if array is not None and array.dtype.kind not in kinds:
            raise ValueError(f"{source}: its array {key!r} holds {array.dtype} values; kbench reads "
                             f"{'real numbers' if key == 'X' else 'real numbers or text labels'}: convert it before saving.")
    if y is None or task_type == "unlabeled":
        return RawData(X, None, task_type_of(None, task_type, source), None, meta)
    return RawData(X, y, task_type or infer_task_type(y), None, meta)


def _npy(path: Path, target: str | None, task_type: str | None, meta: dict, source: str) -> RawData:
    """A memory-mapped 2-D array: features and the target column (the last by default) as
    views of the file, no copy (a target column in the middle costs one copy of the rest)."""
    array = np.load(path, mmap_mode="r", allow_pickle=False)
    if array.ndim != 2 or array.shape[1] < 2 or not np.issubdtype(array.dtype, np.number):
        raise ValueError(f"{source}: a .npy file must hold a 2-D numeric array (rows × features and "
                         f"the target), got shape {array.shape} of {array.dtype}.")
    d = array.shape[1]
    _check_width(d, source)
    if target is not None and not INTEGER.match(str(target)):  # ASCII digits: int() reads ٣ as 3
        raise ValueError(f"{source}: target must be a column index of the .npy array, got {shown(target)}.")
    column = d - 1 if target is None else int(target)
    if not -d <= column < d:
        raise ValueError(f"{source}: target column {column} is out of range for {d} columns.")
    column %= d
    if column == d - 1:
        X = array[:, :-1]
    elif column == 0:
        X = array[:, 1:]
    else:
        X = np.delete(array, column, axis=1)
    y = array[:, column]
    meta.update(target=column, memory_mapped=True)
    return RawData(X, np.asarray(y), task_type or infer_task_type(y), None, meta)


@hookimpl
def kbench_register_datasets():
    return [FileProvider]
