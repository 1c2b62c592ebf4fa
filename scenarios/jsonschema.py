"""The scenario format as JSON Schema (draft 2020-12), generated from :class:`ScenarioSchema`.

apispec turns the marshmallow schemas into schema objects; :func:`field_schema` teaches it the
custom fields (a number-or-distribution input, a catalog id or inline mapping, the utilisation
grid, a correlation triple, and fields that describe themselves with a ``json_schema`` method),
and gives every field its unit as ``x-unit`` and the open ends of its range.
The HTTP API's OpenAPI document uses the same function, so the two cannot disagree.

The rules between keys that the schemas check in code are added as ``if``/``then``: what each
kind of work (``workload.kind``) requires and refuses (its precisions, the keys of the other
kind, the ``api`` block, a side's throughput key), and an API block without a catalog offer
gives its prices. The OpenAPI document (version 3.0, which has no ``if``) leaves them out.

Editors that speak the YAML language server complete and check scenario files against it:
put ``# yaml-language-server: $schema=scenario.schema.json`` on a file's first line, after
``costmodel schema > scenario.schema.json``.
"""

from __future__ import annotations

import math
from typing import Any

from marshmallow import fields, validate

from costmodel.inputs import MIN_UTILISATION

from .distspec import DIST_FORMS
from .loader import MAX_VALUES
from .schema import (
    API_PRICES,
    WORK_BLOCKS,
    WORK_KINDS,
    WORK_ONLY,
    WORK_PRECISIONS,
    WORK_REQUIRED,
    WORK_THROUGHPUT,
    Correlation,
    DistField,
    GridField,
    PlanSchema,
    Ref,
    ScenarioSchema,
    Utilisation,
    UtilisationFloor,
    UtilisationRangeSchema,
)

__all__ = [
    "distribution_components",
    "field_schema",
    "scenario_json_schema",
    "SCHEMA_ID",
]

SCHEMA_ID = "https://gpu-costmodel.invalid/schemas/scenario-v1.json"
_COMPONENTS = "#/components/schemas/"

_EXAMPLES = {
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
    "values": "possible values",
    "weights": "weights (>= 0), one per value",
}


def _form(name: str, required: tuple[str, ...], optional: tuple[str, ...], example: str) -> dict:
    props: dict[str, Any] = {"dist": {"type": "string", "enum": [name]}}
    for param in required + optional:
        if param in ("values", "weights"):
            # as many as a document may hold (both lists count), each weight >= 0
            item = {"type": "number", **({"minimum": 0} if param == "weights" else {})}
            props[param] = {
                "type": "array",
                "items": item,
                "minItems": 1,
                "maxItems": MAX_VALUES // 2,
            }
        else:
            props[param] = {"type": "number"}
        props[param]["description"] = _PARAM_TEXT[param]
    return {
        "type": "object",
        "required": ["dist", *required],
        "properties": props,
        "additionalProperties": False,
        "example": _EXAMPLES[example],
    }


def distribution_components() -> dict[str, dict]:
    """A schema object per distribution form, and ``Distribution``, one of them."""
    out: dict[str, dict] = {}
    for name, (_, required, optional) in DIST_FORMS.items():
        if name == "lognormal":  # two parameterisations, each optionally truncated
            for suffix, params in (("Quantiles", ("median", "p90")), ("Moments", ("mean", "sd"))):
                out[f"DistLognormal{suffix}"] = _form(
                    name, params, ("low", "high"), f"lognormal-{suffix.lower()}"
                )
            continue
        out[f"Dist{name.capitalize()}"] = _form(name, required, optional, name)
    out["Distribution"] = {
        "description": "An uncertain input, sampled once per Monte Carlo draw. pert is "
        "beta-PERT with lambda = 4; normal and lognormal are truncated to [low, high] when "
        "given; lognormal takes median and p90, or mean and sd.",
        "oneOf": [{"$ref": f"{_COMPONENTS}{name}"} for name in out],
    }
    return out


def _number(field: DistField, openapi: tuple[int, int]) -> dict[str, Any]:
    bound = field.bound
    out: dict[str, Any] = {"type": "number"}
    if math.isfinite(bound.low):
        out["minimum"] = bound.low
        if bound.low_open:
            out["exclusiveMinimum"] = bound.low if openapi >= (3, 1) else True
    if math.isfinite(bound.high):
        out["maximum"] = bound.high
    return out


#: The least value each unbounded form can draw without ``low`` (normal: any; lognormal: 0).
_UNBOUNDED_LOW = {"normal": -math.inf, "lognormal": 0.0}


def _truncation(field: DistField) -> dict[str, Any] | None:
    """What a normal or lognormal of this input must give: the ``low`` and ``high`` that keep
    its draws in the input's range (the schema refuses the input otherwise), as one choice per
    form; ``None`` when the range asks for neither."""
    bound = field.bound
    needs = {
        form: [
            *(["low"] if bound.problem(least) is not None else []),
            *(["high"] if math.isfinite(bound.high) else []),
        ]
        for form, least in _UNBOUNDED_LOW.items()
    }
    if not any(needs.values()):
        return None
    free = [name for name in DIST_FORMS if not needs.get(name)]
    choices = [{"properties": {"dist": {"enum": free}}}] if free else []
    choices += [
        {"properties": {"dist": {"enum": [form]}}, "required": need}
        for form, need in needs.items()
        if need
    ]
    return {"anyOf": choices}


