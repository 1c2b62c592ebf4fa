"""OpenAPI 3 generated from the scenario schema of :mod:`scenarios.schema`.

The scenario schema has four custom marshmallow fields that apispec cannot type on its own; the
attribute function registered here documents them:

* ``DistField``: a number (within the field's bounds, unit in ``x-unit``) or a
  :ref:`Distribution <Distribution>` mapping (``oneOf``);
* ``_Ref``: a catalog id (string) or an inline object (``InlineGPU`` / ``InlineInstance``);
* ``_Utilisation``: an array of levels in [0, 1] (at most 101) or a ``{start, stop, step}`` object;
* ``_Correlation``: a three-item array ``[input, input, rho]``.
"""

from __future__ import annotations

import http
import math
from collections.abc import Callable
from importlib import resources
from typing import Any

import yaml
from flask_smorest import Api, Blueprint
from marshmallow import fields

from costmodel.distributions import DIST_FORMS
from scenarios import ScenarioSchema
from scenarios import schema as scenario_schema

__all__ = [
    "BEARER",
    "SCENARIO_REF",
    "error_responses",
    "register_openapi",
    "scenario_examples",
    "scenario_request_body",
]

SCENARIO_REF = {"$ref": "#/components/schemas/Scenario"}
BEARER = "bearerAuth"

_NUMBER_EXAMPLES = {
    "uniform": {"dist": "uniform", "low": 0.10, "high": 0.24},
    "triangular": {"dist": "triangular", "low": 2500, "mode": 3500, "high": 5000},
    "pert": {"dist": "pert", "low": 999, "mode": 1150, "high": 1300},
    "normal": {"dist": "normal", "mean": 1.1, "sd": 0.05, "low": 1.0, "high": 1.3},
    "lognormal-quantiles": {"dist": "lognormal", "median": 50, "p90": 120},
    "lognormal-moments": {"dist": "lognormal", "mean": 60, "sd": 25},
    "discrete": {"dist": "discrete", "values": [0.0, 0.1], "weights": [0.8, 0.2]},
}
_PARAM_TEXT = {
    "low": "lower bound (same unit as the input)",
    "high": "upper bound (same unit as the input)",
    "mode": "most likely value",
    "mean": "mean",
    "sd": "standard deviation (> 0)",
    "median": "median (> 0)",
    "p90": "90th percentile (> median)",
}


def _form(name: str, required: tuple[str, ...], optional: tuple[str, ...], key: str) -> dict:
    props: dict[str, Any] = {"dist": {"type": "string", "enum": [name]}}
    for param in required + optional:
        if param in ("values", "weights"):
            props[param] = {
                "type": "array",
                "items": {"type": "number"},
                "minItems": 1,
                "description": "possible values" if param == "values" else "weights (>= 0)",
            }
        else:
            props[param] = {"type": "number", "description": _PARAM_TEXT.get(param, param)}
    return {
        "type": "object",
        "required": ["dist", *required],
        "properties": props,
        "additionalProperties": False,
        "example": _NUMBER_EXAMPLES[key],
    }


def _distribution_components() -> dict[str, dict]:
    """Schema components of every distribution form of DESIGN sec. 3, from ``DIST_FORMS``."""
    out: dict[str, dict] = {}
    refs = []
    for name, (required, optional) in DIST_FORMS.items():
        if name == "lognormal":  # two parameterisations
            variants = (("Quantiles", ("median", "p90")), ("Moments", ("mean", "sd")))
            for suffix, params in variants:
                key = f"lognormal-{suffix.lower()}"
                comp = f"DistLognormal{suffix}"
                out[comp] = _form(name, params, (), key)
                refs.append(comp)
            continue
        comp = f"Dist{name.capitalize()}"
        out[comp] = _form(name, required, optional, name)
        refs.append(comp)
    out["Distribution"] = {
        "description": "An uncertain input: sampled once per Monte Carlo draw. pert is "
        "beta-PERT with lambda = 4; normal is truncated to [low, high] when given; lognormal "
        "takes median and p90, or mean and sd.",
        "oneOf": [{"$ref": f"#/components/schemas/{r}"} for r in refs],
    }
    return out


