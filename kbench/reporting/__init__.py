"""Leaderboards from result rows, in the order a page is made.

``scores`` (sections and their cells, cost in n), ``status`` (cells by status, failures,
combinations not planned), ``standing`` (the one statistic per section: places per
(dataset, rank) block, with ties at the noise floor and failures last, and everything
derived from it), ``advice`` (which sampler for my data), ``selection`` (how the rows chose
λ), ``focus`` (one sampler against every other), ``figures`` (matplotlib PNGs),
``markdown`` and ``html`` (the two pages), ``build`` (writes both).
"""
