"""A dendrogram drawn as a small inline SVG on the server (no plotting library needed)."""

from __future__ import annotations

from html import escape

import numpy as np
from numpy.typing import NDArray
from scipy.cluster.hierarchy import dendrogram

#: Colours of the leaves' top-level folders, cycled (Tableau 10, without its grey, which marks
#: documents that are not filed).
PALETTE = (
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#17becf",
)  # fmt: skip


def dendrogram_svg(
    Z: NDArray[np.floating],
    leaf_groups: list[str],
    *,
    width: int = 700,
    height: int = 240,
    unfiled: str = "(not filed)",
) -> str:
    """SVG of linkage ``Z`` with a coloured tick per leaf for its group (top-level folder).

    ``height`` is the plot's; the legend adds rows below it.
    Leaves in group ``unfiled`` are grey.
    """
    tree = dendrogram(Z, no_plot=True)
    n = len(leaf_groups)
    top = float(np.max(Z[:, 2])) or 1.0
    groups = sorted(set(leaf_groups) - {unfiled}) + ([unfiled] if unfiled in leaf_groups else [])
    colour = {g: PALETTE[i % len(PALETTE)] for i, g in enumerate(groups)}
    colour[unfiled] = "#b8bec7"
    # Legend entries flow into rows under the plot.
    pad, tick_h, row_h, char_w = 8, 10, 16, 6.6
    legend, lx, row = [], float(pad), 0
    for g in groups:
        label = g if len(g) <= 40 else g[:39] + "…"
        item_w = 16 + char_w * len(label)
        if lx + item_w > width - pad and lx > pad:
            lx, row = float(pad), row + 1
        legend.append((lx, row, g, label))
        lx += item_w + 10
    legend_h = (row + 1) * row_h + 6 if legend else 0
    height = height + legend_h
    plot_h = height - legend_h - tick_h - 2 * pad

    def x(value: float) -> float:  # scipy puts leaf i at 10 i + 5
        return pad + (value / (10.0 * n)) * (width - 2 * pad)

    def y(value: float) -> float:
        return pad + plot_h * (1.0 - value / top)

    paths = []
    for xs, ys in zip(tree["icoord"], tree["dcoord"], strict=True):
        points = " ".join(f"{x(a):.1f},{y(b):.1f}" for a, b in zip(xs, ys, strict=True))
        paths.append(f'<polyline points="{points}"/>')
    ticks = []
    base = pad + plot_h
    for position, leaf in enumerate(tree["leaves"]):
        cx = x(10.0 * position + 5.0)
        group = leaf_groups[leaf]
        ticks.append(
            f'<line x1="{cx:.1f}" y1="{base + 2:.1f}" x2="{cx:.1f}" y2="{base + tick_h:.1f}" '
            f'stroke="{colour[group]}"><title>{escape(group)}</title></line>'
        )
    legend_svg = []
    for lx, row, g, label in legend:
        ly = base + tick_h + 6 + row * row_h
        legend_svg.append(
            f'<rect x="{lx:.0f}" y="{ly:.0f}" width="9" height="9" fill="{colour[g]}"/>'
            f'<text x="{lx + 13:.0f}" y="{ly + 8:.0f}">{escape(label)}</text>'
        )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="dendrogram" viewBox="0 0 {width} {height}"'
        f' width="100%" role="img" aria-label="Dendrogram of {n} filed documents">'
        f'<g fill="none" stroke="#5b6472" stroke-width="1">{"".join(paths)}</g>'
        f'<g stroke-width="2">{"".join(ticks)}</g>'
        f'<g font-size="11" fill="#333">{"".join(legend_svg)}</g></svg>'
    )
