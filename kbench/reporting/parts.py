"""The leaderboard's parts, in page order, each built from what :func:`kbench.reporting.build.build`
computed: the answers, the focus view, a part per task configuration (with its figures), the
datasets, the cost in n, the cells by status. A new section is a function here returning a
:class:`~kbench.reporting.page.Part`; the renderers draw it as it is."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from kbench.reporting.advice import (
    REGIME_TEXT,
    WINNER_TEXT,
    Advice,
    regimes_title,
    short_names,
    split_regimes,
)
from kbench.reporting.charts import board_id
from kbench.reporting.figures import cost_figure, critical_difference, figure, figure_file
from kbench.reporting.focus import FOCUS_TEXT, FocusTables
from kbench.reporting.page import (
    Block,
    Bullets,
    Charts,
    Folded,
    Heading,
    Image,
    Paragraph,
    Part,
    Table,
)
from kbench.reporting.regimes import BY_REGIME_TEXT, by_regime
from kbench.reporting.scores import COST_TEXT, NOT_COMPARABLE_TEXT, UNINFORMATIVE_TEXT, Section
from kbench.reporting.standing import MIN_REPETITIONS, MISSING, STANDING_TEXT, Standing
from kbench.reporting.status import FAILURES_TEXT, NOT_OK_TEXT, NOT_PLANNED_TEXT, failures
from kbench.reporting.styles import Style

#: a section with more datasets has no figure per dataset in leaderboard.md (leaderboard.html
#: draws each dataset's charts on demand): a figure takes about a second
MAX_DATASET_FIGURES = 24

#: what a dataset without a figure of its own says in the static page
CHARTS_ELSEWHERE = "Its charts: leaderboard.html."


def advice_part(advice: Advice) -> Part:
    """The answers, one per task configuration."""
    return Part("advice", "Which sampler for my data", "Which sampler for my data",
                (Bullets(tuple(advice.statements)),))


def focus_part(sampler: str, views: list[FocusTables]) -> Part:
    """One sampler against every other, per task configuration and per dataset."""
    blocks: list[Block] = [Paragraph(FOCUS_TEXT)]
    for view in views:
        blocks += [Heading(view.section.title), Table(view.overall)]
        blocks += [Folded(f"{dataset}: by rank", (Table(table),))
                   for dataset, table in view.per_dataset.items()]
    return Part("focus", f"Focus: {sampler}", f"Focus: {sampler}", tuple(blocks))


def format_ranking(result: Standing, unscored: dict[str, str]) -> tuple[pd.DataFrame, list[str]]:
    """A section's table for the page, with a row per sampler that has no headline value, and
    its footnotes: how the table is computed, and which samplers are not ranked and why."""
    table = result.table.copy()
    for sampler, why in unscored.items():
        table.loc[sampler] = MISSING
        table.loc[sampler, "note"] = why
    for sampler, count in result.left_out.items():
        if sampler in table.index:
            table.loc[sampler, "note"] = f"cells in {count} of {result.blocks} blocks: not ranked"
    if table.empty:  # every dataset uninformative: nothing to rank
        return table, []
    friedman = ("" if result.friedman_p is None else
                f" Friedman's test over the {result.datasets} datasets' standings: p = "
                f"{result.friedman_p:.2g}.")
    footnotes = [f"Standings over {result.datasets} dataset(s), from {result.ranked} of "
                 f"{result.blocks} (dataset, rank) blocks.{friedman} {STANDING_TEXT}"]
    if "budgets won" not in table:
        footnotes.append("No rank budget is counted as won: a win needs a paired t-test over ≥ "
                         f"{MIN_REPETITIONS} repetitions and these cells have fewer; ahead: the "
                         "blocks where a sampler is first alone.")
    return table.fillna(""), footnotes


def board_part(section: Section, result: Standing, regimes: pd.DataFrame, figures: Path,
               look: dict[str, Style]) -> Part:
    """A task configuration's part: its ranking and footnotes, its standing by regime, its
    uninformative datasets, its failures, its critical-difference diagram and per dataset
    the means by rank with their charts (figures written into ``figures``)."""
    table, footnotes = format_ranking(result, section.unscored)
    blocks: list[Block] = []
    if len(table):
        blocks += [Table(table, as_text=True), *map(Paragraph, footnotes)]
    regime_table = by_regime(section, regimes)
    if len(regime_table):
        blocks += [Heading("By regime"), Paragraph(BY_REGIME_TEXT),
                   Table(regime_table.set_index("regime"))]
    if len(section.uninformative):
        blocks += [Heading("Uninformative datasets"), Paragraph(UNINFORMATIVE_TEXT),
                   Table(section.uninformative)]
    if len(section.not_comparable):
        blocks += [Heading("Datasets without comparable cells"), Paragraph(NOT_COMPARABLE_TEXT),
                   Table(section.not_comparable)]
    failed = failures(section)
    if len(failed):
        blocks += [Paragraph(FAILURES_TEXT), Table(failed, index=False)]
    diagram = figures / figure_file("cd", section.label)
    caption = critical_difference(section, result, diagram, look)
    if caption:
        blocks += [Image(diagram, f"critical difference, {section.label}"), Paragraph(caption)]
    datasets = sorted(section.scored["dataset"].unique())
    static = []
    for dataset in datasets:
        means = section.scored[section.scored["dataset"] == dataset].pivot_table(
            index="sampler", columns="rank", values="metric", aggfunc="mean")
        means.columns = [f"{r} ({setting})" if (setting := section.task.headline_setting(r))
                         else str(r)
                         for r in means.columns]
        chart: Block = Paragraph(CHARTS_ELSEWHERE)
        if len(datasets) <= MAX_DATASET_FIGURES:
            path = figures / figure_file(section.label, dataset)
            figure(section.scored, section.metric, section.smaller, section.label, dataset, path,
                   look)
            chart = Image(path, f"{section.label} on {dataset}")
        static.append(Folded(f"{section.label} on {dataset}", (Table(means), chart)))
    blocks.append(Charts("board", board_id(section.label), tuple(static)))
    return Part(board_id(section.label), section.title, section.label, tuple(blocks))


def datasets_part(advice: Advice) -> Part | None:
    """Each dataset's regime and facts, and the first place per rank budget, folded: at a
    hundred datasets they are the page's longest tables, read after the answers and standings."""
    blocks: list[Block] = []
    if len(advice.regimes):
        compact, facts = split_regimes(advice.regimes)
        blocks += [Heading(regimes_title(advice.regimes)), Paragraph(REGIME_TEXT),
                   Folded("Each dataset's regime", (Table(compact),)),
                   Folded("Each dataset's spec, source, preprocessing and documentation",
                          (Table(facts, links=("documentation",)),))]
    if len(advice.winners):
        names = short_names(advice.winners["dataset"].unique())
        each = tuple(Folded(names[dataset],
                            (Table(rows.drop(columns="dataset").reset_index(drop=True),
                                   index=False),),
                            hover=dataset)
                     for dataset, rows in advice.winners.groupby("dataset", sort=True))
        blocks += [Heading("First place per rank budget"), Paragraph(WINNER_TEXT),
                   Folded(f"Each dataset's ({len(names)})", each)]
    return Part("datasets", "Datasets", "Datasets", tuple(blocks)) if blocks else None


