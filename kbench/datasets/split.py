"""Splitting a provider's data: the seeded subsample to ``n`` points, the train / validation
/ test split (stratified for classification) and the standardization on training
statistics, done once for every provider (docs/conventions.md: the split depends only on the
dataset and the seed, so every sampler of a repetition sees the same data; λ is chosen on
the validation part). Features given as a data frame are encoded after the split by
:func:`encoder`, fitted on the training rows only. Splits are saved and read without pickle.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from kbench._files import write_npz
from kbench.datasets.base import CLASSIFICATION, Dataset, RawData, rows_of
from kbench.parameters import Param

#: the held-out fraction of a split unless the spec gives ``test_size``
DEFAULT_TEST_SIZE = 0.25
#: the fraction of the training rows set apart to choose λ (and ``sigma="cv"``) on, unless
#: the spec gives ``val_size``
DEFAULT_VAL_SIZE = 0.2
#: differences below this square to less than float64's smallest normal number (√2.2e-308)
SQUARE_UNDERFLOW = float(np.sqrt(np.finfo(np.float64).tiny))
#: the options of every dataset spec (and of kbench.load_dataset): its split's
SPLIT_OPTIONS = {
    "n": Param(int, "the points kept before the split (a seeded subsample, or the points "
                    "generated)", low=4,
               none="all of them, or a generator's default"),
    "test_size": Param(float, "the fraction of the points held out as the test set", low=0, high=1,
                       low_open=True,
                       high_open=True),
    "val_size": Param(float, "the fraction of the training rows set apart to choose λ on (0: none, "
                             "λ is then chosen on the test set)", low=0, high=1, high_open=True),
    "standardize": Param(bool, "scale the features (and a regression target) by the training rows' "
                               "moments"),
    "dropna": Param(bool, "drop the rows with a missing value (else they are an error)"),
}


def held_out(size: float, n: int) -> int:
    """The rows a part of fraction ``size`` takes of ``n``: ceil(size·n)."""
    return int(np.ceil(size * n))


def split_counts(n: int, test_size: float, val_size: float) -> tuple[int, int, int]:
    """(train, validation, test) rows of a split of ``n`` points."""
    n_test = held_out(test_size, n)
    n_val = held_out(val_size, n - n_test)
    return n - n_test - n_val, n_val, n_test


def check_test_size(test_size: float, owner: str = "dataset") -> float:
    return SPLIT_OPTIONS["test_size"].check(test_size, "test_size", owner)


def check_val_size(val_size: float, owner: str = "dataset") -> float:
    return SPLIT_OPTIONS["val_size"].check(val_size, "val_size", owner)


def check_n(n: int | None, available: int | None, name: str) -> int | None:
    n = SPLIT_OPTIONS["n"].check(n, "n", name)
    if n is not None and available is not None and n > available:
        raise ValueError(
            f"n = {n} is larger than the {available} points {name} has; pass n <= {available} "
            "or n=None for all of them."
        )
    return n


def split_and_scale(raw: RawData, name: str, n: int | None, seed: int, test_size: float,
                    standardize: bool, val_size: float = DEFAULT_VAL_SIZE) -> Dataset:
    """Subsample to n, split into train and test, carve ``val_size`` of the training rows
    into a validation part (both stratified for classification), standardize on the
    remaining training rows' statistics (a frame's features: :func:`encoder` fitted on them)."""
    X, y, f = raw.X, raw.y, raw.f
    rng = np.random.default_rng(seed)
    n = check_n(n, X.shape[0], name)
    if n is not None and n < X.shape[0]:
        keep = np.sort(rng.choice(X.shape[0], size=n, replace=False))
        X, y, f = rows_of(X, keep), rows_of(y, keep), rows_of(f, keep)
    _check_split_sizes(X.shape[0], test_size, name)
    classification = raw.task_type in CLASSIFICATION
    if classification and len(np.unique(y)) < 2:
        raise ValueError(f"{name}: the target has a single class ({y[0]}); a classification "
                         "needs at least two.")
    stratified = classification and _stratifiable(y, test_size)
    train, test = split_indices(y if stratified else None, X.shape[0], test_size, rng)
    train, val = _carve(train, rows_of(y, train), classification, val_size, rng, name)
    if classification and len(np.unique(y[train])) < 2:
        labels, counts = np.unique(y, return_counts=True)
        absent = [f"{label!s} ({count} rows)" for label, count in zip(labels, counts)
                  if label not in set(y[train])]
        raise ValueError(f"{name}: the training split holds a single class: the test and "
                         f"validation parts took every row of {', '.join(absent[:3])}; pass a "
                         "smaller test_size or val_size, more points (n), or drop the class.")
    parts = (train, val, test)
    meta = dict(raw.meta)
    unseen = (sorted(set(y[np.concatenate([val, test])].tolist()) - set(y[train].tolist()))
              if classification else [])
    if unseen:  # (a class of a row or two the split could not stratify): no model can predict it
        meta["classes_without_training_rows"] = [str(label) for label in unseen]
    scaled = bool(standardize and raw.standardize)
    meta.update(n_total=int(X.shape[0]), seed=seed, test_size=test_size, val_size=val_size,
                standardized=scaled)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is the error of _check_scaled
        (X_train, X_val, X_test), names = _features(X, raw, parts, scaled, name)
    _check_scaled((X_train, X_val, X_test), names, name)
    y_train, y_val, y_test = (rows_of(y, part) for part in parts)
    if raw.task_type == "regression" and y_test.size and np.all(y_test == y_test[0]):
        raise ValueError(f"{name}: every test row's target is {y_test[0]:g}, so R² (1 − MSE / the "
                         "test targets' variance) is undefined; pass more points (n), a larger "
                         "test_size or another seed.")
    if raw.task_type == "regression" and 0 < (spread := float(np.ptp(y_train))) < SQUARE_UNDERFLOW:
        raise ValueError(f"{name}: the training targets differ by at most {spread:.1e}, and the "
                         "squares of such differences underflow a float64 (MSE, variance and R² "
                         "would read 0 or be undefined); rescale the target (multiply it by a "
                         "power of ten).")
    if scaled and raw.task_type == "regression":
        y_mean, y_scale = float(y_train.mean()), float(y_train.std()) or 1.0
        if not (np.isfinite(y_mean) and np.isfinite(y_scale)):
            raise ValueError(f"{name}: standardizing the target overflows a float64 (values near "
                             "1e154 or beyond); rescale it (a table from R or OpenML takes "
                             "transform=log).")
        y_train, y_val, y_test = ((part - y_mean) / y_scale for part in (y_train, y_val, y_test))
        meta.update(y_mean=y_mean, y_scale=y_scale)
    return Dataset(name=name, X_train=X_train, y_train=y_train, X_test=X_test, y_test=y_test,
                   task_type=raw.task_type, feature_names=list(names), meta=meta,
                   f_train=rows_of(f, train),
                   f_test=rows_of(f, test), X_val=X_val, y_val=y_val, f_val=rows_of(f, val))


def _check_scaled(arrays, names: list[str], name: str) -> None:
    """Finite features after scaling (the raw ones are): a column whose deviations overflow a
    float64 (values of both signs near 1e308) is an error naming it."""
    bad = np.zeros(len(names), dtype=bool)
    for part in arrays:
        bad |= ~np.isfinite(part).all(axis=0)
    if bad.any():
        columns = [names[j] for j in np.flatnonzero(bad)]
        raise ValueError(f"{name}: standardizing column(s) {columns[:5]} overflows a float64 "
                         "(deviations beyond 1.8e308); rescale them, or pass standardize=false.")


def _features(X, raw: RawData, parts, scaled: bool,
              name: str) -> tuple[list[np.ndarray], list[str]]:
    """The feature arrays of the ``parts`` (train, validation, test indices) and their names:
    a frame's by :func:`encoder`, an array's standardized (when ``scaled``), both on the
    training rows' statistics."""
    train = parts[0]
    if isinstance(X, pd.DataFrame):
        numeric = [c for c in X.columns if c not in raw.categorical]
        fitted = encoder(numeric, raw.categorical).fit(X.iloc[train])
        try:
            names = [str(c) for c in fitted.get_feature_names_out()]
        except ValueError:  # scikit-learn's "Output feature names ... are not unique"
            raise ValueError(f"{name}: {_name_clash(fitted, numeric)}") from None
        arrays = [np.ascontiguousarray(fitted.transform(X.iloc[part]), dtype=float) if len(part)
                  else np.empty((0, len(names)))  # (val_size=0: no validation rows to encode)
                  for part in parts]
        columns = slice(0, len(numeric))  # the encoder's numeric columns come first
    else:
        arrays = [np.ascontiguousarray(X[part], dtype=float) for part in parts]
        names, columns = raw.feature_names or [f"x{j}" for j in range(X.shape[1])], slice(None)
    if scaled:
        mean, scale = _moments(arrays[0][:, columns])
        for part in arrays:  # in place: indexing by the parts made fresh copies
            part[:, columns] -= mean
            part[:, columns] /= scale
    return arrays, names


