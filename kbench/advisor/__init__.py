"""``kbench advise``: which low-rank approximation, at what rank, for the user's own data,
from its regime and the published evidence (docs/advise.md).

``advise`` and ``Advice`` are loaded when first used (PEP 562): the evidence model needs
scipy.stats and the reporting layer, which a sweep's worker never does.
"""

from kbench.advisor.task import ADVISE_KERNEL

__all__ = ["ADVISE_KERNEL", "Advice", "advise"]


def __getattr__(name: str):
    if name in ("Advice", "advise"):
        from kbench.advisor import answer

        return getattr(answer, name)
    raise AttributeError(f"module 'kbench.advisor' has no attribute {name!r}")
