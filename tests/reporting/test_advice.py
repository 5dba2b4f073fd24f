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
from kbench.reporting.scores import sections
from kbench.reporting.standing import standing

RANKS = (10, 20, 40, 80)
LAMS = (1e-3, 1e-2)


def krr_rows(reach: dict[str, int], d_mof: float = 200.0, d_eff: float = 20.0) -> pd.DataFrame:
    """KRR result rows on one dataset: a sampler's test MSE is 1.0 (the exact kernel's) from
    the rank ``reach[sampler]`` on and 1.5 below it; λ = 1e-3 is the exact kernel's oracle λ,
    with the given d_eff and d_mof there."""
    rows = []
    for sampler, first in reach.items():
        for rank in RANKS:
            for repetition in range(3):
                for lam in LAMS:
                    best = lam == LAMS[0]
                    rows.append({
                        "dataset": "synthetic:smile:n=500", "kernel": "gaussian:sigma=1", "sampler": sampler,
                        "sampler_label": sampler, "sampler_family": "nystrom", "task": "krr", "task_label": "krr",
                        "rank": rank, "repetition": repetition, "lam": lam, "status": "ok",
                        "test_mse": (1.0 if rank >= first else 1.5) + (0.0 if best else 0.2) + 1e-3 * repetition,
                        "test_mse_exact": 1.0 if best else 1.3, "train_mse": 0.5,
                        "d_eff": d_eff if best else d_eff / 3, "d_mof": d_mof if best else d_mof / 3,
                        "n_train": 375, "n_features": 2, "time_sample_s": 0.01 * rank, "time_features_s": 0.0,
                        "time_fit_s": 0.001})
    return pd.DataFrame(rows)


def answers(frame: pd.DataFrame) -> list[str]:
    found = sections(frame)[0]
    return advise(frame, found, {section.label: standing(section) for section in found}).statements


def test_the_answer_follows_the_rows():
    coherent = krr_rows({"uniform": 80, "rls": 20, "rp-cholesky": 40}, d_mof=200.0, d_eff=20.0)
    found = sections(coherent)[0]
    advice = advise(coherent, found, {s.label: standing(s) for s in found})
    regime = advice.regimes.loc["synthetic:smile:n=500"]
    assert regime["oracle λ"] == 1e-3 and regime["d_mof/d_eff"] == pytest.approx(10.0) and regime["n_features"] == 2
    # places per rank 10, 20, 40, 80: rls 2, 1, 1.5, 2; rp-cholesky 2, 2.5, 1.5, 2; uniform 2, 2.5, 3, 2
    (line,) = advice.statements
    assert line.startswith("krr (test_mse): rls, mean rank 1.62 over 4 (dataset, rank) blocks on 1 dataset(s), "
                           "failure rate 0%, budgets won 1 of 4; a tie with rp-cholesky (mean rank 2.00): the "
                           "Nemenyi test cannot separate them"), line

    # the same samplers where rp-cholesky matches first: the answer changes with the rows
    (line,) = answers(krr_rows({"uniform": 80, "rls": 40, "rp-cholesky": 10}))
    assert line.startswith("krr (test_mse): rp-cholesky, mean rank 1.38"), line

    # nobody ahead anywhere: every block is one tie, and the answer says there is no test
    (line,) = answers(krr_rows({"uniform": 20, "rls": 20, "rp-cholesky": 20}))
    assert "budgets won 0 of 4" in line and "too few blocks or samplers for a test: read it as a tie" in line


def test_the_winner_per_rank_budget_has_its_margin_and_ties_win_nothing():
    frame = krr_rows({"uniform": 80, "rls": 20, "rp-cholesky": 40})
    found = sections(frame)[0]
    winners = advise(frame, found, {s.label: standing(s) for s in found}).winners.set_index("rank")
    assert winners.loc[20, "winner"] == "rls" and winners.loc[20, "value"] == pytest.approx(1.001)
    assert winners.loc[20, "runner-up"] == "rp-cholesky" and winners.loc[20, "ahead in"] == "3 of 3"
    assert winners.loc[20, "relative margin"] == pytest.approx((1.501 - 1.001) / 1.501)
    assert winners.loc[10, "winner"] == "tie: rls, rp-cholesky, uniform"  # all at 1.5: nobody wins


def test_focus_pairs_one_sampler_against_every_other():
    frame = krr_rows({"uniform": 80, "rls": 20, "rp-cholesky": 40})
    (view,) = focus(sections(frame)[0], "rls")
    # rls is ahead of uniform at ranks 20 and 40 (6 of 12 pairs), tied at 10 and 80
    assert view.overall.loc["uniform", "pairs"] == 12
    assert view.overall.loc["uniform", "win rate"].startswith("0.75 [")  # (6 + 0.5·6)/12
    assert view.per_dataset["synthetic:smile:n=500"].loc["uniform", "rank 20"] == "1.00 [1.00, 1.00]"
    with pytest.raises(ValueError, match="no scored cells of that sampler label.*rls, rp-cholesky, uniform"):
        focus(sections(frame)[0], "nope")


def test_the_focus_flag_writes_its_section_and_refuses_an_unknown_sampler(tmp_path):
    kbench.run(["sklearn:diabetes"], ["uniform", "rff", "rls"], ["krr"], [5, 10], [1e-3], repetitions=2,
               out=tmp_path, progress=False)
    run = [sys.executable, "-m", "kbench.cli", "leaderboard", str(tmp_path), "--out", str(tmp_path / "b")]
    done = subprocess.run([*run, "--focus", "rls"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "b" / "leaderboard.md").read_text()
    assert "## Focus: rls" in text and "#### sklearn:diabetes" in text and "| rank 5" in text
    assert "<section id='focus'>" in (tmp_path / "b" / "leaderboard.html").read_text()
    refused = subprocess.run([*run, "--focus", "rsl"], capture_output=True, text=True)
    assert refused.returncode == 2 and "no scored cells of that sampler label" in refused.stderr


def test_the_page_is_self_contained_and_small(leaderboard_page):
    """The page: under 5 MB, no reference to anything outside the file, a section per task."""
    page = leaderboard_page
    text = page.read_text(encoding="utf-8")
    assert page.stat().st_size < 5_000_000
    assert "<script src" not in text and "<link" not in text and "http://" not in text.split("plotly-gz")[0]
    assert text.count("id='plotly-gz'") == 1 and "Which sampler for my data" in text
    assert np.all([marker in text for marker in ("<section id='board-krr-", "<section id='board-approximation-")])
