"""Result store: one parquet file per cell, written atomically; merging with de-duplication.

Long format (DESIGN §4): one row per (cell, λ[, ℓ]). Every row carries ``schema_version``;
files of another version are refused, with the version found and the fix.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

SCHEMA_VERSION = 1

#: columns that identify a row; a rerun of the same identity replaces the older row
IDENTITY = ["dataset", "kernel", "sampler", "sampler_params", "task", "task_params", "rank",
            "lam", "components", "repetition", "seed"]
#: columns that identify a cell (a file)
CELL_IDENTITY = ["dataset", "kernel", "sampler", "sampler_params", "task", "task_params", "rank",
                 "repetition"]
CELLS_DIR = "cells"


def slug(spec: str) -> str:
    """A file-name-safe, readable form of a spec: 'squeak:qbar=20,eps=0.3' → 'squeak~qbar-20+eps-0.3'."""
    text = str(spec).replace(":", "~").replace("=", "-").replace(",", "+").replace(";", "_")
    return re.sub(r"[^A-Za-z0-9.~+_-]", "_", text)


def cell_path(out: Path, cell: dict) -> Path:
    """cells/<kernel>/<dataset>/<sampler>/<task>/rank<r>_rep<i>.parquet (specs as slugs)."""
    sampler = cell["sampler"] + (
        ":" + cell["sampler_label_params"] if cell.get("sampler_label_params") else "")
    task = cell["task"] + (":" + cell["task_label_params"] if cell.get("task_label_params") else "")
    return (Path(out) / CELLS_DIR / slug(cell["kernel"]) / slug(cell["dataset"]) / slug(sampler)
            / slug(task) / f"rank{cell['rank']}_rep{cell['repetition']}.parquet")


def check_output_dir(out) -> Path:
    """The results directory: created if missing; a clear error if it is a file."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out} is a file, not a directory; pass a directory for the results.")
    (out / CELLS_DIR).mkdir(parents=True, exist_ok=True)
    return out


def write_cell(path: Path, rows: list[dict]) -> None:
    """Write a cell's rows to ``path`` atomically (temp file in the same folder + rename)."""
    frame = pd.DataFrame(rows)
    frame["schema_version"] = SCHEMA_VERSION
    write_frame(frame, path)


def write_frame(frame: pd.DataFrame, path: Path) -> None:
    """Write a DataFrame to parquet atomically."""
    path = Path(path)
    table = pa.Table.from_pandas(frame, preserve_index=False)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        pq.write_table(table, tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_cell(path: Path) -> pd.DataFrame:
    frame = pq.read_table(path).to_pandas()
    versions = set(frame.get("schema_version", pd.Series([None])).dropna().unique().tolist())
    if versions != {SCHEMA_VERSION}:
        found = ", ".join(map(str, sorted(versions, key=str))) or "none"
        raise ValueError(
            f"{path} has schema_version {found}, this kbench reads version {SCHEMA_VERSION}: "
            "rerun that sweep with this kbench (or read it with the kbench that wrote it)."
        )
    return frame


def cell_status(path: Path, lams=None) -> str | None:
    """The status of a finished cell ('ok', 'error', ...), or None if it has no file, the file
    is unreadable, or it was computed on another λ path than ``lams`` (then it is rerun)."""
    if not path.is_file():
        return None
    try:
        table = pq.read_table(path, columns=["status", "lam"])
    except (pa.ArrowInvalid, OSError, KeyError):
        return None
    if lams is not None:
        found = {round(v, 15) for v in table.column("lam").to_pylist() if v is not None and v == v}
        if found and found != {round(float(v), 15) for v in lams}:
            return None
    statuses = set(table.column("status").to_pylist())
    return "ok" if statuses == {"ok"} else sorted(statuses - {"ok"})[0]


def read_results(directory) -> pd.DataFrame:
    """Merge every cell file under ``directory`` into one DataFrame.

    Rows with the same identity (a cell rerun) are de-duplicated, the newest timestamp wins.
    """
    directory = Path(directory)
    if directory.is_file() and directory.suffix == ".parquet":
        return read_cell(directory)  # an aggregated file (kbench aggregate)
    if not directory.is_dir():
        raise ValueError(f"{directory} is not a results directory (run 'kbench run --out {directory}').")
    files = sorted((directory / CELLS_DIR).rglob("*.parquet")) or sorted(directory.rglob("*.parquet"))
    files = [f for f in files if f.name != "all.parquet"]
    if not files:
        raise ValueError(f"{directory} holds no result files (*.parquet).")
    frame = pd.concat([read_cell(f) for f in files], ignore_index=True)
    keys = [c for c in IDENTITY if c in frame.columns]
    frame = frame.sort_values("timestamp", kind="stable")
    frame = frame.drop_duplicates(subset=keys, keep="last", ignore_index=True)
    return frame.sort_values(keys, kind="stable", ignore_index=True)
