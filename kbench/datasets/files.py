"""Local files: csv, parquet, npz, npy and svmlight/libsvm (``file:<path>[:target=col,...]``).

A ``.npy`` file (a 2-D numeric array, the target in its last column unless ``target=<column
index>``) is memory-mapped: the rows of the split are the only copy of the data in memory.
An ``.npz`` file holds ``X`` and, for a target, ``y``. Without a target (an npz without
``y``, a table with ``task_type=unlabeled``, a ``y`` of a single value) the data is
unlabeled: the tasks that need no target (kpca, approximation) run on it, the others
refuse it by design. Tables are preprocessed by kbench.datasets.tabular; the array files are
read by kbench.datasets.array_files.

A file means what it says, or is refused in one line before it is parsed where it can be:
only a regular file is read (a device, a FIFO, a socket or a directory is refused as what it
is, without opening it); a table is at most ``MAX_COLUMNS`` wide, counted from its header
(csv, tsv: the first line, read up to ``HEADER_BYTES``), schema (parquet) or array header
(npy, npz) (kbench.datasets.table_checks); in a table's text column that holds numbers, a stray
value is an error, not a categorical level (``categorical=a;b`` declares columns categorical), and
so is a number too large for a float64 (kbench.datasets.text_numbers.check_text_numbers).
"""

from __future__ import annotations

import csv
import os
import re
import stat
from pathlib import Path

import numpy as np

from kbench._files import expand_home
from kbench.datasets.array_files import array_task_type, read_npy, read_npz, svmlight_arrays
from kbench.datasets.base import (
    DatasetProvider,
    RawData,
    colons_for_commas,
    file_version,
)
from kbench.datasets.table_checks import (
    check_class_texts,
    check_header,
    check_overflow,
    check_short_rows,
    check_width,
    refuse_repeated,
    refuse_unnamed,
)
from kbench.datasets.tabular import (
    DEFAULT_MAX_LEVELS,
    TABLE_OPTIONS,
    default_target_of,
    frame_to_raw,
)
from kbench.hookspecs import hookimpl
from kbench.spec import escape

#: the file types kbench reads, by suffix
TEXT_TABLES, PARQUET, SVMLIGHT = ((".csv", ".tsv", ".txt"), (".parquet", ".pq"),
                                  (".svm", ".svmlight", ".libsvm"))
FORMATS = (*TEXT_TABLES, *PARQUET, ".npz", ".npy", *SVMLIGHT)
#: the formats that take each option; the others hold their target in their own way
_TAKES = {"sep": TEXT_TABLES, "categorical": TEXT_TABLES + PARQUET, "drop": TEXT_TABLES + PARQUET,
          "max_levels": TEXT_TABLES + PARQUET, "target": TEXT_TABLES + PARQUET + (".npy",)}
_OWN_TARGET = {".npz": "its array 'y'", **dict.fromkeys(SVMLIGHT, "the first field of each line")}

_SPECIAL_FILES = ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
                  (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO"),
                  (stat.S_ISSOCK, "a socket"))


def _is_file(name: str) -> bool:
    try:
        return expand_home(name).is_file()
    except (ValueError, OSError):  # an unknown ~user, a NUL
        return False


def _colon_hint(name: str) -> str:
    """Why a path ending in ``:`` or ``:word`` was read whole: parameters after a colon are
    ``key=value`` pairs, so a colon followed by no pair stays in the path."""
    head, colon, tail = name.rpartition(":")
    try:
        if not colon or not head or not expand_home(head).is_file():
            return ""
    except (ValueError, OSError):  # an unknown ~user, a NUL
        return ""
    return (f" ({head} exists; a colon starts the parameters only when key=value pairs follow: "
            + (f"{tail!r} has no '=' (e.g. target={tail})" if tail.strip()
               else "drop the trailing colon")
            + ", and a colon inside a path is written %3A)")


