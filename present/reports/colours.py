"""The colours the report's charts share, the SVG charts and the XLSX workbook's alike
(``#rrggbb``): a side (buy, rent, a hosted API), a plan's layers of work and the marks drawn
over them."""

from __future__ import annotations

__all__ = [
    "API",
    "BUY",
    "HIGH",
    "LAYERS",
    "LOW",
    "MARK",
    "OTHER",
    "RENT",
    "RESERVED",
    "ramp",
    "side_colour",
]

BUY, RENT, MARK = "#1f5fa8", "#d9620b", "#3a3a3a"
API = "#7b3fa0"  # a hosted API, the third side of an inference result
RESERVED = "#4f9a3a"  # a plan's reserved instances, between owned (BUY) and burst (RENT)
OTHER = "#a3acbb"  # a plan's candidates that are not on the frontier
LOW, HIGH = "#7fa7d6", "#a8324a"  # the P10 and the P90 end of a tornado bar
#: A plan's work on owned servers, reserved and burst instances (``plan_tables.WORK_LAYERS``).
LAYERS = (BUY, RESERVED, RENT)


#: The colour of each side a result compares.
_SIDES = {"buy": BUY, "rent": RENT, "api": API}


def side_colour(side: str) -> str:
    """The colour of side ``side`` (``buy``, ``rent``, ``api``); a further side's is grey."""
    return _SIDES.get(side, OTHER)


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
