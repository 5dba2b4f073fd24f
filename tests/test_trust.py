"""Trustworthy leaderboards: one identity per configuration, tasks own their metadata,
every result is checked before it is scored, cells rerun exactly when their inputs change."""

from __future__ import annotations

import os
import subprocess
import sys

import matplotlib
import numpy as np
import pandas as pd
import pytest

import kbench
from kbench.errors import ContractViolation, Failure, Refused
from kbench.lowrank.features import check_fit
from kbench.reporting.build import build
from kbench.reporting.scores import cost_in_n, sections
from kbench.spec import Spec
from kbench.sweep.layout import split_path
from kbench.sweep.store import read_results
from tests.conftest import add_plugin

BROKEN = """
import numpy as np
import kbench
from kbench.lowrank.maps import NystromMap
from kbench.samplers.uniform import UniformSampler

class Doubled(UniformSampler):
    '''Nyström features times 2: ZZᵀ = 4L, not below K.'''
    name = "doubled"
    def _fit(self, X, kernel, rank, lam, rng):
        approx = super()._fit(X, kernel, rank, lam, rng)
        return NystromMap(kernel, approx.X_landmarks, approx.landmarks, 2 * approx.projection)

class Singular(UniformSampler):
    name = "singular"
    def _fit(self, X, kernel, rank, lam, rng):
        np.linalg.cholesky(-np.eye(3))

class Annotated(UniformSampler):
    name = "annotated"
    def _fit(self, X, kernel, rank, lam, rng):
        approx = super()._fit(X, kernel, rank, lam, rng)
        approx.info.update(landmark_sum=int(approx.landmarks.sum()), trace=np.ones(3))
        return approx

class Clashing(UniformSampler):
    name = "clashing"
    def _fit(self, X, kernel, rank, lam, rng):
        approx = super()._fit(X, kernel, rank, lam, rng)
        approx.info["dataset"] = "mine"
        return approx

@kbench.hookimpl
def kbench_register_samplers():
    return [Doubled, Singular, Annotated, Clashing]
"""

DIAGONAL_TASK = """
import numpy as np
import kbench

class DiagonalGap(kbench.Task):
    '''Mean of k(x, x) − ‖z(x)‖² on the test rows. It lists its headline again in metrics,
    which the kit refuses and the leaderboard must survive.'''
    name = "diagonal-gap"
    headline = kbench.Headline("mean_diagonal_gap", smaller_is_better=True,
                               exact="mean_diagonal_gap_exact")
    metrics = (kbench.Headline("mean_diagonal_gap", smaller_is_better=True,
                               exact="mean_diagonal_gap_exact"),)
    uses_lams = False
    needs_exact = False

    def evaluate(self, data, approx, kernel, lams=None):
        features = kbench.features_of(data, approx, kernel)
        gap = 0.0
        for first, block in features.test.blocks():
            gap += float(np.sum(kernel.diag(data.X_test[first : first + len(block)])
                                - np.einsum("ij,ij->i", block, block)))
        return [{"lam": float("nan"), "mean_diagonal_gap": gap / len(data.X_test),
                 "mean_diagonal_gap_exact": 0.0, "time_features_s": features.seconds}]

@kbench.hookimpl
def kbench_register_tasks():
    return [DiagonalGap]
"""


def cli(args, path=None, **kwargs):
    env = dict(os.environ)
    if path is not None:
        env["PYTHONPATH"] = f"{path}{os.pathsep}{env.get('PYTHONPATH', '')}"
    return subprocess.run([sys.executable, "-m", "kbench.cli", *args], capture_output=True,
                          text=True,
                          env=env, **kwargs)


def sweep(out, plugins, datasets: str, samplers: str, tasks: str, ranks: str, repetitions: int = 1):
    """``kbench run`` at λ = 1e-3 with the test plugins on the path."""
    return cli(["run", "--datasets", datasets, "--samplers", samplers, "--tasks", tasks, "--ranks",
                ranks,
                "--lams", "1e-3", "--repetitions", str(repetitions), "--quiet", "--out", str(out)],
               plugins)


