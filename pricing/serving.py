"""Serving throughput of a GPU for a model, from the catalog's measured operating points.

One rule, :func:`tokens_per_s`, answers "how many tokens per second does one GPU serve of this
model at this precision, for requests of I input and O output tokens":

1. take the catalog's rows of (model, precision, GPU) that hold for a build or instance of
   ``gpus`` GPUs: a row measured on G GPUs per replica holds where ``gpus`` is a multiple of G
   (a build of N GPUs then runs N/G replicas of the measured one); a row that does not state
   its replica size holds at any count, and says so. The user's own rows (laid over the
   catalog from a serving file, :mod:`pricing.userserving`) come first: where any of them
   holds, the catalog's rows of that GPU are not used;
2. with an interactivity floor ``min_tokens_per_s_per_user``, keep the rows whose measured
   interactivity meets it (a row without one does not count); without a floor, keep every row;
3. of those, keep the rows at the measured request shape nearest the workload's, by
   d = |ln I - ln I_row| + |ln O - ln O_row| (shapes within 1e-9 of the least distance tie and
   are pooled; ln 0 = -inf, so a zero-token side is nearest only to zero);
4. the answer is the row with the highest ``tokens_per_s_per_gpu`` (ties: the first row in the
   file), with ``shape_differs`` when its shape is not the workload's.

Every answer says where it comes from (:attr:`ServingThroughput.origin`: ``"measured"`` for a
catalog row, ``"yours"`` for a row of the user's file), under which conditions it was measured
(:attr:`ServingThroughput.conditions`) and which of them differ from the question
(:attr:`ServingThroughput.caveats`: another request shape, an offline run without a latency
bound, a single stream, a replica size not stated).

The floor is applied before the shape (step 2 before step 3): a floor is the user's requirement
and the shape an approximation, so a row one shape away that serves users fast enough beats an
exact-shape offline row that says nothing about latency. Applying the floor after the shape
would refuse, say, Llama 3.3 70B at fp8 on an H100 for 1000/1000-token requests at 20 tokens/s
per user (the only 1000/1000 row is offline), although the 1024/1024 row serves 34.36.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import PurePath

from .catalog import Catalog
from .errors import CatalogError, ServingUnavailableError, UnknownIdError
from .models import ServingPoint
from .suggest import closest
from .vocabulary import SERVING_PRECISIONS

__all__ = ["ServingThroughput", "conditions", "gpus_with_rows", "holds", "tokens_per_s"]

#: Shape distances closer than this are a tie [-].
_TIE = 1e-9


@dataclass(frozen=True)
class ServingThroughput:
    """The serving throughput of one GPU and the operating point it comes from.

    Attributes:
        value: ``row.tokens_per_s_per_gpu`` [tokens/s per GPU, input + output].
        row: the chosen measured operating point (its ``source`` is the citation).
        shape_differs: True when the row's request shape is not the workload's.
        how: the choice in words, for the result's assumptions.
    """

    value: float
    row: ServingPoint
    shape_differs: bool
    how: str

    @property
    def origin(self) -> str:
        """``"yours"`` for a row of the user's serving file, ``"measured"`` for the catalog's."""
        return "yours" if self.row.file else "measured"

    @property
    def conditions(self) -> str:
        """The row's conditions in a few words: replica size, load, framework and shape, e.g.
        ``"2 GPUs per replica, offline, TensorRT-LLM, 1000/1000 tokens"``."""
        return conditions(self.row)

    @property
    def caveats(self) -> tuple[str, ...]:
        """The row's conditions that differ from a serving question, in words (empty when
        none): another request shape, no latency bound (offline), a single stream, a replica
        size not stated."""
        row = self.row
        found = [f"measured at {row.input_tokens}/{row.output_tokens} tokens"] * self.shape_differs
        if row.offline:
            found.append("offline: no latency bound")
        if row.concurrency == 1:
            found.append("a single stream")
        if row.gpus_per_replica is None:
            found.append("replica size not stated")
        return tuple(found)


def conditions(row: ServingPoint) -> str:
    """A row's conditions in a few words: GPUs per replica, load, framework and request shape."""
    shape = f"{row.input_tokens}/{row.output_tokens} tokens"
    return f"{_replica(row)}, {_load(row)}, {row.framework}, {shape}"


