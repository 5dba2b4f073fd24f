"""The statistics of a leaderboard section, with the dataset as the unit of analysis: every
number the page prints about a section is derived here (docs/conventions.md).

1. **Blocks.** In each (dataset, rank) block a sampler's value is its headline's mean over
   the repetitions. Values inside the task's region of practical equivalence
   (``Headline.equivalent``: e.g. 1% of test MSE) or its noise floor tie and share a place;
   a sampler with a failed cell (error, timeout, oom) in the block is last there.
2. **Standing on a dataset.** The ranks of one dataset share its data, split and λ path, so
   they are not independent evidence: a sampler's standing on a dataset is its mean place
   over the dataset's complete blocks (those where every ranked sampler has a cell). One
   frame run at several sizes (specs that differ only in n) or under several kernels is one
   dataset (kbench.reporting.units.unit_of).
3. **Tests over datasets** (kbench.reporting.comparisons). Friedman's test on the
   standings (scipy), and, against the sampler of best mean standing (the leader), per
   other sampler: the Wilcoxon signed-rank test over datasets (scipy) of the per-dataset
   differences (``Headline.difference``, mean over the dataset's ranks; a difference inside
   the equivalence region counts as 0), Holm-adjusted over those comparisons
   (statsmodels); and the Bayesian signed-rank test (Benavoli et al. 2017; baycomp) with
   the equivalence region as its ROPE, giving P(leader better), P(equivalent), P(other
   better). A sampler is separated from the leader when the adjusted p < 0.05 with the
   signed ranks in the leader's favour, or P(leader better) ≥ 0.95.
4. **Budgets.** A block is won when its first place is held alone, the difference to the
   runner-up lies outside the equivalence region, and a paired t-test over ≥ 5 paired
   repetitions gives p < 0.05 with the paired mean in the first's favour; otherwise the
   first is "ahead" (or the place is shared).
5. **Win rates** against uniform: per dataset, the share of paired cells won (a tie counts
   ½), mean over datasets, with a 95% percentile interval from resampling datasets
   (cluster bootstrap).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from kbench.errors import Status
from kbench.reporting.comparisons import ALPHA, SAMPLES, Comparison, compare, friedman
from kbench.reporting.units import dataset_units, unit_of, win_rate

#: a budget is won over at least this many paired repetitions
MIN_REPETITIONS = 5
BASELINE = "uniform"
TOLERANCES = (0.01, 0.05)
MISSING = "—"
FAILED = frozenset(s.value for s in Status if s.failed)

STANDING_TEXT = (
    "Standing: a sampler's place in each (dataset, rank) block by its mean over repetitions, "
    "values inside the task's region of practical equivalence tied, a failed cell last; averaged "
    "over a dataset's ranks, which share its data and split (and sizes and kernels: a frame at "
    "several n or under several kernels is one dataset), then over datasets (the unit of every "
    "test). Failure rate: failed cells over cells. Budgets won: blocks first alone, outside the "
    "equivalence region and separated from the runner-up by a paired t-test over ≥ "
    f"{MIN_REPETITIONS} repetitions (p < {ALPHA}); ahead: first alone without that. p: Wilcoxon "
    "signed-rank over datasets against the first row, Holm-adjusted; P: Bayesian signed-rank "
    "(baycomp, the equivalence region as ROPE) that this row is better than the first / equivalent "
    "to it / worse. Win rate: per dataset the share of paired cells won (ties ½), mean over "
    "datasets, 95% interval resampling datasets. Rank within x% of exact: over the datasets with "
    "the exact kernel, the upper median of the smallest swept rank whose mean is within x% of the "
    "exact kernel's; of the best sampler: the same over the datasets too large for the exact "
    "kernel, against the best mean any sampler reached there at any rank.")


def _by_block(values: dict, samplers: list[str]) -> pd.DataFrame:
    """(dataset, rank) blocks × samplers from per-block Series (none: an empty such frame)."""
    index = pd.MultiIndex.from_tuples(list(values), names=["dataset", "rank"])
    return pd.DataFrame([v.reindex(samplers) for v in values.values()], index=index,
                        columns=samplers, dtype=float)


@dataclass
class Standing:
    """Places per block, standings per dataset and everything derived from them, for one section."""

    places: pd.DataFrame  # (dataset, rank) blocks × ranked samplers; complete blocks only
    # datasets × ranked samplers: mean place over the dataset's complete blocks
    standings: pd.DataFrame
    # per complete block: winner, outcome (won / ahead / tie), value, runner-up, margin, ...
    won: pd.DataFrame
    left_out: dict[str, int]  # samplers not ranked → blocks where they have cells
    blocks: int  # all (dataset, rank) blocks of the section
    friedman_p: float | None  # Friedman's test over the datasets' standings
    comparisons: dict[str, Comparison]  # the leader against each other ranked sampler
    table: pd.DataFrame  # per sampler, formatted: what the page prints

    @property
    def ranked(self) -> int:
        """The number of complete blocks."""
        return len(self.places)

    @property
    def datasets(self) -> int:
        """The number of datasets behind the standings and every test."""
        return len(self.standings)

    @property
    def order(self) -> list[str]:
        """The ranked samplers, best mean standing first (ties: the smaller mean difference to the
        leader)."""
        return list(self.table.index[self.table["mean standing"] != "not ranked"])

    @property
    def leader(self) -> str | None:
        return self.order[0] if self.order else None

    def tied_with_leader(self) -> list[str]:
        """The leader and every ranked sampler the evidence does not separate from it, in order."""
        return [s for s in self.order if s == self.leader or not self.comparisons[s].separated]


def block_places(values: pd.DataFrame, failed: pd.Series,
                 headline) -> tuple[pd.Series, list[list[str]]]:
    """Places in one block (``values``: repetitions × samplers; ``failed``: per sampler) and
    the groups of tied samplers, best first (failures not among them): a sampler joins the
    group of the one before it when their means are equivalent to the group's first."""
    ok = [s for s in values.columns if not failed[s]]
    means = values[ok].mean().sort_values(ascending=headline.smaller_is_better, kind="stable")
    groups: list[list[str]] = []
    for sampler in means.index:
        if groups and bool(headline.equivalent(means[groups[-1][0]], means[sampler])):
            groups[-1].append(sampler)
        else:
            groups.append([sampler])
    places, position = {}, 1
    for group in [*groups, [s for s in values.columns if failed[s]]]:
        places.update({s: position + (len(group) - 1) / 2 for s in group})
        position += len(group)
    return pd.Series(places, dtype=float), groups


