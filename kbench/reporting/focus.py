"""The sampler-author view (``kbench leaderboard ... --focus NAME``): one sampler against
every other on paired cells (same dataset, rank and repetition, hence the same split): over
all datasets (each dataset's share of paired cells won, their mean, a 95% interval
resampling datasets), and per dataset and rank (the share over repetitions)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from kbench.registry import canonical_label
from kbench.reporting.scores import Section
from kbench.reporting.units import WinRate, pair_scores
from kbench.spec import Spec

FOCUS_TEXT = ("Paired win rate of the focused sampler against every other (same dataset, rank and "
              "repetition, hence the same split; a tie, inside the task's region of practical "
              "equivalence, counts one half; a failed cell loses, two failed cells tie): over "
              "datasets, the mean of each dataset's rate with a 95% interval resampling datasets; "
              "per dataset and rank, the rate over its repetitions (how many in parentheses).")


@dataclass
class FocusTables:
    """One task configuration seen from the focused sampler."""

    section: Section
    overall: pd.DataFrame  # opponent → win rate [interval], datasets, pairs
    per_dataset: dict[str, pd.DataFrame]  # dataset → opponent × rank win rates


def focus(found: list[Section], sampler: str, seed: int = 0) -> list[FocusTables]:
    """The focused sampler's paired win rates in every section where it has cells. Raises
    ValueError naming the samplers there are when it has none anywhere, and when it is the only
    one."""
    known = scored_samplers(found)
    sampler = focus_label(sampler, known)
    if known == [sampler]:
        raise ValueError(f"--focus {sampler!r}: it is the only sampler of these results, so there "
                         "is no other to pair it with; run another sampler on the same datasets "
                         "into these results.")
    rng = np.random.default_rng(seed)
    views = []
    for section in found:
        scores = paired_scores(section, sampler)
        if scores.empty:
            continue
        overall = {opponent: WinRate.of(group, rng)
                   for opponent, group in scores.groupby("against")}
        table = pd.DataFrame({"win rate": {o: w.text for o, w in overall.items()},
                              "datasets": {o: w.datasets for o, w in overall.items()},
                              "pairs": {o: w.pairs
                                        for o, w in overall.items()}}).rename_axis("against")
        order = np.argsort([-overall[o].rate for o in table.index], kind="stable")
        per_dataset = {}
        for dataset, rows in scores.groupby("dataset"):
            cells = {(opponent, rank): f"{group['score'].mean():.2f} ({len(group)})"
                     for (opponent, rank), group in rows.groupby(["against", "rank"])}
            wide = pd.Series(cells).unstack()
            wide.columns = [f"rank {r}" for r in wide.columns]
            per_dataset[dataset] = wide.rename_axis("against")
        views.append(FocusTables(section, table.iloc[order], per_dataset))
    return views


def paired_scores(section: Section, sampler: str) -> pd.DataFrame:
    """One row per paired cell of ``sampler`` and another sampler: 1 when ``sampler`` is
    better outside the equivalence region, 0.5 on a tie, 0 when worse."""
    cells = section.cells[["dataset", "rank", "repetition", "sampler", "metric"]]
    ours = cells[cells["sampler"] == sampler].drop(columns="sampler")
    theirs = cells[cells["sampler"] != sampler].rename(columns={"sampler": "against"})
    pairs = ours.merge(theirs, on=["dataset", "rank", "repetition"], suffixes=("", "_theirs"))
    return pairs.assign(score=pair_scores(pairs["metric"], pairs["metric_theirs"],
                                          section.task.headline))


def scored_samplers(found: list[Section]) -> list[str]:
    """The sampler labels with cells in any of the sections, sorted."""
    return sorted({s for section in found for s in section.cells["sampler"].unique()})


def focus_label(spec: str, known) -> str:
    """The label among ``known`` (the results' sampler labels) that ``--focus`` names, read as a
    sweep labels a sampler ("uniform:" is uniform); a ValueError saying why when none is."""
    if spec in known:
        return spec
    have = f"the results have {', '.join(known) or 'no scored cells'}"
    if "," in spec and spec.split(",", 1)[0].strip() in known:
        raise ValueError(f"--focus takes one sampler label, got the list {spec!r}; {have}.")
    try:
        label = canonical_label(Spec.parse(spec, "sampler").label, "sampler")
    except ValueError as exc:
        raise ValueError(f"--focus {spec!r}: {str(exc).rstrip('.')}; {have}.") from None
    if label not in known:
        raise ValueError(f"--focus {spec!r}: no scored cells of that sampler label; {have}.")
    return label
