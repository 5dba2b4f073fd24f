"""Local files: csv, parquet, npz, npy and svmlight/libsvm (``file:<path>[:target=col,...]``).

A ``.npy`` file (a 2-D numeric array, the target in its last column unless ``target=<column
index>``) is memory-mapped: the rows of the split are the only copy of the data in memory.
An ``.npz`` file holds ``X`` and, for a target, ``y``. Without a target (an npz without
``y``, a table with ``task_type=unlabeled``, a ``y`` of a single value) the data is
unlabeled: the tasks that need no target (kpca, approximation) run on it, the others
refuse it by design. Tables are preprocessed by kbench.datasets.tabular.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kbench.datasets.base import DatasetProvider, RawData, infer_task_type
from kbench.datasets.tabular import frame_to_raw, task_type_of
from kbench.hookspecs import hookimpl


class FileProvider(DatasetProvider):
    """Local csv, parquet, npz (arrays X, y), npy (memory-mapped) and svmlight/libsvm files."""

    name = "file"

    def check_name(self, name, spec):
        path = Path(name).expanduser()
        if not path.is_file():
            raise ValueError(f"{spec}: no such file ({path.resolve()}); check the path.")

    def load(self, name: str, n: int | None, seed: int, target: str | None = None,
             task_type: str | None = None, sep: str | None = None):
        import pandas as pd
        from sklearn.datasets import load_svmlight_file
        path = Path(name).expanduser()
        source = f"file:{name}"
        self.check_name(name, source)
        suffix = path.suffix.lower()
        meta = {"source": str(path.resolve()), "format": suffix.lstrip(".")}
        try:
            if suffix in (".csv", ".tsv", ".txt"):
                frame = pd.read_csv(path, sep=sep if sep else ("\t" if suffix == ".tsv" else ","))
                return frame_to_raw(frame, target, task_type, meta, source)
            if suffix in (".parquet", ".pq"):
                return frame_to_raw(pd.read_parquet(path), target, task_type, meta, source)
            if suffix == ".npz":
                with np.load(path, allow_pickle=False) as archive:
                    if "X" not in archive:
                        raise ValueError(f"{source}: an npz file needs an array named 'X' (and 'y' for a "
                                         f"target), found {sorted(archive.files)}.")
                    X, y = archive["X"], (archive["y"] if "y" in archive else None)
                if y is None or task_type == "unlabeled":
                    return RawData(X, None, task_type_of(None, task_type, source), None, meta)
                return RawData(X, y, task_type or infer_task_type(y), None, meta)
            if suffix == ".npy":
                return _npy(path, target, task_type, meta, source)
            if suffix in (".svm", ".svmlight", ".libsvm"):
                X, y = load_svmlight_file(str(path))
                return RawData(X.toarray(), y, task_type or infer_task_type(y), None, meta)
        except ValueError as exc:
            if str(exc).startswith(source):
                raise
            raise ValueError(f"{source}: could not parse the file: {exc}") from None
        except (pd.errors.ParserError, OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"{source}: could not parse the file: {exc}") from None
        raise ValueError(
            f"{source}: unknown file type {suffix!r}; kbench reads .csv, .tsv, .parquet, .npz, .npy "
            "and .svm/.svmlight/.libsvm."
        )


def _npy(path: Path, target: str | None, task_type: str | None, meta: dict, source: str) -> RawData:
    """A memory-mapped 2-D array: features and the target column (the last by default) as
    views of the file, no copy (a target column in the middle costs one copy of the rest)."""
    array = np.load(path, mmap_mode="r", allow_pickle=False)
    if array.ndim != 2 or array.shape[1] < 2 or not np.issubdtype(array.dtype, np.number):
        raise ValueError(f"{source}: a .npy file must hold a 2-D numeric array (rows × features and "
                         f"the target), got shape {array.shape} of {array.dtype}.")
    d = array.shape[1]
    try:
        column = d - 1 if target is None else int(target)
    except ValueError:
        raise ValueError(f"{source}: target must be a column index of the .npy array, got {target!r}.") from None
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
