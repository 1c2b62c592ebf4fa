"""Schema of ``GET /health``."""

from __future__ import annotations

from marshmallow import Schema, fields

__all__ = ["HealthSchema"]


class _Catalog(Schema):
    version = fields.String(required=True)
    as_of = fields.String(required=True)


class HealthSchema(Schema):
    """Liveness and readiness: the catalog loads and the run store answers."""

    status = fields.String(required=True, metadata={"example": "ok"})
    version = fields.String(required=True, metadata={"description": "service version"})
    catalog = fields.Nested(_Catalog, required=True)
    store = fields.String(required=True, metadata={"example": "ok"})