def _replica(row: ServingPoint) -> str:
    g = row.gpus_per_replica
    return "replica size not stated" if g is None else f"{g} GPU{'s' * (g != 1)} per replica"


def _load(row: ServingPoint) -> str:
    if row.offline:
        return "offline"
    return "concurrency not stated" if row.concurrency is None else f"concurrency {row.concurrency}"


def holds(row: ServingPoint, gpus: int | None) -> bool:
    """Whether ``row`` holds for a build or instance of ``gpus`` GPUs: ``gpus`` is a multiple
    of the row's GPUs per replica (always when either is not known)."""
    g = row.gpus_per_replica
    return gpus is None or g is None or gpus % g == 0


def _log_gap(a: float, b: float) -> float:
    """|ln a - ln b| [-], with ln 0 = -inf (so 0 against a positive count is infinitely far)."""
    if a == b:
        return 0.0
    if a == 0 or b == 0:
        return math.inf
    return abs(math.log(a) - math.log(b))


def _distance(row: ServingPoint, input_tokens: float, output_tokens: float) -> float:
    return _log_gap(input_tokens, row.input_tokens) + _log_gap(output_tokens, row.output_tokens)


def _meets(row: ServingPoint, floor: float | None) -> bool:
    if floor is None:
        return True
    return row.tokens_per_s_per_user is not None and row.tokens_per_s_per_user >= floor


def _check_question(precision: str, floor: float | None) -> None:
    if precision not in SERVING_PRECISIONS:
        close = closest(str(precision), SERVING_PRECISIONS)
        raise UnknownIdError("precision", str(precision), close, SERVING_PRECISIONS)
    if floor is not None and (
        isinstance(floor, bool) or not isinstance(floor, int | float) or not floor > 0
    ):
        raise CatalogError(
            f"min_tokens_per_s_per_user must be a positive number [tokens/s], got {floor!r}"
        )


def _check_tokens(input_tokens: float, output_tokens: float) -> None:
    for name, value, low in (
        ("input_tokens", input_tokens, 0),
        ("output_tokens", output_tokens, 1),
    ):
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or value < low
        ):
            raise CatalogError(f"{name} must be a number >= {low} [tokens], got {value!r}")


def _rows(catalog: Catalog, model: str, precision: str, floor: float | None) -> list[ServingPoint]:
    return [
        p
        for p in catalog.serving
        if p.model == model and p.precision == precision and _meets(p, floor)
    ]


def _gpus(rows: list[ServingPoint]) -> tuple[str, ...]:
    return tuple(sorted({p.gpu for p in rows}))


def gpus_with_rows(
    catalog: Catalog, model: str, precision: str, min_tokens_per_s_per_user: float | None = None
) -> tuple[str, ...]:
    """The GPU ids with a measured operating point of ``model`` at ``precision``, sorted.

    Args:
        catalog: the catalog to read. model: catalog model id (case-insensitive).
        precision: ``"fp16" | "fp8" | "fp4"``.
        min_tokens_per_s_per_user: when given, only GPUs with a row that meets it [tokens/s].

    Raises:
        UnknownIdError: unknown model or precision.
        CatalogError: a floor that is not a positive number.
    """
    model_id = catalog.model(model).id
    _check_question(precision, min_tokens_per_s_per_user)
    return _gpus(_rows(catalog, model_id, precision, min_tokens_per_s_per_user))


def _shortfall(catalog: Catalog, model: str, precision: str, gpu: str, floor: float | None) -> str:
    """Why the rows of a GPU miss the floor; ``""`` when it has no rows at all."""
    if floor is None:
        return ""
    own = [p.tokens_per_s_per_user for p in _rows(catalog, model, precision, None) if p.gpu == gpu]
    measured = [v for v in own if v is not None]
    if measured:
        return f"its best measured interactivity is {max(measured):g} tokens/s per user"
    return "its rows do not measure interactivity" if own else ""


