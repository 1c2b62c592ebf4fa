"""SVG text for the report charts: escaping, the width of a label, numbers and elements.

Lengths are in points [pt] of a chart's view box (a chart of 8 x 4.8 inches is 576 x 345.6);
the browser scales the whole drawing to the width it is shown at. Text is laid out without a
renderer, from the advance widths of DejaVu Sans (the first font the charts ask for; most
others are narrower, so a label measured here never overflows the room it was given).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

__all__ = ["FONT", "attrs", "element", "escape", "num", "points", "text_width"]

#: The charts' font family, DejaVu Sans first (matplotlib's, and most Linux desktops').
FONT = "DejaVu Sans, Verdana, Geneva, Helvetica, Arial, sans-serif"

#: Characters XML 1.0 forbids (a hand-edited result may hold them): dropped from text.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")

#: Advance widths [em] of DejaVu Sans, characters grouped by their width rounded up to 0.02.
_WIDTHS = {
    "ijl'": 0.28,
    "IJ": 0.30,
    ",. ’·": 0.32,
    "/:;\\|": 0.34,
    "f": 0.36,
    "-": 0.38,
    "t()[]": 0.40,
    "r!": 0.42,
    '"': 0.46,
    "*_`–°": 0.50,
    "“”": 0.52,
    "sz?": 0.54,
    "cL": 0.56,
    "kF": 0.58,
    "vxy": 0.60,
    "aeoPTYéèöä": 0.62,
    "0123456789bdghnpquES${}üµ": 0.64,
    "K": 0.66,
    "ABCRVXZ": 0.70,
    "U": 0.74,
    "HN": 0.76,
    "DG&": 0.78,
    "OQ": 0.80,
    "w": 0.82,
    "#+<=>^~−×±": 0.84,
    "M": 0.88,
    "%": 0.96,
    "m": 0.98,
}
_WIDTH = {ch: w for chars, w in _WIDTHS.items() for ch in chars}
_DEFAULT_WIDTH = 1.0  # [em] any other character: as wide as the widest above


def escape(text: object) -> str:
    """``text`` as XML character data or an attribute value: ``& < > " '`` as references,
    characters XML cannot hold dropped."""
    out = _NOT_XML.sub("", str(text))
    return (
        out.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&#39;")
    )


def text_width(text: str, size: float) -> float:
    """The width [pt] of the one-line ``text`` at font ``size`` [pt] (an estimate from the
    widths of :data:`_WIDTHS`)."""
    return size * sum(_WIDTH.get(ch, _DEFAULT_WIDTH) for ch in text)


def num(v: float) -> str:
    """A coordinate [pt] to two decimals, without trailing zeros."""
    s = f"{v:.2f}".rstrip("0").rstrip(".")
    return "0" if s == "-0" else s


def points(xs: Iterable[float], ys: Iterable[float]) -> str:
    """An SVG ``points`` list ``x,y x,y ...``."""
    return " ".join(f"{num(x)},{num(y)}" for x, y in zip(xs, ys, strict=True))


def attrs(**values: object) -> str:
    """Attributes ``name="value"`` (``_`` in a name becomes ``-``; ``None`` is left out)."""
    out = []
    for name, value in values.items():
        if value is None:
            continue
        if isinstance(value, float):
            value = num(value) if math.isfinite(value) else "0"
        out.append(f' {name.rstrip("_").replace("_", "-")}="{escape(value)}"')
    return "".join(out)


def element(tag: str, text: str | None = None, **values: object) -> str:
    """One element: ``<tag .../>``, or ``<tag ...>text</tag>`` with ``text`` escaped."""
    if text is None:
        return f"<{tag}{attrs(**values)}/>"
    return f"<{tag}{attrs(**values)}>{escape(text)}</{tag}>"
