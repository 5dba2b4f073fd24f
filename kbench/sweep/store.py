"""Result store: one parquet file per cell, written atomically; merging with de-duplication.

Long format (docs/conventions.md): one row per (cell, λ[, ℓ]). Every row carries
``schema_version``; rows of an older version are migrated on read, one version at a time
(:mod:`kbench.sweep.schema`), so results last across kbench versions; a file from a newer kbench
is refused with the versions and the fix. A sweep rerun recomputes older cells (their
inputs fingerprint includes the version).
"""

from __future__ import annotations

import errno
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from kbench._files import atomic_path, check_writable_option, sweep_temporary
from kbench.errors import Status
from kbench.spec import CONTROL, format_value, shown
from kbench.sweep.layout import CELLS_DIR, cell_of_name, enclosing_results
from kbench.sweep.ranges import VALUE_RANGES, numeric_columns
from kbench.sweep.schema import (
    CELL_KEYS,
    IDENTITY,
    REQUIRED,
    SCHEMA_VERSION,
    migrate,
)


def check_output_dir(out, data_cache=None) -> Path:
    """The results directory (and the data cache), checked before anything is computed: a
    folder name (:func:`kbench._files.check_folder`), created and writable; the temporary
    files of writes killed in an earlier run are swept."""
    for option, folder, written in (("--out", out, CELLS_DIR), ("--data-cache", data_cache, "")):
        if folder is not None:
            check_writable_option(option, folder, written)
    out = Path(out)
    sweep_temporary(out / CELLS_DIR, time.time())
    return out


def write_cell(path: Path, rows: list[dict]) -> None:
    """Write a cell's rows to ``path`` atomically (temp file in the same folder + rename):
    one column per key of any row (missing: null), its type inferred from its values, as a
    DataFrame would (a worker writes its few cells without building one)."""
    keys = dict.fromkeys(key for row in rows for key in row)
    columns = {key: [row.get(key) for row in rows] for key in keys}
    columns["schema_version"] = [SCHEMA_VERSION] * len(rows)
    try:
        table = pa.table(columns)
    # a column of mixed types: stored as pandas would
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        table = pa.Table.from_pandas(pd.DataFrame(columns), preserve_index=False)
    # a few rows: compression, dictionaries and statistics cost a quarter of the write, save nothing
    _write_table(table, path, compression="none", use_dictionary=False, write_statistics=False)


def write_frame(frame: pd.DataFrame, path: Path) -> None:
    """Write a DataFrame to parquet atomically."""
    _write_table(pa.Table.from_pandas(frame, preserve_index=False), path)


def _write_table(table: pa.Table, path: Path, **options) -> None:
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, "is a directory; pass a file name (or remove the "
                                              "folder)", str(path))
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, **options)


def _read_table(path: Path, plain=()) -> pa.Table:
    """One small file, read in this thread without pre-buffering (Arrow's thread pool and
    read-ahead cost more than the read itself: 0.7 instead of 1.2 ms for a cell); its types
    checked unless its schema is one of ``plain``, schemas found plain and complete before."""
    try:
        table = pq.ParquetFile(path, pre_buffer=False).read(use_threads=False)
    except (pa.ArrowInvalid, OSError) as exc:
        fix = ("delete it and rerun: kbench run computes the cell again"
               if enclosing_results(path) is not None else
               "give a results folder, or a file kbench aggregate wrote")
        raise ValueError(f"{path} is not a readable parquet file ({exc}); {fix}.") from None
    if any(table.schema == schema for schema in plain):
        return table
    return _plain_types(path, _index_as_columns(table))


def _index_as_columns(table: pa.Table) -> pa.Table:
    """A file a user saved with ``set_index(...)``: its index levels as the columns kbench wrote
    (pandas would read them back as the index), an unnamed level left out."""
    meta = table.schema.pandas_metadata or {}
    if not any(isinstance(column, str) for column in meta.get("index_columns", [])):
        return table
    unnamed = [name for name in table.column_names if name.startswith("__index_level_")]
    return table.replace_schema_metadata(None).drop_columns(unnamed)


def _plain_types(path: Path, table: pa.Table) -> pa.Table:
    """Dictionary (categorical) columns as their values, as a file saved with factors has
    them; a λ column narrower than float64 refused: rounded, λ no longer equals the λ chosen."""
    for i, field in enumerate(table.schema):
        if pa.types.is_dictionary(field.type):
            table = table.set_column(i, field.name, table.column(i).cast(field.type.value_type))
    for name in ("lam", "lam_selected"):
        kind = table.schema.field(name).type if name in table.column_names else pa.float64()
        if pa.types.is_floating(kind) and kind != pa.float64():
            raise ValueError(f"{path}: column {name!r} is float{kind.bit_width}; kbench writes λ "
                             "as float64, and a rounded λ no longer matches the λ chosen "
                             "(lam_selected): are these kbench's results?")
    return table