class FileProvider(DatasetProvider):
    """Local csv, parquet, npz (arrays X, y), npy (memory-mapped) and svmlight/libsvm files."""

    name = "file"
    options = {key: TABLE_OPTIONS[key]
               for key in ("target", "task_type", "sep", "categorical", "drop", "max_levels")}

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
            head, _, tail = name.partition(":")
            # parameters joined by ':' (file.csv:n=100:test_size=0.3)
            if "=" in tail and _is_file(head):
                raise ValueError(colons_for_commas(spec, self.name, head, tail)) from None
            raise ValueError(f"{spec}: no such file ({shown}); check the "
                             f"path{_colon_hint(name)}.") from None
        except OSError as exc:
            raise ValueError(f"{spec}: cannot read {shown_path(path)} ({exc.strerror or exc}); "
                             "check the path and its permissions.") from None
        kind = next((kind for test, kind in _SPECIAL_FILES if test(mode)),
                    None if stat.S_ISREG(mode) else "a special file")
        if kind:
            raise ValueError(f"{spec}: {shown_path(path)} is not a regular file ({kind}); name a "
                             "data file (.csv, .tsv, .parquet, .npz, .npy or .svmlight).")

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
        if (params.get("target") is not None or params.get("task_type") == "unlabeled"
                or suffix not in (*TEXT_TABLES, *PARQUET)):
            return params
        try:
            if suffix in PARQUET:
                import pyarrow.parquet as pq

                columns = pq.read_schema(path).names
            else:
                with path.open(newline="", encoding="utf-8-sig") as handle:
                    columns = next(csv.reader(handle,
                                              delimiter=separator(suffix, params.get("sep"))), [])
            return {**params,
                    "target": default_target_of([str(c) for c in columns], f"file:{name}")}
        # (a regex separator, a bad file): loading says
        except (OSError, ValueError, TypeError, csv.Error):
            return params

    def rows_at_most(self, name: str, params: dict) -> int | None:
        """A parquet's or an array's row count from its metadata; a text file's lines (past a
        header), which a quoted line break can only make more (files up to 1 GiB)."""
        path, suffix = expand_home(name), Path(name).suffix.lower()
        try:
            if suffix in PARQUET:
                import pyarrow.parquet as pq

                return pq.ParquetFile(path).metadata.num_rows
            if suffix == ".npy":
                return int(np.load(path, mmap_mode="r").shape[0])
            if suffix in (*TEXT_TABLES, *SVMLIGHT) and path.stat().st_size <= 2**30:
                lines, last = 0, b"\n"
                with path.open("rb") as handle:
                    for chunk in iter(lambda: handle.read(2**24), b""):
                        lines, last = lines + chunk.count(b"\n"), chunk[-1:]
                # (a last line without a line break)
                return lines + (last != b"\n") - (suffix in TEXT_TABLES)
        except (OSError, ValueError, IndexError):  # loading says what is wrong
            return None
        return None

    def load(self, name: str, n: int | None, seed: int, target: str | None = None,
             task_type: str | None = None, sep: str | None = None,
             categorical: list[str] | str | None = None, drop: list[str] | str | None = None,
             max_levels: int = DEFAULT_MAX_LEVELS) -> RawData:
        """``categorical=a;b`` (a single one: ``categorical=a``) one-hot encodes these columns
        of a table whatever they hold, ``drop=a;b`` leaves these out, ``max_levels`` drops a
        text column of more levels; a text column that holds numbers is otherwise refused
        when a value is not a number (text_numbers.check_text_numbers)."""
        source = f"file:{shown_path(name)}"
        self.check_name(name, source)
        path = expand_home(name)
        suffix = path.suffix.lower()
        if suffix not in FORMATS:
            raise ValueError(f"{source}: unknown file type {suffix!r}; kbench reads "
                             f"{', '.join(FORMATS)} (a .txt as a csv): rename the file, or convert "
                             "it.")
        _check_options(suffix, source, target=target, sep=sep, categorical=categorical, drop=drop,
                       max_levels=None if max_levels == DEFAULT_MAX_LEVELS else max_levels)
        meta = {"source": str(path.resolve()), "format": suffix.lstrip("."),
                "version": file_version([path])}
        table = {"categorical": [] if categorical is None else categorical, "drop": drop,
                 "check_text": True, "max_levels": max_levels}
        try:
            if suffix in TEXT_TABLES:
                sep = separator(suffix, sep)
                return _text_table(path, sep, source, target, task_type, meta, table)
            if suffix in PARQUET:
                import pyarrow.parquet as pq

                names = pq.read_schema(path).names
                check_width(len(names), source)
                refuse_repeated(names, source)
                return frame_to_raw(_parquet(path), target, task_type, meta, source, **table)
            if suffix == ".npz":
                return read_npz(path, task_type, meta, source)
            if suffix == ".npy":
                return read_npy(path, target, task_type, meta, source)
            X, y = svmlight_arrays(path, source)
            check_width(X.shape[1], source)  # before the dense copy
            return RawData(X.toarray(), y, array_task_type(y, task_type, source), None, meta)
        except UnicodeDecodeError as exc:
            raise ValueError(f"{source}: not UTF-8 text (byte "
                             f"{exc.object[exc.start:exc.start + 1]!r} cannot be decoded); convert "
                             "the file to UTF-8 (e.g. iconv -f latin1 -t utf-8).") from None
        except ValueError as exc:
            if str(exc).startswith(source):
                raise
            # numpy's advice to unpickle: never followed (it runs code)
            if "allow_pickle" in str(exc):
                raise ValueError(f"{source}: the file holds Python objects (pickled) or is not a "
                                 "NumPy array file; kbench reads arrays of numbers only: save one "
                                 "with numpy.save.") from None
            raise ValueError(f"{source}: could not parse the file: "
                             f"{str(exc).strip()}{_comment_hint(path)}") from None
        except (OSError, OverflowError) as exc:
            raise ValueError(f"{source}: could not parse the file: {exc}") from None
        except re.error as exc:  # a sep of more than one character is a regular expression
            raise ValueError(f"{source}: sep={sep!r} is not a valid regular expression ({exc}); a "
                             "separator of more than one character is read as one.") from None


