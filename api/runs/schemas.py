"""Schemas of the run store endpoints: stored runs, their listing and report formats."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from marshmallow import Schema, ValidationError, fields, validate

from present import from_dict, to_dict
from present.reports import FORMATS
from scenarios.store import STATUSES

from ..errors import ErrorSchema
from ..evaluate.schemas import EvaluateQuerySchema

__all__ = [
    "DISPOSITIONS",
    "PHASES",
    "REPORT_MEDIA_TYPES",
    "ReportQuerySchema",
    "RunHeadersSchema",
    "RunListQuerySchema",
    "RunListSchema",
    "RunQuerySchema",
    "RunSchema",
    "RunSummarySchema",
    "phase",
]

#: Content-Type of each report format.
REPORT_MEDIA_TYPES: dict[str, str] = {
    "json": "application/json",
    "csv": "text/csv; charset=utf-8",
    "md": "text/markdown; charset=utf-8",
    "html": "text/html; charset=utf-8",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
}


#: How a report is served: saved as a file (the default) or shown by the browser.
DISPOSITIONS = ("attachment", "inline")


class RunQuerySchema(EvaluateQuerySchema):
    """Optional overrides of the scenario's ``simulation`` block (as for /v1/evaluate)."""


class RunHeadersSchema(Schema):
    """The optional ``Idempotency-Key`` and ``Prefer`` headers of ``POST /v1/runs``."""

    idempotency_key = fields.String(
        data_key="Idempotency-Key",
        load_default=None,
        validate=validate.Regexp(
            r"^[\x21-\x7e]{1,255}$",  # a header value holds no line break
            error="must be 1 to 255 visible ASCII characters (a UUID, say)",
        ),
        metadata={
            "description": "makes the retry of a request store its run once: the same key with "
            "the same body and query answers as the first request did; with another request, "
            "409"
        },
    )
    prefer = fields.String(
        data_key="Prefer",
        load_default=None,
        metadata={
            "description": "`respond-async` (RFC 7240): store the run as a job and answer 202 "
            "at once, whatever the work; other preferences are ignored"
        },
    )


class LinksSchema(Schema):
    """Relative links of a run."""

    self = fields.String(required=True, metadata={"example": "/v1/runs/3q2-Xo7tVqkqYbq1lVb0nQ"})
    report = fields.String(
        required=True, metadata={"example": "/v1/runs/3q2-Xo7tVqkqYbq1lVb0nQ/report"}
    )


_STATUS = {
    "description": "queued, running (a job), done (the result is there) or failed (a job; "
    "see error)",
    "enum": list(STATUSES),
}
_PROGRESS = {
    "description": "share of a job's Monte Carlo draws evaluated [-]: 1 once the draws are "
    "done, while the job is still summarising them (see phase), and once done"
}
#: What a run is doing, by its status and progress.
PHASES = ("queued", "starting", "drawing", "summarising", "done", "failed")
_PHASE = {
    "description": "queued; starting (claimed, its process starting, no draws done yet: also "
    "a job taken back from a stopped process and claimed again); drawing (progress is the "
    "share of draws done); summarising (every draw done: its statistics, result and storage "
    "follow); done; failed",
    "enum": list(PHASES),
}
_POSITION = {
    "description": "a queued job's place in the queue of the server's run store (1: the next "
    "to run); null otherwise"
}


def phase(status: str, progress: float) -> str:
    """The :data:`PHASES` entry of a run of ``status`` and ``progress`` [-]."""
    if status != "running":
        return status
    if progress <= 0:
        return "starting"
    return "drawing" if progress < 1 else "summarising"


class RunSummarySchema(Schema):
    """A stored run without its scenario and result."""

    id = fields.String(
        required=True,
        metadata={"description": "unguessable run id (128 random bits, URL-safe)"},
    )
    name = fields.String(allow_none=True, required=True)
    seed = fields.Integer(required=True)
    samples = fields.Integer(required=True, metadata={"description": "Monte Carlo draws [-]"})
    catalog_version = fields.String(required=True)
    created_at = fields.String(
        required=True, metadata={"description": "ISO-8601 UTC timestamp with microseconds"}
    )
    status = fields.String(required=True, validate=validate.OneOf(STATUSES), metadata=_STATUS)
    progress = fields.Float(required=True, validate=validate.Range(0, 1), metadata=_PROGRESS)
    phase = fields.String(required=True, validate=validate.OneOf(PHASES), metadata=_PHASE)
    breakeven_p50 = fields.Float(
        allow_none=True,
        metadata={"description": "median break-even utilisation [-]; null means never"},
    )
    links = fields.Nested(LinksSchema, required=True)