def standing(section, seed: int = 0, n_boot: int = 2000, tests: bool = True, table: bool = True,
             samples: int = SAMPLES) -> Standing:
    """The places of every sampler of a section (kbench.reporting.scores.Section) in every
    block, its standing on every dataset, the tests over datasets and the table derived from
    them (the places and standings only, without ``tests``: what the advisor reads; without
    ``table``, the tests and only the mean standings of the table: a slice's verdict).
    ``samples``: the Bayesian signed-rank test's Monte Carlo samples."""
    headline = section.task.headline
    cells = section.cells.assign(failed=section.cells["status"].isin(FAILED))
    present = cells.drop_duplicates(["sampler", "dataset", "rank"]).groupby("sampler").size()
    blocks = cells[["dataset", "rank"]].drop_duplicates()
    left_out = {s: int(c) for s, c in present.items() if c < len(blocks) / 2}
    kept = cells[~cells["sampler"].isin(left_out)]
    samplers = sorted(kept["sampler"].unique())
    places, won, means = {}, [], {}
    for (dataset, rank), block in kept.groupby(["dataset", "rank"]):
        # (a third of pivot_table's time: a page has hundreds of blocks)
        values = block.groupby(["repetition", "sampler"])["metric"].first().unstack().reindex(
            columns=sorted(block["sampler"].unique()))
        failed = block.groupby("sampler")["failed"].any() | values.isna().all()
        place, groups = block_places(values, failed.reindex(values.columns), headline)
        if set(place.index) == set(samplers):  # a complete block
            places[dataset, rank] = place
            means[dataset, rank] = values.mean().where(~failed.reindex(values.columns))
            won.append(_budget(dataset, rank, values, groups, headline))
    complete, block_means = _by_block(places, samplers), _by_block(means, samplers)
    standings = complete.groupby(dataset_units(complete)).mean() if len(complete) else complete
    result = Standing(complete, standings, pd.DataFrame(won), left_out, len(blocks),
                      friedman(standings), {}, pd.DataFrame())
    if not tests:
        return result
    order = _order(standings, block_means, headline)
    if order:
        result.comparisons = compare(order[0], order[1:], block_means, headline, seed, samples)
    if table:
        result.table = _table(section, result, cells, order, np.random.default_rng(seed), n_boot)
    else:
        mean = standings.mean()
        result.table = pd.DataFrame({"mean standing": [f"{mean[s]:.2f}" for s in order]},
                                    index=pd.Index(order))
    return result