def _moments(train: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each column's mean and standard deviation (1 for a constant column), as numpy (and
    scikit-learn's StandardScaler) compute them, bit for bit; where that loses the spread
    (the squares of the deviations overflow near 1e154 or underflow near 1e-160, or the
    mean dwarfs the spread by 2²⁰ and its round-off shifts every deviation), from the
    deviations from the first row, divided by their largest magnitude."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        mean, scale = train.mean(axis=0), train.std(axis=0)
        redo = (~np.isfinite(mean) | ~np.isfinite(scale) | (scale == 0)
                | (np.abs(mean) > 2.0**20 * scale))
        if redo.any() and len(train):
            shift = train[0, redo]
            deviation = train[:, redo] - shift
            peak = np.abs(deviation).max(axis=0)
            peak[peak == 0] = 1.0
            unit = deviation / peak
            mean[redo], scale[redo] = shift + peak * unit.mean(axis=0), peak * unit.std(axis=0)
    scale[scale == 0] = 1.0
    return mean, scale


def _carve(train: np.ndarray, y_train, classification: bool, val_size: float,
           rng: np.random.Generator,
           name: str) -> tuple[np.ndarray, np.ndarray]:
    """(train, validation) indices: ``val_size`` of the training rows ``train`` set apart,
    stratified for classification (none for ``val_size`` 0)."""
    if val_size == 0:
        return train, train[:0]
    _check_split_sizes(len(train), val_size, name, "validation")
    stratified = classification and _stratifiable(y_train, val_size)
    inner, held = split_indices(y_train if stratified else None, len(train), val_size, rng)
    return train[inner], train[held]


def _name_clash(fitted, numeric: list[str]) -> str:
    """The error of a one-hot feature named as another column (``col`` = ``red`` and a
    column ``col_red``): both columns and the fix."""
    onehot = fitted.named_transformers_["categorical"]
    for column, levels in zip(onehot.feature_names_in_, onehot.categories_, strict=True):
        for level in levels:
            if (clash := f"{column}_{level}") in numeric:
                return (f"the one-hot feature of column {column!r} = {level!r} is named {clash!r}, "
                        "as another column is; rename one of the two columns, or leave one out "
                        f"with drop={clash}.")
    return "two features would have one name after one-hot encoding; rename the columns that clash."


def encoder(numeric: list[str], categorical: list[str]):
    """A frame's features (a scikit-learn ColumnTransformer): numeric columns first, as they
    are (standardized after, as an array's are), categorical ones one-hot encoded (a level
    unseen in training encodes as zeros). Fitted on the training rows only."""
    # here, not at the top: importing scikit-learn costs a second, paid only for tables
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import OneHotEncoder

    return ColumnTransformer(
        [("numeric", "passthrough", numeric),
         ("categorical", OneHotEncoder(handle_unknown="ignore", sparse_output=False, dtype=float),
          categorical)],
        verbose_feature_names_out=False)

def _check_split_sizes(n: int, size: float, name: str, part: str = "test") -> None:
    held = held_out(size, n)
    if held < 2 or n - held < 2:
        option = "test_size" if part == "test" else "val_size"
        whole = "points" if part == "test" else "training rows"
        raise ValueError(
            f"{name}: {n} {whole} with {option}={size:g} give {n - held} training and {held} "
            f"{part} rows; each side needs at least 2. Pass more points (n) or another {option}."
        )


def split_indices(y, n: int, test_size: float, rng: np.random.Generator):
    """Sorted (train, test) indices; ceil(test_size·n) test points, allocated to the classes
    of ``y`` in proportion (largest remainders) when ``y`` is given (stratified split)."""
    n_test = held_out(test_size, n)
    if y is None:
        order = rng.permutation(n)
        return np.sort(order[n_test:]), np.sort(order[:n_test])
    classes, inverse, counts = np.unique(y, return_inverse=True, return_counts=True)
    quota = counts * n_test / n
    take = np.floor(quota).astype(int)
    extra = n_test - take.sum()
    take[np.argsort(-(quota - take), kind="stable")[:extra]] += 1
    take = np.clip(take, 1, counts - 1)
    test = np.concatenate([rng.permutation(np.flatnonzero(inverse == c))[:k]
                           for c, k in enumerate(take)])
    mask = np.zeros(n, dtype=bool)
    mask[test] = True
    return np.flatnonzero(~mask), np.flatnonzero(mask)


def _stratifiable(y, test_size) -> bool:
    _, counts = np.unique(y, return_counts=True)
    n_test = held_out(test_size, len(y))
    return counts.min() >= 2 and n_test >= len(counts) and len(y) - n_test >= len(counts)


#: the arrays of a split, as saved
SPLIT_ARRAYS = ("X_train", "y_train", "X_val", "y_val", "X_test", "y_test", "f_train", "f_val",
                "f_test")


def save_split(data: Dataset, path) -> None:
    """Write a split to ``path`` (npz, atomically) so later jobs load it without the provider."""
    arrays = {k: getattr(data, k) for k in SPLIT_ARRAYS if getattr(data, k) is not None}
    header = {"name": data.name, "task_type": data.task_type, "feature_names": data.feature_names,
              "meta": data.meta}
    write_npz(path, header=np.array(json.dumps(header, default=str)), **arrays)


def load_split(path) -> Dataset:
    """A split written by :func:`save_split`."""
    with np.load(path, allow_pickle=False) as archive:
        header = json.loads(str(archive["header"]))
        arrays = {k: archive[k] for k in archive.files if k != "header"}
    return Dataset(header["name"], arrays["X_train"], arrays.get("y_train"), arrays["X_test"],
                   arrays.get("y_test"), header["task_type"], header["feature_names"],
                   header["meta"],
                   arrays.get("f_train"), arrays.get("f_test"), arrays.get("X_val"),
                   arrays.get("y_val"),
                   arrays.get("f_val"))
