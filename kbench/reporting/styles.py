"""One look per sampler on every chart of a page: a colour, a marker and a line dash.

Colours cycle through the ten of Tableau 10 (matplotlib's ``tab10``, Plotly's "T10"),
markers through seven shapes and dashes through three, so the i-th sampler (in sorted
order over the whole page) gets (colour i mod 10, marker i mod 7, dash ⌊i/10⌋ mod 3): for
up to 70 samplers no two share a colour and marker pair, and a sampler looks the same on
the matplotlib figures and the Plotly charts.
"""

from __future__ import annotations

from dataclasses import dataclass

COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf")
#: (matplotlib, Plotly) names of the same marker
MARKERS = (("o", "circle"), ("s", "square"), ("D", "diamond"), ("^", "triangle-up"),
           ("v", "triangle-down"),
           ("P", "cross"), ("X", "x"))
#: (matplotlib, Plotly) names of the same dash
DASHES = (("", "solid"), ((4, 2), "dash"), ((1, 1), "dot"))


@dataclass(frozen=True)
class Style:
    colour: str
    marker: str  # matplotlib
    symbol: str  # Plotly
    dashes: tuple | str  # matplotlib's dash pattern ("" for solid)
    dash: str  # Plotly

    def plotly(self) -> dict:
        return {"color": self.colour, "symbol": self.symbol, "dash": self.dash}


def styles(samplers) -> dict[str, Style]:
    """The style of each sampler label, by its place in the sorted list of all of them."""
    found = {}
    for i, sampler in enumerate(sorted(set(samplers))):
        marker, symbol = MARKERS[i % len(MARKERS)]
        dashes, dash = DASHES[(i // len(COLOURS)) % len(DASHES)]
        found[sampler] = Style(COLOURS[i % len(COLOURS)], marker, symbol, dashes, dash)
    return found