def _text_table(path: Path, sep: str, source: str, target, task_type, meta: dict,
                table: dict) -> RawData:
    """A csv, tsv or txt table, checked as it is read (kbench.datasets.table_checks)."""
    import pandas as pd

    check_header(path, sep, source)
    # (a regex: no fallback warning)
    frame = pd.read_csv(path, sep=sep, engine="python" if len(sep) > 1 else "c")
    check_overflow(frame, path, sep, source)
    check_short_rows(frame, path, sep, source)
    refuse_unnamed(frame, source, table["drop"])
    raw = frame_to_raw(frame, target, task_type, meta, source, **table)
    check_class_texts(raw, path, sep, source)
    return raw


def _comment_hint(path: Path) -> str:
    """A hint when a text table opens with a '#' line: kbench reads its first line as the header."""
    try:
        with path.open("rb") as handle:
            first = handle.read(1)
    except OSError:
        return ""
    return ("; the file opens with a '#' line, and kbench reads the first line as the header: "
            "remove the comment lines" if first == b"#" else "")


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
        raise ValueError(f"{source}: sep= is empty; name the separator (sep=%3B for ';', sep=%09 "
                         "for a tab), or drop it for the format's own.")
    for option, value in given.items():
        if value is not None and suffix not in _TAKES[option]:
            why = {"sep": "is the separator of a text table (.csv, .tsv, .txt)",
                   "categorical": "names columns of a table (.csv, .tsv, .txt, .parquet)",
                   "drop": "names columns of a table (.csv, .tsv, .txt, .parquet)",
                   "max_levels": "caps a table's text columns (.csv, .tsv, .txt, .parquet)",
                   "target": f"names a column of a table or of an .npy array; a {suffix} file's "
                             f"target is {_OWN_TARGET.get(suffix)}"}[option]
            raise ValueError(f"{source}: {option}= {why}; a {suffix} file has no use for it: drop "
                             "it.")


def _parquet(path: Path):
    """A parquet table (a DataFrame), its named index (``df.set_index(...).to_parquet()``) read
    back as the columns it was: data, not row labels."""
    import pandas as pd  # (as in load: its import is paid by the files read)

    frame = pd.read_parquet(path)
    return frame.reset_index() if any(name is not None for name in frame.index.names) else frame


@hookimpl
def kbench_register_datasets():
    return [FileProvider]
