"""A chunk's monthly work in closed form: what a capacity serves and leaves, summed over months.

Within a chunk of draws the work of month m = 1..H is W_m = W_1 (1 + g)^((m-1)/12) per draw
(:mod:`costmodel.fleet`), monotone in m. Sorted ascending (the months in order for g >= 0,
reversed for g < 0) the j-th is W_(j) = W_lo R^j, j = 0..H-1, with W_lo = min(W_1, W_H) and
ln R = |ln(1 + g)| / 12, so a capacity c [units of work/month] serves in full the first

    i(c) = clip(floor(ln(c / W_lo) / ln R) + 1, 0, H)

sorted months (all H or none when R = 1); a month whose work equals c to rounding may count
either way, and leaves nothing either way. With weights w_m (a month's price or emissions per
unit of work, discounted) sorted the same and the suffix sums S_w(j) = sum_{k >= j} w_(k) and
S_wW(j) = sum_{k >= j} w_(k) W_(k), made once a chunk, the work above c of a flat load,
weighted and summed over the months, is

    sum_m w_m max(W_m - c, 0) = S_wW(i(c)) - c S_w(i(c)):

two look-ups per draw and capacity instead of a pass over the months. Under the daily load of
:mod:`costmodel.load` (amplitude a) month m leaves a W_m h(z), z = (c - W_m) / (a W_m) and
h(z) = (sqrt(1 - z^2) - z arccos z) / pi, where c/(1 + a) < W_m < c/(1 - a) (the band),
nothing below and W_m - c above; the band is the run of sorted months
[i(c/(1 + a)), i(c/(1 - a))), summed month by month (h is not linear in c), the months above
it by the suffix sums. A span of months (those before or after added servers arrive) is a run
of sorted months too, summed as the difference of two suffix sums.

The work a capacity serves is the work less what it leaves. Shapes: weights ``(R, H)`` or
``(R, H, n)`` (R rows, month-major, per draw or not); capacities a float, ``(n,)``, or
``(K, n)`` / ``(K, 1)`` for K capacities at once; sums ``(R, n)`` or ``(K, R, n)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .cashflows import Value

__all__ = ["Above", "Below", "Months"]

#: 1 / ln R where the work does not change from month to month (R = 1): every month is on the
#: same side of a capacity, and this finite stand-in for infinity keeps the counts exact.
_FLAT_SCALE = 1e300
#: ln(1 - a) at a = 1, where c / (1 - a) is infinite: below ln of the least float, finite.
_LOG_NEVER = -800.0


def _sorted(x: np.ndarray, rising: np.ndarray) -> np.ndarray:
    """Monthly rows ``(R, H)`` or ``(R, H, n)`` in each draw's ascending order of work:
    ``(R, H, n)``; as they are (``(R, H, 1)`` for rows the same in every draw) when every
    draw's work grows, the months then already in order."""
    if x.ndim == 2:
        x = x[:, :, None]
    if rising.all():
        return x
    return np.where(rising, x, x[:, ::-1])


def _suffix(x: np.ndarray) -> np.ndarray:
    """sum_{k >= j} x_k over the month axis (the second) for j = 0..H: ``(R, H + 1, n)``,
    summed month by month from the last (faster than a cumulative sum along that axis)."""
    out = np.zeros((x.shape[0], x.shape[1] + 1, x.shape[2]))
    for j in range(x.shape[1] - 1, -1, -1):
        np.add(out[:, j + 1], x[:, j], out=out[:, j])
    return out


@dataclass(frozen=True, eq=False)
class _Table:
    """One set of weights sorted per draw, ``weights`` (R, H, m), and their suffix sums S_w
    (``plain``, (R, H + 1, m); ``None`` for ones, S_1(j) = H - j) and S_wW (``work``,
    (R, H + 1, n)), each flattened to (R, -1) for look-ups; m is n, or 1 for weights the
    same in every draw (``wide`` False)."""

    weights: np.ndarray | None
    plain: np.ndarray | None
    work: np.ndarray
    wide: bool


