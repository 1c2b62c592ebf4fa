"""``POST /v1/compare``: comparison options in, every owned and rented option ranked by cost per
reference GPU-hour out (200), or with a ``model`` every owned, rented and API option of serving
it by cost per M tokens; nothing is stored."""

from __future__ import annotations

from typing import Any

from flask import request
from flask_smorest import Blueprint, abort

from scenarios.compare import (
    CompareRequest,
    CompareSchema,
    Comparison,
    ComparisonSchema,
    compare,
    option_count,
    option_counts,
)
from scenarios.errors import ScenarioError

from ..auth import require_owner
from ..deadline import check_deadline
from ..jsonio import read_json_body
from ..limits import abort_over_limits, compare_checks
from ..openapi import BEARER, error_responses
from ..service import get_catalog

__all__ = ["blp", "option_count"]

#: What the OpenAPI says about the request and its limits.
COMPARE_TEXT = (
    "Ranks every option of the catalog at one utilisation by cost per reference GPU-hour "
    "[USD]: each priced GPU owned at 1, 2, 4 and 8 per server (the catalog's platform tier for "
    "that count) and each instance rented at every pricing model the catalog prices (on "
    "demand, spot, 1- and 3-year reservations), cheapest P50 first. Each option's P10-P90 "
    "comes from the default uncertainty given in the response (`uncertainty`: the relative "
    "half-width of a triangular distribution around each price, electricity and resale "
    "value). Options the buyer's-guide advice rules out (an `error`) are listed in "
    "`ruled_out`; `min_memory_gb` leaves out GPUs with less memory (counted in "
    "`left_out_by_min_memory`); `tier` keeps the rented instances of one kind of provider. "
    "With `model` (a catalog model id, or a model the catalog lacks inline with its "
    "architecture) the work is serving that model at `precision` for requests of "
    "`input_tokens` and `output_tokens`, and the cost is per M tokens [USD] (`unit: "
    "million_tokens`, each option's `cost_per_unit`): each server's or instance's speed is "
    "the catalog's serving measurement where a row holds for it, else the estimate from the "
    "model's architecture and the GPU's specifications, its lognormal error drawn in the "
    "cost (`tokens_per_s_per_gpu`; `source` the row or the estimate, `origin` measured, "
    "yours or estimated, an estimate's `sigma`), the catalog's API offers of the model are "
    "options too (`side: api`, their blended price), and the options whose server or "
    "instance cannot hold the weights in 90 % of its GPU memory, or no batch of which meets "
    "`min_tokens_per_s_per_user`, are counted in `left_out`. An unknown model (the closest "
    "ids named), an inline model without its architecture or a precision the catalog does "
    "not serve it at is answered 422 at `model`, `model.layers` or `precision`. "
    "Each option's `carbon_per_unit` is its emissions per unit of work at the utilisation "
    "[g CO2e]: an owned build on `grid` (a catalog grid id, default US; an unknown id is "
    "answered 422 at `grid` with the closest ids) with its embodied carbon over its service "
    "life, a rented instance on its region's grid and PUE with its share of the host's "
    "embodied carbon; an API offer has none (not published, never zero). `sort: carbon` ranks "
    "by P50 carbon, lowest first, the options of unknown carbon last; the cheapest options and "
    "the break-evens stay by cost. "
    "Prices are the catalog's, with the server's own prices file (COSTMODEL_PRICES) laid over "
    "it; each option's `price_source` says which. Limits: samples (COSTMODEL_MAX_SAMPLES), "
    "horizon (COSTMODEL_MAX_HORIZON) and the work, draws x options (COSTMODEL_MAX_WORK), 422 "
    "naming the limit. Unknown keys and out-of-range "
    "values are answered 422 with their key paths, a non-JSON content type 415."
)

blp = Blueprint(
    "compare",
    __name__,
    url_prefix="/v1",
    description="Compare the market: every owned and rented option ranked by cost per "
    "reference GPU-hour at one utilisation, or by model every owned, rented and API option by "
    "cost per M tokens; not stored.",
)


@blp.before_request
def _json_only() -> None:
    """The body is strict JSON, checked as on /v1/evaluate before the schema reads it: 415 for
    another content type, 413 when too long, 400 for NaN, duplicate keys or malformed text."""
    if request.method == "POST":
        read_json_body()


def _refused(exc: ScenarioError) -> None:
    """422 naming the request keys (``model``, ``precision``) the catalog cannot answer."""
    shown = "; ".join(f"{e['path']}: {e['message']}" for e in exc.errors)
    abort(422, message=f"the comparison cannot be made: {shown}", errors=exc.errors)


@blp.route("/compare", methods=["POST"])
@blp.arguments(CompareSchema)
@blp.response(200, ComparisonSchema, description="Every option, cheapest first")
@error_responses(blp, 400, 401, 413, 415, 422, 503)
@blp.doc(operationId="compare", summary="Rank owned, rented and API options",
         description=COMPARE_TEXT, security=[{}, {BEARER: []}])  # fmt: skip
def compare_options(wanted: CompareRequest) -> Any:
    """Rank every option of the catalog at the requested utilisation."""
    require_owner()
    catalog = get_catalog()
    try:
        options, owned = option_counts(wanted, catalog)
    except ScenarioError as exc:
        _refused(exc)
    by_model = wanted.model is not None
    abort_over_limits(
        compare_checks(wanted.samples, wanted.horizon_months, options, owned, model=by_model)
    )
    check_deadline("validating the comparison")
    result: Comparison = compare(wanted, catalog)
    check_deadline("comparing the options")
    return result
