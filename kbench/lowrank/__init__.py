"""Low-rank maps: what a sampler returns and every task consumes.

``maps`` (LowRank and the Nyström, Cholesky and Fourier feature maps), ``linalg`` (small
dense linear algebra: K_mm^{-1/2}, leverage scores), ``features`` (a fit's training and
test features streamed in row blocks, ΦᵀΦ accumulated once), ``checks`` (the sampler
contract, checked on every fit), ``cholesky`` (greedy and randomly pivoted Cholesky
factorisations: two samplers' fits, the exact baseline's preconditioner).
"""
