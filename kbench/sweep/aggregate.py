"""What ``kbench aggregate`` writes: one merged parquet file, checked against what it would
replace (a cell, an input, a user's file, another sweep's merged file) before it is written."""

from __future__ import annotations

import errno
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from kbench.sweep.layout import CELLS_DIR, enclosing_results
from kbench.sweep.store import check_one_sweep


def check_merged_out(out: Path, inputs: list, merged: pd.DataFrame | None = None) -> None:
    """``kbench aggregate --out``: a new file, or an aggregated file none of ``inputs`` names
    whose sweeps the ``merged`` rows hold too, never a cell of a results folder nor a parquet
    file kbench did not write."""
    out = Path(out)
    if out.suffix != ".parquet" and not out.is_dir():  # (a folder: write_frame says so)
        raise ValueError(f"--out {out}: the merged file is parquet; name it <name>.parquet.")
    if (results := enclosing_results(out)) is not None:
        raise ValueError(f"--out {out} lies in {results / CELLS_DIR}, the cells of the results "
                         f"folder {results}; write the merged file elsewhere, e.g. "
                         f"{results / 'all.parquet'}.")
    if out.is_dir():
        raise IsADirectoryError(errno.EISDIR, "is a directory; pass a file name (or remove the "
                                              "folder)", str(out))
    if out.exists() and any(out.samefile(path) for path in inputs if Path(path).exists()):
        raise ValueError(f"--out {out} is also an input; write the merged file elsewhere.")
    if out.is_file() and "schema_version" not in _column_names(out):
        raise ValueError(f"--out {out} exists and is not a kbench results file (it has no "
                         "schema_version column); name a new file.")
    if merged is not None:
        check_one_sweep(merged)
    if merged is not None and out.is_file() and "sweep" in _column_names(out):
        lost = (set(pq.read_table(out, columns=["sweep"])["sweep"].drop_null().to_pylist())
                - set(merged["sweep"]))
        if lost:
            raise ValueError(f"--out {out} holds the sweep {sorted(lost)[0]}, which the merged "
                             "results do not: writing would lose it; name another file (or delete "
                             "this one first).")


def _column_names(path: Path) -> list[str]:
    try:
        return pq.read_schema(path).names
    except (OSError, pa.ArrowException):  # not a parquet file
        return []
