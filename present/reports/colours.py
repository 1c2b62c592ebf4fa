"""The colours the report's charts share, the SVG charts, the XLSX workbook's and the web
page's alike (``#rrggbb``): each registered side (buy, rent, a hosted API and any further side,
:data:`costmodel.sides.SIDES`), a plan's layers of work and the marks drawn over them."""

from __future__ import annotations

from itertools import cycle

from costmodel.sides import SIDES

__all__ = [
    "API",
    "BUY",
    "FURTHER_COLOURS",
    "HIGH",
    "LAYERS",
    "LOW",
    "MARK",
    "OTHER",
    "RENT",
    "RESERVED",
    "ramp",
    "side_colour",
    "side_colours",
]

BUY, RENT, MARK = "#1f5fa8", "#d9620b", "#3a3a3a"
API = "#7b3fa0"  # a hosted API, the third side of an inference result
RESERVED = "#4f9a3a"  # a plan's reserved instances, between owned (BUY) and burst (RENT)
OTHER = "#a3acbb"  # a plan's candidates that are not on the frontier
LOW, HIGH = "#7fa7d6", "#a8324a"  # the P10 and the P90 end of a tornado bar
#: A plan's work on owned servers, reserved and burst instances (``plan_tables.WORK_LAYERS``).
LAYERS = (BUY, RESERVED, RENT)


#: The colours of the sides registered beyond buy, rent and a hosted API, given in the order
#: they are registered: teal, raspberry and ochre, apart from the blue, orange and purple above
#: and from the page's carbon green and grey.
FURTHER_COLOURS = ("#0f8b8d", "#b8336a", "#8a6a00")

#: The colour of each side every question may compare.
_SIDES = {"buy": BUY, "rent": RENT, "api": API}


def side_colours() -> dict[str, str]:
    """The colour of each registered side, in the registry's order: buy's, rent's and the
    API's above, every other side the next of :data:`FURTHER_COLOURS` (round again after the
    last)."""
    further = cycle(FURTHER_COLOURS)
    return {name: _SIDES.get(name) or next(further) for name in SIDES}


def side_colour(side: str) -> str:
    """The colour of side ``side`` (:func:`side_colours`); grey for a side not registered."""
    return side_colours().get(side, OTHER)


#: matplotlib's viridis at 0, 0.1, ..., 1 (``#rrggbb``), the ramp of a plan's reservation counts.
_VIRIDIS = (
    "#440154", "#482475", "#414487", "#355f8d", "#2a788e", "#21918c",
    "#22a884", "#44bf70", "#7ad151", "#bddf26", "#fde725",
)  # fmt: skip


def ramp(n: int, end: float = 0.85) -> list[str]:
    """``n`` distinct colours evenly along viridis from its start to ``end`` [-] (its bright
    yellow end is hard to read on white), each interpolated between the nearest of
    :data:`_VIRIDIS` in RGB."""
    rgb = [[int(c[i : i + 2], 16) for i in (1, 3, 5)] for c in _VIRIDIS]
    out = []
    for t in [end * i / (n - 1) for i in range(n)] if n > 1 else [0.0]:
        k = min(int(t * 10), 9)
        w = t * 10 - k
        mixed = (round(a + (b - a) * w) for a, b in zip(rgb[k], rgb[k + 1], strict=True))
        out.append("#" + "".join(f"{v:02x}" for v in mixed))
    return out
