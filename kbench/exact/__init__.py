"""The exact kernel's results, every approximation's reference.

``baseline``: the exact baseline of a dataset, dense (``dense``: one eigendecomposition, up to
5 000 training rows) or matrix-free (``iterative``: PCG over the λ path, LOBPCG for KPCA, up to
``exact_max_n``), shared between processes through a keyed file; ``pcg``: preconditioned
conjugate gradients over a λ path.
"""
