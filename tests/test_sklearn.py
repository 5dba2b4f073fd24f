"""The scikit-learn adapter passes check_estimator and works in a Pipeline."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.linear_model import RidgeClassifier
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import check_estimator

import kbench
from kbench.sklearn import KernelApproximation


@pytest.mark.parametrize("sampler", ["rp-cholesky", "uniform", "rff"])
def test_check_estimator(sampler):
    check_estimator(KernelApproximation(sampler=sampler, n_components=20, random_state=0))


def test_pipeline_clone_and_params():
    data = kbench.load_dataset("synthetic:moons", n=600, seed=0)
    model = make_pipeline(KernelApproximation("rp-cholesky", n_components=50,
                                              kernel_params={"sigma": 0.5}, random_state=0),
                          RidgeClassifier(alpha=1e-3))
    model.fit(data.X_train, data.y_train)
    assert model.score(data.X_test, data.y_test) > 0.95
    copy = clone(model)
    assert copy.get_params()["kernelapproximation__n_components"] == 50
    features = model[0].transform(data.X_test)
    approx = kbench.make_sampler("rp-cholesky").fit(
        data.X_train, kbench.make_kernel("gaussian", sigma=0.5), rank=50,
        seed=int(np.random.RandomState(0).randint(np.iinfo(np.int32).max)))
    np.testing.assert_allclose(features, approx.transform(data.X_test))
