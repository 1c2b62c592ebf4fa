"""Errors raised by the pricing catalogs (all ``ValueError`` subclasses, never ``KeyError``)."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "CatalogError",
    "ServingUnavailableError",
    "ThroughputUnavailableError",
    "UnknownIdError",
]

# kind -> (label in messages, CLI listing hint or None)
_KINDS: dict[str, tuple[str, str | None]] = {
    "gpu": ("GPU id", "see 'costmodel catalog gpus'"),
    "instance": ("instance id", "see 'costmodel catalog instances'"),
    "interconnect": ("interconnect", None),
    "pricing": ("pricing", None),
    "precision": ("precision", None),
    "model": ("model id", "see 'costmodel catalog models'"),
    "api_offer": ("API offer id", "see 'costmodel catalog api-offers'"),
    "grid": ("grid id", "see 'costmodel catalog grids'"),
}


#: The most characters of an unknown id an error shows [character]; catalog ids are shorter.
_SHOWN = 60


def _quoted(text: str) -> str:
    """``text`` quoted, cut to :data:`_SHOWN` characters (with its length) when longer."""
    if len(text) <= _SHOWN:
        return repr(text)
    return f"{text[:_SHOWN]!r}... ({len(text):,} characters)"


class CatalogError(ValueError):
    """A catalog file, row or value is invalid, or a catalog lookup cannot be answered.

    ``file``, ``row_id`` and ``column`` locate the problem when it comes from a data file;
    ``path`` is the dotted key path of the scenario or request field that asked the catalog
    (``"buy.gpu"``), set by :meth:`at`; ``problem`` is the bare description. ``str(e)`` joins
    file, row, column and problem into one line (the path is for the caller to show).
    """

    def __init__(
        self,
        problem: str,
        *,
        file: str | None = None,
        row_id: str | None = None,
        column: str | None = None,
    ) -> None:
        self.problem = problem
        self.file = file
        self.row_id = row_id
        self.column = column
        self.path: str | None = None
        super().__init__(self._message())

    def _message(self) -> str:
        where = []
        if self.file:
            where.append(self.file)
        if self.row_id is not None:
            where.append(f"row {self.row_id!r}")
        if self.column:
            where.append(f"column {self.column!r}")
        return f"{', '.join(where)}: {self.problem}" if where else self.problem

    def located(self, *, file: str | None = None, row_id: str | None = None) -> CatalogError:
        """A copy of this error with the file and row filled in where they were missing."""
        return CatalogError(
            self.problem,
            file=self.file or file,
            row_id=self.row_id if self.row_id is not None else row_id,
            column=self.column,
        )

    def at(self, path: str) -> CatalogError:
        """This error, naming the key path which asked for the lookup."""
        self.path = path
        return self


class UnknownIdError(CatalogError):
    """An id (GPU, instance, interconnect, ...) is not in the catalog.

    Attributes: ``kind`` (e.g. ``"gpu"``), ``id`` (as given), ``close_matches`` (closest valid ids,
    best first, from :func:`difflib.get_close_matches`) and ``valid`` (all valid ids, sorted).
    """

    def __init__(
        self, kind: str, id: str, close_matches: Sequence[str], valid: Sequence[str]
    ) -> None:
        self.kind = kind
        self.id = id
        self.close_matches = tuple(close_matches)
        self.valid = tuple(valid)
        label, hint = _KINDS.get(kind, (kind, None))
        parts = [f"unknown {label} {_quoted(id)}"]
        if self.close_matches:
            parts.append("closest: " + ", ".join(self.close_matches))
        if hint:
            parts.append(hint)
        else:
            parts.append("valid: " + ", ".join(self.valid))
        super().__init__("; ".join(parts))


class ThroughputUnavailableError(CatalogError):
    """No measured or peak figure exists to compare a GPU at a precision."""


class ServingUnavailableError(CatalogError):
    """The serving catalog has no operating point for a (model, precision, GPU) question.

    Attributes: ``model``, ``precision``, ``gpu`` (as asked), ``floor`` (the interactivity floor
    [tokens/s per user] or None) and ``gpus``: the GPU ids that do have a row for the model and
    precision (meeting the floor and the latency ceilings when given), sorted; empty when none
    has. ``within``: the latency ceilings in words (``"within 25 ms per output token"``), or
    ``""``.
    """

    def __init__(
        self,
        model: str,
        precision: str,
        gpu: str,
        floor: float | None,
        gpus: Sequence[str],
        detail: str = "",
        within: str = "",
    ) -> None:
        self.model = model
        self.precision = precision
        self.gpu = gpu
        self.floor = floor
        self.gpus = tuple(gpus)
        serving = f" serving {floor:g} tokens/s per user" if floor is not None else ""
        serving += f" {within}" if within else ""
        problem = f"no measured operating point of {model!r} at {precision} on {gpu!r}{serving}"
        if detail:
            problem += f" ({detail})"
        which = "GPUs with rows" + (
            " meeting those targets"
            if within
            else " meeting that floor"
            if floor is not None
            else ""
        )
        problem += f"; {which}: {', '.join(self.gpus)}" if self.gpus else f"; no {which}"
        super().__init__(problem)
