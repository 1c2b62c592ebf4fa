"""A report chart as one SVG document: a title, one axes or a row of them sharing the first
one's y axis, and a legend below, laid out around their text.

The layout follows matplotlib's (the charts were drawn with it): the title above the axes
at their left, y tick labels and label on the left, x tick labels and label below, then the
legend's rows, centred, in up to three columns; tick marks 3.5 pt long outside the axes,
grid lines at the ticks, the top and right spines hidden. Text is measured from the font's
widths (:func:`.svg.text_width`). The document says what it shows to assistive technology
(``role="img"``, its ``<title>`` and ``<desc>``), needs nothing outside itself, and names its
ids after the chart so that several can share one HTML page.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

import numpy as np

from .plot import Axes, Axis, Frame, Key, group, marker, rule
from .svg import FONT, attrs, element, escape, num, text_width
from .ticks import nice_ticks, view

__all__ = ["TITLE_SIZE", "Chart"]

WIDTH, HEIGHT = 576.0, 345.6  # [pt] 8 x 4.8 inches
TITLE_SIZE = 11.0  # [pt]
_LABEL, _LEGEND = 10.0, 8.0  # [pt] axis labels, legend
_LINE = 1.2  # [em] from one line of text to the next
_EDGE = 4.0  # [pt] between the outermost text and the chart's edge
_GAP = 6.0  # [pt] between the x labels and the legend
_TICK = 3.5  # [pt] tick length, and the pad between a tick and its label
_LABEL_PAD, _TITLE_PAD = 4.0, 6.0  # [pt]
_SWATCH = 18.0  # [pt] a legend key's width
_GRID, _INK = "#dddddd", "#000000"
_SCALE = 5 / 3  # [px/pt] the chart's natural size: 960 px wide


def _lines_height(text: str, size: float) -> float:
    """The height [pt] of ``text``'s lines (split at ``\\n``) at ``size`` [pt]; 0 without."""
    return text.count("\n") * _LINE * size + size if text else 0.0


class _Ticks:
    """An axis's ticks within its view: values, labels and the widest label [pt]."""

    def __init__(self, axis: Axis, lo: float, hi: float, bins: int) -> None:
        if axis.names:
            values = np.arange(len(axis.names), dtype=float)
            labels = [str(n) for n in axis.names]
        else:
            values = nice_ticks(lo, hi, bins, axis.integer)
            values = values[(values >= lo - 1e-9 * (hi - lo)) & (values <= hi + 1e-9 * (hi - lo))]
            labels = [axis.fmt(v) for v in values]
        self.values, self.labels = values, labels if axis.shown else [""] * len(labels)
        self.width = max((text_width(t, axis.size) for t in self.labels), default=0.0)

    def shared(self, axis: Axis) -> _Ticks:
        """These ticks on another axes sharing this axis, labelled only when ``axis`` shows
        its labels."""
        out = copy.copy(self)
        if not axis.shown:
            out.labels, out.width = [""] * len(self.labels), 0.0
        return out


def _x_ticks(axis: Axis, lo: float, hi: float, length: float) -> _Ticks:
    """The most ticks (up to 10) whose labels, ``length`` [pt] of axis apart, do not touch."""
    for bins in range(9, 1, -1):
        ticks = _Ticks(axis, lo, hi, bins)
        if len(ticks.values) < 2:
            return ticks
        step = (ticks.values[1] - ticks.values[0]) * length / (hi - lo)
        if step >= ticks.width + 2 * axis.size:
            return ticks
    return _Ticks(axis, lo, hi, 1)


def _y_range(axes: Axes) -> tuple[float, float]:
    """The y view of ``axes`` [data units]: its categories from the first (on top) down, or
    its data's."""
    if axes.y.names:
        return len(axes.y.names) - 0.4, -0.6
    ys = np.concatenate([i.ys for i in axes.items]) if axes.items else np.array([])
    return view(ys, axes.y.low, axes.y.high)


def _x_range(axes: Axes) -> tuple[float, float]:
    xs = np.concatenate([i.xs for i in axes.items]) if axes.items else np.array([])
    return view(xs, axes.x.low, axes.x.high)


