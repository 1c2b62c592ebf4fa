"""OpenAPI 3 generated from the scenario and result schemas.

The custom marshmallow fields (number-or-distribution inputs, catalog ids or inline mappings,
the utilisation grid, correlations, nullable result numbers) are typed by
:func:`scenarios.jsonschema.field_schema`, the same function that writes the scenario format's
JSON Schema.
"""

from __future__ import annotations

import http
from collections.abc import Callable, Mapping
from importlib import resources
from typing import Any

import yaml
from apispec import BasePlugin
from flask_smorest import Api, Blueprint

from pricing import Catalog
from scenarios import PlanSchema, ScenarioSchema
from scenarios.jsonschema import distribution_components, field_schema

from .limits import query_maxima

__all__ = [
    "BEARER",
    "PLAN_REF",
    "SCENARIO_REF",
    "error_responses",
    "register_openapi",
    "request_body",
    "scenario_examples",
    "scenario_request_body",
    "write_choices",
]

SCENARIO_REF = {"$ref": "#/components/schemas/Scenario"}
PLAN_REF = {"$ref": "#/components/schemas/Plan"}
BEARER = "bearerAuth"


def scenario_examples(kind: str = "scenario") -> dict[str, dict[str, Any]]:
    """The example library's documents of ``kind`` (``scenario`` or ``plan``) as OpenAPI
    ``examples``, each worked example first."""
    folder = resources.files("scenarios") / "examples"
    names = sorted(p.name for p in folder.iterdir() if p.name.endswith(".yaml"))
    names.sort(key=lambda n: "worked-example" not in n)
    out: dict[str, dict[str, Any]] = {}
    for name in names:
        data = yaml.safe_load((folder / name).read_text(encoding="utf-8"))
        if not isinstance(data, dict) or data.get("kind", "scenario") != kind:
            continue
        summary = data.get("description") or data.get("name") or name
        if "worked-example" in name:
            summary = "The worked example: every input fixed"
        out[name.removesuffix(".yaml")] = {"summary": str(summary), "value": data}
    return out


class _ConfiguredQuery(BasePlugin):
    """Writes what an app enforces on query parameters into their schemas, as each operation
    is added: the maxima its configuration sets (:data:`api.limits.LIMITS`) and the catalog
    ids a parameter takes (``choices``: an array parameter's items); and leaves out the
    operations' ``security`` when the app takes no API keys (an open service: no lock in
    ``/docs``)."""

    def __init__(self, maxima: dict[str, int], choices: dict[str, list[str]], keys: bool) -> None:
        self.maxima = maxima
        self.choices = choices
        self.keys = keys

    def operation_helper(self, path=None, operations=None, **kwargs: Any) -> None:
        for operation in (operations or {}).values():
            if not self.keys:
                operation.pop("security", None)
            for param in operation.get("parameters", []):
                if not (isinstance(param, dict) and param.get("in") == "query"):
                    continue
                name, schema = param.get("name"), param["schema"]
                if name in self.maxima:
                    schema["maximum"] = self.maxima[name]
                if name in self.choices:
                    schema.get("items", schema)["enum"] = self.choices[name]


def _query_choices(catalog: Catalog) -> dict[str, list[str]]:
    """The catalog ids each query parameter that names one takes (``GET /v1/throughput``'s
    ``model`` and ``gpu``), by parameter name; the server refuses any other with 400."""
    return {"model": sorted(catalog.models), "gpu": sorted(catalog.gpus)}


def register_openapi(api: Api, config: Mapping[str, Any], catalog: Catalog) -> None:
    """Teach ``api``'s spec the custom scenario fields, the limits ``config`` sets on query
    parameters and the ``catalog`` ids they take, and register the shared components (the
    bearer scheme only when ``config`` sets API keys); before any blueprint (the limits on the
    request bodies follow with :func:`api.limits.write_limits` after them)."""
    keys = bool(config.get("API_KEYS"))
    plugin = _ConfiguredQuery(query_maxima(config), _query_choices(catalog), keys)
    plugin.init_spec(api.spec)
    api.spec.plugins.append(plugin)  # after the marshmallow plugin, which makes the schemas
    api.ma_plugin.converter.add_attribute_function(field_schema)
    for name, component in distribution_components().items():
        api.spec.components.schema(name, component=component)
    api.spec.components.schema("Scenario", schema=ScenarioSchema)
    api.spec.components.schema("Plan", schema=PlanSchema)
    if not keys:
        return
    api.spec.components.security_scheme(
        BEARER,
        {
            "type": "http",
            "scheme": "bearer",
            "description": "Required on POST and on /v1/runs when the server sets "
            "COSTMODEL_API_KEYS; a key sees only its own runs.",
        },
    )


def request_body(description: str, schema: dict[str, Any], *kinds: str) -> dict[str, Any]:
    """The OpenAPI ``requestBody``: a document of ``schema`` with the example library's
    documents of ``kinds``."""
    examples = {k: v for kind in kinds for k, v in scenario_examples(kind).items()}
    return {
        "required": True,
        "description": description,
        "content": {"application/json": {"schema": schema, "examples": examples}},
    }


def scenario_request_body(description: str) -> dict[str, Any]:
    """The OpenAPI ``requestBody``: a version-1 scenario, with the example library."""
    return request_body(description, SCENARIO_REF, "scenario")


def error_responses(blp: Blueprint, *codes: int) -> Callable[[Any], Any]:
    """Decorator documenting error responses ``codes`` of a view (all in the one error shape).

    Place it below ``@blp.route`` like every flask-smorest doc decorator.
    """

    def decorator(func: Any) -> Any:
        for code in codes:
            func = blp.alt_response(code, response=http.HTTPStatus(code).name)(func)
        return func

    return decorator


def write_choices(schemas: Mapping[str, dict[str, Any]], catalog: Catalog) -> None:
    """State in the OpenAPI ``schemas`` the choices the server takes from ``catalog``: the
    comparison's ``model``, given as an id, is one of the catalog's model ids, as the server
    refuses any other (an inline model is not a catalog id)."""
    model = schemas.get("Compare", {}).get("properties", {}).get("model")
    for choice in (model or {}).get("oneOf", ()):
        if choice.get("type") == "string":
            choice["enum"] = sorted(catalog.models)
