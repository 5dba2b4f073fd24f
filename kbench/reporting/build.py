"""Writing a results directory's leaderboards: leaderboard.md with its figures and the
interactive leaderboard.html, from the scores, the advice and the focus view."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from kbench._files import write_text
from kbench.reporting import html, markdown
from kbench.reporting.advice import advise
from kbench.reporting.figures import (
    cost_figure,
    critical_difference,
    figure,
    figure_file,
    prune_figures,
)
from kbench.reporting.focus import focus as focus_tables
from kbench.reporting.regimes import by_regime
from kbench.reporting.scores import (
    by_design,
    cost_in_n,
    failures,
    not_ok_table,
    not_planned_table,
    sections,
    status_table,
    without_by_design,
)
from kbench.reporting.standing import standing
from kbench.reporting.styles import styles
from kbench.sweep.store import check_one_sweep

#: a section with more datasets has no figure per dataset in leaderboard.md (leaderboard.html
#: draws each dataset's charts on demand): a figure takes about a second
MAX_DATASET_FIGURES = 24


@dataclass(frozen=True)
class Page:
    """What :func:`build` wrote, and the verdict of each task (the page's opening lines)."""

    files: dict[str, Path]
    verdicts: list[str]


def build(frame: pd.DataFrame, out, command: str | None = None, executor: str | None = None,
          focus: str | None = None) -> Page:
    """Write leaderboard.md (matplotlib figures in figures/*.png) and the interactive, self-contained
    leaderboard.html into ``out``; with ``focus``, a section of that sampler against every other."""
    check_one_sweep(frame)
    refused = by_design(frame)
    frame = without_by_design(frame, refused)
    out = Path(out)
    (out / "figures").mkdir(parents=True, exist_ok=True)
    found, notes = sections(frame)
    views = focus_tables(found, focus) if focus else None
    lines = markdown.header(frame, command, executor)
    standings = {section.label: standing(section) for section in found}
    look = styles(frame["sampler_label"].dropna().unique())
    advice = advise(frame, found, standings)
    figures: dict[tuple, str] = {}
    boards = []
    for section in found:
        result = standings[section.label]
        table, footnotes = markdown.format_ranking(result, section.unscored)
        diagram = out / "figures" / figure_file("cd", section.label)
        caption = critical_difference(section, result, diagram, look)
        figures["cd", section.label] = f"figures/{diagram.name}"
        boards.append(html.Board(section, table, footnotes, diagram if caption else None, caption,
                                 failures(section), by_regime(section, advice.regimes)))
        datasets = sorted(section.scored["dataset"].unique())
        for dataset in datasets if len(datasets) <= MAX_DATASET_FIGURES else ():
            path = out / "figures" / figure_file(section.label, dataset)
            figure(section.scored, section.metric, section.smaller, section.label, dataset, path, look)
            figures[section.label, dataset] = f"figures/{path.name}"
    costs = cost_in_n(frame)
    for family, (seconds, _, rank) in costs.items():
        path = out / "figures" / figure_file("cost_in_n", family)
        cost_figure(seconds, rank, family, path, look)
        figures["cost", family] = f"figures/{path.name}"
    statuses = (status_table(frame), not_ok_table(frame), not_planned_table(refused))
    write_text(out / "leaderboard.md", markdown.page(lines, notes, advice, focus, views, boards, costs,
                                                     statuses, figures))
    write_text(out / "leaderboard.html", html.render(frame, lines, notes, boards, advice, views, focus,
                                                     costs, statuses, look))
    prune_figures(out / "figures", (Path(name).name for name in figures.values()))
    return Page({"markdown": out / "leaderboard.md", "html": out / "leaderboard.html"}, list(advice.statements))
