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
3. **Tests over datasets.** Friedman's test on the standings (scipy), and, against the
   sampler of best mean standing (the leader), per other sampler: the Wilcoxon signed-rank
   test over datasets (scipy) of the per-dataset differences (``Headline.difference``,
   mean over the dataset's ranks; a difference inside the equivalence region counts as 0),
   Holm-adjusted over those comparisons (statsmodels); and the Bayesian signed-rank test
   (Benavoli et al. 2017; baycomp) with the equivalence region as its ROPE, giving
   P(leader better), P(equivalent), P(other better). A sampler is separated from the
   leader when the adjusted p < 0.05 with the signed ranks in the leader's favour, or
   P(leader better) ≥ 0.95.
4. **Budgets.** A block is won when its first place is held alone, the difference to the
   runner-up lies outside the equivalence region, and a paired t-test over ≥ 5 paired
   repetitions gives p < 0.05 with the paired mean in the first's favour; otherwise the
   first is "ahead" (or the place is shared).
5. **Win rates** against uniform: per dataset, the share of paired cells won (a tie counts
   ½), mean over datasets, with a 95% percentile interval from resampling datasets
   (cluster bootstrap).
"""

from __future__ import annotations

import gc
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from kbench.errors import Status
from kbench.reporting.signed_rank import signed_rank_probabilities
from kbench.reporting.units import unit_of, win_rate

#: significance level of every test, and the posterior probability that separates two samplers
ALPHA = 0.05
PROBABILITY = 0.95
#: prior strength of the Bayesian signed-rank test: one pseudo-observation at zero difference
#: (baycomp's default, 0.5, reads P = 0.97 from a difference seen on only 2 datasets)
PRIOR = 1.0
#: posterior samples of the Bayesian signed-rank test (its probabilities to about ±0.003)
SAMPLES = 20_000
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


def _units(frame: pd.DataFrame) -> pd.Index:
    """The unit of analysis of each row of a frame indexed by (dataset, rank)."""
    return frame.index.get_level_values("dataset").map(unit_of).rename("dataset")


@dataclass
class Comparison:
    """The leader against one other sampler, over datasets."""

    sampler: str
    datasets: int
    better: int  # datasets where the leader is better, outside the equivalence region
    equivalent: int
    worse: int
    p_holm: float  # Wilcoxon signed-rank (two-sided), Holm-adjusted over the leader's comparisons
    probabilities: tuple[float, float, float]  # P(leader better), P(equivalent), P(other better)
    leader_ahead: bool = True  # the signed ranks favour the leader (W⁺ > W⁻)

    @property
    def separated(self) -> bool:
        """Whether the tests put the leader above this sampler (module docstring, 3)."""
        return (self.p_holm < ALPHA and self.leader_ahead) or self.probabilities[0] >= PROBABILITY


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
        # (a third of
        values = block.groupby(["repetition", "sampler"])["metric"].first().unstack().reindex(
            # pivot_table's time: a page has hundreds of blocks)
            columns=sorted(block["sampler"].unique()))
        failed = block.groupby("sampler")["failed"].any() | values.isna().all()
        place, groups = block_places(values, failed.reindex(values.columns), headline)
        if set(place.index) == set(samplers):  # a complete block
            places[dataset, rank] = place
            means[dataset, rank] = values.mean().where(~failed.reindex(values.columns))
            won.append(_budget(dataset, rank, values, groups, headline))
    complete, block_means = _by_block(places, samplers), _by_block(means, samplers)
    standings = complete.groupby(_units(complete)).mean() if len(complete) else complete
    result = Standing(complete, standings, pd.DataFrame(won), left_out, len(blocks),
                      _friedman(standings), {},
                      pd.DataFrame())
    if not tests:
        return result
    order = _order(standings, block_means, headline)
    if order:
        result.comparisons = _compare(order[0], order[1:], block_means, headline, seed, samples)
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
    per_dataset = pd.DataFrame(gain,
                               index=block_means.index).groupby(_units(block_means)).mean().to_numpy()
    per_dataset = np.where(np.abs(per_dataset) > headline.equivalence, per_dataset, 0.0)
    pairs = per_dataset.mean(axis=0).reshape(len(samplers), len(samplers))  # the diagonal is 0
    advantage = dict(zip(samplers, pairs.sum(axis=1) / max(len(samplers) - 1, 1), strict=True))
    return sorted(samplers, key=lambda s: (round(mean[s], 9), -advantage[s]))


def dataset_differences(block_means: pd.DataFrame, ours: str, theirs: str, headline) -> pd.Series:
    """Per dataset, how much better ``ours`` is than ``theirs``: the mean over the dataset's
    complete blocks of ``Headline.difference`` of their repetition means (a failure: NaN,
    loses by 1); 0 where that mean lies inside the equivalence region."""
    gain = pd.Series(headline.difference(block_means[ours], block_means[theirs]),
                     index=block_means.index)
    per_dataset = gain.groupby(_units(gain)).mean()
    return per_dataset.where(per_dataset.abs() > headline.equivalence, 0.0)


def _friedman(standings: pd.DataFrame) -> float | None:
    """Friedman's test over datasets (None with fewer than 3 samplers or 2 datasets, or when
    every dataset is one tie)."""
    from scipy.stats import friedmanchisquare

    if standings.shape[1] < 3 or standings.shape[0] < 2 or (standings.nunique(axis=1) <= 1).all():
        return None
    p = friedmanchisquare(*(standings[c].to_numpy() for c in standings.columns)).pvalue
    return float(p) if math.isfinite(p) else None


def _compare(leader: str, others: list[str], block_means: pd.DataFrame, headline, seed: int,
             samples: int = SAMPLES) -> dict[str, Comparison]:
    """The leader against each other sampler over datasets: Wilcoxon signed-rank (Holm over
    the comparisons) and the Bayesian signed-rank test with the equivalence region as ROPE."""
    from scipy.stats import rankdata, wilcoxon
    from statsmodels.stats.multitest import multipletests

    found, raw = {}, []
    for other in others:
        d = dataset_differences(block_means, leader, other, headline).to_numpy()
        if not np.any(d):
            p = 1.0
        else:
            p = float(wilcoxon(d, zero_method="zsplit").pvalue)
        probabilities = (math.nan, math.nan, math.nan)
        # baycomp: P(d < −rope), P(|d| ≤ rope), P(d > rope), d = the leader's advantage
        if len(d) >= 2:
            probs = signed_rank_probabilities(d, headline.equivalence, PRIOR, samples, seed)
            theirs, same, ours = probs if len(probs) == 3 else (probs[0], 0.0, probs[1])
            probabilities = (float(ours), float(same), float(theirs))
        raw.append(p)
        signed = rankdata(np.abs(d[d != 0])) * np.sign(d[d != 0])
        found[other] = Comparison(other, len(d), int((d > 0).sum()), int((d == 0).sum()),
                                  int((d < 0).sum()), p,
                                  probabilities, bool(signed.sum() > 0))
    if raw:
        # statsmodels' Holm runs gc.collect() each call: 60 ms over a page's frames, 0.2 ms frozen
        gc.freeze()
        try:
            adjusted = multipletests(raw, method="holm")[1]
        finally:
            gc.unfreeze()
        for other, p in zip(others, adjusted, strict=True):
            found[other].p_holm = float(p)
    return found


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
