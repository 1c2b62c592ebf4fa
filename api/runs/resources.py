"""The run store over HTTP: ``POST /v1/runs``, ``GET /v1/runs``, ``GET /v1/runs/<id>`` and
``GET /v1/runs/<id>/report``.

With API keys, every run belongs to the key that stored it (as a SHA-256 hash); another key's
run answers 404 exactly like a run that does not exist. ``POST /v1/runs`` takes an
``Idempotency-Key`` header: the key and a hash of the request are stored with the run, so a
retry of the same request returns the run stored first, and the same key with another request
is 409. A run asking for more work than a request may take, or sent with ``Prefer:
respond-async``, is stored as a job and answered 202 (:mod:`.jobs`); its URL shows its status
and progress until the result is there.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
from collections.abc import Mapping
from typing import Any

from flask import Response, url_for
from flask_smorest import Blueprint, abort

from present import from_dict, reports
from present.formatting import slug
from scenarios.store import KeyReused, RunRecord

from ..auth import require_owner
from ..deadline import check_deadline
from ..evaluate.resources import LIMITS_TEXT
from ..jsonio import request_body as raw_body
from ..limits import over_sync_work
from ..openapi import BEARER, PLAN_REF, SCENARIO_REF, error_responses, request_body
from ..service import evaluate_body, get_store, request_document
from .jobs import job_runner, queue_run
from .schemas import (
    REPORT_MEDIA_TYPES,
    ReportQuerySchema,
    RunHeadersSchema,
    RunListQuerySchema,
    RunListSchema,
    RunQuerySchema,
    RunSchema,
    phase,
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
    if result is None and record.result is not None:
        result = from_dict(record.result)
    return {
        "id": record.id,
        "name": record.name,
        "status": record.status,
        "progress": record.progress,
        "phase": phase(record.status, record.progress),
        "queue_position": get_store().queue_position(record.id)
        if record.status == "queued"
        else None,
        "seed": record.seed,
        "samples": record.samples,
        "catalog_version": record.catalog_version,
        "created_at": record.created_at,
        "updated_at": record.updated_at,
        "scenario": record.scenario,
        "result": result,
        "error": record.error,
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
_UNFINISHED = ("queued", "running")


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


#: How long a client polling an unfinished run is asked to wait between two looks [s].
POLL_AFTER_S = 1
_ASYNC = "respond-async"


def _prefers_async(prefer: str | None) -> bool:
    """Whether a ``Prefer`` header (RFC 7240: comma-separated preferences, each maybe with
    ``=value`` and ``;`` parameters) asks for ``respond-async``."""
    tokens = (p.split(";")[0].split("=")[0].strip().lower() for p in (prefer or "").split(","))
    return _ASYNC in tokens


def _created(record: RunRecord, async_applied: bool = False) -> Any:
    """The answer of a stored run: 201 with the result exactly as it was stored, or 202 for a
    job not done (with ``Retry-After`` while it is under way)."""
    headers = {"Location": url_for("runs.get_run", run_id=record.id)}
    if record.status == "done":
        return _full(record, record.result), headers
    if record.status in _UNFINISHED:
        headers["Retry-After"] = str(POLL_AFTER_S)
    if async_applied:
        headers["Preference-Applied"] = _ASYNC
    return _full(record), 202, headers


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
@blp.alt_response(
    202,
    schema=RunSchema,
    description="The run, stored as a job: queued, to be polled at `Location` until its "
    "status is done (with the result) or failed (with the error)",
    headers={
        "Location": {"description": "URL of the run to poll", "schema": {"type": "string"}},
        "Retry-After": {
            "description": "seconds to wait before polling [s]",
            "schema": {"type": "string"},
        },
        "Preference-Applied": {
            "description": "respond-async, when the job was made because the client asked",
            "schema": {"type": "string"},
        },
    },
)
@error_responses(blp, 400, 401, 409, 413, 415, 422, 429, 503)
@blp.doc(
    operationId="createRun",
    summary="Evaluate a scenario and store the run",
    description=LIMITS_TEXT
    + " The run keeps the resolved scenario, the result, seed, samples, catalog version and "
    "timestamps; every POST stores a new run under a new unguessable id, unless it repeats an "
    "`Idempotency-Key` header (1 to 255 visible ASCII characters): the same key with the same "
    "body and query answers with the run stored first (201 once it has its result, else 202) "
    "and stores nothing; the same key with another request is 409. Send a new key with "
    "each new run and the same key when retrying after a 503 or a lost answer. "
    "A run asking for more work than COSTMODEL_MAX_WORK, up to COSTMODEL_MAX_JOB_WORK, or sent "
    "with `Prefer: respond-async`, is stored as a job and answered 202 at once with "
    "`Location: /v1/runs/<id>`; GET it (every `Retry-After` seconds) for its status (queued, "
    "running, done, failed) and progress, then its result, the same a synchronous run would "
    "have. A failed job holds its error in the one error shape. A key (on an open service, a "
    "client address) with COSTMODEL_MAX_QUEUED_JOBS jobs queued or running is answered 429 "
    "with `Retry-After`.",
    requestBody=request_body(
        "A version-1 scenario, or a plan (kind: plan)",
        {"oneOf": [SCENARIO_REF, PLAN_REF]},
        "scenario",
        "plan",
    ),
    security=_SECURITY,
)
def create_run(
    samples: int | None = None,
    seed: int | None = None,
    idempotency_key: str | None = None,
    prefer: str | None = None,
) -> Any:
    """Evaluate the scenario of the body and store it with its result, or store it as a job
    when it asks for more work than a request may take (once per ``Idempotency-Key``)."""
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
    if job_runner().enabled:
        document = request_document(kind=None)
        asked = _prefers_async(prefer)
        if asked or over_sync_work(document, samples):
            try:
                record = queue_run(document, samples, seed, owner, key, request_hash)
            except KeyReused as exc:
                _reused(exc.run_id)
            return _created(record, async_applied=asked)
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
    owner = require_owner()  # page_size is within COSTMODEL_MAX_PAGE_SIZE (api.query)
    store = get_store()
    total = store.count(owner=owner)
    records = store.list(owner=owner, limit=page_size, offset=(page - 1) * page_size)
    items = [
        {
            **r.summary(),
            "status": r.status,
            "progress": r.progress,
            "phase": phase(r.status, r.progress),
            "links": _links(r.id),
        }
        for r in records
    ]
    return {
        "items": items,
        "total": total,
        "page": page,
        "page_size": page_size,
        "pages": math.ceil(total / page_size),
    }


@blp.route("/<run_id>", methods=["GET"], parameters=[_ID_PARAM])
@blp.response(
    200,
    RunSchema,
    description="The stored run: its status and progress, and once done its result",
    headers={
        "Retry-After": {
            "description": "while the run is queued or running: seconds to wait before the "
            "next look [s]",
            "schema": {"type": "string"},
        },
    },
)
@error_responses(blp, 401, 404)
@blp.doc(operationId="getRun", summary="Fetch a stored run", security=_SECURITY)
def get_run(run_id: str) -> Any:
    """One stored run with its status, scenario and result."""
    record = _record_or_404(run_id)
    if record.status not in _UNFINISHED:
        return _full(record)
    job_runner().wake()  # this process takes part: the job's own may have stopped
    return _full(record), {"Retry-After": str(POLL_AFTER_S)}


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
@error_responses(blp, 401, 404, 409)
@blp.doc(
    operationId="getRunReport",
    summary="Export a stored run as a report",
    description=f"Formats: {', '.join(reports.FORMATS)}. An unknown format is answered 400 "
    "listing the valid ones. Served as a download (`Content-Disposition: attachment`) unless "
    "`disposition=inline`; an HTML report carries a Content-Security-Policy that lets it run "
    "no script and load nothing from another origin. A job not yet done (or failed) has no "
    "report: 409.",
    responses=_REPORT_DOC,
    security=_SECURITY,
)
def get_report(run_id: str, format: str = "html", disposition: str = "attachment") -> Response:
    """The run's report rendered by :func:`present.reports.render`, as a download unless
    ``disposition`` is ``inline``."""
    record = _record_or_404(run_id)
    if record.result is None:
        message = f"run {run_id} is {record.status}: it has a report once it is done"
        abort(409, message=message, errors=[{"path": "run_id", "message": message}])
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
