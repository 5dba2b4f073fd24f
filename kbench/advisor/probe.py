"""``kbench advise --probe``: a short sweep on a subsample of the user's data that confirms
the published evidence or overturns it.

The leading samplers (and the uniform baseline) run at the advised rank, half and twice it,
``REPETITIONS`` times, on at most ``ROWS`` rows, where the exact kernel is the reference
(dense up to 5 000 training rows); the same statistic as the leaderboards places them
(kbench.reporting.standing). With the nλ convention, d_eff(λ) of a subsample estimates the
full data's, so the ranks carry over.
"""

from __future__ import annotations

import math
import tempfile
import time
from dataclasses import dataclass

import pandas as pd

from kbench.advisor.evidence import mean_gaps
from kbench.datasets import load_dataset
from kbench.reporting.advice import gap_text, percent
from kbench.reporting.scores import sections
from kbench.reporting.standing import FAILED, standing
from kbench.spec import Spec
from kbench.sweep.scheduler import run

#: rows of the subsample (the exact kernel is dense below 5 000 training rows)
ROWS = 4000
REPETITIONS = 3


@dataclass
class Probe:
    """The probe's sweep and what it says."""

    dataset: str  # the subsample's spec
    ranks: list[int]
    table: pd.DataFrame  # per sampler: mean place, then the relative gap to exact at each rank
    failed: int
    cells: int
    seconds: float
    #: why no sampler is placed although cells ran (the subsample is uninformative), else ""
    why: str = ""

    @property
    def best(self) -> str | None:
        return None if self.table.empty else str(self.table.index[0])

    def verdict(self, advised: str | None, rank: int | None = None, promised: float | None = None,
                within: float | None = None) -> str:
        """One clause: whether the probe confirms the advice. It confirms only when ``advised``
        is first and, with ``promised``, its measured gap at ``rank`` is no larger than the gap
        the answer promised; otherwise it says what failed and, with ``within``, the smallest
        probed rank whose first sampler there is within it."""
        if self.best is None:
            return f"probe: {self.why}" if self.why else \
                f"probe: no sampler scored ({self.failed} of {self.cells} cells failed)"
        top = max(self.ranks)
        first = self.table.index[self.table["mean place"]
                                 == self.table["mean place"].iloc[0]].tolist()
        leader = advised if advised in first else self.best
        said = ((f"{self.best} first" if len(first) == 1 else f"{', '.join(first)} tie first")
                + f", {percent(self.table.loc[leader, f'gap at rank {top}'])} from exact at rank "
                f"{top} on {self.dataset}" + ("" if len(first) == 1 else f" ({leader}'s)"))
        if advised is None:
            return f"probe: {said}"
        if advised not in self.table.index:
            return f"probe overturns it: {said} ({advised}: no cell scored)" + self._reach(within)
        if self.table.loc[advised, "mean place"] != self.table.loc[self.best, "mean place"]:
            return (f"probe overturns it: {said} ({advised}: mean place "
                    f"{self.table.loc[advised, 'mean place']:.2f})"
                    + self._reach(within))
        if promised is None or not math.isfinite(promised):  # the answer promised no gap
            return f"probe confirms: {said}"
        measured = (float(self.table.loc[advised, f"gap at rank {rank}"]) if rank in self.ranks
                    else math.nan)
        # not probed at that rank, or no exact reference: no evidence for the promise
        if math.isnan(measured):
            return (f"probe confirms the order ({said}); {advised}'s gap at rank {rank} is not "
                    "measured")
        if measured > promised:
            return (f"probe overturns the gap: {advised} first but {gap_text(measured)} exact at "
                    f"rank {rank} on {self.dataset}, not {gap_text(promised)} it as promised"
                    + self._reach(within))
        return f"probe confirms: {said}; {advised} {percent(measured)} from exact at rank {rank}"

    def _reach(self, within: float | None) -> str:
        """The smallest probed rank where the best sampler there is measured ``within`` of exact."""
        if within is None:
            return ""
        for rank in self.ranks:
            gaps = self.table[f"gap at rank {rank}"].dropna()
            if len(gaps) and gaps.min() <= within:
                return f"; within {percent(within)} at rank {rank} with {gaps.idxmin()}"
        return (f"; no probed rank up to {max(self.ranks)} is within {percent(within)}: a larger "
                "rank is needed")

    def text(self) -> str:
        formatters = {c: percent for c in self.table.columns if str(c).startswith("gap")}
        formatters["mean place"] = "{:.2f}".format
        said = (f"probe: {self.dataset}, ranks {', '.join(map(str, self.ranks))}, {REPETITIONS} "
                f"repetitions, {self.cells} cells ({self.failed} failed), {self.seconds:.0f} s")
        if self.why:
            return f"{said}; {self.why}"
        return f"{said}; first: {self.best}\n" + self.table.to_string(formatters=formatters)

    def as_dict(self) -> dict:
        return {"dataset": self.dataset, "ranks": self.ranks, "best": self.best,
                "failed": self.failed,
                "cells": self.cells, "seconds": self.seconds,
                "samplers": self.table.reset_index().to_dict(orient="records")}


