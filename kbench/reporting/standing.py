"""The one statistic of a leaderboard section, from which every number the page prints
about it is derived: the place of each sampler in each (dataset, rank) block.

A block's entry for a sampler is the mean of its headline over the repetitions. Entries
closer than the task's noise floor (``Headline.atol`` + ``Headline.rtol``·|value|), or
than one standard error of their paired differences over repetitions, are ties and share
their place; a sampler with a failed cell (error, timeout, oom) in the block is last there,
tied with the other failures. Mean ranks (the table's and the critical-difference
diagram's alike) are over the blocks where every ranked sampler has a cell; a sampler
with cells in fewer than half of the blocks is not ranked. A budget (block) is won only by
a sole first place over at least two paired repetitions. The Friedman test and the
Nemenyi post-hoc comparisons (Demšar 2006; scikit-posthocs) run on the same places.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from kbench.errors import Status

#: significance level of the Friedman test and its post-hoc comparisons
ALPHA = 0.05
BASELINE = "uniform"
TOLERANCES = (0.01, 0.05)
MISSING = "—"
FAILED = frozenset(s.value for s in Status if s.failed)

STANDING_TEXT = (
    "One statistic per task: each sampler's place in each (dataset, rank) block, by its mean over "
    "repetitions. Values within the task's noise floor, or within one standard error of their paired "
    "differences over repetitions, tie and share a place; a failed cell (error, timeout, oom) puts its "
    "sampler last in the block, tied with the other failures. Mean rank: over the blocks where every ranked "
    "sampler has a cell (the critical-difference diagram uses the same). Failure rate: failed cells over "
    "cells. Budgets won: blocks where the sampler is first alone, over two or more paired repetitions. "
    "p vs best: Nemenyi p-value against the first row (α = 0.05). Rank within x% of exact: over the datasets, the "
    "upper median of the smallest swept rank whose mean is within x% of the exact kernel's.")


@dataclass
class Standing:
    """Places per block and everything derived from them, for one section."""

    places: pd.DataFrame  # (dataset, rank) blocks × ranked samplers; complete blocks only
    won: pd.DataFrame  # per complete block: winner ("" when none), value, runner-up, margin, ahead in
    left_out: dict[str, int]  # samplers not ranked → blocks where they have cells
    blocks: int  # all (dataset, rank) blocks of the section
    datasets: int
    pvalues: pd.DataFrame | None  # Nemenyi, over ``places``
    friedman_p: float | None
    table: pd.DataFrame  # per sampler, formatted: what the page prints

    @property
    def ranked(self) -> int:
        """The number of blocks the mean ranks are over."""
        return len(self.places)


def tied(a: np.ndarray, b: np.ndarray, atol: float, rtol: float) -> bool:
    """Whether two samplers' repetition values in a block are a tie: their means within the
    noise floor, or within one standard error of their paired differences."""
    ma, mb = np.nanmean(a), np.nanmean(b)
    if abs(ma - mb) <= atol + rtol * max(abs(ma), abs(mb)):
        return True
    both = ~(np.isnan(a) | np.isnan(b))
    if both.sum() < 2:
        return False
    diff = a[both] - b[both]
    return bool(abs(diff.mean()) <= diff.std(ddof=1) / math.sqrt(both.sum()))


def block_places(values: pd.DataFrame, failed: pd.Series, smaller: bool, atol: float, rtol: float
                 ) -> tuple[pd.Series, list[list[str]]]:
    """Places in one block (``values``: repetitions × samplers; ``failed``: per sampler) and
    the groups of tied samplers, best first (failures not among them)."""
    ok = [s for s in values.columns if not failed[s]]
    means = values[ok].mean().sort_values(ascending=smaller, kind="stable")
    groups: list[list[str]] = []
    for sampler in means.index:
        if groups and tied(values[groups[-1][0]].to_numpy(), values[sampler].to_numpy(), atol, rtol):
            groups[-1].append(sampler)
        else:
            groups.append([sampler])
    places, position = {}, 1
    for group in [*groups, [s for s in values.columns if failed[s]]]:
        places.update({s: position + (len(group) - 1) / 2 for s in group})
        position += len(group)
    return pd.Series(places, dtype=float), groups


def standing(section, seed: int = 0, n_boot: int = 2000) -> Standing:
    """The places of every sampler of a section (kbench.reporting.scores.Section) in every
    block, and the table derived from them."""
    headline = section.task.headline
    cells = section.cells
    atol, rtol = headline.atol, headline.rtol
    cells = cells.assign(failed=cells["status"].isin(FAILED))
    present = cells.groupby("sampler")[["dataset", "rank"]].apply(lambda c: len(c.drop_duplicates()))
    blocks = cells[["dataset", "rank"]].drop_duplicates()
    left_out = {s: int(c) for s, c in present.items() if c < len(blocks) / 2}
    kept = cells[~cells["sampler"].isin(left_out)]
    samplers = sorted(kept["sampler"].unique())
    places, won = {}, []
    for (dataset, rank), block in kept.groupby(["dataset", "rank"]):
        values = block.pivot_table(index="repetition", columns="sampler", values="metric", aggfunc="first",
                                   dropna=False).reindex(columns=sorted(block["sampler"].unique()))
        failed = block.groupby("sampler")["failed"].any() | values.isna().all()
        place, groups = block_places(values, failed.reindex(values.columns), section.smaller, atol, rtol)
        if set(place.index) == set(samplers):  # a complete block
            places[dataset, rank] = place
            won.append(_budget(dataset, rank, values, groups, section.smaller))
    complete = pd.DataFrame(places, index=samplers).T.rename_axis(["dataset", "rank"])
    pvalues, friedman_p = _tests(complete)
    result = Standing(complete, pd.DataFrame(won), left_out, len(blocks), cells["dataset"].nunique(),
                      pvalues, friedman_p, pd.DataFrame())
    result.table = _table(section, result, cells, np.random.default_rng(seed), n_boot)
    return result


def _budget(dataset, rank, values: pd.DataFrame, groups: list[list[str]], smaller: bool) -> dict:
    """One block's winner: the sole first place over two or more paired repetitions, else none."""
    record = {"dataset": dataset, "rank": int(rank), "winner": "", "value": np.nan, "runner-up": "",
              "relative margin": np.nan, "ahead in": ""}
    if not groups:
        return record
    first = groups[0]
    record["value"] = float(values[first[0]].mean())
    if len(first) > 1:
        record["winner"] = "tie: " + ", ".join(first)
        return record
    if len(groups) < 2:
        return record
    second = groups[1][0]
    ours, theirs = values[first[0]], values[second]
    both = ours.notna() & theirs.notna()
    ahead = (ours[both] < theirs[both]) if smaller else (ours[both] > theirs[both])
    scale = abs(theirs.mean())
    record.update({"runner-up": second, "ahead in": f"{int(ahead.sum())} of {int(both.sum())}",
                   "relative margin": abs(ours.mean() - theirs.mean()) / scale if scale else np.nan})
    record["winner"] = first[0] if both.sum() >= 2 else f"tie: one repetition ({first[0]} ahead)"
    return record


