"""Array files, read for kbench.datasets.files' provider: an ``.npz`` (arrays ``X`` and, for a
target, ``y``), an ``.npy`` (a 2-D array, memory-mapped: the target a column, the features views
of the file) and an svmlight/libsvm file. Each is checked before it is read where it can be (an
npz's width from its array header); each refusal names the file and what to do."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kbench.datasets.base import RawData, infer_task_type
from kbench.datasets.table_checks import check_width
from kbench.datasets.tabular import task_type_of
from kbench.spec import INTEGER, shown


def svmlight_arrays(path: Path, source: str):
    """An svmlight/libsvm file's (X, y); a multilabel file (``0,1 1:0.3 …``: labels joined by
    commas) is refused, naming its first such line: a task takes one target; so is a file with
    query ids (``qid:``), whose labels are ranks within a query."""
    from sklearn.datasets import load_svmlight_file

    try:
        X, y, query = load_svmlight_file(str(path), query_id=True)
    except ValueError:
        with path.open("rb") as handle:
            line = next((number for number, text in enumerate(handle, 1)
                         if b"," in (text.split() or [b""])[0]), None)
        if line is None:
            raise
        raise ValueError(f"{source}: line {line} gives several labels (a multilabel file); kbench "
                         "reads one label per row: keep one of them, or convert the file to a "
                         "table with one target column.") from None
    if query.size and query.any():  # sklearn reads a missing qid as 0
        raise ValueError(f"{source}: its rows carry query ids (qid:), a learning-to-rank file "
                         "whose labels are grades within a query; kbench has no ranking task: "
                         "remove the qid: fields to read the grades as classes, or convert the "
                         "file to a table.")
    return X, y


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


def array_task_type(y: np.ndarray, task_type: str | None, source: str) -> str:
    """An array target's task type: the spec's, ``classification`` resolved to binary or
    multiclass as for a table (kbench.datasets.tabular.task_type_of), else read from y."""
    return (infer_task_type(y) if task_type is None
            else task_type_of(np.asarray(y), task_type, source))


def read_npz(path: Path, task_type: str | None, meta: dict, source: str) -> RawData:
    """Arrays ``X`` (numbers) and, for a target, ``y`` (numbers or text labels)."""
    with np.load(path, allow_pickle=False) as archive:
        if "X" not in archive or set(archive.files) - {"X", "y"}:
            raise ValueError(f"{source}: an npz file holds an array named 'X' (and 'y' for a "
                             f"target), nothing else; found {sorted(archive.files)[:10]}.")
        check_width(_npz_columns(archive, "X"), source)
        X, y = archive["X"], (archive["y"] if "y" in archive else None)
    for key, array, kinds, values in (("X", X, "biuf", "real numbers"),
                                      ("y", y, "biufUS", "real numbers or text labels")):
        if array is not None and array.dtype.kind not in kinds:
            raise ValueError(f"{source}: its array {key!r} holds {array.dtype} values; kbench "
                             f"reads {values}: convert it before saving.")
    if y is None or task_type == "unlabeled":
        return RawData(X, None, task_type_of(None, task_type, source), None, meta)
    return RawData(X, y, array_task_type(y, task_type, source), None, meta)


def read_npy(path: Path, target: str | None, task_type: str | None, meta: dict,
             source: str) -> RawData:
    """A memory-mapped 2-D array: features and the target column (the last by default) as
    views of the file, no copy (a target column in the middle costs one copy of the rest);
    with ``task_type=unlabeled``, every column a feature."""
    array = np.load(path, mmap_mode="r", allow_pickle=False)
    unlabeled = task_type == "unlabeled"
    if array.ndim != 2 or not np.issubdtype(array.dtype, np.number):
        raise ValueError(f"{source}: a .npy file must hold a 2-D numeric array (rows × features "
                         f"and the target), got shape {array.shape} of {array.dtype}.")
    d = array.shape[1]
    check_width(d, source)
    if unlabeled and target is not None:
        raise ValueError(f"{source}: task_type=unlabeled takes no target (every column is a "
                         f"feature); drop target={target}.")
    if unlabeled:
        meta.update(memory_mapped=True)
        return RawData(array, None, task_type_of(None, task_type, source), None, meta)
    if d < 2:
        raise ValueError(f"{source}: its array has {d} column, a target and no feature column; a "
                         ".npy holds the features and the target (or only features, with "
                         "task_type=unlabeled).")
    if target is not None and not INTEGER.match(str(target)):  # ASCII digits: int() reads ٣ as 3
        raise ValueError(f"{source}: target must be a column index of the .npy array, got "
                         f"{shown(target)}.")
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
    return RawData(X, np.asarray(y), array_task_type(y, task_type, source), None, meta)
