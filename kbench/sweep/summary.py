"""What a sweep did: its cells by status, those already done, the combinations not planned."""

from __future__ import annotations

from dataclasses import dataclass, field

from kbench.errors import Status


@dataclass
class Summary:
    counts: dict
    wall_s: float
    cells: list[str]
    #: (dataset, kernel, sampler, task) combinations not planned: they cannot run by design
    not_planned: list[dict] = field(default_factory=list)
    #: the cells already done that failed, by status (not computed again without --retry-failed)
    failed_before: dict = field(default_factory=dict)

    @property
    def failed(self) -> int:
        """The failed cells: computed now, or before and not retried."""
        return sum(v for k, v in self.counts.items()
                   if k in {s.value for s in Status if s.failed}) + \
            sum(self.failed_before.values())

    def __str__(self) -> str:
        parts = ", ".join(f"{self.counts.get(s.value, 0)} {s.value}" for s in Status)
        done = f"{self.counts.get('already done', 0)} already done"
        if self.failed_before:
            failed = ", ".join(f"{n} {status}" for status, n in sorted(self.failed_before.items()))
            done += f" ({failed}: --retry-failed computes those again)"
        reasons = sorted({row["reason"] for row in self.not_planned})
        skipped = (f"; {len(self.not_planned)} combinations not planned, by design: "
                   + "; ".join(reasons)
                   if reasons else "")
        return f"{len(self.cells)} cells: {parts}; {done}; wall time {self.wall_s:.1f} s{skipped}"