def _order(standings: pd.DataFrame, block_means: pd.DataFrame, headline) -> list[str]:
    """The ranked samplers by mean standing over datasets; equal standings by the mean of
    their per-dataset differences against all others (never by name)."""
    if standings.empty:
        return []
    mean = standings.mean()
    samplers = list(mean.index)
    values = block_means[samplers].to_numpy(dtype=float)
    # every pair at once: what dataset_differences(ours, theirs).mean() is for each of them
    gain = headline.difference(values[:, :, None], values[:, None, :]).reshape(len(values), -1)
    per_dataset = (pd.DataFrame(gain, index=block_means.index)
                   .groupby(dataset_units(block_means)).mean().to_numpy())
    per_dataset = np.where(np.abs(per_dataset) > headline.equivalence, per_dataset, 0.0)
    pairs = per_dataset.mean(axis=0).reshape(len(samplers), len(samplers))  # the diagonal is 0
    advantage = dict(zip(samplers, pairs.sum(axis=1) / max(len(samplers) - 1, 1), strict=True))
    return sorted(samplers, key=lambda s: (round(mean[s], 9), -advantage[s]))


def _budget(dataset, rank, values: pd.DataFrame, groups: list[list[str]], headline) -> dict:
    """One block's first place: won, ahead, or a tie (module docstring, 4)."""
    from scipy.stats import ttest_rel

    record = {"dataset": dataset, "rank": int(rank), "winner": "", "outcome": "", "value": np.nan,
              "runner-up": "", "margin": np.nan, "ahead in": "", "p (paired t)": np.nan}
    if not groups:
        return record
    first = groups[0]
    record["value"] = float(values[first[0]].mean())
    if len(first) > 1:
        record.update(winner=", ".join(first), outcome="tie")
        return record
    record.update(winner=first[0], outcome="ahead")
    if len(groups) < 2:
        return record
    second = groups[1][0]
    ours, theirs = values[first[0]], values[second]
    both = ours.notna() & theirs.notna()
    better = ((ours[both] < theirs[both]) if headline.smaller_is_better
              else (ours[both] > theirs[both]))
    record.update({"runner-up": second, "ahead in": f"{int(better.sum())} of {int(both.sum())}",
                   "margin": float(headline.difference(ours.mean(), theirs.mean()))})
    if both.sum() >= MIN_REPETITIONS:
        # > 0: the first is better
        gain = headline.difference(ours[both].to_numpy(), theirs[both].to_numpy())
        if gain.std() > 0:
            p = float(ttest_rel(ours[both], theirs[both]).pvalue)
        else:  # every repetition gains the same: certain when it is a gain
            p = 0.0 if gain.mean() > 0 else 1.0
        record["p (paired t)"] = p
        if p < ALPHA and gain.mean() > 0:
            record["outcome"] = "won"
    return record