def _bounded_number(low: float, high: float) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "number"}
    if math.isfinite(low):
        out["minimum"] = low
    if math.isfinite(high):
        out["maximum"] = high
    return out


def _custom_fields(self: Any, field: fields.Field, ret: dict | None = None, **_: Any) -> dict:
    """apispec attribute function for the custom fields of :mod:`scenarios.schema`."""
    if isinstance(field, scenario_schema.DistField):
        return {
            "oneOf": [
                _bounded_number(field.low, field.high),
                {"$ref": "#/components/schemas/Distribution"},
            ],
            "x-unit": field.metadata.get("unit", ""),
        }
    if isinstance(field, scenario_schema._Ref):
        ref = self.resolve_nested_schema(field.schema_cls)
        return {
            "oneOf": [
                {"type": "string", "minLength": 1, "pattern": r"\S", "description": "catalog id"},
                ref,
            ]
        }
    if isinstance(field, scenario_schema._Utilisation):
        ref = self.resolve_nested_schema(scenario_schema.UtilisationRangeSchema)
        return {
            "oneOf": [
                {
                    "type": "array",
                    "items": {"type": "number", "minimum": 0, "maximum": 1},
                    "minItems": 1,
                    "maxItems": 101,
                },
                ref,
            ],
            "x-unit": "[-]",
            "example": [0.0, 0.25, 0.5, 1.0],
        }
    if isinstance(field, scenario_schema._Correlation):
        return {
            "type": "array",
            "minItems": 3,
            "maxItems": 3,
            "items": {"anyOf": [{"type": "string"}, {"type": "number"}]},
            "example": ["buy.electricity_usd_per_kwh", "rent.price_annual_change", 0.3],
        }
    return {}


def scenario_examples() -> dict[str, dict[str, Any]]:
    """The example scenario library as OpenAPI ``examples``, the DESIGN worked example first."""
    folder = resources.files("scenarios") / "examples"
    names = sorted(p.name for p in folder.iterdir() if p.name.endswith(".yaml"))
    names.sort(key=lambda n: n != "worked-example.yaml")
    out: dict[str, dict[str, Any]] = {}
    for name in names:
        data = yaml.safe_load((folder / name).read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            continue
        summary = data.get("description") or data.get("name") or name
        if name == "worked-example.yaml":
            summary = "DESIGN section 7 worked example (every input fixed)"
        out[name.removesuffix(".yaml")] = {"summary": str(summary), "value": data}
    return out


def register_openapi(api: Api) -> None:
    """Teach ``api``'s spec the custom scenario fields and register the shared components."""
    api.ma_plugin.converter.add_attribute_function(_custom_fields)
    for name, component in _distribution_components().items():
        api.spec.components.schema(name, component=component)
    api.spec.components.schema("Scenario", schema=ScenarioSchema)
    api.spec.components.security_scheme(
        BEARER,
        {
            "type": "http",
            "scheme": "bearer",
            "description": "Required on POST and on /v1/runs when the server sets "
            "COSTMODEL_API_KEYS; a key sees only its own runs.",
        },
    )


def scenario_request_body(description: str) -> dict[str, Any]:
    """The OpenAPI ``requestBody``: a version-1 scenario, with the example library."""
    return {
        "required": True,
        "description": description,
        "content": {"application/json": {"schema": SCENARIO_REF, "examples": scenario_examples()}},
    }


def error_responses(blp: Blueprint, *codes: int) -> Callable[[Any], Any]:
    """Decorator documenting error responses ``codes`` of a view (all in the one error shape).

    Place it below ``@blp.route`` like every flask-smorest doc decorator.
    """

    def decorator(func: Any) -> Any:
        for code in codes:
            func = blp.alt_response(code, response=http.HTTPStatus(code).name)(func)
        return func

    return decorator