def _tests(places: pd.DataFrame) -> tuple[pd.DataFrame | None, float | None]:
    """Friedman test and Nemenyi p-values over complete blocks of places (None when fewer than
    3 samplers or 2 blocks, or when every block is one tie)."""
    import scikit_posthocs as sp
    from scipy.stats import friedmanchisquare

    if places.shape[1] < 3 or places.shape[0] < 2 or (places.nunique(axis=1) <= 1).all():
        return None, None
    statistic = friedmanchisquare(*(places[c].to_numpy() for c in places.columns))
    if not math.isfinite(statistic.pvalue):
        return None, None
    pvalues = sp.posthoc_nemenyi_friedman(places.reset_index(drop=True))
    return pvalues, float(statistic.pvalue)


def _table(section, result: Standing, cells: pd.DataFrame, rng, n_boot: int) -> pd.DataFrame:
    """Per sampler, formatted for the page, best mean rank first (unranked samplers last)."""
    samplers = sorted(cells["sampler"].unique())
    mean_rank = result.places.mean().reindex(samplers)
    order = mean_rank.sort_values(kind="stable").index
    table = pd.DataFrame(index=pd.Index(order, name="sampler"))
    table["mean rank"] = [f"{v:.2f}" if pd.notna(v) else "not ranked" for v in mean_rank.reindex(order)]
    rate = cells.groupby("sampler")["failed"].mean().reindex(order)
    table["failure rate"] = [f"{v:.0%}" for v in rate]
    wins = result.won["winner"].value_counts() if len(result.won) else pd.Series(dtype=int)
    table["budgets won"] = [f"{int(wins.get(s, 0))} of {result.ranked}" if s in result.places else MISSING
                            for s in order]
    best = order[0] if len(order) and pd.notna(mean_rank.get(order[0])) else None
    table["p vs best"] = [f"{result.pvalues.loc[best, s]:.2g}" if result.pvalues is not None and
                          s in result.pvalues and s != best else MISSING for s in order]
    if BASELINE in set(cells["sampler"]):
        floor = (section.task.headline.atol, section.task.headline.rtol)
        for s in order:
            if s == BASELINE:
                continue
            win = win_rate(cells[cells["sampler"] == s], cells[cells["sampler"] == BASELINE], section.smaller,
                           floor, rng, n_boot)
            if win is not None:
                table.loc[s, f"win rate vs {BASELINE}"] = win.text
                table.loc[s, "pairs"] = str(win.pairs)
    if section.task.headline.exact is not None and cells["exact"].notna().any():
        top = int(cells["rank"].max())
        for tolerance in TOLERANCES:
            reach = rank_to_match(cells, section.smaller, tolerance).reindex(order)
            table[f"rank within {tolerance:.0%} of exact"] = [
                MISSING if pd.isna(v) else (f"> {top}" if np.isinf(v) else f"{int(v)}") for v in reach]
    return table.fillna(MISSING)


