"""Where a chart's axes go: measured once from the text around them.

Matplotlib's constrained layout measures every artist of a figure twice at each draw, which
was about two fifths of the time a report spent on its charts. A chart of the reports has
the same text around its axes each time: a title above (the axes' left title, or the
figure's title), the y tick labels and label on the left, the x tick labels and label below
and the legend's rows under them; its margins are the sizes of those texts, measured on the
figure's own renderer, plus matplotlib's own pads (``rcParams``). Text drawn inside the axes
(notes, annotations) is not measured.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib as mpl
from matplotlib.axes import Axes
from matplotlib.axis import Axis
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties

__all__ = ["TITLE_SIZE", "fit"]

TITLE_SIZE = 11.0  # [pt] of every chart's title
_EDGE = 4.0  # [pt] between the outermost text and the figure's edge, or between panels
_GAP = 6.0  # [pt] between the x labels and the legend
_SUPTITLE_Y = 0.98  # [-] where matplotlib puts a figure's title


def _text(fig: Figure, texts: Sequence[str], size: float) -> tuple[float, float]:
    """The widest width and the tallest height [pt] of ``texts`` (each of one or more lines)
    at font ``size`` [pt]."""
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    prop = FontProperties(size=size)
    scale = 72.0 / fig.dpi
    width = height = 0.0
    for text in texts:
        lines = text.split("\n")
        boxes = [renderer.get_text_width_height_descent(ln or "Ag", prop, False) for ln in lines]
        width = max(width, max(w for w, _, _ in boxes) * scale)
        line = max(h for _, h, _ in boxes) * scale
        height = max(height, line * (1 + 1.2 * (len(lines) - 1)))  # matplotlib's linespacing
    return width, height


def _ticks(axis: Axis) -> tuple[list[str], float, list[float]]:
    """The major tick labels shown within ``axis``'s view, their font size [pt] and where
    each stands along the axis [fraction of its length]."""
    lo, hi = axis.get_view_interval()
    span = (hi - lo) or 1.0
    locs = [v for v in axis.get_majorticklocs() if -1e-9 <= (v - lo) / span <= 1 + 1e-9]
    size = axis.get_major_ticks(1)[0].label1.get_fontsize()
    labels = list(axis.get_major_formatter().format_ticks(locs))
    return labels, float(size), [(v - lo) / span for v in locs]


def _overhang(fig: Figure, axis: Axis, length: float) -> tuple[float, float]:
    """How far [pt] the first and the last x tick label of ``axis`` reach beyond its ends,
    for an axis ``length`` [pt] long."""
    labels, size, where = _ticks(axis)
    if not labels:
        return 0.0, 0.0
    first = _text(fig, labels[:1], size)[0] / 2 - where[0] * length
    last = _text(fig, labels[-1:], size)[0] / 2 - (1 - where[-1]) * length
    return max(first, 0.0), max(last, 0.0)


def _tick_room(axis: str) -> float:
    """Tick length and label pad of an axis [pt]."""
    return mpl.rcParams[f"{axis}tick.major.size"] + mpl.rcParams[f"{axis}tick.major.pad"]


def _label(fig: Figure, text: str) -> float:
    """The room an axis label takes [pt]: its height and pad, or nothing without one."""
    size = FontProperties(size=mpl.rcParams["axes.labelsize"]).get_size_in_points()
    return _text(fig, [text], size)[1] + mpl.rcParams["axes.labelpad"] if text else 0.0


def _below(fig: Figure, axes: Sequence[Axes], rows: int, size: float) -> float:
    """The room under the axes [pt]: x tick labels, x labels and a legend of ``rows`` rows of
    ``size`` [pt] text."""
    row = _text(fig, ["Ag"], size)[1]
    pad = mpl.rcParams["legend.borderpad"] * size
    legend = rows * row + max(rows - 1, 0) * mpl.rcParams["legend.labelspacing"] * size + 2 * pad
    ticks = max(_text(fig, *_ticks(ax.xaxis)[:2])[1] for ax in axes) + _tick_room("x")
    labels = max(_label(fig, ax.get_xlabel()) for ax in axes)
    return _EDGE + legend + _GAP + labels + ticks


def fit(fig: Figure, axes: Sequence[Axes], legend_rows: int, legend_size: float) -> float:
    """Place ``axes`` (one, or a row sharing the first one's y tick labels) in ``fig`` so that
    the title, tick labels, axis labels and a legend of ``legend_rows`` rows of
    ``legend_size`` [pt] text below them fit the figure; returns the legend's bottom
    [figure fraction]."""
    width, height = (size * 72.0 for size in fig.get_size_inches())
    first, last = axes[0], axes[-1]
    yticks_w = _text(fig, *_ticks(first.yaxis)[:2])[0]
    left = _EDGE + _label(fig, first.get_ylabel()) + yticks_w + _tick_room("y")
    bottom = _below(fig, axes, legend_rows, legend_size)
    suptitle = fig.get_suptitle()
    title_h = _text(fig, [suptitle or first.get_title(loc="left") or "Ag"], TITLE_SIZE)[1]
    above = (1 - _SUPTITLE_Y) * height if suptitle else mpl.rcParams["axes.titlepad"]
    top = _EDGE + title_h + above
    panel = (width - left - _EDGE) / len(axes)  # before the gaps and the right overhang
    right = _EDGE + _overhang(fig, last.xaxis, panel)[1]
    gap = 0.0
    for a, b in zip(axes, axes[1:], strict=False):
        reach = _overhang(fig, a.xaxis, panel)[1] + _overhang(fig, b.xaxis, panel)[0]
        gap = max(gap, _EDGE + max(reach, mpl.rcParams["ytick.major.size"]))
    panel = (width - left - right - gap * (len(axes) - 1)) / len(axes)
    fig.subplots_adjust(
        left=left / width,
        right=1 - right / width,
        bottom=bottom / height,
        top=1 - top / height,
        wspace=gap / panel,
    )
    return _EDGE / height
