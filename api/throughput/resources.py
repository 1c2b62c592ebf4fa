"""``GET /v1/throughput``: each GPU's serving throughput of a model, measured or estimated with
its error; ``GET /v1/throughput/calibration``: the estimate's calibration. Nothing is stored."""

from __future__ import annotations

from typing import Any

from flask_smorest import Blueprint, abort

from pricing import CatalogError, UnknownIdError
from pricing.calibration import published
from pricing.estimate import Targets
from pricing.serving_chart import curve_dicts
from pricing.serving_options import Question, answer, calibration_report, to_dict

from ..openapi import error_responses
from ..service import get_catalog
from .schemas import CalibrationReportSchema, ThroughputQuerySchema, ThroughputSchema

__all__ = ["blp"]

blp = Blueprint(
    "throughput",
    __name__,
    url_prefix="/v1/throughput",
    description="Serving throughput of a model on every GPU: the catalog's measurement where "
    "one holds, else an estimate from the architecture and the GPU's specifications with "
    "P10-P90 from its leave-one-out error; and the estimate's calibration.",
)

_TEXT = (
    "Each GPU asked (`gpu`, repeatable; default every catalog GPU) at each of its catalog "
    "builds (or `gpus`), serving `model` at `precision` for requests of `input_tokens` and "
    "`output_tokens`: `origin: measured` with the catalog row (`row_id`) where one holds (the "
    "same shape, a replica size dividing the build), else `origin: estimated` with P10-P90 "
    "from the calibration's leave-one-out sigma. The replica size and batch are those with "
    "the most tokens/s per GPU meeting `min_tokens_per_s_per_user`, `max_ttft_ms` and "
    "`max_tpot_ms`; `concurrency` fixes the requests in flight on the build. Builds that "
    "cannot hold the model or meet the targets are in `left_out` with the best they can do. "
    "A model or GPU the catalog lacks is answered 400 at `query.model` or `query.gpu` (the "
    "closest ids named), as is any query parameter outside what this document states for it; "
    "a model without an architecture or a question no GPU can serve 422. With `curves`, also "
    "the best estimated GPUs' tokens/s per GPU (P10/P50/P90) against tokens/s per user as "
    "the batch grows: the throughput chart's curves."
)


def _refused(exc: CatalogError, path: str) -> None:
    abort(422, message=str(exc), errors=[{"path": path, "message": str(exc)}])


@blp.route("", methods=["GET"])
@blp.arguments(ThroughputQuerySchema, location="query", error_status_code=400, as_kwargs=True)
@blp.response(200, ThroughputSchema, description="Every option, most tokens/s per GPU first")
@error_responses(blp, 400, 422)
@blp.doc(
    operationId="throughput", summary="Serving throughput of a model per GPU", description=_TEXT
)
def throughput(model: str, gpu: list[str], curves: int, **given: Any) -> Any:
    """Each GPU's tokens/s per GPU of ``model``, measured or estimated, and with ``curves``
    the estimated curves of the best GPUs."""
    targets = {k: given.pop(k) for k in ("min_tokens_per_s_per_user", "max_tpot_ms", "max_ttft_ms")}
    given["gpu_count"] = given.pop("gpus")
    question = Question(
        model=model,
        gpus=tuple(gpu),
        targets=Targets(**targets),
        **{k: v for k, v in given.items() if v is not None},
    )
    try:
        result = answer(question, get_catalog())
    except UnknownIdError as exc:  # a query parameter outside the spec's enum: 400
        where = f"query.{'model' if exc.kind == 'model' else 'gpu'}"
        errors = [{"path": where, "message": str(exc)}]
        abort(400, message=f"invalid request parameters: {where}: {exc}", errors=errors)
    except CatalogError as exc:
        _refused(exc, str(exc).split(" ", 1)[0] if " must " in str(exc) else "model")
    if not result.options:
        reasons = "; ".join(f"{x.gpu} x{x.gpus}: {x.reason}" for x in result.left_out)
        _refused(CatalogError(f"no GPU can serve {result.model} as asked: {reasons}"), "model")
    found = to_dict(result)
    if curves:
        found["curves"] = curve_dicts(result, get_catalog(), curves, given.get("params_b"))
    return found


@blp.route("/calibration", methods=["GET"])
@blp.response(200, CalibrationReportSchema)
@blp.doc(
    operationId="throughputCalibration",
    summary="The serving estimate's calibration",
    description="The constants of the serving estimate, the measured rows they are fitted "
    "on and each row's in-sample and leave-one-out ratio (predicted / measured), with the "
    "leave-one-out median error and sigma.",
)
def calibration() -> Any:
    """The published calibration."""
    return calibration_report(published())
