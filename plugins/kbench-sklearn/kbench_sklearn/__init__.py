"""scikit-learn's kernel approximations as kbench samplers, run as scikit-learn runs them.

- ``sklearn-nystroem``: ``sklearn.kernel_approximation.Nystroem`` (uniform landmarks,
  z(x) = K_mm^{-1/2} k_m(x) by an SVD with singular values clipped at 1e-12);
- ``sklearn-rff``: ``RBFSampler`` (Rahimi & Recht 2007 with a random phase per feature,
  z(x) = √(2/p) cos(Wᵀx + b)), gaussian kernel only;
- ``sklearn-tensorsketch``: ``PolynomialCountSketch`` (Pham & Pagh 2013), polynomial
  kernel only.

The adapters translate kbench's kernel parameters into scikit-learn's (σ → γ = 1/(2σ²)
for the gaussian, 1/σ for the laplacian; the polynomial's γ = 1/d default made explicit),
and refuse a kernel scikit-learn does not have.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

import kbench

#: the kbench kernels scikit-learn has (same values k(x, y)); a subclass is another kernel
TRANSLATED = (kbench.GaussianKernel, kbench.LaplacianKernel, kbench.PolynomialKernel,
              kbench.LinearKernel)


def sklearn_kernel(kernel: kbench.plugin.Kernel, n_features: int, sampler: str) -> tuple[str, dict]:
    """scikit-learn's name and parameters for the fitted kbench ``kernel`` on ``n_features``
    columns, with the same values k(x, y); ``Refused`` for a kernel scikit-learn lacks (a
    subclass, say a plugin's variant of the gaussian, is another kernel)."""
    kind = type(kernel)
    if kind is kbench.GaussianKernel:
        return "rbf", {"gamma": 1.0 / (2.0 * kernel.sigma_**2)}
    if kind is kbench.LaplacianKernel:
        return "laplacian", {"gamma": 1.0 / kernel.sigma_}
    if kind is kbench.PolynomialKernel:
        return "polynomial", {"gamma": kernel.gamma_for(n_features), "degree": kernel.degree,
                              "coef0": kernel.coef0}
    if kind is kbench.LinearKernel:
        return "linear", {}
    raise kbench.Refused(f"{sampler}: scikit-learn has no {kernel.name!r} kernel "
                         "(gaussian, laplacian, polynomial and linear translate).")


def _seed(rng: np.random.Generator) -> int:
    """A scikit-learn ``random_state`` drawn from kbench's generator."""
    return int(rng.integers(np.iinfo(np.int32).max))


class EstimatorMap(kbench.LowRank):
    """The feature map of a fitted scikit-learn transformer: z(x) = ``estimator.transform(x)``."""

    def __init__(self, estimator, n_features_in: int, rank: int, nystrom_type: bool,
                 landmarks: np.ndarray | None = None, info: dict | None = None) -> None:
        super().__init__(n_features_in, rank, landmarks, info)
        self.estimator = estimator
        self.nystrom_type = nystrom_type

    def _transform_chunk(self, X, out):
        out[...] = self.estimator.transform(X)


class _SklearnSampler(kbench.plugin.Sampler):
    """Imports scikit-learn's module when a sampler is made (1.4 s the first time): not when
    the registry loads, and not inside the fit kbench times."""

    def __init__(self) -> None:
        import sklearn.kernel_approximation  # noqa: F401


class SklearnNystroem(_SklearnSampler):
    """scikit-learn's ``Nystroem``: uniform landmarks without replacement."""

    name = "sklearn-nystroem"

    def refuses(self, kernel):
        if type(kernel) in TRANSLATED:
            return None
        return (f"{self.name}: scikit-learn has no {kernel.name!r} kernel (gaussian, laplacian, "
                "polynomial and linear translate).")

    def _fit(self, X, kernel, rank, lam, rng):
        from sklearn.kernel_approximation import Nystroem

        name, params = sklearn_kernel(kernel, X.shape[1], self.name)
        try:
            estimator = Nystroem(kernel=name, kernel_params=params, n_components=rank,
                                 random_state=_seed(rng)).fit(X)
        # scikit-learn evaluates its kernel without kbench's checks
        except np.linalg.LinAlgError as exc:
            raise FloatingPointError(f"{self.name}: scikit-learn's SVD of K_mm failed ({exc}), as "
                                     "it does on non-finite kernel values (squared distances that "
                                     "overflow, say).") from None
        kernel.evals += rank * rank  # K_mm, evaluated by scikit-learn's pairwise_kernels
        return EstimatorMap(estimator, X.shape[1], rank, nystrom_type=True,
                            landmarks=np.asarray(estimator.component_indices_))


class _SklearnRandomFeatures(_SklearnSampler):
    """A scikit-learn random-feature transformer made for one kernel family."""

    family = "random-features"
    estimator: ClassVar[str]  #: the class name in sklearn.kernel_approximation
    kernel_type: ClassVar[type]

    def refuses(self, kernel):
        if type(kernel) is self.kernel_type:
            return None
        return (f"{self.name}: {self.estimator} approximates the {self.kernel_type.name} kernel "
                f"only, not {kernel.name!r}.")

    def _fit(self, X, kernel, rank, lam, rng):
        from sklearn import kernel_approximation

        _, params = sklearn_kernel(kernel, X.shape[1], self.name)
        estimator = getattr(kernel_approximation, self.estimator)(**params, n_components=rank,
                                                                  random_state=_seed(rng)).fit(X)
        return EstimatorMap(estimator, X.shape[1], rank, nystrom_type=False)


class SklearnRFF(_SklearnRandomFeatures):
    """scikit-learn's ``RBFSampler``: random Fourier features with a random phase each."""

    name = "sklearn-rff"
    estimator = "RBFSampler"
    kernel_type = kbench.GaussianKernel


class SklearnTensorSketch(_SklearnRandomFeatures):
    """scikit-learn's ``PolynomialCountSketch`` (TensorSketch) for the polynomial kernel."""

    name = "sklearn-tensorsketch"
    estimator = "PolynomialCountSketch"
    kernel_type = kbench.PolynomialKernel


@kbench.plugin.hookimpl
def kbench_register_samplers():
    return [SklearnNystroem, SklearnRFF, SklearnTensorSketch]