@pytest.fixture(scope="module")
def plugins(tmp_path_factory):
    root = tmp_path_factory.mktemp("trust-plugins")
    add_plugin(root, "broken-samplers", BROKEN)
    add_plugin(root, "diagonal-task", DIAGONAL_TASK)
    return root


# -- one identity ----------------------------------------------------------------------
def test_spec_labels_are_canonical_and_slugs_collision_free():
    a = Spec.parse("squeak:qbar=10,eps=0.50", "sampler")
    assert a == Spec.parse("squeak: eps=0.5, qbar=10",
                           "sampler") and a.label == "squeak:eps=0.5,qbar=10"
    assert Spec.parse(a.label, "sampler") == a and a.params == {"eps": 0.5, "qbar": 10}
    kpca = Spec.parse("kpca:components=1;5;10,centered=true", "task")
    assert (kpca.label == "kpca:centered=true,components=1;5;10"
            and kpca.params["components"] == [1, 5, 10])
    paths = ["file:data/x.csv", "file:data_x.csv", "file:data x.csv", "file:data:x.csv"]
    slugs = {Spec.parse(p, "dataset").slug for p in paths}
    assert len(slugs) == len(paths) and all("/" not in s and " " not in s for s in slugs)
    assert Spec.parse("synthetic:bach-periodic:n=500,design=beta", "dataset").label == \
        "synthetic:bach-periodic:design=beta,n=500"
    with pytest.raises(ValueError, match="given twice"):
        Spec.parse("squeak:qbar=1,qbar=2", "sampler")


def test_file_datasets_differing_in_punctuation_get_their_own_cells_and_splits(tmp_path,
                                                                               monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    rng = np.random.default_rng(0)
    for offset, name in enumerate(["data/x.csv", "data_x.csv", "data x.csv"]):
        X = rng.standard_normal((60, 3)) + offset
        pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "target": X[:, 2]}).to_csv(name, index=False)
    specs = ["file:data/x.csv", "file:data_x.csv", "file:data x.csv"]
    frame = kbench.run(specs, ["uniform"], ["krr"], [5], [1e-3], repetitions=1, out="out",
                       data_cache="out/data", progress=False)
    labels = [Spec.parse(f"file:{tmp_path / name}", "dataset").label
              for name in ["data/x.csv", "data_x.csv", "data x.csv"]]
    # made absolute
    assert (frame.status == "ok").all() and sorted(frame.dataset.unique()) == sorted(labels)
    assert frame.groupby("dataset").split_checksum.first().nunique() == 3
    assert len(list((tmp_path / "out" / "cells").rglob("*.parquet"))) == 3
    assert len({split_path("out/data", s, 0) for s in labels}) == 3
    assert all(split_path("out/data", s, 0).is_file() for s in labels)


# -- results checked before they are scored ----------------------------------------------
def test_the_contract_catches_scaled_features_and_statuses_follow_the_exception():
    data = kbench.load_dataset("synthetic:moons", n=200, seed=0)
    kernel = kbench.make_kernel("gaussian", sigma="median").fit(data.X_train)
    approx = kbench.make_sampler("uniform").fit(data.X_train, kernel, rank=20, seed=0)
    check_fit(approx, 20, data, kernel)  # a correct map passes
    with pytest.raises(ContractViolation, match="rank must lie in"):
        check_fit(approx, 10, data, kernel)
    doubled = kbench.NystromMap(kernel, approx.X_landmarks, approx.landmarks, 2 * approx.projection)
    with pytest.raises(ContractViolation, match=r"ZZᵀ ≼ K.*training rows"):
        check_fit(doubled, 20, data, kernel)
    for factor, message in ((np.nan, r"training rows has \d+ NaN or infinite values"),
                            (1e200, "beyond 1e154 in magnitude")):  # finite, but squares overflow
        broken = kbench.NystromMap(kernel, approx.X_landmarks, approx.landmarks,
                                   factor * approx.projection)
        with pytest.raises(ContractViolation, match=message):
            check_fit(broken, 20, data, kernel)
    assert Failure.of(Refused("no")).status == "skipped"
    assert Failure.of(np.linalg.LinAlgError("not positive definite")).status == "error"
    assert (Failure.of(ValueError("bad")).status == "error"
            and Failure.of(MemoryError()).status == "oom")


