"""Labels beside the points of a matplotlib chart that overlap neither each other nor the markers
nor whatever else the chart asks them to avoid: a greedy search over a few places round each
point, the most crowded points first, nearest places first.

Boxes are ``(x0, y0, x1, y1)`` in display pixels, measured once the figure's layout is final
(:func:`freeze`); the labels are drawn at offsets in points, so a PNG or an SVG of the figure
shows them where they were placed. Everything is arithmetic on those boxes: the same chart gets
the same labels every time.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

__all__ = ["Box", "choose", "freeze", "label_points", "marker_box", "overlap", "text_size"]

Box = tuple[float, float, float, float]
#: Directions round a point, in the order they are tried: beside it, then above and below it,
#: then on the diagonals.
_DIRECTIONS = ((1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1))
#: How far from the marker's edge a label is tried [points]; past the first, a leader line
#: joins it to its point.
_GAPS = (1.5, 8.0, 16.0, 26.0)
#: Room kept round every label [px], so that neighbours never touch.
_PAD = 1.0


def freeze(fig: Any) -> Any:
    """Lay the figure out for good (constrained layout moves the axes until it is drawn) and
    return its renderer, to measure in (Agg's, the one PNG files are drawn with)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    fig.draw_without_rendering()
    return fig.canvas.get_renderer()


def overlap(a: Box, b: Box) -> float:
    """The area two boxes share [px²]."""
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return w * h if w > 0 and h > 0 else 0.0


def _outside(box: Box, frame: Box) -> float:
    """How much of ``box`` lies outside ``frame`` [px²]."""
    area = (box[2] - box[0]) * (box[3] - box[1])
    return area - overlap(box, frame)


def choose(candidates: Sequence[Box], taken: Sequence[Box], frame: Box) -> int:
    """The index of the first candidate inside ``frame`` that overlaps nothing ``taken``, or, when
    every one does, of the one with the least area in conflict."""

    def conflict(box: Box) -> float:
        return _outside(box, frame) + sum(overlap(box, t) for t in taken)

    costs = []
    for i, box in enumerate(candidates):
        cost = conflict(box)
        if cost == 0.0:
            return i
        costs.append(cost)
    return min(range(len(costs)), key=costs.__getitem__)


def text_size(ax: Any, renderer: Any, text: str, fontsize: float) -> tuple[float, float]:
    """Width and height of ``text`` at ``fontsize`` [px]."""
    probe = ax.text(0, 0, text, fontsize=fontsize)
    box = probe.get_window_extent(renderer)
    probe.remove()
    return box.width, box.height


def marker_box(x: float, y: float, radius: float) -> Box:
    """The square round a marker of ``radius`` [px] at display point (x, y)."""
    return (x - radius, y - radius, x + radius, y + radius)


def _crowd(xy: Sequence[tuple[float, float]], reach: float) -> list[int]:
    """How many other points lie within ``reach`` [px] of each point."""
    return [
        sum(1 for j, q in enumerate(xy) if j != i and math.dist(p, q) <= reach)
        for i, p in enumerate(xy)
    ]


def _place(x: float, y: float, w: float, h: float, ux: int, uy: int, r: float) -> Box:
    """The box of a ``w`` x ``h`` label ``r`` [px] from (x, y) in direction (ux, uy)."""
    left = x + r if ux > 0 else x - r - w if ux < 0 else x - w / 2
    bottom = y + r if uy > 0 else y - r - h if uy < 0 else y - h / 2
    return (left - _PAD, bottom - _PAD, left + w + _PAD, bottom + h + _PAD)


def label_points(
    ax: Any,
    renderer: Any,
    points: Sequence[tuple[float, float]],
    texts: Sequence[str],
    *,
    fontsize: float,
    marker_radius: float,
    avoid: Sequence[Box] = (),
    color: str = "#3a3a3a",
) -> list[Any]:
    """Label each point (in data coordinates) with its text, placed by :func:`choose` among
    the places round it, away from every marker (``marker_radius`` [px]), every label placed
    before it and the boxes ``avoid``; returns the annotations, in the order of ``points``."""
    fig = ax.figure
    to_pt = 72.0 / fig.dpi
    xy = [tuple(ax.transData.transform(p)) for p in points]
    markers = [marker_box(x, y, marker_radius) for x, y in xy]
    bounds = ax.get_window_extent(renderer)
    frame = (bounds.x0, bounds.y0, bounds.x1, bounds.y1)
    taken = [*avoid, *markers]
    crowd = _crowd(xy, 12 * marker_radius)
    placed: dict[int, Any] = {}
    for i in sorted(range(len(xy)), key=lambda i: (-crowd[i], i)):
        (x, y), (w, h) = xy[i], text_size(ax, renderer, texts[i], fontsize)
        tries = [
            (ux, uy, marker_radius + gap / to_pt, gap) for gap in _GAPS for ux, uy in _DIRECTIONS
        ]
        boxes = [_place(x, y, w, h, ux, uy, r) for ux, uy, r, _ in tries]
        k = choose(boxes, taken, frame)
        taken.append(boxes[k])
        ux, uy, r, gap = tries[k]
        placed[i] = ax.annotate(
            texts[i],
            points[i],
            xytext=(ux * r * to_pt, uy * r * to_pt),
            textcoords="offset points",
            ha={1: "left", -1: "right", 0: "center"}[ux],
            va={1: "bottom", -1: "top", 0: "center"}[uy],
            fontsize=fontsize,
            color=color,
            zorder=4,
            annotation_clip=False,
            arrowprops=None if gap == _GAPS[0] else _LEADER,
        )
        placed[i].set_in_layout(False)
    return [placed[i] for i in range(len(xy))]


#: The thin line from a label placed away from its point.
_LEADER = {"arrowstyle": "-", "linewidth": 0.4, "color": "#9a9a9a", "shrinkA": 0, "shrinkB": 2}
