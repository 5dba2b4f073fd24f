"""kbench's exceptions, under one root, and a cell's status.

Every exception kbench raises on purpose is a :class:`KbenchError`; each also derives from
the builtin a caller would catch (``ValueError`` for bad input, ``RuntimeError`` for a
broken plugin), so ``except ValueError`` keeps working.

A cell of a sweep ends in one :class:`Status`. Two exceptions decide it besides ``ok``:

* :class:`Refused` — kbench itself declines an input it does not support (a regression task
  on classes, exact leverage scores above their size limit, random features for a kernel
  without a spectral sampler). The cell is ``skipped``.
* :class:`ContractViolation` — a sampler's result breaks the contract every task relies
  on (checked after every fit). The cell is an ``error``.

Every other exception, numpy's LinAlgError included, makes a cell an ``error``; a
MemoryError makes it ``oom``. :meth:`Failure.of` is that rule.
"""

from __future__ import annotations

import enum
import re
import traceback
from dataclasses import dataclass


class KbenchError(Exception):
    """The root of kbench's own exceptions."""


class Refused(KbenchError, ValueError):
    """kbench declines this input by design (the cell is recorded as ``skipped``)."""


class ContractViolation(KbenchError, RuntimeError):
    """A sampler's result breaks the LowRank contract (the cell is recorded as ``error``)."""


class PluginError(KbenchError, RuntimeError):
    """A plugin is broken or ambiguous and cannot be used."""


class UnknownPluginError(KbenchError, ValueError):
    """No plugin of that kind has that name."""


class NotDownloaded(KbenchError, ValueError):
    """A dataset that is downloaded on first use could not be (no network, say): nothing is
    wrong with its provider, and the conformance kit skips it."""


class ConfigError(KbenchError, ValueError):
    """A workflow config is invalid; the message names the key."""


class Status(enum.StrEnum):
    """How a cell ended: the ``status`` column of its rows."""

    OK = "ok"
    ERROR = "error"
    TIMEOUT = "timeout"
    OOM = "oom"
    #: the worker was killed from outside kbench (not by the out-of-memory killer): a rerun
    #: computes the cell again
    KILLED = "killed"
    SKIPPED = "skipped"

    @property
    def failed(self) -> bool:
        """A failed cell (it sets the exit code of a sweep); ``skipped`` is not one."""
        return self in (Status.ERROR, Status.TIMEOUT, Status.OOM, Status.KILLED)


@dataclass(frozen=True)
class Failure:
    """Why a cell has no values: its status, a one-line message, and the component that
    failed (the ``failed_in`` column: "dataset", "kernel", "exact" (the exact baseline),
    "sampler", "task", or "job" when the worker was killed or died without saying)."""

    status: Status
    message: str
    component: str = "job"

    @classmethod
    def of(cls, exc: BaseException, component: str = "job") -> Failure:
        """Exception → failure: Refused is skipped, MemoryError oom, anything else error; the
        message is the exception, and for unexpected ones where it was raised."""
        if not isinstance(exc, BaseException):
            raise TypeError(f"Failure.of takes an exception, got {type(exc).__name__}.")
        if isinstance(exc, MemoryError):
            status = Status.OOM
        elif isinstance(exc, Refused):
            status = Status.SKIPPED
        else:
            status = Status.ERROR
        return cls(status, describe(exc), component)


#: the longest message a cell keeps (a plugin's 2 MB exception text is cut, its length said)
MAX_MESSAGE = 1000
#: control and invisible formatting characters, escaped in a message (a terminal escape, a
#: carriage return or a bidi override is not printed raw)
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069]")


def describe(exc: BaseException) -> str:
    """One printable line of at most :data:`MAX_MESSAGE` characters: the exception, and for
    unexpected ones where it was raised."""
    try:
        detail = str(exc)
    except Exception as failed:  # noqa: BLE001 - a plugin's __str__ that raises
        detail = f"(its message could not be read: {type(failed).__name__})"
    detail = detail or ("out of memory" if isinstance(exc, MemoryError) else "")
    text = f"{type(exc).__name__}: {detail}".strip()
    if not (isinstance(exc, ValueError | MemoryError | ContractViolation)
            or exc.__traceback__ is None):
        where = traceback.extract_tb(exc.__traceback__)[-1]  # the place, not its source line
        text += f" | {where.filename}:{where.lineno} in {where.name}"
    return one_line(text)


def one_line(text: str, limit: int = MAX_MESSAGE) -> str:
    """``text`` on one line (newlines and tabs as spaces), its other control characters
    escaped, cut to ``limit`` characters with its length said."""
    text = _UNPRINTABLE.sub(lambda m: " " if m.group() in "\n\r\t"
                            else m.group().encode("unicode_escape").decode(),
                            text)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


__all__ = ["ConfigError", "ContractViolation", "Failure", "KbenchError", "PluginError", "Refused",
           "Status",
           "UnknownPluginError", "describe"]