@dataclass(frozen=True, eq=False)
class Months:
    """A chunk's work W_m ``work`` (H, n) [units of work/month], sorted per draw
    (``ordered``), with what finds a capacity's place among the sorted months.

    ``rising`` (n,) whether W_m grows (the sorted months in order); ``scale`` 1 / ln R and
    ``offset`` ln(W_lo) / ln R - 1 per draw, so that i(c) = floor(ln c scale - offset);
    ``amplitude`` a per draw (``None`` for a flat load) with ``log_up`` ln(1 + a) and
    ``log_down`` ln(1 - a)."""

    work: np.ndarray
    ordered: np.ndarray
    rising: np.ndarray
    scale: np.ndarray
    offset: np.ndarray
    amplitude: np.ndarray | None
    log_up: np.ndarray | None
    log_down: np.ndarray | None
    _tables: dict = field(default_factory=dict)

    @classmethod
    def of(cls, work: np.ndarray, growth: Value, amplitude: Value | None) -> Months:
        """The months of ``work`` (H, n), growing by ``growth`` g a year [1/year], under a
        daily load of ``amplitude`` a = k - 1 [-] (``None``: flat)."""
        n = work.shape[1]
        g = np.broadcast_to(np.asarray(growth, dtype=float), (n,))
        rising = g >= 0.0
        ordered = work if rising.all() else np.where(rising, work, work[::-1])
        log_r = np.abs(np.log1p(g)) / 12.0
        scale = 1.0 / np.maximum(log_r, 1.0 / _FLAT_SCALE)
        with np.errstate(divide="ignore"):
            offset = np.log(ordered[0]) * scale - 1.0
        if amplitude is None:
            return cls(work, ordered, rising, scale, offset, None, None, None)
        a = np.broadcast_to(np.asarray(amplitude, dtype=float), (n,))
        with np.errstate(divide="ignore"):
            down = np.maximum(np.log1p(-a), _LOG_NEVER)
        return cls(work, ordered, rising, scale, offset, a, np.log1p(a), down)

    @property
    def count(self) -> int:
        """H, the months [-]."""
        return self.work.shape[0]

    def span(self, start: np.ndarray, stop: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The months [``start``, ``stop``) (0-based, per draw) as a run of sorted months."""
        h = self.count
        return np.where(self.rising, start, h - stop), np.where(self.rising, stop, h - start)

    def _table(self, weights: np.ndarray | None, one: bool = False) -> _Table:
        """The sorted weights (rows; one row for ``one``; ones for ``None``) and their suffix
        sums, made once a chunk."""
        key = None if weights is None else (id(weights), one)
        found = self._tables.get(key)
        if found is not None:
            return found[1]
        if weights is None:
            work = _suffix(self.ordered[None])
            table = _Table(None, None, work.reshape(1, -1), True)
        else:
            w = _sorted(weights[None] if one else weights, self.rising)
            rows = w.shape[0]
            table = _Table(
                w.reshape(rows, -1),
                _suffix(w).reshape(rows, -1),
                _suffix(w * self.ordered).reshape(rows, -1),
                w.shape[2] > 1,
            )
        self._tables[key] = (weights, table)  # the weights kept: their id stays theirs
        return table

    def _place(self, log_c: np.ndarray) -> np.ndarray:
        """i(c) from ln c (any shape ending in n) [-], a whole float in [0, H]."""
        t = log_c * self.scale
        t -= self.offset
        np.floor(t, out=t)
        np.fmin(t, self.count, out=t)  # NaN (0 / 0: no work, no capacity) counts as served
        return np.fmax(t, 0.0, out=t)

    def _flat(self, place: np.ndarray, wide: bool = True) -> np.ndarray:
        """Where sorted month ``place`` (floats, shape ending in n) of each draw is in a
        table of n draws (``wide``) or of one for all."""
        if not wide:
            return place.astype(np.intp)
        n = self.work.shape[1]
        return (place * n + np.arange(n)).astype(np.intp)

    def _sums(self, table: _Table, place: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """S_wW and S_w at sorted month ``place`` of each draw, each ``(R, *place.shape)``."""
        work = table.work.take(self._flat(place), axis=1)
        if table.plain is None:
            return work, (self.count - place)[None]
        return work, table.plain.take(self._flat(place, table.wide), axis=1)

    def excess(self, weights, capacity: Value, span=None, one: bool = False) -> np.ndarray:
        """sum_m w_m (work above ``capacity`` in month m) for each row of ``weights`` (ones
        for ``None``; ``one`` row (H,) or (H, n)), over the months of ``span`` (sorted runs,
        :meth:`span`; all months without one) [weight x units of work]: ``(R, n)`` or
        ``(K, R, n)``, without the row axis for ``one``."""
        return self._sum(weights, capacity, span, one, served=False)

    def served(self, weights, capacity: Value, span=None, one: bool = False) -> np.ndarray:
        """sum_m w_m (work ``capacity`` serves in month m), as :meth:`excess`: the months
        below the band in full, those above it at c, those in it less what they leave."""
        return self._sum(weights, capacity, span, one, served=True)

    def _sum(self, weights, capacity: Value, span, one: bool, served: bool) -> np.ndarray:
        c = np.asarray(capacity, dtype=float)
        table = self._table(weights, one)
        with np.errstate(divide="ignore", invalid="ignore"):
            log_c = np.log(c)
            if self.amplitude is None:
                lo = hi = self._place(log_c)
            else:
                lo = self._place(log_c - self.log_up)
                hi = self._place(log_c - self.log_down)
        if span is not None:
            lo, hi = np.clip(lo, *span), np.clip(hi, *span)
        work, plain = self._sums(table, hi)  # S_wW(hi), S_w(hi)
        if span is not None:  # less the months after the span
            end_work, end_plain = self._sums(table, np.broadcast_to(span[1], hi.shape))
            plain = plain - end_plain
        if served:  # sum_{start <= j < hi} w W + c sum_{hi <= j < end} w
            n = self.work.shape[1]
            start = table.work[:, :n] if span is None else self._sums(table, span[0])[0]
            out = start - work
            out += c * plain
        else:  # sum_{hi <= j < end} w (W - c)
            out = work - end_work if span is not None else work
            out -= c * plain
        if self.amplitude is not None:
            self._band(table, np.broadcast_to(c, lo.shape), (lo, hi), out, -1.0 if served else 1.0)
        return out[0] if one else np.moveaxis(out, 0, -2)

    def _band(self, table: _Table, c: np.ndarray, band: tuple, out: np.ndarray, sign: float):
        """Add ``sign`` times each band month's a W h(z) times its weights to ``out``
        (R, *c.shape); ``band`` the sorted months [lo, hi) of each draw and capacity."""
        n = self.work.shape[1]
        flat_out = out.reshape(out.shape[0], -1)
        draw = np.broadcast_to(np.arange(n), c.shape).ravel()
        lo, hi, c = band[0].ravel(), band[1].ravel(), c.ravel()
        inside = np.flatnonzero(hi > lo)
        for step in range(int(np.max(hi - lo, initial=0.0))):
            inside = inside[lo[inside] + step < hi[inside]]
            d = draw[inside]
            month = (lo[inside] + step).astype(np.intp)
            w = self.ordered.ravel()[month * n + d]
            a = self.amplitude[d]
            z = np.clip((c[inside] - w) / (a * w), -1.0, 1.0)
            left = (sign / math.pi) * a * w * (np.sqrt(1.0 - z * z) - z * np.arccos(z))
            if table.weights is not None:
                left = table.weights[:, month * n + d if table.wide else month] * left
            flat_out[:, inside] += left

    def each(self, capacity: Value) -> np.ndarray:
        """The work above ``capacity`` (a float, (n,) or (H, n)) in each month [units of
        work/month], (H, n): the sums' terms one by one, for a single plan's monthly split."""
        over = self.work - capacity
        out = np.maximum(over, 0.0)
        if self.amplitude is None:
            return out
        swing = self.amplitude * self.work
        band = np.flatnonzero(np.abs(over) < swing)  # the arccos only where it is needed
        if band.size:
            swing = np.take(swing, band)
            z = np.take(over, band) / -swing  # (c - W_m) / (a W_m)
            np.put(out, band, swing * (np.sqrt(1.0 - z * z) - z * np.arccos(z)) / math.pi)
        return out

    def split(self, owned: Value, reserved: Value) -> np.ndarray:
        """The work served by an ``owned`` capacity, then by a ``reserved`` one, and the rest,
        each month summed over the draws [units of work/month], (3, H)."""
        above = self.each(owned)
        rest = self.each(owned + reserved)
        out = np.empty((3, self.count))
        out[0] = (self.work - above).sum(axis=1)
        out[1] = (above - rest).sum(axis=1)
        out[2] = rest.sum(axis=1)
        return out


@dataclass(frozen=True, eq=False)
class Above:
    """The work above ``capacity`` in each month of ``months`` (over the months of ``span``,
    all without one), summed against weights in closed form: what
    :func:`~costmodel.fleet_carbon.weighted_rows` and
    :func:`~costmodel.fleet_carbon.weighted_sum` call for a month-major array."""

    months: Months
    capacity: Value
    span: tuple[np.ndarray, np.ndarray] | None = None

    def rows(self, weights: np.ndarray) -> np.ndarray:
        """sum_m weights_{r,m} x_m per row r of ``(R, H)`` or ``(R, H, n)`` weights:
        ``(R, n)`` or ``(K, R, n)``."""
        return self.months.excess(weights, self.capacity, self.span)

    def sum(self, weights: np.ndarray | None = None) -> np.ndarray:
        """sum_m weights_m x_m per draw for ``(H,)`` or ``(H, n)`` weights (the work itself
        for ``None``): ``(n,)`` or ``(K, n)``."""
        one = weights is not None
        out = self.months.excess(weights, self.capacity, self.span, one=one)
        return out if one else out[..., 0, :]


@dataclass(frozen=True, eq=False)
class Below(Above):
    """The work ``capacity`` serves in each month, summed as :class:`Above` sums."""

    def rows(self, weights: np.ndarray) -> np.ndarray:
        return self.months.served(weights, self.capacity, self.span)

    def sum(self, weights: np.ndarray | None = None) -> np.ndarray:
        one = weights is not None
        out = self.months.served(weights, self.capacity, self.span, one=one)
        return out if one else out[..., 0, :]
