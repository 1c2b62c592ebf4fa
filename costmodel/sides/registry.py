"""The protocol of a kind of side, and the registry of them (:data:`SIDES`)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..carbon import CarbonLine
from ..cashflows import BuyLine, Lines, RentLine, Terms, Value
from ..inputs import ModelInputs

__all__ = ["SIDES", "Side", "SideError", "by_month", "further_lines", "register", "side"]


class SideError(ValueError):
    """A side that is not registered, or registered twice, or whose record breaks its
    contract (:func:`by_month`)."""


@dataclass(frozen=True, kw_only=True)
class Side:
    """One kind of side, by ``name`` (its key in a scenario and a result: ``"buy"``).

    Words: ``label`` is how a table heads its columns ("Buy"), ``option`` how a list of
    options names it ("buy", "API") and ``doing`` how a sentence names choosing it ("buying",
    "the API").

    Numbers: ``inputs`` is the class of its frozen engine inputs and ``price`` the input that
    is its price (the one a comparison of options quotes). ``drawn(inputs, values, path)``
    gives its inputs for a set of draws (``values`` by ``"<path>.<field>"``, floats or
    ``(S,)`` arrays) in the engine's terms: a :class:`~costmodel.cashflows.BuyDraws` for the
    owned side, a :class:`~costmodel.cashflows.RentDraws` for a side paid as it is used;
    ``capacity(draws)`` the units of work one unit of the side does per hour [units of
    work/hour]; ``line(draws, own, inst, terms)`` its TCO [USD] as a line in utilisation
    doing the work of an owned build of capacity ``own`` on units of capacity ``inst``;
    ``emissions(draws, values, own, inst, life_years, horizon)`` its emissions [kg CO2e] as
    a line likewise (``None``: the side's emissions are not known by the engine's carbon
    inputs). ``owned`` marks the side every other is compared with.

    A further side (one a scenario holds beside ``buy``, ``rent`` and ``api``,
    :attr:`~costmodel.inputs.ModelInputs.further`) gives as well ``by_month(draws, own,
    terms)``: its cumulative cost by month m = 0..H [USD, present value, after tax] as a line
    in utilisation, ``(fixed, per_u)`` each of shape ``(H + 1,)`` or ``(H + 1, S)`` (for
    payback and the cumulative-cost chart); its TCO ``line`` must then have no kink. Another
    shape is a :class:`SideError` (:func:`by_month`).
    """

    name: str
    label: str
    option: str
    doing: str
    inputs: type
    price: str
    drawn: Callable[[Any, dict[str, Value], str], Any]
    capacity: Callable[[Any], Value]
    line: Callable[[Any, Value, Value, Terms], BuyLine | RentLine]
    emissions: Callable[..., CarbonLine] | None = None
    owned: bool = False
    by_month: Callable[[Any, Value, Terms], tuple[Any, Any]] | None = None


#: Every kind of side by name, in the order a question lists them (``buy`` first: the side
#: every other is compared with).
SIDES: dict[str, Side] = {}


#: A side's name: a scenario key and a column prefix, short enough that every XLSX sheet named
#: after it (``sensitivity_vs_<name>``, 15 + 16 characters) keeps within Excel's 31.
NAME = re.compile(r"[a-z][a-z0-9_]{0,15}")


def register(record: Side) -> Side:
    """Add ``record`` to :data:`SIDES`; its name must match :data:`NAME`."""
    if not NAME.fullmatch(record.name):
        raise SideError(
            f"side name {record.name!r} must be 1 to 16 lower-case letters, digits or "
            "underscores, starting with a letter (it names scenario keys and report sheets)"
        )
    if record.name in SIDES:
        raise SideError(f"side {record.name!r} is registered already")
    SIDES[record.name] = record
    return record


def side(name: str) -> Side:
    """The record of side ``name``; an error lists the registered ones."""
    try:
        return SIDES[name]
    except KeyError:
        raise SideError(f"unknown side {name!r}; valid: {', '.join(SIDES)}") from None


def further_lines(inputs: ModelInputs, values: dict[str, Value], lines: Lines) -> Lines:
    """``lines`` with the TCO line [USD] of each further side of ``inputs``
    (:attr:`~costmodel.inputs.ModelInputs.further`, its registered kind's :attr:`Side.line`
    doing the work of the owned build of ``lines``) for the draws ``values`` (by input name,
    floats or ``(S,)`` arrays); the engine's draws and the tornado's cases alike."""
    if not inputs.further:
        return lines
    terms = Terms(inputs.horizon_months, inputs.discount_rate, inputs.tax_rate)
    further = {}
    for name, obj in inputs.further:
        kind = side(name)
        d = kind.drawn(obj, values, name)
        further[name] = kind.line(d, lines.own, kind.capacity(d), terms)
    return dataclasses.replace(lines, further=further)


def by_month(
    record: Side, draws: Any, own: Value, terms: Terms, rows: int
) -> tuple[np.ndarray, np.ndarray]:
    """Side ``record``'s cumulative cost by month m = 0..H [USD] as a line in utilisation
    (:attr:`Side.by_month` of ``draws``, ``rows`` draws doing the work of an owned build of
    capacity ``own``): ``(fixed, per_u)``, each month-major ``(H + 1, 1)`` or
    ``(H + 1, rows)``, so that either broadcasts against the other and against the draws.

    A side without ``by_month``, or whose ``by_month`` gives anything but a pair of arrays of
    shape ``(H + 1,)`` or ``(H + 1, rows)``, is a :class:`SideError` that names the side, what
    it gave and what it must give."""
    if record.by_month is None:
        raise SideError(
            f"side {record.name!r} has no by_month: a further side gives its cumulative cost "
            "by month (for payback and the cumulative-cost chart)"
        )
    got = record.by_month(draws, own, terms)
    if not isinstance(got, tuple | list) or len(got) != 2:
        raise SideError(
            f"side {record.name!r}: by_month gave a {type(got).__name__}; it must give a "
            "pair (fixed, per_u) [USD]"
        )
    n = terms.horizon + 1
    out = []
    for part, x in zip(("fixed", "per_u"), got, strict=True):
        x = np.asarray(x, dtype=float)
        if x.shape not in ((n,), (n, rows)):
            raise SideError(
                f"side {record.name!r}: by_month gave {part} of shape {x.shape}; it must be "
                f"({n},) or ({n}, {rows}): months 0..{terms.horizon}, then one column per draw"
            )
        out.append(x[:, None] if x.ndim == 1 else x)
    return out[0], out[1]
