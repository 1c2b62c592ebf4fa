"""Reads a report chart (an SVG document) back as numbers, for the tests of what it shows.

Each axes is a group ``<g class="axes">``; its tick labels carry their values
(``data-value``) at their positions, so a coordinate [pt] maps back to data units through the
first and the last tick. A labelled series is a group whose ``<title>`` is its label.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np

SVG = "{http://www.w3.org/2000/svg}"


def parse(svg: str | bytes) -> ET.Element:
    """The document's root, checked to be an SVG with a title and a description."""
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    assert root.find(f"{SVG}title").text and root.find(f"{SVG}desc").text
    return root


def _points(el: ET.Element) -> np.ndarray:
    """The (x, y) [pt] of a polyline's or polygon's points."""
    pairs = [p.split(",") for p in el.get("points").split()]
    return np.array(pairs, dtype=float).reshape(-1, 2)


class Axes:
    """One axes of a chart: its items by label, and its coordinates mapped back to data."""

    def __init__(self, group: ET.Element) -> None:
        self.group = group
        self.xticks = self._ticks("tick-x", "x")
        self.yticks = self._ticks("tick-y", "y")
        clip = group.find(f"{SVG}clipPath/{SVG}rect")
        x, y = float(clip.get("x")), float(clip.get("y"))
        self.box = (x, y, x + float(clip.get("width")), y + float(clip.get("height")))

    def _ticks(self, cls: str, attr: str) -> list[tuple[float, float, str]]:
        """(position [pt], value, label) of each tick label of class ``cls``."""
        return [
            (float(t.get(attr)), float(t.get("data-value")), t.text)
            for t in self.group.iter(f"{SVG}text")
            if t.get("class") == cls
        ]

    @staticmethod
    def _map(ticks: list[tuple[float, float, str]], at: np.ndarray) -> np.ndarray:
        (p0, v0, _), (p1, v1, _) = ticks[0], ticks[-1]
        return v0 + (np.asarray(at, float) - p0) * (v1 - v0) / (p1 - p0)

    def data(self, pts: np.ndarray) -> np.ndarray:
        """Points [pt] as (x, y) in data units."""
        x, y = self._map(self.xticks, pts[:, 0]), self._map(self.yticks, pts[:, 1])
        return np.column_stack([x, y])

    def items(self, label: str) -> list[ET.Element]:
        """The elements of the series labelled ``label`` (its group's children)."""
        groups = [g for g in self.group.iter(f"{SVG}g") if g.findtext(f"{SVG}title") == label]
        assert len(groups) == 1, (label, self.labels())
        return [el for el in groups[0] if el.tag != f"{SVG}title"]

    def labels(self) -> list[str]:
        """The labels of the series drawn, in order."""
        groups = self.group.iter(f"{SVG}g")
        return [g.findtext(f"{SVG}title") for g in groups if g.find(f"{SVG}title") is not None]

    def line(self, label: str) -> np.ndarray:
        """The data (x, y) of the one polyline of series ``label``."""
        (line,) = [el for el in self.items(label) if el.tag == f"{SVG}polyline"]
        return self.data(_points(line))

    def polygon(self, label: str) -> np.ndarray:
        """The data (x, y) of the one polygon of series ``label``."""
        (area,) = [el for el in self.items(label) if el.tag == f"{SVG}polygon"]
        return self.data(_points(area))

    def vline_x(self, label: str) -> float:
        """The data x of the vertical line of series ``label``."""
        (line,) = self.items(label)
        assert line.get("x1") == line.get("x2")
        return float(self._map(self.xticks, [float(line.get("x1"))])[0])

    def colour(self, label: str) -> str:
        """The stroke or fill of the first element of series ``label``."""
        el = self.items(label)[0]
        return el.get("stroke") or el.get("fill")


def axes(root: ET.Element) -> list[Axes]:
    """The chart's axes, left to right."""
    return [Axes(g) for g in root.iter(f"{SVG}g") if g.get("class") == "axes"]


def legend(root: ET.Element) -> list[str]:
    """The legend's labels in order."""
    (group,) = [g for g in root.iter(f"{SVG}g") if g.get("class") == "legend"]
    return [t.text for t in group.iter(f"{SVG}text")]