def _table(section, result: Standing, cells: pd.DataFrame, order: list[str], rng,
           n_boot: int) -> pd.DataFrame:
    """Per sampler, formatted for the page: ranked samplers in order, the others after."""
    headline = section.task.headline
    samplers = sorted(cells["sampler"].unique())
    rows = [*order, *(s for s in samplers if s not in order)]
    n = result.datasets
    table = pd.DataFrame(index=pd.Index(rows, name="sampler"))
    mean = result.standings.mean() if n else pd.Series(dtype=float)
    table["mean standing"] = [f"{mean[s]:.2f}" if s in order else "not ranked" for s in rows]
    table["datasets"] = [str(n) if s in order else MISSING for s in rows]
    rate = cells.groupby("sampler")["failed"].mean().reindex(rows)
    table["failure rate"] = [f"{v:.0%}" for v in rate]
    outcomes = result.won.groupby(["winner",
                                   "outcome"]).size() if len(result.won) else pd.Series(dtype=int)
    # else every block's first is ahead at most
    winnable = cells["repetition"].nunique() >= MIN_REPETITIONS
    for outcome, column in ((("won", "budgets won"),) if winnable else ()) + (("ahead", "ahead"),):
        table[column] = [f"{int(outcomes.get((s, outcome), 0))} of {result.ranked}" if s in order
                         else MISSING
                         for s in rows]
    leader = order[0] if order else None
    datasets = f"{n} dataset{'s' if n != 1 else ''}"
    p_column = f"p vs {leader} ({datasets})"
    prob_column = f"P(better / equivalent / worse than {leader}) ({datasets})"
    for s in rows:
        comparison = result.comparisons.get(s)
        table.loc[s, p_column] = MISSING if comparison is None else f"{comparison.p_holm:.2g}"
        table.loc[s, prob_column] = (
            MISSING if comparison is None or math.isnan(comparison.probabilities[0])
            else " / ".join(f"{v:.2f}" for v in comparison.probabilities[::-1]))
    if BASELINE in set(cells["sampler"]):
        for s in rows:
            if s == BASELINE:
                continue
            win = win_rate(cells[cells["sampler"] == s], cells[cells["sampler"] == BASELINE],
                           headline, rng, n_boot)
            if win is not None:
                table.loc[s, f"win rate vs {BASELINE}"] = win.text
                table.loc[s, "paired datasets"] = str(win.datasets)
    if headline.exact is not None and len(cells):  # (none: every dataset uninformative)
        top = int(cells["rank"].max())
        exact = cells.groupby("dataset")["exact"].transform(lambda v: v.notna().any())
        for reference, of in (("exact", cells[exact]),
                              ("the best sampler", against_best(cells[~exact], headline))):
            if of.empty:
                continue
            for tolerance in TOLERANCES:
                reach = rank_to_match(of, headline.smaller_is_better, tolerance).reindex(rows)
                table[f"rank within {tolerance:.0%} of {reference} ({counted(of['dataset'])})"] = [
                    MISSING if pd.isna(v) else (f"> {top}" if np.isinf(v) else f"{int(v)}")
                    for v in reach]
    return table.fillna(MISSING)


def counted(datasets: pd.Series) -> str:
    """How many datasets (units: a frame at several sizes or under several kernels is one)
    and, when there are more, at how many sizes and in how many (dataset, kernel) pairs."""
    keys = pd.Series(datasets.unique())
    units, labels = keys.map(unit_of).nunique(), keys.map(lambda key: key.partition(" [")[0])
    said = f"{units} dataset{'s' if units != 1 else ''}"
    said += f" at {labels.nunique()} sizes" if labels.nunique() != units else ""
    return said + (f", {len(keys)} with their kernels" if len(keys) != labels.nunique() else "")


def against_best(cells: pd.DataFrame, headline) -> pd.DataFrame:
    """The cells of datasets without the exact kernel, their ``exact`` column replaced by the
    best repetition mean of any sampler at any rank on that dataset: the gap a page states
    where the exact kernel did not fit the budget."""
    ok = cells[~cells["status"].isin(FAILED)]
    means = ok.groupby(["dataset", "sampler", "rank"])["metric"].mean()
    by_dataset = means.groupby("dataset")
    best = by_dataset.min() if headline.smaller_is_better else by_dataset.max()
    return cells.assign(exact=cells["dataset"].map(best))


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
    reached = (mean["metric"] <= bound if smaller
               else mean["metric"] >= bound) & mean["any_failed"].isna()
    return mean["rank"].where(reached, np.inf).groupby([mean["sampler"], mean["dataset"]]).min()


def rank_to_match(cells: pd.DataFrame, smaller: bool, tolerance: float) -> pd.Series:
    """Per sampler: the upper median over datasets of :func:`ranks_to_match`, so the value is
    one of the swept ranks, or +inf ("> largest swept rank"); a stricter tolerance never
    reads a smaller rank."""
    first = ranks_to_match(cells, smaller, tolerance)
    if first.empty:
        return first
    return first.groupby("sampler").agg(lambda v: np.quantile(v.to_numpy(), 0.5, method="higher"))
