"""Result store: one parquet file per cell, written atomically; merging with de-duplication.

Long format (docs/conventions.md): one row per (cell, λ[, ℓ]). Every row carries ``schema_version``;
files of another version are refused, with the version found and the fix.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from kbench._files import atomic_path

SCHEMA_VERSION = 2

#: columns that identify a row; a rerun of the same identity replaces the older row
IDENTITY = ["dataset", "kernel", "sampler_label", "task_label", "rank", "lam", "components",
            "repetition", "base_seed"]
CELLS_DIR = "cells"
#: columns every row has, whatever its task and status (a file without them is not a result)
REQUIRED = [c for c in IDENTITY if c != "components"] + ["status", "timestamp", "schema_version"]


def cell_path(out, kernel, dataset, sampler, task, rank: int, repetition: int) -> Path:
    """cells/<kernel>/<dataset>/<sampler>/<task>/rank<r>_rep<i>.parquet, the four specs
    (:class:`kbench.spec.Spec`) as their slugs."""
    return (Path(out) / CELLS_DIR / kernel.slug / dataset.slug / sampler.slug / task.slug
            / f"rank{rank}_rep{repetition}.parquet")


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
    if path.is_dir():
        raise ValueError(f"{path} is a directory; pass a file name, e.g. {path / 'all.parquet'}.")
    table = pa.Table.from_pandas(frame, preserve_index=False)
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp)


def read_cell(path: Path) -> pd.DataFrame:
    """A cell file (or an aggregated one), refused with its path unless it has this schema."""
    try:
        frame = pq.read_table(path).to_pandas()
    except (pa.ArrowInvalid, OSError) as exc:
        raise ValueError(f"{path} is not a readable parquet file ({exc}); delete it and rerun.") from None
    versions = set(frame.get("schema_version", pd.Series([None])).dropna().unique().tolist())
    if versions != {SCHEMA_VERSION}:
        found = ", ".join(map(str, sorted(versions, key=str))) or "none"
        raise ValueError(
            f"{path} has schema_version {found}, this kbench reads version {SCHEMA_VERSION}: "
            "rerun that sweep with this kbench (or read it with the kbench that wrote it)."
        )
    missing = [c for c in REQUIRED if c not in frame.columns]
    if missing:
        raise ValueError(
            f"{path} is not a kbench result file: it lacks the column(s) {', '.join(missing)}; "
            "move it out of the results directory."
        )
    return frame


def cell_status(path: Path, inputs: str | None = None) -> str | None:
    """The status of a finished cell ('ok', 'error', ...), or None when it must be computed:
    no file, an unreadable one, another schema version, or other inputs than ``inputs``
    (the fingerprint of everything its values depend on, kbench.sweep.plan.cell_inputs)."""
    if not path.is_file():
        return None
    try:
        table = pq.read_table(path, columns=["status", "schema_version", "cell_inputs"])
    except (pa.ArrowInvalid, OSError, KeyError):
        return None
    if set(table.column("schema_version").to_pylist()) != {SCHEMA_VERSION}:
        return None
    if inputs is not None and set(table.column("cell_inputs").to_pylist()) != {inputs}:
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