@pytest.mark.slow  # end to end: a CLI sweep of every broken plugin and its page
def test_sweep_with_broken_plugins_scores_every_configuration_honestly(tmp_path, plugins):
    out = tmp_path / "results"
    result = sweep(out, plugins, "synthetic:moons:n=200,sklearn:diabetes",
                   "uniform,squeak,squeak:shards=4,rff,doubled,singular",
                   "approximation,kpca:components=2;5;10",
                   "5,10", repetitions=2)
    assert result.returncode == 1, result.stdout + result.stderr
    frame = read_results(out)
    doubled, singular = frame[frame.sampler == "doubled"], frame[frame.sampler == "singular"]
    assert (doubled.status == "error").all() and doubled.error.str.contains("contract: a "
                                                                            "Nyström-type "
                                                                            "map").all()
    assert (singular.status == "error").all() and singular.error.str.contains("LinAlgError").all()
    assert (frame.loc[~frame.sampler.isin(["doubled", "singular"]), "status"] == "ok").all()
    board = cli(["leaderboard", str(out)], plugins)
    assert board.returncode == 0, board.stderr
    text = (out / "leaderboard.md").read_text()
    approximation = text.split("## approximation: rel_fro_error")[1].split("\n## ")[0]
    kpca = text.split("## kpca:components=2;5;10: kpca_error_in")[1].split("\n## ")[0]
    for table in (approximation, kpca):  # failures are ranked: last, with their failure rate
        rows = {line.split("|")[1].strip(): line for line in table.split("\n\n")[1].splitlines()}
        assert {"uniform", "squeak", "squeak:shards=4", "rff", "doubled",
                "singular"} <= set(rows), rows
        assert ("| 100%" in rows["doubled"] and "| 100%" in rows["singular"]
                and "| 0%" in rows["uniform"])
        assert list(rows)[-2:] == ["doubled", "singular"]
    # 6 samplers on 2 datasets: Friedman's statistic is at most 10 (p ≥ 0.075), so no diagram
    assert ("![critical difference" not in text
            and "data:image/png;base64" not in (out / "leaderboard.html").read_text())


def test_a_samplers_scalar_info_entries_reach_its_rows(tmp_path, plugins):
    out = tmp_path / "results"
    result = sweep(out, plugins, "sklearn:diabetes", "annotated,clashing,squeak", "approximation",
                   "5")
    assert result.returncode == 1, result.stdout + result.stderr
    frame = read_results(out).set_index("sampler")
    assert frame.loc["annotated", "status"] == "ok" and frame.loc["annotated", "landmark_sum"] > 0
    assert "trace" not in frame  # arrays stay in info
    assert frame.loc["squeak", "dictionary_size"] >= frame.loc["squeak", "unique_atoms"] > 0
    assert frame.loc["clashing", "status"] == "error"
    assert "info key(s) ['dataset'] would overwrite" in frame.loc["clashing", "error"]


def test_kpca_compares_one_number_of_components_per_rank():
    task = kbench.make_task("kpca", components=[2, 5, 10, 50])
    rows = pd.DataFrame({"rank": [5, 5, 5, 20, 20, 20, 3], "components": [2, 5, 10, 5, 10, 50, 2]})
    assert task.headline_rows(rows).to_dict("list") == {"rank": [5, 20, 3],
                                                        "components": [5, 10, 2]}
    data = kbench.load_dataset("sklearn:diabetes", seed=0)
    kernel = kbench.make_kernel("gaussian", sigma="median").fit(data.X_train)
    for name in ("uniform", "rff"):  # both families get the headline, never below exact (Ky Fan)
        approx = kbench.make_sampler(name).fit(data.X_train, kernel, rank=20, seed=0)
        rows = pd.DataFrame(task.evaluate(data, approx, kernel))
        assert rows.kpca_error_in.notna().all()
        assert (rows.kpca_error_in >= rows.kpca_error_in_exact * (1 - 1e-10)).all()


