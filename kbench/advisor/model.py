"""What the published evidence predicts for data of a given regime at a given rank.

Each evidence dataset has a curve per sampler over its swept ranks: the relative gap of the
mean headline to the exact kernel's (> 0: worse), the regret (the relative gap to the best
sampler's mean at that rank; a failed sampler takes the worst sampler's regret) and the
failure rate. A rank r on data of effective dimension d_eff compares with the rank
r·d_eff(j)/d_eff on dataset j (Bach 2013 §3: the rank a sampler needs scales with d_eff);
the curve is read there by linear interpolation in log rank, at its nearest end beyond its
swept ranks, and not at all more than ``RANK_FACTOR`` beyond them.

The prediction at r is the sample of the ``NEIGHBOURS`` datasets nearest in the regime
coordinates (log₁₀ n, d_eff, d_mof/d_eff) whose curves reach r, whatever their distance: every
dataset gets one, and far neighbours make it wide. If the user's data were one more draw like
them (exchangeable), the span of 19 values would hold its value with probability 18/20: the
90% interval. Its coverage, and how often the promise holds, are measured leaving each
dataset out (benchmarks/advise_validation.md).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import binom

from kbench.reporting.standing import FAILED
from kbench.reporting.units import unit_of

#: the datasets a prediction rests on: their span is a 90% prediction interval (18/20)
NEIGHBOURS = 19
#: a prediction rests on at least this many datasets (their span: a 67% interval)
FEWEST = 5
#: the promise: the gap that this share of the neighbours reach (a quantile of their gaps)
LEVEL = 0.9
#: a curve is read at most this factor beyond its smallest or largest swept rank
RANK_FACTOR = 2.0
#: the sign test's level at which the neighbours move the advice off the single best sampler
ALPHA = 0.05
#: a sampler is chosen among those scored on at least this share of the neighbours
PRESENT = 0.5


def coverage(count: int) -> float:
    """The probability that one more exchangeable value falls within the span of ``count``
    values: (count − 1)/(count + 1), 90% for the 19 neighbours."""
    return (count - 1) / (count + 1)


@dataclass(frozen=True)
class Curves:
    """The evidence of one task and kernel, as curves: ``regimes`` per dataset (its key
    "dataset (source)": n_train, d_eff, coherence, unit, path), and per (dataset, rank) × sampler
    the ``gap`` to exact, the ``regret``, the ``failed`` share and the mean ``seconds`` of the
    scored cells, and per (dataset, rank) the mean |exact| headline (``scale``, to read an
    absolute equivalence region as a relative one)."""

    regimes: pd.DataFrame
    gap: pd.DataFrame
    regret: pd.DataFrame
    failed: pd.DataFrame
    seconds: pd.DataFrame
    scale: pd.Series

    def without(self, unit: str) -> Curves:
        """The curves without the datasets of one unit of analysis (a frame at any size)."""
        keep = self.regimes.index[self.regimes["unit"] != unit]
        rows = self.gap.index.get_level_values("key").isin(keep)
        return Curves(self.regimes.loc[keep], self.gap[rows], self.regret[rows], self.failed[rows],
                      self.seconds[rows], self.scale[rows])

    def single_best(self) -> str:
        """The sampler of least mean regret over the datasets (each its mean over its ranks),
        among those scored on most of them: the policy that ignores the regime."""
        per_dataset = self.regret.groupby(level="key").mean()
        present = per_dataset.notna().mean() >= PRESENT
        return str(per_dataset.loc[:, present].mean().idxmin())

    def neighbours(self, ours: pd.DataFrame, n_train: int, rank: int,
                   count: int = NEIGHBOURS) -> pd.DataFrame:
        """The ``count`` datasets nearest to the user's regime whose curves reach ``rank``: their
        distance, their comparable rank and their regime, nearest first. ``ours`` holds the
        user's d_eff and coherence as read against each dataset (on its λ path), or one row
        for all of them."""
        if len(ours) == 1:
            ours = ours.iloc[[0] * len(self.regimes)]
        else:
            ours = ours.reindex(self.regimes.index)
        d_eff = ours["d_eff"].to_numpy(float)
        here = np.log10(np.column_stack([np.full(len(d_eff), float(n_train)), d_eff,
                                         ours["coherence"].to_numpy(float)]))
        distance = np.sqrt(((self._coordinates - here) ** 2).sum(axis=1))
        comparable = rank * self.regimes["d_eff"].to_numpy(float) / d_eff
        low, high = self._swept
        reached = np.flatnonzero((comparable >= low / RANK_FACTOR)
                                 & (comparable <= high * RANK_FACTOR))
        order = reached[np.argsort(distance[reached], kind="stable")][:count]
        return self.regimes.iloc[order].assign(distance=distance[order],
                                               **{"comparable rank": comparable[order]})

    @functools.cached_property
    def _coordinates(self) -> np.ndarray:
        """log₁₀ of (n, d_eff, coherence) of every dataset, in the order of ``regimes``."""
        return np.log10(self.regimes[["n_train", "d_eff", "coherence"]].to_numpy(float))

    @functools.cached_property
    def _swept(self) -> tuple[np.ndarray, np.ndarray]:
        """Each dataset's smallest and largest swept rank, in the order of ``regimes``."""
        swept = (self.gap.index.to_frame(index=False).groupby("key")["rank"].agg(["min", "max"])
                 .reindex(self.regimes.index))
        return swept["min"].to_numpy(float), swept["max"].to_numpy(float)

    @functools.cached_property
    def _rows(self) -> dict[str, np.ndarray]:
        """Each dataset's row positions in the (dataset, rank) tables, by rising rank."""
        return (pd.Series(np.arange(len(self.gap)))
                .groupby(self.gap.index.get_level_values("key")).indices)

    def read(self, table: pd.DataFrame, near: pd.DataFrame, extend: bool = False,
             at: float | None = None) -> pd.DataFrame:
        """``table`` (gap, regret, failed or log seconds) of each neighbour at its comparable
        rank (or at rank ``at`` on every one), one row each (:func:`_interpolate`)."""
        values, log_ranks = (table.to_numpy(float),
                             np.log(table.index.get_level_values("rank").to_numpy(float)))
        read = [_interpolate(log_ranks[rows], values[rows],
                             math.log(at if at is not None else rank), extend)
                for rows, rank in zip((self._rows[key] for key in near.index),
                                      near["comparable rank"], strict=True)]
        return pd.DataFrame(read, index=near.index, columns=table.columns)

    def expected_seconds(self, near: pd.DataFrame, rank: int, n_train: int) -> pd.Series:
        """Per sampler, the median over the neighbours of a cell's seconds at ``rank`` itself
        (interpolated in log-log, the edge slopes beyond), times n_train/n: every sampler here
        is linear in n."""
        log_seconds = self.read(np.log(self.seconds), near, extend=True, at=rank)
        return np.exp(log_seconds).mul(n_train / near["n_train"], axis=0).median()