def subsample_spec(dataset: str, rows: int = ROWS) -> str:
    """The dataset spec with at most ``rows`` rows kept."""
    spec = Spec.parse(dataset, "dataset")
    n = spec.params.get("n")
    return Spec.of("dataset", spec.name,
                   {**spec.params, "n": min(int(n), rows) if n else rows}).label


def probe(dataset: str, task: str, kernel: str, samplers: list[str], rank: int, lams, n_rows: int,
          seed: int = 0, rows: int = ROWS) -> Probe:
    """Sweep ``samplers`` at ``rank // 2``, ``rank`` and ``2 * rank`` (at most a quarter of
    ``rows`` and the subsample's training rows) on at most ``rows`` of the ``n_rows`` rows of
    ``dataset``."""
    start = time.perf_counter()
    spec = subsample_spec(dataset, min(rows, n_rows))
    ceiling = min(max(2, rows // 4), load_dataset(spec, seed=seed).n_train)
    ranks = sorted({max(1, min(r, ceiling)) for r in (rank // 2, rank, 2 * rank)})
    with tempfile.TemporaryDirectory(prefix="kbench-probe-") as out:
        frame = run([spec], samplers, [task], ranks, list(lams), REPETITIONS, kernel=kernel,
                    out=out,
                    progress=False, seed=seed)
    found, _ = sections(frame)
    section = next(s for s in found if s.task.headline is not None)
    result = standing(section, tests=False)  # the places are what the probe reads
    ok = section.cells[~section.cells["status"].isin(FAILED)]
    gap = mean_gaps(section.cells, ["sampler", "rank"], section.smaller)
    columns = ["mean place", *(f"gap at rank {r}" for r in ranks)]
    table = result.places.mean().rename("mean place").to_frame()
    if len(gap):
        table = table.join(gap.unstack("rank").rename(columns=lambda r: f"gap at rank {r}"))
    # a sampler none of whose cells scored has no place to compare (all failures tie)
    table = table[table.index.isin(ok["sampler"])]
    table = table.reindex(columns=columns).sort_values("mean place",
                                                       kind="stable").rename_axis("sampler")
    failed = int(section.cells["status"].isin(FAILED).sum())
    why = ("" if len(section.cells) or section.uninformative.empty else
           f"no sampler placed: the subsample is uninformative for {section.label} (on its "
           "validation rows the exact kernel does not beat the trivial predictor)")
    ran = (frame[frame["task_label"] == section.label]
           .drop_duplicates(["sampler_label", "rank", "repetition"]))
    # (an uninformative subsample's cells are set apart, not in the section's)
    cells = len(section.cells) or len(ran)
    return Probe(spec, ranks, table, failed, cells, time.perf_counter() - start, why)
