"""The result schema: its version, the columns that identify a row and a cell, and the steps
that bring rows of an older version to this one."""

from __future__ import annotations

import json
from collections.abc import Callable

import pandas as pd

from kbench.spec import Spec

SCHEMA_VERSION = 4

#: columns that identify a row; a rerun of the same identity replaces the older row
IDENTITY = ["sweep", "dataset", "kernel", "sampler_label", "task_label", "rank", "lam",
            "components",
            "repetition", "base_seed"]
#: columns that identify a cell (the rows of one sampler fit's task at one rank and repetition)
CELL_KEYS = ["dataset", "kernel", "sampler_label", "task_label", "rank", "repetition"]
#: which package (distribution) provided each plugin of a row, and its version (version 3)
PACKAGE_COLUMNS = ("dataset_package", "dataset_package_version", "kernel_package",
                   "kernel_package_version",
                   "sampler_package", "sampler_package_version", "task_package",
                   "task_package_version")
#: where a row's code came from: the packages behind its plugins, and kbench's commit
PROVENANCE = [*PACKAGE_COLUMNS, "kbench_commit"]
#: columns every row has, whatever its task and status (a file without them is not a result)
REQUIRED = ([c for c in IDENTITY if c not in ("components", "sweep")]
            + ["status", "timestamp", "schema_version"])



def _v1_to_v2(frame: pd.DataFrame) -> pd.DataFrame:
    """Version 2 identifies a configuration by its canonical label: ``sampler_label`` and
    ``task_label`` (name and parameters, kbench.Spec) join the identity, and ``base_seed``
    (the sweep's seed) and ``cell_inputs`` (the rerun fingerprint) are new; version 1 did
    not record them (missing here). Its own label helpers ``sampler_label_params`` and
    ``task_label_params`` go."""
    frame = frame.drop(columns=[c for c in ("sampler_label_params", "task_label_params")
                                if c in frame])

    def labels(kind: str) -> list[str]:
        return [Spec.of(kind, name,
                        json.loads(params) if isinstance(params, str) and params else None).label
                for name, params in zip(frame[kind],
                                        frame.get(f"{kind}_params", [None] * len(frame)))]

    return frame.assign(sampler_label=labels("sampler"), task_label=labels("task"),
                        base_seed=pd.array([pd.NA] * len(frame), dtype="Int64"), cell_inputs="",
                        schema_version=2)


def _v2_to_v3(frame: pd.DataFrame) -> pd.DataFrame:
    """Version 3 records the sweep a row belongs to (``sweep``: its folder, the base seed and
    λ path, kbench.sweep.layout.sweep_id) and where its code came from (:data:`PROVENANCE`);
    version 2 did not (missing here: such rows form one sweep of their own)."""
    return frame.assign(sweep=pd.NA, **{c: frame[c] if c in frame else pd.NA for c in PROVENANCE},
                        schema_version=3)


def _v3_to_v4(frame: pd.DataFrame) -> pd.DataFrame:
    """Version 4 splits a validation part from the training rows and records, on every row
    of a λ-path cell, the λ chosen on it (``lam_selected``, ``lam_selected_exact``,
    ``lam_at_edge``, ``lam_at_edge_exact``) and the split it was chosen on
    (``selected_on``, kbench.tasks.selection). Version 3 rows had no validation part: a
    leaderboard read them at their best test value, so they are marked chosen on "test"
    (the oracle), their choices missing."""
    lam = frame["lam"] if "lam" in frame else pd.Series(float("nan"), index=frame.index)
    chosen_on = pd.Series(pd.NA, index=frame.index, dtype=object).where(lam.isna(), "test")
    return frame.assign(selected_on=chosen_on, schema_version=4)


#: version v → the step that turns rows of version v into rows of version v + 1
MIGRATIONS: dict[int, Callable[[pd.DataFrame], pd.DataFrame]] = {
    1: _v1_to_v2, 2: _v2_to_v3, 3: _v3_to_v4}


def migrate(frame: pd.DataFrame, where: str = "the rows") -> pd.DataFrame:
    """Rows of any older schema version brought to :data:`SCHEMA_VERSION`, step by step (a
    new frame; the argument is left as it is). Rows of a newer version, or of a version with
    no migration, are a ValueError naming the versions."""
    if frame.empty:
        raise ValueError(f"{where}: no rows, where a kbench result has at least one; delete it and "
                         "rerun.")
    if "schema_version" not in frame or frame["schema_version"].isna().any():
        raise ValueError(f"{where} carry no schema_version: not a kbench result file; "
                         "move it out of the results directory.")
    versions = sorted(int(v) for v in frame["schema_version"].unique())
    if versions[-1] > SCHEMA_VERSION:
        raise ValueError(f"{where} have schema_version {versions[-1]}, written by a newer kbench; "
                         f"this kbench reads versions up to {SCHEMA_VERSION}: upgrade kbench (pip "
                         "install -U kbench).")
    if versions == [SCHEMA_VERSION]:
        return frame
    parts = []
    for version, rows in frame.groupby("schema_version", sort=True):
        for step in range(int(version), SCHEMA_VERSION):
            if step not in MIGRATIONS:
                raise ValueError(f"{where} have schema_version {int(version)}, which this kbench "
                                 f"cannot migrate to version {SCHEMA_VERSION}; rerun that sweep.")
            rows = MIGRATIONS[step](rows)
        parts.append(rows)
    return pd.concat(parts, ignore_index=True)