class AnyResult(fields.Field):
    """A run's result: the :class:`~present.answer.Answer` of a rent-versus-buy scenario or of
    a plan, each in its own JSON form (a mapping is taken to be that form already, as the run
    store holds it)."""

    def _serialize(self, value: Any, attr: Any, obj: Any, **kwargs: Any) -> Any:
        if value is None or isinstance(value, Mapping):
            return value
        return to_dict(value)

    def _deserialize(self, value: Any, attr: Any, data: Any, **kwargs: Any) -> Any:
        try:
            return from_dict(value)
        except ValidationError as exc:
            raise ValidationError(exc.messages) from None

    def json_schema(self, openapi: tuple[int, int]) -> dict[str, Any]:
        """The OpenAPI schema: one of the two result components (named by their schemas), or
        null until a job is done."""
        refs = ("#/components/schemas/Result", "#/components/schemas/PlanResult")
        return {"oneOf": [{"$ref": ref} for ref in refs], "nullable": True}


class RunSchema(Schema):
    """A stored run: its state, the resolved scenario, the result, seed, samples, catalog and
    timestamps; a failed job's error."""

    id = fields.String(required=True)
    name = fields.String(allow_none=True, required=True)
    status = fields.String(required=True, validate=validate.OneOf(STATUSES), metadata=_STATUS)
    progress = fields.Float(required=True, validate=validate.Range(0, 1), metadata=_PROGRESS)
    phase = fields.String(required=True, validate=validate.OneOf(PHASES), metadata=_PHASE)
    queue_position = fields.Integer(
        required=True, allow_none=True, validate=validate.Range(min=1), metadata=_POSITION
    )
    seed = fields.Integer(required=True)
    samples = fields.Integer(
        required=True,
        metadata={"description": "Monte Carlo draws [-] (of a job not yet done: those asked for)"},
    )
    catalog_version = fields.String(required=True)
    created_at = fields.String(required=True, metadata={"description": "ISO-8601 UTC"})
    updated_at = fields.String(required=True, metadata={"description": "ISO-8601 UTC"})
    scenario = fields.Dict(
        required=True,
        allow_none=True,
        metadata={"description": "the resolved scenario that was run; null until a job is done"},
    )
    result = AnyResult(
        required=True,
        allow_none=True,
        metadata={"description": "a scenario's or a plan's result; null until a job is done"},
    )
    error = fields.Nested(
        ErrorSchema,
        required=True,
        allow_none=True,
        metadata={"description": "why a failed job gave no result, in the one error shape"},
    )
    links = fields.Nested(LinksSchema, required=True)


class RunListQuerySchema(Schema):
    """Paging of ``GET /v1/runs`` (newest first)."""

    page = fields.Integer(
        load_default=1,
        validate=validate.Range(min=1, max=10**9),
        metadata={"description": "page number, from 1"},
    )
    page_size = fields.Integer(
        load_default=20,
        validate=validate.Range(min=1),
        metadata={"description": "runs per page, at most COSTMODEL_MAX_PAGE_SIZE (default 100)"},
    )


class RunListSchema(Schema):
    """One page of runs, newest first, with the total count."""

    items = fields.List(fields.Nested(RunSummarySchema), required=True)
    total = fields.Integer(required=True, metadata={"description": "runs visible to the caller"})
    page = fields.Integer(required=True)
    page_size = fields.Integer(required=True)
    pages = fields.Integer(required=True, metadata={"description": "number of pages"})


class ReportQuerySchema(Schema):
    """Report format, and whether it is downloaded or shown."""

    format = fields.String(
        load_default="html",
        validate=validate.OneOf(
            FORMATS, error="unknown report format {input!r}; valid formats: {choices}"
        ),
        metadata={"description": f"one of {', '.join(FORMATS)}"},
    )
    disposition = fields.String(
        load_default="attachment",
        validate=validate.OneOf(
            DISPOSITIONS, error="unknown disposition {input!r}; valid: {choices}"
        ),
        metadata={
            "description": "attachment (the default): the browser saves the file; inline: it "
            "shows it (an HTML report then runs no script and loads nothing from elsewhere)"
        },
    )