def ranks_to_match(cells: pd.DataFrame, smaller: bool, tolerance: float) -> pd.Series:
    """Per (sampler, dataset) with an exact value: the smallest swept rank whose repetition
    mean is within ``tolerance`` of the exact kernel's with no failed cell, +inf when none is."""
    ok = cells[~cells["status"].isin(FAILED)]
    failed = cells[cells["status"].isin(FAILED)][["dataset", "sampler", "rank"]].drop_duplicates()
    mean = ok.groupby(["dataset", "sampler", "rank"])[["metric", "exact"]].mean().reset_index()
    mean = mean.merge(failed.assign(any_failed=True), how="left", on=["dataset", "sampler", "rank"])
    mean = mean[mean["exact"].notna()]
    if mean.empty:
        return pd.Series(dtype=float)
    bound = (1 + tolerance) * mean["exact"] if smaller else (1 - tolerance) * mean["exact"]
    reached = (mean["metric"] <= bound if smaller else mean["metric"] >= bound) & mean["any_failed"].isna()
    return mean["rank"].where(reached, np.inf).groupby([mean["sampler"], mean["dataset"]]).min()


def rank_to_match(cells: pd.DataFrame, smaller: bool, tolerance: float) -> pd.Series:
    """Per sampler: the upper median over datasets of :func:`ranks_to_match`, so the value is
    one of the swept ranks, or +inf ("> largest swept rank"); a stricter tolerance never
    reads a smaller rank."""
    first = ranks_to_match(cells, smaller, tolerance)
    if first.empty:
        return first
    return first.groupby("sampler").agg(lambda v: np.quantile(v.to_numpy(), 0.5, method="higher"))


@dataclass
class WinRate:
    """How often one sampler beats another on paired cells, with a bootstrap 95% interval."""

    rate: float
    low: float
    high: float
    pairs: int

    @property
    def text(self) -> str:
        return f"{self.rate:.2f} [{self.low:.2f}, {self.high:.2f}]"

    @classmethod
    def of(cls, score: np.ndarray, rng: np.random.Generator, n_boot: int = 2000) -> WinRate:
        """The mean of per-pair scores (1 win, 0.5 tie, 0 loss), percentile bootstrap interval."""
        boot = score[rng.integers(0, len(score), size=(n_boot, len(score)))].mean(axis=1)
        low, high = np.percentile(boot, [2.5, 97.5])
        return cls(float(score.mean()), float(low), float(high), len(score))


def win_rate(ours: pd.DataFrame, theirs: pd.DataFrame, smaller: bool, floor: tuple[float, float],
             rng: np.random.Generator, n_boot: int = 2000) -> WinRate | None:
    """Share of paired cells (same dataset, rank and repetition, hence the same split) where
    ``ours`` beats ``theirs`` (a failed cell loses, two failures tie, values within the noise
    floor tie); None when no cell pairs up."""
    pairing = ["dataset", "rank", "repetition"]
    paired = ours.set_index(pairing)["metric"].to_frame("ours").join(
        theirs.set_index(pairing)["metric"].rename("theirs"), how="inner")
    if paired.empty:
        return None
    return WinRate.of(pair_scores(paired["ours"], paired["theirs"], smaller, floor), rng, n_boot)


def pair_scores(ours: pd.Series, theirs: pd.Series, smaller: bool, floor: tuple[float, float] = (0.0, 0.0)
                ) -> np.ndarray:
    """Per pair of values: 1 where ours is better, 0.5 on a tie (within the noise floor
    ``(atol, rtol)``, or both failed: NaN), 0 where it is worse; a failure (NaN) loses."""
    a, b = ours.to_numpy(dtype=float), theirs.to_numpy(dtype=float)
    atol, rtol = floor
    with np.errstate(invalid="ignore"):
        tie = np.abs(a - b) <= atol + rtol * np.maximum(np.abs(a), np.abs(b))
        better = (a < b) if smaller else (a > b)
    score = np.where(tie, 0.5, better.astype(float))
    score = np.where(np.isnan(a) & ~np.isnan(b), 0.0, score)
    score = np.where(~np.isnan(a) & np.isnan(b), 1.0, score)
    return np.where(np.isnan(a) & np.isnan(b), 0.5, score)