def field_schema(self: Any, field: fields.Field, ret: dict | None = None, **_: Any) -> dict:
    """apispec attribute function: the project's custom marshmallow fields, and of every field
    its unit as ``x-unit`` (the metadata's ``unit``) and the open ends of its range."""
    openapi = (self.openapi_version.major, self.openapi_version.minor)
    out = _custom(self, field, openapi)
    if field.metadata.get("unit"):
        out["x-unit"] = field.metadata["unit"]
    out.update(_open_ends(field, openapi))
    if any(isinstance(v, UtilisationFloor) and v.zero for v in field.validators):
        out.update(_FLOOR_GAP[openapi >= (3, 1)])
    return out


#: The levels a utilisation that may be 0 refuses: above 0 and below the floor (JSON Schema
#: 2020-12 and OpenAPI 3.1 write an open end as a number, OpenAPI 3.0 as a flag).
_FLOOR_GAP = {
    True: {"not": {"exclusiveMinimum": 0, "exclusiveMaximum": MIN_UTILISATION}},
    False: {
        "not": {
            "minimum": 0,
            "exclusiveMinimum": True,
            "maximum": MIN_UTILISATION,
            "exclusiveMaximum": True,
        }
    },
}


def _open_ends(field: fields.Field, openapi: tuple[int, int]) -> dict[str, Any]:
    """The open ends of a field's range (apispec writes every end as closed)."""
    out: dict[str, Any] = {}
    for v in field.validators:
        if not isinstance(v, validate.Range):
            continue
        for end, value, closed in (
            ("Minimum", v.min, v.min_inclusive),
            ("Maximum", v.max, v.max_inclusive),
        ):
            if value is not None and not closed:
                out[f"exclusive{end}"] = value if openapi >= (3, 1) else True
    return out


def _custom(self: Any, field: fields.Field, openapi: tuple[int, int]) -> dict[str, Any]:
    """The schema object of a custom field, made anew (the caller adds to it); {} for others."""
    if isinstance(field, DistField):
        number = _number(field, openapi)
        # the values a distribution of this input may take lie in the input's range too
        within = {name: number for name in ("low", "mode", "high")}
        within["values"] = {"type": "array", "items": number}
        parts = [{"$ref": f"{_COMPONENTS}Distribution"}, {"properties": within}]
        truncation = _truncation(field)
        choices: list[dict[str, Any]] = [
            number,
            {"allOf": parts if truncation is None else [*parts, truncation]},
        ]
        if isinstance(field, GridField):  # or a catalog grid id
            choices.insert(0, {"type": "string", "minLength": 1, "description": "catalog grid id"})
        if field.allow_none and openapi >= (3, 1):
            choices.append({"type": "null"})
        return {"oneOf": choices}
    if isinstance(field, Ref):
        ref = self.resolve_nested_schema(field.schema_cls)
        string = {"type": "string", "minLength": 1, "pattern": r"\S", "description": "catalog id"}
        null = {"type": "null"} if openapi >= (3, 1) else {"nullable": True, "enum": [None]}
        return {"oneOf": [string, ref, *([null] if field.allow_none else [])]}
    if isinstance(field, Utilisation):
        ref = self.resolve_nested_schema(UtilisationRangeSchema)
        return {
            "oneOf": [
                {
                    "type": "array",
                    "items": {
                        "type": "number",
                        "minimum": 0,
                        "maximum": 1,
                        **_FLOOR_GAP[openapi >= (3, 1)],
                    },
                    "minItems": 1,
                    "maxItems": 101,
                },
                ref,
            ],
            "example": [0.0, 0.25, 0.5, 1.0],
        }
    if isinstance(field, Correlation):
        return (
            {
                "type": "array",
                "minItems": 3,
                "maxItems": 3,
                "prefixItems": [
                    {"type": "string"},
                    {"type": "string"},
                    {"type": "number", "exclusiveMinimum": -1, "exclusiveMaximum": 1},
                ],
                "items": False,
                "example": ["buy.electricity_usd_per_kwh", "rent.price_annual_change", 0.3],
            }
            if openapi >= (3, 1)
            else {
                "type": "array",
                "minItems": 3,
                "maxItems": 3,
                "items": {"anyOf": [{"type": "string"}, {"type": "number"}]},
                "example": ["buy.electricity_usd_per_kwh", "rent.price_annual_change", 0.3],
            }
        )
    describe = getattr(field, "json_schema", None)
    return describe(openapi) if callable(describe) else {}


def _rewrite_refs(node: Any) -> Any:
    if isinstance(node, dict):
        return {
            k: (v.replace(_COMPONENTS, "#/$defs/") if k == "$ref" else _rewrite_refs(v))
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_rewrite_refs(v) for v in node]
    return node


