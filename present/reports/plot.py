"""What a report chart draws in its axes, in data units: lines, bands, spans, markers, bars and
notes, each written as SVG once the chart knows where its axes go (:mod:`.chart`).

An :class:`Axes` holds two :class:`Axis` (how each is labelled, formatted and bounded) and the
items drawn in it, in order. A value that is not finite (NaN: no value) is a gap: a line or
a band breaks there, a marker or a bar is left out. A labelled item is an SVG group whose
``<title>`` is its label (a tooltip, and its entry in the legend); a legend key says how it
is drawn.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .svg import element, escape, num, points

__all__ = ["Axes", "Axis", "Frame", "Key", "group", "marker", "plain", "rule", "steps"]

#: Dash patterns [line widths] of matplotlib's line styles, which scale them by the width.
_DASHES = {"--": (3.7, 1.6), ":": (1.0, 1.65), "-.": (6.4, 1.6, 1.0, 1.6)}


def plain(v: float) -> str:
    """A tick label as ``:g`` writes it (``2``, ``2.5``)."""
    return f"{v:g}"


def dash(style: str, width: float) -> str | None:
    """The ``stroke-dasharray`` [pt] of a matplotlib line style at ``width`` [pt]; None for a
    solid line."""
    pattern = _DASHES.get(style)
    return None if pattern is None else " ".join(num(p * width) for p in pattern)


def rule(
    ends: tuple[float, float, float, float],
    colour: str,
    width: float,
    style: str = "-",
    opacity: float = 1.0,
) -> str:
    """A straight line from (x1, y1) to (x2, y2), ``ends`` = (x1, x2, y1, y2) [pt], of
    ``width`` [pt] in a matplotlib line ``style``."""
    x1, x2, y1, y2 = ends
    return element(
        "line",
        x1=x1,
        x2=x2,
        y1=y1,
        y2=y2,
        stroke=colour,
        stroke_width=width,
        stroke_dasharray=dash(style, width),
        stroke_opacity=opacity if opacity < 1 else None,
    )


@dataclass(frozen=True)
class Axis:
    """One axis: its ``label`` (lines split at ``\\n``), tick label format ``fmt``, fixed ends
    ``low`` and ``high`` [data units] (None: the data's, with a margin), ``integer`` ticks
    only, ``names`` of categories 0, 1, ... (a tick at each, first on top), tick label
    ``size`` [pt], tick labels ``shown`` and grid lines at the ticks (``grid``)."""

    label: str = ""
    fmt: Callable[[float], str] = plain
    low: float | None = None
    high: float | None = None
    integer: bool = False
    names: Sequence[str] = ()
    size: float = 10.0
    shown: bool = True
    grid: bool = True


@dataclass(frozen=True)
class Key:
    """How a legend entry is drawn: a line of ``width`` [pt] and ``style`` with a ``marker``
    of ``size`` [pt] on it; a marker alone (``width`` 0); or a patch of ``opacity`` (neither)."""

    colour: str
    width: float = 0.0
    style: str = "-"
    marker: str | None = None
    size: float = 0.0
    opacity: float = 1.0


@dataclass(frozen=True)
class Frame:
    """Where an axes stands [pt, from the chart's top left]: data ``x0``..``x1`` from
    ``left`` to ``right``, data ``y0``..``y1`` from ``bottom`` up to ``top``."""

    x0: float
    x1: float
    y0: float
    y1: float
    left: float
    right: float
    top: float
    bottom: float

    def x(self, v: np.ndarray | float) -> np.ndarray:
        return self.left + (np.asarray(v, float) - self.x0) * (self.right - self.left) / (
            self.x1 - self.x0
        )

    def y(self, v: np.ndarray | float) -> np.ndarray:
        return self.bottom - (np.asarray(v, float) - self.y0) * (self.bottom - self.top) / (
            self.y1 - self.y0
        )


@dataclass(frozen=True)
class _Item:
    xs: np.ndarray  # the data it spans [data units], for the axes' ranges
    ys: np.ndarray
    draw: Callable[[Frame], str]
    label: str | None
    key: Key | None


def _runs(*arrays: np.ndarray) -> list[slice]:
    """The runs of consecutive indices where every array is finite."""
    ok = np.logical_and.reduce([np.isfinite(a) for a in arrays])
    edges = np.flatnonzero(np.diff(np.concatenate(([0], ok.astype(np.int8), [0]))))
    return [slice(a, b) for a, b in zip(edges[::2], edges[1::2], strict=True)]


def marker(shape: str, x: float, y: float, size: float, colour: str) -> str:
    """A marker ``o`` (circle), ``s`` (square) or ``*`` (star) of ``size`` [pt] across."""
    r = size / 2
    if shape == "s":
        return element("rect", x=x - r, y=y - r, width=size, height=size, fill=colour)
    if shape == "*":
        angle = np.pi / 2 + np.arange(10) * np.pi / 5
        radius = np.where(np.arange(10) % 2, 0.38 * r, r)
        star = points(x + radius * np.cos(angle), y - radius * np.sin(angle))
        return element("polygon", points=star, fill=colour)
    return element("circle", cx=x, cy=y, r=r, fill=colour)


def _markers(shape: str, px: np.ndarray, py: np.ndarray, size: float, colour: str) -> str:
    """A :func:`marker` at each finite point (``px``, ``py``) [pt]."""
    ok = np.isfinite(px) & np.isfinite(py)
    return "".join(marker(shape, a, b, size, colour) for a, b in zip(px[ok], py[ok], strict=True))


def steps(edges: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A step drawn as a line: value i held from ``edges[i]`` to ``edges[i + 1]``."""
    return np.repeat(edges, 2)[1:-1], np.repeat(values, 2)


class Axes:
    """One axes: its ``x`` and ``y`` axes and what is drawn in it, in the order drawn."""

    def __init__(self, x: Axis, y: Axis) -> None:
        self.x, self.y = x, y
        self.items: list[_Item] = []

    def _add(self, xs, ys, draw, label: str | None, key: Key | None) -> None:
        xs, ys = (np.atleast_1d(np.asarray(v, float)) for v in (xs, ys))
        self.items.append(_Item(xs, ys, draw, label, key))

    def line(
        self,
        x,
        y,
        colour: str,
        *,
        width: float = 2.0,
        style: str = "-",
        marker_: str | None = None,
        size: float = 3.5,
        label: str | None = None,
    ) -> None:
        """A line through (``x``, ``y``), broken at gaps, with a ``marker_`` at each point."""
        x, y = np.asarray(x, float), np.asarray(y, float)

        def draw(f: Frame) -> str:
            px, py = f.x(x), f.y(y)
            out = [
                element(
                    "polyline",
                    points=points(px[r], py[r]),
                    fill="none",
                    stroke=colour,
                    stroke_width=width,
                    stroke_dasharray=dash(style, width),
                    stroke_linejoin="round",
                )
                for r in _runs(px, py)
            ]
            return "".join(out) + (_markers(marker_, px, py, size, colour) if marker_ else "")

        self._add(x, y, draw, label, Key(colour, width, style, marker_, size))

    def band(
        self, x, lo, hi, colour: str, *, opacity: float = 0.18, label: str | None = None
    ) -> None:
        """The area between ``lo`` and ``hi`` over ``x``, broken at gaps."""
        x, lo, hi = (np.asarray(v, float) for v in (x, lo, hi))

        def draw(f: Frame) -> str:
            px, plo, phi = f.x(x), f.y(lo), f.y(hi)
            return "".join(
                element(
                    "polygon",
                    points=points(np.r_[px[r], px[r][::-1]], np.r_[phi[r], plo[r][::-1]]),
                    fill=colour,
                    fill_opacity=opacity,
                )
                for r in _runs(px, plo, phi)
            )

        self._add(np.r_[x, x], np.r_[lo, hi], draw, label, Key(colour, opacity=opacity))

    def vline(
        self,
        x: float,
        colour: str,
        *,
        width: float = 1.4,
        style: str = "-",
        opacity: float = 1.0,
        label: str | None = None,
    ) -> None:
        """A vertical line at ``x`` across the axes (none at a gap)."""

        def draw(f: Frame) -> str:
            px = float(f.x(x))
            return rule((px, px, f.top, f.bottom), colour, width, style, opacity)

        if np.isfinite(x):
            self._add(x, np.nan, draw, label, Key(colour, width, style))

    def hline(
        self,
        y: float,
        colour: str,
        *,
        width: float = 1.0,
        style: str = "-",
        label: str | None = None,
    ) -> None:
        """A horizontal line at ``y`` across the axes."""

        def draw(f: Frame) -> str:
            py = float(f.y(y))
            return rule((f.left, f.right, py, py), colour, width, style)

        self._add(np.nan, y, draw, label, Key(colour, width, style))

    def vspan(
        self, x0: float, x1: float, colour: str, *, opacity: float, label: str | None = None
    ) -> None:
        """A shaded span from ``x0`` to ``x1`` across the axes."""

        def draw(f: Frame) -> str:
            a, b = sorted((float(f.x(x0)), float(f.x(x1))))
            return element(
                "rect",
                x=a,
                y=f.top,
                width=b - a,
                height=f.bottom - f.top,
                fill=colour,
                fill_opacity=opacity,
            )

        self._add([x0, x1], np.nan, draw, label, Key(colour, opacity=opacity))

    def scatter(
        self, x, y, colour: str, *, shape: str = "o", size: float = 4.0, label: str | None = None
    ) -> None:
        """A marker of ``shape`` and ``size`` [pt across] at each point."""
        x, y = np.atleast_1d(np.asarray(x, float)), np.atleast_1d(np.asarray(y, float))

        def draw(f: Frame) -> str:
            return _markers(shape, f.x(x), f.y(y), size, colour)

        self._add(x, y, draw, label, Key(colour, 0.0, "-", shape, size))

    def barh(
        self, rows, left, right, colour: str, *, height: float = 0.6, label: str | None = None
    ) -> None:
        """Horizontal bars, bar i at row ``rows[i]`` from ``left[i]`` to ``right[i]``."""
        rows, left, right = (np.asarray(v, float) for v in (rows, left, right))

        def draw(f: Frame) -> str:
            out = []
            for r, a, b in zip(rows, left, right, strict=True):
                if np.isfinite(a) and np.isfinite(b):
                    xa, xb = sorted((float(f.x(a)), float(f.x(b))))
                    ya, yb = sorted((float(f.y(r - height / 2)), float(f.y(r + height / 2))))
                    out.append(
                        element("rect", x=xa, y=ya, width=xb - xa, height=yb - ya, fill=colour)
                    )
            return "".join(out)

        self._add(
            np.r_[left, right],
            np.r_[rows - height / 2, rows + height / 2],
            draw,
            label,
            Key(colour),
        )

    def text(
        self,
        x: float,
        y: float,
        text: str,
        colour: str,
        *,
        size: float = 9.0,
        anchor: str = "start",
        dx: float = 0.0,
        dy: float = 0.0,
        fraction: bool = False,
    ) -> None:
        """``text`` with its baseline's ``anchor`` at (``x``, ``y``), in data units or, with
        ``fraction``, fractions of the axes from its bottom left; moved by ``dx`` right and
        ``dy`` up [pt]."""

        def draw(f: Frame) -> str:
            if fraction:
                px, py = f.left + x * (f.right - f.left), f.bottom - y * (f.bottom - f.top)
            else:
                px, py = float(f.x(x)), float(f.y(y))
            return element(
                "text", text, x=px + dx, y=py - dy, fill=colour, font_size=size, text_anchor=anchor
            )

        self._add(np.nan, np.nan, draw, None, None)


def group(item_label: str | None, body: str) -> str:
    """``body`` in a group titled ``item_label`` (its tooltip), or alone without one."""
    if not item_label or not body:
        return body
    return f"<g><title>{escape(item_label)}</title>{body}</g>"
