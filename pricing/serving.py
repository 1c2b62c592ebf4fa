"""Serving throughput of a GPU for a model, from the catalog's measured operating points.

One rule, :func:`tokens_per_s`, answers "how many tokens per second does one GPU serve of this
model at this precision, for requests of I input and O output tokens":

1. take the catalog's rows of (model, precision, GPU);
2. with an interactivity floor ``min_tokens_per_s_per_user``, keep the rows whose measured
   interactivity meets it (a row without one does not count); without a floor, keep every row;
3. of those, keep the rows at the measured request shape nearest the workload's, by
   d = |ln I - ln I_row| + |ln O - ln O_row| (shapes within 1e-9 of the least distance tie and
   are pooled; ln 0 = -inf, so a zero-token side is nearest only to zero);
4. the answer is the row with the highest ``tokens_per_s_per_gpu`` (ties: the first row in the
   file), with ``shape_differs`` when its shape is not the workload's.

The floor is applied before the shape (step 2 before step 3): a floor is the user's requirement
and the shape an approximation, so a row one shape away that serves users fast enough beats an
exact-shape offline row that says nothing about latency. Applying the floor after the shape
would refuse, say, Llama 3.3 70B at fp8 on an H100 for 1000/1000-token requests at 20 tokens/s
per user (the only 1000/1000 row is offline), although the 1024/1024 row serves 34.36.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .catalog import Catalog
from .errors import CatalogError, ServingUnavailableError, UnknownIdError
from .models import ServingPoint
from .suggest import closest
from .vocabulary import SERVING_PRECISIONS

__all__ = ["ServingThroughput", "gpus_with_rows", "tokens_per_s"]

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
    if row.offline:
        load = "offline (max throughput)"
    elif row.concurrency is not None:
        load = f"concurrency {row.concurrency}"
    else:
        load = "concurrency not stated"
    user = (
        f"{row.tokens_per_s_per_user:g} tokens/s per user"
        if row.tokens_per_s_per_user is not None
        else "interactivity not measured"
    )
    return (
        f"{row.tokens_per_s_per_gpu:g} tokens/s per GPU measured at {shape}; {row.framework}, "
        f"{load}, {user} (row {row.id}, {row.as_of})"
    )


def tokens_per_s(
    catalog: Catalog,
    model: str,
    precision: str,
    gpu: str,
    input_tokens: float,
    output_tokens: float,
    min_tokens_per_s_per_user: float | None = None,
) -> ServingThroughput:
    """The measured serving throughput of one ``gpu`` for ``model`` at ``precision``.

    Args:
        catalog: the catalog to read.
        model: catalog model id; gpu: catalog GPU id (both case-insensitive).
        precision: ``"fp16" | "fp8" | "fp4"``.
        input_tokens, output_tokens: the workload's tokens per request [tokens], >= 0 and >= 1.
        min_tokens_per_s_per_user: interactivity floor [output tokens/s per request], or None.

    Returns:
        The :class:`ServingThroughput` chosen by the rule of the module docstring.

    Raises:
        UnknownIdError: unknown model, GPU or precision (closest ids listed).
        ServingUnavailableError: no row fits; it names the GPUs that have rows for the model and
            precision (meeting the floor, when one is given).
        CatalogError: token counts or floor out of range.
    """
    model_id = catalog.model(model).id
    gpu_id = catalog.gpu(gpu).id
    floor = min_tokens_per_s_per_user
    _check_question(precision, floor)
    _check_tokens(input_tokens, output_tokens)
    rows = _rows(catalog, model_id, precision, floor)
    mine = [p for p in rows if p.gpu == gpu_id]
    if not mine:
        detail = _shortfall(catalog, model_id, precision, gpu_id, floor)
        raise ServingUnavailableError(model_id, precision, gpu_id, floor, _gpus(rows), detail)
    distances = [_distance(p, input_tokens, output_tokens) for p in mine]
    nearest = min(distances)
    pool = [p for p, d in zip(mine, distances, strict=True) if d == nearest or d - nearest <= _TIE]
    best = max(pool, key=lambda p: p.tokens_per_s_per_gpu)  # max keeps the first of equals
    differs = (best.input_tokens, best.output_tokens) != (input_tokens, output_tokens)
    return ServingThroughput(
        best.tokens_per_s_per_gpu, best, differs, _how(best, differs, input_tokens, output_tokens)
    )