class Chart:
    """One chart: ``name`` (its ids' prefix), ``title``, ``desc`` (what it shows, in words),
    a row of ``axes`` sharing the first one's y axis, ``height`` [pt]."""

    def __init__(
        self, name: str, title: str, desc: str, axes: Sequence[Axes], height: float = HEIGHT
    ) -> None:
        self.name, self.title, self.desc = name, title, desc
        self.axes, self.height = list(axes), height

    def legend(self) -> list[tuple[str, Key]]:
        """The legend's entries, each label once, in the order drawn."""
        seen: dict[str, Key] = {}
        for ax in self.axes:
            for item in ax.items:
                if item.label and item.key and item.label not in seen:
                    seen[item.label] = item.key
        return list(seen.items())

    def svg(self) -> str:
        """The chart as a standalone SVG document (UTF-8 text)."""
        entries = self.legend()
        rows, widths = _legend_grid(entries, WIDTH - 2 * _EDGE)
        frames, ticks = self._layout(len(rows))
        ident = f"chart-{self.name}"
        out = [
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {num(WIDTH)} '
            f'{num(self.height)}"{attrs(width=WIDTH * _SCALE, height=self.height * _SCALE)}'
            f"{attrs(role='img', aria_labelledby=f'{ident}-title {ident}-desc')}"
            f"{attrs(font_family=FONT, class_='chart')}>",
            element("title", self.title, id=f"{ident}-title"),
            element("desc", self.desc, id=f"{ident}-desc"),
            element("rect", width=WIDTH, height=self.height, fill="#ffffff"),
        ]
        for i, (ax, frame, (xt, yt)) in enumerate(zip(self.axes, frames, ticks, strict=True)):
            out.append(_axes_svg(ax, frame, xt, yt, f"{ident}-clip{i}", first=i == 0))
        left = frames[0].left  # the title starts where the axes do, when it fits
        if text_width(self.title, TITLE_SIZE) > WIDTH - left - _EDGE:
            left = _EDGE
        out.append(
            element(
                "text",
                self.title,
                x=left,
                y=_EDGE + TITLE_SIZE * 0.9,
                font_size=TITLE_SIZE,
                fill=_INK,
            )
        )
        out.append(_legend_svg(entries, rows, widths, self.height))
        out.append("</svg>")
        return "".join(out)

    def _layout(self, legend_rows: int) -> tuple[list[Frame], list[tuple[_Ticks, _Ticks]]]:
        """Each axes' frame and ticks: the room of the title, the labels and the legend first,
        the y ticks on the height left, the x ticks on the width left."""
        first = self.axes[0]
        top = _EDGE + TITLE_SIZE * _LINE + _TITLE_PAD
        xlabel = max(_lines_height(ax.x.label, _LABEL) for ax in self.axes)
        below = xlabel + (_LABEL_PAD if xlabel else 0.0) + first.x.size + 2 * _TICK
        bottom = self.height - _EDGE - _legend_height(legend_rows) - _GAP - below
        y0, y1 = _y_range(first)
        yt = _Ticks(first.y, min(y0, y1), max(y0, y1), max(1, min(9, int((bottom - top) / 20))))
        ylabel = _lines_height(first.y.label, _LABEL)
        left = _EDGE + ylabel + (_LABEL_PAD if ylabel else 0.0) + yt.width + 2 * _TICK
        ranges = [_x_range(ax) for ax in self.axes]
        gap = 0.0 if len(self.axes) == 1 else 6 * _EDGE
        panel = (WIDTH - left - _EDGE - gap * (len(self.axes) - 1)) / len(self.axes)
        xts = [_x_ticks(ax.x, *r, panel) for ax, r in zip(self.axes, ranges, strict=True)]
        lo, hi = ranges[-1]
        last = xts[-1]
        reach = 0.0
        if len(last.values):
            reach = last.width / 2 - (hi - last.values[-1]) * panel / (hi - lo)
        panel -= max(reach, 0.0) / len(self.axes)
        frames = []
        for i, (x0, x1) in enumerate(ranges):
            a = left + i * (panel + gap)
            frames.append(Frame(x0, x1, y0, y1, a, a + panel, top, bottom))
        yts = [yt] + [yt.shared(ax.y) for ax in self.axes[1:]]
        return frames, list(zip(xts, yts, strict=True))


