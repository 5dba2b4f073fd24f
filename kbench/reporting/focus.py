"""The sampler-author view (``kbench leaderboard ... --focus NAME``): one sampler against
every other on paired cells (same dataset, rank and repetition, hence the same split),
with bootstrap 95% intervals, over all cells and per dataset and rank."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from kbench.reporting.scores import Section
from kbench.reporting.standing import WinRate, pair_scores

FOCUS_TEXT = ("Paired win rate of the focused sampler against every other (same dataset, rank and "
              "repetition, hence the same split; ties, within the task's noise floor, count one half; a "
              "failed cell loses, two failed cells tie), bootstrap 95% interval.")


@dataclass
class FocusTables:
    """One task configuration seen from the focused sampler."""

    section: Section
    overall: pd.DataFrame  # opponent → win rate [interval], pairs
    per_dataset: dict[str, pd.DataFrame]  # dataset → opponent × rank win rates


def focus(found: list[Section], sampler: str, seed: int = 0) -> list[FocusTables]:
    """The focused sampler's paired win rates in every section where it has cells. Raises
    ValueError naming the samplers there are when it has none anywhere."""
    known = sorted({s for section in found for s in section.cells["sampler"].unique()})
    if sampler not in known:
        raise ValueError(f"--focus {sampler!r}: no scored cells of that sampler label; the results have "
                         f"{', '.join(known) or 'no scored cells'}.")
    rng = np.random.default_rng(seed)
    views = []
    for section in found:
        scores = paired_scores(section, sampler)
        if scores.empty:
            continue
        overall = {opponent: WinRate.of(group["score"].to_numpy(), rng)
                   for opponent, group in scores.groupby("against")}
        table = pd.DataFrame({"win rate": {o: w.text for o, w in overall.items()},
                              "pairs": {o: w.pairs for o, w in overall.items()}}).rename_axis("against")
        order = np.argsort([-overall[o].rate for o in table.index], kind="stable")
        per_dataset = {}
        for dataset, rows in scores.groupby("dataset"):
            cells = {(opponent, rank): WinRate.of(group["score"].to_numpy(), rng).text
                     for (opponent, rank), group in rows.groupby(["against", "rank"])}
            wide = pd.Series(cells).unstack()
            wide.columns = [f"rank {r}" for r in wide.columns]
            per_dataset[dataset] = wide.rename_axis("against")
        views.append(FocusTables(section, table.iloc[order], per_dataset))
    return views


def paired_scores(section: Section, sampler: str) -> pd.DataFrame:
    """One row per paired cell of ``sampler`` and another sampler: 1 when ``sampler`` is
    better, 0.5 on a tie, 0 when worse."""
    cells = section.cells[["dataset", "rank", "repetition", "sampler", "metric"]]
    ours = cells[cells["sampler"] == sampler].drop(columns="sampler")
    theirs = cells[cells["sampler"] != sampler].rename(columns={"sampler": "against"})
    pairs = ours.merge(theirs, on=["dataset", "rank", "repetition"], suffixes=("", "_theirs"))
    floor = (section.task.headline.atol, section.task.headline.rtol)
    return pairs.assign(score=pair_scores(pairs["metric"], pairs["metric_theirs"], section.smaller, floor))

