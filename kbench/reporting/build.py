"""Writing a results directory's leaderboards: the page built once from the scores, the
advice and the focus view (kbench.reporting.parts), written as leaderboard.md with its
figures and as the interactive leaderboard.html."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from kbench._files import write_text
from kbench.reporting import html, markdown, parts
from kbench.reporting.advice import advise
from kbench.reporting.charts import chart_payload
from kbench.reporting.figures import prune_figures
from kbench.reporting.focus import focus as focus_tables
from kbench.reporting.focus import focus_label, scored_samplers
from kbench.reporting.header import header
from kbench.reporting.page import Page
from kbench.reporting.scores import cost_in_n, sections
from kbench.reporting.standing import standing
from kbench.reporting.status import (
    by_design,
    not_ok_table,
    not_planned_table,
    status_table,
    without_by_design,
)
from kbench.reporting.styles import styles
from kbench.sweep.store import check_one_sweep


@dataclass(frozen=True)
class Written:
    """What :func:`build` wrote, and the verdict of each task (the page's opening lines)."""

    files: dict[str, Path]
    verdicts: list[str]


def build(frame: pd.DataFrame, out, command: str | None = None, executor: str | None = None,
          focus: str | None = None) -> Written:
    """Write leaderboard.md (matplotlib figures in figures/*.png) and the interactive,
    self-contained leaderboard.html into ``out``; with ``focus``, a section of that sampler against
    every other."""
    check_one_sweep(frame)
    refused = by_design(frame)
    frame = without_by_design(frame, refused)
    out = Path(out)
    figures = out / "figures"
    figures.mkdir(parents=True, exist_ok=True)
    found, notes = sections(frame)
    standings = {section.label: standing(section) for section in found}
    look = styles(frame["sampler_label"].dropna().unique())
    advice = advise(frame, found, standings)
    costs = cost_in_n(frame)
    focus = focus_label(focus, scored_samplers(found)) if focus else None  # as the results label it
    page = Page(tuple(header(frame, command, executor)), tuple(notes), tuple(part for part in (
        parts.advice_part(advice),
        parts.focus_part(focus, focus_tables(found, focus)) if focus else None,
        *(parts.board_part(section, standings[section.label], advice.regimes, figures, look)
          for section in found),
        parts.datasets_part(advice),
        parts.cost_part(costs, figures, look),
        parts.status_part(status_table(frame), not_ok_table(frame), not_planned_table(refused)),
    ) if part is not None), chart_payload(frame, found, costs, look))
    write_text(out / "leaderboard.md", markdown.render(page, out))
    write_text(out / "leaderboard.html", html.render(page))
    prune_figures(figures, (path.name for part in page.parts for path in parts.images(part.blocks)))
    return Written({"markdown": out / "leaderboard.md", "html": out / "leaderboard.html"},
                   list(advice.statements))
