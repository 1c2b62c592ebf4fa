"""``POST /v1/plans``: fleet plan JSON in, plan result JSON out (200); nothing is stored (store a
plan's run with ``POST /v1/runs``)."""

from __future__ import annotations

from typing import Any

from flask_smorest import Blueprint

from present.plan_schema import PlanResultSchema

from ..auth import require_owner
from ..evaluate.schemas import EvaluateQuerySchema
from ..openapi import BEARER, PLAN_REF, error_responses, request_body
from ..service import evaluate_body, json_response

__all__ = ["blp"]

#: What the OpenAPI says about the request body and its limits.
PLAN_TEXT = (
    "Validates the body against the version-1 plan schema, resolves catalog ids and evaluates "
    "every candidate (owned servers x reserved instances) on the same Monte Carlo draws. "
    "`?samples=` and `?seed=` override the body's `simulation` block. Limits: body size "
    "(MAX_CONTENT_LENGTH, 413), samples per request (COSTMODEL_MAX_SAMPLES, 422; in "
    "`?samples=` 400, as any query parameter out of range), horizon "
    "(COSTMODEL_MAX_HORIZON, 422), candidates (COSTMODEL_MAX_CANDIDATES, 422), the size the "
    "result may take (COSTMODEL_MAX_RESULT_BYTES, 422), the work, samples x candidates x "
    "(months x 8 + 24) + 2,500 per candidate + 8 per byte of result (COSTMODEL_MAX_WORK, 422), "
    "and the deadline (COSTMODEL_DEADLINE, 503). "
    "A rent-versus-buy scenario is answered 422: POST it to /v1/evaluate. Results are cached "
    "per server process like those of /v1/evaluate (header `X-Cache`)."
)

blp = Blueprint(
    "plans",
    __name__,
    url_prefix="/v1",
    description="Evaluate a fleet plan: how many servers to own, what to reserve, what to "
    "burst, under uncertain growing demand; not stored.",
)


@blp.route("/plans", methods=["POST"])
@blp.arguments(EvaluateQuerySchema, location="query", error_status_code=400, as_kwargs=True)
@blp.response(
    200,
    PlanResultSchema,
    description="Every candidate's cost, the best plan, the frontier and all-cloud",
    headers={"X-Cache": {"description": "hit or miss", "schema": {"type": "string"}}},
)
@error_responses(blp, 400, 401, 413, 415, 422, 503)
@blp.doc(
    operationId="evaluatePlan",
    summary="Evaluate a fleet plan",
    description=PLAN_TEXT,
    requestBody=request_body("A version-1 plan (kind: plan)", PLAN_REF, "plan"),
    security=[{}, {BEARER: []}],
)
def evaluate_plan(samples: int | None = None, seed: int | None = None) -> Any:
    """Evaluate the plan of the request body."""
    require_owner()
    payload, hit = evaluate_body(samples=samples, seed=seed, kind="plan")
    return json_response(payload, {"X-Cache": "hit" if hit else "miss"})