def test_random_feature_kpca_error_is_the_dense_nuclear_norm():
    data = kbench.load_dataset("synthetic:moons", n=160, seed=1)
    kernel = kbench.make_kernel("gaussian", sigma="median").fit(data.X_train)
    approx = kbench.make_sampler("rff").fit(data.X_train, kernel, rank=12, seed=0)
    rows = kbench.make_task("kpca", components=[3, 30]).evaluate(data, approx, kernel)
    Z = approx.transform(data.X_train)
    _, V = np.linalg.eigh(Z.T @ Z)
    K, n = kernel(data.X_train), len(Z)
    for row, ell in zip(rows, (3, 12)):  # 30 components of a 12-feature map use all 12
        top = Z @ V[:, ::-1][:, :ell]
        expected = np.abs(np.linalg.eigvalsh(K - top @ top.T)).sum() / n
        assert row["kpca_error_in"] == pytest.approx(expected, rel=1e-9)


# -- tasks own their metadata -------------------------------------------------------------
@pytest.mark.slow  # end to end: a CLI sweep and its page
def test_a_plugin_task_gets_its_own_leaderboard_section(tmp_path, plugins):
    out = tmp_path / "results"
    result = sweep(out, plugins, "sklearn:diabetes", "uniform,rp-cholesky,rff", "diagonal-gap",
                   "5,10",
                   repetitions=2)
    assert result.returncode == 0, result.stdout + result.stderr
    frame = read_results(out)
    assert (frame.status == "ok").all() and frame.lam.isna().all()  # λ-free: one row per cell
    board = cli(["leaderboard", str(out)], plugins)
    assert board.returncode == 0, board.stderr
    text = (out / "leaderboard.md").read_text()
    assert "## diagonal-gap: mean_diagonal_gap (lower is better)" in text
    assert "| rp-cholesky" in text and "| rff" in text
    assert "mean_diagonal_gap:mean" in (out / "leaderboard.html").read_text()
    kit = cli(["check-plugin", "diagonal-gap"], plugins)
    assert kit.returncode == 1 and "metrics repeat a metric" in kit.stdout + kit.stderr


# -- a cell's identity covers its inputs -------------------------------------------------
def test_a_cell_reruns_exactly_when_its_inputs_change(tmp_path):
    args = (["sklearn:diabetes"], ["uniform", "rls-fast"],
            ["kpca:components=2;5", "approximation", "krr"], [5])

    def sweep(lams, seed=0):
        _, summary = kbench.run(*args, lams, repetitions=1, out=tmp_path, progress=False, seed=seed,
                                return_summary=True)
        return summary, {p: os.stat(p).st_mtime_ns for p in summary.cells}

    first, before = sweep([1e-3, 1e-2])
    assert first.counts["already done"] == 0 and first.counts["ok"] == 6
    same, unchanged = sweep([1e-2, 1e-3])  # the same path in another order: nothing to do
    assert same.counts["already done"] == 6 and unchanged == before
    reseeded, _ = sweep([1e-3, 1e-2], seed=1)  # another base seed: everything reruns, elsewhere
    assert reseeded.counts["already done"] == 0 and {p: os.stat(p).st_mtime_ns
                                                     for p in before} == before
    assert not set(reseeded.cells) & set(before)


# -- statistics, figures, adapters ----------------------------------------------------------
def test_a_page_changes_no_global_state_and_prints_no_nan(tmp_path):
    frame = kbench.run(["sklearn:diabetes"], ["uniform", "rff"], ["krr"], [5, 10], [1e-3],
                       repetitions=2,
                       out=tmp_path, progress=False)
    backend = matplotlib.get_backend()
    build(frame, tmp_path / "board")
    assert matplotlib.get_backend() == backend  # building a page changes no global state
    text = (tmp_path / "board" / "leaderboard.md").read_text()
    assert "nan" not in text.split("## Cells by status")[0]
    found, _ = sections(frame)
    assert [s.label for s in found] == ["krr"]