_NULL = {"type": "null"}
_SET = {"not": _NULL}


def _of_kind(kind: str, default: str) -> dict[str, Any]:
    """A workload of work ``kind``: its ``kind`` says so, or it has none and ``kind`` is the
    default."""
    out: dict[str, Any] = {"properties": {"kind": {"const": kind}}}
    return out if kind == default else {**out, "required": ["kind"]}


def _others(kind: str, table: dict[str, tuple[str, ...]]) -> list[str]:
    return [key for other, keys in table.items() if other != kind for key in keys]


def _workload_rules(default: str) -> list[dict[str, Any]]:
    """What each kind of work asks of the workload: the keys it requires, its precisions, and
    none of the other kind's keys (``null`` is as good as absent, as for the loader)."""
    rules = []
    for kind in WORK_KINDS:
        then: dict[str, Any] = {
            "properties": {
                "precision": {"enum": list(WORK_PRECISIONS[kind])},
                **{key: _SET for key in WORK_REQUIRED[kind]},
                **{key: _NULL for key in _others(kind, WORK_ONLY)},
            }
        }
        if WORK_REQUIRED[kind]:
            then["required"] = list(WORK_REQUIRED[kind])
        rules.append({"if": _of_kind(kind, default), "then": then})
    return rules


def _target(defs: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """The definition a property refers to (also through ``anyOf`` with null); {} for none."""
    refs = [node.get("$ref"), *(o.get("$ref") for o in node.get("anyOf", []))]
    ref = next((r for r in refs if r), None)
    return defs[ref.rsplit("/", 1)[-1]] if ref else {}


def _document_rules(defs: dict[str, Any], root: str, default: str) -> list[dict[str, Any]]:
    """What each kind of work asks of a document (a scenario or a plan): no block of another
    kind of work (``api`` is for inference), and on each side (``buy``, ``own``, ...) no
    throughput key of another kind."""
    props = defs[root]["properties"]
    throughputs = set(WORK_THROUGHPUT.values())
    sides = [
        k for k, v in props.items() if throughputs <= set(_target(defs, v).get("properties", {}))
    ]
    rules = []
    for kind in WORK_KINDS:
        workload = _of_kind(kind, default)
        when: dict[str, Any] = {"properties": {"workload": workload}}
        if "required" in workload:
            when["required"] = ["workload"]
        others = [WORK_THROUGHPUT[k] for k in WORK_KINDS if k != kind]
        then = {
            **{block: _NULL for block in _others(kind, WORK_BLOCKS) if block in props},
            **{side: {"properties": {key: _NULL for key in others}} for side in sides},
        }
        rules.append({"if": when, "then": {"properties": then}})
    return rules


def _api_rule() -> dict[str, Any]:
    """An API block without a catalog offer (``model``) gives its prices."""
    return {
        "if": {"properties": {"model": _NULL}},
        "then": {"required": list(API_PRICES), "properties": {k: _SET for k in API_PRICES}},
    }


def _inline_model_rule() -> dict[str, Any]:
    """An inline model gives its parameters, or a config.json to count them from."""
    return {
        "anyOf": [{"required": [key], "properties": {key: _SET}} for key in ("params_b", "config")]
    }


def _add_rules(defs: dict[str, Any]) -> None:
    """The rules between keys the marshmallow schemas check in code, as ``if``/``then`` in
    ``allOf`` of the definitions they bind: those of the kind of work, the API's prices and an
    inline model's parameters."""
    default = defs["Workload"]["properties"]["kind"]["default"]
    rules = {
        "Workload": _workload_rules(default),
        "Scenario": _document_rules(defs, "Scenario", default),
        "Plan": _document_rules(defs, "Plan", default),
        "Api": [_api_rule()],
        "InlineModel": [_inline_model_rule()],
    }
    for name, added in rules.items():
        defs[name]["allOf"] = [*defs[name].get("allOf", []), *added]


def scenario_json_schema() -> dict[str, Any]:
    """The scenario format as a JSON Schema (draft 2020-12) document: a rent-versus-buy
    scenario, or a fleet plan (``kind: plan``)."""
    from apispec import APISpec
    from apispec.ext.marshmallow import MarshmallowPlugin

    plugin = MarshmallowPlugin()
    spec = APISpec("scenario", "1", "3.1.0", plugins=[plugin])
    plugin.converter.add_attribute_function(field_schema)
    for name, component in distribution_components().items():
        spec.components.schema(name, component=component)
    spec.components.schema("Scenario", schema=ScenarioSchema)
    spec.components.schema("Plan", schema=PlanSchema)
    defs = _rewrite_refs(spec.to_dict()["components"]["schemas"])
    _add_rules(defs)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "GPU rent-versus-buy scenario or fleet plan, version 1",
        "oneOf": [{"$ref": "#/$defs/Scenario"}, {"$ref": "#/$defs/Plan"}],
        "$defs": defs,
    }
