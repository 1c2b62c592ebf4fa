"""The run store over HTTP: ``POST /v1/runs``, ``GET /v1/runs``, ``GET /v1/runs/<id>`` and
``GET /v1/runs/<id>/report``.

With API keys, every run belongs to the key that stored it (as a SHA-256 hash); another key's
run answers 404 exactly like a run that does not exist. ``POST /v1/runs`` takes an
``Idempotency-Key`` header: the key and a hash of the request are stored with the run, so a
retry of the same request returns the run stored first, and the same key with another request
is 409.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
from collections.abc import Mapping
from typing import Any

from flask import Response, current_app, url_for
from flask_smorest import Blueprint, abort

from costmodel.present import from_dict, reports
from costmodel.present.formatting import slug
from scenarios.store import KeyReused, RunRecord

from ..auth import require_owner
from ..deadline import check_deadline
from ..evaluate.resources import LIMITS_TEXT
from ..jsonio import request_body as raw_body
from ..openapi import BEARER, PLAN_REF, SCENARIO_REF, error_responses, request_body
from ..service import evaluate_body, get_store
from .schemas import (
    REPORT_MEDIA_TYPES,
    ReportQuerySchema,
    RunHeadersSchema,
    RunListQuerySchema,
    RunListSchema,
    RunQuerySchema,
    RunSchema,
)

__all__ = ["blp"]

_log = logging.getLogger("api")

blp = Blueprint(
    "runs",
    __name__,
    url_prefix="/v1/runs",
    description="Evaluate and store runs; list, fetch and export them as reports.",
)

_SECURITY = [{}, {BEARER: []}]
#: The Content-Security-Policy of an HTML report: its inline styles and images, no script, no
#: other origin, no frame around it.
REPORT_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'"
)
_ID_PARAM = {
    "in": "path",
    "name": "run_id",
    "required": True,
    "schema": {"type": "string", "minLength": 1},
    "description": "run id from the Location header of POST /v1/runs",
}


def _links(run_id: str) -> dict[str, str]:
    return {
        "self": url_for("runs.get_run", run_id=run_id),
        "report": url_for("runs.get_report", run_id=run_id),
    }


def _full(record: RunRecord, result: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A stored run as :class:`RunSchema` dumps it: ``result`` in its JSON form, else the stored
    one loaded back into a Result (or a PlanResult), as older results need."""
    return {
        "id": record.id,
        "name": record.name,
        "seed": record.seed,
        "samples": record.samples,
        "catalog_version": record.catalog_version,
        "created_at": record.created_at,
        "updated_at": record.updated_at,
        "scenario": record.scenario,
        "result": result if result is not None else from_dict(record.result),
        "links": _links(record.id),
    }


def _record_or_404(run_id: str) -> RunRecord:
    owner = require_owner()
    record = get_store().get(run_id, owner=owner)
    if record is None:
        abort(
            404,
            message=f"no run with id {run_id!r}",
            errors=[{"path": "run_id", "message": "no such run"}],
        )
    return record


_KEY_PATH = "headers.Idempotency-Key"


def _request_hash(samples: int | None, seed: int | None) -> str:
    """What makes two requests the same: the query overrides and the body."""
    head = json.dumps({"samples": samples, "seed": seed}, sort_keys=True).encode()
    return hashlib.sha256(head + b"\0" + raw_body()).hexdigest()


def _reused(run_id: str) -> None:
    message = (
        "this Idempotency-Key was already used for another request (it stored run "
        f"{run_id}); use a new key for a new request"
    )
    abort(409, message=message, errors=[{"path": _KEY_PATH, "message": message}])


def _created(record: RunRecord) -> Any:
    """The 201 of a stored run, with the result exactly as it was stored."""
    return _full(record, record.result), {"Location": url_for("runs.get_run", run_id=record.id)}