def _interpolate(log_ranks: np.ndarray, table: np.ndarray, x: float,
                 extend: bool = False) -> np.ndarray:
    """Each column's value at log rank ``x``, linear in log rank between the two swept ranks
    (``log_ranks``, rising, one per row of ``table``) around it (NaN where either is); beyond
    them the nearest end's, or with ``extend`` the line through the two nearest swept ranks."""
    if len(log_ranks) == 1:
        return table[0]
    i = int(np.clip(np.searchsorted(log_ranks, x), 1, len(log_ranks) - 1))
    t = (x - log_ranks[i - 1]) / (log_ranks[i] - log_ranks[i - 1])
    if not extend and (t <= 0.0 or t >= 1.0):  # at or beyond a swept rank: its value
        return table[i - 1] if t <= 0.0 else table[i]
    return table[i - 1] + t * (table[i] - table[i - 1])


def curves(cells: pd.DataFrame, smaller_is_better: bool) -> Curves:
    """The curves of evidence ``cells`` of one task and kernel (kbench.advisor.evidence)."""
    cells = cells.assign(key=cells["dataset"] + " (" + cells["source"] + ")",
                         failed=cells["status"].isin(FAILED))
    scored = cells[~cells["failed"]]
    by = ["key", "rank"]
    means = scored.groupby([*by, "sampler"])["metric"].mean().unstack("sampler")
    samplers = sorted(cells["sampler"].unique())
    failed = cells.groupby([*by,
                            "sampler"])["failed"].mean().unstack("sampler").reindex(columns=samplers)
    means = means.reindex(index=failed.index, columns=samplers)
    exact = cells.groupby(by)["exact"].mean()
    seconds = scored[scored["seconds"] > 0].groupby([*by,
                                                     "sampler"])["seconds"].mean().unstack("sampler")
    sign = 1.0 if smaller_is_better else -1.0
    gap = sign * (means.div(exact, axis=0) - 1.0)
    best = means.min(axis=1) if smaller_is_better else means.max(axis=1)
    regret = (sign * means.sub(best, axis=0)).div(best.abs(), axis=0)
    # failed in every repetition: the worst
    regret = regret.mask(failed >= 1.0, regret.max(axis=1), axis=0)
    first = cells.groupby("key")[["n_train", "d_eff", "d_mof", "path", "dataset"]].first()
    regimes = first.assign(coherence=first["d_mof"] / first["d_eff"],
                           unit=first["dataset"].map(unit_of))
    return Curves(regimes.drop(columns=["d_mof"]), gap, regret, failed,
                  seconds.reindex(index=failed.index, columns=samplers), exact.abs())


def margin_of(task, evidence: Curves, near: pd.DataFrame) -> float:
    """The task's region of practical equivalence as a relative regret (an absolute region,
    such as accuracy points, relative to the neighbours' typical exact headline)."""
    headline = task.headline
    if headline.relative:
        return headline.equivalence
    scale = evidence.scale.groupby(level="key").mean().reindex(near.index).median()
    return headline.equivalence / scale if scale > 0 else math.inf


def ahead(regrets: pd.DataFrame, single: str, margin: float) -> pd.Series:
    """Per sampler, the one-sided sign test's p-value that it beats the single best sampler by
    more than ``margin`` (the task's equivalence region) on the neighbours, each a pair of
    regrets (differences within the margin are ties, left out): P(X ≥ wins) for X ~
    Binomial(wins + losses, 1/2). A claim over datasets."""
    if single not in regrets:
        return pd.Series(1.0, index=regrets.columns)
    lead = regrets[single].to_numpy()[:, None] - regrets.to_numpy()
    wins, losses = (lead > margin).sum(axis=0), (lead < -margin).sum(axis=0)
    return pd.Series(np.where(wins + losses > 0, binom.sf(wins - 1, wins + losses, 0.5), 1.0),
                     index=regrets.columns)


def pick(table: pd.DataFrame, single: str) -> str:
    """The sampler to advise from a samplers' table: the single best sampler of the whole
    evidence unless others beat it on the neighbours by more than the task's equivalence
    region in a sign test at ``ALPHA``; then the one of them of least mean regret."""
    moved = table[table["p ahead"] < ALPHA]
    if single in table.index and moved.empty:
        return single
    return str((moved if len(moved) else table)["mean regret"].idxmin())