def _check_columns(path: Path, columns) -> None:
    missing = [c for c in REQUIRED if c not in columns]
    if missing:
        raise ValueError(
            f"{path} is not a kbench result file: it lacks the column(s) {', '.join(missing)}; "
            "move it out of the results directory."
        )


def read_cell(path: Path) -> pd.DataFrame:
    """A cell file (or an aggregated one), migrated to this schema version."""
    frame = migrate(_read_table(path).to_pandas(), str(path))
    _check_columns(path, frame.columns)
    return frame


def read_cells(paths) -> pd.DataFrame:
    """Cell files (or aggregated ones) as one DataFrame, each checked and migrated to this
    schema version, as :func:`read_cell` does. Files of this version are joined as Arrow
    tables and converted once: a DataFrame per file costs more than reading the file."""
    current, older, plain = [], [], []  # plain: the schemas checked (a sweep's cells share a few)
    for path in paths:
        table = _read_table(path, plain)
        versions = (table.column("schema_version").unique().to_pylist()
                    if "schema_version" in table.column_names else [])
        if versions == [SCHEMA_VERSION]:
            _check_named_cell(path, table)
            if not any(table.schema == schema for schema in plain):
                _check_columns(path, table.column_names)
                plain.append(table.schema)
            current.append(table)
        else:  # older (migrated), newer or unversioned (refused with the file's name)
            older.append(read_cell(path))
    try:
        frames = ([pa.concat_tables(current, promote_options="permissive").to_pandas()]
                  if current else [])
    # types Arrow cannot unify: an integer past 2**53 beside
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        # floats, or a plugin's column of numbers in one cell and text in another
        frames = [_text_where_mixed(pd.concat([table.to_pandas() for table in current],
                                              ignore_index=True))]
    frames += older
    if not frames:
        return pd.DataFrame()
    return _plain_numbers(frames[0] if len(frames) == 1
                          else _text_where_mixed(pd.concat(frames, ignore_index=True)))


def _plain_numbers(frame: pd.DataFrame) -> pd.DataFrame:
    """pandas' nullable numbers (``Int64``, ``Float64``, ``boolean``: a file re-saved after
    ``convert_dtypes()``) as NumPy's, a missing value as NaN, as kbench writes them."""
    masked = {column: dtype for column, dtype in frame.dtypes.items()
              if isinstance(dtype, pd.api.extensions.ExtensionDtype) and dtype.kind in "biuf"}
    return frame.assign(**{column: frame[column].to_numpy(dtype=float, na_value=np.nan)
                           if frame[column].isna().any()
                           else frame[column].to_numpy(dtype=dtype.numpy_dtype)
                           for column, dtype in masked.items()})


def _check_named_cell(path: Path, table: pa.Table) -> None:
    """A ValueError when a file named as a cell (``rank5_rep0.parquet``) holds the rows of
    another rank or repetition: a file copied or renamed by hand would stand in for the cell
    its name says, and that cell would be missing from the page without a word."""
    named = cell_of_name(path)
    if named is None or not {"rank", "repetition"} <= set(table.column_names):
        return
    held = {(int(r), int(k)) for r, k in zip(table.column("rank").to_pylist(),
                                             table.column("repetition").to_pylist(),
                                              strict=True) if r is not None and k is not None}
    if held and held != {named}:
        rank, repetition = sorted(held)[0]
        raise ValueError(f"{path} holds the rows of rank {rank}, repetition {repetition}, not of "
                         f"the cell its name says (rank {named[0]}, repetition {named[1]}): a file "
                         "copied or renamed by hand; move it to its own name, or delete it and run "
                         "the sweep again (it computes the missing cell).")


def _text_where_mixed(frame: pd.DataFrame) -> pd.DataFrame:
    """Columns holding text in some rows and other values in others (a plugin's info entry
    written as a number by one cell and as text by another) as text throughout, so that the
    rows can be written again as one table; a new frame."""
    # (inferred in C, not per row)
    mixed = [column for column in frame.columns if frame[column].dtype == object
             and pd.api.types.infer_dtype(frame[column], skipna=True) in ("mixed", "mixed-integer")]
    return frame.assign(**{column: frame[column].map(lambda value: value if pd.isna(value) or
                                                     isinstance(value, str) else str(value))
                           for column in mixed})


