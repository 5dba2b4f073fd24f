"""The workspace: what the evaluations on one dataset and kernel share, computed on first
use and dropped with it: the exact baseline, a task's reference matrix, a fit's features.

A sweep keeps one per (dataset, kernel, repetition), filled while its tasks prepare (before
the jobs fork, so every job reads it) and released by the worker: a fit's entries when its
job returns, the whole workspace after the last job. In Python, ``with kbench.plugin.Workspace():``
shares them between calls; outside one, each call computes what it needs. A ``with`` block
holds for its thread (or asyncio task): one workspace may be entered by several at once,
and a thread started inside a block enters it itself to share its entries.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from contextvars import ContextVar
from typing import Any, TypeVar

T = TypeVar("T")

_ACTIVE: ContextVar[Workspace | None] = ContextVar("kbench_workspace", default=None)
#: the workspaces the current context's ``with`` blocks replaced, innermost last
_OUTER: ContextVar[tuple] = ContextVar("kbench_outer_workspaces", default=())


class _Held:
    """An object as part of a key: equal only to itself. The key holds the object, so its
    identity cannot pass to another object while the entry lives (objects such as datasets
    compare by value, or not at all, and a fit's features belong to that fit, not to an equal
    one)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __hash__(self) -> int:
        return object.__hash__(self.value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Held) and other.value is self.value


class Workspace:
    """Entries made on first use, for the objects they belong to; active inside ``with``
    (which may be entered again, in each job of a sweep)."""

    def __init__(self) -> None:
        self._entries: dict[tuple, Any] = {}

    # (per context: threads and asyncio tasks each keep their own)
    def __enter__(self) -> Workspace:
        _OUTER.set((*_OUTER.get(), _ACTIVE.get()))
        _ACTIVE.set(self)
        return self

    def __exit__(self, *exc) -> None:
        *outer, previous = _OUTER.get()
        _OUTER.set(tuple(outer))
        _ACTIVE.set(previous)

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, owners: tuple, key: Hashable, make: Callable[[], T]) -> T:
        """The entry ``key`` of the objects ``owners`` (a dataset, a kernel, a fit), made by
        ``make()`` on first use."""
        entry = (tuple(_Held(owner) for owner in owners), key)
        if entry not in self._entries:
            self._entries[entry] = make()
        return self._entries[entry]

    def release(self, owner: Any) -> None:
        """Drop the entries of ``owner`` (a fit whose job returned): its arrays go now, not at
        the garbage collector's next run."""
        held = _Held(owner)
        for entry in [entry for entry in self._entries if held in entry[0]]:
            del self._entries[entry]

    def clear(self) -> None:
        self._entries.clear()


def cached(owners: tuple, key: Hashable, make: Callable[[], T]) -> T:
    """The active workspace's entry (:meth:`Workspace.get`), or ``make()`` when none is active."""
    if not isinstance(owners, tuple | list):
        raise TypeError(f"owners is a tuple of the objects the entry belongs to, e.g. (data,), got "
                        f"{type(owners).__name__}.")
    workspace = _ACTIVE.get()
    return make() if workspace is None else workspace.get(owners, key, make)


def active() -> Workspace | None:
    """The workspace of the current ``with`` block, if any."""
    return _ACTIVE.get()


__all__ = ["Workspace", "active", "cached"]
