"""Leaderboards from result rows.

``scores`` (sections, rankings, win rates, rank to match exact, Friedman/Nemenyi, cost in
n), ``advice`` (which sampler for my data), ``focus`` (one sampler against every other),
``figures`` (seaborn/matplotlib PNGs), ``markdown`` and ``html`` (the two pages), ``build``
(writes both).
"""