@pytest.mark.slow  # end to end: sweeps at four sizes and their page
def test_the_cost_section_fits_the_slope_of_time_in_n(tmp_path):
    """Data that differs only in n, swept at three sizes, gets a cost section: one value per
    fit (its tasks share it), the median over repetitions, the log-log slope of time in n.
    Other datasets of the same sweep do not join the family."""
    specs = [f"synthetic:friedman1:n={n}" for n in (400, 800, 1600)] + ["sklearn:diabetes"]
    frame = kbench.run(specs, ["uniform", "rff"], ["krr", "approximation"], [10, 20], [1e-3],
                       repetitions=2,
                       out=tmp_path, progress=False)
    found = cost_in_n(frame)
    assert list(found) == ["synthetic:friedman1 [gaussian:sigma=median]"]
    seconds, memory, rank = found["synthetic:friedman1 [gaussian:sigma=median]"]
    assert rank == 20 and list(seconds.index) == ["rff", "uniform"] and len(memory.columns) == 3
    fits = frame[(frame["rank"] == 20) & (frame["sampler_label"] == "uniform")
                 & frame["dataset"].str.startswith("synthetic")].drop_duplicates(["dataset",
                                                                                  "repetition"])
    expected = (fits["time_sample_s"] + fits["time_features_s"]).groupby(fits["n_train"]).median()
    np.testing.assert_allclose(seconds.loc["uniform"].iloc[:3].to_numpy(float), expected.to_numpy())
    sizes = np.log(expected.index.to_numpy(float))
    assert seconds.loc["uniform",
                       "slope in "
                       "n"] == pytest.approx(np.polyfit(sizes, np.log(expected.to_numpy()), 1)[0])
    build(frame, tmp_path / "board")
    text = (tmp_path / "board" / "leaderboard.md").read_text()
    assert ("## Sampler cost in n\n" in text
            and "### synthetic:friedman1 [gaussian:sigma=median], rank 20" in text)
    # two sizes of the family (240, 480): no section
    assert cost_in_n(frame[frame["n_train"] < 900]) == {}


def test_the_adapter_uses_the_median_bandwidth_by_default():
    from sklearn.datasets import load_digits
    from sklearn.linear_model import RidgeClassifier
    from sklearn.model_selection import train_test_split
    from sklearn.pipeline import make_pipeline

    from kbench.sklearn import KernelApproximation

    X, y = load_digits(return_X_y=True)  # raw pixel values 0..16: σ = 1 would be far too small
    X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
    model = make_pipeline(KernelApproximation("uniform", n_components=300, random_state=0),
                          RidgeClassifier())
    assert model.fit(X_train, y_train).score(X_test, y_test) > 0.9
    assert model[0].kernel_.sigma == "median" and model[0].kernel_.sigma_ > 1


def test_checks_and_fits_leave_the_callers_objects_as_they_were():
    from kbench.datasets.base import RawData, check_raw

    X = np.random.default_rng(0).standard_normal((80, 3))
    X[5, 1] = np.nan
    raw = RawData(X, np.arange(80.0), "regression", meta={"source": "test"})
    cleaned = check_raw(raw, "test", dropna=True)
    assert cleaned.X.shape == (79, 3) and cleaned.meta["rows_dropped"] == 1
    assert raw.X is X and np.isnan(X[5, 1]) and raw.meta == {"source": "test"}
    X = cleaned.X.copy()
    kernel = kbench.make_kernel("gaussian", sigma="median")
    for name in ("uniform", "squeak", "rp-cholesky", "rff"):
        kbench.make_sampler(name).fit(X, kernel, rank=10, lam=1e-3, seed=0)
        assert np.array_equal(X, cleaned.X)
    assert kernel.sigma == "median" and kernel.get_params() == {"sigma": "median", "gamma": None}
