"""Kernel PCA reconstruction error (Sterge et al. 2020; ALGORITHMS.md, kpca).

Uncentered by default. For Nyström-type maps the error is measured in the RKHS:
in-sample (1/n)[tr K − Σ_{j≤ℓ} λ_j(ΦᵀΦ)] and held-out mean_x k(x, x) − ‖P_ℓ z(x)‖²; it is
never below the exact error (Ky Fan: L ≼ K). Random-feature maps are not below K, so the
RKHS formula does not apply: they get the reconstruction error of PCA in their own
feature space (``kpca_feature_error_in/out``), labelled by ``kpca_metric``.
"""

from __future__ import annotations

import time

import numpy as np

from kbench.hookspecs import hookimpl
from kbench.tasks.base import Task, feature_matrices, relative_excess

DEFAULT_COMPONENTS = (1, 2, 5, 10, 20, 50)


class KPCATask(Task):
    """Kernel PCA: in-sample and held-out reconstruction errors for each number of components."""

    name = "kpca"

    def __init__(self, components=DEFAULT_COMPONENTS, centered: bool = False,
                 exact_max_n: int = 5000) -> None:
        super().__init__(exact_max_n)
        components = [components] if np.isscalar(components) else list(components)
        if not components or any(not float(c).is_integer() or c < 1 for c in components):
            raise ValueError(f"kpca: components must be integers >= 1, got {components!r}.")
        self.components = sorted({int(c) for c in components})
        self.centered = bool(centered)

    def evaluate(self, data, approx, kernel, lams=None) -> list[dict]:
        Phi, Phi_test, time_features = feature_matrices(data, approx)
        n = Phi.shape[0]
        exact = self.exact(data, kernel)  # cached; its own cost is time_exact_s
        start = time.perf_counter()
        if self.centered:
            mean = Phi.mean(axis=0)
            Phi, Phi_test = Phi - mean, Phi_test - mean
        mu, V = np.linalg.eigh(Phi.T @ Phi / n)
        mu, V = np.clip(mu[::-1], 0.0, None), V[:, ::-1]
        time_fit = time.perf_counter() - start
        start = time.perf_counter()
        projections = (Phi_test @ V) ** 2  # t×r, cumulated over components below
        time_predict = time.perf_counter() - start
        trace_K = float(kernel.diag(data.X_train).sum())
        diag_test = kernel.diag(data.X_test)
        if self.centered:
            trace_K = exact.trace - exact.ones_K_ones / n if exact is not None else float("nan")
        exact_errors = exact.kpca_errors(self.components) if exact is not None and not self.centered else {}
        cumulative_mu = np.cumsum(mu)
        cumulative_out = np.cumsum(projections, axis=1).mean(axis=0)
        feature_trace = float(np.sum(Phi * Phi)) / n
        feature_norms_test = float(np.mean(np.sum(Phi_test * Phi_test, axis=1)))
        rows = []
        for ell in self.components:
            row = {"lam": float("nan"), "components": ell, "centered": self.centered,
                   "time_features_s": time_features, "time_fit_s": time_fit,
                   "time_predict_s": time_predict}
            if exact is not None:
                row["time_exact_s"] = exact.seconds
            if ell > len(mu):
                row["note"] = f"{ell} components > rank {len(mu)} of the feature map"
                rows.append(row)
                continue
            if approx.nystrom_type:
                row["kpca_metric"] = "rkhs"
                row["kpca_error_in"] = trace_K / n - float(cumulative_mu[ell - 1])
                if not self.centered:
                    row["kpca_error_out"] = float(diag_test.mean() - cumulative_out[ell - 1])
            else:
                row["kpca_metric"] = "feature-space"
                row["kpca_feature_error_in"] = feature_trace - float(cumulative_mu[ell - 1])
                row["kpca_feature_error_out"] = feature_norms_test - float(cumulative_out[ell - 1])
            if ell in exact_errors:
                row["kpca_error_in_exact"], row["kpca_error_out_exact"] = exact_errors[ell]
                if approx.nystrom_type:
                    row["rel_excess_kpca_error_in"] = relative_excess(
                        row["kpca_error_in"], row["kpca_error_in_exact"])
            rows.append(row)
        return rows


@hookimpl
def kbench_register_tasks():
    return [KPCATask]