def _axes_svg(ax: Axes, f: Frame, xt: _Ticks, yt: _Ticks, clip: str, first: bool) -> str:
    """One axes: grid, items (clipped to the axes), spines, ticks and their labels, labels."""
    out = [
        '<g class="axes">',
        f'<clipPath id="{clip}">',
        element("rect", x=f.left, y=f.top, width=f.right - f.left, height=f.bottom - f.top),
        "</clipPath>",
    ]
    xs, ys = f.x(xt.values), f.y(yt.values)
    grid = [element("line", x1=x, x2=x, y1=f.top, y2=f.bottom) for x in xs] if ax.x.grid else []
    grid += [element("line", x1=f.left, x2=f.right, y1=y, y2=y) for y in ys] if ax.y.grid else []
    out.append(f"<g{attrs(stroke=_GRID, stroke_width=0.6)}>{''.join(grid)}</g>")
    body = "".join(group(i.label, i.draw(f)) for i in ax.items)
    out.append(f'<g clip-path="url(#{clip})">{body}</g>')
    ticks = [element("line", x1=x, x2=x, y1=f.bottom, y2=f.bottom + _TICK) for x in xs]
    ticks += [element("line", x1=f.left - _TICK, x2=f.left, y1=y, y2=y) for y in ys]
    spines = [
        element("line", x1=f.left, x2=f.right, y1=f.bottom, y2=f.bottom),
        element("line", x1=f.left, x2=f.left, y1=f.top, y2=f.bottom),
    ]
    out.append(f"<g{attrs(stroke=_INK, stroke_width=0.8)}>{''.join(spines + ticks)}</g>")
    size = ax.x.size
    out += [
        element(
            "text",
            t,
            x=x,
            y=f.bottom + 2 * _TICK,
            dy="0.8em",
            text_anchor="middle",
            font_size=size,
            class_="tick-x",
            data_value=f"{v:.12g}",
        )
        for x, t, v in zip(xs, xt.labels, xt.values, strict=True)
        if t
    ]
    out += [
        element(
            "text",
            t,
            x=f.left - 2 * _TICK,
            y=y,
            dy="0.35em",
            text_anchor="end",
            font_size=ax.y.size,
            class_="tick-y",
            data_value=f"{v:.12g}",
        )
        for y, t, v in zip(ys, yt.labels, yt.values, strict=True)
        if t
    ]
    below = f.bottom + 2 * _TICK + ax.x.size * _LINE + _LABEL_PAD + 0.8 * _LABEL
    out.append(_lines((f.left + f.right) / 2, below, ax.x.label, _LABEL))
    if first and ax.y.label:
        x = f.left - 2 * _TICK - yt.width - _LABEL_PAD - 0.2 * _LABEL
        y = (f.top + f.bottom) / 2
        turn = f"translate({num(x)} {num(y)}) rotate(-90)"
        out.append(_lines(0.0, 0.0, ax.y.label, _LABEL, turn))
    return "".join(out) + "</g>"


def _lines(x: float, y: float, text: str, size: float, transform: str | None = None) -> str:
    """``text`` centred on ``x``, its first baseline at ``y``, one line per ``\\n``."""
    if not text:
        return ""
    spans = "".join(
        f"<tspan{attrs(x=x, dy=0.0 if i == 0 else _LINE * size)}>{escape(line)}</tspan>"
        for i, line in enumerate(text.split("\n"))
    )
    a = attrs(x=x, y=y, font_size=size, text_anchor="middle", fill=_INK, transform=transform)
    return f"<text{a}>{spans}</text>"


def _entry_width(label: str) -> float:
    return _SWATCH + 0.4 * _LEGEND + text_width(label, _LEGEND) + 2 * _LEGEND


def _legend_grid(
    entries: list[tuple[str, Key]], room: float
) -> tuple[list[list[int]], list[float]]:
    """The legend's rows (entry indices, row by row) and column widths [pt]: three columns,
    or fewer when three do not fit in ``room`` [pt]."""
    for ncols in (3, 2, 1):
        rows = [list(range(i, min(i + ncols, len(entries)))) for i in range(0, len(entries), ncols)]
        widths = [
            max((_entry_width(entries[r[c]][0]) for r in rows if c < len(r)), default=0.0)
            for c in range(ncols)
        ]
        if sum(widths) <= room or ncols == 1:
            return rows, widths
    raise AssertionError("unreachable")


def _legend_height(rows: int) -> float:
    return rows * _LEGEND * _LINE + max(rows - 1, 0) * 0.5 * _LEGEND + 0.8 * _LEGEND


def _legend_svg(
    entries: list[tuple[str, Key]], rows: list[list[int]], widths: list[float], height: float
) -> str:
    """The legend, centred below the axes, its last row ``_EDGE`` above the bottom."""
    out = []
    x0 = (WIDTH - sum(widths)) / 2
    step = _LEGEND * _LINE + 0.5 * _LEGEND
    y = height - _EDGE - 0.4 * _LEGEND - (len(rows) - 1) * step - 0.5 * _LEGEND * _LINE
    for row in rows:
        x = x0
        for col, i in enumerate(row):
            label, key = entries[i]
            out.append(
                _swatch(key, x, y)
                + element(
                    "text",
                    label,
                    x=x + _SWATCH + 0.4 * _LEGEND,
                    y=y + 0.35 * _LEGEND,
                    font_size=_LEGEND,
                    fill=_INK,
                )
            )
            x += widths[col]
        y += step
    return f'<g class="legend">{"".join(out)}</g>'


def _swatch(key: Key, x: float, y: float) -> str:
    """A legend key at (``x``, ``y``): its left end, its middle height."""
    if key.width:
        line = rule((x, x + _SWATCH, y, y), key.colour, key.width, key.style)
        return line + (
            marker(key.marker, x + _SWATCH / 2, y, key.size, key.colour) if key.marker else ""
        )
    if key.marker:
        return marker(key.marker, x + _SWATCH / 2, y, min(key.size, 1.4 * _LEGEND), key.colour)
    return element(
        "rect",
        x=x,
        y=y - 0.35 * _LEGEND,
        width=_SWATCH,
        height=0.7 * _LEGEND,
        fill=key.colour,
        fill_opacity=key.opacity if key.opacity < 1 else None,
    )
