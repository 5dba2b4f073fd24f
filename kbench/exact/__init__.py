"""The exact kernel's results, every approximation's reference.

``baseline``: dense (one eigendecomposition, up to 5 000 training rows) and matrix-free
(PCG over the λ path, LOBPCG for KPCA, up to ``exact_max_n``) baselines, shared between
processes through a keyed file; ``pcg``: preconditioned conjugate gradients over a λ path.
"""