def cost_part(costs: dict, figures: Path, look: dict[str, Style]) -> Part | None:
    """Seconds and memory against n_train per size family, with their charts."""
    if not costs:
        return None
    blocks: list[Block] = [Paragraph(COST_TEXT)]
    for i, (family, (seconds, memory, rank)) in enumerate(costs.items()):
        path = figures / figure_file("cost_in_n", family)
        cost_figure(seconds, rank, family, path, look)
        blocks += [Heading(f"{family}, rank {rank}"), Table(seconds), Table(memory),
                   Charts("cost", f"cost-{i}",
                          (Image(path, f"Sampler cost in n: {family}, rank {rank}"),))]
    return Part("cost", "Sampler cost in n", "Cost in n", tuple(blocks))


def status_part(by_status: pd.DataFrame, not_ok: pd.DataFrame, unplanned: pd.DataFrame) -> Part:
    """The cells by status, those not ok by reason, the combinations not planned."""
    blocks: list[Block] = [Table(by_status)]
    if len(not_ok):
        blocks += [Heading("Cells not ok"), Paragraph(NOT_OK_TEXT),
                   Table(not_ok.set_index("sampler"), messages=True)]
    if len(unplanned):
        summary = f"{int(unplanned['combinations'].sum())} combinations, {len(unplanned)} reasons"
        blocks += [Heading("Not planned, by design"), Paragraph(NOT_PLANNED_TEXT),
                   Folded(summary, (Table(unplanned, index=False),))]
    return Part("status", "Cells by status", "Cells by status", tuple(blocks))


def images(blocks) -> list[Path]:
    """Every figure file the blocks show."""
    found = []
    for block in blocks:
        if isinstance(block, Image):
            found.append(block.path)
        elif isinstance(block, (Folded, Charts)):
            found += images(block.blocks if isinstance(block, Folded) else block.static)
    return found
