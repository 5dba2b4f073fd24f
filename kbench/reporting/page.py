"""The leaderboard page as data: a header and a list of parts, each a titled list of blocks.

:func:`kbench.reporting.build.build` builds the page once (:mod:`kbench.reporting.parts`);
:mod:`kbench.reporting.markdown` and :mod:`kbench.reporting.html` each draw every block
kind. A new section is a function returning a :class:`Part`; a new kind of block is a class
here and a case in each renderer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Union

import pandas as pd


@dataclass(frozen=True)
class Paragraph:
    """A paragraph of plain text (a caption, a footnote)."""

    text: str


@dataclass(frozen=True)
class Bullets:
    """A list of plain-text items."""

    items: tuple[str, ...]


@dataclass(frozen=True)
class Heading:
    """A heading inside a part."""

    text: str


@dataclass(frozen=True, eq=False)
class Table:
    """A table; its index is its first column unless ``index`` is False. ``links``: columns
    whose web addresses are links (HTML); ``as_text``: cells drawn as they are, numbers
    not reformatted; ``messages``: long texts (HTML wraps them in a scrolling box)."""

    frame: pd.DataFrame
    index: bool = True
    links: tuple[str, ...] = ()
    as_text: bool = False
    messages: bool = False


@dataclass(frozen=True)
class Folded:
    """Blocks shown on demand under a one-line summary (``hover``: the summary's tooltip)."""

    summary: str
    blocks: tuple[Block, ...]
    hover: str | None = None


@dataclass(frozen=True)
class Image:
    """A figure file (PNG) written beside the page."""

    path: Path
    alt: str


@dataclass(frozen=True)
class Charts:
    """A part's charts: drawn by the HTML page's script from its data (``kind``: a task's
    charts, "board", or a cost family's, "cost"; ``id`` its key in that data), and by the
    static page as its ``static`` blocks."""

    kind: Literal["board", "cost"]
    id: str
    static: tuple[Block, ...]


Block = Union[Paragraph, Bullets, Heading, Table, Folded, Image, Charts]


@dataclass(frozen=True)
class Part:
    """A section of the page: its anchor ``id``, its ``title``, its entry in the page's
    navigation (``nav``) and its blocks."""

    id: str
    title: str
    nav: str
    blocks: tuple[Block, ...]


@dataclass(frozen=True)
class Page:
    """The whole page: header lines (markdown code spans allowed), notes, parts in order."""

    header: tuple[str, ...]
    notes: tuple[str, ...]
    parts: tuple[Part, ...]
    # what the HTML page's charts draw (kbench.reporting.charts)
    data: dict = field(default_factory=dict)
