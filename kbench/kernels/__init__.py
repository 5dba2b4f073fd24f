"""Kernel functions (the ``kernels`` plugin of kbench): the :class:`Kernel` base class with
blockwise evaluation (kernels/base.py) and the built-in kernels by family."""

from kbench.hookspecs import hookimpl
from kbench.kernels.base import Kernel, block_rows
from kbench.kernels.dot_product import LinearKernel, PolynomialKernel
from kbench.kernels.periodic import PeriodicExpKernel, PeriodicSobolevKernel
from kbench.kernels.stationary import GaussianKernel, LaplacianKernel, MaternKernel

#: the kernel a sweep and the conformance kit use unless told: the Gaussian with σ from the
#: median heuristic (a bare ``gaussian`` has the class default, σ = 1)
DEFAULT_KERNEL = "gaussian:sigma=median"

BUILTIN_KERNELS = [
    GaussianKernel,
    LaplacianKernel,
    MaternKernel,
    PolynomialKernel,
    LinearKernel,
    PeriodicSobolevKernel,
    PeriodicExpKernel,
]


@hookimpl
def kbench_register_kernels():
    return BUILTIN_KERNELS


__all__ = ["BUILTIN_KERNELS", "DEFAULT_KERNEL", "GaussianKernel", "Kernel", "LaplacianKernel",
           "LinearKernel",
           "MaternKernel", "PeriodicExpKernel", "PeriodicSobolevKernel", "PolynomialKernel",
           "block_rows"]