@blp.route("", methods=["POST"])
@blp.arguments(RunQuerySchema, location="query", error_status_code=400, as_kwargs=True)
@blp.arguments(RunHeadersSchema, location="headers", error_status_code=400, as_kwargs=True)
@blp.response(
    201,
    RunSchema,
    description="The stored run (for a retried Idempotency-Key, the run it stored first)",
    headers={
        "Location": {
            "description": "URL of the new run, /v1/runs/<id>",
            "schema": {"type": "string"},
        },
    },
)
@error_responses(blp, 400, 401, 409, 413, 415, 422, 503)
@blp.doc(
    operationId="createRun",
    summary="Evaluate a scenario and store the run",
    description=LIMITS_TEXT
    + " The run keeps the resolved scenario, the result, seed, samples, catalog version and "
    "timestamps; every POST stores a new run under a new unguessable id, unless it repeats an "
    "`Idempotency-Key` header (1 to 255 visible ASCII characters): the same key with the same "
    "body and query answers as the first request did (201, the run stored first) and stores "
    "nothing; the same key with another request is 409. Send a new key with "
    "each new run and the same key when retrying after a 503 or a lost answer.",
    requestBody=request_body(
        "A version-1 scenario, or a plan (kind: plan)",
        {"oneOf": [SCENARIO_REF, PLAN_REF]},
        "scenario",
        "plan",
    ),
    security=_SECURITY,
)
def create_run(
    samples: int | None = None, seed: int | None = None, idempotency_key: str | None = None
) -> Any:
    """Evaluate the scenario of the body and store it with its result (once per
    ``Idempotency-Key``)."""
    owner = require_owner()
    key = idempotency_key
    request_hash = _request_hash(samples, seed) if key is not None else None
    store = get_store()
    if key is not None:
        stored = store.find_idempotent(key, owner=owner)
        if stored is not None:
            if stored[0] != request_hash:
                _reused(stored[1].id)
            return _created(stored[1])
    payload, _ = evaluate_body(samples=samples, seed=seed, kind=None)
    result = json.loads(payload)
    check_deadline("storing the run")  # past it, the client may have given up: store nothing
    try:
        record = store.add(
            scenario=result["scenario"],
            result=result,
            seed=result["seed"],
            samples=result["samples"],
            catalog_version=result["catalog"]["version"],
            owner=owner,
            idempotency_key=key,
            request_hash=request_hash,
        )
    except KeyReused as exc:  # a concurrent request with the same key and another body
        _reused(exc.run_id)
    return _created(record)


@blp.route("", methods=["GET"])
@blp.arguments(RunListQuerySchema, location="query", error_status_code=400, as_kwargs=True)
@blp.response(200, RunListSchema, description="One page of runs, newest first")
@error_responses(blp, 401)
@blp.doc(operationId="listRuns", summary="List stored runs, newest first", security=_SECURITY)
def list_runs(page: int = 1, page_size: int = 20) -> dict[str, Any]:
    """The caller's runs, newest first, ``page_size`` per page, with the total count."""
    owner = require_owner()
    limit = current_app.config["MAX_PAGE_SIZE"]
    if page_size > limit:
        abort(
            400,
            message=f"page_size {page_size} exceeds the limit of {limit} (COSTMODEL_MAX_PAGE_SIZE)",
            errors=[{"path": "query.page_size", "message": f"must be at most {limit}"}],
        )
    store = get_store()
    total = store.count(owner=owner)
    records = store.list(owner=owner, limit=page_size, offset=(page - 1) * page_size)
    items = [{**r.summary(), "links": _links(r.id)} for r in records]
    return {
        "items": items,
        "total": total,
        "page": page,
        "page_size": page_size,
        "pages": math.ceil(total / page_size),
    }


@blp.route("/<run_id>", methods=["GET"], parameters=[_ID_PARAM])
@blp.response(200, RunSchema, description="The stored run")
@error_responses(blp, 401, 404)
@blp.doc(operationId="getRun", summary="Fetch a stored run", security=_SECURITY)
def get_run(run_id: str) -> dict[str, Any]:
    """One stored run with its scenario and result."""
    return _full(_record_or_404(run_id))


def _filename(name: str | None, run_id: str, fmt: str) -> str:
    return f"{slug(name or '', default='run')}-{run_id[:8]}.{fmt}"


_REPORT_DOC = {
    "200": {
        "description": "The report in the requested format",
        "content": {
            media.split(";")[0]: {"schema": {"type": "string", "format": "binary"}}
            if fmt in ("xlsx",)
            else {"schema": {"type": "object"} if fmt == "json" else {"type": "string"}}
            for fmt, media in REPORT_MEDIA_TYPES.items()
            if fmt in reports.FORMATS
        },
    }
}


@blp.route("/<run_id>/report", methods=["GET"], parameters=[_ID_PARAM])
@blp.arguments(ReportQuerySchema, location="query", error_status_code=400, as_kwargs=True)
@error_responses(blp, 401, 404)
@blp.doc(
    operationId="getRunReport",
    summary="Export a stored run as a report",
    description=f"Formats: {', '.join(reports.FORMATS)}. An unknown format is answered 400 "
    "listing the valid ones. Served as a download (`Content-Disposition: attachment`) unless "
    "`disposition=inline`; an HTML report carries a Content-Security-Policy that lets it run "
    "no script and load nothing from another origin.",
    responses=_REPORT_DOC,
    security=_SECURITY,
)
def get_report(run_id: str, format: str = "html", disposition: str = "attachment") -> Response:
    """The run's report rendered by :func:`costmodel.present.reports.render`, as a download unless
    ``disposition`` is ``inline``."""
    record = _record_or_404(run_id)
    body = reports.render(from_dict(record.result), format)
    response = Response(
        body,
        status=200,
        mimetype=None,
        content_type=REPORT_MEDIA_TYPES.get(format, "application/octet-stream"),
    )
    response.headers["Content-Disposition"] = (
        f'{disposition}; filename="{_filename(record.name, record.id, format)}"'
    )
    if format == "html":  # its own styles and data: images, nothing else; never framed
        response.headers["Content-Security-Policy"] = REPORT_CSP
    return response
