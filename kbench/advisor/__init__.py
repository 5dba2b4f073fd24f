"""``kbench advise``: which low-rank approximation, at what rank, for the user's own data,
from its regime and the published evidence (docs/advise.md)."""

from kbench.advisor.answer import ADVISE_KERNEL, Advice, advise

__all__ = ["ADVISE_KERNEL", "Advice", "advise"]