def _how(row: ServingPoint, differs: bool, input_tokens: float, output_tokens: float) -> str:
    shape = f"{row.input_tokens} input / {row.output_tokens} output tokens"
    if differs:
        shape += f", the measured shape nearest the workload's {input_tokens:g} / {output_tokens:g}"
    load = "offline (max throughput)" if row.offline else _load(row)
    user = (
        f"{row.tokens_per_s_per_user:g} tokens/s per user"
        if row.tokens_per_s_per_user is not None
        else "interactivity not measured"
    )
    where = f"row {row.id}" + (f" of {PurePath(row.file).name}" if row.file else "")
    return (
        f"{row.tokens_per_s_per_gpu:g} tokens/s per GPU measured at {shape}; {row.framework}, "
        f"{_replica(row)}, {load}, {user} ({where}, {row.as_of})"
    )


def _unheld(rows: list[ServingPoint], gpus: int | None) -> str:
    """Why the rows of a GPU do not hold at ``gpus`` GPUs; ``""`` when some do or none exist."""
    if not rows or any(holds(p, gpus) for p in rows):
        return ""
    sizes = sorted({p.gpus_per_replica for p in rows if p.gpus_per_replica is not None})
    listed = " or ".join(str(g) for g in sizes)
    noun = "GPU" if sizes == [1] else "GPUs"
    return f"measured on {listed} {noun} per replica, which holds for multiples of it, not {gpus}"


def _nearest(
    rows: list[ServingPoint], input_tokens: float, output_tokens: float
) -> ServingThroughput:
    """Steps 3 and 4 of the rule over ``rows`` (not empty): the highest throughput among the
    rows at the shape nearest the workload's."""
    distances = [_distance(p, input_tokens, output_tokens) for p in rows]
    nearest = min(distances)
    pool = [p for p, d in zip(rows, distances, strict=True) if d == nearest or d - nearest <= _TIE]
    best = max(pool, key=lambda p: p.tokens_per_s_per_gpu)  # max keeps the first of equals
    differs = (best.input_tokens, best.output_tokens) != (input_tokens, output_tokens)
    return ServingThroughput(
        best.tokens_per_s_per_gpu, best, differs, _how(best, differs, input_tokens, output_tokens)
    )


def tokens_per_s(
    catalog: Catalog,
    model: str,
    precision: str,
    gpu: str,
    input_tokens: float,
    output_tokens: float,
    min_tokens_per_s_per_user: float | None = None,
    gpus: int | None = None,
) -> ServingThroughput:
    """The measured serving throughput of one ``gpu`` for ``model`` at ``precision``.

    Args:
        catalog: the catalog to read (with the user's rows first, when laid over it).
        model: catalog model id; gpu: catalog GPU id (both case-insensitive).
        precision: ``"fp16" | "fp8" | "fp4"``.
        input_tokens, output_tokens: the workload's tokens per request [tokens], >= 0 and >= 1.
        min_tokens_per_s_per_user: interactivity floor [output tokens/s per request], or None.
        gpus: the GPUs of the build or instance [GPU]; only rows measured on a replica size it
            is a multiple of apply. None: every row applies.

    Returns:
        The :class:`ServingThroughput` chosen by the rule of the module docstring.

    Raises:
        UnknownIdError: unknown model, GPU or precision (closest ids listed).
        ServingUnavailableError: no row fits; it names the GPUs that have rows for the model and
            precision (meeting the floor, when one is given), and why this GPU's do not apply.
        CatalogError: token counts or floor out of range.
    """
    model_id = catalog.model(model).id
    gpu_id = catalog.gpu(gpu).id
    floor = min_tokens_per_s_per_user
    _check_question(precision, floor)
    _check_tokens(input_tokens, output_tokens)
    rows = _rows(catalog, model_id, precision, floor)
    mine = [p for p in rows if p.gpu == gpu_id]
    held = [p for p in mine if holds(p, gpus)]
    if not held:
        detail = _unheld(mine, gpus) or _shortfall(catalog, model_id, precision, gpu_id, floor)
        raise ServingUnavailableError(model_id, precision, gpu_id, floor, _gpus(rows), detail)
    return _nearest([p for p in held if p.file] or held, input_tokens, output_tokens)
