""""Which sampler for my data", the sampler-author view and the published page: every
statement is computed from the rows, so changing the rows changes it."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import kbench
from kbench.reporting.advice import advise
from kbench.reporting.focus import focus
from kbench.reporting.scores import NOT_FINITE, cell_table, sections
from kbench.reporting.standing import standing

RANKS = (10, 20, 40, 80)
LAMS = (1e-3, 1e-2)


def krr_rows(reach: dict[str, int], d_mof: float = 200.0, d_eff: float = 20.0,
             datasets: int = 1) -> pd.DataFrame:
    """KRR result rows as a sweep writes them, on ``datasets`` datasets alike: a sampler's
    test MSE is 1.0 (the exact kernel's) from the rank ``reach[sampler]`` on and 1.5 below
    it; every cell and the exact kernel chose λ = 1e-3 on the validation rows, where d_eff
    and d_mof are as given; the training mean's validation MSE is 2 (informative data)."""
    rows = []
    for dataset in range(datasets):
        for sampler, first in reach.items():
            for rank in RANKS:
                for repetition in range(3):
                    for lam in LAMS:
                        best = lam == LAMS[0]
                        mse = (1.0 if rank >= first else 1.5) + (0.0 if best
                                                                 else 0.2) + 1e-3 * repetition
                        rows.append({
                            "dataset": f"synthetic:smile:n=500,noise=0.{dataset}",
                            "kernel": "gaussian:sigma=1",
                            "sampler": sampler, "sampler_label": sampler,
                            "sampler_family": "nystrom", "task": "krr",
                            "task_label": "krr", "rank": rank, "repetition": repetition, "lam": lam,
                            "status": "ok",
                            "test_mse": mse, "val_mse": mse, "test_mse_exact": 1.0 if best else 1.3,
                            "val_mse_exact": 1.0 if best else 1.3, "val_mse_trivial": 2.0,
                            "train_mse": 0.5,
                            "lam_selected": LAMS[0], "lam_selected_exact": LAMS[0],
                            "selected_on": "validation",
                            "lam_at_edge": True, "lam_at_edge_exact": True,
                            "d_eff": d_eff if best else d_eff / 3, "d_mof": d_mof if best
                            else d_mof / 3,
                            "n_train": 375, "n_features": 2, "time_sample_s": 0.01 * rank,
                            "time_features_s": 0.0,
                            "time_fit_s": 0.001})
    return pd.DataFrame(rows)


def test_a_cell_whose_test_value_is_not_finite_at_its_chosen_lambda_is_an_error_last_in_its_block():
    """The λ a cell chose on validation data is its λ, even where its test MSE overflowed: the
    cell is a numerical failure (not scored at another λ, not dropped), so it ranks last."""
    rows = krr_rows({"uniform": 80, "rls": 20}, datasets=2)
    broken = (rows["sampler"] == "rls") & (rows["rank"] == 20) & (rows["lam"] == LAMS[0])
    rows.loc[broken, "test_mse"] = np.inf
    cells = cell_table(rows, "krr")
    failed = cells[(cells["sampler"] == "rls") & (cells["rank"] == 20)]
    assert (len(failed) == 6 and set(failed["status"]) == {"error"}
            and set(failed["error"]) == {NOT_FINITE})
    assert failed["metric"].isna().all() and set(failed["lam"]) == {LAMS[0]}
    places = standing(sections(rows)[0][0]).places
    assert (places.xs(20, level="rank")["rls"] == 2).all()  # last of two, below uniform's 1.5


def answers(frame: pd.DataFrame) -> list[str]:
    found = sections(frame)[0]
    return advise(frame, found, {section.label: standing(section) for section in found}).statements


def test_the_answer_follows_the_rows():
    coherent = krr_rows({"uniform": 80, "rls": 20, "rp-cholesky": 40}, d_mof=200.0, d_eff=20.0,
                        datasets=8)
    found = sections(coherent)[0]
    advice = advise(coherent, found, {s.label: standing(s) for s in found})
    regime = advice.regimes.loc["synthetic:smile:n=500,noise=0.0"]
    assert (regime["λ (exact)"] == 1e-3 and regime["d_mof/d_eff"] == pytest.approx(10.0)
            and regime["n_features"] == 2)
    assert regime["λ at edge"] == "3 of 3" and regime["chosen on"] == "krr val_mse_exact"
    # places per rank 10, 20, 40, 80: rls 2, 1, 1.5, 2; rp-cholesky 2, 2.5, 1.5, 2; uniform 2, 2.5,
    # 3, 2; on each of 8 datasets rls is 8.3% better than rp-cholesky (a third at one rank in four)
    (line,) = advice.statements
    assert line.startswith("krr (test_mse): rls, ahead of every other sampler over 8 datasets: "
                           "against the runner-up rp-cholesky, p = 0.016 (Wilcoxon–Holm), "
                           "P(better) = 1.00; mean standing 1.62, failure rate 0%, first alone in "
                           "8 of 32 budgets."), line

    # the same samplers where rp-cholesky matches first: the answer changes with the rows
    (line,) = answers(krr_rows({"uniform": 80, "rls": 40, "rp-cholesky": 10}, datasets=8))
    assert line.startswith("krr (test_mse): rp-cholesky, ahead of every other sampler over 8 "
                           "datasets"), line

    # nobody ahead anywhere: every block is one tie, and the line names all of them
    (line,) = answers(krr_rows({"uniform": 20, "rls": 20, "rp-cholesky": 20}, datasets=8))
    assert "no detectable difference among rls, rp-cholesky, uniform over 8 datasets" in line, line
    # one dataset is never enough, however clear the blocks
    (line,) = answers(krr_rows({"uniform": 80, "rls": 20, "rp-cholesky": 40}))
    assert "no detectable difference among rls, rp-cholesky, uniform over 1 dataset " in line, line


def test_the_first_place_per_rank_budget_has_its_margin_and_ties_win_nothing():
    frame = krr_rows({"uniform": 80, "rls": 20, "rp-cholesky": 40})
    found = sections(frame)[0]
    winners = advise(frame, found, {s.label: standing(s) for s in found}).winners.set_index("rank")
    assert winners.loc[20, "winner"] == "rls" and winners.loc[20, "value"] == pytest.approx(1.001)
    assert winners.loc[20, "runner-up"] == "rp-cholesky" and winners.loc[20, "ahead in"] == "3 of 3"
    assert winners.loc[20, "margin"] == "33%"  # (1.501 − 1.001)/1.501
    assert winners.loc[20, "outcome"] == "ahead"  # 3 repetitions: too few for a paired test
    assert (winners.loc[10, "winner"] == "rls, rp-cholesky, uniform"
            and winners.loc[10, "outcome"] == "tie")


def test_focus_pairs_one_sampler_against_every_other():
    frame = krr_rows({"uniform": 80, "rls": 20, "rp-cholesky": 40}, datasets=2)
    (view,) = focus(sections(frame)[0], "rls")
    # rls is ahead of uniform at ranks 20 and 40 (6 of 12 pairs a dataset), tied at 10 and 80
    assert view.overall.loc["uniform", "pairs"] == 24 and view.overall.loc["uniform",
                                                                           "datasets"] == 2
    # (6 + 0.5·6)/12 on both datasets
    assert view.overall.loc["uniform", "win rate"] == "0.75 [0.75, 0.75]"
    assert view.per_dataset["synthetic:smile:n=500,noise=0.0"].loc["uniform",
                                                                   "rank 20"] == "1.00 (3)"
    with pytest.raises(ValueError, match="no scored cells of that sampler label.*rls, rp-cholesky, "
                                         "uniform"):
        focus(sections(frame)[0], "nope")


@pytest.mark.slow  # end to end: a CLI sweep and its pages
def test_the_focus_flag_writes_its_section_and_refuses_an_unknown_sampler(tmp_path):
    kbench.run(["sklearn:diabetes"], ["uniform", "rff", "rls"], ["krr"], [5, 10], [1e-3],
               repetitions=2,
               out=tmp_path, progress=False)
    run = [sys.executable, "-m", "kbench.cli", "leaderboard", str(tmp_path), "--out",
           str(tmp_path / "b")]
    done = subprocess.run([*run, "--focus", "rls"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "b" / "leaderboard.md").read_text()
    assert ("## Focus: rls" in text and "<summary>sklearn:diabetes: by rank</summary>" in text
            and "| rank 5" in text)
    assert "<section id='focus'>" in (tmp_path / "b" / "leaderboard.html").read_text()
    refused = subprocess.run([*run, "--focus", "rsl"], capture_output=True, text=True)
    assert refused.returncode == 2 and "no scored cells of that sampler label" in refused.stderr


@pytest.mark.xdist_group("page")  # one worker builds the shared fixture once
def test_the_page_is_self_contained_and_small(leaderboard_page):
    """The page: under 5 MB, no reference to anything outside the file, a section per task."""
    page = leaderboard_page
    text = page.read_text(encoding="utf-8")
    assert page.stat().st_size < 5_000_000
    assert ("<script src" not in text and "<link" not in text
            and "http://" not in text.split("plotly-gz")[0])
    assert text.count("id='plotly-gz'") == 1 and "Which sampler for my data" in text
    assert np.all([marker in text
                   for marker in ("<section id='board-krr-", "<section id='board-approximation-")])
