"""The two exceptions that decide a cell's status besides ``ok``.

* :class:`Refused` — kbench itself declines an input it does not support (a regression task
  on classes, exact leverage scores above their size limit, random features for a kernel
  without a spectral sampler). The cell is ``skipped``. It is a ValueError, so callers of
  the Python API can catch it with the other input errors.
* :class:`ContractViolation` — a sampler's result breaks the contract every task relies
  on (checked by the runner after every fit). The cell is an ``error``.

Every other exception, numpy's LinAlgError included, makes a cell an ``error``.
"""


class Refused(ValueError):
    """kbench declines this input by design (the cell is recorded as ``skipped``)."""


class ContractViolation(RuntimeError):
    """A sampler's result breaks the LowRank contract (the cell is recorded as ``error``)."""


__all__ = ["ContractViolation", "Refused"]