def cell_status(path: Path, inputs: str | None = None) -> str | None:
    """The status of a finished cell ('ok', 'error', ...), or None when it must be computed:
    no file, an unreadable one, a ``killed`` one, another schema version, or other inputs than
    ``inputs`` (the fingerprint of everything its values depend on,
    kbench.sweep.plan.cell_inputs)."""
    if not path.is_file():
        return None
    try:
        table = pq.ParquetFile(path, pre_buffer=False).read(
            columns=["status", "schema_version", "cell_inputs"], use_threads=False)
    except (pa.ArrowInvalid, OSError, KeyError):
        return None
    if table.num_columns < 3:  # not a cell of this kbench
        return None
    if set(table.column("schema_version").to_pylist()) != {SCHEMA_VERSION}:
        return None
    if inputs is not None and set(table.column("cell_inputs").to_pylist()) != {inputs}:
        return None
    statuses = set(table.column("status").to_pylist())
    if Status.KILLED in statuses:  # killed from outside: not the method's result, computed again
        return None
    return "ok" if statuses == {"ok"} else sorted(statuses - {"ok"})[0]


def read_results(directory, sweep: str | None = None) -> pd.DataFrame:
    """Merge every cell file under ``directory`` (or an aggregated file), or under each of
    several such paths (a list), into one DataFrame; with ``sweep``, the rows of that sweep
    only (:func:`sweeps` lists them).

    Rows with the same identity (a cell rerun) are de-duplicated, the newest timestamp wins.
    """
    given = [directory] if isinstance(directory,
                                      str | os.PathLike) else list(directory) if isinstance(
        directory, list | tuple) else None
    if given is None or any(not isinstance(p, str | os.PathLike) or not str(p).strip()
                            for p in given):
        raise ValueError("results are read from a path (text) or a list of paths, got "
                         f"{shown(directory)}: name a results directory or an aggregated file.")
    paths = [Path(p) for p in given]
    if not paths:
        raise ValueError("no results to read: name a results directory or an aggregated file.")
    frame = _newest(read_cells([file for path in paths for file in _files_of(path)]))
    check_values(frame, paths[0] if len(paths) == 1 else f"{len(paths)} paths ({paths[0]}, …)")
    unknown = sorted(set(frame["status"].dropna().astype(str))
                     - {status.value for status in Status})
    if unknown:
        raise ValueError(f"{paths[0]}: rows of status {unknown[0]!r}, which kbench never writes "
                         f"(its statuses: {', '.join(status.value for status in Status)}); are "
                         "these kbench's results?")
    if sweep is None:
        return frame
    chosen = frame[frame["sweep"].astype(object).where(frame["sweep"].notna(), UNRECORDED) == sweep]
    if chosen.empty:
        where = paths[0] if len(paths) == 1 else f"{len(paths)} paths ({paths[0]}, …)"
        raise ValueError(f"{where} holds no sweep {sweep!r}; it holds:\n{describe_sweeps(frame)}")
    return chosen.reset_index(drop=True)


#: the sweep id of rows older than schema version 3, which recorded none
UNRECORDED = "unrecorded"
#: the text columns kbench writes in every row
TEXT_COLUMNS = ("dataset", "kernel", "sampler_label", "task_label", "status")


def check_values(frame: pd.DataFrame, where) -> None:
    """A ValueError naming the column when rows lack a value kbench writes in every row, a
    label holds a control character, a number lies outside the range kbench writes it in
    (:data:`VALUE_RANGES`: a rank, λ, an MSE, R², a rate), or a column holds numbers written
    as text (a file edited or written by another program)."""
    for column in TEXT_COLUMNS:
        # ('' is none)
        missing = int((frame[column].isna() | (frame[column].astype(str).str.strip() == "")).sum())
        if missing:
            raise ValueError(f"{where}: {missing} of {len(frame)} rows have no {column!r}, which "
                             "kbench writes in every row; are these kbench's results?")
        control = frame[column].astype(str).str.contains(CONTROL)
        if control.any():  # (a spec refuses them: a terminal escape would reach the page raw)
            raise ValueError(f"{where}: column {column!r} holds a control character "
                             f"({shown(frame[column][control].iloc[0])}), which no kbench label "
                             "has; are these kbench's results?")
    # (a cell's coordinates: a row without one belongs to no cell)
    for column in ("rank", "repetition"):
        missing = int(frame[column].isna().sum()) if column in frame else 0
        if missing:
            raise ValueError(f"{where}: {missing} of {len(frame)} rows have no {column!r}, which "
                             "kbench writes in every row; are these kbench's results?")
    tasks = frame["task"].dropna().unique() if "task" in frame else []
    # (not a digest, nor a plugin's info)
    for column in frame.columns.intersection(list(numeric_columns(tasks))):
        values = frame[column].dropna()
        if (len(values) and pd.api.types.is_string_dtype(values)
                and pd.to_numeric(values, errors="coerce").notna().all()):
            raise ValueError(f"{where}: column {column!r} holds numbers written as text "
                             f"({shown(values.iloc[0])}, …); kbench writes them as numbers: are "
                             "these kbench's results?")
    for column, (inside, kbench_writes) in VALUE_RANGES.items():
        values = (frame[column].dropna()
                  if column in frame and pd.api.types.is_numeric_dtype(frame[column]) else [])
        # (a non-finite score is a failure, not a lie)
        values = values[np.isfinite(values)] if len(values) else values
        if len(values) and not inside(values).all():
            outside = format_value(values[~inside(values)].iloc[0].item())
            raise ValueError(f"{where}: column {column!r} holds {outside}; kbench writes "
                             f"{kbench_writes}: are these kbench's results?")


