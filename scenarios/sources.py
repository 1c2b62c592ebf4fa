"""Where a side's inputs come from when its block leaves them out, and how its engine inputs
are built with errors at the block's key paths.

A :class:`Source` is one row of a side's table of defaults (:data:`scenarios.sides.OWNED`,
:data:`scenarios.sides.RENTED`, :data:`scenarios.sides.HOSTED` for its cost inputs,
:data:`scenarios.sidecarbon.OWNED_CARBON` and :data:`scenarios.sidecarbon.RENTED_CARBON` for
its carbon inputs): a catalog figure or a documented constant, and the origin written into the
result's ``assumptions``. :func:`field_defaults` makes the rows of the defaults declared in the
engine's field metadata; the key reference of the format guide is written from the same rows.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from costmodel.inputs import InputError, input_fields
from costmodel.result import Origin
from pricing import PriceEntry

from .errors import ScenarioError

__all__ = ["Source", "built", "field_defaults"]


@dataclass(frozen=True)
class Source:
    """Where input ``key`` (a field of the side's engine inputs) comes from when a block
    leaves it out.

    ``value`` is a constant or a function of the side's context (``None``: the catalog has no
    figure, and ``missing`` says so; a carbon row's grid: a catalog grid id); ``origin`` is a
    template filled from the context's labels; ``applies`` says whether the input exists for
    this side, and ``when`` in words where it does not always (the key reference's words).
    ``price`` names the catalog price the value is, as ``(id, pricing)``, for a price the user
    may lay over the catalog (:mod:`pricing.prices`); the origin is then the user's. A
    ``quiet`` input, added after the first results were stored, is among the assumptions only
    when given: left out, its default changes nothing (a build always up), and results keep
    their form. ``kind`` is where the default comes from when the user's prices do not cover
    it: a catalog row (or tier, or table), or a documented constant.
    """

    key: str
    value: float | Callable[[Any], float | str | None]
    origin: str
    missing: str = ""
    applies: Callable[[Any], bool] = lambda c: True
    price: Callable[[Any], tuple[str, str] | None] | None = None
    when: str = ""
    quiet: bool = False
    kind: Origin = Origin.CATALOG

    def overlaid(self, c: Any) -> PriceEntry | None:
        """The user's price this default is, when the catalog carries one."""
        key = self.price(c) if self.price else None
        return c.work.catalog.overlay.get(key) if key else None

    def resolve(self, c: Any) -> float | None:
        """The default value in this context."""
        return self.value(c) if callable(self.value) else float(self.value)


def field_defaults(cls: type, quiet: Collection[str] = ()) -> tuple[Source, ...]:
    """A row for every input of ``cls`` whose default is documented (an ``origin`` in its
    metadata), in field order: the value and its reason are written once, in the field. The
    inputs named in ``quiet`` are :attr:`Source.quiet`."""
    return tuple(
        Source(
            name,
            float(f.default.support()[0]),
            f"default: {f.metadata['origin']}",
            quiet=name in quiet,
            kind=Origin.DEFAULT,
        )
        for name, f in input_fields(cls).items()
        if f.metadata.get("origin")
    )


def built(cls: type, path: str, engine_path: Mapping[str, str], **kwargs: Any) -> Any:
    """``cls(**kwargs)``, its validation errors at the block's key paths: a field the engine
    names ``<side>.<name>`` at ``engine_path[name]``, else at ``path.<name>`` (a value it rejects,
    a catalog default out of range included)."""
    try:
        return cls(**kwargs)
    except InputError as exc:
        name = exc.path.partition(".")[2]
        raise ScenarioError(
            None, [{"path": engine_path.get(name, f"{path}.{name}"), "message": exc.message}]
        ) from None
