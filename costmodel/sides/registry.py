"""The protocol of a kind of side, and the registry of them (:data:`SIDES`)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SIDES", "Side", "SideError", "register", "side"]


class SideError(ValueError):
    """A side that is not registered, or registered twice."""


@dataclass(frozen=True, kw_only=True)
class Side:
    """One kind of side, by ``name`` (its key in a scenario and a result: ``"buy"``).

    ``label`` is how a table heads its columns ("Buy"), ``option`` how a list of options
    names it ("buy", "API") and ``doing`` how a sentence names choosing it ("buying", "the
    API"); ``inputs`` is the class of its frozen engine inputs.
    """

    name: str
    label: str
    option: str
    doing: str
    inputs: type


#: Every kind of side by name, in the order a question lists them (``buy`` first: the side
#: every other is compared with).
SIDES: dict[str, Side] = {}


def register(record: Side) -> Side:
    """Add ``record`` to :data:`SIDES`."""
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