def sweeps(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per sweep in ``frame`` (its ``sweep`` id; :data:`UNRECORDED` for rows older than
    schema version 3): its cells, base seed, λ path and where λ was chosen (validation or test
    rows)."""
    rows = frame.assign(
        sweep=frame["sweep"].astype(object).where(frame["sweep"].notna(), UNRECORDED))
    cells = rows.drop_duplicates(["sweep", *CELL_KEYS])
    lams = rows.groupby("sweep")["lam"].agg(lambda v: sorted(v.dropna().unique()))
    chosen = (rows.groupby("sweep")["selected_on"].agg(lambda v: sorted(v.dropna().unique()))
              if "selected_on" in rows else lams.map(lambda _: []))
    seeds = cells.groupby("sweep")["base_seed"].agg(lambda v: sorted(v.dropna().unique()))
    return pd.DataFrame({"cells": cells.groupby("sweep").size(), "seed": seeds,
                         "λ path": lams, "λ chosen on": chosen})


def check_one_sweep(frame: pd.DataFrame) -> None:
    """A ValueError naming the sweeps when ``frame`` holds more than one: a leaderboard or a
    paper's page never mixes configurations."""
    if "sweep" in frame and frame["sweep"].nunique(dropna=False) > 1:
        raise ValueError(f"the results hold {frame['sweep'].nunique(dropna=False)} sweeps, which a "
                         f"page never mixes:\n{describe_sweeps(frame)}\npick one with --sweep ID "
                         "(or write each sweep to its own --out).")


def describe_sweeps(frame: pd.DataFrame) -> str:
    """The sweeps of ``frame``, a line each."""
    return "\n".join(f"  {sweep}: {row['cells']} cells, base seed "
                     f"{', '.join(map(str, row['seed'])) or '?'}, λ path "
                     f"{', '.join(f'{lam:g}' for lam in row['λ path']) or '(none)'}"
                     + (f", λ chosen on the {' and '.join(row['λ chosen on'])} rows"
                        if row["λ chosen on"] else "")
                     for sweep, row in sweeps(frame).iterrows())


def _files_of(directory: Path) -> list[Path]:
    """The result files a path names: itself (a cell or aggregated file), or those below it."""
    if directory.is_file() and directory.suffix == ".parquet":
        return [directory]  # a cell, or an aggregated file (kbench aggregate)
    if directory.is_file():
        raise ValueError(f"{directory} is a file, not a results directory or an aggregated "
                         ".parquet file (kbench aggregate writes one).")
    if not directory.exists():
        raise ValueError(f"{shown(str(directory), 200)}: no such file or folder.")
    if not directory.is_dir():
        raise ValueError(f"{directory} is not a results directory (run 'kbench run --out "
                         f"{directory}').")
    cells = (directory / CELLS_DIR).resolve()  # (a cells/ that is a link to the cells)
    # (not a results folder written inside cells/)
    files = [f for f in sorted(cells.rglob("*.parquet"))
             if CELLS_DIR not in f.relative_to(cells).parts] or sorted(directory.rglob("*.parquet"))
    files = [f for f in files if f.name != "all.parquet"]
    special = next((f for f in files if f.exists() and not (f.is_file() or f.is_dir())), None)
    if special is not None:  # opening a FIFO blocks until a writer comes
        raise ValueError(f"{special} is not a regular file (a FIFO, a socket or a device): a "
                         "results folder holds files only; move it out.")
    if not files and (directory / "all.parquet").is_file():
        return [directory / "all.parquet"]  # a folder of merged rows only (kbench aggregate's file)
    if not files:
        raise ValueError(f"{directory} holds no result files (*.parquet).")
    return files


def _newest(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per identity, the newest timestamp's, in identity order; ``attrs["replaced"]``
    counts the older rows of an identity left out (another run's row, not a copy of it)."""
    keys = [c for c in IDENTITY if c in frame.columns]
    versions = (len(frame.drop_duplicates(subset=[*keys, "timestamp"])) if "timestamp" in frame
                else len(frame))
    frame = frame.sort_values("timestamp", kind="stable")
    frame = frame.drop_duplicates(subset=keys, keep="last", ignore_index=True)
    newest = frame.sort_values(keys, kind="stable", ignore_index=True)
    newest.attrs["replaced"] = versions - len(newest)
    return newest
