"""Local files: csv, parquet, npz, npy and svmlight/libsvm (``file:<path>[:target=col,...]``).

A ``.npy`` file (a 2-D numeric array, the target in its last column unless ``target=<column
index>``) is memory-mapped: the rows of the split are the only copy of the data in memory.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kbench.datasets.base import DatasetProvider, RawData, infer_task_type
from kbench.hookspecs import hookimpl

_TARGET_NAMES = ("target", "y", "label", "class")


def frame_to_raw(frame, target: str | None, task_type: str | None, meta: dict,
                 source: str) -> RawData:
    """Split a DataFrame into one-hot encoded features and a target column."""
    import pandas as pd
    if target is None:
        target = next((c for c in frame.columns if str(c).lower() in _TARGET_NAMES), frame.columns[-1])
    if target not in frame.columns:
        raise ValueError(
            f"{source}: no column {target!r}; columns are {list(frame.columns)[:20]}. "
            "Name the target with target=<column>."
        )
    y = frame[target].to_numpy()
    features = frame.drop(columns=[target])
    categorical = [c for c in features.columns
                   if not pd.api.types.is_numeric_dtype(features[c]) or pd.api.types.is_bool_dtype(features[c])]
    if categorical:
        features = pd.get_dummies(features, columns=categorical, dummy_na=False, dtype=float)
        meta["one_hot"] = categorical
    task_type = task_type or infer_task_type(y)
    if task_type == "regression" and y.dtype == object:
        converted = pd.to_numeric(pd.Series(y), errors="coerce")
        if converted.notna().sum() == pd.Series(y).notna().sum():
            y = converted.to_numpy()
    meta["target"] = str(target)
    return RawData(features.to_numpy(dtype=float), y, task_type,
                   [str(c) for c in features.columns], meta)


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
                    if "X" not in archive or "y" not in archive:
                        raise ValueError(f"{source}: an npz file needs arrays named 'X' and 'y', "
                                         f"found {sorted(archive.files)}.")
                    X, y = archive["X"], archive["y"]
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
