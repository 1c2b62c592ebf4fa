"""``POST /v1/evaluate``: scenario JSON in, result JSON out (200); nothing is stored."""

from __future__ import annotations

from typing import Any

from flask_smorest import Blueprint

from ..auth import require_owner
from ..openapi import BEARER, error_responses, scenario_request_body
from ..service import evaluate_body, json_response
from .schemas import EvaluateQuerySchema, ResultSchema

__all__ = ["blp"]

blp = Blueprint(
    "evaluate",
    __name__,
    url_prefix="/v1",
    description="Evaluate a scenario: the Monte Carlo rent-versus-buy result, not stored.",
)

#: What the OpenAPI says about the request body and its limits (shared with POST /v1/runs).
LIMITS_TEXT = (
    "Validates the body against the version-1 scenario schema, resolves catalog ids and runs "
    "the Monte Carlo model. `?samples=` and `?seed=` override the body's `simulation` block. "
    "Limits: body size (MAX_CONTENT_LENGTH, 413; a gzip body, `Content-Encoding: gzip`, "
    "counts decoded), samples per request (COSTMODEL_MAX_SAMPLES, default 200,000, 422; in "
    "`?samples=` 400, as any query parameter out of range), "
    "horizon and utilisation-grid bounds (COSTMODEL_MAX_HORIZON, COSTMODEL_MAX_LEVELS, 422), "
    "the work, samples x (months x 2.5 + levels x 12 + 320) (COSTMODEL_MAX_WORK, 422; on "
    "POST /v1/runs a job instead, 202), and the deadline (COSTMODEL_DEADLINE, 503). Strict "
    "JSON: NaN, Infinity, duplicate keys and malformed text are answered 400, a non-JSON "
    "content type 415, unknown keys and out-of-range values 422 with their key paths. Results "
    "are deterministic given the scenario, seed, samples and catalog version, so each server "
    "process keeps the last COSTMODEL_RESULT_CACHE results (at most "
    "COSTMODEL_RESULT_CACHE_BYTES; header `X-Cache: hit|miss`). With COSTMODEL_API_KEYS set, "
    "an `Authorization: Bearer <key>` header is required (401 otherwise)."
)


@blp.route("/evaluate", methods=["POST"])
@blp.arguments(EvaluateQuerySchema, location="query", error_status_code=400, as_kwargs=True)
@blp.response(
    200,
    ResultSchema,
    description="The result",
    headers={"X-Cache": {"description": "hit or miss", "schema": {"type": "string"}}},
)
@error_responses(blp, 400, 401, 413, 415, 422, 503)
@blp.doc(
    operationId="evaluate",
    summary="Evaluate a scenario",
    description=LIMITS_TEXT,
    requestBody=scenario_request_body("A version-1 scenario"),
    security=[{}, {BEARER: []}],
)
def evaluate(samples: int | None = None, seed: int | None = None) -> Any:
    """Evaluate the scenario of the request body."""
    require_owner()
    payload, hit = evaluate_body(samples=samples, seed=seed)
    return json_response(payload, {"X-Cache": "hit" if hit else "miss"})
